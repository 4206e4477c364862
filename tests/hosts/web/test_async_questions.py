"""Async questions on the web host: a non-blocking card on the page while the run keeps
running, answered there (the run goes on, the answer reaches the agent as a message); REST's
answer route says ``{queued, resumed}`` and refuses a different second answer (409); a run's
own ``await`` wait is no question for a person: neither listed as pending nor sent as one."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from tests.hosts.cli_helpers import pi
from tests.hosts.web.server import ONE_ANSWER, Server, serving, wait_for_status
from tests.hosts.web.test_ws import client, collect

CHROMIUM = Path("/usr/bin/chromium")
ASYNC_RECIPE = str(Path(__file__).with_name("web_async_recipe.py"))
BOUND = 20.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("async"), recipe=ASYNC_RECIPE) as running:
        yield running


def start(http: httpx.Client, question: str) -> tuple[str, str]:
    """Start a run; wait (bounded) until its question is posted; the run and question ids."""
    reply = http.post("/api/runs", json={"prompt": question})
    assert reply.status_code == 202, reply.text
    run_id = reply.json()["run_id"]
    deadline = time.monotonic() + BOUND
    while True:
        pending = http.get(f"/api/runs/{run_id}/interactions/pending").json()["interactions"]
        if pending:
            return run_id, pending[0]["id"]
        assert time.monotonic() < deadline, "the question was not posted"
        time.sleep(0.05)


def test_rest_answers_an_async_question_while_the_run_works(server: Server) -> None:
    with server.client() as http:
        run_id, iid = start(http, "Project name?")
        assert iid == f"{run_id}_asker_async_1"
        [posted] = http.get(f"/api/runs/{run_id}/interactions/pending").json()["interactions"]
        assert posted["kind"] == "async" and posted["interrupt"]["message"] == "Project name?"
        assert http.get(f"/api/runs/{run_id}").json()["status"] == "running"
        url = f"/api/runs/{run_id}/interactions/{iid}/answer"
        reply = http.post(url, json={"answer": "Pipette"})
        assert reply.status_code == 200, reply.text
        assert reply.json() == {"run_id": run_id, "interaction_id": iid, "queued": True,
                                "resumed": False, "created": True, **ONE_ANSWER}  # fmt: skip
        again = http.post(url, json={"answer": "Other"})
        assert again.status_code == 409
        done = wait_for_status(http, run_id, {"finished", "failed"})
        assert done["status"] == "finished"
        text = http.get(f"/api/runs/{run_id}").json()["text"]
        assert text == f'Done: Question posted as {iid}; keep working. The answer arrives as a ' \
            f'message "[Answer to question {iid}] ..." when the operator replies. Call ' \
            "await_answers only when you cannot proceed without it. | worked | " \
            f'[Answer to question {iid}] Q: "Project name?" — A: Pipette'  # fmt: skip


def test_a_runs_own_await_wait_is_not_listed_as_pending(server: Server) -> None:
    """Before, REST's pending list carried the await record too, which no one can answer
    (409 ``await``); the page hid it, the CLI and Slack left it out."""
    paused = pi(
        "run", f"{ASYNC_RECIPE}:awaits", "Which tone?", "--no-interactive",
        "--store", server.store, cwd=server.cwd,
    )  # fmt: skip
    assert paused.returncode == 0, paused.stderr
    found = re.search(r"Run (run-\w+) paused", paused.stdout)
    assert found, paused.stdout
    run_id = found.group(1)
    question = f"{run_id}_waiter_async_1"
    with server.client() as http:
        pending = http.get(f"/api/runs/{run_id}/interactions/pending").json()["interactions"]
        assert [p["id"] for p in pending] == [question]
        shown = http.get(f"/api/runs/{run_id}").json()  # the run's whole record keeps it
        assert [i["kind"] for i in shown["interactions"]] == ["async", "await"]
        refused = http.post(f"/api/runs/{run_id}/interactions/int-w1/answer", json={"answer": "x"})
        assert (refused.status_code, refused.json()["reason"]) == (409, "await")


@pytest.mark.anyio
async def test_a_runs_own_await_wait_is_not_sent_as_a_question(server: Server) -> None:
    """Before, the socket's ``interrupt.opened`` and ``interrupt.resolved`` carried the await
    record too (the page's script skipped it; other clients showed a question no one can
    answer)."""
    async with client(server) as ws:
        paused = await anyio.to_thread.run_sync(lambda: pi(
            "run", f"{ASYNC_RECIPE}:awaits", "Which tone?", "--no-interactive",
            "--store", server.store, cwd=server.cwd,
        ))  # fmt: skip
        assert paused.returncode == 0, paused.stderr
        found = re.search(r"Run (run-\w+) paused", paused.stdout)
        assert found, paused.stdout
        run_id = found.group(1)
        question = f"{run_id}_waiter_async_1"
        frames = await collect(ws, {"type": "run.status", "run_id": run_id,
                                    "to": "paused_waiting_human"})  # fmt: skip
        opened = [f["interaction"]["id"] for f in frames if f["type"] == "interrupt.opened"]
        assert opened == [question]
        async with server.async_client() as http:
            url = f"/api/runs/{run_id}/interactions/{question}/answer"
            reply = await http.post(url, json={"answer": "friendly"})
            assert reply.status_code == 200 and reply.json()["resumed"] is True, reply.text
        frames = await collect(ws, {"type": "run.status", "run_id": run_id, "to": "finished"})
        resolved = [f["interaction_id"] for f in frames if f["type"] == "interrupt.resolved"]
        assert resolved == [question]


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Chromium is not installed (.ci/run: apt-get install -y chromium)"
)
def test_the_page_shows_a_non_blocking_card_while_the_run_keeps_running(server: Server) -> None:
    from playwright.sync_api import expect, sync_playwright

    from tests.hosts.web.test_page import ARGS, shot

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=ARGS)  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{server.url}#token={server.token}")
            expect(page.locator("#connection")).to_have_text("Connected")
            with server.client() as http:
                run_id, iid = start(http, "Which tone?")
            card = page.locator(f'article.card[data-run="{run_id}"][data-interaction="{iid}"]')
            expect(card).to_have_attribute("data-kind", "async")
            expect(card.locator(".card-async")).to_have_text(
                "Asked while the run keeps working: answer when you are ready."
            )
            expect(card.get_by_role("heading", name="Which tone?")).to_be_visible()
            expect(page.locator(f'li[data-run="{run_id}"] .status')).to_have_text("running")
            shot(page, "async-card-open")
            card.get_by_label("Your answer").fill("friendly")
            card.get_by_role("button", name="Send").click()
            expect(card).to_have_attribute("data-state", "resolved")
            expect(card.locator(".card-status")).to_have_text(
                "Answered by token via web: friendly"
            )
            expect(page.locator(f'li[data-run="{run_id}"] .status')).to_have_text("finished")
            shot(page, "async-card-answered")
            assert errors == []
        finally:
            browser.close()
