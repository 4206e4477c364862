"""The JSON shapes of runs, interactions and events, shared by REST, the WebSocket and the page.

One pydantic model per shape (FastAPI advertises them in ``/docs``). Field names follow
Iterion's REST where it has the shape (``run_id``, ``interaction_id``, ``requested_at``,
``answered_at``); an interrupt's descriptor travels in AG-UI's casing, as stored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from hosts._kit import Tally, tally_of
from interactions.reminders import Reached, reach_of, reached_of
from interactions.store import EventRecord, InteractionRecord, RunRecord, RunStatus, Store

__all__ = [
    "AnswerView",
    "InteractionView",
    "RunDetail",
    "RunView",
    "event_view",
    "interaction_view",
    "interaction_views",
    "prompt_of",
    "run_view",
    "title_of",
]


class RunView(BaseModel):
    """A run as listed: what it runs and where it stands (never its checkpoint)."""

    id: str
    thread_id: str
    kind: str = Field(description="what drives the run: recipe, graph... (shown as a label)")
    status: RunStatus
    ref: str
    agent: str
    model_name: str
    parent_run_id: str | None = None
    node_id: str | None = None
    created_at: datetime
    updated_at: datetime
    error: str | None = None
    title: str = Field(
        default="",
        description="what the run was asked, shortened to a line: a recipe run's prompt, a "
        "graph run's vars (name=value)",
    )


class AnswerView(BaseModel):
    """The stored answer of an interaction: what, who, and through which host."""

    status: Literal["resolved", "cancelled", "expired"]
    payload: Any = None
    answered_by: str | None = None
    via: str | None = None


class InteractionView(BaseModel):
    """One interaction: its interrupt descriptor (AG-UI casing) and, once answered, the answer.
    One stored in a form this version cannot read says why in ``unreadable``; its
    ``interrupt`` is then empty, and an answer to it is refused (409, ``unreadable
    interaction``)."""

    id: str
    run_id: str
    node_id: str
    tool_call_id: str
    kind: str
    requested_at: datetime
    expires_at: datetime
    answered_at: datetime | None = None
    interrupt: dict[str, Any] = Field(
        description="the pause record: message, options, display... (empty when unreadable)"
    )
    unreadable: str | None = Field(
        default=None,
        description="why this version cannot read the stored question, which cannot be "
        "answered here (e.g. `reason: Field required`); null when it can",
    )
    answer: AnswerView | None = None
    approvals: list[str] = Field(
        default=[],
        description="of an approval several people must give: who approved, in vote order",
    )
    required_approvals: int = Field(
        default=1, description="the distinct approvals that settle it (1: one answer does)"
    )
    reminded: int = Field(
        default=0, description="the reminders sent so far (its remind_after; 0: none)"
    )
    escalated_to: list[str] = Field(
        default_factory=list,
        description="whom its escalation added as approvers, once escalated (else empty)",
    )


class RunDetail(RunView):
    """One run: its summary, its latest assistant text (and, for a finished run, why that
    text may not be the whole answer) and every interaction."""

    text: str = ""
    warning: str | None = None
    prompt: str = Field(default="", description="what the run was asked, whole")
    vars: dict[str, Any] = Field(default={}, description="a graph run's vars")
    interactions: list[InteractionView] = []


TITLE_LENGTH = 120
"""The longest title a run's summary carries (its prompt, cut at a word with an ellipsis)."""


def prompt_of(run: RunRecord) -> str:
    """What ``run`` was asked: a recipe run's input, a graph run's vars (``name=value``, one a
    line); ``""`` for a run read without its checkpoint or of another kind."""
    given = run.checkpoint.get("input")
    if isinstance(given, str):
        return given
    messages = run.checkpoint.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        first = messages[0]  # a recipe's checkpoint leaves out an input its first message says
        parts = first.get("content")
        if first.get("role") == "user" and isinstance(parts, list):
            return "".join(p["text"] for p in parts if isinstance(p, dict) and "text" in p)
    values = run.checkpoint.get("vars")
    if isinstance(values, dict):
        return "\n".join(f"{name}={_shown(value)}" for name, value in values.items())
    return ""


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def title_of(prompt: str) -> str:
    """``prompt`` on one line, at most :data:`TITLE_LENGTH` characters (cut with "…")."""
    line = " ".join(prompt.split())
    if len(line) <= TITLE_LENGTH:
        return line
    cut = line[: TITLE_LENGTH - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[TITLE_LENGTH // 2 :] else cut) + "…"


def run_view(run: RunRecord) -> RunView:
    """The summary of ``run``."""
    summary = run.model_dump(exclude={"checkpoint", "version"})
    return RunView.model_validate({**summary, "title": title_of(prompt_of(run))})


def interaction_view(
    record: InteractionRecord, tally: Tally | None = None, reached: Reached | None = None
) -> InteractionView:
    """``record`` as the REST/WebSocket shape, with its ``tally`` (``None``: one answer
    settles it) and what its reminders and escalation ``reached`` (``None``: nothing)."""
    answer = record.answer
    reached = reached or Reached()
    unreadable = record.unreadable
    return InteractionView(
        id=record.id,
        run_id=record.run_id,
        node_id=record.node_id,
        tool_call_id=record.tool_call_id,
        kind=record.kind,
        requested_at=record.requested_at,
        expires_at=record.expires_at,
        answered_at=record.answered_at,
        interrupt={} if unreadable else record.interrupt.model_dump(mode="json", exclude_none=True),
        unreadable=unreadable,
        answer=None if answer is None else AnswerView.model_validate(answer.model_dump()),
        approvals=[] if tally is None else list(tally.approvals),
        required_approvals=1 if tally is None else tally.required,
        reminded=reached.reminded,
        escalated_to=list(reached.added) if reached.escalated else [],
    )


async def interaction_views(
    store: Store, records: Sequence[InteractionRecord]
) -> list[InteractionView]:
    """``records`` as the REST/WebSocket shape, each with its votes so far (read only for an
    approval several people must give: :func:`hosts._kit.tally_of`) and its reminders and
    escalation (read from its run's events only for an ask whose stored metadata asks for
    them)."""
    events: dict[str, list[EventRecord]] = {}
    views = []
    for record in records:
        reached = None
        if reach_of(record.metadata).any:
            if record.run_id not in events:
                events[record.run_id] = await store.list_events(record.run_id)
            reached = reached_of(events[record.run_id], record.id)
        views.append(interaction_view(record, await tally_of(store, record), reached))
    return views


def event_view(event: EventRecord) -> dict[str, Any]:
    """One stored event as JSON (``seq``, ``cursor``, ``type``, ``data``, ``at``)."""
    return event.model_dump(mode="json")
