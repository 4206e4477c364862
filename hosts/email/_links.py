"""The links of a mail: what each answers, for whom, until when, signed so no one can make or
change one.

Pure: nothing here reads the store, the clock or the network. A link is
``{base}/answer/{token}``; its token is a :class:`Link` (the run, the interaction, the choice,
the recipient's name and address, the question's expiry) signed with HMAC-SHA256 by
itsdangerous (``URLSafeSerializer`` with a salt of its own, so a token signed for anything else
with the same secret is no link). The token is the link's only secret: whoever holds it may
see the confirmation page and confirm, as the person it names, which is why a mail goes to one
person and a link never answers on a ``GET``.

Choices (:data:`Choice`): ``option:N`` (the Nth option of a question), ``text`` (a typed
answer, on a question that takes one), ``approve``, ``changes`` (a refusal with feedback),
``decline``, ``choose`` (several options of a question that takes several, ticked on the
confirmation page). :func:`choices_of` lists those a question offers by mail;
:func:`answer_for` turns one into the runner's answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from itsdangerous import BadSignature, URLSafeSerializer

from interactions import AskUserInterrupt, InvalidPayloadError, UsageError

__all__ = [
    "MIN_SECRET",
    "SALT",
    "BadLink",
    "Link",
    "LinkSigner",
    "answer_for",
    "choice_label",
    "choices_of",
    "needs_text",
]

SALT = "pi-recipes.email.answer.v1"
MIN_SECRET = 32
"""The fewest characters of a signing secret."""

Status = Literal["resolved", "cancelled"]


class BadLink(Exception):
    """A token that is not a link signed with this secret (forged, changed, cut short)."""


@dataclass(frozen=True)
class Link:
    """What one link answers: ``choice`` to ``interaction_id`` of ``run_id``, as ``name`` (to
    whose ``address`` it was sent), until ``expires`` (the question's expiry)."""

    run_id: str
    interaction_id: str
    choice: str
    name: str
    address: str
    expires: datetime

    def expired(self, now: datetime) -> bool:
        """Whether the question (so the link) has expired at ``now``."""
        return now >= self.expires


class LinkSigner:
    """Signs and reads links with ``secret`` (at least :data:`MIN_SECRET` characters;
    ``UsageError`` otherwise, never quoting it). Its ``repr`` hides the secret."""

    def __init__(self, secret: str) -> None:
        secret = secret.strip()
        if len(secret) < MIN_SECRET:
            raise UsageError(
                f"the email links' signing secret needs at least {MIN_SECRET} characters; make "
                'one with: python -c "import secrets; print(secrets.token_urlsafe(32))"'
            )
        self._serializer = URLSafeSerializer(secret, salt=SALT)

    def token(self, link: Link) -> str:
        """``link`` as a signed token (URL-safe)."""
        return str(
            self._serializer.dumps(
                {
                    "r": link.run_id,
                    "i": link.interaction_id,
                    "c": link.choice,
                    "n": link.name,
                    "a": link.address,
                    "e": int(link.expires.timestamp()),
                }
            )
        )

    def read(self, token: str) -> Link:
        """The link ``token`` signs; :class:`BadLink` for anything else."""
        try:
            data = self._serializer.loads(token)
        except (BadSignature, UnicodeError, ValueError):
            raise BadLink("not a signed link") from None
        try:
            fields = [data[k] for k in ("r", "i", "c", "n", "a")]
            expires = datetime.fromtimestamp(int(data["e"]), UTC)
        except (KeyError, TypeError, ValueError, OverflowError):
            raise BadLink("a signed link of another shape") from None
        if not all(isinstance(f, str) for f in fields):
            raise BadLink("a signed link of another shape")
        run_id, interaction_id, choice, name, address = fields
        return Link(run_id, interaction_id, choice, name, address, expires)

    def __repr__(self) -> str:
        return "LinkSigner(***)"


def choices_of(interrupt: AskUserInterrupt) -> list[str]:
    """The choices a mail offers for ``interrupt``, one link each: Approve, Request changes,
    Decline for an approval; an option each for a question with one answer (and ``text`` when
    it takes a typed one); ``choose`` for a question of several options at once."""
    if interrupt.is_approval:
        return ["approve", "changes", "decline"]
    if interrupt.selection == "multiple":
        return ["choose"] if interrupt.options else ["text"]
    options = [f"option:{i}" for i in range(len(interrupt.options))]
    return options + (["text"] if interrupt.allow_other or not interrupt.options else [])


def choice_label(interrupt: AskUserInterrupt, choice: str) -> str:
    """What ``choice`` says to a person (an option's label, "Approve"...); ``UsageError`` for
    a choice ``interrupt`` does not offer."""
    fixed = {"approve": "Approve", "changes": "Request changes", "decline": "Decline",
             "text": "Another answer…" if interrupt.options else "Answer",
             "choose": "Choose…"}  # fmt: skip
    if choice not in choices_of(interrupt):
        raise UsageError(f"{choice!r} is not a choice of this question")
    if choice.startswith("option:"):
        return interrupt.options[int(choice.removeprefix("option:"))].label
    return fixed[choice]


def _picked(interrupt: AskUserInterrupt, picked: Sequence[str], text: str) -> list[str]:
    indexes = sorted({int(p) for p in picked if p.isdigit() and int(p) < len(interrupt.options)})
    if len(indexes) != len(set(picked)):
        raise InvalidPayloadError("an option ticked is not one of the question's",
                                  reason="invalid_payload")  # fmt: skip
    answers = [interrupt.options[i].answer for i in indexes]
    if text and interrupt.allow_other:
        answers.append(text)
    if not answers:
        raise InvalidPayloadError(
            "tick at least one option, then confirm", reason="invalid_payload"
        )
    return answers


def needs_text(choice: str) -> bool:
    """Whether the confirmation of ``choice`` asks for a text (feedback, a typed answer)."""
    return choice in ("changes", "text")


def answer_for(
    interrupt: AskUserInterrupt, choice: str, text: str = "", picked: Sequence[str] = ()
) -> tuple[Status, Any]:
    """The runner's answer (status, payload) ``choice`` gives, with the ``text`` typed and the
    options ``picked`` (their indexes, as the form sends them) on the confirmation page.
    Raises ``InvalidPayloadError`` for an empty text where one is needed, nothing picked (or
    an option that is not one), and ``UsageError`` for a choice ``interrupt`` does not offer
    (the runner checks the rest)."""
    choice_label(interrupt, choice)  # a choice not offered: refused here
    text = text.strip()
    if choice == "choose":
        return "resolved", {"answers": _picked(interrupt, picked, text)}
    if needs_text(choice) and not text:
        what = "what should change" if choice == "changes" else "your answer"
        raise InvalidPayloadError(f"write {what}, then confirm", reason="invalid_payload")
    if choice == "approve":
        return "resolved", {"approved": True}
    if choice == "decline":
        return "cancelled", None
    if choice == "changes":
        return "resolved", {"approved": False, "feedback": text}
    if choice == "text":
        return "resolved", {"answer": text}
    return "resolved", {"answer": interrupt.options[int(choice.removeprefix("option:"))].answer}
