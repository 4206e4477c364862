"""What a tool author and a host rely on in a durable run: the pause end to end.

Tools are written as the README writes them (``ctx`` and nothing else); the runner decides.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from ag_ui.core import BaseEvent, EventType

from interactions import InvalidPayloadError, UsageError
from interactions.store import RunStatus, Store
from interactions.testing.dialogs import ScriptedDialogUI
from interactions.testing.store_conformance import store_snapshot
from recipes.runs import Runner, Surface
from recipes.runs.agui import agui_events
from recipes.runs.drivers import driver_for
from tests.recipes.runs.conftest import ACT_AFTER_APPROVAL, PARALLEL, QUESTIONS, RELEASE

pytestmark = pytest.mark.anyio


async def test_a_runner_pauses_a_tool_that_passes_no_env(store: Store) -> None:
    paused = await Runner(store, env={}).start(RELEASE, "Release v2")
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN  # no flag: the runner can pause


async def test_the_runners_environment_auto_approves(store: Store) -> None:
    runner = Runner(store, env={"PI_ASK_USER_AUTO_APPROVE": "1"})
    done = await runner.start(RELEASE, "Release v2")
    assert done.status is RunStatus.FINISHED
    assert done.text.startswith("Published v2. Approved.")


async def test_a_replay_tool_acts_after_the_answer_in_a_durable_run(
    store: Store, tmp_path: Path
) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("x")
    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await runner.start(ACT_AFTER_APPROVAL, "clean up")
    assert junk.exists() and [i.id for i in paused.interrupts] == ["int-x1"]
    done = await runner.answer(paused.run_id, "int-x1", {"approved": True}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert not junk.exists()  # the code after the ask ran
    assert done.run.text == "Done: Deleted junk.txt."


CLASHING_CALL_IDS = """\
from pathlib import Path

from interactions import ask_user_approval
from recipes import NoParameters, OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ScriptedModel

BACKUPS = Path(__file__).with_name("backups")


def _summary(request):
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text=" | ".join(text_of(m.content) for m in results))


def recipe(api: RecipeAPI) -> None:
    @api.tool(resume="replay")
    async def cleanup(tool_call_id: str, params: NoParameters, ctx: ToolContext,
                      on_update: OnUpdate) -> object:
        \"\"\"Stop the service, then delete the backups, each once approved.\"\"\"
        first = await ask_user_approval(title="Stop the service?", tool_call_id=tool_call_id,
                                        ctx=ctx)
        if first.outcome.type != "approved":
            return first
        second = await ask_user_approval(title="Delete the backups?",
                                         tool_call_id=tool_call_id, ctx=ctx)
        if second.outcome.type != "approved":
            return second
        BACKUPS.unlink()
        return "backups deleted"

    @api.tool
    async def other(tool_call_id: str, params: NoParameters, ctx: ToolContext,
                    on_update: OnUpdate) -> object:
        \"\"\"Ask the same thing, for something else.\"\"\"
        return await ask_user_approval(title="Delete the backups?", tool_call_id=tool_call_id,
                                       ctx=ctx)

    both = [ToolCall(id="a", name="cleanup"), ToolCall(id="a.2", name="other")]
    api.register_agent("ops", "Clean up.")
    api.set_demo_model(ScriptedModel([AssistantMessage(tool_calls=both)] + [_summary] * 3))
"""


async def test_a_call_id_holding_a_dot_never_takes_another_calls_answer(
    store: Store, tmp_path: Path
) -> None:
    """Call ``a`` (replayed) asks twice; call ``a.2`` once, the same question. Both asks were
    ``int-a.2``: on replay, ``a``'s second ask took the approval given to ``a.2``'s, and the
    tool deleted the backups nobody had been asked about."""
    (tmp_path / "clash.py").write_text(CLASHING_CALL_IDS, encoding="utf-8")
    (tmp_path / "backups").write_text("precious")
    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await runner.start(str(tmp_path / "clash.py"), "clean up")
    asked = [(i.id, i.tool_call_id) for i in paused.interrupts]
    assert asked == [("int-a", "a"), ("int-a%2E2", "a.2")]
    approve = {"approved": True}
    await runner.answer(paused.run_id, "int-a", approve)
    resumed = await runner.answer(paused.run_id, "int-a%2E2", approve, resume=True)
    assert resumed.run is not None and resumed.run.status is RunStatus.PAUSED_WAITING_HUMAN
    [second] = resumed.run.interrupts
    assert (second.id, second.tool_call_id, second.display and second.display.title) == (
        "int-a.2",
        "a",
        "Delete the backups?",
    )  # asked of the human, not answered from a.2's approval
    assert (tmp_path / "backups").exists()
    done = await runner.answer(paused.run_id, "int-a.2", approve, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert not (tmp_path / "backups").exists()


async def test_picks_are_recorded_in_the_options_order_as_a_dialog_records_them(
    store: Store,
) -> None:
    """The order was the one sent: the same picks in another order were a 409."""
    runner = Runner(store, env={})
    paused = await runner.start(PARALLEL, "go")
    [asked] = [i for i in paused.interrupts if i.selection == "multiple"]
    first, *_, last = [o.answer for o in asked.options]
    given = await runner.answer(paused.run_id, asked.id, {"answers": [last, first]})
    assert given.interaction.answer is not None
    assert given.interaction.answer.payload == {"answers": [first, last]}
    again = await runner.answer(paused.run_id, asked.id, {"answers": [first, last]})
    assert again.created is False  # the same answer, replayed


async def test_an_options_label_or_value_records_the_value(store: Store) -> None:
    runner = Runner(store, env={})
    by_label = await runner.start(QUESTIONS, "name it")
    by_value = await runner.start(QUESTIONS, "name it")
    first = await runner.answer(by_label.run_id, "int-m1", {"answer": "Badger"})
    second = await runner.answer(by_value.run_id, "int-m1", {"answer": "badger"})
    assert first.interaction.answer is not None and second.interaction.answer is not None
    assert (
        first.interaction.answer.payload
        == second.interaction.answer.payload
        == {"answer": "badger"}
    )
    # the label again is an identical replay, not a conflict
    again = await runner.answer(by_label.run_id, "int-m1", {"answer": "badger"})
    assert again.created is False


async def test_an_answer_outside_fixed_options_is_refused_and_changes_nothing(
    store: Store,
) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(QUESTIONS, "name it")
    before = await store_snapshot(store)
    with pytest.raises(InvalidPayloadError, match="not one of the options"):
        await runner.answer(paused.run_id, "int-m1", {"answer": "Wolverine"})
    assert await store_snapshot(store) == before


async def test_expiry_is_recorded_as_expired_not_as_a_cancel(store: Store) -> None:
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "0.5"})
    paused = await runner.start(QUESTIONS, "name it")
    [record] = await store.list_interactions(paused.run_id)
    [done] = await runner.expire_due(now=record.expires_at)
    assert done.status is RunStatus.FINISHED
    assert done.text == "Done: User declined to answer. Proceed with your best judgment."
    [settled] = await store.list_interactions(paused.run_id)
    assert settled.answer is not None and settled.answer.status == "expired"
    audit = [e for e in await store.list_events(paused.run_id) if e.type == "interaction_answered"]
    assert [e.data["status"] for e in audit] == ["expired"]


async def test_a_human_cancel_is_still_a_cancel(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(QUESTIONS, "name it")
    done = await runner.answer(paused.run_id, "int-m1", status="cancelled", resume=True)
    assert done.interaction.answer is not None and done.interaction.answer.status == "cancelled"


async def test_a_live_sink_sees_every_event_as_it_happens(store: Store) -> None:
    seen: list[BaseEvent] = []
    runner = Runner(store, env={})
    paused = await runner.start(RELEASE, "Release v3", surface=Surface(on_event=seen.append))
    types = [e.type for e in seen]
    assert types[0] is EventType.RUN_STARTED and types[-1] is EventType.RUN_FINISHED
    deltas = [e for e in seen if e.type is EventType.TEXT_MESSAGE_CONTENT]
    rebuilt = [e for e in await agui_events(store, paused.run_id) if e in deltas or
               e.type is EventType.TEXT_MESSAGE_CONTENT]  # fmt: skip
    assert len(deltas) > len(rebuilt) == 1  # live: every delta; rebuilt from the store: one
    assert "".join(d.delta for d in deltas) == rebuilt[0].delta  # type: ignore[attr-defined]


async def test_a_failing_sink_never_breaks_the_run(store: Store) -> None:
    def broken(event: BaseEvent) -> None:
        raise RuntimeError("the socket went away")

    paused = await Runner(store, env={}).start(RELEASE, "v4", surface=Surface(on_event=broken))
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN


async def test_a_host_ui_answers_inline_while_someone_watches(store: Store) -> None:
    ui = ScriptedDialogUI(["Beta", "Approve"])
    runner = Runner(store, env={})
    with anyio.fail_after(10):
        done = await runner.start(RELEASE, "Release v5", surface=Surface(ui=ui, mode="web"))
    assert done.status is RunStatus.FINISHED
    assert done.text == "Published v5. Approved."
    assert ui.calls[0].descriptions == (
        "every user gets it",
        "opted-in testers",
        "the adventurous",
        None,
    )


async def test_a_resume_that_cannot_continue_here_leaves_the_run_paused(
    store: Store, tmp_path: Path
) -> None:
    recipe = tmp_path / "moving.py"
    await anyio.Path(recipe).write_text(await anyio.Path(RELEASE).read_text())
    runner = Runner(store, env={})
    paused = await runner.start(str(recipe), "Release v6")
    await anyio.Path(recipe).unlink()  # moved away between the pause and the answer
    with pytest.raises(UsageError):
        await Runner(store, env={}).answer(
            paused.run_id, "int-call_channel", {"answer": "Stable"}, resume=True
        )
    run = await store.get_run(paused.run_id)
    assert run.status is RunStatus.PAUSED_WAITING_HUMAN  # not stranded in running


async def test_an_unknown_kind_of_run_is_named_in_the_error() -> None:
    with pytest.raises(UsageError, match="no driver for runs of kind 'spaceship'"):
        driver_for("spaceship")
