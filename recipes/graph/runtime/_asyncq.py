"""Async questions in a graph run: the binder an ``interaction: async`` node's agent gets, the
``await_answers`` node, and the level-triggered wait they share.

A node's questions are stored on the graph run (ids ``<run>_<node>_async_<n>``), written
through the engine (which holds the run's version); their answers reach the node's agent at
its turn boundaries. The ``await_answers`` node is done when no async question in its scope
(``from:`` one node, else the whole run) is pending: it looks at the store, then waits for the
run's next events — woken at once by an answer given through this process's store (the
doorbell), and by another process's as the store sees it (PostgreSQL's ``NOTIFY``; on SQLite,
a write to the file) — and looks again, at least every :data:`ROUND` seconds, until its
``timeout:``. In a fan-out branch it frees
its slot while it waits. A question that passes its ``expires_at`` meanwhile can no longer be
answered: the wait settles it ``expired`` (the decline the sweep records for a paused run's)
and goes on without it; with the run's expiry policy ``fail``, the node fails instead (and
so does an agent node on the ``pi`` backend whose ``await_answers`` call was waiting for it).
A gate whose ``from:`` names a node that asks nothing (C242) waits out its timeout and fails.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from interactions import ConflictError
from interactions.async_questions import (
    ASYNC_KIND,
    answer_text,
    pending_async,
    question_of,
)
from interactions.store import (
    EventInput,
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    RunRecord,
    Store,
    StoreEventType,
    utc_now,
)
from recipes.graph import ir
from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome, failed, finished
from recipes.graph.runtime._events import LegEvents
from recipes.graph.runtime._state import AsyncAsked, Cursor, NodeRun
from recipes.runs import Runner
from recipes.runs.drivers import RunAsyncQuestions

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = [
    "ROUND",
    "Leg",
    "NodeQuestions",
    "answers_output",
    "binder_for",
    "expired_async",
    "expiry_failure",
    "released",
    "run_await",
    "wait_for_answers",
]

ROUND = 5.0
"""Seconds a waiter waits for the run's next events before it looks at the store again on its
own (the store wakes it sooner for any answer, from this process or another)."""
EXPIRED = InteractionAnswer(status="expired", answered_by="system", via="expiry")
"""How a wait settles a question past its ``expires_at`` (as ``Runner.expire_due`` does)."""


class Leg(Protocol):
    """What the async binder needs of the leg that runs its node (the engine is one): the
    run, its store and runner, the leg's events, and the write that keeps the run's version."""

    @property
    def store(self) -> Store: ...
    @property
    def run(self) -> RunRecord: ...
    @property
    def runner(self) -> Runner: ...
    @property
    def events(self) -> LegEvents: ...

    async def write(self, **change: Any) -> None:
        """Write the checkpoint, the queued events and ``change`` in one transaction."""
        ...


class _EngineWrites:
    """The async binder's writes, through the engine (its lock and the run's version)."""

    def __init__(self, engine: Leg) -> None:
        self._engine = engine

    async def write(
        self,
        *,
        new_interactions: Sequence[NewInteraction],
        events: Sequence[EventInput],
        answers: Mapping[str, InteractionAnswer] | None = None,
    ) -> None:
        self.later(*events)
        await self._engine.write(new_interactions=list(new_interactions), answers=answers)

    def later(self, *events: EventInput) -> None:
        for type_, data in events:
            self._engine.events.graph(type_, dict(data))


class _Asked:
    """The questions one execution of a node posted, kept on its :class:`NodeRun` (written
    with the checkpoint that stores each): a question posted again by a conversation run again
    (a retry, a fallback route) gets its id back, once per conversation."""

    def __init__(self, run: NodeRun) -> None:
        self._run = run
        self._given: set[str] = set()

    def claim(
        self,
        interaction_id: str,
        question: str,
        options: Sequence[str] | None,
        allow_free_text: bool | None,
    ) -> str:
        asked = AsyncAsked(id=interaction_id, question=question.strip(), options=_plain(options),
                           allow_free_text=allow_free_text)  # fmt: skip
        for kept in self._run.asked_async:
            if kept.id not in self._given and kept.same(asked):
                self._given.add(kept.id)
                return kept.id
        self._run.asked_async.append(asked)
        self._given.add(interaction_id)
        return interaction_id

    def new_conversation(self) -> None:
        self._given.clear()


class NodeQuestions(RunAsyncQuestions):
    """The async questions' binder of one execution of a node: a question it posted before
    (recorded on its :class:`NodeRun`), posted again by a conversation run again (a retry, a
    fallback route), gets its id back, and its answer is handed to the new conversation too;
    nothing is stored twice. Each recorded question is given back once per conversation
    (:meth:`new_conversation`), so a question really asked twice is stored twice."""

    def __init__(self, engine: Leg, cursor: Cursor, node: ir.LLMNode, run: NodeRun) -> None:
        self._asked = _Asked(run)
        super().__init__(
            engine.store, _EngineWrites(engine), engine.run.id, scope=node.name,
            node_id=node.name, in_branch=cursor.branch != "main", env=engine.runner.env,
            clock=engine.runner.clock, earlier=self._asked,
        )  # fmt: skip

    def new_conversation(self) -> None:
        """A fresh conversation starts: each recorded question may be given back again."""
        self._asked.new_conversation()


def _plain(options: Any) -> Any:
    """``options`` as plain JSON data, to compare with what the checkpoint kept."""
    return None if options is None else json.loads(json.dumps(list(options), default=str))


def binder_for(engine: Leg, cursor: Cursor, node: ir.Node, run: NodeRun) -> NodeQuestions | None:
    """The async questions' binder of ``node``'s execution ``run`` by ``cursor`` (``None`` for
    a node that is not an ``interaction: async`` agent or judge)."""
    if not (isinstance(node, ir.LLMNode) and node.interaction == "async"):
        return None
    return NodeQuestions(engine, cursor, node, run)


@asynccontextmanager
async def released(limiter: anyio.CapacityLimiter | None) -> AsyncIterator[None]:
    """Give a fan-out branch's slot back while inside (taken again on the way out)."""
    if limiter is None:
        yield
        return
    limiter.release()
    try:
        yield
    finally:
        with anyio.CancelScope(shield=True):
            await limiter.acquire()


async def wait_for_answers(
    store: Store, run_id: str, node_id: str | None = None, *, timeout: float = math.inf
) -> list[InteractionRecord] | None:
    """The run's interactions once no async question (of ``node_id``, else of the whole run)
    is pending; ``None`` when ``timeout`` seconds passed first. Level-triggered: the store is
    read, then the run's next events are waited for; the answers they record are crossed off
    (a question asked meanwhile makes it read the store again), until none is left."""
    with anyio.move_on_after(timeout):
        events = await store.list_events(run_id)
        last = events[-1].seq if events else 0
        poll = ROUND
        while True:
            pending = pending_async(await store.list_interactions(run_id), node_id)
            if await _settle_expired(store, run_id, pending):
                continue  # read the store again
            waiting = {r.id for r in pending}
            due = min((r.expires_at for r in pending), default=None)
            while waiting:
                left = poll if due is None else (due - utc_now()).total_seconds()
                if left < 0:
                    break  # a question passed its expiry: settle it
                bound = min(poll, left + 0.01)
                found = await store.wait_for_events(run_id, after_seq=last, timeout=bound)
                if found:
                    last = found[-1].seq
                if any(e.type == "interaction_requested" for e in found):
                    break  # a new question may be in scope: read the store again
                waiting -= {
                    str(e.data.get("interaction_id"))
                    for e in found
                    if e.type == StoreEventType.INTERACTION_ANSWERED
                }
            else:
                return await store.list_interactions(run_id)
    return None


async def _settle_expired(store: Store, run_id: str, pending: Sequence[InteractionRecord]) -> bool:
    """Settle the questions of ``pending`` past their ``expires_at`` as ``expired``, recorded
    at their expiry (open up to and including it); whether there was any."""
    now = utc_now()
    due = [r for r in pending if r.expires_at < now]
    for record in due:
        with contextlib.suppress(ConflictError):  # answered meanwhile: the answer stands
            await store.answer_interaction(run_id, record.id, EXPIRED, now=record.expires_at)
    return bool(due)


def expired_async(
    records: Sequence[InteractionRecord], keep: Callable[[InteractionRecord], bool]
) -> list[InteractionRecord]:
    """The async questions of ``records`` that ``keep`` selects and that expired unanswered."""
    return [
        r for r in records
        if r.kind == ASYNC_KIND and r.answer is not None and r.answer.status == "expired"
        and keep(r)
    ]  # fmt: skip


def expiry_failure(waiter: str, expired: Sequence[InteractionRecord]) -> str:
    """Why ``waiter`` (an ``await_answers`` node or tool) fails under the run's expiry policy
    ``fail``: the questions that expired while it waited."""
    listed = "; ".join(f"[{r.id}] (node {r.node_id}) {question_of(r)}" for r in expired)
    return (
        f"{waiter}: {len(expired)} question(s) expired unanswered (the run's expiry policy is "
        f"`fail`): {listed}"
    )


def answers_output(records: Sequence[InteractionRecord], node_id: str | None) -> dict[str, Any]:
    """The ``await_answers`` node's output: ``{answers: [{interaction_id, node, question,
    answer}, ...]}``, the answered async questions in scope, oldest first."""
    return {
        "answers": [
            {"interaction_id": r.id, "node": r.node_id, "question": question_of(r),
             "answer": answer_text(r)}
            for r in records
            if r.kind == ASYNC_KIND and r.answer is not None
            and (node_id is None or r.node_id == node_id)
        ]
    }  # fmt: skip


async def run_await(
    ctx: NodeContext, node: ir.AwaitAnswersNode, run: NodeRun, mode: Mode
) -> NodeOutcome:
    """Wait (at most the node's ``timeout:``) until no async question in scope is pending.

    A ``from:`` naming a node that posts no async questions (missing, or not ``interaction:
    async``: the compiler's warning C242) can only time out: the node waits out its bound,
    then fails (``AWAIT_FROM_INVALID``), never passing as if its questions were answered."""
    store = ctx.runner.store
    bound = ctx.deadline if ctx.deadline is not None else math.inf
    if node.from_ is not None and not _asks_async(ctx.graph.node(node.from_)):
        async with released(ctx.limiter):
            await anyio.sleep(bound)
        return failed(_no_asker(node, ctx.graph.node(node.from_) is None), "AWAIT_FROM_INVALID")
    async with released(ctx.limiter):
        records = await wait_for_answers(store, ctx.run_id, node.from_, timeout=bound)
    if records is not None:
        expired = expired_async(records, lambda r: node.from_ in (None, r.node_id))
        if expired and ctx.expiry_policy == "fail":
            return failed(expiry_failure(f"await_answers {node.name}", expired), "EXPIRED")
        return finished(answers_output(records, node.from_))
    pending = pending_async(await store.list_interactions(ctx.run_id), node.from_)
    listed = "; ".join(f"[{r.id}] (node {r.node_id}) {question_of(r)}" for r in pending)
    where = f"of `{node.from_}`" if node.from_ else "of the run"
    return failed(
        f"await_answers {node.name}: {len(pending)} question(s) {where} still unanswered after "
        f"{node.timeout}: {listed}. Answer them (pi-recipes runs answer {ctx.run_id} <id> "
        f'"<answer>"), raise the timeout, or resume the run once answered (pi-recipes runs '
        f"retry {ctx.run_id})",
        "TIMEOUT",
        resumable=True,
    )


def _asks_async(node: ir.Node | None) -> bool:
    return isinstance(node, ir.LLMNode) and node.interaction == "async"


def _no_asker(node: ir.AwaitAnswersNode, missing: bool) -> str:
    """Why a gate whose ``from:`` posts no async questions failed (C242), and the fix."""
    what = (
        "is not a declared node"
        if missing
        else "posts no async questions (it is not `interaction: async`)"
    )
    return (
        f"await_answers {node.name}: `from: {node.from_}` {what} (C242), so no question could "
        f"ever be in its scope; it waited out its timeout ({node.timeout}) rather than pass as "
        "if answered. Fix the workflow: name the `interaction: async` agent or judge whose "
        "questions it waits for in `from:`, or drop `from:` to wait on the whole run; then "
        "start a new run"
    )
