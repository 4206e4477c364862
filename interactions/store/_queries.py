"""SQL both database backends share, written once with the driver's placeholder."""

from __future__ import annotations

from typing import Any

from interactions.store._status import RunStatus

__all__ = ["runs_query"]


def runs_query(
    columns: str,
    mark: str,
    *,
    status: RunStatus | None,
    thread_id: str | None,
    after: str | None,
    oldest_first: bool,
    limit: int,
) -> tuple[str, list[Any]]:
    """The ``SELECT`` of up to ``limit`` runs, newest first (or oldest first), maybe only those
    in ``status`` and/or of ``thread_id``, after the run ``after`` in that order (ties broken by
    the stable integer key ``pos``), and its parameters; ``mark`` is the placeholder."""
    clauses: list[str] = []
    params: list[Any] = []
    if status is not None:
        clauses.append(f"status = {mark}")
        params.append(status.value)
    if thread_id is not None:
        clauses.append(f"thread_id = {mark}")
        params.append(thread_id)
    if after is not None:
        sign = ">" if oldest_first else "<"
        start = f"(SELECT created_at, pos FROM runs WHERE id = {mark})"
        clauses.append(f"(created_at, pos) {sign} {start}")
        params.append(after)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    order = "ASC" if oldest_first else "DESC"
    ordering = f"ORDER BY created_at {order}, pos {order}"
    sql = f"SELECT {columns} FROM runs {where} {ordering} LIMIT {mark}"
    return sql, [*params, limit]
