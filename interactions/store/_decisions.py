"""Remembered approval decisions: their records and the rules every store keeps for them.

An approver may answer "approve, and don't ask again" (or "deny always") for a tool, scoped to
the run or to its thread, maybe only for the same arguments. Such a *decision* is stored (see
:class:`~interactions.store.DecisionStore`), seen by every process on the store, audited by an
event of the run whose approval made it, and revocable. What to write and which error to
raise are the pure functions below, shared by every backend; nothing here does I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ValidationInfo

from interactions._errors import UnknownDecisionError, UsageError
from interactions._payloads import MAX_PAYLOAD_BYTES
from interactions.store._checks import check_now
from interactions.store._records import (
    _FROZEN,
    Id,
    StoreEventType,
    Text,
    UtcDatetime,
    _trusted,
    canonical_json,
    check_text,
    normalize_json,
    trusted,
)
from interactions.store._rules import Event

__all__ = [
    "MAX_DECISION_ARGS_BYTES",
    "DecisionAction",
    "DecisionRecord",
    "DecisionScope",
    "DecisionsQuery",
    "NewDecision",
    "applies",
    "check_decision",
    "check_revoker",
    "decision_id",
    "plan_remember",
    "plan_revoke",
    "select_decisions",
    "unknown_decision",
]

DecisionAction = Literal["allow", "deny"]
"""What a decision does to a call it covers: let it run without asking, or refuse it."""
DecisionScope = Literal["run", "thread"]
"""Which calls a decision covers: those of the run that made it, or of every run of its thread."""

MAX_DECISION_ARGS_BYTES = MAX_PAYLOAD_BYTES
"""The largest ``args`` a decision keeps, as canonical JSON (UTF-8 bytes): what a resume's
payload may be."""


def decision_id(run_id: str, interaction_id: str) -> str:
    """The stable id of the decision the approval ``interaction_id`` of ``run_id`` made:
    ``"dec-"`` and 12 hex characters of ``sha256(run_id + "\\0" + interaction_id)``."""
    digest = hashlib.sha256(f"{run_id}\0{interaction_id}".encode("utf-8", "surrogatepass"))
    return f"dec-{digest.hexdigest()[:12]}"


def _tool_name(value: str, info: ValidationInfo) -> str:
    if _trusted(info):
        return value
    check_text(value, "tool")
    if not value.strip():
        raise UsageError(f"tool must name a tool, got {value!r}")
    return value


def _args_value(value: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
    if value is None or _trusted(info):
        return value
    return _checked_args(value)[0]


def _checked_args(value: Any) -> tuple[dict[str, Any], str]:
    """``value`` normalized and its canonical JSON text; ``UsageError`` if it is no JSON object
    or larger than :data:`MAX_DECISION_ARGS_BYTES`."""
    if not isinstance(value, Mapping):
        raise UsageError(f"args is a JSON object (a mapping) or None, got {type(value).__name__}")
    text = canonical_json(dict(value))
    if len(text.encode("utf-8")) > MAX_DECISION_ARGS_BYTES:
        raise UsageError(
            f"args is larger than {MAX_DECISION_ARGS_BYTES} bytes as JSON; remember the decision "
            "for any arguments (args=None) instead"
        )
    normalized: dict[str, Any] = normalize_json(dict(value))
    return normalized, text


ToolName = Annotated[str, AfterValidator(_tool_name)]
Args = Annotated[dict[str, Any] | None, AfterValidator(_args_value)]


class NewDecision(BaseModel):
    """What :meth:`DecisionStore.remember_decision` needs. The store adds id and time."""

    model_config = _FROZEN

    run_id: Id
    """The run whose approval decided it (its audit event is appended there)."""
    interaction_id: Id
    """The approval answered: at most one decision per ``(run_id, interaction_id)``."""
    thread_id: Id
    """The run's thread (what scope ``thread`` covers)."""
    tool: ToolName
    """The tool's name (not blank)."""
    action: DecisionAction
    scope: DecisionScope
    args: Args = None
    """Only calls with exactly these arguments (canonical JSON equal); ``None``: any."""
    decided_by: Text | None = None
    """Who answered (the host's identity), ``None`` if unknown."""
    reason: Text | None = None
    """The approver's feedback, if any."""


class DecisionRecord(NewDecision):
    """One decision as stored."""

    id: Id
    """``"dec-"`` + 12 hex characters of ``sha256(run_id + "\\0" + interaction_id)``
    (:func:`decision_id`): stable, so a replay finds it."""
    created_at: UtcDatetime
    revoked_at: UtcDatetime | None = None
    revoked_by: Text | None = None

    @property
    def active(self) -> bool:
        """``True`` until the decision is revoked."""
        return self.revoked_at is None

    def covers(self, run_id: str, thread_id: str, tool: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this decision applies to a call of ``tool`` with ``arguments`` in the run
        ``run_id`` of thread ``thread_id``: it is active, names that tool, its scope matches
        (``run``: that run; ``thread``: that thread), and its ``args`` are ``None`` or equal
        ``arguments`` as canonical JSON. Arguments that are not JSON are covered by no
        decision that names arguments (asking is the safe answer)."""
        if not (self.active and self.tool == tool and applies(self, run_id, thread_id)):
            return False
        if self.args is None:
            return True
        try:
            return canonical_json(dict(arguments)) == canonical_json(self.args)
        except (UsageError, TypeError, ValueError):
            return False


def applies(record: DecisionRecord, run_id: str, thread_id: str) -> bool:
    """Whether ``record``'s scope takes in a call of run ``run_id`` in thread ``thread_id``
    (whatever its tool, arguments or state)."""
    if record.scope == "run":
        return record.run_id == run_id
    return record.thread_id == thread_id


def check_decision(new: NewDecision) -> str | None:
    """Check ``new`` again, as a store must of a value it did not build (one made with
    ``model_construct`` skips its validators); return its ``args`` as canonical JSON text
    (``None``: any arguments). Raises :class:`~interactions.UsageError` for a blank tool, text
    a store cannot keep, an unknown action or scope, or args that are not a JSON object or are
    too large."""
    for name in ("run_id", "interaction_id", "thread_id"):
        value = getattr(new, name)
        if not isinstance(value, str) or not value:
            raise UsageError(f"{name} must be a non-empty string, got {value!r}")
        check_text(value, name)
    tool = new.tool
    if not isinstance(tool, str) or not tool.strip():
        raise UsageError(f"tool must name a tool, got {tool!r}")
    check_text(tool, "tool")
    for name in ("decided_by", "reason"):
        value = getattr(new, name)
        if value is not None:
            if not isinstance(value, str):
                raise UsageError(f"{name} must be text or None, got {type(value).__name__}")
            check_text(value, name)
    if new.action not in get_args(DecisionAction):
        raise UsageError(f"action must be 'allow' or 'deny', got {new.action!r}")
    if new.scope not in get_args(DecisionScope):
        raise UsageError(f"scope must be 'run' or 'thread', got {new.scope!r}")
    return None if new.args is None else _checked_args(new.args)[1]


def plan_remember(
    new: NewDecision, stored: DecisionRecord | None, now: datetime
) -> tuple[DecisionRecord, Event | None]:
    """Decide one decision: the first for its ``(run_id, interaction_id)`` stands.

    ``stored`` is the decision already kept for that pair, if any: it is returned with
    ``None`` (nothing to write), whatever ``new`` says. Else the record to insert and its
    ``decision_remembered`` event. Call :func:`check_decision` first.
    """
    check_now(now)
    if stored is not None:
        return stored, None
    record = trusted(
        DecisionRecord,
        **new.model_dump(),
        id=decision_id(new.run_id, new.interaction_id),
        created_at=now,
    )
    data = {
        "id": record.id,
        "tool": record.tool,
        "action": record.action,
        "scope": record.scope,
        "args": record.args,
        "decided_by": record.decided_by,
        "interaction_id": record.interaction_id,
        "reason": record.reason,
    }
    return record, (StoreEventType.DECISION_REMEMBERED.value, data)


def plan_revoke(
    decision_id: str, stored: DecisionRecord | None, revoked_by: str | None, now: datetime
) -> tuple[DecisionRecord, Event | None]:
    """Decide a revocation: the record to keep and its ``decision_revoked`` event, or the
    stored record and ``None`` when it was revoked already (nothing to write). Raises
    :class:`~interactions.UnknownDecisionError` when there is no such decision."""
    check_now(now)
    if stored is None:
        raise unknown_decision(decision_id)
    if not stored.active:
        return stored, None
    record = stored.model_copy(update={"revoked_at": now, "revoked_by": revoked_by})
    data = {"id": record.id, "tool": record.tool, "revoked_by": revoked_by}
    return record, (StoreEventType.DECISION_REVOKED.value, data)


def check_revoker(revoked_by: str | None) -> None:
    """Refuse a ``revoked_by`` a store cannot keep (``UsageError``)."""
    if revoked_by is not None:
        if not isinstance(revoked_by, str):
            raise UsageError(f"revoked_by must be text or None, got {type(revoked_by).__name__}")
        check_text(revoked_by, "revoked_by")


def unknown_decision(decision_id: str) -> UnknownDecisionError:
    """There is no decision ``decision_id`` in the store."""
    return UnknownDecisionError(
        f"no decision {decision_id!r} in this store; list the decisions to find its id",
        decision_id=decision_id,
        reason="unknown_decision",
    )


@dataclass(frozen=True)
class DecisionsQuery:
    """The arguments of :meth:`DecisionStore.list_decisions` (its limit checked)."""

    run_id: str | None
    thread_id: str | None
    include_revoked: bool
    limit: int


def select_decisions(
    records: Iterable[DecisionRecord], query: DecisionsQuery
) -> list[DecisionRecord]:
    """The decisions of ``records`` (in insertion order) ``query`` asks for, newest first."""
    ordered = sorted(enumerate(records), key=lambda pair: (pair[1].created_at, pair[0]))
    return [
        record
        for _, record in reversed(ordered)
        if (query.run_id is None or record.run_id == query.run_id)
        and (query.thread_id is None or record.thread_id == query.thread_id)
        and (query.include_revoked or record.active)
    ][: query.limit]
