"""Interactivity payloads (a click on a card, a modal sent) read into typed actions, and an
action turned into the answer it gives. Pure.

:func:`parse_interaction` reads the JSON Slack sends (the same over HTTP and Socket Mode);
:func:`answer_of` says what an action answers, given the interrupt it answers. Both raise
``InvalidPayloadError`` (reason ``slack_payload``) for a payload they cannot read, and nothing
else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hosts.slack._modals import YES, arguments_of, flat_parameters
from hosts.slack._refs import ActionId, CardRef, ModalId, ModalMeta, parse_block_id
from interactions import AskUserInterrupt, InvalidPayloadError, UsageError
from interactions.resume import resolve_answer

__all__ = [
    "ALWAYS_CHOICES",
    "Click",
    "Submission",
    "Where",
    "answer_of",
    "args_errors",
    "parse_interaction",
]

ALWAYS_CHOICES = {
    "approve.run": (True, "run"),
    "approve.thread": (True, "thread"),
    "deny.run": (False, "run"),
    "deny.thread": (False, "thread"),
}
"""The options of a tool call's "Always…" menu: the decision and the scope it sticks for."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _User(_Wire):
    id: str = Field(min_length=1)


class _Option(_Wire):
    value: str


class _Action(_Wire):
    action_id: str
    block_id: str
    value: str | None = None
    selected_option: _Option | None = None


class _Container(_Wire):
    channel_id: str | None = None
    message_ts: str | None = None
    thread_ts: str | None = None


class _Message(_Wire):
    ts: str
    thread_ts: str | None = None


class _Channel(_Wire):
    id: str


class _State(_Wire):
    values: dict[str, dict[str, dict[str, Any]]] = {}


class _BlockActions(_Wire):
    type: Literal["block_actions"]
    user: _User
    trigger_id: str = ""
    container: _Container = _Container()
    channel: _Channel | None = None
    message: _Message | None = None
    state: _State = _State()
    actions: list[_Action] = Field(min_length=1)


class _View(_Wire):
    callback_id: str
    private_metadata: str = ""
    state: _State = _State()


class _ViewSubmission(_Wire):
    type: Literal["view_submission"]
    user: _User
    view: _View


@dataclass(frozen=True)
class Where:
    """Where the card is: its channel, its message and the thread it is in (if any)."""

    channel: str
    message_ts: str | None = None
    thread_ts: str | None = None


@dataclass(frozen=True)
class Click:
    """A control clicked on a card. ``index`` is the option of a button or menu;
    ``picked`` the options ticked on a multiple choice when it was clicked."""

    ref: CardRef
    action: str
    user: str
    trigger_id: str
    where: Where
    index: int | None = None
    picked: tuple[int, ...] = ()
    choice: str | None = None
    """The option chosen in the "Always…" menu (one of :data:`ALWAYS_CHOICES`)."""

    @property
    def opens_modal(self) -> bool:
        """Whether the click opens a modal rather than answering."""
        return self.action in (ActionId.OTHER, ActionId.CHANGES, ActionId.EDIT)


@dataclass(frozen=True)
class Submission:
    """A modal of ours sent: the typed ``text`` (answer or feedback)."""

    modal: str
    user: str
    text: str
    meta: ModalMeta
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """The modal's inputs as Slack sends them (``block_id`` → ``action_id`` → state): the
    arguments' modal is read from them against the tool's parameters."""

    @property
    def ref(self) -> CardRef:
        return self.meta.ref

    @property
    def where(self) -> Where:
        return Where(channel=self.meta.channel, thread_ts=self.meta.thread_ts)


_ANSWERING = {
    ActionId.PICK,
    ActionId.SELECT,
    ActionId.SUBMIT,
    ActionId.APPROVE,
    ActionId.DECLINE,
    ActionId.ALWAYS,
}


def _bad(message: str) -> InvalidPayloadError:
    return InvalidPayloadError(message, reason="slack_payload")


def _index(text: str | None) -> int:
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > 4:
        raise _bad(f"not an option of the card: {text!r}")
    return int(text)


def _picked(state: _State, block_id: str) -> tuple[int, ...]:
    chosen = state.values.get(block_id, {}).get(ActionId.CHECKS, {}).get("selected_options")
    if not isinstance(chosen, list):
        return ()
    return tuple(sorted({_index(o.get("value") if isinstance(o, dict) else None) for o in chosen}))


def _click(payload: _BlockActions) -> Click | None:
    action = payload.actions[0]
    kind = action.action_id.partition(".")[0]
    if kind not in (*_ANSWERING, ActionId.OTHER, ActionId.CHANGES, ActionId.EDIT):
        return None  # a checkbox ticked, or a control that is not ours: nothing to do
    ref, _ = parse_block_id(action.block_id)
    channel = payload.container.channel_id or (payload.channel.id if payload.channel else None)
    if not channel:
        raise _bad("a card click without its channel")
    message = payload.message
    where = Where(
        channel=channel,
        message_ts=payload.container.message_ts or (message.ts if message else None),
        thread_ts=payload.container.thread_ts or (message.thread_ts if message else None),
    )
    index = None
    choice = None
    if kind == ActionId.PICK:
        index = _index(action.value)
    elif kind == ActionId.SELECT:
        index = _index(action.selected_option.value if action.selected_option else None)
    elif kind == ActionId.ALWAYS:
        choice = action.selected_option.value if action.selected_option else None
        if choice not in ALWAYS_CHOICES:
            raise _bad(f"not an option of the card: {choice!r}")
    return Click(
        ref=ref,
        action=kind,
        user=payload.user.id,
        trigger_id=payload.trigger_id,
        where=where,
        index=index,
        picked=_picked(payload.state, action.block_id),
        choice=choice,
    )


def _submission(payload: _ViewSubmission) -> Submission | None:
    view = payload.view
    if view.callback_id not in (ModalId.ANSWER, ModalId.FEEDBACK, ModalId.ARGS):
        return None
    meta = ModalMeta.load(view.private_metadata)
    if view.callback_id == ModalId.ARGS:
        return Submission(
            modal=view.callback_id, user=payload.user.id, text="", meta=meta,
            values=view.state.values,
        )  # fmt: skip
    field = view.state.values.get(ModalId.INPUT_BLOCK, {}).get(ModalId.INPUT_ACTION, {})
    text = field.get("value")
    if not isinstance(text, str):
        text = ""
    return Submission(modal=view.callback_id, user=payload.user.id, text=text.strip(), meta=meta)


def parse_interaction(payload: Mapping[str, Any]) -> Click | Submission | None:
    """The action an interactivity payload carries, or ``None`` when there is nothing to do
    (a checkbox ticked, a modal closed, another app's control, another payload type)."""
    kind = payload.get("type")
    try:
        if kind == "block_actions":
            return _click(_BlockActions.model_validate(payload))
        if kind == "view_submission":
            return _submission(_ViewSubmission.model_validate(payload))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise _bad(f"{kind} payload: {where}: {first['msg']}") from None
    return None


def _option_answer(interrupt: AskUserInterrupt, index: int) -> str:
    if index >= len(interrupt.options):
        raise _bad(f"option {index} is not on the card")
    return interrupt.options[index].answer


def answer_of(action: Click | Submission, interrupt: AskUserInterrupt) -> tuple[str, Any]:
    """The answer ``action`` gives to ``interrupt``: its status (``resolved``/``cancelled``)
    and payload, for ``Runner.answer`` (which checks it against the interrupt).

    Raises ``InvalidPayloadError`` for an option not on the card, a multiple choice sent with
    nothing ticked, or an empty typed text; ``UsageError`` for a click that opens a modal.
    """
    if isinstance(action, Submission) and action.modal == ModalId.ARGS:
        return "resolved", {"approved": True, "args": _edited(action, interrupt)}
    if isinstance(action, Submission):
        if not action.text:
            raise _bad("the typed text is empty")
        if action.modal == ModalId.FEEDBACK:
            return "resolved", {"approved": False, "feedback": action.text}
        if interrupt.selection == "multiple":
            ticked = [_option_answer(interrupt, i) for i in action.meta.picked]
            typed = [] if action.text in ticked else [action.text]
            return "resolved", {"answers": [*ticked, *typed]}
        return "resolved", {"answer": action.text}
    if action.action in (ActionId.PICK, ActionId.SELECT):
        assert action.index is not None
        return "resolved", {"answer": _option_answer(interrupt, action.index)}
    if action.action == ActionId.SUBMIT:
        if not action.picked:
            raise _bad("tick at least one option, then Submit")
        return "resolved", {"answers": [_option_answer(interrupt, i) for i in action.picked]}
    if action.action == ActionId.APPROVE:
        return "resolved", {"approved": True}
    if action.action == ActionId.DECLINE:
        return "cancelled", None
    if action.action == ActionId.ALWAYS:
        approved, scope = ALWAYS_CHOICES[action.choice or ""]
        return "resolved", {"approved": approved, "remember": {"scope": scope, "args": False}}
    raise UsageError(f"{action.action} opens a modal; it answers nothing by itself")


class _FieldError(InvalidPayloadError):
    """An input of the arguments' modal that cannot be read: its ``block_id`` and why."""

    def __init__(self, block_id: str, message: str) -> None:
        super().__init__(message, reason="invalid_payload")
        self.block_id = block_id


def _state(action: Submission, block_id: str) -> Mapping[str, Any]:
    state = action.values.get(block_id, {}).get(ModalId.ARG_ACTION)
    return state if isinstance(state, Mapping) else {}


def _number(text: str, kind: str, block_id: str) -> int | float:
    try:
        return int(text) if kind == "integer" and text.lstrip("+-").isdigit() else float(text)
    except ValueError:
        raise _FieldError(block_id, f"{text!r} is not a number") from None


def _read_field(state: Mapping[str, Any], prop: dict[str, Any], block_id: str) -> Any:
    """An input's value as the argument (``None``: left empty)."""
    kind = prop["type"]
    if kind == "boolean":
        chosen = state.get("selected_options")
        return isinstance(chosen, list) and any(
            isinstance(o, Mapping) and o.get("value") == YES for o in chosen
        )
    if "enum" in prop:
        option = state.get("selected_option")
        return option.get("value") if isinstance(option, Mapping) else None
    text = state.get("value")
    if not isinstance(text, str) or (kind != "string" and not text.strip()):
        return None
    return _number(text.strip(), kind, block_id) if kind != "string" else text


def _edited(action: Submission, interrupt: AskUserInterrupt) -> dict[str, Any]:
    """The arguments the modal holds; :class:`_FieldError` for an input that cannot be read,
    ``InvalidPayloadError`` when the interrupt takes no edited arguments."""
    found = arguments_of(interrupt)
    if found is None:
        raise _bad("this approval's arguments cannot be edited")
    schema, _ = found
    flat = flat_parameters(schema)
    if flat is None:
        text = _state(action, ModalId.ARGS_JSON).get("value")
        try:
            given = json.loads(text if isinstance(text, str) else "")
        except (ValueError, RecursionError) as exc:
            raise _FieldError(ModalId.ARGS_JSON, f"not JSON: {exc}") from None
        if not isinstance(given, dict):
            raise _FieldError(ModalId.ARGS_JSON, "the arguments must be one JSON object")
        return given
    args: dict[str, Any] = {}
    for position, (name, prop) in enumerate(flat):
        block_id = f"{ModalId.ARG_BLOCK}{position}"
        value = _read_field(_state(action, block_id), prop, block_id)
        if value is not None:
            args[name] = value
    return args


def args_errors(action: Submission, interrupt: AskUserInterrupt) -> dict[str, str]:
    """What is wrong with the arguments the modal of ``action`` holds, by the ``block_id`` of
    the input to show it under (a modal's ``response_action: errors``); empty when they fit
    the tool's parameters."""
    flat = flat_parameters((arguments_of(interrupt) or ({}, {}))[0])
    blocks = {name: f"{ModalId.ARG_BLOCK}{i}" for i, (name, _) in enumerate(flat or ())}
    first = next(iter(blocks.values()), ModalId.ARGS_JSON)
    try:
        status, payload = answer_of(action, interrupt)
        resolve_answer(interrupt, status, payload)
    except _FieldError as exc:
        return {exc.block_id: _fit(str(exc))}
    except InvalidPayloadError as exc:
        said = str(exc).removeprefix("args: ").split("; expected", 1)[0]
        name, _, why = said.partition(": ")
        if name in blocks:
            return {blocks[name]: _fit(why)}
        missing = re.fullmatch(r"'(.+)' is a required property", said)
        if missing and missing.group(1) in blocks:
            return {blocks[missing.group(1)]: "Required."}
        return {first: _fit(said)}
    return {}


def _fit(text: str) -> str:
    return text if len(text) <= 300 else text[:299] + "…"
