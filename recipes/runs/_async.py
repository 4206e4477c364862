"""Async questions in a durable run: what the agent's ``ask_user_async``/``await_answers`` tools
and its inbox do, against the run's store.

:class:`RunAsyncQuestions` is the :class:`~recipes.async_questions.AsyncQuestions` binder of
one agent of one run (a recipe run's agent, a graph node's). It writes through the run's
driver (:class:`RunWrites`: the driver holds the run's version), so a question posted mid-leg
never makes the leg's own last write fail. The inbox hands the agent the answers to its
questions at its turn boundaries, once each: a delivery is recorded (``user_message_delivered``)
with the driver's next write, together with the transcript that holds it, so a leg cut short
delivers again on retry, and an answer given while no process ran is delivered on resume.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Protocol

import anyio

from interactions import AskUserInterrupt, UsageError
from interactions.asks import interrupt_ttl
from interactions.async_questions import (
    ASYNC_KIND,
    MESSAGE_CANCELLED,
    MESSAGE_DELIVERED,
    answer_message,
    answered_at_once,
    async_interaction,
    async_interaction_id,
    await_interrupt,
    collected_text,
    pending_async,
)
from interactions.store import (
    EventInput,
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    RunRecord,
    Store,
    utc_now,
)
from recipes.messages import UserMessage

__all__ = ["BRANCH_AWAIT_ERROR", "LegWrites", "RunAsyncQuestions", "RunWrites"]

BRANCH_AWAIT_ERROR = (
    "await_answers cannot run inside a fan-out branch: a pause stops the whole run. Keep "
    "working with placeholders, or put an `await_answers` node in the graph after the fan-out."
)


class RunWrites(Protocol):
    """How a binder writes to its run: through the driver that holds the run's version."""

    async def write(
        self,
        *,
        new_interactions: Sequence[NewInteraction],
        events: Sequence[EventInput],
        answers: Mapping[str, InteractionAnswer] | None = None,
    ) -> None:
        """Write now, in one transaction (the driver's checkpoint may go with it); ``answers``
        may answer the interactions it inserts."""
        ...

    def later(self, *events: EventInput) -> None:
        """Append ``events`` with the driver's next write (with the transcript they describe)."""
        ...


class EarlierQuestions(Protocol):
    """The questions an agent's earlier conversations posted, where its run keeps them (a graph
    node's execution does: a retry or a fallback route runs its conversation again). A question
    posted again is given back, once per conversation, rather than stored twice."""

    def claim(
        self,
        interaction_id: str,
        question: str,
        options: Sequence[str] | None,
        allow_free_text: bool | None,
    ) -> str:
        """The id ``question`` is posted under: that of the same question posted earlier and
        not yet given back to the current conversation (now it is), else ``interaction_id``,
        the new one, noted so that the write storing it records it too."""
        ...


class LegWrites:
    """:class:`RunWrites` for a recipe run's leg: the run as last written, shared with the leg
    (``drive_leg`` writes its end with :attr:`run`'s version and :meth:`take`'s events).
    ``asks_async``: the leg's agent may post async questions (a run that ends closes those no
    one answered)."""

    def __init__(self, store: Store, run: RunRecord, *, asks_async: bool = False) -> None:
        self.store = store
        self.run = run
        self.asks_async = asks_async
        self._events: list[EventInput] = []
        self._lock: anyio.Lock | None = None  # made by the first write: most legs have none

    async def write(
        self,
        *,
        new_interactions: Sequence[NewInteraction],
        events: Sequence[EventInput],
        answers: Mapping[str, InteractionAnswer] | None = None,
    ) -> None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            self.run = await self.store.update_run(
                self.run.id,
                expected_version=self.run.version,
                new_interactions=new_interactions,
                answers=answers,
                events=[*self.take(), *events],
            )

    def later(self, *events: EventInput) -> None:
        self._events.extend(events)

    def take(self) -> list[EventInput]:
        """The events waiting for the next write, emptying the queue."""
        out, self._events = self._events, []
        return out


class RunAsyncQuestions:
    """The async questions of one agent of run ``run_id``, asked under ``scope`` (the node's
    name, or the agent's in a recipe run) and stored with ``node_id``.

    ``in_branch``: the agent runs in a fan-out branch, where ``await_answers`` is refused.
    ``env`` gives the questions' lifetime (``PI_INTERRUPT_TTL_SECONDS``), counted from
    ``clock()`` (a workflow engine gives its own, replayable). ``earlier``: the questions the
    agent's earlier conversations posted, given back when asked again (their answers are
    delivered to the new conversation too).
    """

    def __init__(
        self,
        store: Store,
        writes: RunWrites,
        run_id: str,
        *,
        scope: str,
        node_id: str = "",
        in_branch: bool = False,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = utc_now,
        earlier: EarlierQuestions | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.writes = writes
        self.run_id = run_id
        self.scope = scope
        self.node_id = node_id
        self.in_branch = in_branch
        self.env = dict(env or {})
        self.ttl = interrupt_ttl(self.env)
        self.earlier = earlier
        self._lock = anyio.Lock()
        self._handled: set[str] | None = None  # delivered or cancelled, by interaction id
        self._seen = 0

    # -- the tools --------------------------------------------------------------------------

    async def post(
        self,
        question: str,
        *,
        options: Sequence[str] | None,
        allow_free_text: bool | None,
        tool_call_id: str,
    ) -> str:
        async with self._lock:  # calls of one batch run at once: one id each
            records = await self.store.list_interactions(self.run_id)
            iid = async_interaction_id(self.run_id, self.scope, (r.id for r in records))
            new = async_interaction(
                iid, question, options=options, allow_free_text=allow_free_text,
                node_id=self.node_id, tool_call_id=tool_call_id, expires_at=self._expiry(),
            )  # fmt: skip
            if self.earlier is not None:
                kept = self.earlier.claim(iid, question, options, allow_free_text)
                if kept != iid:
                    await self.deliver_again(kept)  # the conversation it went to is gone
                    return kept
            asked = {
                "interaction_id": iid, "node_id": self.node_id,
                "questions": {"ask_user_response": question.strip()}, "async": True,
            }  # fmt: skip
            now = answered_at_once(self.env)  # in CI nobody answers: declined at once
            await self.writes.write(
                new_interactions=[new], events=[("human_input_requested", asked)],
                answers={iid: now} if now is not None else None,
            )  # fmt: skip
        return iid

    async def await_answers(self, tool_call_id: str, interrupt_id: str) -> str | AskUserInterrupt:
        if self.in_branch:
            raise UsageError(BRANCH_AWAIT_ERROR)
        records = await self.store.list_interactions(self.run_id)
        pending = pending_async(records)
        if pending:
            return await_interrupt(interrupt_id, tool_call_id, pending, self._expiry())
        await self._supersede(records)
        return collected_text(records)

    async def inbox(self) -> Sequence[UserMessage]:
        fresh = await self.take()
        self.writes.later(*self.delivered(fresh))
        return [UserMessage.of_text(answer_message(r)) for r in fresh]

    async def take(self) -> list[InteractionRecord]:
        """The answered questions of this agent not yet delivered (nor cancelled), now marked
        as handled here; the caller records their delivery (:meth:`delivered`)."""
        handled = await self._handled_ids()
        records = await self.store.list_interactions(self.run_id)
        fresh = [
            r
            for r in records
            if r.kind == ASYNC_KIND
            and r.node_id == self.node_id
            and r.answer is not None
            and r.id not in handled
        ]
        handled.update(r.id for r in fresh)
        return fresh

    async def deliver_again(self, interaction_id: str) -> None:
        """Hand the answer of ``interaction_id`` to the agent again at its next turn boundary
        (the conversation it was delivered to is gone: a retry, a fallback route)."""
        (await self._handled_ids()).discard(interaction_id)

    def delivered(self, records: Sequence[InteractionRecord]) -> list[EventInput]:
        """The events recording that ``records``' answers reached the agent."""
        return [
            (MESSAGE_DELIVERED, {"interaction_id": r.id, "node_id": self.node_id})
            for r in records
        ]

    # -- plumbing ---------------------------------------------------------------------------

    def _expiry(self) -> datetime:
        return self.clock() + self.ttl

    async def _handled_ids(self) -> set[str]:
        """The answers already delivered (or cancelled), from the run's events, kept up to
        date incrementally."""
        if self._handled is None:
            self._handled = set()
        for event in await self.store.list_events(self.run_id, self._seen):
            self._seen = event.seq
            if event.type in (MESSAGE_DELIVERED, MESSAGE_CANCELLED):
                self._handled.add(str(event.data.get("interaction_id")))
        return self._handled

    async def _supersede(self, records: Sequence[InteractionRecord]) -> None:
        """The answers a sync point returns are not delivered again as messages: their queued
        messages are cancelled (with the next write)."""
        handled = await self._handled_ids()
        for record in records:
            if (
                record.kind == ASYNC_KIND
                and record.node_id == self.node_id
                and record.answer is not None
                and record.id not in handled
            ):
                handled.add(record.id)
                self.writes.later((MESSAGE_CANCELLED, {"interaction_id": record.id}))
