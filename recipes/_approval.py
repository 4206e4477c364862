"""Approval declared on a tool, or by a policy: the runtime asks a person before the body runs.

``@api.tool(requires_approval=True)`` (or a function of the parsed arguments and the context
that says whether to ask) wraps the body in a gate. The gate asks through the channel chain as
``ask_user_approval`` does (auto-approve, a dialog, a durable pause, unavailable), showing the
tool's label, its description and its arguments:

- approved: the body runs;
- revision requested: the body does not run; the model reads the feedback;
- declined, or no one could answer: the body does not run; the model reads that the call was
  not approved (a refused call never reads as one that went ahead).

An approval policy (:mod:`recipes.policy`, named by the run's environment) decides first: its
first matching rule allows the call, asks, or denies it without asking (the model reads the
reason); a call no rule matches is decided by the tool's own ``requires_approval``. Every tool
has the gate, so a policy reaches tools that declare nothing. Before it asks, the gate looks for
a remembered decision ("approve always", "deny always": :mod:`recipes.decisions`) that covers
the call; an answer that says to remember is kept in the call's book. Each decision is audited
(a ``tool_call_decided`` event of the run).

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

from interactions import (
    Approved,
    AskUserInterrupt,
    AskUserResult,
    RevisionRequested,
    ask_user_approval,
)
from interactions import is_awaiting as _is_awaiting
from interactions.asks import ARGS_SCHEMA
from recipes._tools import ApprovalRule, OnUpdate, Tool, ToolExecute, ToolResult, to_tool_result
from recipes.decisions import Action, Standing
from recipes.messages import TextPart
from recipes.policy import policy_of

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
        stored = _stored_gate(ctx)
        if stored is not None:  # it paused on its approval: that answer holds, whatever the
            decision = await _ask_again(stored, tool_call_id, ctx)  # policy of this process
            return await _decided(tool, decision, params, tool_call_id, ctx, on_update)
        policy = policy_of(ctx.env, ctx.cwd) or ctx.policy
        if policy is None and rule is False:  # the common case: nothing to decide
            return await body(tool_call_id, params, ctx, on_update)
        arguments = params.model_dump(mode="json") if isinstance(params, BaseModel) else {}
        ruled = policy.decide(tool.name, arguments) if policy is not None else None
        said = {"file": str(policy.path), "line": ruled.line} if ruled and policy else None
        if ruled is not None and ruled.action == "deny":
            _audit(ctx, tool, tool_call_id, "denied", "policy", arguments, rule=said)
            why = f": {ruled.reason}" if ruled.reason else "."
            return ToolResult.of_text(
                f"Not run: a policy rule denies this call of {tool.name}{why}",
                {"policy": {**(said or {}), "action": "deny"}},
            )
        if ruled is not None and ruled.action == "allow":
            _audit(ctx, tool, tool_call_id, "allowed", "policy", arguments, rule=said)
            return await body(tool_call_id, params, ctx, on_update)
        if ruled is None and not await _asks(rule, params, ctx):
            return await body(tool_call_id, params, ctx, on_update)
        standing = await ctx.decisions.find(tool.name, arguments) if ctx.decisions else None
        if standing is not None:
            return await _remembered(tool, standing, params, arguments, tool_call_id, ctx,
                                     on_update)  # fmt: skip
        sections = [{"title": "Arguments", "body": _shown(arguments)}]
        metadata: dict[str, Any] = {"tool": tool.name, "arguments": arguments,
                                    ARGS_SCHEMA: tool.spec().parameters}  # fmt: skip
        if ruled is not None and said is not None:
            sections.append({"title": "Why", "body": ruled.reason or "a policy rule asks"})
            metadata["policy"] = {**said, "action": "ask"}
            metadata |= ruled.reach  # its reminders and escalation
        decision = await ask_user_approval(
            title=f"Run {tool.label}?",
            body=tool.description,
            sections=sections,
            kind=APPROVAL_KIND,
            metadata=metadata,
            approvers=ruled.approvers if ruled is not None else None,
            required_approvals=ruled.required_approvals if ruled is not None else None,
            tool_call_id=tool_call_id,
            ctx=ctx,
        )
        return await _decided(tool, decision, params, tool_call_id, ctx, on_update)

    execute.__name__ = getattr(body, "__name__", tool.name)
    execute.__doc__ = getattr(body, "__doc__", None)
    return execute


async def _remembered(
    tool: Tool,
    standing: Standing,
    params: Any,
    arguments: dict[str, Any],
    tool_call_id: str,
    ctx: ToolContext,
    on_update: OnUpdate,
) -> object:
    """A call a remembered decision covers: run, or not run saying whose decision it was."""
    verdict = "allowed" if standing.action == "allow" else "denied"
    _audit(ctx, tool, tool_call_id, verdict, "remembered", arguments, remembered=standing.audit())
    if standing.action == "allow":
        return await tool.execute(tool_call_id, params, ctx, on_update)
    return ToolResult.of_text(
        f"Not run: the user declined every call of {tool.name} {standing.where()}.",
        {"remembered": standing.audit()},
    )


async def _decided(
    tool: Tool,
    decision: AskUserResult,
    params: Any,
    tool_call_id: str,
    ctx: ToolContext,
    on_update: OnUpdate,
) -> object:
    """What a call does once its approval is answered (or asked): pause, run, run on edited
    arguments, or not run, saying why. An answer that says to remember is kept first."""
    outcome = decision.outcome
    if _is_awaiting(outcome):
        return decision  # the run pauses; the call runs again once it is answered
    interrupt = decision.details.interrupt
    arguments = (interrupt.metadata or {}).get("arguments") or {}
    kept = await _keep(tool, outcome, arguments, interrupt.id, ctx)
    audit: dict[str, Any] = {"interaction_id": interrupt.id, "outcome": outcome.type}
    if isinstance(outcome, Approved) and outcome.args is not None:
        audit["edited_args"] = outcome.args
    if kept is not None:
        audit["remembered"] = kept.audit()
    verdict = "allowed" if isinstance(outcome, Approved) else "denied"
    _audit(ctx, tool, tool_call_id, verdict, "answer", arguments, **audit)
    always = f" The user approved its later calls {kept.where()} too." if kept else ""
    if isinstance(outcome, Approved) and outcome.args is None:
        return _noted(await tool.execute(tool_call_id, params, ctx, on_update), always)
    if isinstance(outcome, Approved):
        return _noted(await _edited(tool, outcome.args or {}, tool_call_id, ctx, on_update),
                      always)  # fmt: skip
    details = {"interrupt": interrupt.model_dump(mode="json", exclude_none=True)}
    if isinstance(outcome, RevisionRequested) and kept is not None:
        feedback = f" Their feedback: {outcome.feedback}" if outcome.feedback else ""
        text = (
            f"Not run: the user declined this call of {tool.name} and every later call of "
            f"it {kept.where()}.{feedback}"
        )
    elif isinstance(outcome, RevisionRequested):
        feedback = f" Their feedback: {outcome.feedback}" if outcome.feedback else ""
        text = (
            f"Not run: the user asked for changes to this call of {tool.name} instead "
            f"of approving it.{feedback}"
        )
    else:
        text = f"Not run: this call of {tool.name} was not approved ({decision.text})."
    return ToolResult.of_text(text, details)


async def _keep(
    tool: Tool, outcome: Any, arguments: dict[str, Any], interaction_id: str, ctx: ToolContext
) -> Standing | None:
    """Keep the decision ``outcome`` asks to remember (in the call's book), or ``None``."""
    remember = getattr(outcome, "remember", None)
    if remember is None or ctx.decisions is None:
        return None
    action: Action = "allow" if isinstance(outcome, Approved) else "deny"
    if isinstance(outcome, Approved) and outcome.args is not None:
        arguments = outcome.args  # "these arguments" are the ones approved
    return await ctx.decisions.remember(
        tool.name, arguments, action, remember,
        interaction_id=interaction_id, reason=getattr(outcome, "feedback", None),
    )  # fmt: skip


def _noted(returned: object, note: str) -> object:
    """``returned`` with ``note`` before its content (nothing when there is no note or it is
    not a finished result)."""
    if not note:
        return returned
    result = to_tool_result(returned)
    if result.pause:
        return returned
    return result.model_copy(update={"content": [TextPart(text=note.strip()), *result.content]})


def _audit(
    ctx: ToolContext,
    tool: Tool,
    tool_call_id: str,
    verdict: str,
    by: str,
    arguments: dict[str, Any],
    **more: Any,
) -> None:
    """One ``tool_call_decided`` event: who or what decided the call, and how."""
    if ctx.decisions is None:
        return
    ctx.decisions.audit({"tool": tool.name, "tool_call_id": tool_call_id, "decision": verdict,
                         "by": by, "args": arguments, **more})  # fmt: skip


def _stored_gate(ctx: ToolContext) -> AskUserInterrupt | None:
    """The answered approval this call's gate asked for in an earlier leg (the call runs again
    because it paused there), or ``None``."""
    ledger = ctx.asks
    if ledger is None or not ledger.answers:
        return None
    stored = ledger.answers.get(ledger.scope.interrupt_id(1))
    return stored if stored is not None and is_gate(stored) else None


async def _ask_again(stored: AskUserInterrupt, tool_call_id: str, ctx: ToolContext) -> Any:
    """The gate's ask as it was first asked (so the stored answer is returned to it), whatever
    this process's policy would ask now."""
    display = stored.display
    metadata = {k: v for k, v in (stored.metadata or {}).items() if k != "kind"}
    return await ask_user_approval(
        title=display.title if display else None,
        body=display.body if display else None,
        sections=display.sections if display else (),
        message=stored.message,
        kind=APPROVAL_KIND,
        metadata=metadata,
        tool_call_id=tool_call_id,
        ctx=ctx,
    )


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
