"""The asks of one tool call: their ids, the answers a replay returns, and the pause rule.

Every interrupt id is derived here, and only here, from where the ask is raised — its
:class:`AskScope` — and its position there:

- a scope is a path of names, outermost first: a tool call (:meth:`AskScope.call`: its id,
  qualified by how often the model used that id before, since some providers reuse ids across
  turns), under whatever encloses it (a graph node's visit: :meth:`AskScope.enter`); a human
  node's field is a scope of its own, with no tool call;
- each name has its own ``%``, ``.`` and ``@`` percent-encoded (``%25``, ``%2E``, ``%40``), so
  no name holds the separators built on it and no two scopes' ids can meet (the second ask of
  call ``a`` is ``int-a.2``; the first of call ``a.2`` is ``int-a%2E2``);
- the n-th ask of a scope is ``int-<path joined by .>`` for the first, ``.<n>`` after it for
  the next ones: ``int-call_1``, ``int-call_1.2``, ``int-draft.1.call_1``, ``int-review.1``.

An id is never renamed on the way to the store and back: the scope a graph node gives its
agent's session is in every id its tools' asks get.

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

__all__ = ["ROOT_SCOPE", "AskLedger", "AskScope", "ask_position", "call_key", "interrupt_id_for"]

_ASKED_FIELDS = ("reason", "message", "display", "options", "selection", "allow_other")
"""What the human was shown of an ask, and what it let them answer: a stored answer is
returned to a replayed ask only when all of these are the same."""

_PREFIX = "int-"
_SEPARATORS = str.maketrans({"%": "%25", ".": "%2E", "@": "%40"})


def _name(text: str) -> str:
    """One name of a scope path, its separators percent-encoded."""
    return text.translate(_SEPARATORS)


def call_key(tool_call_id: str, occurrence: int = 1) -> str:
    """The key of a tool call: its id, or ``<id>@<n>`` for the n-th use of an id in a run (the
    id's ``%``, ``.`` and ``@`` percent-encoded: see the module docstring)."""
    key = _name(tool_call_id)
    return key if occurrence <= 1 else f"{key}@{occurrence}"


@dataclass(frozen=True)
class AskScope:
    """Where asks are raised: the path of (encoded) names that encloses them, outermost first.
    The empty scope is a run's own (a recipe run's tool calls are scopes directly below it)."""

    path: tuple[str, ...] = ()

    def enter(self, *names: str | int) -> AskScope:
        """The scope ``names`` opens inside this one (a graph node and its visit, a field)."""
        return AskScope((*self.path, *(_name(str(n)) for n in names)))

    def call(self, tool_call_id: str, occurrence: int = 1) -> AskScope:
        """The scope of a tool call inside this one (see :func:`call_key`)."""
        return AskScope((*self.path, call_key(tool_call_id, occurrence)))

    def keyed(self, key: str) -> AskScope:
        """The scope of the tool call whose :func:`call_key` is ``key`` inside this one."""
        return AskScope((*self.path, key))

    @property
    def prefix(self) -> str:
        """What every id raised in this scope, or in a scope inside it, starts with."""
        return _PREFIX + ".".join(self.path) + "." if self.path else _PREFIX

    def interrupt_id(self, position: int = 1) -> str:
        """The id of the ask at ``position`` (from 1) raised directly in this scope."""
        head = _PREFIX + ".".join(self.path)
        return head if position <= 1 else f"{head}.{position}"

    def position_of(self, interrupt_id: str) -> int | None:
        """The position of ``interrupt_id`` among the asks raised directly in this scope, or
        ``None`` when it is not one of them (the inverse of :meth:`interrupt_id`)."""
        head = _PREFIX + ".".join(self.path)
        if interrupt_id == head:
            return 1
        start, dot, tail = interrupt_id.rpartition(".")
        if dot and start == head and tail.isdigit() and int(tail) >= 2:
            return int(tail)
        return None

    def adopt(self, interrupt_id: str) -> str:
        """``interrupt_id`` as raised in this scope: an id a checkpoint written before scopes
        recorded without its enclosing path (a graph agent's ``int-<call>``, stored as
        ``int-<node>.<visit>.<call>``) gets it; an id already in this scope is returned as it
        is. Reading old checkpoints only: new ones keep the whole id."""
        if not self.path or interrupt_id.startswith(self.prefix):
            return interrupt_id
        return self.prefix + interrupt_id.removeprefix(_PREFIX)


ROOT_SCOPE = AskScope()
"""A run's own scope: the scope of asks no graph node or other enclosure names."""


def interrupt_id_for(key: str, position: int = 1) -> str:
    """The interrupt id of the ask at ``position`` (from 1) in the tool call ``key`` of a run's
    own scope (``ROOT_SCOPE.keyed(key).interrupt_id(position)``)."""
    return ROOT_SCOPE.keyed(key).interrupt_id(position)


def ask_position(key: str, interrupt_id: str) -> int | None:
    """The position of ``interrupt_id`` among the asks of the tool call ``key`` of a run's own
    scope, or ``None`` when it is not one of them (the inverse of :func:`interrupt_id_for`)."""
    return ROOT_SCOPE.keyed(key).position_of(interrupt_id)


@dataclass
class AskLedger:
    """The asks of one scope (a tool call, a human node's field), in order.

    ``scope`` is where they are raised: their ids are its. With ``replay`` true (a tool
    declared with ``resume="replay"`` running again after a resume), an ask whose id is in
    ``answers`` (the stored interrupts, each carrying its outcome) returns that outcome at once.
    """

    scope: AskScope
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
        iid = self.scope.interrupt_id(self.issued)
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
