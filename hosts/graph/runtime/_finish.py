"""The end of a leg: one write records the status, the checkpoint, the pause's interactions
and the closing events; the run as it now stands is returned."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hosts.graph.runtime._state import GraphCheckpoint
from interactions.async_questions import AWAIT_REASON, open_for_pause
from interactions.store import RunStatus, is_terminal, utc_now
from recipes.runs import RETRY_SCHEDULED, RETRY_SKIPPED, RUN_ENDED, RunResult
from recipes.runs.agui import run_closed
from recipes.runs.planning import plan_retry

if TYPE_CHECKING:
    from hosts.graph.runtime._engine import Engine

__all__ = ["End", "finish_leg", "schedule_retry", "summary"]


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


def schedule_retry(engine: Engine, end: End) -> None:
    """Plan the run's next automatic retry (it opted in), or say that none is left."""
    cp = engine.cp
    if cp.auto_resume is None:
        return
    planned = plan_retry(cp.auto_resume, retry_after=_retry_after(cp), now=utc_now())
    if planned is None:
        cp.auto_resume = cp.auto_resume.model_copy(update={"due_at": None})
        engine.events.graph(RETRY_SKIPPED, {"reason": "budget_spent", "code": end.code,
                                            "attempts": cp.auto_resume.attempts,
                                            "max": cp.auto_resume.max})  # fmt: skip
        return
    cp.auto_resume, data = planned
    engine.events.graph(RETRY_SCHEDULED, {**data, "reason": end.code})


async def finish_leg(engine: Engine, end: End) -> RunResult:
    """Write the leg's end and return the run."""
    cp, events = engine.cp, engine.events
    thread, leg = engine.run.thread_id, engine.agui_id
    new = engine.new_interactions()
    change: dict[str, Any] = {}
    if end.status == "paused":
        # What the pause waits on, as AG-UI's interrupts: open questions, and for an await
        # pause the async questions it lists (the await itself is settled by the system).
        stored = await engine.store.list_interactions(engine.run.id, pending=True)
        awaited = {str(i) for _, it in engine.pending.values() if it.reason == AWAIT_REASON
                   for i in (it.metadata or {}).get("pending", [])}  # fmt: skip
        waiting = open_for_pause(stored)
        open_ = [r.interrupt for r in waiting]
        open_ += [r.interrupt for r in stored if r.id in awaited and r not in waiting]
        interrupts = open_ + [i for _, i in engine.pending.values() if i.reason != AWAIT_REASON]
        for node, interrupt in engine.pending.values():
            human = (interrupt.metadata or {}).get("node_kind") == "human"
            source = "human" if human else "delegate"
            extra = {"await": True} if interrupt.reason == AWAIT_REASON else {}
            events.graph("human_input_requested", {
                "interaction_id": interrupt.id, "node_id": node,
                "questions": _questions(interrupt), "source": source, **extra,
            })  # fmt: skip
        parked = sorted({node for node, _ in engine.pending.values()})
        events.graph("run_paused", {"node_ids": parked})
        closing = run_closed(thread, leg, "interrupt", interrupts=interrupts)
        change = {"status": RunStatus.PAUSED_WAITING_HUMAN, "new_interactions": new}
    elif end.code == "ABORTED":  # a person stopped the run: it ends cancelled
        interrupts = []
        events.graph("run_cancelled", {"reason": end.error})
        closing = run_closed(thread, leg, "cancelled")
        change = {"status": RunStatus.CANCELLED, "error": end.error}
    elif end.status == "failed":
        interrupts = []
        events.graph("run_failed", {"error": end.error, "code": end.code,
                                    "resumable": end.resumable})  # fmt: skip
        closing = run_closed(thread, leg, "error", error=end.error, code=end.code)
        status = RunStatus.FAILED_RESUMABLE if end.resumable else RunStatus.FAILED
        if end.resumable:
            schedule_retry(engine, end)
        change = {"status": status, "error": end.error}
    else:
        interrupts = []
        events.graph("run_finished", {"output": summary(cp)})
        closing = run_closed(thread, leg, "success", result=summary(cp) or None)
        change = {"status": RunStatus.FINISHED}
    if is_terminal(change["status"]):
        change["close_open"] = RUN_ENDED  # its async questions no one answered
    events.end(closing, leg)
    await engine.write(**change)
    events.tell(closing)
    run = engine.run
    return RunResult(run_id=run.id, thread_id=run.thread_id, status=run.status, kind=run.kind,
                     interrupts=interrupts, text=summary(cp), error=run.error,
                     agui_run_id=engine.agui_id)  # fmt: skip
