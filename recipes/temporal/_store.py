"""The store face of a Temporal engine: what hosts and the ``runs`` commands read.

:class:`TemporalStore` implements :class:`~interactions.store.Store` over the runs'
workflows: a run and its interactions and events are read with the workflow's query, runs are
listed from visibility (their search attributes), the store-wide feed is polled from it
(:mod:`._feed`). Runs change only through the engine's runner (:meth:`TemporalStore.make_runner`,
what :func:`recipes.runs.runner_for` returns), whose every call is an update of the run's
workflow; the store's own writes forward there too (an answer, events), except
``create_run`` and ``update_run``, which belong to the runner (``UsageError``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing, asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio
from temporalio.client import Client

from interactions import RunError, UnknownInteractionError, UnknownRunError, UsageError
from interactions.store import (
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewRun,
    RunRecord,
    RunStatus,
    Store,
    utc_now,
)
from recipes.temporal._address import EngineAddress
from recipes.temporal._calls import Closed, snapshot, update
from recipes.temporal._feed import follow, time_cursor, visible_runs
from recipes.temporal._wire import AnswerRequest, EventsRequest, Snapshot

if TYPE_CHECKING:
    from recipes.temporal._runner import TemporalRunner

__all__ = ["TemporalStore"]

logger = logging.getLogger("recipes.temporal")

_READS_AT_ONCE = 16
_NO_EVENTS = 2**63 - 1
"""The largest seq a store holds: the snapshot of a run asked for its events after it has
none."""


class TemporalStore(Store):
    """A :class:`~interactions.store.Store` over the runs of one Temporal namespace and task
    queue (see the module docstring). ``query_timeout`` bounds each read (no worker answering
    is a ``StoreUnavailableError``); ``poll`` is the feed's interval."""

    def __init__(
        self,
        client: Client,
        address: EngineAddress,
        *,
        query_timeout: float = 10.0,
        accept_timeout: float = 30.0,
        leg_timeout: float = 3600.0,
        poll: float = 0.5,
    ) -> None:
        self.client = client
        self.address = address
        self.query_timeout = query_timeout
        self.accept_timeout = accept_timeout
        self.leg_timeout = leg_timeout
        self.poll = poll
        self._closed = False

    def make_runner(self, **options: Any) -> TemporalRunner:
        """The runner of this engine's runs (``Runner``'s options)."""
        from recipes.temporal._runner import TemporalRunner

        return TemporalRunner(self, **options)

    # -- engine calls -------------------------------------------------------------------------

    async def snapshot(self, run_id: str, after_seq: int = 0) -> Snapshot:
        """The run as its workflow holds it; ``UnknownRunError`` when there is none (or its
        start was refused)."""
        self._check_open()
        found = await snapshot(self.client, self.address, run_id, after_seq, self.query_timeout)
        if found.run is None:
            raise UnknownRunError(f"no run {run_id!r} on this engine", run_id=run_id,
                                  reason="unknown_run")  # fmt: skip
        return found

    async def call(self, run_id: str, name: str, request: dict[str, Any]) -> Any:
        """Send the update ``name`` to the run's workflow (see ``_calls.update``)."""
        self._check_open()
        return await update(
            self.client,
            self.address,
            run_id,
            name,
            request,
            accept_timeout=self.accept_timeout,
            leg_timeout=self.leg_timeout,
        )

    # -- runs ---------------------------------------------------------------------------------

    async def create_run(self, new: NewRun) -> RunRecord:
        raise UsageError("runs on the Temporal engine are started by its runner (runner_for)")

    async def get_run(self, run_id: str) -> RunRecord:
        run, _ = await self.get_run_with_interactions(run_id)
        return run

    async def get_run_with_interactions(
        self, run_id: str
    ) -> tuple[RunRecord, list[InteractionRecord]]:
        """Both from one query of the run's workflow (which holds them in request order),
        without its events."""
        found = await self.snapshot(run_id, _NO_EVENTS)
        assert found.run is not None
        return found.run, found.interactions

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
        if limit < 1:
            raise UsageError(f"limit must be >= 1, got {limit}")
        self._check_open()
        clause = f" AND PiRunStatus = '{RunStatus(status).value}'" if status else ""
        found = await visible_runs(self.client, self.address, clause)
        found.sort(key=lambda r: (r[1], r[0]), reverse=not oldest_first)
        ids = [run_id for run_id, _, _ in found]
        if after is not None:
            ids = ids[ids.index(after) + 1 :] if after in ids else []
        runs: list[RunRecord] = []
        for start in range(0, len(ids), _READS_AT_ONCE):
            for run in await self._runs(ids[start : start + _READS_AT_ONCE]):
                if (
                    (thread_id is None or run.thread_id == thread_id)
                    and (status is None or run.status is status)
                    and (kind is None or run.kind == kind)
                    and (ref is None or run.ref == ref)
                    and (answered_by is None or await self._answered(run.id, answered_by))
                ):
                    runs.append(run)
            if len(runs) >= limit:
                break
        return runs[:limit]

    async def _answered(self, run_id: str, who: str) -> bool:
        """Whether ``who`` answered one of the run's interactions (the engine keeps no votes
        of its own: a quorum's answer names its voters)."""
        _, interactions = await self.get_run_with_interactions(run_id)
        return any(
            r.answer is not None and who in (r.answer.answered_by or "").split(", ")
            for r in interactions
        )

    async def update_run(self, run_id: str, **changes: Any) -> RunRecord:
        raise UsageError("runs on the Temporal engine change through its runner (runner_for)")

    # -- interactions -------------------------------------------------------------------------

    async def get_interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        _, interactions = await self.get_run_with_interactions(run_id)
        for record in interactions:
            if record.id == interaction_id:
                return record
        raise UnknownInteractionError(
            f"run {run_id!r} has no interaction {interaction_id!r}",
            run_id=run_id,
            interaction_id=interaction_id,
            reason="unknown_interaction",
        )

    async def list_interactions(
        self, run_id: str | None = None, *, pending: bool | None = None
    ) -> list[InteractionRecord]:
        if run_id is not None:
            _, records = await self.get_run_with_interactions(run_id)
        else:
            clause = " AND PiOpenInteractions IS NOT NULL" if pending else ""
            ids = [run for run, _, _ in await visible_runs(self.client, self.address, clause)]
            records = []
            for start in range(0, len(ids), _READS_AT_ONCE):
                for found in await self._snapshots(ids[start : start + _READS_AT_ONCE]):
                    records += found.interactions
            records.sort(key=lambda r: (r.requested_at, r.run_id, r.id))
        return [r for r in records if pending is None or r.pending == pending]

    async def answer_interaction(
        self,
        run_id: str,
        interaction_id: str,
        answer: InteractionAnswer,
        *,
        now: datetime | None = None,
    ) -> tuple[InteractionRecord, bool]:
        if now is not None:
            raise UsageError("the Temporal engine answers on its own clock; pass no now=")
        request = AnswerRequest(
            interaction_id=interaction_id,
            status=answer.status,
            payload=answer.payload,
            answered_by=answer.answered_by,
            via=answer.via or "api",
        )
        from recipes.runs import AnswerResult

        try:
            data = await self.call(run_id, "answer", request.model_dump(mode="json"))
        except Closed:
            from recipes.temporal._closed import closed_answer

            data = closed_answer(await self.snapshot(run_id), request).model_dump(mode="json")
        done = AnswerResult.model_validate(data)
        return done.interaction, done.created

    # -- events -------------------------------------------------------------------------------

    async def append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        try:
            request = EventsRequest(events=[(t, dict(d)) for t, d in events])
        except (TypeError, ValueError) as exc:
            raise UsageError(
                f"events are (type, data) pairs with JSON-object data: {exc}"
            ) from None
        try:
            data = await self.call(run_id, "append_events", request.model_dump(mode="json"))
        except Closed:
            raise UsageError(f"run {run_id} has ended; its events can no longer change") from None
        return [EventRecord.model_validate(e) for e in data]

    async def list_events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        return (await self.snapshot(run_id, max(after_seq, 0))).events

    async def wait_for_events(
        self, run_id: str, *, after_seq: int, timeout: float
    ) -> list[EventRecord]:
        if not (0 <= timeout < 10**9):
            raise UsageError(f"timeout must be a finite number of seconds >= 0, got {timeout!r}")
        with anyio.move_on_after(timeout):
            while True:
                found = await self.list_events(run_id, after_seq)
                if found:
                    return found
                await anyio.sleep(self.poll)
        return await self.list_events(run_id, after_seq)

    @asynccontextmanager
    async def watch(self, *, after: int = 0) -> AsyncIterator[AsyncIterator[EventRecord]]:
        self._check_open()
        feed = follow(self.client, self.address, after, self._readable, self.poll)
        async with aclosing(feed):
            yield feed

    async def latest_cursor(self) -> int:
        """A cursor past every event already written (the time now)."""
        return time_cursor(utc_now())

    # -- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError("this TemporalStore is closed; open the engine again")

    async def _readable(self, run_id: str, after_seq: int = 0) -> Snapshot:
        """The run's snapshot for a listing or the feed; empty for a run that was refused, or
        that its worker cannot read (a replay that diverges, say): the rest are listed, as the
        SQL stores skip an unreadable row, and reading that run still raises."""
        try:
            return await self.snapshot(run_id, after_seq)
        except UnknownRunError:
            return Snapshot()  # listed, but its start was refused
        except RunError as exc:
            if exc.reason != "engine":  # Temporal or its workers out of reach: no listing
                raise
            logger.warning("run %s is left out: %s", run_id, exc)
            return Snapshot()

    async def _snapshots(self, ids: Sequence[str]) -> list[Snapshot]:
        found: dict[str, Snapshot] = {}

        async def read(run_id: str) -> None:
            found[run_id] = await self._readable(run_id)

        async with anyio.create_task_group() as reads:
            for run_id in ids:
                reads.start_soon(read, run_id)
        return [found[i] for i in ids if found[i].run is not None]

    async def _runs(self, ids: Sequence[str]) -> list[RunRecord]:
        return [s.run for s in await self._snapshots(ids) if s.run is not None]
