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

from pydantic import BaseModel, ValidationError

from interactions import Approved, AskUserInterrupt, RevisionRequested, ask_user_approval
from interactions import is_awaiting as _is_awaiting
from interactions.asks import ARGS_SCHEMA
from recipes._tools import ApprovalRule, OnUpdate, Tool, ToolExecute, ToolResult, to_tool_result
from recipes.messages import TextPart

if TYPE_CHECKING:
    from recipes._context import ToolContext

__all__ = ["APPROVAL_KIND", "gated", "is_gate"]

APPROVAL_KIND = "tool_call"
"""The ``kind`` of the approval a gate asks for (in the interrupt's ``metadata``)."""


def is_gate(interrupt: AskUserInterrupt) -> bool:
    """Whether ``interrupt`` is the approval a tool's gate asked for (not an ask of its body)."""
    return (interrupt.metadata or {}).get("kind") == APPROVAL_KIND


def gated(tool: Tool, rule: ApprovalRule) -> ToolExecute:
    """``tool``'s body (its ``execute``) behind an approval gate (see the module docstring)."""
    body = tool.execute

    async def execute(
        tool_call_id: str, params: Any, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        if not await _asks(rule, params, ctx):
            return await body(tool_call_id, params, ctx, on_update)
        arguments = params.model_dump(mode="json") if isinstance(params, BaseModel) else {}
        decision = await ask_user_approval(
            title=f"Run {tool.label}?",
            body=tool.description,
            sections=[{"title": "Arguments", "body": _shown(arguments)}],
            kind=APPROVAL_KIND,
            metadata={"tool": tool.name, "arguments": arguments,
                      ARGS_SCHEMA: tool.spec().parameters},
            tool_call_id=tool_call_id,
            ctx=ctx,
        )  # fmt: skip
        outcome = decision.outcome
        if _is_awaiting(outcome):
            return decision  # the run pauses; the call runs again once it is answered
        if isinstance(outcome, Approved) and outcome.args is None:
            return await body(tool_call_id, params, ctx, on_update)
        if isinstance(outcome, Approved):
            return await _edited(tool, outcome.args or {}, tool_call_id, ctx, on_update)
        details = {
            "interrupt": decision.details.interrupt.model_dump(mode="json", exclude_none=True)
        }
        if isinstance(outcome, RevisionRequested):
            feedback = f" Their feedback: {outcome.feedback}" if outcome.feedback else ""
            text = (
                f"Not run: the user asked for changes to this call of {tool.name} instead "
                f"of approving it.{feedback}"
            )
        else:
            text = f"Not run: this call of {tool.name} was not approved ({decision.text})."
        return ToolResult.of_text(text, details)  # fmt: skip

    execute.__name__ = getattr(body, "__name__", tool.name)
    execute.__doc__ = getattr(body, "__doc__", None)
    return execute


async def _edited(
    tool: Tool, args: dict[str, Any], tool_call_id: str, ctx: ToolContext, on_update: OnUpdate
) -> ToolResult:
    """The body run on the arguments the approver edited; the model reads which, first."""
    try:
        params = tool.parse_arguments(args)
    except ValidationError as exc:  # the answer was checked against their schema: rare
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        return ToolResult.of_text(
            f"Not run: the arguments the approver gave for {tool.name} do not fit: {problems}."
        )
    returned = to_tool_result(await tool.execute(tool_call_id, params, ctx, on_update))
    if returned.pause:
        return returned
    edited = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    note = TextPart(text=f"The approver edited the arguments before approving: {edited}.")
    return returned.model_copy(update={"content": [note, *returned.content]})


async def _asks(rule: ApprovalRule, params: Any, ctx: ToolContext) -> bool:
    if isinstance(rule, bool):
        return rule
    answer = rule(params, ctx)
    if inspect.isawaitable(answer):
        answer = await answer
    return bool(answer)


def _shown(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, indent=2, ensure_ascii=False) if arguments else "(none)"
