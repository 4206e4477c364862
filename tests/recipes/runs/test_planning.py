"""The runner's decisions without a store, a model or a recipe file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from interactions import (
    Answered,
    AskUserInterrupt,
    AwaitingUser,
    InvalidPayloadError,
    RunError,
    UsageError,
)
from interactions.store import InteractionAnswer, InteractionRecord, RunStatus
from recipes import AwaitingCall, PausedBatch, build_recipe
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ModelError
from recipes.runs.drivers import AwaitingRef, PausedCalls
from recipes.runs.planning import (
    checkpoint_paused,
    expiry_policy_of,
    leg_end,
    plan_expiry,
    resume_results,
    session_resume,
)

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def interrupt(iid: str, call: str) -> AskUserInterrupt:
    return AskUserInterrupt(
        id=iid,
        reason="input_required",
        message=f"{iid}?",
        tool_call_id=call,
        expires_at="2099-01-01T00:00:00Z",
        outcome=AwaitingUser(interrupt_id=iid),
    )


def record(
    iid: str, *, answer: str | None = None, expires: timedelta = timedelta(hours=1)
) -> InteractionRecord:
    return InteractionRecord(
        id=iid,
        run_id="run-1",
        tool_call_id=iid.removeprefix("int-").split(".")[0],
        requested_at=NOW - timedelta(minutes=1),
        expires_at=NOW + expires,
        answered_at=NOW if answer else None,
        descriptor=interrupt(iid, "c").model_dump(),
        answer=InteractionAnswer(status="resolved", payload={"answer": answer}) if answer else None,
    )


def test_a_leg_ends_by_what_stopped_it() -> None:
    paused = PausedBatch(
        awaiting=[
            AwaitingCall(tool_call_id="c", tool_name="ask", interrupt=interrupt("int-c", "c"))
        ]
    )
    assert leg_end("paused", paused, None).status is RunStatus.PAUSED_WAITING_HUMAN
    assert leg_end("paused", paused, None).interrupts == paused.interrupts
    assert leg_end("idle", None, None).status is RunStatus.FINISHED
    assert leg_end("aborted", None, None).status is RunStatus.CANCELLED
    outage = ModelError("down", error_class="unavailable", provider="openai")
    assert leg_end("failed", None, outage).status is RunStatus.FAILED_RESUMABLE
    bug = leg_end("failed", None, ValueError("boom"))
    assert (bug.status, bug.error) == (RunStatus.FAILED, "ValueError: boom")


def test_a_checkpoint_keeps_ids_and_a_resume_reads_the_interrupts_back() -> None:
    stored = interrupt("int-c", "c")
    paused = PausedBatch(
        awaiting=[AwaitingCall(tool_call_id="c", tool_name="ask", interrupt=stored)]
    )
    kept = checkpoint_paused(paused)
    assert kept == PausedCalls(
        awaiting=[AwaitingRef(tool_call_id="c", tool_name="ask", interrupt_id="int-c")]
    )
    messages = [AssistantMessage(tool_calls=[ToolCall(id="c", name="ask")])]
    batch, answers = session_resume(
        kept, messages, [record("int-c", answer="x"), record("int-z", answer="y")]
    )
    assert batch.interrupts[0].id == "int-c" and batch.interrupts[0].message == "int-c?"
    assert list(answers) == ["int-c"]  # another call's answers are not handed over
    assert answers["int-c"].outcome == Answered(answer="x")
    with pytest.raises(RunError, match="does not hold"):
        session_resume(kept, messages, [])


def test_a_resume_gives_answers_to_default_calls_and_reruns_replay_calls() -> None:
    from recipes import RecipeAPI

    def recipe(api: RecipeAPI) -> None:
        async def tool(*args: object) -> str:
            return ""

        api.register_tool("plain", description="p", execute=tool)
        api.register_tool("again", description="a", execute=tool, resume="replay")

    tools = build_recipe(recipe).tools
    calls = {"p": ToolCall(id="p", name="plain"), "a": ToolCall(id="a", name="again")}
    paused = PausedBatch(
        awaiting=[
            AwaitingCall(tool_call_id="p", tool_name="plain", interrupt=interrupt("int-p", "p")),
            AwaitingCall(tool_call_id="a", tool_name="again", interrupt=interrupt("int-a", "a")),
        ]
    )
    plan = resume_results(
        paused,
        {"int-p": {"answer": "one"}, "int-a": Answered(answer="two")},
        tools,
        calls,
        lambda c: c,
    )
    assert [r.tool_call_id for r in plan.results] == ["p"]
    assert [c.id for c in plan.rerun] == ["a"]
    assert set(plan.answered) == {"int-p", "int-a"}
    with pytest.raises(UsageError, match="missing"):
        resume_results(paused, {"int-p": Answered(answer="x")}, tools, calls, lambda c: c)
    with pytest.raises(InvalidPayloadError):
        resume_results(
            paused,
            {"int-p": {"answer": ""}, "int-a": Answered(answer="x")},
            tools,
            calls,
            lambda c: c,
        )


def test_expiry_settles_what_is_due_by_the_runs_policy() -> None:
    due = record("int-a", expires=timedelta(seconds=-1))
    open_ = record("int-b")
    assert plan_expiry("decline", [open_], NOW) is None
    plan = plan_expiry("decline", [due, open_], NOW)
    assert plan is not None and plan.due == [due] and not plan.fail
    failing = plan_expiry("fail", [due], NOW)
    assert failing is not None and failing.fail
    at_the_instant = record("int-c", expires=timedelta(0))
    assert plan_expiry("decline", [at_the_instant], NOW) is not None  # due at expires_at


def test_every_kind_of_run_keeps_its_expiry_policy_at_the_checkpoints_top_level() -> None:
    assert expiry_policy_of({"input": "x", "expiry_policy": "fail"}) == "fail"
    assert expiry_policy_of({"source": "graph text", "expiry_policy": "decline"}) == "decline"
    assert expiry_policy_of({}) == "decline"
    assert expiry_policy_of({"expiry_policy": "surprise"}) == "decline"
