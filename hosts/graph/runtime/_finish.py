"""The end of a leg: one write records the status, the checkpoint, the pause's interactions
and the closing events; the run as it now stands is returned."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hosts.graph.runtime._state import GraphCheckpoint
from interactions.async_questions import AWAIT_REASON, open_for_pause
from interactions.store import RunStatus
from recipes.runs import RunResult
from recipes.runs.agui import run_closed

if TYPE_CHECKING:
    from hosts.graph.runtime._engine import Engine

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
        change = {"status": status, "error": end.error}
    else:
        interrupts = []
        events.graph("run_finished", {"output": summary(cp)})
        closing = run_closed(thread, leg, "success", result=summary(cp) or None)
        change = {"status": RunStatus.FINISHED}
    events.end(closing, leg)
    await engine.write(**change)
    events.tell(closing)
    run = engine.run
    return RunResult(run_id=run.id, thread_id=run.thread_id, status=run.status, kind=run.kind,
                     interrupts=interrupts, text=summary(cp), error=run.error,
                     agui_run_id=engine.agui_id)  # fmt: skip
