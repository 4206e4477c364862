"""Which runs a listing asks for (:class:`RunsQuery`), and its SQL, written once with the
driver's placeholder for both database backends."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from interactions.store._status import RunStatus

__all__ = ["InteractionsQuery", "RunsQuery", "runs_query"]


@dataclass(frozen=True)
class RunsQuery:
    """The arguments of :meth:`Store.list_runs` (see the protocol for what each means)."""

    status: RunStatus | None
    limit: int
    oldest_first: bool
    after: str | None
    thread_id: str | None
    kind: str | None = None
    ref: str | None = None
    answered_by: str | None = None

    def texts(self) -> tuple[str | None, ...]:
        """The texts it matches on (a store that cannot hold one finds no run)."""
        return (self.thread_id, self.after, self.kind, self.ref, self.answered_by)


def runs_query(columns: str, mark: str, query: RunsQuery) -> tuple[str, list[Any]]:
    """The ``SELECT`` of up to ``query.limit`` runs, newest first (or oldest first), maybe only
    those in ``query.status``, of ``query.thread_id``, ``query.kind``, ``query.ref``, with an
    interaction ``query.answered_by`` answered or voted on, after the run ``query.after`` in
    that order (ties broken by the stable integer key ``pos``), and its parameters; ``mark``
    is the placeholder."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.status is not None:
        clauses.append(f"status = {mark}")
        params.append(query.status.value)
    for column in ("thread_id", "kind", "ref"):
        value = getattr(query, column)
        if value is not None:
            clauses.append(f"{column} = {mark}")
            params.append(value)
    if query.answered_by is not None:
        answered = f"SELECT run_id FROM interactions WHERE answered_by = {mark}"
        voted = f"SELECT run_id FROM votes WHERE voter = {mark}"
        clauses.append(f"(id IN ({answered}) OR id IN ({voted}))")
        params += [query.answered_by, query.answered_by]
    if query.after is not None:
        sign = ">" if query.oldest_first else "<"
        start = f"(SELECT created_at, pos FROM runs WHERE id = {mark})"
        clauses.append(f"(created_at, pos) {sign} {start}")
        params.append(query.after)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    order = "ASC" if query.oldest_first else "DESC"
    ordering = f"ORDER BY created_at {order}, pos {order}"
    sql = f"SELECT {columns} FROM runs {where} {ordering} LIMIT {query.limit:d}"
    return sql, params


@dataclass(frozen=True)
class InteractionsQuery:
    """The arguments of :meth:`AuditStore.page_interactions` (see the protocol), checked."""

    since: datetime | None
    until: datetime | None
    after: tuple[str, str] | None
    limit: int
