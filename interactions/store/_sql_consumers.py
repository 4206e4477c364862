"""Consumers of the feed over a SQL backend: the statements (:class:`ConsumerSql`, written once
over a :class:`~._sql_codec.SqlCodec` for SQLite and PostgreSQL) and the store's methods
(:class:`SqlConsumers`), each call one transaction.

A call reads the consumer's row under the write's lock (PostgreSQL: ``FOR UPDATE``; SQLite:
``BEGIN IMMEDIATE`` holds the file), decides with :mod:`._consumers`, and writes. Owners racing
for a consumer that is not stored yet both insert it: the primary key keeps the first, and the
other, inserting nothing, finds it held.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from interactions.store._consumer_base import ConsumersBase
from interactions.store._consumers import ConsumerState, plan_advance, plan_lease
from interactions.store._sql_codec import SqlCodec
from interactions.store._threaded import ConnT, ThreadedStore

__all__ = ["ConsumerSql", "SqlConsumers"]


class ConsumerSql:
    """The statements of consumers in the dialect of ``codec``; ``lock_rows``: read a row
    ``FOR UPDATE`` (PostgreSQL; SQLite's writer holds the whole file)."""

    def __init__(self, codec: SqlCodec, *, lock_rows: bool) -> None:
        self._codec = codec
        m = codec.mark
        self._select = (
            f"SELECT name, cursor, owner, lease_until FROM consumers WHERE name = {m}"
            + (" FOR UPDATE" if lock_rows else "")
        )
        self._insert = (
            f"INSERT INTO consumers (name, cursor, owner, lease_until) VALUES ({m}, {m}, {m}, "
            f"{m}) ON CONFLICT (name) DO NOTHING RETURNING name"
        )
        self._update = (
            f"UPDATE consumers SET cursor = {m}, owner = {m}, lease_until = {m} WHERE name = {m}"
        )

    def find(self, conn: Any, name: str) -> ConsumerState | None:
        """The consumer's row (locked where rows are), or ``None``."""
        row = conn.execute(self._select, [name]).fetchone()
        if row is None:
            return None
        until = self._codec.time_out(row["lease_until"])
        return ConsumerState(str(row["name"]), int(row["cursor"]), str(row["owner"]), until)

    def insert(self, conn: Any, state: ConsumerState) -> bool:
        """Insert ``state``; whether it was (``False``: a racing writer inserted it first)."""
        values = (state.name, state.cursor, state.owner, self._codec.time_in(state.lease_until))
        return bool(conn.execute(self._insert, values).fetchall())

    def update(self, conn: Any, state: ConsumerState) -> None:
        """Store ``state`` over the consumer's row."""
        until = self._codec.time_in(state.lease_until)
        conn.execute(self._update, (state.cursor, state.owner, until, state.name))


class SqlConsumers(ThreadedStore[ConnT], ConsumersBase):
    """The :class:`~interactions.store.ConsumerStore` over a SQL backend (see the module
    docstring). The store sets ``_consumer_sql``."""

    _consumer_sql: ConsumerSql

    async def _lease_consumer(
        self, name: str, owner: str, lease: float, start: int, now: datetime | None
    ) -> int | None:
        sql = self._consumer_sql

        def tx(conn: ConnT) -> int | None:
            at = now or self._clock()
            stored = sql.find(conn, name)
            state = plan_lease(stored, name, owner, lease, start, at)
            if state is None:
                return None
            if stored is None:
                return state.cursor if sql.insert(conn, state) else None
            sql.update(conn, state)
            return state.cursor

        return await self._write(tx)

    async def _advance_consumer(
        self, name: str, owner: str, cursor: int, now: datetime | None
    ) -> None:
        sql = self._consumer_sql

        def tx(conn: ConnT) -> None:
            state = plan_advance(sql.find(conn, name), name, owner, cursor, now or self._clock())
            if state is not None:
                sql.update(conn, state)

        await self._write(tx)
