"""The store conformance suite: the whole :class:`~interactions.store.Store` contract as tests.

Every backend runs it unchanged. Subclass :class:`StoreConformance` in a test module and provide
an async ``store`` fixture yielding a fresh, empty store (closed afterwards)::

    class TestMyBackend(StoreConformance):
        @pytest.fixture
        async def store(self, tmp_path):
            async with MyStore(tmp_path / "state") as store:
                yield store

The tests are ``@pytest.mark.anyio``; parametrize ``anyio_backend`` (asyncio and trio) in a
``conftest.py``. For a backend that also notices other processes' writes by polling, make the
poll slow in this fixture: the wake-up test then proves the in-process doorbell works.

A backend that also keeps remembered approval decisions (:class:`~interactions.store.
DecisionStore`) runs :class:`DecisionsConformance` too (``class TestMyBackend(StoreConformance,
DecisionsConformance)``), one that keeps votes (:class:`~interactions.store.VoteStore`)
:class:`VotesConformance`, one that keeps consumers of its feed
(:class:`~interactions.store.ConsumerStore`) :class:`ConsumersConformance`, and one that
pages every run's interactions (:class:`~interactions.store.AuditStore`)
:class:`AuditConformance`.

The helpers :func:`store_snapshot`, :func:`new_run`, :func:`new_interaction`,
:func:`new_decision` and :func:`new_vote` are public too.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from interactions._errors import (
    ConflictError,
    ExpiredError,
    IllegalTransitionError,
    RunError,
    UnknownDecisionError,
    UnknownInteractionError,
    UnknownRunError,
    UsageError,
)
from interactions.store import (
    MAX_JSON_DEPTH,
    TRANSITIONS,
    AuditStore,
    ConsumerStore,
    DecisionRecord,
    DecisionStore,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewDecision,
    NewInteraction,
    NewRun,
    NewVote,
    ReminderStore,
    RunRecord,
    RunStatus,
    Store,
    StoreEventType,
    VoteRecord,
    VoteStore,
    utc_now,
)

__all__ = [
    "AuditConformance",
    "ConsumersConformance",
    "DecisionsConformance",
    "RemindersConformance",
    "StoreConformance",
    "StoreSnapshot",
    "VotesConformance",
    "answer",
    "new_decision",
    "new_interaction",
    "new_run",
    "new_vote",
    "store_snapshot",
]

_S = RunStatus
_BOUND = 20  # seconds: the bound on every wait in this suite; never reached when things work


@dataclass(frozen=True)
class StoreSnapshot:
    """Everything a store holds, for "a refused write changed nothing" comparisons."""

    runs: list[RunRecord]
    interactions: list[InteractionRecord]
    events: dict[str, list[EventRecord]]
    decisions: list[DecisionRecord] = field(default_factory=list)
    """Every remembered decision, revoked ones too (none for a store that keeps none)."""
    votes: dict[str, list[VoteRecord]] = field(default_factory=dict)
    """The votes of every interaction someone voted on, by ``run_id/interaction_id`` (none
    for a store that keeps none)."""


async def store_snapshot(store: Store) -> StoreSnapshot:
    """Read every run (up to 10 000), interaction, event, decision (up to 10 000, when the
    store is a :class:`~interactions.store.DecisionStore`) and vote (when it is a
    :class:`~interactions.store.VoteStore`) of ``store``."""
    runs = await store.list_runs(limit=10_000)
    events = {run.id: await store.list_events(run.id) for run in runs}
    decisions: list[DecisionRecord] = []
    if isinstance(store, DecisionStore):
        decisions = await store.list_decisions(include_revoked=True, limit=10_000)
    interactions = await store.list_interactions()
    votes: dict[str, list[VoteRecord]] = {}
    if isinstance(store, VoteStore):
        for record in interactions:
            cast = await store.list_votes(record.run_id, record.id)
            if cast:
                votes[f"{record.run_id}/{record.id}"] = cast
    return StoreSnapshot(runs, interactions, events, decisions, votes)


def new_run(**fields: Any) -> NewRun:
    """A :class:`NewRun` with test defaults; ``fields`` override them."""
    defaults: dict[str, Any] = {
        "thread_id": "thread-1",
        "ref": "recipes/demo.yaml",
        "agent": "writer",
        "model_name": "scripted",
    }
    return NewRun(**(defaults | fields))


def new_interaction(
    interaction_id: str, *, expires_in: timedelta = timedelta(hours=1), **fields: Any
) -> NewInteraction:
    """A :class:`NewInteraction` for tool call ``interaction_id``, expiring ``expires_in`` ahead."""
    return NewInteraction(
        id=interaction_id,
        tool_call_id=fields.pop("tool_call_id", interaction_id.removeprefix("int-")),
        expires_at=fields.pop("expires_at", utc_now() + expires_in),
        descriptor=fields.pop("descriptor", {"message": f"question {interaction_id}?"}),
        **fields,
    )


def new_decision(run: RunRecord, interaction_id: str = "int-a", **fields: Any) -> NewDecision:
    """A :class:`NewDecision` made by the approval ``interaction_id`` of ``run`` (its thread):
    allow tool ``shell`` for the run, any arguments; ``fields`` override them."""
    defaults: dict[str, Any] = {
        "run_id": run.id,
        "interaction_id": interaction_id,
        "thread_id": run.thread_id,
        "tool": "shell",
        "action": "allow",
        "scope": "run",
    }
    return NewDecision(**(defaults | fields))


def new_vote(voter: str, approved: bool | None = True, **fields: Any) -> NewVote:
    """A :class:`NewVote` by ``voter``: an approval (``True``), a revision request
    (``False``) or a decline (``None``); ``fields`` override (``feedback=`` goes in the
    payload)."""
    feedback = fields.pop("feedback", None)
    if approved is None:
        return NewVote(voter=voter, status="cancelled", **fields)
    payload: dict[str, Any] = {"approved": approved}
    if feedback is not None:
        payload["feedback"] = feedback
    return NewVote(voter=voter, status="resolved", payload=payload, **fields)


def answer(payload: Any = "yes", status: str = "resolved", **fields: Any) -> InteractionAnswer:
    """An :class:`InteractionAnswer` (``resolved`` with ``payload`` by default)."""
    return InteractionAnswer.model_validate({"status": status, "payload": payload, **fields})


async def _paused(store: Store, *ids: str) -> RunRecord:
    """A run paused on pending interactions ``ids`` (default: ``int-a`` and ``int-b``)."""
    run = await store.create_run(new_run())
    return await store.update_run(
        run.id,
        expected_version=run.version,
        status=_S.PAUSED_WAITING_HUMAN,
        new_interactions=[new_interaction(i) for i in ids or ("int-a", "int-b")],
    )


async def _in_status(store: Store, status: RunStatus) -> RunRecord:
    """A fresh run brought to ``status`` through legal moves."""
    run = await store.create_run(new_run())
    if status is not _S.RUNNING:
        run = await store.update_run(run.id, expected_version=run.version, status=status)
    return run


async def _race(attempt: Callable[[int], Awaitable[str]], racers: int = 8) -> dict[int, str]:
    """Run ``attempt(0)`` ... ``attempt(racers - 1)`` at once; each one's outcome by its number:
    what it returned, or ``"conflict"`` when it raised ``ConflictError``."""
    outcomes: dict[int, str] = {}

    async def racer(i: int) -> None:
        try:
            outcomes[i] = await attempt(i)
        except ConflictError:
            outcomes[i] = "conflict"

    with anyio.fail_after(_BOUND):
        async with anyio.create_task_group() as tg:
            for i in range(racers):
                tg.start_soon(racer, i)
    return outcomes


def _types(events: list[EventRecord]) -> list[str]:
    return [event.type for event in events]


class RunsConformance:
    """Creating, reading, listing and updating runs; versions and the status table."""

    @pytest.mark.anyio
    async def test_create_run_starts_running_at_version_one(self, store: Store) -> None:
        before = utc_now()
        run = await store.create_run(new_run(id="run-1", checkpoint={"transcript": [1, "a"]}))
        assert (run.id, run.status, run.version, run.error) == ("run-1", _S.RUNNING, 1, None)
        assert run.checkpoint == {"transcript": [1, "a"]}
        assert before <= run.created_at == run.updated_at <= utc_now()
        assert run.created_at.utcoffset() == timedelta(0)
        assert await store.get_run("run-1") == run
        [created] = await store.list_events("run-1")
        assert (created.seq, created.type, created.data) == (1, StoreEventType.RUN_CREATED, {})

    @pytest.mark.anyio
    async def test_create_run_generates_distinct_ids(self, store: Store) -> None:
        first, second = await store.create_run(new_run()), await store.create_run(new_run())
        assert first.id != second.id

    @pytest.mark.anyio
    async def test_get_unknown_run_raises_with_fields(self, store: Store) -> None:
        with pytest.raises(UnknownRunError) as caught:
            await store.get_run("run-nope")
        assert caught.value.run_id == "run-nope"

    @pytest.mark.anyio
    async def test_list_runs_newest_first_by_status_with_limit(self, store: Store) -> None:
        ids = [(await store.create_run(new_run(id=f"run-{i}"))).id for i in range(3)]
        await store.update_run("run-1", expected_version=1, status=_S.FINISHED)
        assert [r.id for r in await store.list_runs()] == ids[::-1]
        assert [r.id for r in await store.list_runs(limit=2)] == ["run-2", "run-1"]
        assert [r.id for r in await store.list_runs(_S.RUNNING)] == ["run-2", "run-0"]
        assert [r.id for r in await store.list_runs(status=_S.FINISHED)] == ["run-1"]
        for bad in (0, -1, 2.5, True, "3", 2**63):
            with pytest.raises(UsageError, match="limit must be"):
                await store.list_runs(limit=bad)  # type: ignore[arg-type]

    @pytest.mark.anyio
    async def test_list_runs_of_one_thread(self, store: Store) -> None:
        for i, thread in enumerate(["thread-a", "thread-b", "thread-a"]):
            await store.create_run(new_run(id=f"run-{i}", thread_id=thread))
        await store.update_run("run-2", expected_version=1, status=_S.FINISHED)
        assert [r.id for r in await store.list_runs(thread_id="thread-a")] == ["run-2", "run-0"]
        assert [r.id for r in await store.list_runs(thread_id="thread-a", limit=1)] == ["run-2"]
        running = await store.list_runs(_S.RUNNING, thread_id="thread-a")
        assert [r.id for r in running] == ["run-0"]
        assert await store.list_runs(thread_id="thread-none") == []

    @pytest.mark.anyio
    async def test_list_runs_by_kind_ref_and_who_answered(self, store: Store) -> None:
        await store.create_run(new_run(id="run-0", kind="graph", ref="flows/review.iter"))
        await store.create_run(new_run(id="run-1"))
        await store.create_run(new_run(id="run-2", kind="graph", ref="flows/other.iter"))
        for run_id, who in (("run-0", "ada"), ("run-1", "bob")):
            await store.update_run(
                run_id,
                expected_version=1,
                status=_S.PAUSED_WAITING_HUMAN,
                new_interactions=[new_interaction("int-a")],
            )
            await store.answer_interaction(run_id, "int-a", answer("yes", answered_by=who))
        assert [r.id for r in await store.list_runs(kind="graph")] == ["run-2", "run-0"]
        assert [r.id for r in await store.list_runs(ref="flows/review.iter")] == ["run-0"]
        assert [r.id for r in await store.list_runs(answered_by="ada")] == ["run-0"]
        both = await store.list_runs(_S.PAUSED_WAITING_HUMAN, kind="recipe", answered_by="bob")
        assert [r.id for r in both] == ["run-1"]
        assert await store.list_runs(kind="graph", answered_by="bob") == []
        assert await store.list_runs(ref="nothing\x00") == []
        paged = await store.list_runs(kind="graph", limit=1, after="run-2")
        assert [r.id for r in paged] == ["run-0"]
        if isinstance(store, VoteStore):  # a vote on an approval several must give counts
            await store.update_run(
                "run-2",
                expected_version=1,
                status=_S.PAUSED_WAITING_HUMAN,
                new_interactions=[new_interaction("int-v")],
            )
            await store.cast_vote("run-2", "int-v", new_vote("ada"), required=2)
            mine = await store.list_runs(answered_by="ada")
            assert [r.id for r in mine] == ["run-2", "run-0"]

    @pytest.mark.anyio
    async def test_update_run_bumps_version_and_replaces_checkpoint(self, store: Store) -> None:
        run = await store.create_run(new_run(checkpoint={"a": 1, "b": 2}))
        updated = await store.update_run(run.id, expected_version=1, checkpoint={"c": (3,)})
        assert (updated.version, updated.checkpoint, updated.status) == (2, {"c": [3]}, _S.RUNNING)
        assert updated.updated_at >= run.updated_at and updated.created_at == run.created_at
        kept = await store.update_run(run.id, expected_version=2)
        assert (kept.version, kept.checkpoint) == (3, {"c": [3]})
        assert await store.get_run(run.id) == kept

    @pytest.mark.anyio
    async def test_stale_version_is_a_conflict(self, store: Store) -> None:
        run = await store.create_run(new_run())
        await store.update_run(run.id, expected_version=1, checkpoint={"step": 1})
        with pytest.raises(ConflictError) as caught:
            await store.update_run(run.id, expected_version=1, checkpoint={"step": 2})
        assert (caught.value.run_id, caught.value.reason) == (run.id, "version")
        assert (await store.get_run(run.id)).checkpoint == {"step": 1}

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("old", "new"), [(old, new) for old in RunStatus for new in RunStatus], ids=str
    )
    async def test_update_run_enforces_the_transition_table(
        self, store: Store, old: RunStatus, new: RunStatus
    ) -> None:
        run = await _in_status(store, old)
        if new in TRANSITIONS[old]:
            moved = await store.update_run(run.id, expected_version=run.version, status=new)
            assert (moved.status, moved.version) == (new, run.version + 1)
            last = (await store.list_events(run.id))[-1]
            assert (last.type, last.data["from"], last.data["to"]) == (
                StoreEventType.RUN_STATUS_CHANGED,
                old.value,
                new.value,
            )
            return
        before = await store_snapshot(store)
        with pytest.raises(IllegalTransitionError) as caught:
            await store.update_run(run.id, expected_version=run.version, status=new)
        assert caught.value.run_id == run.id
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    @pytest.mark.parametrize("terminal", [_S.FINISHED, _S.FAILED, _S.CANCELLED], ids=str)
    async def test_terminal_run_cannot_be_updated(self, store: Store, terminal: RunStatus) -> None:
        run = await _in_status(store, terminal)
        with pytest.raises(IllegalTransitionError):
            await store.update_run(run.id, expected_version=run.version, checkpoint={"x": 1})
        assert await store.get_run(run.id) == run
        # The audit trail stays open.
        [event] = await store.append_events(run.id, [("note", {"after": "end"})])
        assert event.type == "note"

    @pytest.mark.anyio
    async def test_error_is_set_and_cleared_with_status_changes(self, store: Store) -> None:
        run = await store.create_run(new_run())
        failed = await store.update_run(
            run.id, expected_version=1, status=_S.FAILED_RESUMABLE, error="model 503"
        )
        assert (failed.status, failed.error) == (_S.FAILED_RESUMABLE, "model 503")
        assert (await store.list_events(run.id))[-1].data["error"] == "model 503"
        again = await store.update_run(run.id, expected_version=2, status=_S.RUNNING)
        assert (again.status, again.error) == (_S.RUNNING, None)
        with pytest.raises(UsageError):
            await store.update_run(run.id, expected_version=3, error="no status given")

    @pytest.mark.anyio
    async def test_racing_updates_exactly_one_wins(self, store: Store) -> None:
        run = await store.create_run(new_run())

        async def update(i: int) -> str:
            await store.update_run(run.id, expected_version=1, checkpoint={"by": i})
            return "won"

        outcomes = await _race(update)
        winners = [i for i, outcome in outcomes.items() if outcome == "won"]
        assert len(winners) == 1 and len(outcomes) == 8
        stored = await store.get_run(run.id)
        assert (stored.version, stored.checkpoint) == (2, {"by": winners[0]})

    @pytest.mark.anyio
    async def test_returned_records_are_copies(self, store: Store) -> None:
        run = await store.create_run(new_run(checkpoint={"items": [1]}))
        run.checkpoint["items"].append(2)
        assert (await store.get_run(run.id)).checkpoint == {"items": [1]}


class InteractionsConformance:
    """Inserting interactions and answering them: first wins, replays, conflicts, expiry."""

    @pytest.mark.anyio
    async def test_pause_inserts_interactions_with_events(self, store: Store) -> None:
        run = await store.create_run(new_run())
        expires = utc_now() + timedelta(minutes=5)
        ask = new_interaction("int-a", kind="async", node_id="n1", expires_at=expires)
        paused = await store.update_run(
            run.id,
            expected_version=1,
            status=_S.PAUSED_WAITING_HUMAN,
            new_interactions=[ask, new_interaction("int-b")],
            events=[("tool_call", {"name": "ask_user"})],
        )
        record = await store.get_interaction(run.id, "int-a")
        assert (record.run_id, record.tool_call_id, record.kind, record.node_id) == (
            run.id,
            "a",
            "async",
            "n1",
        )
        assert record.pending and record.answer is None and record.answered_at is None
        assert record.expires_at == expires and record.requested_at == paused.updated_at
        assert record.descriptor == {"message": "question int-a?"}
        assert [i.id for i in await store.list_interactions(run.id)] == ["int-a", "int-b"]
        assert _types(await store.list_events(run.id, after_seq=1)) == [
            "interaction_requested",
            "interaction_requested",
            "tool_call",
            "run_status_changed",
        ]

    @pytest.mark.anyio
    async def test_get_unknown_interaction_raises_with_fields(self, store: Store) -> None:
        run = await _paused(store)
        for run_id in (run.id, "run-nope"):
            with pytest.raises(UnknownInteractionError) as caught:
                await store.get_interaction(run_id, "int-zzz")
            assert (caught.value.run_id, caught.value.interaction_id) == (run_id, "int-zzz")

    @pytest.mark.anyio
    async def test_list_interactions_filters_by_run_and_pending(self, store: Store) -> None:
        one, two = await _paused(store), await _paused(store, "int-c")
        await store.answer_interaction(one.id, "int-b", answer())
        everything = await store.list_interactions()
        assert [(i.run_id, i.id) for i in everything] == [
            (one.id, "int-a"),
            (one.id, "int-b"),
            (two.id, "int-c"),
        ]
        assert [i.id for i in await store.list_interactions(pending=True)] == ["int-a", "int-c"]
        assert [i.id for i in await store.list_interactions(one.id, pending=False)] == ["int-b"]
        with pytest.raises(UnknownRunError):
            await store.list_interactions("run-nope")

    @pytest.mark.anyio
    async def test_first_answer_wins_and_is_audited(self, store: Store) -> None:
        run = await _paused(store)
        given = answer({"answer": "blue"}, answered_by="ana@example.com", via="slack")
        record, stored = await store.answer_interaction(run.id, "int-a", given)
        assert stored and not record.pending and record.answer == given
        assert record.answered_at is not None
        assert await store.get_interaction(run.id, "int-a") == record
        assert (await store.get_run(run.id)).version == run.version  # answers have their own CAS
        last = (await store.list_events(run.id))[-1]
        assert last.type == StoreEventType.INTERACTION_ANSWERED
        assert last.data == {  # the answer itself: the trail reads without the row
            "interaction_id": "int-a",
            "status": "resolved",
            "payload": {"answer": "blue"},
            "answered_by": "ana@example.com",
            "via": "slack",
        }

    @pytest.mark.anyio
    async def test_every_answer_event_carries_the_answer(self, store: Store) -> None:
        run = await _paused(store, "int-a", "int-b", "int-c")
        await store.answer_interaction(run.id, "int-a", answer(None, status="cancelled"))
        await store.update_run(
            run.id,
            expected_version=run.version,
            answers={"int-b": answer({"approved": False, "feedback": "no"}, answered_by="bo")},
            close_open=answer(None, status="expired"),
        )
        answered = [e.data for e in await store.list_events(run.id)
                    if e.type == StoreEventType.INTERACTION_ANSWERED]  # fmt: skip
        assert answered == [
            {"interaction_id": "int-a", "status": "cancelled", "payload": None},
            {"interaction_id": "int-b", "status": "resolved",
             "payload": {"approved": False, "feedback": "no"}, "answered_by": "bo"},
            {"interaction_id": "int-c", "status": "expired", "payload": None},
        ]  # fmt: skip

    @pytest.mark.anyio
    async def test_identical_replay_returns_the_stored_answer(self, store: Store) -> None:
        run = await _paused(store)
        first, _ = await store.answer_interaction(run.id, "int-a", answer(via="web"))
        before = await store_snapshot(store)
        replay, stored = await store.answer_interaction(run.id, "int-a", answer(via="cli"))
        assert not stored and replay == first
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "second",
        [answer("no"), answer(status="cancelled"), answer(None), answer(True), answer(["yes"])],
        ids=["other-payload", "cancelled", "null", "true", "list"],
    )
    async def test_different_second_answer_is_a_conflict(
        self, store: Store, second: InteractionAnswer
    ) -> None:
        run = await _paused(store)
        await store.answer_interaction(run.id, "int-a", answer("yes"))
        await store.answer_interaction(run.id, "int-b", answer(1))
        before = await store_snapshot(store)
        for iid in ("int-a", "int-b"):
            with pytest.raises(ConflictError) as caught:
                await store.answer_interaction(run.id, iid, second)
            assert (caught.value.run_id, caught.value.interaction_id) == (run.id, iid)
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    async def test_answer_after_expiry_is_refused(self, store: Store) -> None:
        run = await _paused(store)
        record = await store.get_interaction(run.id, "int-a")
        late = record.expires_at + timedelta(microseconds=1)
        before = await store_snapshot(store)
        with pytest.raises(ExpiredError) as caught:
            await store.answer_interaction(run.id, "int-a", answer(), now=late)
        assert (caught.value.interaction_id, caught.value.reason) == ("int-a", "expired")
        assert await store_snapshot(store) == before
        # Up to and including expires_at it works (the expiry sweep records its declines at
        # that instant), and a replay after expiry is still a safe no-op.
        await store.answer_interaction(run.id, "int-a", answer(), now=record.expires_at)
        assert not (await store.answer_interaction(run.id, "int-a", answer(), now=late))[1]

    @pytest.mark.anyio
    async def test_answer_unknown_interaction_is_refused(self, store: Store) -> None:
        run = await _paused(store)
        for run_id, iid in ((run.id, "int-zzz"), ("run-nope", "int-a")):
            with pytest.raises(UnknownInteractionError):
                await store.answer_interaction(run_id, iid, answer())

    @pytest.mark.anyio
    async def test_resume_answers_and_moves_in_one_update(self, store: Store) -> None:
        run = await _paused(store)
        await store.answer_interaction(run.id, "int-a", answer("early"))
        resumed = await store.update_run(
            run.id,
            expected_version=run.version,
            status=_S.RUNNING,
            checkpoint={"resumed": True},
            answers={"int-a": answer("early"), "int-b": answer(status="cancelled", payload=None)},
            events=[("resumed", {"entries": 2})],
        )
        assert (resumed.status, resumed.version) == (_S.RUNNING, run.version + 1)
        assert await store.list_interactions(run.id, pending=True) == []
        b = await store.get_interaction(run.id, "int-b")
        assert b.answered_at == resumed.updated_at  # an answer is stamped with its write
        assert _types(await store.list_events(run.id))[-3:] == [
            "interaction_answered",
            "resumed",
            "run_status_changed",
        ]

    @pytest.mark.anyio
    async def test_update_can_answer_what_it_inserts(self, store: Store) -> None:
        run = await store.create_run(new_run())
        await store.update_run(
            run.id,
            expected_version=1,
            new_interactions=[new_interaction("int-x", kind="async")],
            answers={"int-x": answer(42)},
        )
        record = await store.get_interaction(run.id, "int-x")
        assert record.answer == answer(42)
        assert _types(await store.list_events(run.id))[1:] == [
            "interaction_requested",
            "interaction_answered",
        ]

    @pytest.mark.anyio
    async def test_racing_answers_exactly_one_wins(self, store: Store) -> None:
        run = await _paused(store)

        async def answer_as(i: int) -> str:
            _, stored = await store.answer_interaction(run.id, "int-a", answer({"by": i}))
            return "won" if stored else "replay"

        outcomes = await _race(answer_as)
        winners = [i for i, outcome in outcomes.items() if outcome == "won"]
        assert len(winners) == 1
        assert sorted(outcomes.values()) == ["conflict"] * 7 + ["won"]
        stored = await store.get_interaction(run.id, "int-a")
        assert stored.answer == answer({"by": winners[0]})
        answered = [e for e in await store.list_events(run.id) if e.type == "interaction_answered"]
        assert [e.data["interaction_id"] for e in answered] == ["int-a"]  # one audit line


class RunWithInteractionsConformance:
    """A run with all its interactions, read at one moment."""

    @pytest.mark.anyio
    async def test_a_paused_run_comes_with_its_answered_and_open_interactions(
        self, store: Store
    ) -> None:
        await _paused(store, "int-x")  # another run's interactions are not this run's
        run = await store.create_run(new_run())
        early = utc_now() - timedelta(minutes=1)
        asked = [new_interaction("int-b"), new_interaction("int-a", requested_at=early)]
        paused = await store.update_run(
            run.id,
            expected_version=run.version,
            status=_S.PAUSED_WAITING_HUMAN,
            checkpoint={"step": 1},
            new_interactions=[*asked, new_interaction("int-c")],
        )
        answered, _ = await store.answer_interaction(run.id, "int-b", answer("yes"))
        got, interactions = await store.get_run_with_interactions(run.id)
        assert got == paused == await store.get_run(run.id)  # an answer does not move the run
        assert [r.id for r in interactions] == ["int-a", "int-b", "int-c"]  # as requested
        assert [r.pending for r in interactions] == [True, False, True]
        assert interactions[1] == answered
        listed = await store.list_interactions(run.id)
        assert interactions == listed
        got.checkpoint["step"] = 2  # what is handed out are copies
        interactions[0].descriptor["message"] = "changed"
        assert await store.get_run_with_interactions(run.id) == (paused, listed)

    @pytest.mark.anyio
    async def test_a_run_without_interactions_and_an_unknown_run(self, store: Store) -> None:
        run = await store.create_run(new_run())
        assert await store.get_run_with_interactions(run.id) == (run, [])
        with pytest.raises(UnknownRunError) as caught:
            await store.get_run_with_interactions("run-nope")
        assert (caught.value.run_id, caught.value.reason) == ("run-nope", "unknown_run")

    @pytest.mark.anyio
    async def test_the_run_is_never_newer_nor_older_than_its_interactions(
        self, store: Store
    ) -> None:
        """Each write inserts one interaction and counts it in the checkpoint, in one update;
        reads run between the writes. A read of the run, then of its interactions, with a write
        between them, finds one more interaction than the run counts."""
        writes = 30
        run = await store.create_run(new_run(checkpoint={"asked": 0}))
        seen: list[tuple[int, int]] = []

        async def write() -> None:
            version = run.version
            for n in range(1, writes + 1):
                version = (
                    await store.update_run(
                        run.id,
                        expected_version=version,
                        checkpoint={"asked": n},
                        new_interactions=[new_interaction(f"int-{n}")],
                    )
                ).version
                await anyio.lowlevel.checkpoint()  # let a read in

        async def read() -> None:
            while not seen or seen[-1][0] < writes:
                got, interactions = await store.get_run_with_interactions(run.id)
                seen.append((got.checkpoint["asked"], len(interactions)))
                await anyio.lowlevel.checkpoint()  # let a write in

        with anyio.fail_after(_BOUND):
            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                tg.start_soon(read)
        assert any(0 < asked < writes for asked, _ in seen)  # reads fell between writes
        assert [count for _, count in seen] == [asked for asked, _ in seen]


async def _refusal_cases(store: Store, run: RunRecord) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Writes to refuse, against a run paused on int-a (pending) and int-b (answered)."""
    v, rid = run.version, run.id
    late = utc_now() + timedelta(days=365)

    def update(**kw: Any) -> Callable[[], Awaitable[Any]]:
        args: dict[str, Any] = {"expected_version": v, "events": [("note", {})]} | kw
        return lambda: store.update_run(rid, **args)

    resume = {"status": _S.RUNNING, "checkpoint": {"new": 1}}
    return {
        "stale-version": update(expected_version=v - 1, answers={"int-a": answer()}, **resume),
        "illegal-transition": update(status=_S.FINISHED, answers={"int-a": answer()}),
        "duplicate-interaction": update(
            new_interactions=[new_interaction("int-c"), new_interaction("int-b")]
        ),
        "duplicate-in-one-call": update(new_interactions=[new_interaction("int-c")] * 2),
        "unknown-answer": update(answers={"int-a": answer(), "int-zzz": answer()}, **resume),
        "conflicting-answer": update(answers={"int-a": answer(), "int-b": answer("no")}, **resume),
        "expired-answer": update(answers={"int-a": answer()}, now=late, **resume),
        "naive-now": update(answers={"int-a": answer()}, now=late.replace(tzinfo=None), **resume),
        "error-without-status": update(error="boom", answers={"int-a": answer()}),
        "non-json-checkpoint": update(checkpoint={"x": {1, 2}}, answers={"int-a": answer()}),
        "bad-event": update(events=[("", {})], answers={"int-a": answer()}),
        "unknown-run": lambda: store.update_run("run-nope", expected_version=1),
        "answer-conflict": lambda: store.answer_interaction(rid, "int-b", answer("no")),
        "answer-expired": lambda: store.answer_interaction(rid, "int-a", answer(), now=late),
        "answer-unknown": lambda: store.answer_interaction(rid, "int-zzz", answer()),
        "append-unknown-run": lambda: store.append_events("run-nope", [("note", {})]),
        "append-bad-data": lambda: store.append_events(rid, [("ok", {}), ("bad", {"x": {1}})]),
        "duplicate-run": lambda: store.create_run(new_run(id=rid)),
    }


REFUSALS = {
    "stale-version": ConflictError,
    "illegal-transition": IllegalTransitionError,
    "duplicate-interaction": ConflictError,
    "duplicate-in-one-call": ConflictError,
    "unknown-answer": UnknownInteractionError,
    "conflicting-answer": ConflictError,
    "expired-answer": ExpiredError,
    "naive-now": UsageError,
    "error-without-status": UsageError,
    "non-json-checkpoint": UsageError,
    "bad-event": UsageError,
    "unknown-run": UnknownRunError,
    "answer-conflict": ConflictError,
    "answer-expired": ExpiredError,
    "answer-unknown": UnknownInteractionError,
    "append-unknown-run": UnknownRunError,
    "append-bad-data": UsageError,
    "duplicate-run": ConflictError,
}
"""Each refused write of :func:`_refusal_cases` and the error it must raise."""


class RefusalsConformance:
    """Every refused write raises its typed error and changes nothing."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("case", sorted(REFUSALS))
    async def test_refused_write_changes_nothing(self, store: Store, case: str) -> None:
        run = await _paused(store)
        run_id = run.id
        await store.answer_interaction(run_id, "int-b", answer("yes"))
        write = (await _refusal_cases(store, run))[case]
        before = await store_snapshot(store)
        with pytest.raises(REFUSALS[case]) as caught:
            await write()
        if isinstance(caught.value, RunError):
            assert caught.value.run_id in (run_id, "run-nope")
        assert await store_snapshot(store) == before


class EventsConformance:
    """The audit trail: seq from 1 without gaps, in order, filtered by ``after_seq``."""

    @pytest.mark.anyio
    async def test_append_and_list_events(self, store: Store) -> None:
        run = await store.create_run(new_run())
        appended = await store.append_events(run.id, [("a", {"n": 1}), ("b", {"t": (1, 2)})])
        assert [(e.run_id, e.seq, e.type, e.data) for e in appended] == [
            (run.id, 2, "a", {"n": 1}),
            (run.id, 3, "b", {"t": [1, 2]}),
        ]
        assert await store.append_events(run.id, []) == []
        await store.update_run(run.id, expected_version=1, events=[("c", {})])
        events = await store.list_events(run.id)
        assert [e.seq for e in events] == [1, 2, 3, 4] and events[1:3] == appended
        assert _types(await store.list_events(run.id, after_seq=2)) == ["b", "c"]
        assert await store.list_events(run.id, after_seq=4) == []
        assert await store.list_events(run.id, after_seq=2**64) == [], "past every seq: none"
        assert await store.list_events(run.id, after_seq=-(2**64)) == events
        assert all(e.at.utcoffset() == timedelta(0) for e in events)
        with pytest.raises(UnknownRunError):
            await store.list_events("run-nope")

    @pytest.mark.anyio
    async def test_events_of_runs_are_separate(self, store: Store) -> None:
        one, two = await store.create_run(new_run()), await store.create_run(new_run())
        await store.append_events(one.id, [("x", {})])
        [event] = await store.append_events(two.id, [("y", {})])
        assert (event.run_id, event.seq) == (two.id, 2)
        assert _types(await store.list_events(one.id)) == ["run_created", "x"]


class WaitConformance:
    """``wait_for_events``: level-triggered, woken at once in-process, always bounded."""

    @pytest.mark.anyio
    async def test_wait_returns_at_once_when_events_exist(self, store: Store) -> None:
        run = await store.create_run(new_run())
        with anyio.fail_after(_BOUND):
            events = await store.wait_for_events(run.id, after_seq=0, timeout=3600)
        assert _types(events) == ["run_created"]

    @pytest.mark.anyio
    async def test_an_answer_wakes_waiters_at_once(self, store: Store) -> None:
        run = await _paused(store)
        cursor = (await store.list_events(run.id))[-1].seq
        woken: list[list[EventRecord]] = []

        async def wait() -> None:
            woken.append(await store.wait_for_events(run.id, after_seq=cursor, timeout=3600))

        with anyio.fail_after(_BOUND):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(wait)
                await anyio.wait_all_tasks_blocked()
                await store.answer_interaction(run.id, "int-a", answer(via="web"))
        assert [_types(events) for events in woken] == [["interaction_answered"]] * 3

    @pytest.mark.anyio
    async def test_wait_times_out_empty(self, store: Store) -> None:
        run = await store.create_run(new_run())
        with anyio.fail_after(_BOUND):
            assert await store.wait_for_events(run.id, after_seq=1, timeout=0.05) == []
            assert await store.wait_for_events(run.id, after_seq=1, timeout=0) == []

    @pytest.mark.anyio
    @pytest.mark.parametrize("timeout", [float("inf"), float("nan"), -1.0])
    async def test_wait_needs_a_finite_bound(self, store: Store, timeout: float) -> None:
        run = await store.create_run(new_run())
        with pytest.raises(UsageError):
            await store.wait_for_events(run.id, after_seq=0, timeout=timeout)

    @pytest.mark.anyio
    async def test_wait_on_unknown_run_raises(self, store: Store) -> None:
        with pytest.raises(UnknownRunError):
            await store.wait_for_events("run-nope", after_seq=0, timeout=1)


class FeedConformance:
    """``watch``: every event of the store in commit order, resumable from a cursor."""

    @pytest.mark.anyio
    async def test_cursors_order_every_event_of_the_store(self, store: Store) -> None:
        assert await store.latest_cursor() == 0
        one, two = await store.create_run(new_run()), await store.create_run(new_run())
        await store.append_events(one.id, [("x", {})])
        await store.append_events(two.id, [("y", {}), ("z", {})])
        events = [*await store.list_events(one.id), *await store.list_events(two.id)]
        cursors = sorted(e.cursor for e in events)
        assert cursors == list(range(cursors[0], cursors[0] + 5))
        assert await store.latest_cursor() == cursors[-1]
        by_cursor = sorted(events, key=lambda e: e.cursor)
        assert [(e.run_id, e.type) for e in by_cursor] == [
            (one.id, "run_created"),
            (two.id, "run_created"),
            (one.id, "x"),
            (two.id, "y"),
            (two.id, "z"),
        ]

    @pytest.mark.anyio
    async def test_watch_yields_the_past_then_new_writes_at_once(self, store: Store) -> None:
        first = await store.create_run(new_run())
        seen: list[EventRecord] = []
        caught_up = anyio.Event()

        async def follow() -> None:
            async with store.watch(after=0) as feed:
                async for event in feed:
                    seen.append(event)
                    if len(seen) == 1:
                        caught_up.set()
                    if len(seen) == 3:
                        return

        with anyio.fail_after(_BOUND):
            async with anyio.create_task_group() as tg:
                tg.start_soon(follow)
                await caught_up.wait()
                second = await _paused(store, "int-q")
        assert [(e.run_id, e.type) for e in seen] == [
            (first.id, "run_created"),
            (second.id, "run_created"),
            (second.id, "interaction_requested"),
        ]

    @pytest.mark.anyio
    async def test_watch_resumes_after_a_cursor(self, store: Store) -> None:
        run = await store.create_run(new_run())
        await store.append_events(run.id, [("a", {}), ("b", {})])
        middle = (await store.list_events(run.id))[1].cursor
        with anyio.fail_after(_BOUND):
            async with store.watch(after=middle) as feed:
                async for event in feed:
                    assert (event.type, event.seq) == ("b", 3)
                    break


class PagingConformance:
    """``list_runs`` pages through any number of runs, newest or oldest first."""

    @pytest.mark.anyio
    async def test_list_runs_pages_in_both_orders(self, store: Store) -> None:
        made = [await store.create_run(new_run(id=f"run-{i:02d}")) for i in range(7)]
        await store.update_run("run-03", expected_version=1, status=_S.FINISHED)
        ids = [r.id for r in made]
        oldest: list[str] = []
        after = None
        while page := await store.list_runs(limit=3, oldest_first=True, after=after):
            oldest += [r.id for r in page]
            after = page[-1].id
        assert oldest == ids
        newest = [r.id for r in await store.list_runs(limit=10)]
        assert newest == ids[::-1]
        after_four = await store.list_runs(limit=10, after="run-04")
        assert [r.id for r in after_four] == ["run-03", "run-02", "run-01", "run-00"]
        running = await store.list_runs(_S.RUNNING, 10, oldest_first=True, after="run-01")
        assert [r.id for r in running] == ["run-02", "run-04", "run-05", "run-06"]


class CloseOpenConformance:
    """``close_open`` answers what is still open when the write happens, inside it."""

    @pytest.mark.anyio
    async def test_close_open_keeps_an_answer_that_got_in_first(self, store: Store) -> None:
        run = await _paused(store, "int-a", "int-b")
        await store.answer_interaction(run.id, "int-a", answer("human", answered_by="ada"))
        closed = answer(None, status="cancelled", answered_by="system")
        done = await store.update_run(
            run.id, expected_version=run.version, status=_S.CANCELLED, close_open=closed
        )
        assert done.status is _S.CANCELLED
        by_id = {r.id: r.answer for r in await store.list_interactions(run.id)}
        assert by_id["int-a"] is not None and by_id["int-a"].answered_by == "ada"
        assert by_id["int-b"] is not None and by_id["int-b"].status == "cancelled"

    @pytest.mark.anyio
    async def test_close_open_audits_each_closed_one_in_request_order(self, store: Store) -> None:
        run = await _paused(store, "int-c", "int-a", "int-d", "int-b")
        await store.answer_interaction(run.id, "int-a", answer("human"))
        seen = len(await store.list_events(run.id))
        closed = answer(None, status="cancelled", answered_by="system")
        await store.update_run(
            run.id,
            expected_version=run.version,
            status=_S.CANCELLED,
            answers={"int-d": answer("late")},
            close_open=closed,
        )
        written = [
            (e.type, e.data.get("interaction_id"), e.data.get("status"))
            for e in (await store.list_events(run.id))[seen:]
        ]
        assert written == [  # the pending ones in request order, the one answered explicitly too
            ("interaction_answered", "int-c", "cancelled"),
            ("interaction_answered", "int-d", "resolved"),
            ("interaction_answered", "int-b", "cancelled"),
            ("run_status_changed", None, None),
        ]


class KindsConformance:
    """Runs of every kind: a driver's kind, a parent run, a node; expiry recorded as such."""

    @pytest.mark.anyio
    async def test_runs_carry_kind_parent_and_node(self, store: Store) -> None:
        graph = await store.create_run(new_run(kind="graph", agent="", model_name=""))
        node = await store.create_run(
            new_run(parent_run_id=graph.id, node_id="draft", ref="examples/release.py")
        )
        assert (graph.kind, graph.parent_run_id, graph.node_id) == ("graph", None, None)
        again = await store.get_run(node.id)
        assert (again.kind, again.parent_run_id, again.node_id) == ("recipe", graph.id, "draft")
        assert again == node

    @pytest.mark.anyio
    async def test_an_expired_answer_is_stored_as_expired(self, store: Store) -> None:
        run = await _paused(store, "int-x")
        record, created = await store.answer_interaction(
            run.id, "int-x", answer(None, status="expired", answered_by="system", via="expiry")
        )
        assert created and record.answer is not None and record.answer.status == "expired"
        stored = await store.get_interaction(run.id, "int-x")
        assert stored.answer == record.answer


def _decisions(store: Store) -> DecisionStore:
    """``store`` as the decision store it must be to run :class:`DecisionsConformance`."""
    assert isinstance(store, DecisionStore), f"{type(store).__name__} keeps no decisions"
    return store


def _expected_id(run_id: str, interaction_id: str) -> str:
    digest = hashlib.sha256(f"{run_id}\0{interaction_id}".encode()).hexdigest()
    return f"dec-{digest[:12]}"


_T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _bad_decisions() -> dict[str, dict[str, Any]]:
    """Fields of decisions no store keeps, each over :func:`new_decision`'s (built with
    ``model_construct``, as a caller skipping validation would: the store checks again)."""
    return {
        "blank-tool": {"tool": "  "},
        "empty-tool": {"tool": ""},
        "tool-with-nul": {"tool": "sh\x00ell"},
        "interaction-id-with-nul": {"interaction_id": "int-\x00"},
        "thread-id-with-nul": {"thread_id": "thread-\x00"},
        "reason-with-nul": {"reason": "because\x00"},
        "decided-by-lone-surrogate": {"decided_by": "ada\udc80"},
        "args-not-json": {"args": {"paths": {1, 2}}},
        "args-not-an-object": {"args": ["a"]},
        "args-too-deep": {"args": {"deep": _nested(MAX_JSON_DEPTH)}},
        "args-too-large": {"args": {"blob": "x" * (1 << 20)}},
        "unknown-action": {"action": "maybe"},
        "unknown-scope": {"scope": "forever"},
    }


def _nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


class DecisionsConformance:
    """Remembered approval decisions (:class:`~interactions.store.DecisionStore`): stored once
    per approval with their event, scoped to a run or a thread, listed, revoked."""

    @pytest.mark.anyio
    async def test_remember_stores_the_decision_with_its_event(self, store: Store) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run(thread_id="thread-d"))
        new = new_decision(
            run,
            "int-7",
            tool="write_file",
            action="deny",
            scope="thread",
            args={"path": "a.txt", "lines": (1, 2)},
            decided_by="ada@example.com",
            reason="never there",
        )
        record, stored = await decisions.remember_decision(new, now=_T0)
        assert stored
        assert record.id == _expected_id(run.id, "int-7")
        assert (record.run_id, record.interaction_id, record.thread_id) == (
            run.id,
            "int-7",
            "thread-d",
        )
        assert (record.tool, record.action, record.scope) == ("write_file", "deny", "thread")
        assert record.args == {"path": "a.txt", "lines": [1, 2]}
        assert (record.decided_by, record.reason) == ("ada@example.com", "never there")
        assert (record.created_at, record.revoked_at, record.revoked_by) == (_T0, None, None)
        assert record.active
        assert await decisions.list_decisions() == [record]
        last = (await store.list_events(run.id))[-1]
        assert (last.type, last.at) == (StoreEventType.DECISION_REMEMBERED, _T0)
        assert last.data == {
            "id": record.id,
            "tool": "write_file",
            "action": "deny",
            "scope": "thread",
            "args": {"path": "a.txt", "lines": [1, 2]},
            "decided_by": "ada@example.com",
            "interaction_id": "int-7",
            "reason": "never there",
        }

    @pytest.mark.anyio
    async def test_a_second_decision_for_the_same_approval_writes_nothing(
        self, store: Store
    ) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run())
        first, _ = await decisions.remember_decision(new_decision(run, "int-a"))
        before = await store_snapshot(store)
        other = new_decision(run, "int-a", tool="rm", action="deny", scope="thread", args={})
        again, stored = await decisions.remember_decision(other)
        assert (again, stored) == (first, False)  # the first stands
        assert await store_snapshot(store) == before
        # Another approval of the same run is another decision.
        second, stored = await decisions.remember_decision(new_decision(run, "int-b"))
        assert stored and second.id != first.id
        assert second.id == _expected_id(run.id, "int-b")

    @pytest.mark.anyio
    async def test_racing_writers_store_one_row_and_one_event(self, store: Store) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run())
        records: dict[int, DecisionRecord] = {}

        async def remember(i: int) -> str:
            new = new_decision(run, "int-race", tool=f"tool-{i}")
            records[i], stored = await decisions.remember_decision(new)
            return "stored" if stored else "replayed"

        outcomes = await _race(remember)
        winners = [i for i, outcome in outcomes.items() if outcome == "stored"]
        assert len(winners) == 1 and sorted(outcomes.values()).count("replayed") == 7
        winner = records[winners[0]]
        assert all(record == winner for record in records.values())
        assert winner.tool == f"tool-{winners[0]}"
        assert await decisions.list_decisions(include_revoked=True) == [winner]
        remembered = [e for e in await store.list_events(run.id) if e.type == "decision_remembered"]
        assert [e.data["tool"] for e in remembered] == [winner.tool]

    @pytest.mark.anyio
    async def test_decisions_for_covers_the_run_and_its_thread(self, store: Store) -> None:
        decisions = _decisions(store)
        one = await store.create_run(new_run(id="run-one", thread_id="thread-a"))
        two = await store.create_run(new_run(id="run-two", thread_id="thread-a"))
        far = await store.create_run(new_run(id="run-far", thread_id="thread-b"))

        async def remember(run: RunRecord, iid: str, scope: str, minutes: int) -> DecisionRecord:
            at = _T0 + timedelta(minutes=minutes)
            record, _ = await decisions.remember_decision(
                new_decision(run, iid, scope=scope), now=at
            )
            return record

        # Written out of time order: decisions_for answers oldest first, not as written.
        thread_a = await remember(two, "int-1", "thread", 5)
        run_one = await remember(one, "int-2", "run", 1)
        run_two = await remember(two, "int-3", "run", 3)
        thread_b = await remember(far, "int-4", "thread", 2)
        revoked = await remember(one, "int-5", "thread", 0)
        await decisions.revoke_decision(revoked.id)
        assert await decisions.decisions_for("run-one", "thread-a") == [run_one, thread_a]
        assert await decisions.decisions_for("run-two", "thread-a") == [run_two, thread_a]
        assert await decisions.decisions_for("run-far", "thread-b") == [thread_b]
        # A new run of thread-a sees the thread's decisions, not another run's.
        assert await decisions.decisions_for("run-new", "thread-a") == [thread_a]
        # A run's own decisions go with its id, whatever thread the caller names.
        assert await decisions.decisions_for("run-one", "thread-z") == [run_one]
        assert await decisions.decisions_for("run-none", "thread-none") == []

    @pytest.mark.anyio
    async def test_covers_matches_tool_scope_and_exact_arguments(self, store: Store) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run(thread_id="thread-a"))
        exact, _ = await decisions.remember_decision(
            new_decision(run, "int-1", tool="edit", args={"path": "a", "n": 1})
        )
        anything, _ = await decisions.remember_decision(
            new_decision(run, "int-2", tool="edit", scope="thread")
        )
        rid, tid = run.id, "thread-a"
        assert exact.covers(rid, tid, "edit", {"n": 1, "path": "a"})  # key order does not matter
        assert not exact.covers(rid, tid, "edit", {"path": "a", "n": True})  # true is not 1
        assert not exact.covers(rid, tid, "edit", {"path": "a"})
        assert not exact.covers(rid, tid, "edit", {"path": "a", "n": 1, "more": None})
        assert not exact.covers(rid, tid, "read", {"path": "a", "n": 1})  # another tool
        assert not exact.covers("run-other", tid, "edit", {"path": "a", "n": 1})  # scope run
        assert anything.covers("run-other", tid, "edit", {"any": ["thing"]})  # scope thread
        assert anything.covers(rid, tid, "edit", {})
        assert not anything.covers(rid, "thread-other", "edit", {})
        for record in await decisions.decisions_for(rid, tid):  # read back: the same answers
            assert record.covers(rid, tid, "edit", {"n": 1, "path": "a"})
            assert record.covers(rid, tid, "edit", {"n": 2}) == (record.args is None)
        revoked, _ = await decisions.revoke_decision(anything.id)
        assert not revoked.active and not revoked.covers(rid, tid, "edit", {})

    @pytest.mark.anyio
    async def test_list_decisions_filters_orders_and_limits(self, store: Store) -> None:
        decisions = _decisions(store)
        one = await store.create_run(new_run(id="run-one", thread_id="thread-a"))
        two = await store.create_run(new_run(id="run-two", thread_id="thread-b"))
        made = []
        for i, run in enumerate([one, two, one, two, one]):
            at = _T0 + timedelta(minutes=10 - i)  # written newest first: listed by time
            record, _ = await decisions.remember_decision(new_decision(run, f"int-{i}"), now=at)
            made.append(record)
        revoked, _ = await decisions.revoke_decision(made[2].id)
        assert await decisions.list_decisions() == [d for d in made if d.id != revoked.id]
        everything = await decisions.list_decisions(include_revoked=True)
        assert [d.id for d in everything] == [d.id for d in made]  # i=0 is the newest
        assert everything[2] == revoked and revoked.revoked_at is not None
        by_run = await decisions.list_decisions(run_id="run-one", include_revoked=True)
        assert [d.interaction_id for d in by_run] == ["int-0", "int-2", "int-4"]
        by_thread = await decisions.list_decisions(thread_id="thread-b")
        assert [d.interaction_id for d in by_thread] == ["int-1", "int-3"]
        assert await decisions.list_decisions(run_id="run-one", thread_id="thread-b") == []
        assert await decisions.list_decisions(run_id="run-none") == []
        limited = await decisions.list_decisions(limit=2, include_revoked=True)
        assert [d.interaction_id for d in limited] == ["int-0", "int-1"]
        for limit in (0, -1):
            with pytest.raises(UsageError):
                await decisions.list_decisions(limit=limit)

    @pytest.mark.anyio
    async def test_revoke_marks_it_with_its_event_once(self, store: Store) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run())
        record, _ = await decisions.remember_decision(new_decision(run, tool="deploy"))
        at = _T0 + timedelta(days=1)
        revoked, done = await decisions.revoke_decision(record.id, revoked_by="bo", now=at)
        assert done and not revoked.active
        assert revoked == record.model_copy(update={"revoked_at": at, "revoked_by": "bo"})
        last = (await store.list_events(run.id))[-1]
        assert (last.type, last.at) == (StoreEventType.DECISION_REVOKED, at)
        assert last.data == {"id": record.id, "tool": "deploy", "revoked_by": "bo"}
        assert await decisions.decisions_for(run.id, run.thread_id) == []
        before = await store_snapshot(store)
        again, done = await decisions.revoke_decision(record.id, revoked_by="cy", now=utc_now())
        assert (again, done) == (revoked, False)  # the first revocation stands
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    async def test_revoking_an_unknown_decision_is_refused(self, store: Store) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run())
        await decisions.remember_decision(new_decision(run))
        before = await store_snapshot(store)
        for unknown in ("dec-000000000000", "dec-\x00", ""):
            with pytest.raises(UnknownDecisionError) as caught:
                await decisions.revoke_decision(unknown, revoked_by="bo")
            assert caught.value.decision_id == unknown
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    async def test_a_decision_of_an_unknown_run_is_refused(self, store: Store) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run())
        before = await store_snapshot(store)
        ghost = new_decision(run).model_copy(update={"run_id": "run-nope"})
        with pytest.raises(UnknownRunError) as caught:
            await decisions.remember_decision(ghost)
        assert caught.value.run_id == "run-nope"
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    @pytest.mark.parametrize("status", [_S.FINISHED, _S.PAUSED_WAITING_HUMAN, _S.CANCELLED])
    async def test_a_decision_is_remembered_whatever_the_run_status(
        self, store: Store, status: RunStatus
    ) -> None:
        decisions = _decisions(store)
        run = await _in_status(store, status)
        record, stored = await decisions.remember_decision(new_decision(run))
        assert stored and (await store.get_run(run.id)) == run  # the run itself is untouched
        revoked, done = await decisions.revoke_decision(record.id)
        assert done and not revoked.active

    @pytest.mark.anyio
    @pytest.mark.parametrize("case", sorted(_bad_decisions()))
    async def test_bad_values_are_refused_and_change_nothing(self, store: Store, case: str) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run())
        fields = new_decision(run).model_dump() | _bad_decisions()[case]
        before = await store_snapshot(store)
        with pytest.raises(UsageError):
            await decisions.remember_decision(NewDecision.model_construct(**fields))
        assert await store_snapshot(store) == before
        # Built the ordinary way, the same values are refused before any store sees them.
        with pytest.raises(ValueError):
            NewDecision(**fields)

    @pytest.mark.anyio
    async def test_bad_arguments_of_the_other_calls_are_refused(self, store: Store) -> None:
        decisions = _decisions(store)
        run = await store.create_run(new_run())
        record, _ = await decisions.remember_decision(new_decision(run))
        before = await store_snapshot(store)
        naive = datetime(2030, 1, 1)
        with pytest.raises(UsageError):
            await decisions.remember_decision(new_decision(run, "int-b"), now=naive)
        with pytest.raises(UsageError):
            await decisions.revoke_decision(record.id, revoked_by="bo\x00")
        with pytest.raises(UsageError):
            await decisions.revoke_decision(record.id, now=naive)
        assert await store_snapshot(store) == before


def _votes(store: Store) -> VoteStore:
    """``store`` as the vote store it must be to run :class:`VotesConformance`."""
    assert isinstance(store, VoteStore), f"{type(store).__name__} keeps no votes"
    return store


class VotesConformance:
    """Votes on approvals that need several people (:class:`~interactions.store.VoteStore`):
    one per person, the approval settled once, in the vote's own transaction."""

    @pytest.mark.anyio
    async def test_a_quorum_of_approvals_settles_it_naming_the_approvers(
        self, store: Store
    ) -> None:
        votes = _votes(store)
        run = await _paused(store, "int-a")
        first, outcome = await votes.cast_vote(
            run.id, "int-a", new_vote("ada", feedback=" fine ", via="web"), required=2, now=_T0
        )
        assert (outcome.counted, outcome.settled) == (True, False)
        assert (outcome.approvals, outcome.required) == (("ada",), 2)
        assert first.answer is None and (await store.get_interaction(run.id, "int-a")).pending
        assert (await store.get_run(run.id)).version == run.version, "a vote alone moves no run"
        at = _T0 + timedelta(minutes=1)
        settled, outcome = await votes.cast_vote(
            run.id, "int-a", new_vote("grace", via="slack"), required=2, now=at
        )
        assert (outcome.counted, outcome.settled, outcome.approvals) == (
            True, True, ("ada", "grace"),
        )  # fmt: skip
        assert settled.answer == InteractionAnswer(
            status="resolved",
            payload={"approved": True, "feedback": "ada: fine"},
            answered_by="ada, grace",
            via="slack",
        )
        assert settled.answered_at == at
        assert await store.get_interaction(run.id, "int-a") == settled
        moved = await store.get_run(run.id)
        assert moved.version == run.version + 1, "settling a paused run's question moves it"
        assert moved.status is _S.PAUSED_WAITING_HUMAN and moved.checkpoint == run.checkpoint
        cast = await votes.list_votes(run.id, "int-a")
        assert [(v.voter, v.approved, v.via, v.at) for v in cast] == [
            ("ada", True, "web", _T0),
            ("grace", True, "slack", at),
        ]
        assert cast[0].payload == {"approved": True, "feedback": " fine "}
        assert (cast[0].run_id, cast[0].interaction_id, cast[0].status) == (
            run.id, "int-a", "resolved",
        )  # fmt: skip
        events = (await store.list_events(run.id))[-3:]
        assert [(e.type, e.data) for e in events] == [
            ("interaction_voted", {"interaction_id": "int-a", "voter": "ada", "approved": True,
                                   "via": "web", "feedback": "fine"}),
            ("interaction_voted", {"interaction_id": "int-a", "voter": "grace", "approved": True,
                                   "via": "slack"}),
            ("interaction_answered", {"interaction_id": "int-a", "status": "resolved",
                                      "payload": {"approved": True, "feedback": "ada: fine"},
                                      "answered_by": "ada, grace", "via": "slack"}),
        ]  # fmt: skip
        assert await votes.list_votes(run.id, "int-b") == []

    @pytest.mark.anyio
    @pytest.mark.parametrize("decision", ["decline", "revision"])
    async def test_a_vote_that_does_not_approve_settles_it_at_once(
        self, store: Store, decision: str
    ) -> None:
        votes = _votes(store)
        run = await _paused(store, "int-a")
        await votes.cast_vote(run.id, "int-a", new_vote("ada"), required=3)
        no = new_vote("bo", None if decision == "decline" else False, feedback="not yet")
        if decision == "decline":
            no = new_vote("bo", None, via="cli")
        record, outcome = await votes.cast_vote(run.id, "int-a", no, required=3)
        assert (outcome.counted, outcome.settled, outcome.approvals) == (True, True, ("ada",))
        assert record.answer is not None and record.answer.answered_by == "bo"
        if decision == "decline":
            assert (record.answer.status, record.answer.payload, record.answer.via) == (
                "cancelled", None, "cli",
            )  # fmt: skip
        else:
            assert (record.answer.status, record.answer.payload) == (
                "resolved", {"approved": False, "feedback": "not yet"},
            )  # fmt: skip
        [_, bo] = await votes.list_votes(run.id, "int-a")
        assert (bo.voter, bo.approved) == ("bo", False)
        with pytest.raises(ConflictError) as late:
            await votes.cast_vote(run.id, "int-a", new_vote("cy"), required=3)
        assert late.value.reason == "already_answered"

    @pytest.mark.anyio
    async def test_one_approval_is_enough_when_one_is_required(self, store: Store) -> None:
        votes = _votes(store)
        run = await _paused(store, "int-a")
        record, outcome = await votes.cast_vote(run.id, "int-a", new_vote("ada"), required=1)
        assert outcome.settled and record.answer is not None
        assert (record.answer.payload, record.answer.answered_by) == ({"approved": True}, "ada")

    @pytest.mark.anyio
    async def test_the_same_vote_again_is_a_replay_that_writes_nothing(self, store: Store) -> None:
        votes = _votes(store)
        run = await _paused(store, "int-a")
        await votes.cast_vote(run.id, "int-a", new_vote("ada", feedback="ok"), required=2)
        before = await store_snapshot(store)
        again, outcome = await votes.cast_vote(
            run.id, "int-a", new_vote("ada", feedback="ok", via="elsewhere"), required=2
        )
        assert (outcome.counted, outcome.settled, outcome.approvals) == (False, False, ("ada",))
        assert again.pending and await store_snapshot(store) == before
        await votes.cast_vote(run.id, "int-a", new_vote("grace"), required=2)
        before = await store_snapshot(store)
        for voter in ("ada", "grace"):  # replays after the settlement: the same answer
            vote = new_vote(voter, feedback="ok") if voter == "ada" else new_vote(voter)
            settled, outcome = await votes.cast_vote(run.id, "int-a", vote, required=2)
            assert (outcome.counted, outcome.settled) == (False, True)
            assert settled.answer is not None and settled.answer.answered_by == "ada, grace"
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    async def test_a_different_second_vote_of_a_person_is_refused(self, store: Store) -> None:
        votes = _votes(store)
        run = await _paused(store, "int-a")
        await votes.cast_vote(run.id, "int-a", new_vote("ada"), required=2)
        before = await store_snapshot(store)
        for other in (new_vote("ada", False), new_vote("ada", None), new_vote("ada", feedback="x")):
            with pytest.raises(ConflictError) as twice:
                await votes.cast_vote(run.id, "int-a", other, required=2)
            assert (twice.value.reason, twice.value.interaction_id) == ("already_voted", "int-a")
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    async def test_refused_votes_change_nothing(self, store: Store) -> None:
        votes = _votes(store)
        run = await _paused(store, "int-a")
        past = await store.create_run(new_run())
        past = await store.update_run(
            past.id,
            expected_version=past.version,
            status=_S.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-x", expires_in=timedelta(seconds=-1))],
        )
        await store.answer_interaction(run.id, "int-a", answer({"approved": True}))
        before = await store_snapshot(store)
        with pytest.raises(ConflictError) as settled:
            await votes.cast_vote(run.id, "int-a", new_vote("ada"), required=2)
        assert settled.value.reason == "already_answered"
        with pytest.raises(ExpiredError):
            await votes.cast_vote(past.id, "int-x", new_vote("ada"), required=2)
        with pytest.raises(UnknownInteractionError):
            await votes.cast_vote(run.id, "int-nope", new_vote("ada"), required=2)
        with pytest.raises(UnknownRunError):
            await votes.cast_vote("run-nope", "int-a", new_vote("ada"), required=2)
        for required in (0, 101, True, 1.5):
            with pytest.raises(UsageError):
                await votes.cast_vote(past.id, "int-x", new_vote("ada"), required=required)  # type: ignore[arg-type]
        with pytest.raises(UsageError):
            await votes.cast_vote(past.id, "int-x", new_vote("ada"), required=2,
                                  now=datetime(2030, 1, 1))  # fmt: skip
        for bad in (
            {"voter": "a\x00da"},
            {"voter": ""},
            {"status": "expired", "payload": None},
            {"payload": {"answer": "yes"}},
            {"payload": {"approved": "yes"}},
            {"status": "cancelled", "payload": {"approved": False}},
            {"via": "w\x00b"},
        ):
            fields = new_vote("ada").model_dump() | bad
            with pytest.raises(UsageError):
                await votes.cast_vote(
                    past.id, "int-x", NewVote.model_construct(**fields), required=2
                )
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    async def test_racing_votes_count_once_per_person_and_settle_once(self, store: Store) -> None:
        votes = _votes(store)
        run = await _paused(store, "int-a")
        people = [f"p{i}" for i in range(8)]

        async def vote(i: int) -> str:
            _, outcome = await votes.cast_vote(run.id, "int-a", new_vote(people[i % 8]), required=8)
            return "counted" if outcome.counted else "replay"

        outcomes = await _race(vote, racers=64)
        assert sorted(outcomes.values()).count("counted") == 8, outcomes
        cast = await votes.list_votes(run.id, "int-a")
        assert sorted(v.voter for v in cast) == people
        record = await store.get_interaction(run.id, "int-a")
        assert record.answer is not None
        assert record.answer.answered_by == ", ".join(v.voter for v in cast)
        events = await store.list_events(run.id)
        assert _types(events).count("interaction_voted") == 8
        assert _types(events).count("interaction_answered") == 1


def _consumers(store: Store) -> ConsumerStore:
    """``store`` as the consumer store it must be to run :class:`ConsumersConformance`."""
    assert isinstance(store, ConsumerStore), f"{type(store).__name__} keeps no consumers"
    return store


class ConsumersConformance:
    """Consumers of the feed (:class:`~interactions.store.ConsumerStore`): a durable cursor
    each, leased to one owner at a time, moved forward only by its holder."""

    @pytest.mark.anyio
    async def test_the_first_owner_holds_a_new_consumer_until_its_lease_lapses(
        self, store: Store
    ) -> None:
        consumers = _consumers(store)
        before = await store_snapshot(store)
        assert await consumers.lease_consumer("hook", "a", lease=30, start=7, now=_T0) == 7
        assert await store_snapshot(store) == before, "a lease appends no events"
        later = _T0 + timedelta(seconds=29)
        assert await consumers.lease_consumer("hook", "b", lease=30, now=later) is None
        assert await consumers.lease_consumer("hook", "a", lease=30, start=99, now=later) == 7
        # a's renewal at +29 s holds it until +59 s
        assert await consumers.lease_consumer("hook", "b", lease=30, now=_T0 + _s(58)) is None
        assert await consumers.lease_consumer("hook", "b", lease=30, now=_T0 + _s(59)) == 7
        assert await consumers.lease_consumer("hook", "a", lease=30, now=_T0 + _s(60)) is None
        assert await consumers.lease_consumer("other", "a", lease=30, now=_T0) == 0
        assert await consumers.lease_consumer("hook", "b", lease=30) is not None  # the clock

    @pytest.mark.anyio
    async def test_the_holder_moves_the_cursor_forward_only(self, store: Store) -> None:
        consumers = _consumers(store)
        await consumers.lease_consumer("hook", "a", lease=30, now=_T0)
        await consumers.advance_consumer("hook", "a", 5, now=_T0 + _s(1))
        await consumers.advance_consumer("hook", "a", 5, now=_T0 + _s(2))  # again: nothing
        with pytest.raises(ConflictError) as behind:
            await consumers.advance_consumer("hook", "a", 4, now=_T0 + _s(2))
        assert behind.value.reason == "cursor_behind"
        await consumers.advance_consumer("hook", "a", 9, now=_T0 + _s(3))
        assert await consumers.lease_consumer("hook", "a", lease=30, now=_T0 + _s(4)) == 9
        lapsed = _T0 + _s(40)
        assert await consumers.lease_consumer("hook", "b", lease=30, now=lapsed) == 9
        await consumers.advance_consumer("hook", "b", 12, now=lapsed)
        assert await consumers.lease_consumer("hook", "b", lease=30, now=lapsed) == 12

    @pytest.mark.anyio
    async def test_only_the_holder_while_its_lease_lasts_moves_it(self, store: Store) -> None:
        consumers = _consumers(store)
        await consumers.lease_consumer("hook", "a", lease=30, now=_T0)
        await consumers.advance_consumer("hook", "a", 3, now=_T0)
        refused = [
            ("hook", "b", _T0 + _s(1)),  # not the holder
            ("hook", "a", _T0 + _s(30)),  # its lease lapsed
            ("nope", "a", _T0),  # no such consumer
        ]
        for name, owner, at in refused:
            with pytest.raises(ConflictError) as held:
                await consumers.advance_consumer(name, owner, 8, now=at)
            assert held.value.reason == "not_holder"
        await consumers.lease_consumer("hook", "b", lease=30, now=_T0 + _s(31))
        with pytest.raises(ConflictError):  # taken over: the old holder may not move it
            await consumers.advance_consumer("hook", "a", 8, now=_T0 + _s(32))
        assert await consumers.lease_consumer("hook", "b", lease=30, now=_T0 + _s(33)) == 3

    @pytest.mark.anyio
    async def test_bad_values_are_refused_and_change_nothing(self, store: Store) -> None:
        consumers = _consumers(store)
        await consumers.lease_consumer("hook", "a", lease=30, now=_T0)
        bad_leases: list[Any] = [0, -1, math.inf, math.nan, 86_401, True, "30"]
        for lease in bad_leases:
            with pytest.raises(UsageError):
                await consumers.lease_consumer("hook", "a", lease=lease, now=_T0)
        bad_names: list[tuple[Any, Any]] = [
            ("", "a"), ("hook", ""), ("h\x00", "a"), ("hook", "a\x00"), ("h" * 201, "a"),
            (1, "a"),
        ]  # fmt: skip
        for name, owner in bad_names:
            with pytest.raises(UsageError):
                await consumers.lease_consumer(name, owner, lease=30, now=_T0)
            with pytest.raises(UsageError):
                await consumers.advance_consumer(name, owner, 1, now=_T0)
        bad_cursors: list[Any] = [-1, 2**63, True, 1.0, "1"]
        for cursor in bad_cursors:
            with pytest.raises(UsageError):
                await consumers.advance_consumer("hook", "a", cursor, now=_T0)
            with pytest.raises(UsageError):
                await consumers.lease_consumer("new", "a", lease=30, start=cursor, now=_T0)
        naive = datetime(2030, 1, 1)
        with pytest.raises(UsageError):
            await consumers.lease_consumer("hook", "a", lease=30, now=naive)
        with pytest.raises(UsageError):
            await consumers.advance_consumer("hook", "a", 1, now=naive)
        # nothing moved: the lease still ends at +30 s, the cursor is still 0, "new" is unknown
        assert await consumers.lease_consumer("hook", "b", lease=30, now=_T0 + _s(29)) is None
        assert await consumers.lease_consumer("hook", "b", lease=30, now=_T0 + _s(30)) == 0
        with pytest.raises(ConflictError):
            await consumers.advance_consumer("new", "a", 1, now=_T0)

    @pytest.mark.anyio
    @pytest.mark.parametrize("stored", [False, True], ids=["new", "lapsed"])
    async def test_racing_owners_one_wins(self, store: Store, stored: bool) -> None:
        consumers = _consumers(store)
        at = _T0
        if stored:
            await consumers.lease_consumer("hook", "gone", lease=5, start=4, now=_T0)
            at = _T0 + _s(10)

        async def lease(i: int) -> str:
            cursor = await consumers.lease_consumer("hook", f"owner-{i}", lease=30, now=at)
            return "lost" if cursor is None else f"won at {cursor}"

        outcomes = await _race(lease, racers=8)
        won = [i for i, outcome in outcomes.items() if outcome.startswith("won")]
        assert len(won) == 1, outcomes
        assert outcomes[won[0]] == f"won at {4 if stored else 0}"
        await consumers.advance_consumer("hook", f"owner-{won[0]}", 6, now=at)


def _reminders(store: Store) -> ReminderStore:
    """``store`` as the reminder store it must be to run :class:`RemindersConformance`."""
    assert isinstance(store, ReminderStore), f"{type(store).__name__} keeps no reminders"
    return store


async def _waiting(store: Store, *ids: str) -> RunRecord:
    """A run paused on the questions ``ids``, asked at ``_T0``, expiring a day later."""
    run = await store.create_run(new_run())
    return await store.update_run(
        run.id,
        expected_version=run.version,
        status=_S.PAUSED_WAITING_HUMAN,
        new_interactions=[
            new_interaction(iid, requested_at=_T0, expires_at=_T0 + timedelta(days=1))
            for iid in ids
        ],
        now=_T0,
    )


class RemindersConformance:
    """Reminders and escalations (:class:`~interactions.store.ReminderStore`): each notice
    written once with its event, numbers moving forward only, only while the interaction is
    pending and open."""

    @pytest.mark.anyio
    async def test_a_notice_is_written_once_with_its_event(self, store: Store) -> None:
        reminders = _reminders(store)
        run = await _waiting(store, "int-a", "int-b")
        at = _T0 + _s(60)
        data = {"interaction_id": "int-a", "count": 1, "approvers": ["ada"]}
        event = await reminders.record_reminder(run.id, "int-a", "reminded", 1, data, now=at)
        assert event is not None
        assert (event.type, event.data, event.at) == ("interaction_reminded", data, at)
        assert await reminders.record_reminder(run.id, "int-a", "reminded", 1, data, now=at) is None
        three = {**data, "count": 3}
        assert await reminders.record_reminder(run.id, "int-a", "reminded", 3, three, now=at)
        # a late writer never writes an older one after a newer
        assert await reminders.record_reminder(run.id, "int-a", "reminded", 2, data, now=at) is None
        # kinds and interactions count apart
        up = {"interaction_id": "int-a", "added": ["bo"], "approvers": ["ada", "bo"]}
        assert await reminders.record_reminder(run.id, "int-a", "escalated", 1, up, now=at)
        assert await reminders.record_reminder(run.id, "int-a", "escalated", 1, up, now=at) is None
        assert await reminders.record_reminder(run.id, "int-b", "reminded", 1, data, now=at)
        events = await store.list_events(run.id)
        assert [(e.type, e.data.get("count")) for e in events[-4:]] == [
            ("interaction_reminded", 1), ("interaction_reminded", 3),
            ("interaction_escalated", None), ("interaction_reminded", 1),
        ]  # fmt: skip
        stored = await store.get_run(run.id)
        assert stored.version == run.version, "a notice leaves the run's version alone"

    @pytest.mark.anyio
    async def test_nothing_is_written_once_answered_expired_or_ended(self, store: Store) -> None:
        reminders = _reminders(store)
        run = await _waiting(store, "int-a", "int-b")
        await store.answer_interaction(run.id, "int-a", answer("yes"), now=_T0 + _s(1))
        before = await store_snapshot(store)
        data = {"interaction_id": "int-a", "count": 1, "approvers": []}
        assert await reminders.record_reminder(run.id, "int-a", "reminded", 1, data) is None
        late = _T0 + timedelta(days=1, seconds=1)
        nine = await reminders.record_reminder(run.id, "int-b", "reminded", 9, data, now=late)
        assert nine is None
        assert await store_snapshot(store) == before
        version = (await store.get_run(run.id)).version
        ended = await store.update_run(
            run.id, expected_version=version, status=_S.CANCELLED, now=_T0 + _s(2)
        )
        assert ended.status is _S.CANCELLED
        after_end = await reminders.record_reminder(run.id, "int-b", "reminded", 1, data, now=_T0)
        assert after_end is None

    @pytest.mark.anyio
    async def test_bad_values_and_unknown_ids_are_refused_and_change_nothing(
        self, store: Store
    ) -> None:
        reminders = _reminders(store)
        run = await _waiting(store, "int-a")
        before = await store_snapshot(store)
        bad: list[tuple[Any, Any, Any]] = [
            ("nagged", 1, {}), ("reminded", 0, {}), ("reminded", -1, {}), ("reminded", True, {}),
            ("reminded", 1.0, {}), ("reminded", 1, ["x"]), ("reminded", 1, {"x": math.nan}),
        ]  # fmt: skip
        for kind, number, data in bad:
            with pytest.raises(UsageError):
                await reminders.record_reminder(run.id, "int-a", kind, number, data, now=_T0)
        with pytest.raises(UsageError):
            await reminders.record_reminder(run.id, "int-a", "reminded", 1, {},
                                            now=datetime(2026, 1, 1))  # fmt: skip
        with pytest.raises(UnknownRunError):
            await reminders.record_reminder("run-nope", "int-a", "reminded", 1, {}, now=_T0)
        with pytest.raises(UnknownInteractionError):
            await reminders.record_reminder(run.id, "int-nope", "reminded", 1, {}, now=_T0)
        assert await store_snapshot(store) == before

    @pytest.mark.anyio
    async def test_racing_writers_write_a_notice_once(self, store: Store) -> None:
        reminders = _reminders(store)
        run = await _waiting(store, "int-a")

        async def remind(i: int) -> str:
            data = {"interaction_id": "int-a", "count": 2, "approvers": [], "by": i}
            written = await reminders.record_reminder(
                run.id, "int-a", "reminded", 2, data, now=_T0 + _s(60)
            )
            return "lost" if written is None else "won"

        outcomes = await _race(remind, racers=8)
        assert sorted(outcomes.values()) == ["lost"] * 7 + ["won"], outcomes
        types = _types(await store.list_events(run.id))
        assert types.count("interaction_reminded") == 1


def _s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)
def _audit(store: Store) -> AuditStore:
    """``store`` as the audit store it must be to run :class:`AuditConformance`."""
    assert isinstance(store, AuditStore), f"{type(store).__name__} pages no interactions"
    return store


async def _asked(store: Store, thread: str, *asked: tuple[str, datetime]) -> RunRecord:
    """A run of ``thread`` paused on the interactions ``asked`` (id, requested_at), in order."""
    run = await store.create_run(new_run(thread_id=thread))
    return await store.update_run(
        run.id,
        expected_version=run.version,
        status=_S.PAUSED_WAITING_HUMAN,
        new_interactions=[
            new_interaction(iid, requested_at=at, expires_at=at + timedelta(days=400))
            for iid, at in asked
        ],
    )


async def _all_pages(audit: AuditStore, limit: int, **bounds: Any) -> list[list[tuple[str, str]]]:
    pages: list[list[tuple[str, str]]] = []
    after = None
    while True:
        page = await audit.page_interactions(after=after, limit=limit, **bounds)
        assert len(page) <= limit
        pages.append([(r.run_id, r.id) for r in page])
        if len(page) < limit:
            return pages
        after = (page[-1].run_id, page[-1].id)


class AuditConformance:
    """Every run's interactions a page at a time, oldest asked first
    (:class:`~interactions.store.AuditStore`): what an audit export reads."""

    @pytest.mark.anyio
    async def test_pages_every_runs_interactions_oldest_asked_first(self, store: Store) -> None:
        audit = _audit(store)
        t = datetime(2026, 3, 1, 12, tzinfo=UTC)
        one = await _asked(store, "t1", ("int-a", t + timedelta(minutes=5)), ("int-b", t))
        two = await _asked(store, "t2", ("int-c", t + timedelta(minutes=5)), ("int-d", t))
        await store.answer_interaction(one.id, "int-a", answer({"answer": "x"}, answered_by="ada"))
        expected = [  # ties of requested_at in the order they were stored
            (one.id, "int-b"), (two.id, "int-d"), (one.id, "int-a"), (two.id, "int-c"),
        ]  # fmt: skip
        whole = await audit.page_interactions()
        assert [(r.run_id, r.id) for r in whole] == expected
        assert whole[2] == await store.get_interaction(one.id, "int-a")  # the answer with it
        assert whole[2].answer is not None and whole[2].answer.answered_by == "ada"
        for limit in (1, 2, 3, 4):
            pages = await _all_pages(audit, limit)
            assert [key for page in pages for key in page] == expected
            assert all(len(page) == limit for page in pages[:-1])

    @pytest.mark.anyio
    async def test_since_and_until_bound_when_it_was_asked(self, store: Store) -> None:
        audit = _audit(store)
        t = datetime(2026, 3, 1, 12, tzinfo=UTC)
        run = await _asked(store, "t1", *[(f"int-{i}", t + timedelta(hours=i)) for i in range(6)])
        since, until = t + timedelta(hours=1), t + timedelta(hours=4)
        pages = await _all_pages(audit, 2, since=since, until=until)  # since in, until out
        assert [iid for page in pages for _, iid in page] == ["int-1", "int-2", "int-3"]
        later = await audit.page_interactions(since=since.astimezone(timezone(timedelta(hours=-5))))
        assert [r.id for r in later] == ["int-1", "int-2", "int-3", "int-4", "int-5"]
        assert [r.id for r in await audit.page_interactions(until=t)] == []
        assert await audit.page_interactions(after=(run.id, "int-4"), until=until) == []

    @pytest.mark.anyio
    async def test_a_page_after_an_unknown_interaction_is_empty(self, store: Store) -> None:
        audit = _audit(store)
        run = await _paused(store, "int-a")
        for after in [(run.id, "int-nope"), ("run-nope", "int-a"), ("run\x00", "int\x00")]:
            assert await audit.page_interactions(after=after) == []

    @pytest.mark.anyio
    async def test_questions_asked_while_paging_come_in_later_pages(self, store: Store) -> None:
        audit = _audit(store)
        t = datetime(2026, 3, 1, 12, tzinfo=UTC)
        first = await _asked(store, "t1", ("int-a", t), ("int-b", t + timedelta(seconds=1)))
        page = await audit.page_interactions(limit=1)
        second = await _asked(store, "t2", ("int-c", t + timedelta(seconds=2)))
        rest = await audit.page_interactions(after=(page[0].run_id, page[0].id), limit=10)
        assert [(r.run_id, r.id) for r in rest] == [(first.id, "int-b"), (second.id, "int-c")]

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "bad",
        [
            {"limit": 0},
            {"since": datetime(2026, 3, 1)},
            {"until": datetime(2026, 3, 1)},
            {"after": ("run-only",)},
            {"after": ["run-1", "int-a"]},
            {"after": ("run-1", 7)},
        ],
    )
    async def test_bad_arguments_are_refused(self, store: Store, bad: dict[str, Any]) -> None:
        with pytest.raises(UsageError):
            await _audit(store).page_interactions(**bad)


class StoreConformance(
    RunWithInteractionsConformance,
    PagingConformance,
    CloseOpenConformance,
    FeedConformance,
    KindsConformance,
    RunsConformance,
    InteractionsConformance,
    RefusalsConformance,
    EventsConformance,
    WaitConformance,
):
    """The whole contract. Subclass it and provide a ``store`` fixture (see the module doc)."""

    @pytest.mark.anyio
    async def test_closed_store_refuses_calls(self, store: Store) -> None:
        run = await store.create_run(new_run())
        await store.close()
        await store.close()  # idempotent
        with pytest.raises(UsageError):
            await store.get_run(run.id)
