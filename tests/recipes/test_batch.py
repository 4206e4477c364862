"""Tool batches: sequential contagion, real concurrency, error results, abort, terminate."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from interactions import ContractError, InteractionAborted, UsageError
from recipes._api import RecipeAPI
from recipes._context import ToolContext
from recipes._tools import OnUpdate, ToolResult
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from tests.recipes.helpers import call, calls, session_for

pytestmark = pytest.mark.anyio


class Name(BaseModel):
    name: str
    polite: bool = False


def results(messages: list[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def yielding_tools(api: RecipeAPI, sequential: bool) -> None:
    async def work(tool_call_id: str, params: Name, ctx: ToolContext, on_update: OnUpdate) -> str:
        for _ in range(3):  # give other tasks every chance to interleave
            await anyio.lowlevel.checkpoint()
        return f"did {params.name}"

    api.register_tool("work", description="Work.", parameters=Name, execute=work)
    api.register_tool(
        "careful",
        description="Careful work.",
        parameters=Name,
        execute=work,
        execution_mode="sequential" if sequential else "parallel",
    )


@pytest.mark.parametrize("sequential", [True, False])
async def test_one_sequential_tool_makes_the_whole_batch_sequential(sequential: bool) -> None:
    session, _, rec = session_for(
        lambda api: yielding_tools(api, sequential),
        [
            calls(
                call("a", "work", name="a"),
                call("b", "careful", name="b"),
                call("c", "work", name="c"),
            ),
            "ok",
        ],
    )
    with anyio.fail_after(5):
        await session.prompt("go")
    trace = rec.tool_trace()
    if sequential:
        assert trace == ["start:a", "end:a", "start:b", "end:b", "start:c", "end:c"]
    else:  # every call started before any ended
        assert sorted(trace[:3]) == ["start:a", "start:b", "start:c"]
    assert [r.tool_call_id for r in results(session.messages)] == ["a", "b", "c"]


async def test_parallel_calls_run_concurrently_and_results_keep_source_order() -> None:
    first_may_finish = anyio.Event()

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Waits for the second call.")
        async def first(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            await first_may_finish.wait()
            return "first"

        @api.tool(description="Lets the first call finish.")
        async def second(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            first_may_finish.set()
            return "second"

    session, _, rec = session_for(recipe, [calls(call("1", "first"), call("2", "second")), "ok"])
    with anyio.fail_after(5):  # a sequential run would deadlock here
        await session.prompt("go")
    assert [text_of(r.content) for r in results(session.messages)] == ["first", "second"]
    assert rec.tool_trace().index("end:2") < rec.tool_trace().index("end:1")


def counting_recipe(counter: list[str]) -> Any:
    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Greet.")
        async def greet(
            tool_call_id: str, params: Name, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            counter.append(params.name)
            return f"Hello {params.name}"

        @api.tool(description="Fail.")
        async def explode(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            raise RuntimeError("the disk is full")

        @api.tool(description="Exit, as argparse does on bad arguments.")
        async def quit(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            sys.exit(3)

        @api.tool(description="Interrupt.")
        async def interrupt(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            raise KeyboardInterrupt

    return recipe


def unreturning_recipe(done: list[str]) -> Any:
    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Deploy (forgets its return).")
        async def deploy(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            done.append("deployed")
            _ = "deployed v1.4"  # meant: return it

        @api.tool(description="Return something that is not a result.")
        async def weird(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            done.append("weird")
            return 42

    return recipe


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ("deploy", "tool 'deploy' returned None (did it forget its `return`?)"),
        ("weird", "tool 'weird': a tool returned int; expected a ToolResult, a str"),
    ],
)
async def test_a_tool_whose_return_is_no_result_fails_the_run(tool: str, says: str) -> None:
    """The developer's mistake went to the model as the tool's failure: the model, told the
    deploy failed, deployed again. The run fails instead, saying what the tool returned."""
    done: list[str] = []
    session, model, rec = session_for(unreturning_recipe(done), [calls(call("x", tool)), "again"])
    with pytest.raises(UsageError) as raised:
        await session.prompt("go")
    assert str(raised.value).startswith(says)
    assert str(raised.value).endswith("The call ran; the run stops here")
    assert done == [tool if tool == "weird" else "deployed"]
    assert session.status == "failed" and len(model.requests) == 1
    [result] = results(session.messages)
    assert result.is_error and result.details == {"error": "usage"}
    assert text_of(result.content).startswith(f"The run failed on this call: {says}")
    assert rec.events[-1].type == "agent_end" and rec.events[-1].status == "failed"


@pytest.mark.parametrize(
    ("tool_call", "kind", "expected"),
    [
        (
            call("x", "greet", nom="Ada"),
            "invalid_arguments",
            "Invalid arguments for tool 'greet': nom: Extra inputs are not permitted; "
            "name: Field required",
        ),
        (  # a misspelled optional argument: dropped, the tool would run with its default
            call("x", "greet", name="Ada", polit=True),
            "invalid_arguments",
            "Invalid arguments for tool 'greet': polit: Extra inputs are not permitted",
        ),
        (call("x", "greet", name=3), "invalid_arguments", "name: Input should be a valid string"),
        (
            call("x", "shout"),
            "unknown_tool",
            "Tool 'shout' not found. Available tools: greet, explode, quit, interrupt.",
        ),
        (
            ToolCall(id="x", name="greet", invalid_arguments="{oops"),
            "invalid_arguments",
            "not a JSON object: '{oops'",
        ),
        (call("x", "explode"), "tool_failed", "the disk is full"),
        (  # it escaped: the session's host (an RPC or MCP server) died with it
            call("x", "quit"),
            "tool_failed",
            "Tool 'quit' called sys.exit(3) instead of returning a result; the call failed.",
        ),
        (call("x", "interrupt"), "tool_failed", "Tool 'interrupt' raised KeyboardInterrupt"),
    ],
)
async def test_a_call_that_cannot_succeed_becomes_an_error_result(
    tool_call: ToolCall, kind: str, expected: str
) -> None:
    counter: list[str] = []
    session, model, _ = session_for(counting_recipe(counter), [calls(tool_call), "sorry"])
    await session.prompt("go")
    [result] = results(session.messages)
    assert result.is_error and result.details == {"error": kind}
    assert expected in text_of(result.content)
    assert counter == []  # the tool body never ran with bad input
    assert model.requests[1].messages[-1] == result  # and the model saw the error
    assert session.status == "idle"


def blocking_recipe(started: dict[str, anyio.Event], cancelled: list[str]) -> Any:
    def recipe(api: RecipeAPI) -> None:
        async def block(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            started[tool_call_id].set()
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.append(tool_call_id)
            return "never"  # pragma: no cover

        async def quick(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            started[tool_call_id].set()
            return "quick"

        async def ask(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            await started["1"].wait()  # abort while call 1 is surely running
            raise InteractionAborted("the user pressed Esc", tool_call_id=tool_call_id)

        api.register_tool("block", description="Blocks.", execute=block)
        api.register_tool("quick", description="Quick.", execute=quick)
        api.register_tool("ask", description="Asks.", execute=ask)
        api.register_tool("step", description="Step.", execute=quick, execution_mode="sequential")

    return recipe


def assert_every_call_answered(messages: list[Any]) -> None:
    asked = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert sorted(asked) == sorted(r.tool_call_id for r in results(messages))


async def test_abort_cancels_running_tools_and_closes_every_call() -> None:
    started = {i: anyio.Event() for i in ("1", "2", "3")}
    cancelled: list[str] = []
    session, model, rec = session_for(
        blocking_recipe(started, cancelled),
        [calls(call("1", "quick"), call("2", "block"), call("3", "block"))],
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.prompt, "go")
        with anyio.fail_after(5):
            await started["2"].wait()
            await started["3"].wait()
        session.abort("the user pressed stop")
    assert session.status == "aborted"
    assert sorted(cancelled) == ["2", "3"]
    by_id = {r.tool_call_id: r for r in results(session.messages)}
    assert text_of(by_id["1"].content) == "quick" and not by_id["1"].is_error
    assert text_of(by_id["2"].content) == "Aborted: the user pressed stop" and by_id["2"].is_error
    assert [r.tool_call_id for r in results(session.messages)] == ["1", "2", "3"]
    assert rec.tool_trace().count("end:2") == 1
    assert rec.events[-1].type == "agent_end" and rec.events[-1].status == "aborted"
    assert len(model.requests) == 1


async def test_abort_in_a_sequential_batch_starts_no_further_call() -> None:
    started = {i: anyio.Event() for i in ("1", "2", "3")}
    session, _, rec = session_for(
        blocking_recipe(started, []),
        [calls(call("1", "step"), call("2", "block"), call("3", "quick"))],
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.prompt, "go")
        with anyio.fail_after(5):
            await started["2"].wait()
        session.abort()
    assert not started["3"].is_set()
    assert "start:3" not in rec.tool_trace()
    assert_every_call_answered(session.messages)
    assert session.status == "aborted"


async def test_interaction_aborted_from_a_tool_aborts_the_run() -> None:
    started = {i: anyio.Event() for i in ("1", "2")}
    cancelled: list[str] = []
    session, model, _ = session_for(
        blocking_recipe(started, cancelled),
        [calls(call("1", "block"), call("2", "ask")), "never reached"],
    )
    with anyio.fail_after(5):
        await session.prompt("go")
    assert session.status == "aborted"
    assert cancelled == ["1"]
    by_id = {r.tool_call_id: r for r in results(session.messages)}
    assert text_of(by_id["2"].content) == "Aborted: the user pressed Esc"
    assert by_id["1"].is_error and by_id["1"].details == {"error": "aborted"}
    assert model.remaining == 1


def grouping_recipe(raised: BaseException) -> Any:
    """A tool that asks two things at once in its own task group; one raises ``raised``."""

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Ask two things at once.")
        async def collect(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            async def fails() -> None:
                raise raised

            async with anyio.create_task_group() as tg:
                tg.start_soon(fails)
                tg.start_soon(anyio.sleep, 0)
            return "collected"  # pragma: no cover

    return recipe


async def test_interaction_aborted_inside_a_tools_task_group_aborts_the_run() -> None:
    """The abort reached the loop wrapped in an exception group: read as the tool's failure,
    the model was called again and the run went on as if the person had not aborted."""
    aborted = InteractionAborted("the user pressed Esc", tool_call_id="c")
    session, model, _ = session_for(grouping_recipe(aborted), [calls(call("c", "collect")), "on"])
    with anyio.fail_after(5):
        await session.prompt("go")
    assert session.status == "aborted" and len(model.requests) == 1
    [result] = results(session.messages)
    assert text_of(result.content) == "Aborted: the user pressed Esc"


async def test_a_contract_breach_inside_a_tools_task_group_fails_the_run() -> None:
    breach = ContractError("a channel answered a question with 'approved'")
    session, model, _ = session_for(grouping_recipe(breach), [calls(call("c", "collect")), "on"])
    with pytest.raises(ContractError, match="answered a question with 'approved'"):
        await session.prompt("go")
    assert session.status == "failed" and len(model.requests) == 1


async def test_a_task_group_failure_tells_the_model_what_failed_in_it() -> None:
    session, model, _ = session_for(
        grouping_recipe(RuntimeError("the disk is full")), [calls(call("c", "collect")), "ok"]
    )
    await session.prompt("go")
    [result] = results(session.messages)
    assert result.details == {"error": "tool_failed"}
    said = text_of(result.content)  # the group's own words: asyncio's, or trio's nursery's
    assert said.endswith(": the disk is full") and "(1 sub-exception)" not in said
    assert model.requests[1].messages[-1] == result


async def test_a_call_running_when_the_run_fails_is_not_said_to_have_not_run() -> None:
    """A sibling that had started (and charged the card) was closed "Not run: the run
    failed", inviting a retry to charge it again."""
    charged = anyio.Event()

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Charge the card, then wait for the receipt.")
        async def charge(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            charged.set()
            await anyio.sleep_forever()
            return "charged"  # pragma: no cover

        @api.tool(description="Confirm.")
        async def confirm(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            await charged.wait()
            raise ContractError("a channel answered a question with 'approved'")

    session, _, _ = session_for(recipe, [calls(call("1", "charge"), call("2", "confirm"))])
    with anyio.fail_after(5), pytest.raises(ContractError):
        await session.prompt("go")
    by_id = {r.tool_call_id: text_of(r.content) for r in results(session.messages)}
    assert by_id["1"] == (
        "Stopped while it ran: the run failed (a channel answered a question with 'approved'); "
        "what the call did before then may have taken effect"
    )
    assert by_id["2"] == (
        "The run failed on this call: a channel answered a question with 'approved'"
    )


async def test_interaction_aborted_in_a_sequential_call_calls_no_further_model_turn() -> None:
    started = {i: anyio.Event() for i in ("1", "2")}
    started["1"].set()
    session, model, rec = session_for(
        blocking_recipe(started, []), [calls(call("2", "ask")), "never reached"]
    )
    with anyio.fail_after(5):
        await session.prompt("go")
    assert session.status == "aborted"
    assert len(model.requests) == 1
    assert [e.type for e in rec.events].count("turn_start") == 1


@pytest.mark.parametrize(("flags", "model_calls"), [((True, True), 1), ((True, False), 2)])
async def test_the_loop_ends_early_only_when_every_result_terminates(
    flags: tuple[bool, bool], model_calls: int
) -> None:
    def recipe(api: RecipeAPI) -> None:
        async def done(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> ToolResult:
            return ToolResult.of_text("done", terminate=flags[int(tool_call_id)])

        api.register_tool("done", description="Done.", execute=done)

    session, model, _ = session_for(recipe, [calls(call("0", "done"), call("1", "done")), "more"])
    await session.prompt("go")
    assert len(model.requests) == model_calls
    assert session.status == "idle"


async def test_on_update_becomes_tool_execution_update_events() -> None:
    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Reports progress.")
        async def slow(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            on_update("50%")
            on_update(ToolResult.of_text("90%", {"step": 9}))
            return "100%"

    session, _, rec = session_for(recipe, [calls(call("1", "slow")), "ok"])
    await session.prompt("go")
    updates = [e for e in rec.events if e.type == "tool_execution_update"]
    assert [(u.tool_call_id, u.partial.text, u.partial.details) for u in updates] == [
        ("1", "50%", {}),
        ("1", "90%", {"step": 9}),
    ]


async def test_tool_timeout_bounds_a_call_and_the_loop_goes_on() -> None:
    def recipe(api: RecipeAPI) -> None:
        async def hang(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            await anyio.sleep_forever()
            return "never"  # pragma: no cover

        api.register_tool("hang", description="Hangs.", execute=hang)

    session, model, _ = session_for(
        recipe, [calls(call("1", "hang")), "Moved on."], tool_timeout=0.05
    )
    with anyio.fail_after(5):
        await session.prompt("go")
    (result,) = results(session.messages)
    assert result.is_error and result.details == {"error": "timeout"}
    assert text_of(result.content) == "Tool 'hang' timed out after 0.05 s."
    assert session.status == "idle" and len(model.requests) == 2


@pytest.mark.parametrize("bad", [0, -1.0])
def test_tool_timeout_must_be_positive(bad: float) -> None:
    with pytest.raises(UsageError, match="tool_timeout"):
        session_for(lambda api: None, ["hi"], tool_timeout=bad)
