"""Records to SQL rows and back, in the dialect of one database: written once for both.

:class:`SqlCodec` is parametrized by what differs in how SQLite and PostgreSQL keep the same
record: the placeholder; how a JSON value travels (canonical text, cast to ``json`` on
PostgreSQL) and comes back (text to parse, or parsed by the driver); how a timestamp is kept
(integer microseconds, or ``timestamptz``); which column orders rows of equal timestamps by
insertion (``rowid``, or the identity column ``pos``); how an event names its run; and what a
lookup key no row can hold becomes. From these it builds the statements' text, their
parameters, and the records their rows hold. Pure: nothing here touches a connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, ClassVar

from interactions.store._records import (
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    RunRecord,
    canonical_json,
    read_row,
    read_rows,
    trusted,
)
from interactions.store._refusals import unknown_run
from interactions.store._rules import Event

__all__ = ["INTERACTION", "RUN", "SqlCodec", "appended"]

RUN = (
    "id, thread_id, kind, ref, agent, model_name, parent_run_id, node_id, status, checkpoint, "
    "version, created_at, updated_at, error"
)
INTERACTION = (
    "run_id, id, node_id, tool_call_id, kind, requested_at, expires_at, descriptor, "
    "answered_at, answer_status, answer_payload, answered_by, answered_via"
)
_JSON_COLUMNS = frozenset({"checkpoint", "descriptor", "answer_payload"})


def _interaction_key(row: Any) -> str:
    return f"{row['run_id']}/{row['id']}"


class SqlCodec:
    """Records to rows and back in one dialect: the class attributes and the value conversions
    a subclass sets (see the module docstring)."""

    mark: ClassVar[str]
    """The driver's placeholder."""
    json_cast: ClassVar[str]
    """What follows the placeholder of a JSON value: the type the text sent is cast to."""
    tie: ClassVar[str]
    """The column that orders rows of equal timestamps by insertion."""
    events_from: ClassVar[str]
    """The ``FROM`` of an event read, which must give the columns :attr:`event_columns` names."""
    event_columns: ClassVar[str]
    """An event's columns as read back: ``run_id, seq, cursor, type, data, at``."""
    event_run: ClassVar[str]
    """The column of :attr:`events_from` holding an event's run id."""

    def time_in(self, value: datetime | None) -> Any:
        """A timestamp as the database keeps it."""
        raise NotImplementedError

    def time_out(self, value: Any) -> Any:
        """A timestamp as the database gave it, as a record field takes it."""
        raise NotImplementedError

    def json_out(self, value: Any) -> Any:
        """A JSON column as the database gave it, parsed."""
        raise NotImplementedError

    def key(self, text: str) -> str | None:
        """``text`` as a lookup parameter; ``None`` (which matches nothing) for a value no row
        can hold, so the lookup finds nothing instead of failing in the driver."""
        raise NotImplementedError

    def __init__(self) -> None:
        m, j = self.mark, f"{self.mark}{self.json_cast}"

        def values(columns: str) -> str:
            names = [name.strip() for name in columns.split(",")]
            return ", ".join(j if name in _JSON_COLUMNS else m for name in names)

        self.run_head = RUN.replace("checkpoint", f"'{{}}'{self.json_cast} AS checkpoint")
        """A run's columns without its checkpoint (read as ``{}``): for a write replacing it."""
        self.insert_run_sql = (
            f"INSERT INTO runs ({RUN}) VALUES ({values(RUN)}) ON CONFLICT (id) DO NOTHING"
        )
        """Insert :meth:`run_values`; a taken id is left as it is."""
        self.insert_interaction_sql = (
            f"INSERT INTO interactions ({INTERACTION}) VALUES ({values(INTERACTION)})"
        )
        self.update_run_sql = (
            f"UPDATE runs SET status = {m}, error = {m}, checkpoint = COALESCE({j}, checkpoint), "
            f"version = {m}, updated_at = {m} WHERE id = {m} AND version = {m}"
        )
        """Compare-and-set a run row to :meth:`update_values` (guard: the version before)."""
        self.store_answer_sql = (
            f"UPDATE interactions SET answered_at = {m}, answer_status = {m}, answer_payload = "
            f"{j}, answered_by = {m}, answered_via = {m} "
            f"WHERE run_id = {m} AND id = {m} AND answer_status IS NULL"
        )
        """Store :meth:`answer_values` (guard: no answer yet, so none ever overwrites another)."""
        self.interactions_sql = f"SELECT {INTERACTION} FROM interactions"
        self.request_order = f"ORDER BY requested_at, {self.tie}"
        self.events_sql = f"SELECT {self.event_columns} FROM {self.events_from}"

    # -- records to rows ----------------------------------------------------------------------

    def run_values(self, run: RunRecord, checkpoint_json: str) -> tuple[Any, ...]:
        """The parameters of :attr:`insert_run_sql` (``checkpoint_json``: the checkpoint's
        canonical text)."""
        return (
            run.id,
            run.thread_id,
            run.kind,
            run.ref,
            run.agent,
            run.model_name,
            run.parent_run_id,
            run.node_id,
            run.status.value,
            checkpoint_json,
            run.version,
            self.time_in(run.created_at),
            self.time_in(run.updated_at),
            run.error,
        )

    def update_values(self, run: RunRecord, checkpoint_json: str | None) -> tuple[Any, ...]:
        """The parameters of :attr:`update_run_sql`: the run row from ``run.version - 1`` to
        ``run`` (``checkpoint_json``: the new checkpoint's canonical text; ``None``: kept)."""
        return (
            run.status.value,
            run.error,
            checkpoint_json,
            run.version,
            self.time_in(run.updated_at),
            run.id,
            run.version - 1,
        )

    def interaction_values(self, record: InteractionRecord) -> tuple[Any, ...]:
        """The parameters of :attr:`insert_interaction_sql` (with its answer if it has one)."""
        return (
            record.run_id,
            record.id,
            record.node_id,
            record.tool_call_id,
            record.kind,
            self.time_in(record.requested_at),
            self.time_in(record.expires_at),
            canonical_json(record.descriptor),
            self.time_in(record.answered_at),
            *_answer_values(record.answer),
        )

    def answer_values(self, record: InteractionRecord) -> tuple[Any, ...]:
        """The parameters of :attr:`store_answer_sql`: ``record``'s answer, and its keys."""
        answered = (self.time_in(record.answered_at), *_answer_values(record.answer))
        return (*answered, record.run_id, record.id)

    # -- rows to records ----------------------------------------------------------------------

    def _fields(self, row: Any, times: tuple[str, ...], json: tuple[str, ...]) -> dict[str, Any]:
        """``row`` by column name, its timestamps and JSON values read back (``NULL`` stays
        ``None``)."""
        fields = dict(row)
        for name in times:
            fields[name] = None if fields[name] is None else self.time_out(fields[name])
        for name in json:
            fields[name] = None if fields[name] is None else self.json_out(fields[name])
        return fields

    def read_run(self, row: Any) -> RunRecord:
        """The run a row of :data:`RUN` holds (raising what a malformed row makes fail)."""
        fields = self._fields(row, ("created_at", "updated_at"), ("checkpoint",))
        return trusted(RunRecord, **fields)

    def read_interaction(self, row: Any) -> InteractionRecord:
        """The interaction a row of :data:`INTERACTION` holds, its answer in the last four."""
        fields = self._fields(
            row, ("requested_at", "expires_at", "answered_at"), ("descriptor", "answer_payload")
        )
        status, payload = fields.pop("answer_status"), fields.pop("answer_payload")
        by, via = fields.pop("answered_by"), fields.pop("answered_via")
        answer = None
        if status is not None:
            answer = trusted(
                InteractionAnswer, status=status, payload=payload, answered_by=by, via=via
            )
        return trusted(InteractionRecord, **fields, answer=answer)

    def read_event(self, row: Any) -> EventRecord:
        """The event a row of :attr:`event_columns` holds."""
        return trusted(EventRecord, **self._fields(row, ("at",), ("data",)))

    def one_run(self, row: Any | None, run_id: str) -> RunRecord:
        """The run of a lookup's row: ``UnknownRunError`` for no row, a ``RunError`` (reason
        ``unreadable``) for one this version cannot read."""
        if row is None:
            raise unknown_run(run_id)
        run: RunRecord = read_row(self.read_run, row, "run", run_id)
        return run

    def interactions(self, rows: Any) -> list[InteractionRecord]:
        """The interactions of ``rows`` (one this version cannot read is skipped, logged)."""
        return read_rows(self.read_interaction, rows, "interaction", _interaction_key)


def appended(
    run_id: str, numbers: Iterable[tuple[int, int]], events: Sequence[Event], at: datetime
) -> list[EventRecord]:
    """The records of ``events`` appended to the run at ``at``, numbered ``(seq, cursor)`` in
    order by ``numbers``."""
    return [
        trusted(EventRecord, run_id=run_id, seq=seq, cursor=cursor, type=t, data=d, at=at)
        for (seq, cursor), (t, d) in zip(numbers, events, strict=True)
    ]


def _answer_values(answer: InteractionAnswer | None) -> tuple[Any, ...]:
    if answer is None:
        return (None, None, None, None)
    return (answer.status, canonical_json(answer.payload), answer.answered_by, answer.via)
