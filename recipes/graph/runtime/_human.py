"""``human`` nodes: the output schema's fields become questions, asked through the channel
chain like any tool's ask — a dialog when a person watches (a terminal), else a durable pause.

``approved: bool`` (with ``feedback: string`` beside it) is one approval; a string with
``[enum: …]`` a choice; ``string[]`` with an enum a multiple choice; another bool a yes/no
choice; ``int``/``float`` and plain strings free text. A number that does not read is asked
again, saying so (at most :data:`MAX_ASKS` times). A declined question gives its field's zero
value and lists the field under ``_declined`` in the output; a declined approval is
``approved: false``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from interactions import (
    Answered,
    AnsweredMultiple,
    Approved,
    AskUserDisplay,
    AskUserOption,
    AskUserOutcome,
    AskUserSection,
    InteractionAborted,
    RevisionRequested,
    ask_user,
    is_awaiting,
)
from interactions.asks import (
    ApprovalRequest,
    AskLedger,
    AskScope,
    AskUserRequest,
    QuestionRequest,
)
from interactions.channels import Channel
from interactions.dialogs import DialogUI
from interactions.resume import answer_outcome
from recipes.graph import ir
from recipes.graph.runtime._agent import prompt_text
from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome, failed, finished
from recipes.graph.runtime._state import NodeRun

__all__ = ["MAX_ASKS", "run_human"]

MAX_ASKS = 3
_ZERO: dict[str, Any] = {"string": "", "bool": False, "int": 0, "float": 0.0, "string[]": []}
_YES_NO = (AskUserOption(label="Yes", value="true"), AskUserOption(label="No", value="false"))


@dataclass(frozen=True)
class _Context:
    """The context a human node's ask reads: the host's UI, the run's environment, and the
    ledger naming the ask's scope (a human node's ask is raised in no tool call)."""

    ui: DialogUI | None
    env: Mapping[str, str]
    mode: str
    asks: AskLedger
    clock: Callable[[], datetime]
    can_pause: bool = True
    interaction_channels: Sequence[Channel] | None = None

    @property
    def has_ui(self) -> bool:
        return self.ui is not None


@dataclass(frozen=True)
class _Question:
    fields: tuple[str, ...]
    request: AskUserRequest
    scope: AskScope
    """Where it is asked: the execution's scope, and the field's unless it asks them all."""
    attempt: int
    """Which time it is asked (an answer that did not read is asked again)."""

    @property
    def interrupt_id(self) -> str:
        return self.scope.interrupt_id(self.attempt)


def _sections(given: Mapping[str, Any]) -> list[AskUserSection]:
    return [
        AskUserSection(title=key, body=v if isinstance(v, str) else json.dumps(v, indent=2))
        for key, v in given.items()
    ]


def _questions(
    node: ir.HumanNode, schema: ir.Schema, text: str, given: Mapping[str, Any], run: NodeRun
) -> list[_Question]:
    fields = [f for f in schema.fields if f.name not in run.answers]
    approval = schema.field("approved")
    feedback = schema.field("feedback")
    pairs = approval is not None and approval.type == "bool"
    groups: list[tuple[ir.Field, ...]] = []
    for field in fields:
        if pairs and field.name == "feedback" and feedback and feedback.type == "string":
            continue
        if pairs and field.name == "approved":
            extra = (feedback,) if feedback is not None and feedback.type == "string" else ()
            groups.append((field, *extra))
        else:
            groups.append((field,))
    single = len(groups) == 1 and len(schema.fields) == sum(len(g) for g in groups)
    # What the node was given, shown with each of its questions (an approval's as its sections).
    shown = AskUserDisplay(sections=tuple(_sections(given))) if given else None
    out = []
    for group in groups:
        field = group[0]
        attempt = run.attempts.get(field.name, 0) + 1
        scope = run.scope if single else run.scope.enter(field.name)
        label = text if single or not text else f"{text} ({field.name})"
        label = label or f"{node.name}: {field.name}"
        meta = {"node_id": node.name, "node_kind": "human", "field": field.name}
        request: AskUserRequest
        if pairs and field.name == "approved":
            request = ApprovalRequest(title=text or f"Approve {node.name}?",
                                      sections=tuple(_sections(given)), kind="graph_human",
                                      metadata=meta)  # fmt: skip
        elif field.type == "bool":
            request = QuestionRequest(
                question=label,
                options=_YES_NO,
                allow_other=False,
                metadata=meta,
                display=shown,
            )
        elif field.enum:
            many = field.type == "string[]"
            request = QuestionRequest(
                question=label,
                options=tuple(AskUserOption(label=v) for v in field.enum),
                allow_other=False,
                selection="multiple" if many else "single",
                metadata=meta,
                display=shown,
            )
        else:
            kind = {"int": "a whole number", "float": "a number"}.get(field.type)
            hint = f" ({kind})" if kind else ""
            if kind and attempt > 1:
                hint = f" ({kind}: the last answer did not read as one; {attempt} of {MAX_ASKS})"
            request = QuestionRequest(question=label + hint, metadata=meta, display=shown)
        out.append(_Question(tuple(f.name for f in group), request, scope, attempt))
    return out


def _read(field: ir.Field, outcome: AskUserOutcome) -> tuple[Any, bool] | None:
    """The field's value and whether it was declined; ``None`` when the answer does not read."""
    if isinstance(outcome, AnsweredMultiple):
        return list(outcome.answers), False
    if not isinstance(outcome, Answered):
        return _ZERO[field.type], True
    text = outcome.answer.strip()
    if field.type in ("int", "float"):
        # A number as people write it: ASCII digits, no separators (``int()`` also reads
        # "1_000" and other scripts' digits), and finite (``float()`` reads "nan" and "1e400",
        # which JSON cannot hold).
        if not text.isascii() or "_" in text:
            return None
        try:
            number = int(text) if field.type == "int" else float(text)
        except ValueError:
            return None
        return (number, False) if math.isfinite(number) else None
    if field.type == "bool":
        return text == "true", False
    return outcome.answer, False


def _apply(schema: ir.Schema, question: _Question, outcome: AskUserOutcome, run: NodeRun) -> bool:
    """Record an answer in ``run.answers``; ``False`` when it must be asked again."""
    declined = run.answers.setdefault("_declined", [])
    if len(question.fields) == 2 or question.fields == ("approved",):
        ok = isinstance(outcome, Approved)
        feedback = getattr(outcome, "feedback", None) or ""
        run.answers["approved"] = ok
        if len(question.fields) == 2:
            run.answers["feedback"] = feedback
        if not isinstance(outcome, Approved | RevisionRequested):
            declined.append("approved")
        return True
    field = schema.field(question.fields[0])
    assert field is not None
    read = _read(field, outcome)
    if read is None:
        run.attempts[field.name] = run.attempts.get(field.name, 0) + 1
        return False
    run.answers[field.name] = read[0]
    if read[1]:
        declined.append(field.name)
    return True


def _result(run: NodeRun) -> dict[str, Any]:
    output = {k: v for k, v in run.answers.items() if k != "_declined"}
    if run.answers.get("_declined"):
        output["_declined"] = list(run.answers["_declined"])
    return output


async def run_human(ctx: NodeContext, node: ir.HumanNode, run: NodeRun, mode: Mode) -> NodeOutcome:
    """Ask (or read the answers to) the node's questions; its output is the answers."""
    schema = ctx.graph.schema(node.output)
    assert schema is not None, "validation requires a human node's output schema"
    text = ctx.scope.render(prompt_text(ctx.graph, node.instructions))
    given = ctx.scope.namespaces.get("input") or {}
    if mode == "resume":
        stored = {r.id: r for r in ctx.interactions}
        for question in _questions(node, schema, text, given, run):
            record = stored.get(question.interrupt_id)
            if record is not None and record.answer is not None:
                _apply(schema, question, answer_outcome(record), run)
    for _ in range(MAX_ASKS + len(schema.fields)):
        questions = _questions(node, schema, text, given, run)
        if not questions:
            return finished(_result(run))
        if any(run.attempts.get(f, 0) >= MAX_ASKS for q in questions for f in q.fields):
            break
        waiting = []
        for question in questions:
            # A ledger of this one ask: its id is the question's scope at this attempt.
            ledger = AskLedger(scope=question.scope, issued=question.attempt - 1)
            asker = _Context(ctx.surface.ui, ctx.runner.env, ctx.surface.mode or ctx.runner.mode,
                             ledger, ctx.runner.clock,
                             interaction_channels=ctx.surface.channels)  # fmt: skip
            try:
                result = await ask_user(question.request, tool_call_id=None, ctx=asker)
            except InteractionAborted as exc:  # a person stopped the run (Ctrl-C in a dialog)
                return failed(str(exc), "ABORTED")
            if is_awaiting(result.outcome):
                waiting.append(result.details.interrupt)
            else:
                _apply(schema, question, result.outcome, run)
        if waiting:
            run.interrupts = [i.id for i in waiting]
            return NodeOutcome("paused", interrupts=waiting)
    unread = [f for f, n in run.attempts.items() if n >= MAX_ASKS]
    return failed(
        f"no readable answer for {', '.join(unread)} after {MAX_ASKS} asks", "HUMAN_INPUT_INVALID"
    )
