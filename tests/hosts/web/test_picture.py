"""A graph run's picture: ``GET /api/runs/{id}/picture`` against a real server, and
``PiGraph.mount`` (hosts/web/static/graph.js) in Chromium, on a run of
``examples/release_notes.iter`` started by ``pi-recipes graph run --no-interactive`` on the
server's store and answered over REST: the node that asks is ``waiting``, then ``done`` with the
human gate after it ``waiting``, then everything ``done``.

The page's run view is being rebuilt; the test mounts the picture into the signed-in page
itself and feeds it the ``run.event`` frames of its own WebSocket, as the page will.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hosts.cli_helpers import ROOT, pi_json
from tests.hosts.web.server import Server, serving, wait_for_status
from tests.hosts.web.test_page import ARGS, ARTIFACTS, CHROMIUM

FLOW = str(ROOT / "examples" / "release_notes.iter")
ASKED = "int-draft.1.call_highlight"
GATE = "int-approve.1"
PAUSED = {"paused_waiting_human"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("picture")) as running:
        yield running


def _start(server: Server) -> str:
    """A graph run of the example, paused at its first question (a real CLI process)."""
    started = pi_json("graph", "run", FLOW, "--store", server.store, "--no-interactive",
                      cwd=server.cwd)  # fmt: skip
    assert started["status"] == "paused_waiting_human", started
    return str(started["run_id"])


def _answer(http: httpx.Client, run_id: str, interaction: str, body: dict[str, Any]) -> None:
    reply = http.post(f"/api/runs/{run_id}/interactions/{interaction}/answer", json=body)
    assert reply.status_code == 200, reply.text


def _picture(http: httpx.Client, run_id: str) -> dict[str, Any]:
    reply = http.get(f"/api/runs/{run_id}/picture")
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


def _path(data: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(s["node"], s["visit"], s["state"]) for s in data["path"]]


def test_the_picture_follows_a_run_through_its_question_and_its_human_gate(
    server: Server,
) -> None:
    run_id = _start(server)
    with server.client() as http:
        first = _picture(http, run_id)
        assert first["states"] == {"draft": "waiting", "approve": "not_reached",
                                   "publish": "not_reached", "fail": "not_reached",
                                   "done": "not_reached"}  # fmt: skip
        assert _path(first) == [("draft", 1, "waiting")]
        picture = first["picture"]
        assert {n["id"]: n["kind"] for n in picture["nodes"]} == {
            "draft": "agent", "approve": "human", "publish": "compute", "fail": "fail",
            "done": "done",
        }  # fmt: skip
        back = [e for e in picture["edges"] if e["back"]]
        assert [(e["from"], e["to"], e["label"]) for e in back] == [
            ("approve", "draft", "not approved · ↻ retry ≤2")
        ]
        assert all({"x", "y", "width", "height", "shape"} <= set(n) for n in picture["nodes"])

        _answer(http, run_id, ASKED, {"answer": "errors"})
        wait_for_status(http, run_id, PAUSED)
        paused = _picture(http, run_id)
        assert (paused["states"]["draft"], paused["states"]["approve"]) == ("done", "waiting")
        assert paused["states"]["publish"] == "not_reached"
        assert _path(paused) == [("draft", 1, "done"), ("approve", 1, "waiting")]

        _answer(http, run_id, GATE, {"approved": True})
        wait_for_status(http, run_id, {"finished"})
        ended = _picture(http, run_id)
        assert ended["status"] == "finished"
        assert ended["states"] == {"draft": "done", "approve": "done", "publish": "done",
                                   "fail": "not_reached", "done": "done"}  # fmt: skip
        assert _path(ended) == [
            ("draft", 1, "done"), ("approve", 1, "done"), ("publish", 1, "done"),
        ]  # fmt: skip


def test_unknown_runs_other_kinds_and_strangers_are_refused(server: Server) -> None:
    with server.client() as http:
        unknown = http.get("/api/runs/run-nowhere/picture")
        assert unknown.status_code == 404
        assert unknown.json()["error"] == "unknown run"
        recipe_run = server.start_run("Release v9.9.9")
        other = http.get(f"/api/runs/{recipe_run}/picture")
        assert other.status_code == 400
        assert other.json()["message"] == (
            f"run {recipe_run} is a recipe run, not a graph run: it has no workflow to draw"
        )
    with httpx.Client(base_url=server.url, timeout=20) as stranger:
        assert stranger.get(f"/api/runs/{recipe_run}/picture").status_code == 401


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed")
def test_the_picture_on_the_page_changes_a_node_when_it_finishes_and_when_it_pauses(
    server: Server,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    run_id = _start(server)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=ARGS)  # fmt: skip
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server.url}#token={server.token}")
        expect(page.locator("#connection")).to_have_text("Connected")
        page.evaluate(MOUNT, [run_id, server.token])
        expect(page.locator("#graph-test .pigraph-summary")).to_have_text(
            "Paused, waiting for a person · waiting: draft"
        )
        draft = page.locator('#graph-test .pigraph-node[data-node="draft"]')
        approve = page.locator('#graph-test .pigraph-node[data-node="approve"]')
        expect(draft).to_have_attribute(
            "aria-label", "draft, agent, the entry: waiting for a person"
        )
        expect(approve).to_have_attribute("data-state", "not_reached")
        expect(page.get_by_role("img", name="approve, person: not reached")).to_be_visible()

        with server.client() as http:
            _answer(http, run_id, ASKED, {"answer": "errors"})
            expect(draft).to_have_attribute("data-state", "done")  # it finished
            expect(approve).to_have_attribute("data-state", "waiting")  # the gate paused
            expect(approve.locator(".pigraph-state")).to_have_text("… waiting")
            expect(page.locator("#graph-test .pigraph-summary")).to_have_text(
                "Paused, waiting for a person · waiting: approve"
            )
            expect(page.locator("#graph-test .pigraph-path li")).to_have_text(
                ["draft #1 ✓ done", "approve #1 … waiting for a person"]
            )
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.locator("#graph-test").screenshot(path=str(ARTIFACTS / "graph-picture.png"))
            assert page.evaluate("window.graphEvents") > 0, "moved by the run's events"

            _answer(http, run_id, GATE, {"approved": True})
            expect(page.locator('#graph-test .pigraph-node[data-node="done"]')).to_have_attribute(
                "data-state", "done"
            )
        expect(approve).to_have_attribute("aria-label", "approve, person: done")
        expect(page.locator("#graph-test .pigraph-summary")).to_have_text("Finished")
        page.evaluate("window.graphView.destroy()")
        expect(page.locator("#graph-test .pigraph")).to_have_count(0)
        browser.close()
    assert errors == []


MOUNT = """([runId, token]) => {
  const box = document.createElement("div");
  box.id = "graph-test";
  document.body.prepend(box);
  const api = async (path) => {
    const response = await fetch(path, { headers: { Authorization: `Bearer ${token}` } });
    const body = await response.json();
    if (!response.ok) throw new Error(body.message || response.statusText);
    return body;
  };
  const view = PiGraph.mount(box, runId, api);
  window.graphView = view;
  window.graphEvents = 0;
  const socket = new WebSocket(`ws://${location.host}/ws`, ["pi-recipes.v1", `bearer.${token}`]);
  socket.addEventListener("open", () => {
    socket.send(JSON.stringify({ type: "subscribe", run_id: runId, id: "graph" }));
  });
  socket.addEventListener("message", (message) => {
    const frame = JSON.parse(message.data);
    if (frame.type === "run.event" && frame.run_id === runId) {
      window.graphEvents += 1;
      view.update(frame.event);
    }
  });
}"""


def test_graph_js_and_css_are_served_and_linked(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=20) as http:
        page = http.get("/").text
        assert '<script src="/static/graph.js" defer></script>' in page
        assert '<link rel="stylesheet" href="/static/graph.css">' in page
        script = http.get("/static/graph.js")
        assert script.status_code == 200 and "window.PiGraph = { mount }" in script.text
        assert "innerHTML" not in script.text
        assert http.get("/static/graph.css").status_code == 200
