"""Which interaction a card's control answers: carried in Slack's ``block_id`` and in a
modal's ``private_metadata``, read back from the payloads. Pure.

A reference is the run id and the interaction id. Slack bounds a ``block_id`` at 255
characters; ids too long for it travel as a digest, which the host resolves against the
store's interactions (:func:`digest_of`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from interactions import InvalidPayloadError

__all__ = [
    "MAX_BLOCK_ID",
    "ActionId",
    "CardRef",
    "ModalId",
    "ModalMeta",
    "digest_of",
    "parse_block_id",
]

MAX_BLOCK_ID = 255
MAX_METADATA = 3000  # a view's private_metadata, as Slack bounds it


@dataclass(frozen=True)
class CardRef:
    """The interaction a card shows. ``digest`` alone (ids empty) means "look it up"."""

    run_id: str = ""
    interaction_id: str = ""
    digest: str = ""

    @property
    def resolved(self) -> bool:
        """Whether the ids are known (else only the digest is)."""
        return bool(self.run_id and self.interaction_id)

    def _key(self) -> list[str]:
        return [self.run_id, self.interaction_id] if self.resolved else ["#" + self.digest]

    def block_id(self, part: str) -> str:
        """The ``block_id`` of this card's block ``part`` (unique in the message)."""
        text = _dump([*self._key(), part])
        if len(text) <= MAX_BLOCK_ID:
            return text
        short = _dump(["#" + digest_of(self.run_id, self.interaction_id), part])
        if len(short) > MAX_BLOCK_ID:  # a part name of ours is never that long
            raise ValueError(f"block part name too long: {part!r}")
        return short


def digest_of(run_id: str, interaction_id: str) -> str:
    """The short stand-in for a reference whose ids do not fit a ``block_id``."""
    return hashlib.sha256(f"{run_id}\0{interaction_id}".encode()).hexdigest()[:40]


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _bad(what: str) -> InvalidPayloadError:
    return InvalidPayloadError(f"not a card of this host: {what}", reason="slack_payload")


def _ref_from(items: list[Any]) -> CardRef:
    if len(items) == 1 and isinstance(items[0], str) and items[0].startswith("#"):
        return CardRef(digest=items[0][1:])
    if len(items) == 2 and all(isinstance(i, str) and i for i in items):
        return CardRef(run_id=items[0], interaction_id=items[1])
    raise _bad("reference")


def parse_block_id(block_id: str) -> tuple[CardRef, str]:
    """The reference and the part name a ``block_id`` of ours carries.

    Raises ``InvalidPayloadError`` (reason ``slack_payload``) for any other ``block_id``.
    """
    if len(block_id) > MAX_BLOCK_ID:
        raise _bad("block id")
    try:
        items = json.loads(block_id)
    except (ValueError, RecursionError):  # nested past the parser's depth: not ours either
        raise _bad("block id") from None
    if not isinstance(items, list) or len(items) < 2 or not isinstance(items[-1], str):
        raise _bad("block id")
    return _ref_from(items[:-1]), items[-1]


@dataclass(frozen=True)
class ModalMeta:
    """What a modal carries from the click that opened it to its submission: the reference,
    where the card is (for refusals shown to the person), and the options already ticked on a
    multiple-choice card (their indexes)."""

    ref: CardRef
    channel: str
    thread_ts: str | None = None
    picked: tuple[int, ...] = field(default=())

    def dump(self) -> str:
        """As ``private_metadata`` (well under Slack's 3,000 characters)."""
        key = self.ref._key()
        if len(_dump(key)) > 1000:
            key = ["#" + digest_of(self.ref.run_id, self.ref.interaction_id)]
        return _dump({"ref": key, "c": self.channel, "t": self.thread_ts, "p": list(self.picked)})

    @classmethod
    def load(cls, text: str) -> ModalMeta:
        """Read ``private_metadata`` back; ``InvalidPayloadError`` if it is not ours."""
        if len(text) > MAX_METADATA:
            raise _bad("modal metadata")
        try:
            data = json.loads(text)
            ref = _ref_from(data["ref"])
            channel, thread, picked = data["c"], data["t"], data["p"]
        except (ValueError, KeyError, TypeError, RecursionError):
            raise _bad("modal metadata") from None
        if not isinstance(channel, str) or not (thread is None or isinstance(thread, str)):
            raise _bad("modal metadata")
        if not isinstance(picked, list) or not all(type(i) is int for i in picked):
            raise _bad("modal metadata")
        return cls(ref=ref, channel=channel, thread_ts=thread, picked=tuple(picked))


class ActionId:
    """The ``action_id`` of each control on a card."""

    PICK = "pi_pick"  # a button per option (``pi_pick.<n>``: ids are unique in a block);
    # its value is the option's index
    SELECT = "pi_select"  # the select menu past five options
    CHECKS = "pi_checks"  # checkboxes (or a multi-select menu) of a multiple choice
    SUBMIT = "pi_submit"  # sends the ticked options
    OTHER = "pi_other"  # opens the modal for a typed answer
    APPROVE = "pi_approve"
    CHANGES = "pi_changes"  # opens the modal asking for feedback
    DECLINE = "pi_decline"
    EDIT = "pi_edit"  # a tool call's approval: opens the modal of its arguments
    ALWAYS = "pi_always"  # a tool call's approval: the overflow menu of decisions that stick;
    # its options' values are ``approve.run``, ``approve.thread``, ``deny.run``, ``deny.thread``


class ModalId:
    """The ``callback_id`` of each modal, and the ids of its text input."""

    ANSWER = "pi_answer"
    FEEDBACK = "pi_feedback"
    INPUT_BLOCK = "pi_text"
    INPUT_ACTION = "pi_text"
    ARGS = "pi_args"  # a tool call's arguments, edited: the call approved with them
    ARG_BLOCK = "pi_arg."  # + the argument's position in the tool's parameters
    ARG_ACTION = "pi_arg"
    ARGS_JSON = "pi_args_json"  # the block of the arguments as one JSON text (not flat)
