"""Which questions a person can answer: one rule for every host's lists, cards and feeds.

Every interaction a run stores is asked of a person, but one: the run's own ``await`` wait (a
gate on its earlier async questions, which the system settles once they are answered; the
runner refuses an answer to it). A question a person can answer is one asked of a person with
no answer stored yet. A question past its expiry that the sweep has not settled yet is still
listed: the run waits on it until the sweep closes it, and an answer to it is refused as
expired meanwhile.

Who may answer is decided here too. Today anyone a host lets in may answer every question;
the approvers an ask will name (and the groups they belong to) are checked against the
:class:`Person` a host passes, so that every host enforces them alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from interactions.async_questions import AWAIT_KIND
from interactions.store import InteractionRecord

__all__ = ["Person", "answerable", "asks_a_person", "is_answerable"]


@dataclass(frozen=True)
class Person:
    """Someone who answers, as the host established them (a signed-in user, a mapped Slack
    user id, the CLI's operator): never a name that a request carries."""

    id: str


def asks_a_person(record: InteractionRecord) -> bool:
    """Whether ``record`` is a question for a person (answered or not): every interaction
    but the run's own ``await`` wait, which only the system settles."""
    return record.kind != AWAIT_KIND


def is_answerable(record: InteractionRecord, person: Person | None = None) -> bool:
    """Whether ``person`` can answer ``record`` now: a question for a person with no answer
    stored yet. ``person=None`` asks whether anyone can (what a list or a card shown to
    everyone shows); a person named is who the host established."""
    return record.pending and asks_a_person(record)


def answerable(
    records: Iterable[InteractionRecord], person: Person | None = None
) -> list[InteractionRecord]:
    """The records of ``records`` that ``person`` can answer now (:func:`is_answerable`), in
    their order."""
    return [record for record in records if is_answerable(record, person)]
