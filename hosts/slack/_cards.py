"""An interaction as a Block Kit card: open (with its controls) or closed (what happened).

Pure: a stored interaction and the time in, slack-sdk block models out. The question, the
approval's title, body and sections are mrkdwn escaped by :mod:`hosts.slack._mrkdwn`; labels
are plain text. Slack's limits are met here (50 blocks, 3,000 characters a section, 150 a
header, 75 a button or option label): longer text is cut with "…", and the card links to the
full text when the host knows a URL for it (``full_text_url``, a template with ``{run_id}``
and ``{interaction_id}``), else says how to read it whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    CheckboxesElement,
    ConfirmObject,
    ContextBlock,
    HeaderBlock,
    InteractiveElement,
    MarkdownTextObject,
    Option,
    OverflowMenuElement,
    PlainTextObject,
    SectionBlock,
    StaticMultiSelectElement,
    StaticSelectElement,
)

from hosts._kit import Tally
from hosts.slack._modals import editable
from hosts.slack._mrkdwn import (
    escape,
    fit,
    fit_mrkdwn,
    fit_plain,
    person,
    slack_date,
    time_left,
)
from hosts.slack._refs import ActionId, CardRef
from interactions import AskUserInterrupt
from interactions.people import approvers_of
from interactions.resume import RUN_ENDED
from interactions.store import InteractionAnswer, InteractionRecord

__all__ = [
    "ASYNC_NOTE",
    "MAX_BLOCKS",
    "MAX_BUTTONS",
    "MAX_CHECKBOXES",
    "Card",
    "closed_card",
    "closed_why",
    "only_these",
    "open_card",
    "votes_line",
]

MAX_BLOCKS = 50
MAX_BUTTONS = 5  # options shown as buttons; past this, a select menu
MAX_CHECKBOXES = 10  # Slack's checkbox limit; past this, a multi-select menu
MAX_MENU = 100  # Slack's select menu limit
SECTION = 3000
HEADER = 150
LABEL = 75
ASYNC_NOTE = "_Asked while the run keeps working: answer when you are ready._"
"""What an async question's card says: the run does not wait for it."""


@dataclass(frozen=True)
class Card:
    """A message: ``text`` (the notification's fallback, escaped) and its ``blocks``."""

    text: str
    blocks: tuple[Block, ...]

    def payload(self) -> dict[str, Any]:
        """``text`` and ``blocks`` as Slack's JSON (slack-sdk checks every limit here)."""
        return {"text": self.text, "blocks": [block.to_dict() for block in self.blocks]}


def _md(text: str) -> MarkdownTextObject:
    return MarkdownTextObject(text=text, verbatim=True)


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=_md(text))


def only_these(approvers: Sequence[str]) -> str:
    """Who may answer an interrupt naming approvers, as mrkdwn (names escaped): ``Only ada,
    group:release may answer``."""
    return f"Only {escape(', '.join(approvers))} may answer"


def votes_line(tally: Tally) -> str:
    """The votes so far on an approval several people must give, as mrkdwn (names escaped, a
    Slack user mentioned): ``1 of 2 approvals: ada``."""
    said = f"{len(tally.approvals)} of {tally.required} approvals"
    if not tally.approvals:
        return said
    names = (person(n, "slack" if n.startswith("slack:") else None) for n in tally.approvals)
    return f"{said}: {', '.join(names)}"


def _header_text(interrupt: AskUserInterrupt) -> str:
    display = interrupt.display
    if display is not None and display.header:
        return display.header
    return "Approval needed" if interrupt.is_approval else "Question"


def _body(interrupt: AskUserInterrupt, room: int) -> tuple[list[Block], bool]:
    """The header and the text of the interaction, in at most ``room`` blocks; the flag says
    whether any text was cut."""
    header = fit_plain(_header_text(interrupt), HEADER)
    blocks: list[Block] = [HeaderBlock(text=PlainTextObject(text=header))]
    texts: list[str] = []
    cut = False

    def add(text: str, *, limit: int = SECTION, prefix: str = "", bold: bool = False) -> None:
        nonlocal cut
        shown, was_cut = fit(text, limit - len(prefix) - 2)
        texts.append(f"{prefix}*{shown}*" if bold else f"{prefix}{shown}")
        cut |= was_cut

    display = interrupt.display
    title = display.title if display is not None else None
    if interrupt.is_approval and not title:
        title = interrupt.message
    if title:
        add(title, bold=True)
    if interrupt.message and interrupt.message != title:
        add(interrupt.message)
    if display is not None and display.body:
        add(display.body)
    for section in display.sections if display is not None else ():
        heading, heading_cut = fit(section.title, 200)
        cut |= heading_cut
        add(section.body, prefix=f"*{heading}*\n")
    if len(texts) > room - 1:
        hidden = len(texts) - (room - 2)
        texts = [*texts[: room - 2], f"_…and {hidden} more sections._"]
        cut = True
    blocks += [_section(t) for t in texts]
    return blocks, cut


def _fitted(text: str, limit: int) -> str:
    return fit(text, limit)[0]


def _option(interrupt: AskUserInterrupt, index: int) -> Option:
    option = interrupt.options[index]
    description = fit_plain(option.description, LABEL) if option.description else None
    return Option(
        value=str(index), text=PlainTextObject(text=fit_plain(option.label, LABEL)),
        description=PlainTextObject(text=description) if description else None,
    )  # fmt: skip


def _button(label: str, action: str, value: str | None = None, **extra: Any) -> ButtonElement:
    return ButtonElement(
        text=PlainTextObject(text=fit_plain(label, LABEL)), action_id=action, value=value, **extra
    )


def _descriptions(interrupt: AskUserInterrupt) -> SectionBlock | None:
    lines = [
        f"• *{_fitted(o.label, 200)}* — {_fitted(o.description, 400)}"
        for o in interrupt.options
        if o.description
    ]
    return _section(fit_mrkdwn("\n".join(lines), SECTION)[0]) if lines else None  # escaped once


ALWAYS_OPTIONS = (
    ("approve.run", "Approve always (this run)"),
    ("approve.thread", "Approve always (this thread)"),
    ("deny.run", "Deny always (this run)"),
    ("deny.thread", "Deny always (this thread)"),
)
"""The "Always…" menu of a tool call's approval: a decision that sticks for this tool in this
run or in this thread (the conversation), whatever its arguments."""


def _always() -> OverflowMenuElement:
    confirm = ConfirmObject(
        title="Make it stick?",
        text="Every later call of this tool in the run or thread you picked is decided so, "
        "without asking.",
        confirm="Yes",
        deny="Back",
    )
    options = [Option(value=v, text=PlainTextObject(text=t)) for v, t in ALWAYS_OPTIONS]
    return OverflowMenuElement(action_id=ActionId.ALWAYS, options=options, confirm=confirm)


def _controls(interrupt: AskUserInterrupt, ref: CardRef) -> list[Block]:
    """The card's controls: buttons, a select menu, checkboxes and Submit, Other…"""
    if interrupt.is_approval:
        decline = ConfirmObject(
            title="Decline?",
            text="The agent is told you declined to answer.",
            confirm="Decline",
            deny="Back",
            style="danger",
        )
        verdicts: list[InteractiveElement] = [
            _button("Approve", ActionId.APPROVE, style="primary"),
            _button("Request changes", ActionId.CHANGES),
        ]
        tool_call = editable(interrupt)
        if tool_call:
            verdicts.append(_button("Edit arguments…", ActionId.EDIT))
        verdicts.append(_button("Decline", ActionId.DECLINE, style="danger", confirm=decline))
        if tool_call:
            verdicts.append(_always())
        return [ActionsBlock(block_id=ref.block_id("act"), elements=verdicts)]
    options = [_option(interrupt, i) for i in range(min(len(interrupt.options), MAX_MENU))]
    elements: list[InteractiveElement] = []
    blocks: list[Block] = []
    if interrupt.selection == "multiple" and options:
        picker: InteractiveElement
        if len(options) <= MAX_CHECKBOXES:
            picker = CheckboxesElement(action_id=ActionId.CHECKS, options=options)
        else:
            picker = StaticMultiSelectElement(
                action_id=ActionId.CHECKS, placeholder="Choose", options=options
            )
        elements += [picker, _button("Submit", ActionId.SUBMIT, style="primary")]
    elif len(options) > MAX_BUTTONS:
        elements.append(
            StaticSelectElement(action_id=ActionId.SELECT, placeholder="Choose", options=options)
        )
    else:
        for i, option in enumerate(interrupt.options):
            elements.append(_button(option.label, f"{ActionId.PICK}.{i}", value=str(i)))
        described = _descriptions(interrupt)
        if described is not None:
            blocks.append(described)
    if interrupt.allow_other or not interrupt.options:
        elements.append(_button("Other…" if interrupt.options else "Answer…", ActionId.OTHER))
    return [*blocks, ActionsBlock(block_id=ref.block_id("act"), elements=elements)]


def _footer(record: InteractionRecord, now: datetime, cut: bool, url: str | None) -> Block:
    parts = [f"Run `{escape(record.run_id)}`"]
    if record.answer is None and record.expires_at > now:
        left = time_left(record.expires_at - now)
        parts.append(f"⏳ answer by {slack_date(record.expires_at)} ({left} left)")
    if cut and url:
        parts.append(f"<{url}|Full text>")
    elif cut:
        parts.append(f"cut to fit Slack: `pi-recipes runs show {escape(record.run_id)}`")
    return ContextBlock(elements=[_md(" · ".join(parts))])


def full_text_link(template: str | None, record: InteractionRecord) -> str | None:
    """The URL of the interaction's full text, from the host's template (``None`` without)."""
    if not template:
        return None
    return template.format(
        run_id=quote(record.run_id, safe=""), interaction_id=quote(record.id, safe="")
    )


def open_card(
    record: InteractionRecord,
    *,
    now: datetime,
    full_text_url: str | None = None,
    tally: Tally | None = None,
) -> Card:
    """The card of an open interaction: its text, its controls and the time left; for an
    approval several people must give, its ``tally`` (who approved so far, of how many)."""
    interrupt = record.interrupt
    controls = _controls(interrupt, CardRef(record.run_id, record.id))
    note: list[Block] = []
    if record.kind == "async":  # ask_user_async: the run does not wait for this one
        note = [ContextBlock(elements=[_md(ASYNC_NOTE)])]
    approvers = approvers_of(interrupt.metadata)
    if approvers:  # said on the card; a click by anyone else is refused (hosts.slack._host)
        named, _ = fit_mrkdwn(f"{only_these(approvers)}.", SECTION)
        note.append(ContextBlock(elements=[_md(named)]))
    if tally is not None:
        shown, _ = fit_mrkdwn(votes_line(tally), SECTION)
        note.append(_section(shown))
    body, cut = _body(interrupt, MAX_BLOCKS - len(controls) - len(note) - 1)
    footer = _footer(record, now, cut, full_text_link(full_text_url, record))
    return Card(text=_fallback(interrupt), blocks=(*body, *note, *controls, footer))


def closed_card(
    record: InteractionRecord, *, now: datetime, full_text_url: str | None = None
) -> Card:
    """The card once answered (who answered what, and how), declined, cancelled or expired
    (``record.answer`` is ``None`` for an interaction past its expiry that the sweep has not
    settled yet). No controls."""
    interrupt = record.interrupt
    body, cut = _body(interrupt, MAX_BLOCKS - 2)
    outcome, outcome_cut = fit_mrkdwn(outcome_line(record), SECTION)  # many long answers
    footer = _footer(record, now, cut or outcome_cut, full_text_link(full_text_url, record))
    return Card(text=_fallback(interrupt), blocks=(*body, _section(outcome), footer))


def _fallback(interrupt: AskUserInterrupt) -> str:
    title = interrupt.message or _header_text(interrupt)
    return _fitted(f"{_header_text(interrupt)}: {title}", 300)


def _label(interrupt: AskUserInterrupt, value: Any) -> str:
    for option in interrupt.options:
        if option.answer == value:
            return option.label
    return str(value)


def closed_why(answer: InteractionAnswer) -> str | None:
    """Why the system closed an interaction no one answered (its run ended, finished or not;
    or was cancelled), as a phrase; ``None`` when a person declined it."""
    if answer.status != "cancelled" or answer.answered_by != "system":
        return None
    if answer.via == RUN_ENDED.via:
        return "the run ended before it was answered"
    return "the run was cancelled"


def outcome_line(record: InteractionRecord) -> str:
    """What became of the interaction, as one mrkdwn line (names escaped, ids mentioned)."""
    answer: InteractionAnswer | None = record.answer
    if answer is None or answer.status == "expired":
        return f"⌛ Expired {slack_date(record.expires_at)}: no answer was given."
    who = person(answer.answered_by, answer.via)
    if answer.status == "cancelled":
        closed = closed_why(answer)
        return f"🚫 Closed: {closed}." if closed else f"🚫 Declined by {who}."
    payload = answer.payload if isinstance(answer.payload, dict) else {}
    interrupt = record.interrupt
    if interrupt.is_approval:
        approved = payload.get("approved") is True
        head = "✅ Approved" if approved else "✏️ Changes requested"
        remember = payload.get("remember")
        if isinstance(remember, dict):
            scope = "this thread" if remember.get("scope") == "thread" else "this run"
            which = ", these arguments only" if remember.get("args") is True else ""
            verdict = "✅ Approved always" if approved else "🚫 Denied always"
            head = f"{verdict} ({scope}{which})"
        elif approved and isinstance(payload.get("args"), dict):
            head = "✅ Approved with edited arguments"
        feedback = payload.get("feedback")
        tail = f" — feedback: {_fitted(feedback, 2000)}" if feedback else ""
        return f"{head} by {who}{tail}"
    answers = payload.get("answers", [payload.get("answer")])
    shown = ", ".join(f"*{_fitted(_label(interrupt, a), 300)}*" for a in answers)
    return f"✅ Answered by {who}: {shown}"
