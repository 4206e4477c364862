"""The dialog walk: written once as a generator, driven by any :class:`DialogUI`.

``dialog_walk`` yields dialog steps and receives the human's answers; it holds every decision
(which dialog next, what the answer means) and does no I/O. ``run_dialog`` drives it against a
UI with a total time budget and turns a cancellation of the aborted turn into
:class:`InteractionAborted`. A test can drive the walk directly with plain values.

The human sees the options' labels (and descriptions where the UI has room); the outcome
records an option's value. An answer that names an option (typed as "Other", or a UI's answer
that is not a shown label) is read as a resume reads it (:func:`normalize_answer`): it records
that option's value, and with fixed options nothing else is taken. An approval offers Approve,
Request changes and Decline, and only the exact Approve approves; an approval whose arguments
may be edited (a tool's declared approval) also offers Edit arguments: the arguments as JSON in
an editor, checked against their schema before they are taken; and Approve always and Decline
always, which ask where the decision holds (the run or the conversation, maybe only for these
arguments).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from interactions._context import DialogUI
from interactions._errors import InteractionAborted, InvalidPayloadError
from interactions._models import (
    Answered,
    AnsweredMultiple,
    ApprovalRequest,
    Approved,
    AskUserOption,
    AskUserOutcome,
    AskUserRequest,
    Declined,
    QuestionRequest,
    Remember,
    RevisionRequested,
)
from interactions._payloads import check_payload_against_schema, normalize_answer
from interactions._schemas import ARGS_SCHEMA

__all__ = [
    "APPROVE",
    "DECLINE",
    "DONE",
    "EDIT",
    "REQUEST_CHANGES",
    "DialogStep",
    "EditorStep",
    "InputStep",
    "MultiSelectStep",
    "SelectStep",
    "dialog_title",
    "dialog_walk",
    "run_dialog",
]

APPROVE = "Approve"
APPROVE_ALWAYS = "Approve always"
EDIT = "Edit arguments"
EDIT_TITLE = "The arguments to approve, as JSON"
REQUEST_CHANGES = "Request changes"
DECLINE = "Decline"
DECLINE_ALWAYS = "Decline always"
DONE = "Done"
APPROVAL_CHOICES = (APPROVE, REQUEST_CHANGES, DECLINE)
FEEDBACK_TITLE = "Feedback"
FEEDBACK_PLACEHOLDER = "Optional: what should change?"
OTHER_PLACEHOLDER = "Type your answer"
REMEMBER_TITLE = "Without asking again, for the calls of this tool"
REMEMBER_CHOICES: dict[str, Remember] = {
    "In this run": Remember(scope="run"),
    "In this conversation": Remember(scope="thread"),
    "In this run, with these arguments only": Remember(scope="run", args=True),
    "In this conversation, with these arguments only": Remember(scope="thread", args=True),
}


@dataclass(frozen=True)
class SelectStep:
    """Show ``options``; the answer is the picked string or ``None``.

    ``descriptions`` is empty or holds one help text (or ``None``) per option.
    """

    title: str
    options: tuple[str, ...]
    descriptions: tuple[str | None, ...] = ()


@dataclass(frozen=True)
class MultiSelectStep:
    """Show a checkbox list; the answer is the picked strings or ``None``."""

    title: str
    options: tuple[str, ...]
    descriptions: tuple[str | None, ...] = ()


@dataclass(frozen=True)
class InputStep:
    """Ask for one line of text; the answer is the text or ``None``."""

    title: str
    placeholder: str | None = None


@dataclass(frozen=True)
class EditorStep:
    """Ask for multi-line text, starting from ``prefill``; the answer is the text or ``None``."""

    title: str
    prefill: str = ""


DialogStep = SelectStep | MultiSelectStep | InputStep | EditorStep
DialogAnswer = str | list[str] | None
Walk = Generator[DialogStep, DialogAnswer, AskUserOutcome]


def dialog_title(request: AskUserRequest) -> str:
    """The plain-text prompt of a request's first dialog (header, question or approval body)."""
    if isinstance(request, ApprovalRequest):
        parts = [request.title, request.body, *(f"{s.title}\n{s.body}" for s in request.sections)]
        if request.message and request.message != request.title:
            parts.append(request.message)
        return "\n\n".join(p for p in parts if p) or "Approve?"
    return f"{request.header}\n\n{request.question}" if request.header else request.question


def _other_label(options: Sequence[AskUserOption]) -> str:
    """The label of the "type your own" row: one that no option has (any case)."""
    taken = {o.label.casefold() for o in options}
    candidates = itertools.chain(
        ("Other", "Other (type your own)"),
        (f"Other (type your own) {n}" for n in itertools.count(2)),
    )
    return next(label for label in candidates if label.casefold() not in taken)


def _own_answer(text: DialogAnswer, options: Sequence[AskUserOption] = ()) -> str | None:
    """Typed text as the answer it records: an option it names records that option's value."""
    if not isinstance(text, str) or not text.strip():
        return None
    return normalize_answer(options, text)


def _fits(request: QuestionRequest, answer: str) -> bool:
    """Whether ``answer`` may be taken: any text, or only an option's when they are fixed."""
    return request.allow_other or answer in (o.answer for o in request.options)


def _descriptions(options: Sequence[AskUserOption], extra: int) -> tuple[str | None, ...]:
    """One help text per shown option (``extra`` rows without one follow), or none at all."""
    texts = tuple(o.description for o in options)
    return texts + (None,) * extra if any(texts) else ()


def dialog_walk(request: AskUserRequest, *, has_multi_select: bool = False) -> Walk:
    """The whole dialog of ``request`` as a generator of steps, returning the outcome."""
    if isinstance(request, ApprovalRequest):
        return (yield from _approval(request))
    if not request.options:
        answer = _own_answer((yield InputStep(dialog_title(request), OTHER_PLACEHOLDER)))
        return Answered(answer=answer) if answer else Declined()
    if request.selection == "multiple":
        if has_multi_select:
            return (yield from _checkboxes(request))
        return (yield from _toggle_rows(request))
    return (yield from _single(request))


def _approval(request: ApprovalRequest) -> Walk:
    editable = request.metadata.get(ARGS_SCHEMA)
    choices = (
        (APPROVE, APPROVE_ALWAYS, EDIT, REQUEST_CHANGES, DECLINE, DECLINE_ALWAYS)
        if editable
        else APPROVAL_CHOICES
    )
    while True:
        pick = yield SelectStep(dialog_title(request), choices)
        if pick == APPROVE:
            return Approved()
        if pick == REQUEST_CHANGES:
            feedback = yield InputStep(FEEDBACK_TITLE, FEEDBACK_PLACEHOLDER)
            return RevisionRequested(feedback=_own_answer(feedback))
        if not editable or pick not in (EDIT, APPROVE_ALWAYS, DECLINE_ALWAYS):
            return Declined()
        if pick == EDIT:
            edited = yield from _edit(editable, request.metadata.get("arguments") or {})
            if edited is not None:  # dismissed: back to the choice
                return Approved(args=edited)
            continue
        scope = yield SelectStep(REMEMBER_TITLE, tuple(REMEMBER_CHOICES))
        remember = REMEMBER_CHOICES.get(scope) if isinstance(scope, str) else None
        if remember is None:  # dismissed: back to the choice
            continue
        if pick == APPROVE_ALWAYS:
            return Approved(remember=remember)
        return RevisionRequested(remember=remember)


def _edit(schema: dict[str, Any], arguments: dict[str, Any]) -> Generator[
    DialogStep, DialogAnswer, dict[str, Any] | None
]:  # fmt: skip
    """The arguments as JSON in an editor, asked again (saying why) until they are a JSON
    object that fits ``schema``; ``None`` when the editor is dismissed."""
    text, problem = json.dumps(arguments, indent=2, ensure_ascii=False), ""
    while True:
        answer = yield EditorStep(f"{EDIT_TITLE}{problem}", text)
        if not isinstance(answer, str):
            return None
        text = answer
        try:
            value = json.loads(answer)
        except json.JSONDecodeError as exc:
            problem = f" (not JSON: {exc.msg} at line {exc.lineno})"
            continue
        if not isinstance(value, dict):
            problem = " (give a JSON object of the arguments)"
            continue
        try:
            check_payload_against_schema(value, schema)
        except InvalidPayloadError as exc:
            problem = f" ({str(exc).partition('; expected')[0]})"
            continue
        return value


def _single(request: QuestionRequest) -> Walk:
    other = _other_label(request.options)
    labels = tuple(o.label for o in request.options)
    extra = (other,) if request.allow_other else ()
    pick = yield SelectStep(
        dialog_title(request), labels + extra, _descriptions(request.options, len(extra))
    )
    if pick is None or isinstance(pick, list):
        return Declined()
    if pick in labels:
        return Answered(answer=request.options[labels.index(pick)].answer)
    if request.allow_other and pick == other:
        pick = yield InputStep(request.question, OTHER_PLACEHOLDER)
    own = _own_answer(pick, request.options)
    return Answered(answer=own) if own is not None and _fits(request, own) else Declined()


def _checkboxes(request: QuestionRequest) -> Walk:
    other = _other_label(request.options)
    labels = tuple(o.label for o in request.options)
    extra = (other,) if request.allow_other else ()
    picked = yield MultiSelectStep(
        dialog_title(request), labels + extra, _descriptions(request.options, len(extra))
    )
    if not isinstance(picked, list):
        return Declined()
    answers = [o.answer for o in request.options if o.label in picked]
    typed: list[DialogAnswer] = [
        p for p in picked if p not in labels and (p != other or not request.allow_other)
    ]
    if request.allow_other and other in picked:
        typed.append((yield InputStep(request.question, OTHER_PLACEHOLDER)))
    for text in typed:
        own = _own_answer(text, request.options)
        if own is not None and _fits(request, own):
            answers.append(own)
    answers = list(dict.fromkeys(answers))
    return AnsweredMultiple(answers=tuple(answers)) if answers else Declined()


def _toggle_rows(request: QuestionRequest) -> Walk:
    options = request.options
    other = _other_label(options)
    values = [o.answer for o in options]
    checked = [False] * len(options)
    own: list[str] = []
    while True:
        rows = tuple(
            f"[{'x' if on else ' '}] {o.label}"
            for o, on in zip(request.options, checked, strict=True)
        ) + tuple(f"[x] {text}" for text in own)
        extra = ((other,) if request.allow_other else ()) + (DONE,)
        texts = _descriptions(request.options, len(own) + len(extra))
        pick = yield SelectStep(dialog_title(request), rows + extra, texts)
        if pick is None or isinstance(pick, list):
            return Declined()
        if pick == DONE:
            answers = [o.answer for o, on in zip(request.options, checked, strict=True) if on]
            answers = list(dict.fromkeys(answers + own))
            return AnsweredMultiple(answers=tuple(answers)) if answers else Declined()
        if pick == other:
            text = _own_answer((yield InputStep(request.question, OTHER_PLACEHOLDER)), options)
            if text in values:
                checked[values.index(text)] = True
            elif text and text not in own:
                own.append(text)
        elif pick in rows:
            index = rows.index(pick)
            if index < len(checked):
                checked[index] = not checked[index]
            else:
                own.pop(index - len(checked))


async def _show(ui: DialogUI, step: DialogStep, timeout: float | None) -> DialogAnswer:
    match step:
        case SelectStep(title, options, descriptions):
            if descriptions:
                return await ui.select(title, options, timeout=timeout, descriptions=descriptions)
            return await ui.select(title, options, timeout=timeout)
        case MultiSelectStep(title, options, descriptions):
            multi = ui.multi_select  # type: ignore[attr-defined]
            if descriptions:
                picked = await multi(title, options, timeout=timeout, descriptions=descriptions)
            else:
                picked = await multi(title, options, timeout=timeout)
            return list(picked) if picked is not None else None
        case InputStep(title, placeholder):
            return await ui.input(title, placeholder, timeout=timeout)
        case EditorStep(title, prefill):
            return await ui.editor(title, prefill, timeout=timeout)


async def run_dialog(
    request: AskUserRequest,
    ui: DialogUI,
    *,
    timeout: float | None = None,
    tool_call_id: str | None = None,
    aborted: Callable[[], bool] | None = None,
) -> AskUserOutcome:
    """Drive the dialog walk of ``request`` on ``ui``.

    ``timeout`` (seconds) bounds the whole walk; when it passes the outcome is declined
    (reason ``timeout``), as is a dismissed dialog. Each dialog is handed ``timeout`` as given
    (``None``: the UI's own default, if it has one). :class:`InteractionAborted` raised by the
    UI propagates, and so does a cancellation while ``aborted()`` says the turn was aborted
    (as :class:`InteractionAborted`): an abort is never a decline. Any other cancellation (a
    tool's own timeout around the ask) propagates unchanged.
    """
    walk = dialog_walk(request, has_multi_select=callable(getattr(ui, "multi_select", None)))
    deadline = anyio.current_time() + timeout if timeout is not None else math.inf
    answer: DialogAnswer = None
    step = next(walk)
    try:
        while True:
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                return Declined(reason="timeout")
            with anyio.move_on_after(remaining) as scope:
                answer = await _show(ui, step, timeout)
            if scope.cancelled_caught:
                return Declined(reason="timeout")
            step = walk.send(answer)
    except StopIteration as done:
        outcome: AskUserOutcome = done.value
        return outcome
    except anyio.get_cancelled_exc_class() as exc:
        if aborted is None or not aborted():
            raise
        raise InteractionAborted(
            "the turn was aborted during a dialog", tool_call_id=tool_call_id
        ) from exc
    except InteractionAborted as exc:
        if exc.tool_call_id is None:
            exc.tool_call_id = tool_call_id
        raise
