"""The end of a leg: one write records the status, the checkpoint, the pause's interactions
and the closing events; the run as it now stands is returned.

A leg that fails while fan-out branches are parked on questions stores those questions with
the failure, so what the node path says the run waits for can be answered: a
``failed_resumable`` run keeps them open (answer them, then ``runs retry`` resumes the parked
nodes where they stopped, an agent's conversation included); a run that ends closes them with
it (``cancelled`` by ``system`` via ``run_end``, as its async questions)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from interactions import AskUserInterrupt
from interactions.async_questions import AWAIT_REASON, waited_for
from interactions.store import RunStatus
from recipes.graph.runtime._state import GraphCheckpoint
from recipes.runs import RunResult
from recipes.runs.agui import run_closed

if TYPE_CHECKING:
    from recipes.graph.runtime._engine import Engine

__all__ = ["End", "finish_leg", "summary"]


@dataclass(frozen=True)
class End:
    """Where a leg stopped."""

    status: Literal["finished", "paused", "failed"]
    error: str | None = None
    code: str | None = None
    resumable: bool = False


def summary(cp: GraphCheckpoint) -> str:
    """What a run produced, for people: the last finished node's output (its only string
    field's text, or the output as JSON)."""
    for run in reversed(cp.executions):
        if run.status == "finished" and run.output is not None and run.kind != "router":
            values = [v for k, v in run.output.items() if not k.startswith("_")]
            if len(values) == 1 and isinstance(values[0], str):
                return values[0]
            return json.dumps(run.output, ensure_ascii=False)
    return ""


def _questions(interrupt: Any) -> dict[str, Any]:
    if interrupt.reason == AWAIT_REASON:  # the await_answers tool's pause: what it waits for
        return {"pending": (interrupt.metadata or {}).get("questions", [])}
    field = (interrupt.metadata or {}).get("field") or "ask_user_response"
    return {field: interrupt.message}


def _retry_after(cp: GraphCheckpoint) -> float | None:
    """The longest wait the failed executions' providers asked for."""
    waits = [cp.executions[c.current].retry_after for c in cp.cursors()
             if c.state == "failed" and c.current is not None]  # fmt: skip
    known = [w for w in waits if w is not None]
    return max(known) if known else None


def _requested(engine: Engine) -> None:
    """Log ``human_input_requested`` for each question this leg parked a node on."""
    for node, interrupt in engine.asking():
        human = (interrupt.metadata or {}).get("node_kind") == "human"
        source = "human" if human else "delegate"
        extra = {"await": True} if interrupt.reason == AWAIT_REASON else {}
        engine.events.graph("human_input_requested", {
            "interaction_id": interrupt.id, "node_id": node,
            "questions": _questions(interrupt), "source": source, **extra,
        })  # fmt: skip


def _parked(cp: GraphCheckpoint) -> list[str]:
    """The nodes the run's parked cursors wait in (this leg's or an earlier one's)."""
    return sorted({cp.executions[c.current].node for c in cp.cursors()
                   if c.state == "parked" and c.current is not None})  # fmt: skip


async def finish_leg(engine: Engine, end: End) -> RunResult:
    """Write the leg's end, through the kernel's one leg closer, and return the run."""
    cp, events = engine.cp, engine.events
    thread, leg = engine.run.thread_id, engine.agui_id
    asking = engine.asking()
    new = engine.new_interactions()
    _requested(engine)
    for execution in cp.executions:
        execution.asking = None  # stored by this leg's write, in the same transaction
    interrupts: list[AskUserInterrupt] = []
    error: str | None = None
    if end.status == "paused":
        # What the pause waits on, as AG-UI's interrupts: open questions, and for an await
        # pause the async questions it lists (the await itself is settled by the system).
        stored = await engine.store.list_interactions(engine.run.id, pending=True)
        interrupts = waited_for([i for _, i in asking], stored)
        events.graph("run_paused", {"node_ids": _parked(cp)})
        closing = run_closed(thread, leg, "interrupt", interrupts=interrupts)
        status = RunStatus.PAUSED_WAITING_HUMAN
    elif end.code == "ABORTED":  # a person stopped the run: it ends cancelled
        events.graph("run_cancelled", {"reason": end.error})
        closing = run_closed(thread, leg, "cancelled")
        status, error = RunStatus.CANCELLED, end.error
    elif end.status == "failed":
        parked = _parked(cp)  # branches left waiting on questions beside the failure
        events.graph("run_failed", {"error": end.error, "code": end.code,
                                    "resumable": end.resumable,
                                    **({"parked_node_ids": parked} if parked else {})})  # fmt: skip
        closing = run_closed(thread, leg, "error", error=end.error, code=end.code)
        status = RunStatus.FAILED_RESUMABLE if end.resumable else RunStatus.FAILED
        error = end.error
    else:
        events.graph("run_finished", {"output": summary(cp)})
        closing = run_closed(thread, leg, "success", result=summary(cp) or None)
        status = RunStatus.FINISHED
    now = engine.runner.clock()
    engine.traced.ended(status.value, interactions=[i.id for i in new])
    closed, planned = cp.closing(engine.leg, status, code=end.code, retry_after=_retry_after(cp),
                                 trace=engine.traced.ref(now), now=now)  # fmt: skip
    for name, value in closed.items():
        setattr(cp, name, value)
    for name, data in planned:  # the next automatic retry, or none left
        events.graph(name, dict(data))
    events.end(closing, leg)
    # A run that ends closes its questions no one answered: the stored ones, and those of
    # branches parked in this very leg (stored by this write, so that they are on record).
    await engine.close(status=status, error=error, new_interactions=new)
    events.tell(closing)
    run = engine.run
    return RunResult(run_id=run.id, thread_id=run.thread_id, status=run.status, kind=run.kind,
                     interrupts=interrupts, text=summary(cp), error=run.error,
                     agui_run_id=engine.agui_id)  # fmt: skip
