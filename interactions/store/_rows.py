"""What a SQL backend's rows are to the store that runs them: the :class:`Rows` protocol, the
:data:`Later` a write's statement returns, and :class:`Stale`, the failure of a write decided on
what the store last wrote."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol, TypeAlias, TypeVar

from interactions.store._queries import InteractionsQuery, RunsQuery
from interactions.store._records import EventRecord, InteractionRecord, RunRecord
from interactions.store._rules import Event

__all__ = ["Later", "Rows", "Stale"]

T = TypeVar("T")
ConnT_contra = TypeVar("ConnT_contra", contravariant=True)


class Stale(Exception):
    """A write decided on what the store last wrote failed a guard in its transaction (the run
    moved on, or an interaction was answered, elsewhere): nothing was written; decide again on
    what the store holds."""


Later: TypeAlias = Callable[[], T]
"""A statement's result, read when called (raising what the statement's result says is wrong).
A backend that pipelines sends the statement at once and waits for the server only when a
result is asked for: everything sent before then comes back in that one round trip."""


class Rows(Protocol[ConnT_contra]):
    """The statements a backend's rows run, inside the caller's transaction.

    Reads (``get_run`` to ``last_cursor``) return their result; ``get_run_with_interactions``
    reads the run and all its interactions at one moment (one transaction, or one statement).
    The statements of a write (``lock_run`` on) are sent when called and return a :data:`Later`
    for their result: ``lock_run`` locks the run until commit where the backend needs it (its
    Later returns the run or raises ``UnknownRunError``); ``find_interactions`` reads the run's
    interactions in request order (``ids=None``: all of them); ``insert_run``'s Later is
    ``False`` (nothing written) when the id is taken, unless the backend fails the transaction
    with :class:`Stale` for it instead (PostgreSQL: no wait for the server before the commit);
    the Laters of ``update_run_row`` and ``store_answer`` are their guards (``ConflictError``),
    except when ``strict`` (a write decided without reading the run): a guard that fails then
    fails the transaction with :class:`Stale`, at the latest when it commits; ``append_events``
    notifies ``channel`` where the backend has one. A write's Later need not be called: its
    failure surfaces at commit at the latest. The rest as documented in ``_sql_rows``,
    ``_sqlite_rows`` and ``_postgres_rows``.
    """

    def get_run(
        self, conn: ConnT_contra, run_id: str, /, *, checkpoint: bool = ...
    ) -> RunRecord: ...
    def get_run_with_interactions(
        self, conn: ConnT_contra, run_id: str, /
    ) -> tuple[RunRecord, list[InteractionRecord]]: ...
    def select_runs(self, conn: ConnT_contra, query: RunsQuery, /) -> list[RunRecord]: ...
    def find_interaction(
        self, conn: ConnT_contra, run_id: str, interaction_id: str, /
    ) -> InteractionRecord | None: ...
    def select_interactions(
        self, conn: ConnT_contra, run_id: str | None, pending: bool | None, /
    ) -> list[InteractionRecord]: ...
    def page_interactions(
        self, conn: ConnT_contra, query: InteractionsQuery, /
    ) -> list[InteractionRecord]: ...
    def select_events(
        self, conn: ConnT_contra, run_id: str, after_seq: int, /
    ) -> list[EventRecord]: ...
    def select_feed(self, conn: ConnT_contra, after: int, limit: int, /) -> list[EventRecord]: ...
    def last_cursor(self, conn: ConnT_contra, /) -> int: ...

    def lock_run(
        self, conn: ConnT_contra, run_id: str, /, *, checkpoint: bool
    ) -> Later[RunRecord]: ...
    def find_interactions(
        self, conn: ConnT_contra, run_id: str, ids: Sequence[str] | None, /
    ) -> Later[list[InteractionRecord]]: ...
    def insert_run(
        self, conn: ConnT_contra, run: RunRecord, checkpoint_json: str, /
    ) -> Later[bool]: ...
    def update_run_row(
        self,
        conn: ConnT_contra,
        run: RunRecord,
        /,
        *,
        checkpoint_json: str | None,
        strict: bool = ...,
    ) -> Later[None]: ...
    def insert_interaction(self, conn: ConnT_contra, record: InteractionRecord, /) -> None: ...
    def store_answer(
        self, conn: ConnT_contra, record: InteractionRecord, /, *, strict: bool = ...
    ) -> Later[None]: ...
    def append_events(
        self,
        conn: ConnT_contra,
        run_id: str,
        events: Sequence[Event],
        at: datetime,
        /,
        *,
        channel: str,
    ) -> Later[list[EventRecord]]: ...
