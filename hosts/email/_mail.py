"""A question as a mail to one person: plain text and HTML (every text a person or a model
wrote escaped), a link per choice, and a link to the card on the web page.

Pure: a stored interaction, the recipient and the links in, an
:class:`email.message.EmailMessage` out. The subject is one line (line breaks in a question
cannot add headers) cut to :data:`SUBJECT`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Literal

from interactions import AskUserInterrupt
from interactions.store import InteractionRecord

__all__ = ["SUBJECT", "Because", "Choice", "Recipient", "compose", "question_texts"]

SUBJECT = 120
"""The longest subject, in characters (then cut with "…")."""

Because = Literal["opened", "reminded", "escalated"]
"""Why the mail is sent: the question opened, a reminder, an escalation to this person."""


@dataclass(frozen=True)
class Recipient:
    """A person of the users file with an address."""

    name: str
    address: str


@dataclass(frozen=True)
class Choice:
    """One link of the mail: what it says and where it goes."""

    label: str
    url: str


def _line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def question_texts(interrupt: AskUserInterrupt) -> tuple[str, str, list[tuple[str, str]]]:
    """The header (``Question``, ``Approval needed``, or the ask's own), the title, and the
    ``(heading, text)`` paragraphs of ``interrupt``, as written (unescaped)."""
    display = interrupt.display
    header = (display.header if display is not None else None) or (
        "Approval needed" if interrupt.is_approval else "Question"
    )
    title = (display.title if display is not None else None) or interrupt.message or ""
    paragraphs: list[tuple[str, str]] = []
    if interrupt.message and interrupt.message != title:
        paragraphs.append(("", interrupt.message))
    if display is not None and display.body:
        paragraphs.append(("", display.body))
    for section in display.sections if display is not None else ():
        paragraphs.append((section.title, section.body))
    for option in interrupt.options:
        if option.description:
            paragraphs.append((option.label, option.description))
    return header, title, paragraphs


_INTRO = {
    "opened": "You are asked:",
    "reminded": "A reminder: this still waits for an answer.",
    "escalated": "This was escalated to you: it still waits for an answer.",
}


def compose(
    record: InteractionRecord,
    to: Recipient,
    sender: str,
    choices: Sequence[Choice],
    *,
    page: str | None,
    because: Because = "opened",
) -> EmailMessage:
    """The mail asking ``to`` the question of ``record``, from ``sender``: a link per choice
    (each confirmed on a page before it answers), ``page`` (the card on the web page, when
    known), and when the question expires."""
    interrupt = record.interrupt
    header, title, paragraphs = question_texts(interrupt)
    subject = _line(f"{'Reminder: ' if because == 'reminded' else ''}{header}: {title}")
    if len(subject) > SUBJECT:
        subject = subject[: SUBJECT - 1].rstrip() + "…"
    expires = record.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = sender
    message["To"] = to.address
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to this
    message.set_content(_text(to, title, paragraphs, choices, page, expires, because))
    message.add_alternative(
        _html(to, header, title, paragraphs, choices, page, expires, because), subtype="html"
    )
    return message


def _text(
    to: Recipient,
    title: str,
    paragraphs: list[tuple[str, str]],
    choices: Sequence[Choice],
    page: str | None,
    expires: str,
    because: Because,
) -> str:
    lines = [f"Hello {to.name},", "", _INTRO[because], "", title, ""]
    for heading, text in paragraphs:
        if heading:
            lines.append(f"{heading}:")
        lines += [text, ""]
    if choices:
        lines.append("Answer with one click (a page asks you to confirm):")
        lines += [f"  {choice.label}: {choice.url}" for choice in choices]
        lines.append("")
    if page:
        lines += [f"Open it on the page: {page}", ""]
    if not choices and not page:
        lines += ["Answer it where your team answers questions (the page, Slack, the CLI).", ""]
    lines.append(f"It expires at {expires}. The links are for you alone: do not forward them.")
    return "\n".join(lines) + "\n"


def _html(
    to: Recipient,
    header: str,
    title: str,
    paragraphs: list[tuple[str, str]],
    choices: Sequence[Choice],
    page: str | None,
    expires: str,
    because: Because,
) -> str:
    e = html.escape
    parts = [f"<p>Hello {e(to.name)},</p>", f"<p>{e(_INTRO[because])}</p>",
             f"<h2>{e(header)}: {e(title)}</h2>"]  # fmt: skip
    for heading, text in paragraphs:
        if heading:
            parts.append(f"<h3>{e(heading)}</h3>")
        parts.append(f'<p style="white-space: pre-wrap">{e(text)}</p>')
    if choices:
        links = " ".join(f'<a href="{e(c.url)}">{e(c.label)}</a> ·' for c in choices)
        parts.append(f"<p>{links.rstrip(' ·')}</p>")
        parts.append("<p><small>A page asks you to confirm before anything is sent.</small></p>")
    if page:
        parts.append(f'<p><a href="{e(page)}">Open it on the page</a></p>')
    parts.append(f"<p><small>It expires at {e(expires)}. The links are for you alone: do not "
                 "forward them.</small></p>")  # fmt: skip
    return "<!doctype html>\n<html><body>\n" + "\n".join(parts) + "\n</body></html>\n"
