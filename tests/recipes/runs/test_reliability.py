"""No stranded run, no lost answer: faults during a run, races, and bounded cost."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions import ConflictError, ContractError, InvalidPayloadError, RunError, UsageError
from interactions.store import (
    EventRecord,
    MemoryStore,
    NewInteraction,
    RunRecord,
    RunStatus,
    Store,
    utc_now,
)
from interactions.testing.store_conformance import new_run
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import Completed, ModelError, ModelRequest, TextDelta
from recipes.runs import Claim, Runner, RunResult, RunView, Surface
from recipes.runs.agui import agui_events
from recipes.runs.drivers import register_driver
from tests.hosts.fake_openai import RawReply, fake_openai
from tests.recipes.runs.conftest import (
    QUESTIONS,
    RELEASE,
    SLOW_DEPLOY,
    TWO_PAUSES,
    postgres_stores,
)

pytestmark = pytest.mark.anyio


def tool_call_reply(call_id: str, name: str, arguments: dict[str, str]) -> RawReply:
    """An OpenAI stream whose assistant message calls one tool."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]  # fmt: skip
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return RawReply(200, body.encode(), "text/event-stream")


async def test_an_auth_failure_while_resuming_keeps_the_answer_and_can_be_retried(
    store: Store,
) -> None:
    with fake_openai([tool_call_reply("a1", "approve", {"topic": "api"}), 401, "Done."]) as fake:
        env = {"OPENAI_API_KEY": "sk-first-key-0001", "OPENAI_BASE_URL": fake.base_url}
        paused = await Runner(store, env=env).start(TWO_PAUSES, "deploy", model="openai:gpt-t")
        assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
        rotated = env | {"OPENAI_API_KEY": "sk-rotated-key-02"}
        with pytest.raises(RunError) as failed:
            await Runner(store, env=rotated).answer(
                paused.run_id, "int-a1", {"approved": True}, resume=True
            )
        assert failed.value.hint == f"retry it with: pi-recipes runs retry {paused.run_id}"
        run = await store.get_run(paused.run_id)
        assert run.status is RunStatus.FAILED_RESUMABLE  # not terminal: the key is the cure
        [kept] = await store.list_interactions(paused.run_id)
        assert kept.answer is not None and kept.answer.payload == {"approved": True}
        done = await Runner(store, env=env).retry(paused.run_id)
        assert done.status is RunStatus.FINISHED and done.text == "Done."


async def test_missing_credentials_are_found_before_the_run_leaves_paused(store: Store) -> None:
    with pytest.raises(UsageError, match=r"set OPENAI_API_KEY, then: start it again$"):
        await Runner(store, env={}).start(TWO_PAUSES, "deploy", model="openai:gpt-t")
    assert await store.list_runs(limit=5) == [], "nothing is stored"
    with fake_openai([tool_call_reply("a1", "approve", {"topic": "api"})]) as fake:
        env = {"OPENAI_API_KEY": "sk-first-key-0001", "OPENAI_BASE_URL": fake.base_url}
        paused = await Runner(store, env=env).start(TWO_PAUSES, "deploy", model="openai:gpt-t")
    with pytest.raises(UsageError, match="set OPENAI_API_KEY, then: pi-recipes runs resume"):
        await Runner(store, env={}).answer(paused.run_id, "int-a1", {"approved": True}, resume=True)
    run = await store.get_run(paused.run_id)
    assert run.status is RunStatus.PAUSED_WAITING_HUMAN  # never stranded in running
    [kept] = await store.list_interactions(paused.run_id)
    assert kept.answer is not None  # the human's answer is kept


async def test_a_malformed_interrupt_lifetime_refuses_the_start_and_writes_nothing() -> None:
    async with MemoryStore() as store:
        with pytest.raises(ContractError, match="PI_INTERRUPT_TTL_SECONDS"):
            await Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "1 week"}).start(RELEASE, "v1")
        assert await store.list_runs() == []


async def test_a_resume_cut_short_is_recorded_and_a_retry_does_it_again(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(RELEASE, "Release v8")
    entered = anyio.Event()

    class Hang:  # the model of the resumed leg never answers: the leg is cut short
        name = "scripted:release-demo"

        async def stream(self, request: ModelRequest) -> AsyncIterator[object]:
            entered.set()
            await anyio.sleep_forever()
            yield  # pragma: no cover

    hanging = Runner(store, env={}, model=Hang())  # type: ignore[arg-type]
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                functools.partial(
                    hanging.answer, paused.run_id, "int-call_channel", {"answer": "Beta"},
                    resume=True,
                )
            )  # fmt: skip
            await entered.wait()
            tg.cancel_scope.cancel()  # Ctrl-C / SIGTERM / a host stopping
    run = await store.get_run(paused.run_id)
    assert run.status is RunStatus.FAILED_RESUMABLE and "interrupted" in (run.error or "")
    assert run.checkpoint["leg"] == 1  # the checkpoint of before the cut leg
    second = await runner.retry(paused.run_id)
    assert [i.id for i in second.interrupts] == ["int-call_publish"]
    assert second.interrupts[0].message == "Publish v8 to beta?"


async def test_a_cancel_stops_the_running_agent_and_its_tools(
    store: Store, tmp_path: Path
) -> None:
    runner = Runner(store, env={}, cwd=tmp_path)
    started = tmp_path / "started"
    refused: list[ConflictError] = []

    async def start() -> None:
        with pytest.raises(ConflictError) as stopped:
            await runner.start(SLOW_DEPLOY, "deploy v2")
        refused.append(stopped.value)

    with anyio.fail_after(15):  # the tool alone would work for 30 s
        async with anyio.create_task_group() as tg:
            tg.start_soon(start)
            for _ in range(500):  # the tool marks that it started working
                if started.exists():
                    break
                await anyio.sleep(0.02)
            [run] = await store.list_runs()
            cancelled = await Runner(store, env={}).cancel(run.id)
    assert cancelled.status is RunStatus.CANCELLED
    assert refused[0].reason == "run_cancelled" and refused[0].run_id == run.id
    assert "was cancelled while this process ran it; the agent was stopped" in str(refused[0])
    assert not (tmp_path / "deployed").exists()  # the tool was stopped, not left to finish
    events = await store.list_events(run.id)
    assert "leg_ended" not in [e.type for e in events]  # the stopped leg wrote nothing after
    assert events[-1].type == "run_status_changed" and events[-1].data["to"] == "cancelled"
    # replayed, the thread ends as the live stream of the stopped leg did: cancelled
    replay = [(e.type.value, getattr(e, "run_id", None)) for e in await agui_events(store, run.id)]
    assert replay == [("RUN_STARTED", run.id), ("RUN_FINISHED", run.id)]
    ended = (await agui_events(store, run.id))[-1]
    assert ended.outcome is not None and ended.outcome.type == "cancelled"  # type: ignore[attr-defined]


class _CannotContinue:
    """A run driver (the public extension point) whose continuation fails before it writes."""

    async def prepare(self, runner: Runner, run: RunRecord) -> None:
        return None

    async def proceed(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        raise RuntimeError("its definition went missing")

    async def retry(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        raise RuntimeError("its definition went missing")

    def view(self, run: RunRecord) -> RunView:
        return RunView()

    def leg_events(self, run: RunRecord, leg: EventRecord, interactions: Any) -> list[Any]:
        return []


async def test_a_continuation_that_fails_before_writing_leaves_the_run_retryable(
    store: Store,
) -> None:
    """Before, the answer moved the run to running, the error reached the caller, and the run
    stayed running with no one driving it (until `runs recover`)."""
    register_driver("cannot-continue", _CannotContinue())
    runner = Runner(store, env={})
    asked = (await runner.start(QUESTIONS, "name it")).interrupts[0]  # a real question
    run = await store.create_run(new_run(kind="cannot-continue"))
    await store.update_run(
        run.id, expected_version=run.version, status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[NewInteraction.of(asked)],
    )  # fmt: skip
    with pytest.raises(RuntimeError, match="its definition went missing"):
        await runner.answer(run.id, asked.id, {"answer": "Otter"}, resume=True)
    after = await store.get_run(run.id)
    assert after.status is RunStatus.FAILED_RESUMABLE
    assert after.error == "could not continue: RuntimeError: its definition went missing"
    with pytest.raises(RuntimeError):  # a retry that fails the same way leaves it so again
        await runner.retry(run.id)
    assert (await store.get_run(run.id)).status is RunStatus.FAILED_RESUMABLE


async def test_cancel_then_answer_and_answer_then_cancel_both_end_consistent(
    store: Store,
) -> None:
    runner = Runner(store, env={})
    first = await runner.start(QUESTIONS, "name it")
    await runner.cancel(first.run_id)
    with pytest.raises(ConflictError, match="was cancelled before this answer"):
        await runner.answer(first.run_id, "int-m1", {"answer": "Otter"}, resume=True)
    second = await runner.start(QUESTIONS, "name it")
    await runner.answer(second.run_id, "int-m1", {"answer": "Otter"})
    cancelled = await runner.cancel(second.run_id)  # answered, then cancelled: no error
    assert cancelled.status is RunStatus.CANCELLED
    [record] = await store.list_interactions(second.run_id)
    assert record.answer is not None and record.answer.payload == {"answer": "otter"}
    late = await runner.answer(second.run_id, "int-m1", {"answer": "Otter"}, resume=True)
    assert late.run is not None and late.run.status is RunStatus.CANCELLED  # says so


async def test_cancel_and_answer_racing_always_end_cancelled_with_every_interaction_closed(
    store: Store,
) -> None:
    runner = Runner(store, env={})
    for _ in range(10):
        paused = await runner.start(QUESTIONS, "race")
        outcomes: list[str] = []

        async def answer(run_id: str = paused.run_id, seen: list[str] = outcomes) -> None:
            try:
                await runner.answer(run_id, "int-m1", {"answer": "Otter"})
                seen.append("answered")
            except ConflictError:
                seen.append("refused")

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            tg.start_soon(runner.cancel, paused.run_id)
        run = await store.get_run(paused.run_id)
        assert run.status is RunStatus.CANCELLED
        assert await store.list_interactions(paused.run_id, pending=True) == []
        assert len(outcomes) == 1


async def test_answers_racing_on_postgresql_leave_no_driver_warning_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two processes answer the same question at once, twenty times: one wins each time, and
    the other's refusal is the store's typed conflict alone. The loser's transaction used to
    leave psycopg's "error ignored terminating <psycopg.Pipeline ...>: pipeline aborted" in
    the log (on a user's terminal) about one race in two."""
    async with postgres_stores("the answer races", 2) as (here, there):
        runners = (Runner(here, env={}), Runner(there, env={}))
        for _ in range(20):
            paused = await runners[0].start(RELEASE, "Release v1")
            await there.get_run(paused.run_id)  # both have read the run, as answering does
            outcomes: list[str] = []

            async def answer(runner: Runner, channel: str, seen: list[str] = outcomes,
                             run_id: str = paused.run_id) -> None:  # fmt: skip
                try:
                    await runner.answer(run_id, "int-call_channel", {"answer": channel},
                                        resume=True)  # fmt: skip
                    seen.append("won")
                except ConflictError:
                    seen.append("refused")

            async with anyio.create_task_group() as tg:
                tg.start_soon(answer, runners[0], "Beta")
                tg.start_soon(answer, runners[1], "Stable")
            assert sorted(outcomes) == ["refused", "won"]
    assert [r.getMessage() for r in caplog.records if r.name == "psycopg"] == []


async def test_recover_settles_every_stranded_run_however_many() -> None:
    from interactions.testing.store_conformance import new_run

    async with MemoryStore() as store:
        for i in range(1010):
            await store.create_run(new_run(id=f"run-{i:04d}"))
        marked = await Runner(store, env={}).recover(
            older_than=0, now=utc_now() + timedelta(seconds=1)
        )
        assert len(marked) == 1010
        assert await store.list_runs(RunStatus.RUNNING) == []


async def test_a_model_that_reuses_tool_call_ids_never_wedges_a_durable_run(
    store: Store,
) -> None:
    from recipes.models import ScriptedModel

    same_id = ToolCall(id="call_0", name="mascot", arguments={"topic": "x"})
    model = ScriptedModel(
        [AssistantMessage(tool_calls=[same_id]), AssistantMessage(tool_calls=[same_id]), "ok"],
        label="questions",
    )
    runner = Runner(store, env={}, model=model)
    paused = await runner.start(QUESTIONS, "twice")
    again = await runner.answer(paused.run_id, "int-call_0", {"answer": "Otter"}, resume=True)
    assert again.run is not None and [i.id for i in again.run.interrupts] == ["int-call_0@2"]
    done = await runner.answer(paused.run_id, "int-call_0@2", {"answer": "Badger"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED


async def test_streamed_text_is_stored_coalesced_not_a_row_per_delta() -> None:
    class Echo:  # ten megabytes in a hundred thousand deltas
        name = "scripted:echo"

        async def stream(self, request: ModelRequest) -> AsyncIterator[object]:
            piece = "x" * 100
            for _ in range(100_000):
                yield TextDelta(delta=piece)
            yield Completed(message=AssistantMessage(text=piece * 100_000))

    async with MemoryStore() as store:
        done = await Runner(store, env={}, model=Echo()).start(RELEASE, "echo")  # type: ignore[arg-type]
        assert done.status is RunStatus.FINISHED
        events = await store.list_events(done.run_id)
        assert len(events) < 10  # the text lives once, in the transcript: no row per delta
        [content] = [e for e in await agui_events(store, done.run_id) if hasattr(e, "delta")]
        assert len(content.delta) == 10_000_000


async def test_an_oversized_answer_is_refused_and_changes_nothing(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(RELEASE, "Release v9")
    with pytest.raises(InvalidPayloadError, match="the most an answer may be") as refused:
        await runner.answer(paused.run_id, "int-call_channel", {"answer": "x" * (2 << 20)})
    assert refused.value.reason == "too_large"
    assert await store.list_interactions(paused.run_id, pending=False) == []


async def test_an_oversized_input_is_refused_before_a_run_exists() -> None:
    async with MemoryStore() as store:
        with pytest.raises(UsageError, match="larger than"):
            await Runner(store, env={}).start(RELEASE, "x" * (5 << 20))
        assert await store.list_runs() == []


async def test_a_retry_that_keeps_failing_says_so(store: Store) -> None:
    class Down:  # a provider in an outage: every call fails, resumably
        name = "scripted:questions"

        async def stream(self, request: ModelRequest) -> AsyncIterator[object]:
            raise ModelError("provider down", error_class="unavailable", provider="openai")
            yield  # pragma: no cover

    paused = await Runner(store, env={}).start(QUESTIONS, "name it")
    down = Runner(store, env={}, model=Down())  # type: ignore[arg-type]
    with pytest.raises(ModelError):
        await down.answer(paused.run_id, "int-m1", {"answer": "Otter"}, resume=True)
    errors = []
    for _ in range(3):
        with pytest.raises(ModelError):
            await down.retry(paused.run_id)
        errors.append((await store.get_run(paused.run_id)).error or "")
    assert "in a row" not in errors[0]
    assert "failed 2 retries in a row" in errors[1] and "failed 3 retries" in errors[2]
    done = await Runner(store, env={}).retry(paused.run_id)
    assert done.status is RunStatus.FINISHED
    assert (await store.get_run(paused.run_id)).checkpoint.get("retries", 0) == 0
