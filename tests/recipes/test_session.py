"""The agent loop: events, transcript, steering, follow-ups, model errors, context, statuses."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions import IllegalTransitionError, RunError, UsageError
from interactions.asks import ToolContextLike
from recipes import build_recipe
from recipes._api import RecipeAPI
from recipes._context import ToolContext
from recipes._events import AgentEventAdapter
from recipes._state import TRANSITIONS
from recipes._tools import OnUpdate
from recipes.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    TranscriptAdapter,
    UserMessage,
    text_of,
)
from recipes.models._base import ModelEvent, ModelRequest, TextDelta
from recipes.models.scripted import ScriptedModel
from recipes.session import create_agent_session
from tests.recipes.helpers import call, calls, session_for

pytestmark = pytest.mark.anyio


def echo_recipe(api: RecipeAPI) -> None:
    @api.tool(description="Echo.")
    async def echo(tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate) -> str:
        return "echoed"


def user_texts(messages: list[Any]) -> list[str]:
    return [text_of(m.content) for m in messages if isinstance(m, UserMessage)]


async def test_event_sequence_of_a_prompt_with_one_tool_call() -> None:
    session, _, rec = session_for(echo_recipe, [calls(call("1", "echo"), text="Let me"), "Done."])
    await session.prompt("hi")
    assert rec.types == [
        "agent_start",
        "message_start", "message_end",  # the prompt
        "turn_start",
        "message_start", *["message_update"] * 5, "message_end",  # 3 text + 2 tool-call deltas
        "tool_execution_start", "tool_execution_end",
        "message_start", "message_end",  # the tool result
        "turn_end",
        "turn_start",
        "message_start", *["message_update"] * 3, "message_end",
        "turn_end",
        "agent_end",
    ]  # fmt: skip
    texts = [e.text for e in rec.events if e.type == "message_update"]
    assert texts[:5] == ["Le", "Let ", "Let me", "Let me", "Let me"]
    for event in rec.events:  # every event survives the JSON-lines/SSE wire
        assert AgentEventAdapter.validate_json(event.model_dump_json()) == event
    assert session.status == "idle"


async def test_transcript_is_typed_and_round_trips() -> None:
    session, model, _ = session_for(echo_recipe, [calls(call("1", "echo")), "Done."])
    await session.prompt("hi")
    messages = session.messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert isinstance(messages[1], AssistantMessage)
    assert messages[1].model == "scripted:test" and messages[1].stop_reason == "tool_use"
    assert TranscriptAdapter.validate_json(TranscriptAdapter.dump_json(messages)) == messages
    assert list(model.requests[1].messages) == messages[:3]


async def test_steering_is_delivered_after_the_batch_before_the_next_model_call() -> None:
    started, release = anyio.Event(), anyio.Event()

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Slow.")
        async def slow(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            started.set()
            await release.wait()
            return "slow done"

    session, model, _ = session_for(recipe, [calls(call("1", "slow"), call("2", "slow")), "ok"])
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.prompt, "go")
        with anyio.fail_after(5):
            await started.wait()
        session.steer("use the other file")
        release.set()
    roles = [m.role for m in model.requests[1].messages]
    assert roles == ["user", "assistant", "tool", "tool", "user"]
    assert user_texts(session.messages) == ["go", "use the other file"]


async def test_follow_up_waits_until_the_agent_would_stop() -> None:
    session_ref: list[Any] = []

    async def first_turn(request: ModelRequest) -> AssistantMessage:
        session_ref[0].follow_up("and then summarise")
        return calls(call("1", "echo"))

    session, model, _ = session_for(echo_recipe, [first_turn, "Echoed.", "Summary."])
    session_ref.append(session)
    await session.prompt("go")
    assert [m.role for m in session.messages] == [
        "user", "assistant", "tool", "assistant", "user", "assistant"
    ]  # fmt: skip
    assert user_texts(session.messages) == ["go", "and then summarise"]
    assert model.remaining == 0


async def test_steering_queued_during_a_final_answer_is_still_delivered() -> None:
    session_ref: list[Any] = []

    def answer(request: ModelRequest) -> AssistantMessage:
        session_ref[0].steer("wait, one more thing")
        return AssistantMessage(text="All done.")

    session, model, _ = session_for(echo_recipe, [answer, "Sure."])
    session_ref.append(session)
    await session.prompt("go")
    assert user_texts(session.messages) == ["go", "wait, one more thing"]
    assert model.remaining == 0


class QuotaError(RunError):
    pass


async def test_a_model_error_propagates_unchanged_and_the_session_can_go_on() -> None:
    error = QuotaError("out of quota", reason="usage_window")

    calls = []

    def failing_once(request: ModelRequest) -> AssistantMessage:
        calls.append(request)
        if len(calls) == 1:
            raise error
        return AssistantMessage(text="Back.")

    session, _, rec = session_for(echo_recipe, [failing_once])
    with pytest.raises(QuotaError) as caught:
        await session.prompt("go")
    assert caught.value is error
    assert session.status == "failed"
    end = rec.events[-1]
    assert (
        end.type == "agent_end" and end.status == "failed" and "out of quota" in (end.error or "")
    )
    await session.prompt("again")
    assert session.status == "idle"


async def test_retry_calls_the_model_again_without_a_new_message() -> None:
    attempts: list[ModelRequest] = []

    def flaky(request: ModelRequest) -> AssistantMessage:
        attempts.append(request)
        if len(attempts) == 1:
            raise QuotaError("window closed", reason="usage_window")
        return AssistantMessage(text="Recovered.")

    session, _, _ = session_for(echo_recipe, [flaky])
    with pytest.raises(UsageError, match="transcript ending with a user message"):
        await session.retry()  # nothing to answer yet
    with pytest.raises(QuotaError):
        await session.prompt("go")
    await session.retry()
    assert session.status == "idle"
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert attempts[0].messages == attempts[1].messages
    with pytest.raises(UsageError, match="use prompt"):
        await session.retry()  # the last message is the assistant's


async def test_a_model_that_calls_tools_for_ever_is_stopped_at_max_turns() -> None:
    looping = [calls(call(f"c{n}", "echo")) for n in range(1, 7)]
    session, model, rec = session_for(echo_recipe, [*looping, "Done."], max_turns=3)
    with pytest.raises(RunError, match=r"called the model 3 times .*max_turns=3") as caught:
        await session.prompt("go")
    assert caught.value.reason == "max_turns"
    assert len(model.requests) == 3  # the fourth call was never made
    assert session.status == "failed" and rec.events[-1].type == "agent_end"
    assert [m.role for m in session.messages[-2:]] == ["assistant", "tool"]  # no call left open
    with pytest.raises(RunError):
        await session.retry()  # a retry has a bound of its own: three more calls
    await session.retry()
    assert (session.status, session.messages[-1].role) == ("idle", "assistant")
    assert len(model.requests) == 7


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_max_turns_must_be_a_positive_whole_number(bad: object) -> None:
    with pytest.raises(UsageError, match="max_turns"):
        session_for(echo_recipe, ["Hi."], max_turns=bad)


async def test_prompt_while_running_is_a_usage_error() -> None:
    gate = anyio.Event()

    async def waiting(request: ModelRequest) -> AssistantMessage:
        await gate.wait()
        return AssistantMessage(text="ok")

    session, _, _ = session_for(echo_recipe, [waiting])
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.prompt, "first")
        await anyio.wait_all_tasks_blocked()
        assert session.status == "running"
        with pytest.raises(UsageError, match="steer"):
            await session.prompt("second")
        gate.set()
    assert session.status == "idle"


async def test_abort_while_the_model_streams() -> None:
    streaming = anyio.Event()

    async def hanging(request: ModelRequest) -> AssistantMessage:
        streaming.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    session, _, rec = session_for(echo_recipe, [hanging])
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.prompt, "go")
        with anyio.fail_after(5):
            await streaming.wait()
        session.abort()
    assert session.status == "aborted"
    assert [m.role for m in session.messages] == ["user"]
    assert rec.types[-2:] == ["message_end", "agent_end"]


async def test_cancelling_the_caller_records_an_abort() -> None:
    streaming = anyio.Event()

    async def hanging(request: ModelRequest) -> AssistantMessage:
        streaming.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    session, _, _ = session_for(echo_recipe, [hanging])
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.prompt, "go")
        with anyio.fail_after(5):
            await streaming.wait()
        tg.cancel_scope.cancel()
    assert session.status == "aborted"


async def test_the_tool_context(tmp_path: Path) -> None:
    seen: list[ToolContext] = []

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Look around.")
        async def look(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            seen.append(ctx)
            return "ok"

        api.register_agent("scout", "Look around.")

    session, _, _ = session_for(
        recipe,
        [calls(call("c1", "look")), "ok"],
        mode="json",
        env={"PI_INTERRUPT_RESUME": "1"},
        cwd=tmp_path,
        run_id="run-7",
    )
    await session.prompt("go")
    [ctx] = seen
    like: ToolContextLike = ctx  # what the ask helpers take
    assert (like.mode, like.has_ui, like.ui) == ("json", False, None)
    assert dict(ctx.env) == {"PI_INTERRUPT_RESUME": "1"}
    assert (ctx.cwd, ctx.run_id, ctx.agent, ctx.tool_call_id) == (tmp_path, "run-7", "scout", "c1")
    assert ctx.session_id == session.session_id and not ctx.aborted


async def test_an_agent_sees_only_its_tools_and_instructions() -> None:
    def recipe(api: RecipeAPI) -> None:
        echo_recipe(api)

        @api.tool(description="Other.")
        async def other(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            return "other"

        api.register_agent("all", "Use anything.")
        api.register_agent("narrow", "Only echo.", tools=["echo"])

    model = ScriptedModel(["ok"])
    session = create_agent_session(build_recipe(recipe), "narrow", model=model)
    await session.prompt("go")
    [request] = model.requests
    assert request.instructions == "Only echo."
    assert [t.name for t in request.tools] == ["echo"]


def test_a_session_needs_a_model_and_falls_back_to_the_demo_model() -> None:
    def bare(api: RecipeAPI) -> None:
        api.register_agent("a", "Say hi.")

    with pytest.raises(UsageError, match="has no model"):
        create_agent_session(build_recipe(bare))
    demo = ScriptedModel(["hi"])

    def with_demo(api: RecipeAPI) -> None:
        api.set_demo_model(demo)

    assert create_agent_session(build_recipe(with_demo)).model is demo


async def test_the_agents_own_model_is_used() -> None:
    model = ScriptedModel(["hi"])

    def recipe(api: RecipeAPI) -> None:
        api.register_agent("a", "Say hi.", model=model)

    session = create_agent_session(build_recipe(recipe))
    await session.prompt("go")
    assert session.model is model and model.remaining == 0


async def test_subscribe_streams_the_events() -> None:
    session, _, rec = session_for(echo_recipe, ["hi"])
    async with session.subscribe() as events:
        await session.prompt("go")
        received = []
        async for event in events:
            received.append(event)
            if event.type == "agent_end":
                break
    assert received == rec.events


async def test_a_failing_listener_is_logged_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, _, _ = session_for(echo_recipe, ["hi"])

    def broken(event: object) -> None:
        raise ValueError("listener bug")

    unsubscribe = session.on_event(broken)
    with caplog.at_level(logging.ERROR, logger="recipes.session"):
        await session.prompt("go")
    assert session.status == "idle" and "listener failed" in caplog.text
    unsubscribe()


def test_the_status_table_is_enforced() -> None:
    session, _, _ = session_for(echo_recipe, [])
    run = session._run
    statuses = list(TRANSITIONS)
    for source in statuses:
        for target in statuses:
            run.status = source
            if target in TRANSITIONS[source]:
                run.move(target)
                assert run.status == target
            else:
                with pytest.raises(IllegalTransitionError):
                    run.move(target)


def test_a_transcript_with_open_calls_needs_its_pause() -> None:
    messages: list[Message] = [UserMessage.of_text("go"), calls(call("1", "echo"))]
    with pytest.raises(UsageError, match="lacking results"):
        create_agent_session(
            build_recipe(echo_recipe), model=ScriptedModel([]), messages=messages
        )
    closed = [*messages, ToolResultMessage(tool_call_id="1", tool_name="echo", content=[])]
    session = create_agent_session(
        build_recipe(echo_recipe), model=ScriptedModel([]), messages=closed
    )
    assert session.messages == closed and session.status == "idle"


class BrokenModel:
    """A model speaking the protocol wrongly: no Completed, or an error after some text."""

    def __init__(self, fail_with: Exception | None) -> None:
        self.fail_with = fail_with
        self.closed = False

    @property
    def name(self) -> str:
        return "broken:model"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        try:
            yield TextDelta(delta="Half a")
            if self.fail_with is not None:
                raise self.fail_with
        finally:
            self.closed = True


async def test_a_stream_without_completed_is_a_run_error() -> None:
    model = BrokenModel(None)
    session = create_agent_session(build_recipe(echo_recipe), model=model)
    with pytest.raises(RunError, match="without a Completed event") as caught:
        await session.prompt("go")
    assert caught.value.reason == "model_protocol"
    assert session.status == "failed" and model.closed
    assert [m.role for m in session.messages] == ["user"]


async def test_a_model_error_mid_stream_keeps_no_partial_message() -> None:
    model = BrokenModel(ConnectionError("reset"))
    session = create_agent_session(build_recipe(echo_recipe), model=model)
    with pytest.raises(ConnectionError):
        await session.prompt("go")
    assert session.status == "failed" and model.closed
    assert [m.role for m in session.messages] == ["user"]


async def test_tool_calls_sharing_an_id_are_a_run_error_before_any_runs() -> None:
    ran: list[str] = []

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Echo.")
        async def echo(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            ran.append(tool_call_id)
            return "echoed"

    session, _, _ = session_for(recipe, [calls(call("1", "echo"), call("1", "echo")), "Done."])
    with pytest.raises(RunError, match="two tool calls the id '1'") as caught:
        await session.prompt("go")
    assert caught.value.reason == "model_protocol"
    assert session.status == "failed" and ran == []


async def test_a_model_name_is_resolved_through_the_registry(tmp_path: Path) -> None:
    script = tmp_path / "hello.json"
    script.write_text('{"turns": [{"text": "Hello from the script."}]}')
    session = create_agent_session(build_recipe(echo_recipe), model=f"scripted:{script}")
    await session.prompt("hi")
    assert session.model.name == f"scripted:{script}"
    assert text_of_last(session.messages) == "Hello from the script."


def text_of_last(messages: list[Message]) -> str:
    last = messages[-1]
    assert isinstance(last, AssistantMessage)
    return last.text
