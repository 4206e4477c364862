"""A leg's span: its parent the context the run's previous leg kept, its waits for a person
spans of their own; inside a Temporal workflow, a context derived from the run instead."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any

from interactions.store import InteractionRecord, RunRecord, Store
from recipes.tracing._config import _in_workflow, _off, _on, _Tracing
from recipes.tracing._ref import TraceRef

__all__ = ["Leg", "carried", "carrying", "leg"]


_carried: ContextVar[str | None] = ContextVar("pi_recipes_trace_carried", default=None)
"""The ``traceparent`` a leg stands for where no span can be made (inside a workflow)."""


def carried() -> str | None:
    """Inside a Temporal workflow's leg, the ``traceparent`` the leg stands for (derived from
    the run: the same on every replay), for the activities' input: their spans are its
    children (:func:`carrying`). ``None`` elsewhere."""
    return _carried.get()


@contextmanager
def carrying(traceparent: str | None) -> Iterator[None]:
    """Make ``traceparent`` (an activity's input: :func:`carried`) the current context while
    the block runs, so that its spans join the run's trace; nothing when tracing is off."""
    tracing = _on()
    if tracing is None or traceparent is None:
        yield
        return
    from opentelemetry import context

    token = context.attach(tracing.propagator.extract({"traceparent": traceparent}))
    try:
        yield
    finally:
        context.detach(token)


def _derived(run_id: str, number: int, stored: TraceRef | None) -> str:
    """A leg's ``traceparent`` computed from the run (no span, no randomness, no clock): the
    stored trace's id and flags (else ids hashed from the run's), a span id hashed from the
    run and the leg's number."""
    if stored is not None and len(parts := stored.traceparent.split("-")) == 4:
        trace_id, flags = parts[1], parts[3]
    else:
        trace_id, flags = hashlib.sha256(f"pi-recipes:{run_id}".encode()).hexdigest()[:32], "01"
    span_id = hashlib.sha256(f"pi-recipes:{run_id}:{number}".encode()).hexdigest()[:16]
    return f"00-{trace_id}-{span_id}-{flags}"


class Leg:
    """One leg's span, as :func:`leg` hands it out: say how the leg ended, then keep
    :meth:`ref` in the checkpoint."""

    def __init__(
        self,
        tracing: _Tracing | None,
        span: Any,
        stored: TraceRef | None,
        derived: str | None = None,
    ) -> None:
        self._tracing, self._span, self._stored = tracing, span, stored
        self._derived = derived
        self.outcome = "error"

    def ended(self, status: str, *, interactions: Sequence[str] = ()) -> None:
        """The leg ended in ``status`` (a run status), pausing on ``interactions``."""
        self.outcome = status
        if self._span is not None:
            self._span.set_attribute("pi_recipes.leg.status", status)
            if interactions:
                self._span.set_attribute("pi_recipes.interaction.ids", list(interactions))
                self._tracing.open.add(len(interactions))  # type: ignore[union-attr]

    def ref(self, at: datetime) -> TraceRef | None:
        """What the checkpoint keeps of the trace: this leg's context (the run's previous one,
        unchanged, when tracing is off here)."""
        if self._derived is not None:
            return TraceRef(traceparent=self._derived, at=at)
        if self._tracing is None:
            return self._stored
        return self._tracing.ref_of(self._span, at) or self._stored

    def store_write(self, seconds: float) -> None:
        """The leg's closing write took ``seconds``."""
        if self._tracing is not None:
            self._tracing.store_duration.record(seconds, {"operation": "close_leg"})


@asynccontextmanager
async def leg(
    store: Store,
    run: RunRecord,
    *,
    number: int,
    stored: TraceRef | None,
    interactions: Sequence[InteractionRecord] | None = None,
) -> AsyncIterator[Leg]:
    """A span for leg ``number`` of ``run``, current while the leg runs.

    Its parent is ``stored`` (the context the run's previous leg kept) when there is one: the
    run's trace goes on, in whatever process this is; the context current here (a web
    request's span) is then a link. A run's first leg is a child of the current context. The
    waits for a person since the previous leg (``interactions`` answered after ``stored.at``,
    read from ``store`` when not given) are spans of their own, under the previous leg, from
    each question's ``requested_at`` to its ``answered_at``.
    """
    tracing = _on()
    if tracing is None:
        if _off() or not _in_workflow():
            yield Leg(None, None, stored)
            return
        derived = _derived(run.id, number, stored)  # a workflow's leg: see carried()
        token = _carried.set(derived)
        try:
            yield Leg(None, None, stored, derived)
        finally:
            _carried.reset(token)
        return
    otel = tracing.trace
    attributes = {
        "pi_recipes.run.id": run.id,
        "pi_recipes.run.kind": run.kind,
        "pi_recipes.leg.number": number,
        "gen_ai.conversation.id": run.thread_id,
        "pi_recipes.thread.id": run.thread_id,
    }
    links = []
    if stored is not None:
        parent = tracing.parent_of(stored)
        here = otel.get_current_span().get_span_context()
        if here.is_valid:
            links.append(otel.Link(here))
        await _waits(tracing, store, run, stored, parent, interactions)
    else:
        parent = None
    span = tracing.tracer.start_span(
        f"leg {run.kind}", context=parent, attributes=attributes, links=links
    )
    handle = Leg(tracing, span, stored)
    try:
        with otel.use_span(span, end_on_exit=False, record_exception=True):
            yield handle
    finally:
        span.end()
        tracing.legs.add(1, {"pi_recipes.run.kind": run.kind, "outcome": handle.outcome})


async def _waits(
    tracing: _Tracing,
    store: Store,
    run: RunRecord,
    stored: TraceRef,
    parent: Any,
    interactions: Sequence[InteractionRecord] | None,
) -> None:
    if interactions is None:
        interactions = await store.list_interactions(run.id)
    for record in interactions:
        if record.answered_at is None or record.answered_at < stored.at:
            continue
        answer = record.answer
        status = answer.status if answer is not None else "resolved"
        via = (answer.via if answer is not None else None) or "unknown"
        waited = (record.answered_at - record.requested_at).total_seconds()
        span = tracing.tracer.start_span(
            "wait for a person",
            context=parent,
            start_time=_ns(record.requested_at),
            attributes={
                "pi_recipes.run.id": run.id,
                "pi_recipes.interaction.id": record.id,
                "pi_recipes.interaction.kind": record.kind or "question",
                "pi_recipes.interaction.status": status,
                "pi_recipes.interaction.via": via,
                "pi_recipes.interaction.wait_seconds": waited,
                "gen_ai.tool.call.id": record.tool_call_id,
            },
        )
        span.end(end_time=_ns(record.answered_at))
        tracing.open.add(-1)
        tracing.to_answer.record(waited, {"pi_recipes.interaction.via": via, "status": status})


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)
