"""Approval declared on a tool: the runtime asks a person before the tool's body runs.

``@api.tool(requires_approval=True)`` (or a function of the parsed arguments and the context
that says whether to ask) wraps the body in a gate. The gate asks through the channel chain as
``ask_user_approval`` does (auto-approve, a dialog, a durable pause, unavailable), showing the
tool's label, its description and its arguments:

- approved: the body runs;
- revision requested: the body does not run; the model reads the feedback;
- declined, or no one could answer: the body does not run; the model reads that the call was
  not approved (a refused call never reads as one that went ahead).

A pause on the gate is continued by running the call again (its gate's ask returns the stored
answer), whatever the tool's ``resume`` mode: the approval, not the answer, is what the call
waited for. The gate wraps ``execute`` itself, so it holds wherever the body runs (an agent
loop, a graph agent node, a Temporal activity, an MCP call).
"""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from interactions import Approved, AskUserInterrupt, RevisionRequested, ask_user_approval
from interactions import is_awaiting as _is_awaiting
from recipes._tools import ApprovalRule, OnUpdate, ToolExecute, ToolResult

if TYPE_CHECKING:
    from recipes._context import ToolContext

__all__ = ["APPROVAL_KIND", "gated", "is_gate"]

APPROVAL_KIND = "tool_call"
"""The ``kind`` of the approval a gate asks for (in the interrupt's ``metadata``)."""


def is_gate(interrupt: AskUserInterrupt) -> bool:
    """Whether ``interrupt`` is the approval a tool's gate asked for (not an ask of its body)."""
    return (interrupt.metadata or {}).get("kind") == APPROVAL_KIND


def gated(
    name: str, label: str, description: str, rule: ApprovalRule, body: ToolExecute
) -> ToolExecute:
    """``body`` behind an approval gate (see the module docstring)."""

    async def execute(
        tool_call_id: str, params: Any, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        if not await _asks(rule, params, ctx):
            return await body(tool_call_id, params, ctx, on_update)
        arguments = params.model_dump(mode="json") if isinstance(params, BaseModel) else {}
        decision = await ask_user_approval(
            title=f"Run {label}?",
            body=description,
            sections=[{"title": "Arguments", "body": _shown(arguments)}],
            kind=APPROVAL_KIND,
            metadata={"tool": name, "arguments": arguments},
            tool_call_id=tool_call_id,
            ctx=ctx,
        )
        outcome = decision.outcome
        if _is_awaiting(outcome):
            return decision  # the run pauses; the call runs again once it is answered
        if isinstance(outcome, Approved):
            return await body(tool_call_id, params, ctx, on_update)
        details = {
            "interrupt": decision.details.interrupt.model_dump(mode="json", exclude_none=True)
        }
        if isinstance(outcome, RevisionRequested):
            feedback = f" Their feedback: {outcome.feedback}" if outcome.feedback else ""
            text = (
                f"Not run: the user asked for changes to this call of {name} instead of "
                f"approving it.{feedback}"
            )
        else:
            text = f"Not run: this call of {name} was not approved ({decision.text})."
        return ToolResult.of_text(text, details)  # fmt: skip

    execute.__name__ = getattr(body, "__name__", name)
    execute.__doc__ = getattr(body, "__doc__", None)
    return execute


async def _asks(rule: ApprovalRule, params: Any, ctx: ToolContext) -> bool:
    if isinstance(rule, bool):
        return rule
    answer = rule(params, ctx)
    if inspect.isawaitable(answer):
        answer = await answer
    return bool(answer)


def _shown(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, indent=2, ensure_ascii=False) if arguments else "(none)"
