"""The audit export: every interaction of a store, one row each, oldest asked first.

:func:`audit_rows` reads a store (an :class:`~interactions.store.AuditStore`) a page of
interactions at a time and yields one :class:`AuditRow` per interaction: its run (thread,
kind, ref), the question and its options, who could answer and how many approvals it needed,
when it was asked, expires and was answered, the answer (status, payload, who, through which
host), the votes on it, its run's decisions on tool calls (the policy rule that matched, a
remembered decision applied, remembered or revoked), and its reminders and escalation. It
holds one page and a bounded number of runs in memory, so an export of any size runs in
constant memory.

Each row is written as a JSON line (:meth:`AuditRow.json_line`) or as CSV values
(:data:`AUDIT_COLUMNS`, :meth:`AuditRow.csv_values`); ``pi-recipes audit export`` and the web
host's ``GET /api/audit`` write them. :func:`audit_time` reads the ``--since``/``--until``
bounds both take.

Errors: a store that cannot page every run's interactions (the Temporal engine's) and a time
that is no ISO 8601 date or time are :class:`~interactions.UsageError`.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from interactions._errors import PiRecipesError, UsageError
from interactions._models import AskUserInterrupt
from interactions.people import approvers_of, required_approvals_of
from interactions.reminders import INTERACTION_ESCALATED, INTERACTION_REMINDED
from interactions.store import (
    AuditStore,
    EventRecord,
    InteractionRecord,
    Store,
    StoreEventType,
    VoteRecord,
    VoteStore,
)

__all__ = [
    "AUDITED_EVENTS",
    "AUDIT_COLUMNS",
    "PAGE_SIZE",
    "RUNS_KEPT",
    "TOOL_CALL_DECIDED",
    "AuditRow",
    "audit_rows",
    "audit_time",
]

logger = logging.getLogger("interactions.audit")

TOOL_CALL_DECIDED = "tool_call_decided"
"""``recipes.decisions.TOOL_CALL_DECIDED``: a tool call's gate decided (spelled here, as this
package knows nothing of recipes; a test holds them equal)."""

AUDITED_EVENTS = frozenset(
    {
        TOOL_CALL_DECIDED,
        StoreEventType.DECISION_REMEMBERED.value,
        StoreEventType.DECISION_REVOKED.value,
    }
)
"""The events of a run a row lists as its run's decisions."""

PAGE_SIZE = 500
"""Interactions read per page."""

RUNS_KEPT = 256
"""Runs (with their decisions) an export keeps read, the most recently used: interactions of
one run asked close together read it once."""


class AuditRow(BaseModel):
    """One interaction as the audit export writes it. Times are aware UTC ``datetime``s."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    thread_id: str | None
    """The run's AG-UI thread (``None``: the run could not be read)."""
    run_kind: str | None
    """What drives the run (``recipe``, ``graph``...)."""
    ref: str | None
    """What the run executes (a recipe reference, a workflow file)."""
    interaction_id: str
    kind: str
    """``blocking`` (the run paused for it), ``async`` (asked while the run went on) or
    ``await`` (the run's own wait on async questions)."""
    reason: str | None
    """The interrupt's reason: ``input_required``, ``confirmation``, ``tool_call``..."""
    tool_call_id: str
    node_id: str
    title: str | None
    question: str | None
    """The question or approval as asked (the interrupt's message)."""
    options: list[dict[str, Any]]
    """The options offered (``label``, ``value?``, ``description?``)."""
    selection: str | None
    approvers: list[str]
    """Who could answer (names, ``group:NAME``); empty: anyone."""
    required_approvals: int
    asked_at: datetime
    expires_at: datetime
    answered_at: datetime | None
    status: str
    """``pending``, ``resolved``, ``cancelled`` (declined) or ``expired``."""
    payload: Any
    """The answer (``{"answer": ...}``, ``{"approved": ..., "feedback"?}``...), else ``None``."""
    answered_by: str | None
    via: str | None
    """The host that took the answer (``cli``, ``web``, ``slack``...)."""
    votes: list[dict[str, Any]]
    """For an approval that needs several people: each vote (``voter``, ``approved``,
    ``status``, ``payload``, ``via``, ``at``), in the order cast."""
    decisions: list[dict[str, Any]]
    """The run's decisions on tool calls (:data:`AUDITED_EVENTS`): ``type``, ``at`` and the
    event's data (``tool``, ``decision``, ``by``, ``rule``, ``remembered``...), in order."""
    reminders: list[dict[str, Any]] = []
    """Its reminders and escalation (``interaction_reminded``, ``interaction_escalated``):
    ``type``, ``at`` and the event's data (``count``, ``added``, ``approvers``), in order."""

    def json_line(self) -> str:
        """The row as one line of compact JSON (no newline at its end)."""
        return self.model_dump_json()  # compact, UTF-8 as it is, times as ISO 8601 with Z

    def csv_values(self) -> list[str]:
        """The row's values in :data:`AUDIT_COLUMNS` order: text as it is, times in ISO 8601,
        ``None`` as an empty cell, lists, objects and the payload as compact JSON."""
        data = self.model_dump(mode="json")
        return [_cell(name, data[name]) for name in AUDIT_COLUMNS]


AUDIT_COLUMNS: tuple[str, ...] = tuple(AuditRow.model_fields)
"""The CSV header: :class:`AuditRow`'s fields, in order."""

_JSON_CELLS = frozenset({"options", "approvers", "payload", "votes", "decisions", "reminders"})


def _cell(name: str, value: Any) -> str:
    if name in _JSON_CELLS:
        return "" if value is None and name == "payload" else _compact(value)
    return "" if value is None else str(value)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def audit_time(text: str) -> datetime:
    """An export's bound as an aware UTC ``datetime``: an ISO 8601 date (``2026-12-01``,
    midnight UTC) or date and time (``2026-12-01T09:30``, ``...Z``, ``...+02:00``); a time
    without an offset is UTC. Raises :class:`~interactions.UsageError` for anything else."""
    given = text.strip()
    try:
        if len(given) == 10:
            day = date.fromisoformat(given)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        when = datetime.fromisoformat(given)
    except ValueError:
        raise UsageError(
            f"{text!r} is no ISO 8601 date or time: give e.g. 2026-12-01 or "
            "2026-12-01T09:30:00Z (a time without an offset is UTC)"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


async def audit_rows(
    store: Store,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    page_size: int = PAGE_SIZE,
) -> AsyncIterator[AuditRow]:
    """Yield a row per interaction of ``store`` asked at or after ``since`` and before
    ``until`` (aware ``datetime``s; ``None``: no bound), oldest asked first, reading
    ``page_size`` interactions at a time and keeping at most :data:`RUNS_KEPT` runs.

    Raises :class:`~interactions.UsageError` when ``store`` is no
    :class:`~interactions.store.AuditStore`, and what the store's reads raise. An interaction
    whose run cannot be read is still yielded, its run's fields ``None``.
    """
    if not isinstance(store, AuditStore):
        raise UsageError(
            f"this store ({type(store).__name__}) cannot list every run's interactions (a "
            "Temporal engine's cannot): export a SQLite file or a postgresql:// store"
        )
    runs = _Runs(store)
    votes = store if isinstance(store, VoteStore) else None
    after: tuple[str, str] | None = None
    while True:
        page = await store.page_interactions(
            since=since, until=until, after=after, limit=page_size
        )
        for record in page:
            run, decisions, notices = await runs.get(record.run_id)
            asked = _asked(record)
            required = required_approvals_of(asked.metadata)
            cast: list[VoteRecord] = []
            if votes is not None and required > 1:
                cast = await votes.list_votes(record.run_id, record.id)
            yield _row(record, run, asked, required, cast, decisions, notices.get(record.id, []))
        if len(page) < page_size:
            return
        after = (page[-1].run_id, page[-1].id)


_NOTICES = (INTERACTION_REMINDED, INTERACTION_ESCALATED)

_Kept = tuple["_Run | None", list[dict[str, Any]], dict[str, list[dict[str, Any]]]]
"""A run an export read: the run, its decisions, its reminders by interaction."""


@dataclass(frozen=True)
class _Run:
    """What a row says of its run (not its checkpoint, which may be large)."""

    thread_id: str
    kind: str
    ref: str


class _Runs:
    """The runs an export read, with their decisions: the :data:`RUNS_KEPT` most recently
    used, each without its checkpoint."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._kept: OrderedDict[str, _Kept] = OrderedDict()

    async def get(self, run_id: str) -> _Kept:
        kept = self._kept.get(run_id)
        if kept is not None:
            self._kept.move_to_end(run_id)
            return kept
        try:
            record = await self._store.get_run(run_id)
            events = await self._store.list_events(run_id)
        except PiRecipesError as exc:  # a run this version cannot read: its rows go out bare
            logger.warning("audit: run %s: %s", run_id, exc)
            kept = None, [], {}
        else:
            run = _Run(record.thread_id, record.kind, record.ref)
            notices: dict[str, list[dict[str, Any]]] = {}
            for event in events:
                if event.type in _NOTICES:
                    said = _decision(event)
                    notices.setdefault(str(said.pop("interaction_id", "")), []).append(said)
            decisions = [_decision(event) for event in events if event.type in AUDITED_EVENTS]
            kept = run, decisions, notices
        self._kept[run_id] = kept
        if len(self._kept) > RUNS_KEPT:
            self._kept.popitem(last=False)
        return kept


def _decision(event: EventRecord) -> dict[str, Any]:
    said = {"type": event.type, "at": event.at.isoformat()}
    return said | {k: v for k, v in event.data.items() if k not in said}


@dataclass(frozen=True)
class _Asked:
    """What a row says of the question, read from the interaction's stored descriptor."""

    reason: str | None
    message: str | None
    title: str | None
    options: list[dict[str, Any]]
    selection: str | None
    metadata: Mapping[str, Any]


def _asked(record: InteractionRecord) -> _Asked:
    """The question as the typed pause record reads it (without deriving its response schema,
    which a row does not show); read from the stored descriptor as it is when this version
    cannot read it as one."""
    try:
        interrupt = AskUserInterrupt.model_validate({"id": record.id, **record.descriptor})
    except ValidationError:
        said = record.descriptor
        display, options, metadata = said.get("display"), said.get("options"), said.get("metadata")
        return _Asked(
            _text(said.get("reason")),
            _text(said.get("message")),
            _text(display.get("title")) if isinstance(display, dict) else None,
            [o for o in options if isinstance(o, dict)] if isinstance(options, list) else [],
            _text(said.get("selection")),
            metadata if isinstance(metadata, dict) else {},
        )
    return _Asked(
        interrupt.reason,
        interrupt.message,
        interrupt.display.title if interrupt.display else None,
        [option.model_dump(mode="json", exclude_none=True) for option in interrupt.options],
        interrupt.selection,
        interrupt.metadata or {},
    )


def _row(
    record: InteractionRecord,
    run: _Run | None,
    asked: _Asked,
    required: int,
    votes: list[VoteRecord],
    decisions: list[dict[str, Any]],
    reminders: list[dict[str, Any]],
) -> AuditRow:
    answer = record.answer
    return AuditRow.model_construct(  # every value is a store's, read and checked already
        run_id=record.run_id,
        thread_id=run.thread_id if run else None,
        run_kind=run.kind if run else None,
        ref=run.ref if run else None,
        interaction_id=record.id,
        kind=record.kind or "blocking",
        reason=asked.reason,
        tool_call_id=record.tool_call_id,
        node_id=record.node_id,
        title=asked.title,
        question=asked.message,
        options=asked.options,
        selection=asked.selection,
        approvers=list(approvers_of(asked.metadata)),
        required_approvals=required,
        asked_at=record.requested_at,
        expires_at=record.expires_at,
        answered_at=record.answered_at,
        status="pending" if answer is None else answer.status,
        payload=None if answer is None else answer.payload,
        answered_by=None if answer is None else answer.answered_by,
        via=None if answer is None else answer.via,
        votes=[_vote(vote) for vote in votes],
        decisions=decisions,
        reminders=reminders,
    )


def _vote(vote: VoteRecord) -> dict[str, Any]:
    said = {"voter": vote.voter, "approved": vote.approved, "status": vote.status}
    return said | {"payload": vote.payload, "via": vote.via, "at": vote.at.isoformat()}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
