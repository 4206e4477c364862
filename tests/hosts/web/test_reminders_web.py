"""Reminders and escalation where the question is: a real ``pi-recipes serve`` process; a
second sweeper on its store (this test, with an injected "now") writes a reminder and an
escalation; a real WebSocket client gets ``interrupt.reminded`` frames, the REST views say
"reminded 4 times, escalated to group:oncall", and so do ``runs show`` and ``runs pending``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from hosts._kit import add_user
from interactions.reminders import remind_due
from interactions.store import SQLiteStore
from tests.hosts.cli_helpers import pi
from tests.hosts.web.server import serving
from tests.hosts.web.test_page import ARGS, CHROMIUM, card, shot
from tests.hosts.web.test_ws import client, until

RECIPE = str(Path(__file__).parents[2] / "recipes" / "runs" / "reminders_recipe.py")


@pytest.mark.anyio
async def test_reminders_and_the_escalation_are_shown_on_ws_rest_and_the_cli(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, recipe=RECIPE) as server:
        run_id = server.start_run("release it")
        async with server.async_client() as http:
            (pending,) = (await http.get(f"/api/runs/{run_id}/interactions/pending")).json()[
                "interactions"
            ]
        assert (pending["reminded"], pending["escalated_to"]) == (0, [])
        gate = pending["id"]
        async with client(server) as ws, SQLiteStore(server.store) as sweeper:
            asked = (await sweeper.get_interaction(run_id, gate)).requested_at
            await remind_due(sweeper, now=asked + timedelta(hours=1))
            reminded = await until(ws, {"type": "interrupt.reminded"})
            assert reminded == {
                "type": "interrupt.reminded", "run_id": run_id, "interaction_id": gate,
                "escalated": False, "count": 1, "added": [], "approvers": ["ada"],
            }  # fmt: skip
            await remind_due(sweeper, now=asked + timedelta(hours=4))
            escalated = await until(ws, {"type": "interrupt.reminded", "escalated": True})
            assert (escalated["added"], escalated["approvers"]) == (
                ["group:oncall"], ["ada", "group:oncall"],
            )  # fmt: skip
            assert (await until(ws, {"type": "interrupt.reminded"}))["count"] == 4
        async with server.async_client() as http:
            detail = (await http.get(f"/api/runs/{run_id}")).json()
        (shown,) = detail["interactions"]
        assert (shown["reminded"], shown["escalated_to"]) == (4, ["group:oncall"])
        for command in (("runs", "show", run_id), ("runs", "pending")):
            done = pi(*command, "--store", server.store, cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            assert "reminded 4× · escalated to group:oncall" in done.stdout, done.stdout


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed")
def test_the_card_says_reminded_and_escalated_and_the_escalated_person_answers_it(
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    users = tmp_path / "users.toml"
    omar = add_user(users, "omar", groups=["oncall"])  # on call: may answer once escalated
    args = ("--users", str(users))
    with serving(tmp_path, recipe=RECIPE, args=args) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server.url}#token={omar}")
        expect(page.locator("#connection")).to_have_text("Connected")
        run_id = server.start_run("release it")
        shown = card(page, run_id, "int-call_release")
        expect(shown).to_have_count(1)
        expect(shown.locator(".card-reach")).to_have_count(0)
        expect(shown).to_have_attribute("data-readonly", "true")  # only ada may answer it
        expect(page.locator("#others-cards").locator(shown)).to_have_count(1)

        async def sweep(hours: int) -> None:
            async with SQLiteStore(server.store) as sweeper:
                asked = (await sweeper.get_interaction(run_id, "int-call_release")).requested_at
                await remind_due(sweeper, now=asked + timedelta(hours=hours))

        _in_a_thread(sweep, 2)
        expect(shown.locator(".card-reach")).to_have_text("Reminded 2×")
        _in_a_thread(sweep, 4)
        expect(shown.locator(".card-reach")).to_have_text(
            "Reminded 4× · Escalated to group:oncall"
        )
        # escalated to omar's group: the card is omar's to answer now, live
        expect(page.locator("#for-you-cards").locator(shown)).to_have_count(1)
        expect(shown).not_to_have_attribute("data-readonly", "true")
        page.reload()  # read again from the REST view
        shown = card(page, run_id, "int-call_release")
        expect(shown.locator(".card-reach")).to_have_text(
            "Reminded 4× · Escalated to group:oncall"
        )
        expect(page.locator("#for-you-cards").locator(shown)).to_have_count(1)
        shot(page, "card-reminded")
        shown.get_by_role("button", name="Approve", exact=True).click()
        expect(shown.locator(".card-status")).to_contain_text("Approved by omar")
        assert errors == []
        browser.close()


def _in_a_thread(sweep: Callable[[int], Awaitable[None]], hours: int) -> None:
    """Run the sweeper's coroutine on its own loop (Playwright's sync API holds this one)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, sweep, hours).result(timeout=30)
