"""REST for the runs list and the run view, with httpx against a running server (the test
recipe, and ``examples/release_notes.iter`` as a workflow it may start): ``GET /api/runs``
filtered by the store (status, kind, recipe or workflow, mine) and paged by its cursor, with
typed 422s for bad values; a run's title and prompt; ``GET /api/startable`` (the recipe, the
workflow and its vars); ``POST /api/runs`` for a graph run on its vars (refused vars and
workflows change nothing); ``POST /api/runs/{id}/retry``; the page served at its views'
addresses with its policy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hosts.cli_helpers import ROOT, pi
from tests.hosts.web.holding import Gate
from tests.hosts.web.server import WEB_RECIPE, Server, serving, wait_for_status

WORKFLOW = str(ROOT / "examples" / "release_notes.iter")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("rest-runs"), args=("--workflow", WORKFLOW)) as running:
        yield running


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def ids(reply: httpx.Response) -> list[str]:
    assert reply.status_code == 200, reply.text
    return [run["id"] for run in reply.json()["runs"]]


def every_run(http: httpx.Client) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = http.get("/api/runs", params={"limit": 1000}).json()["runs"]
    return runs


def test_the_list_filters_in_the_store_and_pages_with_its_cursor(
    server: Server, http: httpx.Client
) -> None:
    answered = server.start_run("pick: Mine?")
    reply = http.post(f"/api/runs/{answered}/interactions/int-c1/answer", json={"answer": "Beta"})
    assert reply.status_code == 200, reply.text
    wait_for_status(http, answered, {"finished"})
    graph = http.post("/api/runs", json={"workflow": WORKFLOW}).json()["run_id"]
    wait_for_status(http, graph, {"paused_waiting_human"})
    waiting = [server.start_run(f"pick: Paged {n}?") for n in range(3)]

    assert ids(http.get("/api/runs", params={"kind": "graph"})) == [graph]
    assert ids(http.get("/api/runs", params={"ref": WORKFLOW})) == [graph]
    assert ids(http.get("/api/runs", params={"ref": WEB_RECIPE, "status": "finished"})) == [
        answered
    ]
    assert ids(http.get("/api/runs", params={"mine": "true"})) == [answered]
    recipe_waiting = {"kind": "recipe", "status": "paused_waiting_human", "limit": 2}
    first = http.get("/api/runs", params=recipe_waiting).json()
    assert [r["id"] for r in first["runs"]] == waiting[:0:-1] and first["next"] == waiting[1]
    assert [r["title"] for r in first["runs"]] == ["pick: Paged 2?", "pick: Paged 1?"]
    second = http.get("/api/runs", params={**recipe_waiting, "cursor": first["next"]}).json()
    assert [r["id"] for r in second["runs"]] == [waiting[0]] and second["next"] is None
    (shown,) = http.get("/api/runs", params={"kind": "graph"}).json()["runs"]
    assert shown["title"] == "audience=dev version=v1.4.0" and shown["agent"] == "release"
    for run_id in waiting:
        http.post(f"/api/runs/{run_id}/cancel")


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"status": "sleeping"}, "status"),
        ({"mine": "perhaps"}, "mine"),
        ({"kind": ""}, "kind"),
        ({"kind": "k" * 51}, "kind"),
        ({"ref": "a\x00b"}, "ref"),
        ({"cursor": "run-that-never-was"}, "cursor"),
    ],
)
def test_bad_list_values_are_a_typed_422(
    http: httpx.Client, params: dict[str, Any], where: str
) -> None:
    reply = http.get("/api/runs", params=params)
    assert reply.status_code == 422, reply.text
    body = reply.json()
    assert body["error"] in {"invalid request", "invalid payload"}
    assert any(where in c["path"] for c in body["complaints"]), body


def test_a_run_s_detail_carries_its_prompt_and_title(server: Server, http: httpx.Client) -> None:
    long = "text: " + "word " * 40
    run_id = server.start_run(long.strip())
    run = http.get(f"/api/runs/{run_id}").json()
    assert run["prompt"] == long.strip() and run["vars"] == {}
    assert len(run["title"]) <= 120 and run["title"].endswith("…")
    assert long.startswith(run["title"].removesuffix("…"))
    http.post(f"/api/runs/{run_id}/cancel")


def test_startable_lists_the_recipe_and_the_workflow_with_its_vars(http: httpx.Client) -> None:
    reply = http.get("/api/startable")
    assert reply.status_code == 200, reply.text
    recipe, workflow = reply.json()["startable"]
    assert recipe == {
        "kind": "recipe", "name": "web_recipe", "ref": WEB_RECIPE, "agent": None, "vars": []
    }  # fmt: skip
    assert (workflow["kind"], workflow["name"], workflow["ref"]) == ("graph", "release", WORKFLOW)
    assert workflow["vars"] == [
        {"name": "version", "type": "string", "enum": [], "default": "v1.4.0",
         "required": False, "derived": False},
        {"name": "audience", "type": "string", "enum": ["dev", "ops"], "default": "dev",
         "required": False, "derived": False},
    ]  # fmt: skip


def test_a_graph_run_starts_on_its_vars(http: httpx.Client) -> None:
    started = http.post("/api/runs", json={"workflow": WORKFLOW, "vars": {"audience": "ops"}})
    assert started.status_code == 202, started.text
    run = wait_for_status(http, started.json()["run_id"], {"paused_waiting_human"})
    assert (run["kind"], run["ref"]) == ("graph", WORKFLOW)
    assert run["vars"] == {"audience": "ops", "version": "v1.4.0"}
    assert run["prompt"] == "audience=ops\nversion=v1.4.0"
    http.post(f"/api/runs/{run['id']}/cancel")


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"workflow": "other.iter"}, 422, "starts no workflow 'other.iter'"),
        ({"workflow": WORKFLOW, "vars": {"audience": "boss"}}, 400, "is not one of"),
        ({"workflow": WORKFLOW, "vars": {"nope": "1"}}, 400, "nope"),
        ({"workflow": WORKFLOW, "prompt": "hi"}, 422, "not a prompt"),
        ({"prompt": "hi", "vars": {"a": 1}}, 422, "vars go with a workflow"),
        ({}, 422, "needs a prompt"),
        ({"workflow": WORKFLOW, "vars": {"a\x00": 1}}, 422, "NUL"),
    ],
)
def test_a_refused_start_is_typed_and_writes_nothing(
    http: httpx.Client, body: dict[str, Any], status: int, said: str
) -> None:
    before = every_run(http)
    reply = http.post("/api/runs", json=body)
    assert reply.status_code == status, reply.text
    assert said in reply.text
    assert set(reply.json()) >= {"error", "message", "complaints"}
    assert every_run(http) == before


def test_retry_continues_a_failed_resumable_run_and_refuses_the_others(
    server: Server, http: httpx.Client
) -> None:
    paused = server.start_run("pick: Not failed?")
    refused = http.post(f"/api/runs/{paused}/retry")
    assert refused.status_code == 409 and refused.json()["reason"] == "not_resumable"
    assert http.post("/api/runs/run-nope/retry").status_code == 404
    http.post(f"/api/runs/{paused}/cancel")
    gate = Gate()
    try:
        started = http.post("/api/runs", json={"prompt": f"hold: {gate.port}"}).json()["run_id"]
        wait_for_status(http, started, {"running"})
        recovering = ("runs", "recover", "--older-than", "0", "--store", server.store)
        assert pi(*recovering, cwd=server.cwd).returncode == 0
        assert http.get(f"/api/runs/{started}").json()["status"] == "failed_resumable"
        gate.release()
        retried = http.post(f"/api/runs/{started}/retry")
        assert retried.status_code == 202, retried.text
        assert retried.json()["run_id"] == started
        assert wait_for_status(http, started, {"finished"})["text"] == "Done: held"
    finally:
        gate.close()


@pytest.mark.parametrize("path", ["/", "/runs", "/runs/run-1"])
def test_the_page_is_served_at_each_view_s_address_with_its_policy(
    server: Server, path: str
) -> None:
    reply = httpx.get(server.url.rstrip("/") + path, timeout=10)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in reply.headers["content-security-policy"]
    assert reply.headers["cache-control"] == "no-cache"
    assert '<script src="/static/runs.js" defer></script>' in reply.text
    assert httpx.get(server.url + "runs/a/b", timeout=10).status_code == 404
