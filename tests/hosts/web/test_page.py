"""The page in Chromium (Debian's ``/usr/bin/chromium``) through Playwright, against a running
server: cards built from the descriptors, answered by clicks and keys; an approval answered
with Request changes and feedback; a second browser seeing a card close within a second; a
``<script>`` question shown as characters; the token asked once; a run paused by
``pi-recipes run --no-interactive`` answered on the page; a tool call approved always, then
listed in the Rules view and revoked there; axe-core finding no serious accessibility violation.

``.ci/run`` installs Chromium when it is missing; without it these tests skip, saying so.
Screenshots are kept in ``.ci/artifacts/web/`` (CI keeps them as artifacts).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.hosts.cli_helpers import ROOT, pi, pi_json
from tests.hosts.web.a11y import assert_accessible
from tests.hosts.web.server import WEB_RECIPE, Server, serving, wait_for_status
from tests.recipes.runs.conftest import CUT_SHORT

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("PI_RECIPES_ARTIFACTS", ROOT / ".ci" / "artifacts")) / "web"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Chromium is not installed (.ci/run: apt-get install -y chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, Page, expect, sync_playwright
else:  # pragma: no cover - the module skips
    Browser = Page = object  # type: ignore[assignment,misc]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("page")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, server: Server) -> Iterator[Page]:
    yield from _page(browser, server)


def _page(browser: Browser, server: Server) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(f"{server.url}#token={server.token}")
    expect(opened.locator("#connection")).to_have_text("Connected")
    yield opened
    context.close()
    assert errors == [], "the page raised errors"


def shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def card(page: Page, run_id: str, interaction: str = "int-c1"):  # type: ignore[no-untyped-def]
    return page.locator(f'article.card[data-run="{run_id}"][data-interaction="{interaction}"]')


def run_status(page: Page, run_id: str):  # type: ignore[no-untyped-def]
    return page.locator(f'li[data-run="{run_id}"] .status')


def test_a_question_card_answered_by_clicking_an_option(page: Page, server: Server) -> None:
    run_id = server.start_run("pick: Which letter?")
    question = card(page, run_id)
    expect(question).to_be_visible()
    expect(question.get_by_role("heading", name="Which letter?")).to_be_visible()
    expect(question.locator(".card-header")).to_have_text("Pick one")
    expect(question.locator(".kind")).to_have_text("recipe")
    expect(question.locator(".expiry")).to_have_text(re.compile(r"expires in 6 d 23 h|7 d 0 h"))
    beta = question.get_by_role("button", name="Beta", exact=True)
    expect(beta).to_have_accessible_description("the second letter")
    expect(question.get_by_label("Other answer")).to_be_editable()
    shot(page, "question-open")
    beta.click()
    expect(question).to_have_attribute("data-state", "resolved")
    expect(question.locator(".card-status")).to_have_text("Answered by token via web: Beta")
    expect(page.locator("#history-cards").locator(question)).to_be_visible()  # moved to History
    expect(question.get_by_role("button")).to_have_count(0)  # nothing left to answer it with
    expect(run_status(page, run_id)).to_have_text("finished")
    expect(page.locator("#announcer")).to_have_text(f"Run {run_id} finished.")
    page.get_by_role("link", name="Runs", exact=True).click()
    page.locator(f'li[data-run="{run_id}"] .run-link').click()
    expect(page).to_have_url(f"{server.url}runs/{run_id}")
    expect(page.locator("#transcript")).to_contain_text("Done: Answer: beta")
    shot(page, "question-answered")


def test_an_approval_answered_with_request_changes_and_feedback(page: Page, server: Server) -> None:
    expect(page.locator("#signed-in")).to_have_text("Signed in as token")  # the shared token
    run_id = server.start_run("approve: Deploy to production?")
    approval = card(page, run_id)
    expect(approval.get_by_role("heading", name="Deploy to production?")).to_be_visible()
    expect(approval.locator("strong")).to_have_text("build")
    expect(approval.locator(".md li")).to_have_text(["tests: green", "lint: green"])
    expect(approval.get_by_role("heading", name="Plan")).to_be_visible()
    expect(approval.locator("code")).to_have_text("errors")
    changes = approval.get_by_role("button", name="Request changes")
    expect(changes).to_have_attribute("aria-expanded", "false")
    expect(approval.get_by_label("What should change?")).to_be_hidden()
    changes.click()
    expect(changes).to_have_attribute("aria-expanded", "true")
    feedback = approval.get_by_label("What should change?")
    expect(feedback).to_be_focused()
    feedback.fill("use staging first")
    shot(page, "approval-request-changes")
    approval.get_by_role("button", name="Send the request").click()
    expect(approval.locator(".card-status")).to_have_text(
        "Changes requested by token via web: use staging first"
    )
    with server.client() as http:
        done = wait_for_status(http, run_id, {"finished"})
    assert done["text"] == "Done: Revision requested. Feedback: use staging first"
    assert done["interactions"][0]["answer"]["answered_by"] == "token"


def test_a_second_browser_sees_the_card_close_within_a_second(
    browser: Browser, server: Server
) -> None:
    first, second = (_page(browser, server) for _ in range(2))
    one, two = next(first), next(second)
    run_id = server.start_run("pick: Who goes first?")
    expect(card(two, run_id)).to_be_visible()
    card(one, run_id).get_by_role("button", name="Gamma").click()
    expect(card(two, run_id)).to_have_attribute("data-state", "resolved", timeout=1000)
    expect(card(two, run_id).locator(".card-status")).to_have_text(
        "Answered by token via web: Gamma"
    )
    expect(two.locator("#history-cards").locator(card(two, run_id))).to_be_visible()
    expect(card(two, run_id).get_by_role("button")).to_have_count(0)
    shot(two, "second-browser-closed")
    for pages in (first, second):
        next(pages, None)


def test_a_card_answered_while_the_page_was_cut_off_closes_when_it_reconnects(
    browser: Browser, server: Server
) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    routes: list[Any] = []
    cut_off = False

    def relay(route: Any) -> None:  # the page's WebSocket, through a link we can cut
        upstream = route.connect_to_server()
        upstream.on_message(lambda message: None if cut_off else route.send(message))
        routes.append(route)

    page.route_web_socket(re.compile(r"/ws$"), relay)
    page.goto(f"{server.url}#token={server.token}")
    expect(page.locator("#connection")).to_have_text("Connected")
    run_id = server.start_run("pick: Answered elsewhere?")
    expect(card(page, run_id)).to_have_attribute("data-state", "open")
    page.get_by_role("link", name="Runs", exact=True).click()
    page.locator(f'li[data-run="{run_id}"] .run-link').click()  # the run is on screen
    cut_off = True  # frames from the server are lost from here on
    with server.client() as http:
        reply = http.post(
            f"/api/runs/{run_id}/interactions/int-c1/answer",
            json={"answer": "Beta"},
        )
        assert reply.status_code == 200, reply.text
        wait_for_status(http, run_id, {"finished"})
    expect(run_status(page, run_id)).not_to_have_text("finished")  # the page missed it all
    expect(card(page, run_id)).to_have_attribute("data-state", "open")
    cut_off = False
    routes[-1].close()  # the connection drops; the page reconnects and reads the store
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(card(page, run_id)).to_have_attribute("data-state", "resolved")
    expect(card(page, run_id).locator(".card-status")).to_have_text(
        "Answered by token via web: Beta"
    )
    expect(run_status(page, run_id)).to_have_text("finished")
    expect(page.locator("#transcript")).to_contain_text("Done: Answer: beta")
    expect(page.locator("#run-view-status")).to_have_text(re.compile("finished"))
    assert len(routes) == 2
    context.close()


def test_a_script_in_a_question_shows_as_characters(page: Page, server: Server) -> None:
    hostile = "<script>window.pwned = 1</script><img src=x onerror=window.pwned=2> **ok?**"
    run_id = server.start_run(f"text: {hostile}\napprove: <b>bold</b>")
    question = card(page, run_id)
    expect(question.locator("h3")).to_have_text(hostile)
    expect(card(page, run_id, "int-c2").locator("h3")).to_have_text("<b>bold</b>")
    assert page.evaluate("window.pwned") is None
    assert page.locator("#inbox script, #inbox img, #inbox b").count() == 0
    shot(page, "script-as-text")


def test_multiple_choice_and_free_text_by_keyboard(page: Page, server: Server) -> None:
    run_id = server.start_run("many: Which colours?\ntext: Any notes?")
    choices = card(page, run_id)
    expect(choices.get_by_role("group", name="Choose one or more")).to_be_visible()
    choices.get_by_role("checkbox", name="Red").focus()
    page.keyboard.press("Space")
    choices.get_by_role("checkbox", name="Blue").check()
    choices.get_by_label("Other answer").fill("Teal")
    choices.get_by_role("button", name="Submit").focus()
    page.keyboard.press("Enter")
    expect(choices.locator(".card-status")).to_have_text(
        "Answered by token via web: Red, Blue, Teal"
    )
    notes = card(page, run_id, "int-c2")
    field = notes.get_by_label("Your answer")
    field.fill("none")
    notes.get_by_role("button", name="Send").press("Enter")
    expect(notes).to_have_attribute("data-state", "resolved")
    expect(run_status(page, run_id)).to_have_text("finished")


def test_a_refused_answer_shows_why_and_keeps_the_card_open(page: Page, server: Server) -> None:
    run_id = server.start_run("strict: Pick a letter")
    strict = card(page, run_id)
    expect(strict.get_by_label("Other answer")).to_have_count(0)
    run_text = f"/api/runs/{run_id}/interactions/int-c1/answer"
    with server.client() as http:  # someone else answers first, over REST
        http.post(run_text, json={"answer": "alpha"})
    expect(strict).to_have_attribute("data-state", "resolved")
    expect(strict.locator(".card-status")).to_have_text("Answered by token via web: Alpha")


def test_decline(page: Page, server: Server) -> None:
    run_id = server.start_run("text: Anything?")
    card(page, run_id).get_by_role("button", name="Decline").click()
    expect(card(page, run_id).locator(".card-status")).to_have_text("Declined by token via web.")
    expect(run_status(page, run_id)).to_have_text("finished")


def test_the_token_is_asked_once(browser: Browser, server: Server) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(server.url)
    token = page.get_by_label("Access token")
    expect(token).to_be_focused()
    token.fill("wrong")
    token.press("Enter")
    expect(page.get_by_role("alert")).to_have_text(
        "That token was refused. Enter the server's token."
    )
    token.fill(server.token)
    page.get_by_role("button", name="Connect").click()
    expect(page.locator("#connection")).to_have_text("Connected")
    page.reload()
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.get_by_label("Access token")).to_be_hidden()
    assert server.token not in page.url
    context.close()


def paused_by_cli(server: Server, recipe: str, prompt: str) -> str:
    """The id of a run ``pi-recipes run --no-interactive`` paused on the server's store."""
    paused = pi(
        "run", recipe, prompt, "--no-interactive", "--store", server.store, cwd=server.cwd
    )  # fmt: skip
    assert paused.returncode == 0, paused.stderr
    found = re.search(r"Run (run-\w+) paused", paused.stdout)
    assert found, paused.stdout
    return found.group(1)


def test_a_run_paused_by_the_cli_is_answered_on_the_page(page: Page, server: Server) -> None:
    run_id = paused_by_cli(server, WEB_RECIPE, "pick: Asked from the CLI?")
    question = card(page, run_id)
    expect(question.get_by_role("heading", name="Asked from the CLI?")).to_be_visible()
    question.get_by_role("button", name="Alpha", exact=True).click()
    expect(run_status(page, run_id)).to_have_text("finished")
    shown = pi_json("runs", "show", run_id, "--store", server.store, cwd=server.cwd)
    assert shown["status"] == "finished" and shown["text"] == "Done: Answer: alpha"
    assert shown["interactions"][0]["answer"]["via"] == "web"


def test_an_answer_cut_at_the_output_limit_is_said_on_the_page(page: Page, server: Server) -> None:
    run_id = paused_by_cli(server, CUT_SHORT, "Write the report")
    approval = card(page, run_id, "int-w1")
    approval.get_by_role("button", name="Approve", exact=True).click()
    expect(run_status(page, run_id)).to_have_text("finished")
    warning = re.compile(r"⚠ The model's last answer stopped at the model's output limit")
    expect(page.locator(f'li[data-run="{run_id}"] .run-detail')).to_have_text(warning)
    page.reload()  # a page opened later: the run's detail says it
    expect(page.locator("#connection")).to_have_text("Connected")
    page.get_by_role("link", name="Runs", exact=True).click()
    page.locator(f'li[data-run="{run_id}"] .run-link').click()
    expect(page.locator("#run-view-warning")).to_have_text(warning)
    expect(page.locator("#run-view-status")).to_have_text(re.compile("finished"))
    shot(page, "cut-short")


def test_the_page_is_served_with_a_strict_policy(server: Server) -> None:
    reply = httpx.get(server.url, timeout=10)
    policy = reply.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert server.token not in reply.text
    host = server.url.removeprefix("http://").rstrip("/")
    assert f"connect-src 'self' ws://{host} wss://{host};" in policy
    odd = httpx.get(server.url, headers={"Host": "x; script-src *"}, timeout=10)
    policy = odd.headers["content-security-policy"]  # a Host that would add a directive
    assert "connect-src 'self' ;" in policy and "script-src *" not in policy


def test_a_tool_call_s_arguments_edited_in_their_form_are_what_it_runs_with(
    page: Page, server: Server
) -> None:
    run_id = server.start_run("ship: staging")
    gate = card(page, run_id)
    expect(gate.get_by_role("heading", name="Arguments", exact=True)).to_be_visible()
    edit = gate.get_by_role("button", name="Edit arguments")
    expect(edit).to_have_attribute("aria-expanded", "false")
    edit.focus()
    page.keyboard.press("Enter")  # by keyboard: the form opens on its first field
    expect(edit).to_have_attribute("aria-expanded", "true")
    form = gate.get_by_role("form", name="Arguments of ship")
    expect(form.get_by_label("mode")).to_be_focused()
    expect(form.get_by_label("mode")).to_have_value("safe")
    expect(form.get_by_label("notify")).not_to_be_checked()
    replicas = form.get_by_label("replicas")
    expect(replicas).to_have_value("2")
    expect(replicas).to_have_attribute("step", "1")
    expect(replicas).to_have_accessible_description("how many copies, 1 to 10")
    expect(form.get_by_label("target")).to_have_value("staging")
    form.get_by_label("target").fill("production <b>eu</b>")
    replicas.fill("3")
    form.get_by_label("mode").select_option("fast")
    form.get_by_label("notify").check()
    shot(page, "tool-call-edit-arguments")
    form.get_by_role("button", name="Approve with these arguments").click()
    expect(gate.locator(".card-status")).to_have_text(
        "Approved with edited arguments by token via web."
    )
    with server.client() as http:
        done = wait_for_status(http, run_id, {"finished"})
    edited = {"mode": "fast", "notify": True, "replicas": 3, "target": "production <b>eu</b>"}
    assert done["interactions"][0]["answer"]["payload"] == {"approved": True, "args": edited}
    assert "Shipped to production <b>eu</b> x3 (fast, notify=true)" in done["text"]
    expect(run_status(page, run_id)).to_have_text("finished")


def test_an_edit_the_tool_refuses_is_shown_beside_its_form_and_the_card_stays_open(
    page: Page, server: Server
) -> None:
    run_id = server.start_run("ship: staging")
    gate = card(page, run_id)
    gate.get_by_role("button", name="Edit arguments").click()
    form = gate.get_by_role("form", name="Arguments of ship")
    form.get_by_label("replicas").fill("99")
    form.get_by_role("button", name="Approve with these arguments").click()
    error = form.get_by_role("alert")
    expect(error).to_contain_text("replicas: 99 is greater than the maximum of 10")
    expect(gate.locator(".card-status")).to_have_text("Not sent.")
    expect(gate).to_have_attribute("data-state", "open")
    expect(form).to_be_visible()
    expect(form.get_by_label("replicas")).to_have_value("99")  # the form is kept as it was
    expect(form.get_by_label("replicas")).to_be_enabled()
    shot(page, "tool-call-edit-refused")
    with server.client() as http:
        assert http.get(f"/api/runs/{run_id}").json()["status"] == "paused_waiting_human"
        assert http.get(f"/api/runs/{run_id}").json()["interactions"][0]["answer"] is None
    form.get_by_label("replicas").fill("4")
    form.get_by_role("button", name="Approve with these arguments").click()
    expect(gate.locator(".edit-args .form-error")).to_be_empty()  # the card is in History
    expect(run_status(page, run_id)).to_have_text("finished")
    with server.client() as http:
        done = wait_for_status(http, run_id, {"finished"})
    assert "Shipped to staging x4 (safe, notify=false)" in done["text"]


def test_arguments_that_are_not_flat_are_edited_as_json(page: Page, server: Server) -> None:
    run_id = server.start_run("batch: eu, us")
    gate = card(page, run_id)
    gate.get_by_role("button", name="Edit arguments").click()
    text = gate.get_by_label("Arguments (JSON)")
    expect(text).to_be_focused()
    assert json.loads(text.input_value()) == {"targets": ["eu", "us"]}
    text.fill('{"targets": ["eu", ')
    gate.get_by_role("button", name="Approve with these arguments").click()
    expect(gate.get_by_role("alert")).to_contain_text("The arguments are not JSON")
    text.fill('{"targets": "asia"}')
    gate.get_by_role("button", name="Approve with these arguments").click()
    expect(gate.get_by_role("alert")).to_contain_text("'asia' is not of type 'array'")
    expect(gate).to_have_attribute("data-state", "open")
    text.fill('{"targets": ["asia", "<script>x</script>"]}')
    gate.get_by_role("button", name="Approve with these arguments").click()
    expect(run_status(page, run_id)).to_have_text("finished")
    with server.client() as http:
        done = wait_for_status(http, run_id, {"finished"})
    assert "Batched asia, <script>x</script>" in done["text"]


def test_approve_always_and_decline_always_send_a_decision_that_sticks(
    page: Page, server: Server
) -> None:
    run_id = server.start_run("ship@s1: staging\nship@s2: production")
    first, second = card(page, run_id, "int-s1"), card(page, run_id, "int-s2")
    always = first.get_by_role("button", name="Approve or decline always…")
    expect(always).to_have_attribute("aria-expanded", "false")
    always.focus()
    page.keyboard.press("Enter")
    scope = first.get_by_role("group", name="Remember the decision for")
    expect(scope.get_by_role("radio", name="this run")).to_be_focused()
    expect(scope.get_by_role("radio", name="this run")).to_be_checked()
    scope.get_by_role("radio", name="this conversation").check()
    first.get_by_role("checkbox", name="only these arguments").check()
    shot(page, "tool-call-always")
    first.get_by_role("button", name="Approve always", exact=True).click()
    expect(first.locator(".card-status")).to_have_text(
        "Approved always (this conversation, these arguments only) by token via web."
    )
    second.get_by_role("button", name="Approve or decline always…").click()
    second.get_by_role("button", name="Decline always", exact=True).click()
    expect(second.locator(".card-status")).to_have_text(
        "Declined always (this run) by token via web."
    )
    with server.client() as http:
        wait_for_status(http, run_id, {"finished", "failed"})
        stored = http.get(f"/api/runs/{run_id}").json()["interactions"]
    payloads = {i["id"]: i["answer"]["payload"] for i in stored}
    assert payloads == {
        "int-s1": {"approved": True, "remember": {"scope": "thread", "args": True}},
        "int-s2": {"approved": False, "remember": {"scope": "run", "args": False}},
    }


def test_a_decision_remembered_on_a_card_is_listed_in_rules_and_revoked_there(
    page: Page, server: Server
) -> None:
    run_id = server.start_run("ship: staging")
    gate = card(page, run_id)
    gate.get_by_role("button", name="Approve or decline always…").click()
    gate.get_by_role("radio", name="this conversation").check()
    gate.get_by_role("button", name="Approve always", exact=True).click()
    expect(run_status(page, run_id)).to_have_text("finished")
    with server.client() as http:
        thread = http.get(f"/api/runs/{run_id}").json()["thread_id"]
    rules = page.get_by_role("button", name="Remembered decisions")
    expect(rules).to_have_attribute("aria-expanded", "false")
    rules.focus()
    page.keyboard.press("Enter")  # by keyboard: the view opens and reads the decisions
    expect(rules).to_have_attribute("aria-expanded", "true")
    rule = page.locator(f'li.rule[data-run="{run_id}"]')
    expect(rule).to_have_attribute("data-state", "active")
    expect(rule.locator(".rule-title")).to_have_text("Allow ship active")
    expect(rule.locator(".rule-where")).to_have_text(f"In this conversation ({thread})")
    expect(rule.locator(".rule-args")).to_have_text("Any arguments")
    expect(rule.locator(".rule-who")).to_have_text(re.compile(r"^Decided by token at \S"))
    revoke = rule.get_by_role("button", name=re.compile(r"^Revoke allow ship \(dec-\w+\)$"))
    in_force = page.locator("#rules-status")
    expect(in_force).to_have_text(re.compile(r"^\d+ in force, newest first\.$"))
    before = int((in_force.text_content() or "").split()[0])
    shot(page, "rules-view")
    revoke.focus()
    page.keyboard.press("Enter")
    expect(rule).to_have_attribute("data-state", "revoked")
    expect(rule.locator(".rule-state")).to_have_text("revoked")
    expect(in_force).to_have_text(f"{before - 1} in force, newest first.")
    expect(rule.locator(".rule-revoked")).to_have_text(re.compile(r"^Revoked by token at \S"))
    expect(rule.get_by_role("button")).to_have_count(0)
    expect(rule).to_be_focused()
    expect(page.locator("#announcer")).to_have_text(
        "Revoked: allow ship. Its next call asks again."
    )
    shot(page, "rules-revoked")
    with server.client() as http:
        mine = {"run_id": run_id, "include_revoked": True}
        (stored,) = http.get("/api/decisions", params=mine).json()["decisions"]
        assert stored["revoked_by"] == "token" and stored["revoked_at"]
        assert stored["decided_by"] == "token" and stored["scope"] == "thread"
        assert stored["thread_id"] == thread
        assert http.get("/api/decisions", params={"run_id": run_id}).json()["decisions"] == []


def test_the_page_has_no_serious_accessibility_violation(page: Page, server: Server) -> None:
    paused_by_cli(server, WEB_RECIPE, "pick: Which one?")
    expect(page.locator(".card").first).to_be_visible()
    assert_accessible(page, "the page with an open card")
