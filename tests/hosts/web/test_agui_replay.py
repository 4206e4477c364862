"""A resume replayed while the leg it started still runs (a client that lost the first
answer's stream and sends the same resume again): the replay waits for that leg and answers
where it ended, as the first call did, never a ``RUN_ERROR`` for a run that is doing fine."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from ag_ui.core import (
    Event,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    UserMessage,
)
from pydantic import TypeAdapter

from hosts.web._agui_close import as_it_stands
from interactions.store import RunStatus
from recipes.runs import RunResult
from tests.hosts.web.server import SLOW_RECIPE, gate, serving

pytestmark = pytest.mark.anyio
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)
BOUND = 20.0


def run_input(thread: str, text: str, resume: list[ResumeEntry] | None = None) -> str:
    body = RunAgentInput(
        thread_id=thread, run_id=f"client-{uuid.uuid4().hex[:8]}",
        messages=[UserMessage(id="u1", role="user", content=text)],
        state={}, tools=[], context=[], forwarded_props={}, resume=resume,
    )  # fmt: skip
    return body.model_dump_json(by_alias=True, exclude_none=True)


async def events_of(reply: httpx.Response) -> AsyncIterator[Any]:
    assert reply.status_code == 200, (await reply.aread()).decode()
    async for line in reply.aiter_lines():
        if line.startswith("data: "):
            yield EVENTS.validate_python(json.loads(line.removeprefix("data: ")))


async def test_a_resume_replayed_while_its_leg_runs_answers_where_the_leg_ends(
    tmp_path: Path,
) -> None:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    results: dict[str, list[Any]] = {}
    with serving(tmp_path, recipe=SLOW_RECIPE) as server:
        async with gate() as (port, holding, release), server.async_client() as http:

            async def call(name: str, body: str) -> None:
                async with http.stream("POST", "/agui", content=body, headers=headers) as reply:
                    results[name] = [event async for event in events_of(reply)]

            await call("paused", run_input(thread, str(port)))
            (interrupt,) = results["paused"][-1].outcome.interrupts
            entry = ResumeEntry(
                interrupt_id=interrupt.id, status="resolved", payload={"answer": "blue"}
            )
            resume = run_input(thread, str(port), [entry])
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, "first", resume)
                    await holding.wait()  # the resumed leg runs, held on the gate
                    replay = run_input(thread, str(port), [entry])
                    async with http.stream(
                        "POST", "/agui", content=replay, headers=headers
                    ) as reply:
                        events = events_of(reply)
                        started = await anext(events)
                        release.set()  # the leg the replay waits for ends now
                        results["replay"] = [started] + [event async for event in events]

    first, replayed = results["first"][-1], results["replay"][-1]
    assert isinstance(first, RunFinishedEvent) and first.outcome is not None
    assert (first.outcome.type, first.result) == ("success", "Done: Answer: blue | held")
    assert isinstance(results["replay"][0], RunStartedEvent)
    assert isinstance(replayed, RunFinishedEvent), f"the replay ended with {replayed!r}"
    assert replayed.outcome is not None and replayed.outcome.type == "success"
    assert replayed.result == first.result


def test_a_replay_whose_leg_outlasts_the_wait_says_so() -> None:
    """Past :data:`REPLAY_WAIT` the replay ends with a ``RUN_ERROR`` that says the run still
    works on, never one that reads as the run having failed."""
    still = RunResult(run_id="run-1", thread_id="t", status=RunStatus.RUNNING)
    body = RunAgentInput.model_validate_json(run_input("t", "x"))
    closing = as_it_stands(still, body)
    assert isinstance(closing, RunErrorEvent) and closing.code == "still_running"
    assert "replay the resume again later" in closing.message
