"""A mail's link in Chromium (Debian's ``/usr/bin/chromium``) through Playwright: the
confirmation page shows the question as characters (a ``<script>`` in it runs nothing, the
page's policy blocks nothing it needs), its button sends the answer from a real browser (its
``Origin`` is the pages' own) and the run continues."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio.to_thread
import pytest

from interactions.store import RunStatus, SQLiteStore
from tests.hosts.email.harness import email_host
from tests.hosts.email.mailbox import MailServer
from tests.hosts.web.test_page import ARGS, CHROMIUM

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="Chromium is not installed (.ci/run: apt-get install -y chromium)",
    ),
]


@pytest.fixture
def mail() -> Iterator[MailServer]:
    server = MailServer()
    server.start()
    yield server
    server.stop()


def _confirm_in_chromium(url: str) -> list[str]:
    """Open ``url``, check the confirmation, press its button; what went wrong in the page."""
    from playwright.sync_api import expect, sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        try:
            page = browser.new_page()
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))
            page.on("console", lambda message: problems.append(message.text))
            page.goto(url)
            expect(page.get_by_role("heading", name="Confirm your answer")).to_be_visible()
            expect(page.get_by_text("<script>alert(1)</script> now?")).to_be_visible()
            page.get_by_role("button", name="Confirm: Approve").click()
            expect(page.get_by_role("heading", name="Answer sent")).to_be_visible()
        finally:
            browser.close()
    return problems


async def test_a_link_confirmed_in_a_browser_answers(mail: MailServer, tmp_path: Path) -> None:
    async with (
        SQLiteStore(tmp_path / "state.db", poll_interval=0.02) as store,
        email_host(store, tmp_path, mail) as running,
    ):
        run_id = await running.start("gate: <script>alert(1)</script> now?")
        await mail.mailbox.wait(2)
        link = mail.mailbox.to("ada@example.com")[0].links()["Approve"]
        problems = await anyio.to_thread.run_sync(_confirm_in_chromium, link)
        assert problems == []
        assert await running.settled(run_id) is RunStatus.FINISHED
        answer = (await store.get_interaction(run_id, "int-c1")).answer
        assert answer is not None and (answer.answered_by, answer.via) == ("ada", "email")
