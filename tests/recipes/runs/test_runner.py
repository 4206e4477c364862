"""The durable runner in-process: pause, store, resume; refusals that change nothing."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import anyio
import pytest
from ag_ui.core import ResumeEntry

from interactions import (
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    RunError,
    UnknownInteractionError,
    UnknownRunError,
    UsageError,
)
from interactions.store import InteractionAnswer, RunStatus, Store, utc_now
from interactions.testing.counting import CountingStore
from interactions.testing.store_conformance import new_interaction, new_run, store_snapshot
from recipes.runs import AnswerResult, Runner, RunResult
from recipes.runs.agui import LEG_ENDED
from tests.recipes.runs.conftest import (
    CUT_SHORT,
    LOOPING,
    PARALLEL,
    RECIPES,
    RELEASE,
    UNSTORABLE,
)

pytestmark = pytest.mark.anyio

DAY = timedelta(days=1)


def entry(interrupt_id: str, payload: object = None, status: str = "resolved") -> ResumeEntry:
    return ResumeEntry(interrupt_id=interrupt_id, status=status, payload=payload)  # type: ignore[arg-type]


async def start_release(store: Store) -> tuple[Runner, RunResult]:
    runner = Runner(store, env={}, host="test")
    return runner, await runner.start(RELEASE, "Release v1.4.0")


async def test_pause_on_a_question_and_resume_to_the_end(store: Store) -> None:
    runner, paused = await start_release(store)
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    (interrupt,) = paused.interrupts
    assert interrupt.id == "int-call_channel"
    assert interrupt.response_schema is not None and interrupt.expires_at

    stored = await store.get_run(paused.run_id)
    assert stored.status is RunStatus.PAUSED_WAITING_HUMAN
    (interaction,) = await store.list_interactions(paused.run_id, pending=True)
    assert interaction.descriptor["message"] == "Where should v1.4.0 be published?"

    second = await runner.resume(paused.run_id, [entry("int-call_channel", {"answer": "beta"})])
    assert second.status is RunStatus.PAUSED_WAITING_HUMAN
    assert [i.id for i in second.interrupts] == ["int-call_publish"]
    assert second.interrupts[0].message == "Publish v1.4.0 to beta?"

    done = await runner.resume(
        paused.run_id, [entry("int-call_publish", {"approved": True, "feedback": "ship it"})]
    )
    assert done.status is RunStatus.FINISHED
    assert done.text == "Published v1.4.0. Approved. Feedback: ship it"


async def test_approval_with_feedback_is_a_revision_request(store: Store) -> None:
    runner, paused = await start_release(store)
    await runner.resume(paused.run_id, [entry("int-call_channel", {"answer": "stable"})])
    done = await runner.resume(
        paused.run_id, [entry("int-call_publish", {"approved": False, "feedback": "wait for QA"})]
    )
    assert done.text == "Did not publish v1.4.0: Revision requested. Feedback: wait for QA"


async def test_paused_tool_is_not_run_again_and_its_result_is_the_answer(store: Store) -> None:
    runner, paused = await start_release(store)
    await runner.resume(paused.run_id, [entry("int-call_channel", {"answer": "nightly"})])
    run = await store.get_run(paused.run_id)
    messages = run.checkpoint["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == ["call_channel"]
    assert results[0]["content"] == [{"type": "text", "text": "Answer: nightly"}]
    assert results[0]["details"]["interrupt"]["outcome"] == {
        "type": "answered",
        "answer": "nightly",
    }


async def test_parallel_batch_pauses_on_every_awaiting_call(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(PARALLEL, "pizza")
    assert sorted(i.id for i in paused.interrupts) == ["int-c1", "int-c3"]
    toppings = next(i for i in paused.interrupts if i.id == "int-c3")
    assert toppings.selection == "multiple"
    run = await store.get_run(paused.run_id)
    kept = [m for m in run.checkpoint["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in kept] == ["c2"]  # the finished call's result is kept

    done = await runner.resume(
        paused.run_id,
        [entry("int-c1", {"answer": "red"}), entry("int-c3", {"answers": ["olives", "cheese"]})],
    )
    assert done.status is RunStatus.FINISHED
    # picks are recorded in the options' order (cheese, ham, olives), whatever the order sent
    assert "Answer: red" in done.text and 'Answers: ["cheese","olives"]' in done.text
    assert "5 letters" in done.text


async def test_replayed_resume_is_idempotent(store: Store) -> None:
    runner, paused = await start_release(store)
    resume = [entry("int-call_channel", {"answer": "beta"})]
    first = await runner.resume(paused.run_id, resume)
    before = await store_snapshot(store)
    again = await runner.resume(paused.run_id, resume)
    assert again == first
    assert await store_snapshot(store) == before


async def test_a_resume_repeating_answers_given_one_by_one_continues_the_run(
    store: Store,
) -> None:
    runner, paused = await start_release(store)
    await runner.answer(paused.run_id, "int-call_channel", {"answer": "beta"})  # no resume
    resume = [entry("int-call_channel", {"answer": "beta"})]
    continued = await runner.resume(paused.run_id, resume)
    assert [i.id for i in continued.interrupts] == ["int-call_publish"]  # it went on
    before = await store_snapshot(store)
    again = await runner.resume(paused.run_id, resume)  # a replay now: nothing changes
    assert again == continued and await store_snapshot(store) == before


async def test_different_second_resume_is_a_conflict_that_changes_nothing(store: Store) -> None:
    runner, paused = await start_release(store)
    await runner.resume(paused.run_id, [entry("int-call_channel", {"answer": "beta"})])
    before = await store_snapshot(store)
    with pytest.raises(ConflictError):
        await runner.resume(paused.run_id, [entry("int-call_channel", {"answer": "stable"})])
    assert await store_snapshot(store) == before


@pytest.mark.parametrize(
    ("entries", "error"),
    [
        ([], InvalidPayloadError),
        ([entry("int-nope", {"answer": "beta"})], UnknownInteractionError),
        ([entry("int-call_channel", {"answer": "  "})], InvalidPayloadError),
        ([entry("int-call_channel", {"answer": "beta", "extra": 1})], InvalidPayloadError),
        ([entry("int-call_channel", {"approved": True})], InvalidPayloadError),
        ([entry("int-call_channel", "beta")], InvalidPayloadError),
    ],
)
async def test_refused_resumes_change_nothing(
    store: Store, entries: list[ResumeEntry], error: type[Exception]
) -> None:
    runner, paused = await start_release(store)
    before = await store_snapshot(store)
    with pytest.raises(error):
        await runner.resume(paused.run_id, entries)
    assert await store_snapshot(store) == before


async def test_partial_resume_is_refused(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(PARALLEL, "pizza")
    before = await store_snapshot(store)
    with pytest.raises(InvalidPayloadError, match="int-c3") as info:
        await runner.resume(paused.run_id, [entry("int-c1", {"answer": "red"})])
    assert info.value.reason == "incomplete_resume"
    assert await store_snapshot(store) == before


def _nested(depth: int) -> object:
    value: object = "beta"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("given", "reason", "says"),
    [
        ({"payload": {"answer": _nested(300)}}, "invalid_payload", "nests deeper than 200"),
        ({"payload": {"answer": _nested(50_000)}}, "invalid_payload", "nests deeper than 200"),
        ({"status": "maybe"}, "invalid_status", "status"),
        ({"answered_by": "ann\x00"}, "invalid_payload", "answered_by"),
    ],
)
async def test_an_answer_no_store_can_hold_is_refused_typed_and_changes_nothing(
    store: Store, given: dict[str, object], reason: str, says: str
) -> None:
    runner, paused = await start_release(store)
    before = await store_snapshot(store)
    fields: dict[str, object] = {"payload": {"answer": "beta"}} | given
    with pytest.raises(InvalidPayloadError, match=says) as answered:
        await runner.answer(paused.run_id, "int-call_channel", resume=True, **fields)  # type: ignore[arg-type]
    assert (answered.value.reason, answered.value.run_id) == (reason, paused.run_id)
    assert answered.value.interaction_id == "int-call_channel"
    if "payload" in given:  # the same payload in a resume
        with pytest.raises(InvalidPayloadError, match=says):
            await runner.resume(paused.run_id, [entry("int-call_channel", given["payload"])])
    assert await store_snapshot(store) == before


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"run_id": "run\x00one"}, "cannot start the run: its run id: .*NUL"),
        ({"run_id": "  "}, "cannot start the run: its run id is blank"),
        ({"thread_id": "thread-\ud800"}, "cannot start the run: its thread id"),
        ({"thread_id": "\t"}, "cannot start the run: its thread id is blank"),
        ({"expiry_policy": "retry"}, "expiry_policy is 'decline' or 'fail'"),
    ],
)
async def test_a_start_no_store_can_keep_is_refused_before_anything_is_written(
    store: Store, given: dict[str, str], says: str
) -> None:
    before = await store_snapshot(store)
    with pytest.raises(UsageError, match=says):
        await Runner(store, env={}).start(RELEASE, "Release v1.4.0", **given)  # type: ignore[arg-type]
    assert await store_snapshot(store) == before


async def test_unknown_run(store: Store) -> None:
    with pytest.raises(UnknownRunError):
        await Runner(store).resume("run-missing", [entry("int-a", {"answer": "x"})])


async def test_expired_interrupt_is_refused(store: Store) -> None:
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"})
    paused = await runner.start(RELEASE, "Release v2.0.0")
    before = await store_snapshot(store)
    later = Runner(store, clock=lambda: utc_now() + timedelta(minutes=2))
    with pytest.raises(ExpiredError):
        await later.resume(paused.run_id, [entry("int-call_channel", {"answer": "beta"})])
    assert await store_snapshot(store) == before


async def test_an_asks_expiry_is_the_runners_clock_plus_its_lifetime(store: Store) -> None:
    """A runner's clock is "now" for an ask's expiry as for deciding its answer: a run paused on
    a clock of its own (a workflow engine's) is answered on it, not expired by the wall's."""
    now = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "3600"}, clock=lambda: now)
    paused = await runner.start(RELEASE, "Release v2.1.0")
    (interrupt,) = paused.interrupts
    assert interrupt.expires_at == "2031-05-06T08:08:09Z"
    (stored,) = await store.list_interactions(paused.run_id, pending=True)
    assert stored.expires_at == now + timedelta(hours=1)
    answered = await runner.resume(paused.run_id, [entry(interrupt.id, {"answer": "beta"})])
    assert [i.expires_at for i in answered.interrupts] == ["2031-05-06T08:08:09Z"]


async def test_a_decline_of_a_question_the_sweep_expired_is_a_replay(store: Store) -> None:
    """An AG-UI client must answer every interrupt it was shown before its thread goes on: its
    decline of one that expired agrees with the sweep's, where a different answer conflicts."""
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"})
    paused = await runner.start(RELEASE, "Release v2.0.1")
    (moved,) = await runner.expire_due(now=utc_now() + timedelta(minutes=2))
    assert [i.id for i in moved.interrupts] == ["int-call_publish"]  # went on, asks again
    before = await store_snapshot(store)
    again = await runner.resume(paused.run_id, [entry("int-call_channel", status="cancelled")])
    assert (again.status, [i.id for i in again.interrupts]) == (
        RunStatus.PAUSED_WAITING_HUMAN, ["int-call_publish"]
    )  # fmt: skip
    assert await store_snapshot(store) == before
    with pytest.raises(ConflictError):
        await runner.resume(paused.run_id, [entry("int-call_channel", {"answer": "beta"})])


async def test_expiry_policy_decline_continues_the_run(store: Store) -> None:
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"})
    paused = await runner.start(RELEASE, "Release v2.0.0")
    assert await runner.expire_due() == []  # nothing is due yet
    (touched,) = await runner.expire_due(now=utc_now() + timedelta(minutes=2))
    assert touched.status is RunStatus.PAUSED_WAITING_HUMAN  # went on, now waits for approval
    run = await store.get_run(paused.run_id)
    tool = next(m for m in run.checkpoint["messages"] if m["role"] == "tool")
    assert tool["content"][0]["text"].startswith("User declined to answer.")
    (expired,) = [
        i for i in await store.list_interactions(paused.run_id) if i.id == "int-call_channel"
    ]
    assert expired.answer is not None and expired.answer.via == "expiry"


async def test_expiry_policy_fail_fails_the_run(store: Store) -> None:
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"})
    paused = await runner.start(RELEASE, "Release v2.0.0", expiry_policy="fail")
    (touched,) = await runner.expire_due(now=utc_now() + timedelta(minutes=2))
    assert touched.status is RunStatus.FAILED
    assert touched.error is not None and "int-call_channel expired" in touched.error
    with pytest.raises(ConflictError):
        await runner.resume(paused.run_id, [entry("int-call_channel", {"answer": "beta"})])


async def test_one_run_that_cannot_go_on_after_expiry_holds_up_no_other(
    store: Store, tmp_path: Path
) -> None:
    """Before, the sweep stopped at the first run it could not continue: the runs after it
    stayed open (a failure that is none of ours even left the sweep, and a host with it)."""
    moved = tmp_path / "release_copy.py"
    shutil.copy(RELEASE, moved)
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"})
    gone = await runner.start(str(moved), "Release v1.0.0")  # expires first
    later = await runner.start(RELEASE, "Release v2.0.0")
    moved.unlink()  # its recipe is gone: it cannot continue in a process that sweeps now
    sweeper = Runner(store, env={})
    touched = await sweeper.expire_due(now=utc_now() + timedelta(minutes=2))
    by_id = {result.run_id: result for result in touched}
    assert by_id[gone.run_id].status is RunStatus.PAUSED_WAITING_HUMAN
    assert by_id[gone.run_id].interrupts == []  # settled; `runs resume` continues it later
    assert [i.id for i in by_id[later.run_id].interrupts] == ["int-call_publish"]  # went on


async def test_a_question_the_sweep_cannot_read_holds_up_no_other_run(store: Store) -> None:
    """A run whose open question another tool wrote (no ``reason``: no pause record) expires
    first: its due question is settled, the run is left as it is (logged), and the runs after
    it are settled and go on. Before, the sweep stopped there, for every run, on every tick."""
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"})
    foreign = await store.create_run(new_run(id="run-foreign"))
    await store.update_run(
        foreign.id,
        expected_version=foreign.version,
        status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[
            new_interaction("int-due", expires_in=timedelta(seconds=-1)),  # expires first
            new_interaction("int-odd", descriptor={"message": "no reason"}, expires_in=DAY),
        ],
    )
    later = await runner.start(RELEASE, "Release v2.0.0")
    touched = await runner.expire_due(now=utc_now() + timedelta(minutes=2))
    assert [(t.run_id, [i.id for i in t.interrupts]) for t in touched] == [
        (later.run_id, ["int-call_publish"])  # settled, went on, asks again
    ]
    due = await store.get_interaction(foreign.id, "int-due")
    assert due.answer is not None and due.answer.status == "expired"
    odd = await store.get_interaction(foreign.id, "int-odd")
    assert odd.answer is None and odd.unreadable == "reason: Field required"
    assert (await store.get_run(foreign.id)).status is RunStatus.PAUSED_WAITING_HUMAN


async def test_a_sweep_with_resume_off_settles_and_leaves_the_run_to_its_caller(
    store: Store,
) -> None:
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"})
    paused = await runner.start(RELEASE, "Release v2.0.0")
    (settled,) = await runner.expire_due(now=utc_now() + timedelta(minutes=2), resume=False)
    assert (settled.status, settled.interrupts) == (RunStatus.PAUSED_WAITING_HUMAN, [])
    claimed = await runner.claim_answered(paused.run_id)
    assert claimed is not None
    done = await runner.proceed(claimed)
    assert [i.id for i in done.interrupts] == ["int-call_publish"]


async def test_answer_one_by_one_then_resume(store: Store) -> None:
    runner = Runner(store, env={}, host="web")
    paused = await runner.start(PARALLEL, "pizza")
    first = await runner.answer(
        paused.run_id, "int-c1", {"answer": "red"}, answered_by="ada", resume=True
    )
    assert first.created and first.run is None  # int-c3 is still open
    assert first.interaction.answer is not None and first.interaction.answer.via == "web"
    replay = await runner.answer(paused.run_id, "int-c1", {"answer": "red"})
    assert not replay.created
    with pytest.raises(ConflictError):
        await runner.answer(paused.run_id, "int-c1", {"answer": "blue"})
    last = await runner.answer(
        paused.run_id, "int-c3", {"answers": ["ham"]}, answered_by="bob", resume=True
    )
    assert last.run is not None and last.run.status is RunStatus.FINISHED


async def test_answering_the_last_question_resumes_on_what_it_read_once(store: Store) -> None:
    counted = CountingStore(store)
    runner = Runner(cast(Store, counted), env={}, host="web")
    paused = await runner.start(PARALLEL, "pizza")
    await runner.answer(paused.run_id, "int-c1", {"answer": "red"})
    counted.reset()
    last = await runner.answer(
        paused.run_id, "int-c3", {"answers": ["ham"]}, answered_by="bob", resume=True
    )
    assert last.resumed and last.run is not None and last.run.status is RunStatus.FINISHED
    # the run with its interactions, read once before the answer; the leg reads none. The
    # answer is stored with the run's claim, then the leg's end: two writes
    assert counted.calls == {"get_run_with_interactions": 1, "update_run": 2}
    assert last.interaction == await store.get_interaction(paused.run_id, "int-c3")
    assert "red" in last.run.text and "ham" in last.run.text  # both answers reached the tools


async def test_answer_without_resume_leaves_the_run_paused(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(RELEASE, "Release v3")
    await runner.answer(paused.run_id, "int-call_channel", {"answer": "beta"})
    assert (await runner.status(paused.run_id)).status is RunStatus.PAUSED_WAITING_HUMAN
    resumed = await runner.resume_answered(paused.run_id)
    assert [i.id for i in resumed.interrupts] == ["int-call_publish"]


async def test_claim_answered_hands_the_run_to_exactly_one_claimer(store: Store) -> None:
    runner = Runner(store, env={}, host="web")
    paused = await runner.start(PARALLEL, "pizza")
    await runner.answer(paused.run_id, "int-c1", {"answer": "red"})
    assert await runner.claim_answered(paused.run_id) is None, "int-c3 is still open"
    assert (await store.get_run(paused.run_id)).status is RunStatus.PAUSED_WAITING_HUMAN
    await runner.answer(paused.run_id, "int-c3", {"answers": ["ham"]})
    other = Runner(store, env={}, host="web")  # another server on the same store
    claims = []

    async def claim(r: Runner) -> None:
        claims.append(await r.claim_answered(paused.run_id))

    async with anyio.create_task_group() as tg:
        tg.start_soon(claim, runner)
        tg.start_soon(claim, other)
    (claimed,) = [c for c in claims if c is not None]
    assert claims.count(None) == 1 and claimed.run.status is RunStatus.RUNNING
    done = await runner.proceed(claimed)
    assert done.status is RunStatus.FINISHED
    assert await runner.claim_answered(paused.run_id) is None, "not paused any more"
    continued = [e for e in await store.list_events(paused.run_id) if e.type == LEG_ENDED]
    assert len(continued) == 2, "the start, and one continuation"


async def test_answer_refusals(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(RELEASE, "Release v3")
    before = await store_snapshot(store)
    with pytest.raises(InvalidPayloadError):
        await runner.answer(paused.run_id, "int-call_channel", {"answer": ""})
    for resume in (False, True):
        with pytest.raises(UnknownInteractionError):
            await runner.answer(paused.run_id, "int-zzz", {"answer": "beta"}, resume=resume)
        with pytest.raises(UnknownRunError, match="run-zzz"):  # a mistyped run id is named
            await runner.answer("run-zzz", "int-call_channel", {"answer": "beta"}, resume=resume)
    assert await store_snapshot(store) == before


async def test_cancel_closes_open_interactions(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(RELEASE, "Release v3")
    cancelled = await runner.cancel(paused.run_id)
    assert cancelled.status is RunStatus.CANCELLED and cancelled.interrupts == []
    with pytest.raises(ConflictError):
        await runner.answer(paused.run_id, "int-call_channel", {"answer": "beta"})


async def test_auto_approve_runs_straight_through(store: Store) -> None:
    runner = Runner(store, env={"PI_ASK_USER_AUTO_APPROVE": "1"})
    done = await runner.start(RELEASE, "Release v5.0.0")
    assert done.status is RunStatus.FINISHED
    assert done.text == "Published v5.0.0. Approved."


async def test_a_finished_run_says_when_its_answer_was_cut_at_the_output_limit(
    store: Store,
) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(CUT_SHORT, "Write the report")
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN and paused.warning is None

    done = await runner.resume(paused.run_id, [entry("int-w1", {"approved": True})])
    assert done.status is RunStatus.FINISHED
    assert done.text == "The report, part one of three: sales"
    assert done.warning is not None
    assert "output limit (max_tokens)" in done.warning and "raise" in done.warning
    assert (await runner.status(paused.run_id)).warning == done.warning  # read back, any process

    whole = await Runner(store, env={"PI_ASK_USER_AUTO_APPROVE": "1"}).start(RELEASE, "Release v1")
    assert whole.status is RunStatus.FINISHED and whole.warning is None
    assert (await runner.status(whole.run_id)).warning is None


async def test_a_leg_the_store_cannot_keep_fails_resumable_and_a_retry_after_the_fix_ends_it(
    store: Store,
) -> None:
    runner = Runner(store, env={})
    with pytest.raises(RunError) as caught:
        await runner.start(UNSTORABLE, "Read the menu")
    failure = caught.value
    assert failure.reason == "unstorable" and failure.run_id
    assert "not valid Unicode" in str(failure) and "fix the tool" in str(failure)
    assert failure.hint == f"retry it with: pi-recipes runs retry {failure.run_id}"
    stored = await store.get_run(failure.run_id)
    assert stored.status is RunStatus.FAILED_RESUMABLE  # not left `running` with no one on it
    assert stored.error is not None and "not valid Unicode" in stored.error

    fixed = await Runner(store, env={"FIXED": "1"}).retry(failure.run_id)
    assert fixed.status is RunStatus.FINISHED
    assert fixed.text == "Done: café menu"


async def test_a_broad_except_in_a_tool_cannot_swallow_the_pause(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(f"{RECIPES}:broad_except", "go")
    assert [i.id for i in paused.interrupts] == ["int-k1"]
    done = await runner.resume(paused.run_id, [entry("int-k1", {"answer": "yes"})])
    assert done.text == "Done: Answer: yes"


async def test_two_racing_resumes_exactly_one_continues_the_run(store: Store) -> None:
    runner, paused = await start_release(store)
    other = Runner(store, env={})  # another host, same store
    outcomes: list[object] = []

    async def resume(r: Runner, answer: str) -> None:
        try:
            outcomes.append(
                await r.resume(paused.run_id, [entry("int-call_channel", {"answer": answer})])
            )
        except ConflictError as exc:
            outcomes.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(resume, runner, "beta")
        tg.start_soon(resume, other, "stable")
    conflicts = [o for o in outcomes if isinstance(o, ConflictError)]
    results = [o for o in outcomes if isinstance(o, RunResult)]
    assert len(conflicts) == 1 and len(results) == 1
    (stored,) = [
        i for i in await store.list_interactions(paused.run_id) if i.id == "int-call_channel"
    ]
    winner = stored.answer.payload["answer"]  # type: ignore[union-attr]
    assert results[0].interrupts[0].message == f"Publish v1.4.0 to {winner}?"
    continued = [e for e in await store.list_events(paused.run_id) if e.type == "leg_ended"]
    assert len(continued) == 2, "the start, and one continuation"


async def test_a_resume_cut_short_by_a_dead_process_is_recovered(store: Store) -> None:
    runner, paused = await start_release(store)
    run = await store.get_run(paused.run_id)
    # What a resuming process leaves when it dies right after recording the answers:
    await store.update_run(
        run.id,
        expected_version=run.version,
        status=RunStatus.RUNNING,
        answers={
            "int-call_channel": InteractionAnswer(status="resolved", payload={"answer": "beta"})
        },
    )
    assert await runner.recover(older_than=3600) == []
    (marked,) = await runner.recover(older_than=0)
    assert marked.status is RunStatus.FAILED_RESUMABLE
    assert marked.error is not None and marked.error.startswith("stranded")
    resumed = await runner.retry(run.id)
    assert [i.message for i in resumed.interrupts] == ["Publish v1.4.0 to beta?"]
    with pytest.raises(UsageError):
        await runner.recover(older_than=-1)


async def test_a_leg_that_reaches_max_turns_is_resumable_and_a_retry_goes_on(store: Store) -> None:
    runner = Runner(store, env={}, max_turns=3)
    with pytest.raises(RunError, match="max_turns=3") as stopped:
        await runner.start(LOOPING, "Walk")
    assert stopped.value.reason == "max_turns" and stopped.value.run_id
    assert stopped.value.hint == f"retry it with: pi-recipes runs retry {stopped.value.run_id}"
    run = await store.get_run(stopped.value.run_id)
    assert run.status is RunStatus.FAILED_RESUMABLE and "max_turns=3" in (run.error or "")
    assert [m["role"] for m in run.checkpoint["messages"]][-2:] == ["assistant", "tool"]
    done = await runner.retry(run.id)  # three more model calls: enough to arrive
    assert (done.status, done.text) == (RunStatus.FINISHED, "Arrived after five steps.")


class _ReadTogether:
    """The store, holding each read of a run with its interactions until two have been made:
    two answers racing decide on what the other has not written yet."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.reads = 0
        self.both = anyio.Event()

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def get_run_with_interactions(self, run_id: str) -> object:
        found = await self.store.get_run_with_interactions(run_id)
        self.reads += 1
        if self.reads >= 2:
            self.both.set()
        with anyio.fail_after(5):
            await self.both.wait()
        return found


async def test_the_last_two_answers_racing_claim_the_run_exactly_once(store: Store) -> None:
    """Each answer read the run with the other question still open. Before, both were stored
    as "not the last" and no one continued the run: it stayed paused with everything answered.
    Now the second write finds the run moved, decides again, and claims it."""
    paused = await Runner(store, env={}).start(PARALLEL, "pizza")
    assert [i.id for i in paused.interrupts] == ["int-c1", "int-c3"]
    racing = cast(Store, _ReadTogether(store))
    done: list[AnswerResult] = []

    async def answer(interaction_id: str, payload: dict[str, object]) -> None:
        runner = Runner(racing, env={}, host="web")
        done.append(await runner.answer(paused.run_id, interaction_id, payload, claim=True))

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer, "int-c1", {"answer": "red"})
        tg.start_soon(answer, "int-c3", {"answers": ["ham"]})
    claims = [d.claim for d in done if d.claim is not None]
    assert len(claims) == 1 and all(d.created for d in done)
    finished = await Runner(store, env={}).proceed(claims[0])
    assert finished.status is RunStatus.FINISHED
