"""Answering over REST when the run cannot be continued at once: every worker busy (refused
before anything is written, so the run is never left answered and paused), or the run's recipe
missing in this server (the answer stands, and the reply says the run did not go on)."""

from __future__ import annotations

import shutil
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.abc
import httpx
import pytest
import uvicorn

from hosts.web.app import WebConfig, create_app
from interactions.store import MemoryStore, Store, open_sqlite_store
from interactions.testing.counting import CountingStore
from recipes.runs import Runner
from tests.hosts.cli_helpers import pi
from tests.hosts.web.server import WEB_RECIPE, gate, serving, wait_for_status

pytestmark = pytest.mark.anyio
TOKEN = "test-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
BOUND = 20.0


@asynccontextmanager
async def app_serving(cwd: Path, **config: Any) -> AsyncIterator[str]:
    """``create_app`` on a SQLite store in ``cwd`` with ``config``'s limits, under uvicorn on
    a local port; its URL."""
    async with await open_sqlite_store(cwd / "state.db") as store, app_on(store, **config) as url:
        yield url


@asynccontextmanager
async def app_on(
    store: Store, *, runner: Runner | None = None, **config: Any
) -> AsyncIterator[str]:
    """``create_app`` on ``store`` (and ``runner``) under uvicorn on a local port; its URL."""
    app = create_app(store, WebConfig(recipe=WEB_RECIPE, token=TOKEN, **config), runner=runner)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning"))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)  # connections wait until uvicorn accepts them
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [listener])
            yield f"http://127.0.0.1:{listener.getsockname()[1]}"
            server.should_exit = True


async def test_an_answer_that_continues_the_run_costs_one_read_and_two_writes(
    tmp_path: Path,
) -> None:
    """What docs/benchmarks.md's "Where the time goes" states: the last answer, through the REST
    endpoint, the host kit and the runner, until the run finishes, reads the run with its
    interactions once and writes twice (the answer with the run's claim; the leg's end). The
    feed that pushes frames to the page reads the store for itself: its calls are not the
    answer's, so it gets a store of its own here."""
    memory = MemoryStore()
    counted = CountingStore(memory)
    runner = Runner(cast(Store, counted), host="web", cwd=tmp_path, env={})
    async with (
        app_on(memory, runner=runner) as url,
        httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=BOUND, trust_env=False) as http,
    ):
        started = (await http.post("/api/runs", json={"prompt": "text: Name?"})).json()
        with httpx.Client(base_url=url, headers=HEADERS, trust_env=False) as sync:
            await anyio.to_thread.run_sync(
                wait_for_status, sync, started["run_id"], {"paused_waiting_human"}
            )
        counted.reset()
        answer = f"/api/runs/{started['run_id']}/interactions/int-c1/answer"
        reply = await http.post(answer, json={"answer": "Zoe"})
        assert reply.status_code == 200 and reply.json()["resumed"] is True, reply.text
        seen = 0
        with anyio.fail_after(BOUND):  # the leg goes on in the workers: wait for its end
            while (await memory.get_run(started["run_id"])).status.value != "finished":
                news = await memory.wait_for_events(started["run_id"], after_seq=seen, timeout=1)
                seen = news[-1].seq if news else seen
    assert counted.calls == {"get_run_with_interactions": 1, "update_run": 2}


async def test_a_last_answer_while_every_worker_is_busy_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    async def until(run_id: str, status: str) -> dict[str, Any]:
        with httpx.Client(base_url=url, headers=HEADERS, trust_env=False) as sync:
            return await anyio.to_thread.run_sync(wait_for_status, sync, run_id, {status})

    async with (
        app_serving(tmp_path, workers=1, queue=0) as url,
        gate() as (port, _, release),
        httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=BOUND, trust_env=False) as http,
    ):
        prompt = {"prompt": "text: Name?\ntext: City?"}
        asked = (await http.post("/api/runs", json=prompt)).json()["run_id"]
        await until(asked, "paused_waiting_human")
        held = await http.post("/api/runs", json={"prompt": f"hold: {port}"})
        assert held.status_code == 202, held.text  # its leg keeps the only worker
        answer = f"/api/runs/{asked}/interactions/int-c{{}}/answer".format
        first = await http.post(answer(1), json={"answer": "Zoe"})  # continues nothing: taken
        assert first.status_code == 200 and first.json()["queued"] is True, first.text
        busy = await http.post(answer(2), json={"answer": "Paris"})
        assert busy.status_code == 503, busy.text
        assert (busy.json()["error"], busy.headers["retry-after"]) == ("busy", "1")
        pending = (await http.get(f"/api/runs/{asked}/interactions/pending")).json()
        assert [i["id"] for i in pending["interactions"]] == ["int-c2"], "nothing was stored"
        release.set()
        await until(held.json()["run_id"], "finished")
        again = await http.post(answer(2), json={"answer": "Paris"})
        assert again.json()["resumed"] is True
        done = await until(asked, "finished")
    assert done["text"] == "Done: Answer: Zoe | Answer: Paris"


def test_a_last_answer_whose_run_cannot_continue_here_says_so(tmp_path: Path) -> None:
    recipe = tmp_path / "moved.py"
    shutil.copy(WEB_RECIPE, recipe)
    store = str(tmp_path / "state.db")
    started = pi("run", str(recipe), "text: Name?", "--no-interactive", "--store", store,
                 cwd=tmp_path)  # fmt: skip
    assert started.returncode == 0, started.stderr
    recipe.rename(tmp_path / "elsewhere.py")  # the server cannot load the run's recipe
    with serving(tmp_path) as server, server.client() as http:
        (run,) = http.get("/api/runs").json()["runs"]
        url = f"/api/runs/{run['id']}/interactions/int-c1/answer"
        reply = http.post(url, json={"answer": "Zoe"})
        assert reply.status_code == 400, reply.text
        body = reply.json()
        assert (body["error"], body["reason"]) == ("usage", "cannot_continue")
        assert (body["run_id"], body["interaction_id"]) == (run["id"], "int-c1")
        assert body["message"].startswith("the answer is stored, but run")
        assert "no such recipe file" in body["message"]
        assert f"POST /api/runs/{run['id']}/resume" in body["message"]
        stored = http.get(f"/api/runs/{run['id']}").json()
        assert stored["status"] == "paused_waiting_human"
        assert stored["interactions"][0]["answer"]["payload"] == {"answer": "Zoe"}
        (tmp_path / "elsewhere.py").rename(recipe)
        assert http.post(f"/api/runs/{run['id']}/resume").status_code == 202
        done = wait_for_status(http, run["id"], {"finished"})
    assert done["text"] == "Done: Answer: Zoe"
