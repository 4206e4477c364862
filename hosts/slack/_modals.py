"""The modals a card opens: a typed answer ("Other…"), the feedback of "Request changes", and
a tool call's arguments ("Edit arguments…"). Pure: the interrupt and the click's
:class:`~hosts.slack._refs.ModalMeta` in, a slack-sdk ``View`` out.

The arguments' modal follows the MCP host's form: where every parameter of the tool is flat
(a string, a number, an integer, a boolean, an enum of strings) one input per parameter,
prefilled with the call's own value (a text input, a number input, a select, a checkbox);
otherwise one JSON text of all the arguments.
"""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    CheckboxesElement,
    InputBlock,
    InputInteractiveElement,
    MarkdownTextObject,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from hosts._kit import call_arguments
from hosts._kit import flat_parameters as kit_flat_parameters
from hosts.slack._mrkdwn import fit, fit_plain
from hosts.slack._refs import ModalId, ModalMeta
from interactions import AskUserInterrupt

__all__ = [
    "MAX_TYPED",
    "answer_modal",
    "args_modal",
    "arguments_of",
    "editable",
    "feedback_modal",
    "flat_parameters",
]

MAX_TYPED = 3000
"""The most characters a typed answer or feedback may have."""


def _modal(callback_id: str, title: str, question: str, label: str, meta: ModalMeta) -> View:
    return View(
        type="modal",
        callback_id=callback_id,
        title=PlainTextObject(text=fit_plain(title, 24)),
        submit=PlainTextObject(text="Send"),
        close=PlainTextObject(text="Cancel"),
        private_metadata=meta.dump(),
        blocks=[
            SectionBlock(text=MarkdownTextObject(text=fit(question, 3000)[0], verbatim=True)),
            InputBlock(
                block_id=ModalId.INPUT_BLOCK,
                label=PlainTextObject(text=label),
                element=PlainTextInputElement(
                    action_id=ModalId.INPUT_ACTION, multiline=True, max_length=MAX_TYPED
                ),
            ),
        ],
    )


def answer_modal(interrupt: AskUserInterrupt, meta: ModalMeta) -> View:
    """The modal of "Other…": the question and a text input for an answer of one's own
    (added to the options already ticked, on a multiple choice)."""
    label = "Another answer" if interrupt.selection == "multiple" else "Your answer"
    return _modal(ModalId.ANSWER, "Your answer", interrupt.message or "", label, meta)


def feedback_modal(interrupt: AskUserInterrupt, meta: ModalMeta) -> View:
    """The modal of "Request changes": what should change, sent as the revision's feedback."""
    display = interrupt.display
    title = (display.title if display is not None else None) or interrupt.message or ""
    return _modal(ModalId.FEEDBACK, "Request changes", title, "What should change?", meta)


MAX_OPTIONS = 100  # a select menu's options, as Slack bounds them
MAX_VALUE = 150  # an option's value
YES = "true"  # the value of a boolean's one checkbox
MAX_FIELDS = 98  # a modal's 100 blocks, less the title's


def arguments_of(interrupt: AskUserInterrupt) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The tool's parameters (their JSON Schema) and the call's arguments, when ``interrupt``
    is the approval of a tool call whose arguments its approver may edit; else ``None``."""
    return call_arguments(interrupt.metadata) if interrupt.is_approval else None


def flat_parameters(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """The tool's parameters in order, each with its schema, when every one is flat (the host
    kit's rule, :func:`hosts._kit.flat_parameters`) and fits a modal: at most
    :data:`MAX_FIELDS` of them, each enum a select menu Slack can list; ``None`` otherwise."""
    found = kit_flat_parameters(schema)
    if found is None or len(found) > MAX_FIELDS:
        return None
    for _, prop in found:
        choices = prop.get("enum", ())
        if len(choices) > MAX_OPTIONS or any(len(choice) > MAX_VALUE for choice in choices):
            return None
    return found


def _json_text(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def editable(interrupt: AskUserInterrupt) -> bool:
    """Whether the card of ``interrupt`` offers "Edit arguments…": a tool call's approval
    whose arguments fit the modal (as fields, or as a JSON text Slack can hold)."""
    found = arguments_of(interrupt)
    if found is None:
        return False
    schema, arguments = found
    return flat_parameters(schema) is not None or len(_json_text(arguments)) <= MAX_TYPED


def _choice(value: str) -> Option:
    return Option(value=value, text=PlainTextObject(text=fit_plain(value, 75)))


def _field(prop: dict[str, Any], value: Any) -> InputInteractiveElement:
    kind = prop["type"]
    action = ModalId.ARG_ACTION
    if kind == "boolean":
        yes = Option(value=YES, text=PlainTextObject(text="Yes"))
        return CheckboxesElement(
            action_id=action, options=[yes], initial_options=[yes] if value is True else None
        )
    if "enum" in prop:
        options = [_choice(c) for c in prop["enum"]]
        initial = next((o for o in options if o.value == value), None)
        return StaticSelectElement(
            action_id=action, placeholder="Choose", options=options, initial_option=initial
        )
    if kind in ("number", "integer"):
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        return NumberInputElement(
            action_id=action, is_decimal_allowed=kind == "number", initial_value=number
        )
    text = value if isinstance(value, str) and len(value) <= MAX_TYPED else None
    return PlainTextInputElement(action_id=action, initial_value=text, max_length=MAX_TYPED)


def args_modal(interrupt: AskUserInterrupt, meta: ModalMeta) -> View:
    """The modal of "Edit arguments…": the tool call's arguments, prefilled, whose submission
    approves the call with them (see the module docstring). The interrupt must be
    :func:`editable`."""
    found = arguments_of(interrupt)
    if found is None:
        raise ValueError("not the approval of a tool call whose arguments may be edited")
    schema, arguments = found
    display = interrupt.display
    title = (display.title if display is not None else None) or interrupt.message or ""
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=fit(title, 3000)[0], verbatim=True))
    ]
    flat = flat_parameters(schema)
    required = set(schema.get("required") or ())
    if flat is None:
        blocks.append(
            InputBlock(
                block_id=ModalId.ARGS_JSON,
                label=PlainTextObject(text="Arguments (JSON)"),
                hint=PlainTextObject(text="One JSON object: the arguments the tool runs with."),
                element=PlainTextInputElement(
                    action_id=ModalId.ARG_ACTION,
                    multiline=True,
                    max_length=MAX_TYPED,
                    initial_value=_json_text(arguments),
                ),
            )
        )
    for position, (name, prop) in enumerate(flat or ()):
        description = prop.get("description")
        blocks.append(
            InputBlock(
                block_id=f"{ModalId.ARG_BLOCK}{position}",
                label=PlainTextObject(text=fit_plain(str(prop.get("title") or name), 2000)),
                hint=PlainTextObject(text=fit_plain(description, 2000))
                if isinstance(description, str) and description
                else None,
                element=_field(prop, arguments.get(name)),
                optional=prop["type"] == "boolean" or name not in required,
            )
        )
    return View(
        type="modal",
        callback_id=ModalId.ARGS,
        title=PlainTextObject(text="Edit arguments"),
        submit=PlainTextObject(text="Approve"),
        close=PlainTextObject(text="Cancel"),
        private_metadata=meta.dump(),
        blocks=blocks,
    )
