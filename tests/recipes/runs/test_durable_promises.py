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
from recipes.runs import Runner, Surface, agui_events, driver_for
from tests.recipes.runs.conftest import ACT_AFTER_APPROVAL, QUESTIONS, RELEASE

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
