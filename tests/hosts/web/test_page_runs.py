"""The runs list (``/runs``) and the run view (``/runs/RUN``) in Chromium, against a running server
serving the test recipe and ``examples/release_notes.iter``: a run view reached by its address
streams a running run to its end; Cancel cancels (after a confirmation) and Retry continues a
``failed_resumable`` run, as the store then says; New run starts a recipe run on a prompt and a
graph run on its vars, and shows it, its question answered there; the list filters (status,
kind, recipe or workflow, mine) and pages, live; back and forward; a graph run's view mounts
``PiGraph`` (graph.js; a stand-in here) and feeds it the run's events; axe-core finds no serious
violation on either view. Screenshots (``runs``, ``run-view``, at 1200 px and at a 420-px phone
width) are kept in ``.ci/artifacts/web/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import ROOT, pi
from tests.hosts.web.a11y import assert_accessible
from tests.hosts.web.holding import Gate
from tests.hosts.web.server import Server, serving, wait_for_status
from tests.hosts.web.test_page import CHROMIUM, _page, browser, shot

if CHROMIUM.exists():
    from playwright.sync_api import Browser, Page, expect
else:  # pragma: no cover - the module skips
    Browser = Page = object  # type: ignore[assignment,misc]

__all__ = ["browser"]  # the module's one browser (test_page's fixture)

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Chromium is not installed (.ci/run: apt-get install -y chromium)"
)
WORKFLOW = str(ROOT / "examples" / "release_notes.iter")
PHONE = {"width": 420, "height": 900}


@pytest.fixture
def gate() -> Iterator[Gate]:
    held = Gate()
    yield held
    held.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("runs-page"), args=("--workflow", WORKFLOW)) as running:
        yield running


@pytest.fixture
def page(browser: Browser, server: Server) -> Iterator[Page]:
    yield from _page(browser, server)


def holding(server: Server, gate: Gate) -> str:
    """A run of the test recipe that holds its leg (``running``) until the gate lets go."""
    with server.client() as http:
        reply = http.post("/api/runs", json={"prompt": f"hold: {gate.port}"})
        assert reply.status_code == 202, reply.text
    assert gate.held.wait(20), "the run never reached its hold"
    run_id: str = reply.json()["run_id"]
    return run_id


def status_of(server: Server, run_id: str) -> str:
    with server.client() as http:
        status: str = http.get(f"/api/runs/{run_id}").json()["status"]
    return status


def run_view(page: Page, server: Server, run_id: str) -> None:
    """Open the run's view by typing its address."""
    page.goto(f"{server.url}runs/{run_id}")
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#run-view")).to_be_visible()
    expect(page.locator("#run-view")).to_have_attribute("data-viewing", run_id)
    expect(page.locator("#run-view")).not_to_have_attribute("aria-busy", "true")  # its history read


def test_a_run_view_reached_by_its_address_streams_a_running_run(
    page: Page, server: Server, gate: Gate
) -> None:
    run_id = holding(server, gate)
    run_view(page, server, run_id)
    expect(page).to_have_title("Run · pi-recipes")
    expect(page.get_by_role("heading", level=2)).to_have_text(f"hold: {gate.port}")
    expect(page.locator("#run-view-status")).to_have_text("recipe · running")
    expect(page.locator("#run-prompt")).to_have_text(f"hold: {gate.port}")
    expect(page.locator("#run-facts")).to_contain_text(run_id)
    expect(page.locator("#run-facts")).to_contain_text("web_recipe.py")
    expect(page.get_by_role("button", name="Cancel run")).to_be_visible()
    expect(page.get_by_role("button", name="Retry")).to_be_hidden()
    gate.release()  # the leg goes on: its result and the model's text arrive live
    expect(page.locator("#transcript .result")).to_have_text(re.compile("held"))
    expect(page.locator("#run-view-status")).to_have_text("recipe · finished")
    expect(page.locator("#transcript .entry-text")).to_have_text(  # the whole leg, in order
        ["Let me ask.", f'{{"text": "{gate.port}"}}', "held", "Done: held"]
    )
    expect(page.locator("#run-outcome")).to_have_text("Done: held")
    expect(page.get_by_role("button", name="Cancel run")).to_be_hidden()


def test_cancel_asks_first_then_cancels_the_run(page: Page, server: Server, gate: Gate) -> None:
    run_id = holding(server, gate)
    run_view(page, server, run_id)
    cancel = page.get_by_role("button", name="Cancel run")
    page.once("dialog", lambda dialog: dialog.dismiss())  # not sure after all: nothing happens
    cancel.click()
    expect(page.locator("#run-view-status")).to_have_text("recipe · running")
    assert status_of(server, run_id) == "running"
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    cancel.click()
    expect(page.locator("#run-view-status")).to_have_text("recipe · cancelled")
    expect(page.locator("#run-action-status")).to_have_text(f"Run {run_id} cancelled.")
    assert asked == [f"Cancel run {run_id}? Its open questions close as cancelled."]
    assert status_of(server, run_id) == "cancelled"
    expect(cancel).to_be_hidden()


def test_retry_continues_a_failed_resumable_run(page: Page, server: Server, gate: Gate) -> None:
    run_id = holding(server, gate)
    recovered = pi("runs", "recover", "--older-than", "0", "--store", server.store, cwd=server.cwd)
    assert recovered.returncode == 0, recovered.stderr  # as if its process had died mid-leg
    gate.release()  # the stranded leg ends; its last write is refused
    run_view(page, server, run_id)
    expect(page.locator("#run-view-status")).to_have_text(re.compile("failed resumable"))
    retry = page.get_by_role("button", name="Retry")
    expect(page.get_by_role("button", name="Cancel run")).to_be_hidden()
    retry.click()
    expect(page.locator("#run-view-status")).to_have_text("recipe · finished")
    expect(page.locator("#run-outcome")).to_have_text("Done: held")
    with server.client() as http:
        assert wait_for_status(http, run_id, {"finished"})["text"] == "Done: held"
        again = http.post(f"/api/runs/{run_id}/retry")  # finished: nothing to retry
        assert again.status_code == 409 and again.json()["reason"] == "not_resumable"


def test_new_run_starts_a_recipe_run_shows_it_and_its_question_is_answered_there(
    page: Page, server: Server
) -> None:
    page.get_by_role("link", name="Runs", exact=True).click()
    page.get_by_role("button", name="New run").click()
    form = page.locator("#new-run")
    expect(form.get_by_label("What to run")).to_have_value("0")  # the recipe
    form.get_by_label("Prompt").fill("pick: Started on the page?")
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"/runs/run-[0-9a-f]+$"))
    run_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_role("heading", level=2)).to_have_text("pick: Started on the page?")
    question = page.locator(f'#run-questions article.card[data-question-of="{run_id}"]')
    expect(question.get_by_role("heading", name="Started on the page?")).to_be_visible()
    expect(page.locator("#run-view-status")).to_have_text("recipe · waiting for an answer")
    question.get_by_role("button", name="Beta", exact=True).click()
    expect(question.locator(".card-status")).to_have_text("Answered by token via web: Beta")
    expect(question.locator(".card-when")).to_have_text(re.compile(r"^at \S"))
    expect(page.locator("#run-view-status")).to_have_text("recipe · finished")
    expect(page.locator("#run-outcome")).to_have_text("Done: Answer: beta")
    page.go_back()  # the list it was started from, the new run on top
    expect(page.locator("#view-runs")).to_be_visible()
    expect(page.locator("#runs li").first).to_have_attribute("data-run", run_id)


def test_new_run_starts_a_graph_run_on_vars_from_its_form(page: Page, server: Server) -> None:
    page.goto(f"{server.url}runs")
    page.get_by_role("button", name="New run").click()
    form = page.locator("#new-run")
    form.get_by_label("What to run").select_option(label="Workflow: release")
    expect(form.get_by_label("Prompt")).to_be_hidden()
    version = form.get_by_label("version")
    expect(version).to_have_value("v1.4.0")  # the var's default
    expect(form.get_by_label("audience")).to_have_value("dev")
    version.fill("v9.9.9")
    form.get_by_label("audience").select_option("ops")
    assert_accessible(page, "the new-run form")
    shot(page, "new-run")
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"/runs/run-[0-9a-f]+$"))
    run_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("#run-view-status")).to_have_text(re.compile(r"^graph · "))
    expect(page.locator("#run-prompt")).to_have_text("audience=ops\nversion=v9.9.9")
    expect(page.locator("#run-facts")).to_contain_text("release_notes.iter")
    expect(page.locator("#run-questions article.card").first).to_be_visible()
    with server.client() as http:
        stored = http.get(f"/api/runs/{run_id}").json()
    assert stored["kind"] == "graph" and stored["vars"] == {"audience": "ops", "version": "v9.9.9"}


def test_a_refused_start_says_why_and_starts_nothing(page: Page, server: Server) -> None:
    page.goto(f"{server.url}runs")
    with server.client() as http:
        before = http.get("/api/runs", params={"limit": 1000}).json()["runs"]
    page.get_by_role("button", name="New run").click()
    form = page.locator("#new-run")
    form.get_by_label("What to run").select_option(label="Recipe: web_recipe")
    prompt = form.get_by_label("Prompt")
    prompt.fill("   ")
    form.get_by_role("button", name="Start").click()
    expect(form.locator("#new-run-error")).to_have_text("Write a prompt.")
    prompt.fill("x" * 100_001)  # past what the server takes
    form.get_by_role("button", name="Start").click()
    expect(form.locator("#new-run-error")).to_have_text(
        re.compile(r"^Not started: .*at most 100000 characters")
    )
    expect(page).to_have_url(f"{server.url}runs")
    with server.client() as http:
        assert http.get("/api/runs", params={"limit": 1000}).json()["runs"] == before


def test_the_runs_list_filters_and_pages(page: Page, server: Server) -> None:
    finished = [server.start_run("text: Filtered?") for _ in range(2)]
    with server.client() as http:
        for run_id in finished:
            answering = f"/api/runs/{run_id}/interactions/int-c1/answer"
            reply = http.post(answering, json={"answer": "ok"})
            assert reply.status_code == 200, reply.text
            wait_for_status(http, run_id, {"finished"})
    with server.client() as http:
        graph = http.post("/api/runs", json={"workflow": WORKFLOW}).json()["run_id"]
        wait_for_status(http, graph, {"paused_waiting_human"})
    waiting = [server.start_run(f"pick: Page {n}?") for n in range(3)]
    page.goto(f"{server.url}runs?status=paused_waiting_human&kind=recipe&limit=2")
    expect(page).to_have_title("Runs · pi-recipes")
    items = page.locator("#runs li")
    expect(items).to_have_count(2)
    expect(items.locator(".run-link")).to_have_text(["pick: Page 2?", "pick: Page 1?"])
    expect(items.first.locator(".status")).to_have_text("waiting for an answer")
    expect(items.first.locator(".kind")).to_have_text("recipe")
    expect(items.first.locator(".run-ref")).to_have_text("web_recipe")
    expect(items.first.locator(".run-age")).to_have_text(re.compile(r"^\d+ (s|min) ago$"))
    expect(page.get_by_label("Status")).to_have_value("paused_waiting_human")
    page.get_by_role("button", name="Show more runs").click()  # the next page: 1 or 2 more
    expect(items.nth(2).locator(".run-link")).to_have_text("pick: Page 0?")
    assert items.count() in (3, 4)
    page.get_by_label("Status").select_option("finished")
    expect(page).to_have_url(re.compile(r"/runs\?status=finished&kind=recipe&limit=2$"))
    expect(items.locator(".run-link")).to_have_text(["text: Filtered?", "text: Filtered?"])
    expect(items.locator(".status")).to_have_text(["finished", "finished"])
    page.get_by_label("Mine").check()  # the two I answered (as the shared token)
    expect(page.locator("#runs li[data-run]")).to_have_count(2)
    expect(items.first).to_have_attribute("data-run", finished[1])
    page.get_by_label("Mine").uncheck()
    page.get_by_label("Status").select_option("")
    page.get_by_label("Kind").select_option("graph")
    expect(items.first).to_have_attribute("data-run", graph)
    expect(items.first.locator(".run-ref")).to_have_text("release")  # the workflow's name
    expect(items.first.locator(".run-link")).to_have_text("audience=dev version=v1.4.0")
    expect(items.locator(".kind", has_not_text="graph")).to_have_count(0)
    page.get_by_label("Kind").select_option("")
    page.get_by_label("Status").select_option("paused_waiting_human")
    fresh = server.start_run("pick: Arrived live?")  # a new run appears at the top, live
    expect(items.first).to_have_attribute("data-run", fresh)
    with server.client() as http:  # and its status changes live
        http.post(f"/api/runs/{fresh}/interactions/int-c1/answer", json={"answer": "Alpha"})
    expect(items.first.locator(".status")).to_have_text("finished")
    for run_id in waiting:
        with server.client() as http:
            http.post(f"/api/runs/{run_id}/cancel")


def test_back_and_forward_move_between_the_views(page: Page, server: Server) -> None:
    run_id = server.start_run("pick: Back and forth?")
    expect(page.locator("#view-inbox")).to_be_visible()
    runs, inbox = (page.get_by_role("link", name=n, exact=True) for n in ("Runs", "Inbox"))
    runs.click()
    expect(page).to_have_url(f"{server.url}runs")
    expect(runs).to_have_attribute("aria-current", "page")
    page.locator(f'li[data-run="{run_id}"] .run-link').click()
    expect(page).to_have_url(f"{server.url}runs/{run_id}")
    expect(page.locator("#run-view-title")).to_be_focused()
    page.go_back()
    expect(page.locator("#view-runs")).to_be_visible()
    expect(page.locator("#run-view")).to_be_hidden()
    page.go_back()
    expect(page.locator("#view-inbox")).to_be_visible()
    expect(inbox).to_have_attribute("aria-current", "page")
    page.go_forward()
    page.go_forward()
    expect(page.locator("#run-view")).to_be_visible()
    expect(page.get_by_role("heading", level=2)).to_have_text("pick: Back and forth?")
    page.get_by_role("link", name="← All runs").click()
    expect(page).to_have_url(f"{server.url}runs")
    page.goto(f"{server.url}runs/run-that-never-was")  # an address of no run
    expect(page.get_by_role("heading", level=2)).to_have_text("No such run")
    said = "This server has no run run-that-never-was."
    expect(page.locator("#run-view-status")).to_have_text(said)
    expect(page.get_by_role("button", name="Cancel run")).to_be_hidden()


def test_the_views_are_accessible_and_shown_at_desk_and_phone_width(
    page: Page, server: Server
) -> None:
    run_id = server.start_run("pick: Which letter?\napprove: Deploy the <b>site</b>?")
    page.goto(f"{server.url}runs")
    expect(page.locator(f'li[data-run="{run_id}"]')).to_be_visible()
    assert_accessible(page, "the runs list")
    shot(page, "runs")
    page.locator(f'li[data-run="{run_id}"] .run-link').click()
    expect(page.locator("#run-questions article.card")).to_have_count(2)
    expect(page.locator("#transcript .tool").first).to_be_visible()
    assert_accessible(page, "the run view")
    shot(page, "run-view")
    page.set_viewport_size(PHONE)
    shot(page, "run-view-phone")
    page.get_by_role("link", name="Runs", exact=True).click()
    expect(page.locator(f'li[data-run="{run_id}"]')).to_be_visible()
    shot(page, "runs-phone")
    assert Path(shot(page, "runs-phone")).stat().st_size > 0


def test_a_graph_run_s_view_draws_its_workflow_and_the_picture_follows_the_run(
    browser: Browser, server: Server
) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(f"{server.url}#token={server.token}")
    expect(page.locator("#connection")).to_have_text("Connected")
    with server.client() as http:
        run_id = http.post("/api/runs", json={"workflow": WORKFLOW}).json()["run_id"]
        wait_for_status(http, run_id, {"paused_waiting_human"})
    run_view(page, server, run_id)
    draft = page.locator('#run-graph .pigraph-node[data-node="draft"]')
    approve = page.locator('#run-graph .pigraph-node[data-node="approve"]')
    expect(draft).to_have_attribute("data-state", "waiting")  # its agent asked a question
    expect(approve).to_have_attribute("data-state", "not_reached")
    question = page.locator("#run-questions article.card").first
    question.get_by_role("button", name="Send").locator("..").get_by_role("textbox").fill("speed")
    question.get_by_role("button", name="Send").click()
    expect(question).to_have_attribute("data-state", "resolved")
    expect(draft).to_have_attribute("data-state", "done")  # the leg the answer continued, live
    expect(approve).to_have_attribute("data-state", "waiting")
    assert_accessible(page, "a graph run's view with its picture")
    shot(page, "run-view-graph")
    page.get_by_role("link", name="Runs", exact=True).click()
    expect(page.locator("#run-graph")).to_be_hidden()
    expect(page.locator("#run-graph .pigraph")).to_have_count(0)  # the picture let go
    context.close()
