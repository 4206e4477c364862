"""Decisions that stick: an approver's "approve always" or "deny always" for a tool's calls.

A tool call's approval gate (:mod:`recipes._approval`) asks its call's
:class:`DecisionBook` before it asks a person, and hands it every answer that says to remember
(``{"approved": ..., "remember": {"scope": "run" | "thread", "args": bool}}``). Two books:

- a session's own (:class:`SessionBook`, in memory): a decision holds for the session, which is
  what an in-process run is; its conversation is the session too;
- a durable run's (:class:`StoreBook`): decisions live in the run's store, seen by every process
  and host on it, listed and revoked with ``pi-recipes rules`` (and the web host's REST API);
  each is stored once per approval (a replayed call remembers nothing twice).

A remembered decision answers the ask a call would make: it never widens a policy's ``deny``
nor narrows its ``allow``, and of two that cover a call a ``deny`` wins. The book also carries
the gate's audit: one ``tool_call_decided`` event of the run per decision (the policy rule that
matched, the remembered decision applied, or the answer, with the arguments before and after
an edit).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from interactions import Remember, UnknownInteractionError
from interactions.store import DecisionStore, EventInput, NewDecision, Store

__all__ = [
    "AUDIT_KEPT",
    "TOOL_CALL_DECIDED",
    "Action",
    "DecisionBook",
    "SessionBook",
    "Standing",
    "StoreBook",
]

TOOL_CALL_DECIDED = "tool_call_decided"
"""The event type of the gate's audit: one per decision on a tool call that was ruled on."""

AUDIT_KEPT = 1000
"""How many audit events a session's own book keeps (the newest)."""

Action = Literal["allow", "deny"]
"""What a remembered decision does to the calls it covers."""


@dataclass(frozen=True)
class Standing:
    """A remembered decision that covers a call: what it decides, where it holds, who made it."""

    action: Action
    scope: Literal["run", "thread"]
    id: str | None = None
    decided_by: str | None = None
    only_these_args: bool = False

    def where(self) -> str:
        """Where it holds, in words: ``in this run``, ``in this conversation``."""
        place = "in this run" if self.scope == "run" else "in this conversation"
        return f"{place}, with these arguments" if self.only_these_args else place

    def audit(self) -> dict[str, Any]:
        """What the audit event says of it."""
        said: dict[str, Any] = {"scope": self.scope, "only_these_args": self.only_these_args}
        if self.id is not None:
            said["id"] = self.id
        if self.decided_by is not None:
            said["decided_by"] = self.decided_by
        return said


class DecisionBook(Protocol):
    """Where a call's gate finds and keeps remembered decisions, and leaves its audit."""

    async def find(self, tool: str, arguments: Mapping[str, Any]) -> Standing | None:
        """The decision that covers a call of ``tool`` with ``arguments`` (a ``deny`` before
        an ``allow``), or ``None``."""
        ...

    async def remember(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        action: Action,
        remember: Remember,
        *,
        interaction_id: str,
        reason: str | None,
    ) -> Standing | None:
        """Keep the decision an answer asked to remember; ``None`` when this book cannot."""
        ...

    def audit(self, data: dict[str, Any]) -> None:
        """Leave one ``tool_call_decided`` event (written with the run's next write)."""
        ...


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    def canonical(value: Mapping[str, Any]) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    return canonical(a) == canonical(b)


@dataclass
class _Kept:
    tool: str
    standing: Standing
    args: dict[str, Any] | None


@dataclass
class SessionBook:
    """A session's decisions, in memory: they hold while the session lives (both scopes). Its
    audit keeps the last :data:`AUDIT_KEPT` events in :attr:`events` (an in-process run has no
    store to write them to)."""

    kept: list[_Kept] = field(default_factory=list)
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=AUDIT_KEPT))

    async def find(self, tool: str, arguments: Mapping[str, Any]) -> Standing | None:
        found = [
            k.standing
            for k in self.kept
            if k.tool == tool and (k.args is None or _same(k.args, arguments))
        ]
        return _strongest(found)

    async def remember(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        action: Action,
        remember: Remember,
        *,
        interaction_id: str,
        reason: str | None,
    ) -> Standing | None:
        standing = Standing(action, remember.scope, only_these_args=remember.args)
        self.kept.append(_Kept(tool, standing, dict(arguments) if remember.args else None))
        return standing

    def audit(self, data: dict[str, Any]) -> None:
        self.events.append(data)


@dataclass
class StoreBook:
    """A durable run's decisions, in its store (when the store keeps decisions: the Temporal
    engine's does not, and there an answer to remember is taken as a plain one). ``later``
    queues an event for the run's next write."""

    store: Store
    run_id: str
    thread_id: str
    later: Callable[..., None]

    async def find(self, tool: str, arguments: Mapping[str, Any]) -> Standing | None:
        if not isinstance(self.store, DecisionStore):
            return None
        records = await self.store.decisions_for(self.run_id, self.thread_id)
        found = [
            Standing(r.action, r.scope, r.id, r.decided_by, only_these_args=r.args is not None)
            for r in records
            if r.covers(self.run_id, self.thread_id, tool, arguments)
        ]
        return _strongest(found)

    async def remember(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        action: Action,
        remember: Remember,
        *,
        interaction_id: str,
        reason: str | None,
    ) -> Standing | None:
        store = self.store
        if not isinstance(store, DecisionStore):
            return None
        try:  # who answered, as the host that stored the answer established it
            record = await store.get_interaction(self.run_id, interaction_id)
            decided_by = record.answer.answered_by if record.answer is not None else None
        except UnknownInteractionError:  # answered in a dialog of this process
            decided_by = None
        new = NewDecision(
            run_id=self.run_id,
            interaction_id=interaction_id,
            thread_id=self.thread_id,
            tool=tool,
            action=action,
            scope=remember.scope,
            args=dict(arguments) if remember.args else None,
            decided_by=decided_by,
            reason=reason,
        )
        kept, _ = await store.remember_decision(new)
        return Standing(
            kept.action, kept.scope, kept.id, kept.decided_by, only_these_args=kept.args is not None
        )

    def audit(self, data: dict[str, Any]) -> None:
        event: EventInput = (TOOL_CALL_DECIDED, data)
        self.later(event)


def _strongest(found: list[Standing]) -> Standing | None:
    """A ``deny`` among ``found`` before any ``allow``; the first of them."""
    for standing in found:
        if standing.action == "deny":
            return standing
    return found[0] if found else None
