"""What a stored event means for a person, as typed values a surface renders.

The store keeps small audit events (``run_created``, ``interaction_requested``,
``interaction_voted``, ``interaction_answered``, ``run_status_changed``) and one ``leg_ended``
per leg. A host that follows the feed reads each through :class:`Reader` into one
:data:`News` value, reading the rows the event names:

- :class:`RunCreated`: a run began (the run as stored);
- :class:`QuestionOpened`: a question for a person was asked (never the run's own ``await``
  wait, which only the system settles: :func:`~hosts._kit.asks_a_person`);
- :class:`QuestionVoted`: someone voted on an approval several people must give (its
  :class:`~hosts._kit.Tally` as it stands: "1 of 2 approvals: ada");
- :class:`QuestionReminded`: a question still open was reminded of, or escalated (who it
  added; who may answer it now);
- :class:`QuestionClosed`: such a question takes no more answers (answered, declined,
  expired, or closed when its run ended: its ``answer`` says which);
- :class:`StatusChanged`: a run moved from one status to another (why it failed; for a finished
  run, why its last answer may not be whole);
- :class:`LegEnded`: a leg ended: its AG-UI events, rebuilt from the stored transcript, and the
  texts the assistant said in it.

Everything else (a host's own events, an await wait) is ``None``: nothing to show. A host
matches on the value and renders it (a frame, a card, a reply); it decides nothing else.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ag_ui.core import (
    BaseEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)

from hosts._kit._answerable import asks_a_person
from hosts._kit._tally import Tally, tally_of
from interactions import PiRecipesError
from interactions.errors import StoreUnavailableError
from interactions.reminders import INTERACTION_ESCALATED, INTERACTION_REMINDED
from interactions.store import (
    EventRecord,
    InteractionRecord,
    RunRecord,
    RunStatus,
    Store,
    StoreEventType,
)
from recipes.runs import RunView
from recipes.runs.agui import LEG_ENDED, leg_agui_events

__all__ = [
    "LegEnded",
    "News",
    "QuestionClosed",
    "QuestionOpened",
    "QuestionReminded",
    "QuestionVoted",
    "Reader",
    "RunCreated",
    "StatusChanged",
]

logger = logging.getLogger("hosts")

KINDS_KEPT = 4096
"""Runs whose kind a reader remembers (the newest seen)."""
_ABOUT_A_QUESTION = (
    StoreEventType.INTERACTION_REQUESTED,
    StoreEventType.INTERACTION_VOTED,
    StoreEventType.INTERACTION_ANSWERED,
)


_REMINDED = (INTERACTION_REMINDED, INTERACTION_ESCALATED)


def _names(value: object) -> tuple[str, ...]:
    """The names an event's list holds (anything else left out)."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


@dataclass(frozen=True)
class _News:
    event: EventRecord
    """The stored event this was read from (its run, ``seq``, ``cursor`` and time)."""

    @property
    def run_id(self) -> str:
        """The run the event is about."""
        return self.event.run_id


@dataclass(frozen=True)
class RunCreated(_News):
    """A run began."""

    run: RunRecord


@dataclass(frozen=True)
class QuestionOpened(_News):
    """A question for a person was asked. ``record`` is as stored when the event was read: it
    may be answered already (a surface then shows it closed)."""

    record: InteractionRecord


@dataclass(frozen=True)
class QuestionVoted(_News):
    """Someone voted on an approval several people must give. ``voter`` and ``approved`` are
    the vote's; ``tally`` and ``record`` are as stored when the event was read (a vote that
    settled the approval is followed by its :class:`QuestionClosed`)."""

    record: InteractionRecord
    voter: str
    approved: bool
    tally: Tally


@dataclass(frozen=True)
class QuestionReminded(_News):
    """A question was reminded of (``escalated`` false: reminder number ``count``), or
    escalated (``added``: whom the escalation added). ``approvers`` may answer it now (empty:
    anyone who may reach it); ``record`` is as stored when the event was read: it may be
    answered already (a surface then shows nothing)."""

    record: InteractionRecord
    escalated: bool
    count: int
    added: tuple[str, ...]
    approvers: tuple[str, ...]


@dataclass(frozen=True)
class QuestionClosed(_News):
    """A question for a person takes no more answers; ``record.answer`` (always set) says how:
    answered or declined (by whom, through which host), expired, or closed with its run."""

    record: InteractionRecord


@dataclass(frozen=True)
class StatusChanged(_News):
    """A run of ``kind`` moved from ``from_`` (``None``: not recorded) to ``to``. ``error``: why
    it failed or stopped; ``warning``: for a run now finished, why its last answer may not be
    whole (cut at the model's output limit, a refusal), when the reader was given the view."""

    kind: str
    from_: RunStatus | None
    to: RunStatus
    error: str | None
    warning: str | None


@dataclass(frozen=True)
class LegEnded(_News):
    """A leg of a run ended: its AG-UI events as the leg's live sinks saw them (text as one
    event per message)."""

    events: tuple[BaseEvent, ...]

    def texts(self) -> list[str]:
        """What the assistant said in the leg: each text message whole, in order (an empty or
        blank one too: the surface decides what to skip)."""
        said: list[str] = []
        open_: dict[str, list[str]] = {}
        for event in self.events:
            if isinstance(event, TextMessageStartEvent):
                open_[event.message_id] = []
            elif isinstance(event, TextMessageContentEvent):
                open_.setdefault(event.message_id, []).append(event.delta)
            elif isinstance(event, TextMessageEndEvent):
                said.append("".join(open_.pop(event.message_id, [])))
        return said


News = (
    RunCreated
    | QuestionOpened
    | QuestionVoted
    | QuestionReminded
    | QuestionClosed
    | StatusChanged
    | LegEnded
)
"""What a stored event means for a person (see the module docstring)."""


class Reader:
    """Reads stored events of ``store`` into :data:`News`. ``view`` is what the run's driver
    shows of a run (``Runs.view``): without it, a finished run's ``warning`` is ``None``."""

    def __init__(self, store: Store, view: Callable[[RunRecord], RunView] | None = None) -> None:
        self.store = store
        self.view = view
        self._kinds: OrderedDict[str, str] = OrderedDict()

    async def read(self, event: EventRecord) -> News | None:
        """What ``event`` means for a person, or ``None`` when it is nothing to show.

        Raises ``StoreUnavailableError`` when the store is away (read the event again once
        it is back). An event that cannot be read (its rows gone, a driver that cannot rebuild
        its leg, a bug of one) is logged and read as ``None``: a feed never sticks on it.
        """
        try:
            return await self._read(event)
        except StoreUnavailableError:
            raise
        except (PiRecipesError, KeyError, ValueError) as exc:  # ValueError: pydantic's too
            logger.warning("skipped store event %s of %s: %s", event.type, event.run_id, exc)
        except Exception:  # a driver's bug: skipped, so the feed never sticks on one event
            logger.exception("skipped store event %s of %s", event.type, event.run_id)
        return None

    async def _read(self, event: EventRecord) -> News | None:
        data, run_id = event.data, event.run_id
        if event.type == StoreEventType.RUN_CREATED:
            run = await self.store.get_run(run_id)
            self._remember(run_id, run.kind)
            return RunCreated(event, run)
        if event.type == StoreEventType.RUN_STATUS_CHANGED:
            to = RunStatus(data["to"])
            from_ = RunStatus(data["from"]) if data.get("from") is not None else None
            error = None if data.get("error") is None else str(data["error"])
            kind = await self._kind(run_id)
            return StatusChanged(event, kind, from_, to, error, await self._warning(run_id, to))
        if event.type in _ABOUT_A_QUESTION:
            record = await self.store.get_interaction(run_id, str(data["interaction_id"]))
            if not asks_a_person(record):
                return None
            if event.type == StoreEventType.INTERACTION_REQUESTED:
                return QuestionOpened(event, record)
            if event.type == StoreEventType.INTERACTION_VOTED:
                tally = await tally_of(self.store, record)
                if tally is None:
                    return None
                voter, approved = str(data["voter"]), data.get("approved") is True
                return QuestionVoted(event, record, voter, approved, tally)
            return QuestionClosed(event, record) if record.answer is not None else None
        if event.type in _REMINDED:
            record = await self.store.get_interaction(run_id, str(data["interaction_id"]))
            if not asks_a_person(record):
                return None
            escalated = event.type == INTERACTION_ESCALATED
            count = data.get("count")
            return QuestionReminded(
                event, record, escalated, count if isinstance(count, int) else 0,
                _names(data.get("added")), _names(data.get("approvers")),
            )  # fmt: skip
        if event.type == LEG_ENDED:
            return LegEnded(event, tuple(await leg_agui_events(self.store, event)))
        return None

    async def _warning(self, run_id: str, to: RunStatus) -> str | None:
        """Why a run that just finished may not have said all it had to (else ``None``)."""
        if to is not RunStatus.FINISHED or self.view is None:
            return None
        run = await self.store.get_run(run_id)
        return self.view(run).warning if run.status is to else None

    async def _kind(self, run_id: str) -> str:
        kind = self._kinds.get(run_id)
        if kind is None:
            kind = (await self.store.get_run(run_id)).kind
            self._remember(run_id, kind)
        return kind

    def _remember(self, run_id: str, kind: str) -> None:
        self._kinds[run_id] = kind
        self._kinds.move_to_end(run_id)
        while len(self._kinds) > KINDS_KEPT:
            self._kinds.popitem(last=False)
