"""The asks of one tool call: their ids, the answers a replay returns, and the pause rule.

Every interrupt id is derived here, and only here:

- :func:`call_key` names one tool call within a run: its id, qualified by how often the model
  used that id before (some providers reuse ids across turns), so keys stay unique; an id's
  own ``%``, ``.`` and ``@`` are percent-encoded (``%25``, ``%2E``, ``%40``), so a key never
  holds the separators built on it and no two calls' ids can meet (the second ask of call
  ``a`` is ``int-a.2``; the first of call ``a.2`` is ``int-a%2E2``);
- :func:`interrupt_id_for` names the n-th ask of a call: ``int-<key>`` for the first,
  ``int-<key>.<n>`` for the next ones.

An :class:`AskLedger` rides on a tool call's context. The ask helpers take their ids from it in
order, return a stored answer at once when the call is replayed, and refuse to skip a human: once
an ask came back ``awaiting_user`` the call must return that result (the run pauses on it); a
second ask, or another return value, is a :class:`~interactions.ContractError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from interactions._errors import ContractError
from interactions._models import AskUserInterrupt, AskUserResult, is_awaiting

__all__ = ["AskLedger", "ask_position", "call_key", "interrupt_id_for"]

_ASKED_FIELDS = ("reason", "message", "display", "options", "selection", "allow_other")
"""What the human was shown of an ask, and what it let them answer: a stored answer is
returned to a replayed ask only when all of these are the same."""


_SEPARATORS = str.maketrans({"%": "%25", ".": "%2E", "@": "%40"})


def call_key(tool_call_id: str, occurrence: int = 1) -> str:
    """The key of a tool call: its id, or ``<id>@<n>`` for the n-th use of an id in a run (the
    id's ``%``, ``.`` and ``@`` percent-encoded: see the module docstring)."""
    key = tool_call_id.translate(_SEPARATORS)
    return key if occurrence <= 1 else f"{key}@{occurrence}"


def interrupt_id_for(key: str, position: int = 1) -> str:
    """The interrupt id of the ask at ``position`` (from 1) in the tool call ``key``."""
    return f"int-{key}" if position <= 1 else f"int-{key}.{position}"


def ask_position(key: str, interrupt_id: str) -> int | None:
    """The position of ``interrupt_id`` among the asks of the tool call ``key``, or ``None``
    when it is not one of them (the inverse of :func:`interrupt_id_for`)."""
    if interrupt_id == f"int-{key}":
        return 1
    head, dot, tail = interrupt_id.rpartition(".")
    if dot and head == f"int-{key}" and tail.isdigit() and int(tail) >= 2:
        return int(tail)
    return None


@dataclass
class AskLedger:
    """The asks of one tool call, in order.

    ``key`` is the call's :func:`call_key`. With ``replay`` true (a tool declared with
    ``resume="replay"`` running again after a resume), an ask whose id is in ``answers`` (the
    stored interrupts, each carrying its outcome) returns that outcome at once.
    """

    key: str
    replay: bool = False
    answers: Mapping[str, AskUserInterrupt] = field(default_factory=dict)
    asked: list[AskUserInterrupt] = field(default_factory=list)
    """Every ask made so far, in order (their interrupts, each with its outcome)."""
    awaiting: AskUserInterrupt | None = None
    """The ask that came back ``awaiting_user``: the call must return its result."""
    broken: ContractError | None = None
    """The first breach of the contract, kept even if the tool caught the error."""
    issued: int = 0
    """How many ids :meth:`next_ask` gave out: asks running at once get ids of their own."""

    def next_ask(self) -> tuple[str, AskUserInterrupt | None]:
        """The id of the next ask, and its stored interrupt when a replay has one.

        Raises :class:`ContractError` when an earlier ask of this call is awaiting a human.
        """
        if self.awaiting is not None:
            self._break(
                f"this tool call already asked {self.awaiting.id!r} and is waiting for a human; "
                "return that ask's result now (the run pauses on it), or declare the tool with "
                "resume='replay' to ask several things in turn"
            )
        self.issued += 1
        iid = interrupt_id_for(self.key, self.issued)
        return iid, self.answers.get(iid) if self.replay else None

    def record(self, result: AskUserResult) -> None:
        """Note an ask's result (an ``awaiting_user`` one must be returned by the call)."""
        interrupt = result.details.interrupt
        self.asked.append(interrupt)
        if is_awaiting(result.outcome):
            self.awaiting = interrupt

    def check_replayed(self, stored: AskUserInterrupt, asked: AskUserInterrupt) -> None:
        """Refuse a replay whose ask at this position differs from the stored one in anything
        the human was shown or could answer (an approval's body, a question's options...):
        the stored answer was given to the stored ask, not to this one; or one another tool
        call asked (its ``tool_call_id`` differs)."""
        if stored.tool_call_id is not None and stored.tool_call_id != asked.tool_call_id:
            self._break(
                f"on replay, ask {stored.id!r} of tool call {asked.tool_call_id!r} finds the "
                f"answer stored for tool call {stored.tool_call_id!r}; it was not given to it"
            )
        for name in _ASKED_FIELDS:
            now, then = getattr(asked, name), getattr(stored, name)
            if now != then:
                self._break(
                    f"on replay, ask {stored.id!r} differs in its {name}: it is now {now!r}, "
                    f"but the answer stored for it was given to {then!r}; a replayed tool "
                    "must ask the same things in the same order (keep the code before an ask "
                    "idempotent)"
                )

    def check_return(self, interrupt: AskUserInterrupt | None, pause: bool) -> None:
        """Check what the call returned against its asks.

        Raises the first breach recorded, or a :class:`ContractError` when an ask is awaiting a
        human and the call returned anything but that ask's result.
        """
        if self.broken is not None:
            raise self.broken
        if self.awaiting is None:
            return
        if not pause or interrupt is None or interrupt.id != self.awaiting.id:
            self._break(
                f"ask {self.awaiting.id!r} is waiting for a human, but the tool returned "
                "something else, so nobody would be asked; return the ask's result "
                "(`if result.outcome.type != 'answered': return result`), or declare the tool "
                "with resume='replay' and return it there"
            )

    def _break(self, message: str) -> None:
        error = ContractError(message)
        if self.broken is None:
            self.broken = error
        raise error
