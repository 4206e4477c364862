"""The two modals a card opens: a typed answer ("Other…") and the feedback of "Request
changes". Pure: the interrupt and the click's :class:`~hosts.slack._refs.ModalMeta` in, a
slack-sdk ``View`` out."""

from __future__ import annotations

from slack_sdk.models.blocks import (
    InputBlock,
    MarkdownTextObject,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from hosts.slack._mrkdwn import fit, fit_plain
from hosts.slack._refs import ModalId, ModalMeta
from interactions import AskUserInterrupt

__all__ = ["MAX_TYPED", "answer_modal", "feedback_modal"]

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
