"""The one store abstraction: runs, their interactions and their events, behind async methods.

Every backend (:class:`~interactions.store.MemoryStore`, :class:`~interactions.store.SQLiteStore`,
:class:`~interactions.store.PostgresStore`) implements :class:`Store` and passes
:class:`interactions.testing.store_conformance.StoreConformance` unchanged.

Shared rules:

- Every write is one atomic transaction. A refused write (any raised error) changes nothing.
- Every state change appends events (the audit trail). The store itself appends
  ``run_created``, ``interaction_requested``, ``interaction_answered`` and
  ``run_status_changed`` (see :class:`~interactions.store.StoreEventType`); callers add their own.
- ``RunRecord.version`` guards the run row (status, checkpoint, error) only. Answers have their
  own compare-and-set (an interaction is answered once), so :meth:`Store.answer_interaction`
  does not bump the run version: a host answering an async question never makes the runner's
  next checkpoint write fail.
- A store instance belongs to one event loop at a time; ``close()`` it when done.

A backend may subclass :class:`Store` explicitly: the type checker then checks each method
against the protocol where the class is written, and the class inherits ``async with`` (which
closes the store on leaving) instead of writing it again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from interactions.store._decisions import DecisionRecord, NewDecision
from interactions.store._records import (
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    NewRun,
    RunRecord,
)
from interactions.store._status import RunStatus
from interactions.store._votes import NewVote, VoteOutcome, VoteRecord

__all__ = [
    "AuditStore",
    "ConsumerStore",
    "DecisionStore",
    "ReminderStore",
    "Store",
    "VoteStore",
]


@runtime_checkable
class Store(Protocol):
    """Durable state of runs. All methods are coroutines; see the module docstring for rules."""

    async def create_run(self, new: NewRun) -> RunRecord:
        """Insert a run (status ``running``, version 1) and its ``run_created`` event.

        Raises ``ConflictError`` (reason ``duplicate_run``) if the id is taken.
        """
        ...

    async def get_run(self, run_id: str) -> RunRecord:
        """Return the run; raise ``UnknownRunError`` if there is none."""
        ...

    async def get_run_with_interactions(
        self, run_id: str
    ) -> tuple[RunRecord, list[InteractionRecord]]:
        """The run and all its interactions (in the order they were requested), read at one
        moment: what deciding on an answer or a resume needs, in one round trip. Raises
        ``UnknownRunError``."""
        ...

    async def list_runs(
        self,
        status: RunStatus | None = None,
        limit: int = 100,
        *,
        oldest_first: bool = False,
        after: str | None = None,
        thread_id: str | None = None,
        kind: str | None = None,
        ref: str | None = None,
        answered_by: str | None = None,
    ) -> list[RunRecord]:
        """Return up to ``limit`` (>= 1) runs, newest ``created_at`` first (or oldest first),
        maybe only those in ``status``, of the AG-UI thread ``thread_id``, of ``kind``
        (``recipe``, ``graph``...), running ``ref`` (a recipe or workflow, as stored), and/or
        with an interaction ``answered_by`` answered (the stored answer's ``answered_by``) or
        voted on (all filters together). ``after`` (a run id) pages on: the runs that come
        after it in this order. A row this version cannot read is skipped with a logged
        warning naming it."""
        ...

    async def update_run(
        self,
        run_id: str,
        *,
        expected_version: int,
        status: RunStatus | None = None,
        checkpoint: Mapping[str, Any] | None = None,
        error: str | None = None,
        new_interactions: Sequence[NewInteraction] = (),
        answers: Mapping[str, InteractionAnswer] | None = None,
        close_open: InteractionAnswer | None = None,
        events: Sequence[EventInput] = (),
        now: datetime | None = None,
        durable: bool = True,
    ) -> RunRecord:
        """Change a run in one atomic transaction and return it with ``version + 1``.

        - ``expected_version`` must equal the stored version, else ``ConflictError``
          (reason ``version``): re-read the run and decide again.
        - ``status``: ``None`` keeps it; otherwise the move must be in the status table
          (``IllegalTransitionError``). A terminal run can't be updated at all.
        - ``error`` is recorded with a status change (``None`` clears it); passing it without
          ``status`` is a ``UsageError``. It is a failure's message, recorded whatever it holds:
          a NUL character or a lone surrogate in it is kept as U+FFFD.
        - ``checkpoint`` replaces the stored one whole; ``None`` keeps it.
        - ``new_interactions`` are inserted (an id already in the run: ``ConflictError``).
        - ``answers`` (interaction id -> answer) follow :meth:`answer_interaction`'s rules, all
          or nothing; they may answer interactions inserted by the same call. Each is stored
          as given, its ``answered_at`` the write's time (the returned run's ``updated_at``).
        - ``close_open`` answers every interaction of the run still pending when the write
          happens (decided inside the transaction: an answer stored by a racing writer stands).
        - Events appended, in order: ``interaction_requested`` per new interaction,
          ``interaction_answered`` per newly stored answer, ``events``, ``run_status_changed``.
        - ``now`` (default: the store's clock) stamps the write and decides expiry.
        - ``durable=False`` lets the store return before the write reaches the disk (a
          machine failure before the store's next durable write may lose it; a crash of this
          process does not): for a write a durable one follows soon, as a resumed leg's end
          follows the move to ``running``.

        Raises ``UnknownRunError`` if the run does not exist. Nothing is written on any error.
        """
        ...

    async def get_interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        """Return one interaction; raise ``UnknownInteractionError`` if the run has none such."""
        ...

    async def list_interactions(
        self, run_id: str | None = None, *, pending: bool | None = None
    ) -> list[InteractionRecord]:
        """Return interactions in the order they were requested, maybe of one run only.

        ``pending=True`` keeps the unanswered, ``False`` the answered. Raises
        ``UnknownRunError`` for a ``run_id`` that does not exist.
        """
        ...

    async def answer_interaction(
        self,
        run_id: str,
        interaction_id: str,
        answer: InteractionAnswer,
        *,
        now: datetime | None = None,
    ) -> tuple[InteractionRecord, bool]:
        """Store the first answer to an interaction, atomically with its audit event.

        Returns ``(record, True)`` when this call stored the answer (an ``interaction_answered``
        event was appended), ``(stored, False)`` for an identical replay (same status and
        payload; nothing written). Raises ``ConflictError`` (reason ``already_answered``) for a
        different answer, ``UnknownInteractionError``, or ``ExpiredError`` when pending past
        ``expires_at`` at ``now``. Does not bump the run version and ignores the run status.
        """
        ...

    async def append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        """Append ``(type, data)`` events (seq continues from the last); return them.

        Allowed in every run status. Raises ``UnknownRunError``; ``UsageError`` for bad events.
        """
        ...

    async def list_events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        """Return the run's events with ``seq > after_seq``, in seq order (``UnknownRunError``)."""
        ...

    async def wait_for_events(
        self, run_id: str, *, after_seq: int, timeout: float
    ) -> list[EventRecord]:
        """Wait until the run has events after ``after_seq``; return them (``[]`` on timeout).

        Level-triggered: returns at once if such events already exist, so a caller that reads
        state, then waits with the last seq it saw, can never miss a change. A write through
        this store instance wakes waiters at once; other writers (processes) are seen by the
        backend's notification or poll. ``timeout`` (seconds, finite, >= 0) is required.
        Raises ``UnknownRunError``.
        """
        ...

    def watch(self, *, after: int = 0) -> AbstractAsyncContextManager[AsyncIterator[EventRecord]]:
        """The store-wide feed: every event of every run with ``cursor > after``, in commit
        order, as it is written::

            async with store.watch(after=cursor) as feed:
                async for event in feed:
                    ...

        A host follows it for new interactions, answers, status changes and text. The feed
        first yields what is already stored after ``after``, then waits (woken by this store's
        writes at once, other processes' by the backend's notification or poll) and never
        ends: leave the block or cancel it. A watcher that reconnects with the last ``cursor``
        it saw misses nothing; start from :meth:`latest_cursor` to see only what comes next.
        """
        ...

    async def latest_cursor(self) -> int:
        """The cursor of the store's last event (``0`` for an empty store)."""
        ...

    async def close(self) -> None:
        """Release the backend's resources. Idempotent; later calls raise ``UsageError``."""
        ...

    async def __aenter__(self) -> Self:
        """Return the store (an explicit subclass that connects lazily may connect here)."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the store (:meth:`close`), whatever ended the block."""
        await self.close()


@runtime_checkable
class DecisionStore(Protocol):
    """Remembered approval decisions ("approve, and don't ask again", "deny always"), kept
    beside the runs so every process on the store sees them. All methods are coroutines.

    :class:`~interactions.store.MemoryStore`, :class:`~interactions.store.SQLiteStore` and
    :class:`~interactions.store.PostgresStore` implement it and pass
    :class:`interactions.testing.store_conformance.DecisionsConformance`; a store that does not
    (the Temporal engine's) keeps no decisions: check ``isinstance(store, DecisionStore)``.
    Every write is one transaction with its audit event; a refused one changes nothing.
    """

    async def remember_decision(
        self, new: NewDecision, *, now: datetime | None = None
    ) -> tuple[DecisionRecord, bool]:
        """Store ``new``, atomically with a ``decision_remembered`` event appended to
        ``new.run_id`` (data: ``id, tool, action, scope, args, decided_by, interaction_id,
        reason``), whatever the run's status; ``now`` (default: the store's clock) stamps it.

        Returns ``(record, True)`` when this call stored it, ``(stored, False)`` when a
        decision for the same ``(run_id, interaction_id)`` was stored already: nothing is
        written and the first stands, even if other fields differ (racing writers: one row,
        one event). Raises ``UnknownRunError`` for an unknown run and ``UsageError`` for bad
        values (a blank tool, text holding NUL, args that are not JSON or are too large, a
        naive ``now``); nothing is written then.
        """
        ...

    async def decisions_for(self, run_id: str, thread_id: str) -> list[DecisionRecord]:
        """The active decisions that apply to a call in run ``run_id`` of thread
        ``thread_id`` (scope ``run`` with that run id, or scope ``thread`` with that thread),
        oldest first, in one query: the gate's read before it asks. Filter them by tool and
        arguments with :meth:`DecisionRecord.covers`. An unknown run or thread has none."""
        ...

    async def list_decisions(
        self,
        *,
        run_id: str | None = None,
        thread_id: str | None = None,
        include_revoked: bool = False,
        limit: int = 100,
    ) -> list[DecisionRecord]:
        """Up to ``limit`` (>= 1, else ``UsageError``) decisions, newest first, maybe only
        those made by run ``run_id`` and/or in thread ``thread_id``; revoked ones only with
        ``include_revoked``."""
        ...

    async def revoke_decision(
        self, decision_id: str, *, revoked_by: str | None = None, now: datetime | None = None
    ) -> tuple[DecisionRecord, bool]:
        """Mark the decision revoked, atomically with a ``decision_revoked`` event (data:
        ``id, tool, revoked_by``) on the decision's run; return ``(record, True)``. Revoking a
        revoked one returns ``(record, False)`` and writes nothing. Raises
        ``UnknownDecisionError`` (its ``decision_id`` set) for an unknown id, ``UsageError``
        for a ``revoked_by`` holding NUL or a naive ``now``."""
        ...


@runtime_checkable
class VoteStore(Protocol):
    """Votes on approvals that need several people (``required_approvals`` in the interrupt's
    metadata): each person's answer is stored once, and the vote that settles the approval
    answers it, in the same transaction. All methods are coroutines.

    :class:`~interactions.store.MemoryStore`, :class:`~interactions.store.SQLiteStore` and
    :class:`~interactions.store.PostgresStore` implement it and pass
    :class:`interactions.testing.store_conformance.VotesConformance`; a store that does not
    (the Temporal engine's) keeps no votes: check ``isinstance(store, VoteStore)``.
    """

    async def cast_vote(
        self,
        run_id: str,
        interaction_id: str,
        vote: NewVote,
        *,
        required: int,
        now: datetime | None = None,
    ) -> tuple[InteractionRecord, VoteOutcome]:
        """Store ``vote`` on the interaction, in one transaction with its
        ``interaction_voted`` event (data: ``interaction_id, voter, approved, via,
        feedback?``), and settle the interaction there when it is decided:

        - a vote that does not approve (a decline, a revision request) answers it at once as
          that answer, ``answered_by`` the voter;
        - the approval that makes ``required`` (1 to 100) distinct approvers answers it
          ``resolved`` ``{"approved": true, "feedback"?}`` (the approvers' feedback, ``voter:
          text`` joined by ``"; "``), ``answered_by`` the approvers' names joined by ``", "``
          in vote order, ``via`` the settling vote's.

        The answer is audited as every answer is (``interaction_answered``, after the vote's
        event). Settling a question of a paused run moves the run's version on, as an answer
        stored with :meth:`Store.update_run` does; nothing else of the run changes.

        Returns the interaction as it stands and the :class:`~interactions.store.VoteOutcome`
        (``counted``, ``settled``, the ``approvals`` so far in order, ``required``). A vote
        repeating the voter's stored one (same status and payload) is a replay: nothing is
        written, ``counted`` is false. Raises ``UnknownRunError``, ``UnknownInteractionError``,
        ``ConflictError`` (reason ``already_answered`` for a settled interaction,
        ``already_voted`` for a voter whose stored vote differs: the first stands),
        ``ExpiredError`` (pending past ``expires_at`` at ``now``, default the store's clock), and
        ``UsageError`` for bad values (a ``required`` out of range, a vote no store keeps, a
        naive ``now``); nothing is written then. The caller checks who may vote and the
        payload against the interrupt first (:func:`~interactions.resume.plan_answer`).
        """
        ...

    async def list_votes(self, run_id: str, interaction_id: str) -> list[VoteRecord]:
        """The interaction's votes, in the order they were cast (``[]`` for an interaction
        no one voted on, or one the store does not hold)."""
        ...


@runtime_checkable
class ConsumerStore(Protocol):
    """Consumers of the store-wide feed (:meth:`Store.watch`) with a durable cursor each (a
    webhook target, say), each held by one owner at a time under a lease: several servers on
    one store share a consumer's work, each event dealt with by one of them, and when the
    holder dies its lease lapses and another goes on from the cursor. All methods are
    coroutines.

    :class:`~interactions.store.MemoryStore`, :class:`~interactions.store.SQLiteStore` and
    :class:`~interactions.store.PostgresStore` implement it and pass
    :class:`interactions.testing.store_conformance.ConsumersConformance`; a store that does
    not (the Temporal engine's) has no consumers: check ``isinstance(store, ConsumerStore)``.
    Each call is one transaction; a refused one changes nothing. Leases append no events.
    """

    async def lease_consumer(
        self,
        name: str,
        owner: str,
        *,
        lease: float,
        start: int = 0,
        now: datetime | None = None,
    ) -> int | None:
        """Take or renew the lease of consumer ``name`` for ``owner`` until ``now + lease``
        seconds (``now`` default: the store's clock) and return its cursor: the cursor of the
        last event it dealt with (follow the feed with ``watch(after=cursor)``). Returns
        ``None`` and writes nothing when another owner holds an unexpired lease. A consumer
        not stored yet is created at cursor ``start`` (``0``: the whole feed; a store's
        :meth:`~Store.latest_cursor`: what comes next). Racing owners: one wins.

        Renew well before the lease ends: an owner whose lease lapsed may find another owner
        took it (``None``), and may not move the cursor (:meth:`advance_consumer`). Raises
        ``UsageError`` for a name or owner that is not 1 to 200 characters without NUL, a
        lease not above 0 seconds (at most a day), a bad ``start``, a naive ``now``.
        """
        ...

    async def advance_consumer(
        self, name: str, owner: str, cursor: int, *, now: datetime | None = None
    ) -> None:
        """Move consumer ``name``'s cursor forward to ``cursor`` (the event now dealt with);
        the same cursor again writes nothing. Only the holder may, while its lease lasts at
        ``now``: raises ``ConflictError`` (reason ``not_holder``) for an owner that does not
        hold it (or no such consumer), (reason ``cursor_behind``) for a cursor behind the
        stored one, and ``UsageError`` for bad values, as :meth:`lease_consumer` does.
        """
        ...


@runtime_checkable
class AuditStore(Protocol):
    """The read an audit of the whole store needs: every run's interactions in one order, a
    page at a time, so an export of any size holds one page in memory.

    :class:`~interactions.store.MemoryStore`, :class:`~interactions.store.SQLiteStore` and
    :class:`~interactions.store.PostgresStore` implement it and pass
    :class:`interactions.testing.store_conformance.AuditConformance`; a store that does not
    (the Temporal engine's) cannot be exported: check ``isinstance(store, AuditStore)``.
    """

    async def page_interactions(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 500,
    ) -> list[InteractionRecord]:
        """Up to ``limit`` (>= 1) interactions of every run, oldest ``requested_at`` first
        (those asked at the same moment in the order they were stored), maybe only those
        asked at or after ``since`` and before ``until``. ``after`` (a ``(run_id,
        interaction_id)`` pair, the last of the page before) pages on: the interactions that
        come after it in this order (none when the store holds no such interaction).

        A page shorter than ``limit`` is the last. Interactions asked while a caller pages
        come in the pages still to read when they sort after the last one read. A row this
        version cannot read is skipped with a logged warning naming it. Raises ``UsageError``
        for a ``limit`` below 1, a naive ``since`` or ``until``, or an ``after`` that is not
        a pair of texts.
        """
        ...


@runtime_checkable
class ReminderStore(Protocol):
    """Reminders and escalations of pending interactions, each written exactly once however
    many servers sweep one store (see :mod:`interactions.reminders`).

    :class:`~interactions.store.MemoryStore`, :class:`~interactions.store.SQLiteStore` and
    :class:`~interactions.store.PostgresStore` implement it and pass
    :class:`interactions.testing.store_conformance.RemindersConformance`; a store that does
    not (the Temporal engine's) reminds no one: check ``isinstance(store, ReminderStore)``.
    """

    async def record_reminder(
        self,
        run_id: str,
        interaction_id: str,
        kind: str,
        number: int,
        data: Mapping[str, Any],
        *,
        now: datetime | None = None,
    ) -> EventRecord | None:
        """Write notice ``number`` of ``kind`` (``reminded``: a reminder's count; ``escalated``:
        ``1``) of the interaction: append the event ``interaction_<kind>`` with ``data`` and
        keep ``number`` as the last of its kind, in one transaction; return the event.

        Writes nothing and returns ``None`` when the interaction is answered, past its
        ``expires_at`` at ``now`` (default: the store's clock), or of a run that ended, or when
        a notice of that kind numbered ``number`` or above is stored already: racing writers
        of one notice write it once, and a late writer never writes an older one after a newer.
        Raises ``UnknownRunError``, ``UnknownInteractionError``, and ``UsageError`` for a kind
        that is not ``reminded`` or ``escalated``, a number below 1, data that is not a JSON
        object, a naive ``now``; nothing is written then.
        """
        ...
