"""What a client of the engine sees of a leg its run's workflow drives: where the run stands,
the leg's end, and the leg's AG-UI events for the host's live sink.

A leg runs on a worker, inside the run's workflow; the client's call returns once it has ended
(:func:`settle` waits for it with the workflow's ``settle`` update), and the host's live sink
then gets the leg's AG-UI events, rebuilt from its ``leg_ended`` record as for any run
(:func:`told`). What a run looks like (its text, warning, last AG-UI run id) is its driver's
view, as on every engine (:func:`view_of`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from interactions import UsageError
from interactions.async_questions import open_for_pause
from interactions.store import RunRecord, RunStatus
from recipes.runs import RunResult, RunView, Surface
from recipes.runs.agui import LEG_ENDED, leg_agui_events
from recipes.runs.drivers import driver_for
from recipes.temporal._calls import Closed, snapshot
from recipes.temporal._errors import typed_error
from recipes.temporal._wire import Settled, SettleRequest, Snapshot

if TYPE_CHECKING:
    from recipes.temporal._store import TemporalStore

__all__ = ["result_of", "seq_of", "settle", "told", "view_of"]

logger = logging.getLogger("recipes.temporal")


def view_of(run: RunRecord) -> RunView:
    """What the driver of ``run``'s kind shows of it (a plain view when no driver of that kind
    is installed), as ``Runner.view`` gives it."""
    try:
        driver = driver_for(run.kind)
    except UsageError:
        return RunView()  # a kind no installed driver knows: still listed, shown plainly
    return driver.view(run)


def result_of(found: Snapshot) -> RunResult:
    """Where a run read back from its workflow stands (it must hold the run)."""
    run = found.run
    assert run is not None
    paused = run.status is RunStatus.PAUSED_WAITING_HUMAN
    view = view_of(run)
    return RunResult(
        run_id=run.id,
        thread_id=run.thread_id,
        kind=run.kind,
        status=run.status,
        interrupts=[r.interrupt for r in open_for_pause(found.interactions)] if paused else [],
        text=view.text,
        error=run.error,
        warning=view.warning,
        agui_run_id=view.agui_run_id,
    )


async def seq_of(engine: TemporalStore, run_id: str, surface: Surface) -> int:
    """The run's last event number, when the leg's events are to be told (else 0)."""
    if surface.on_event is None:
        return 0
    return len((await engine.snapshot(run_id)).events)


async def settle(
    engine: TemporalStore, run_id: str, version: int, seq: int, surface: Surface
) -> RunResult:
    """Wait until the run has moved past ``version`` and the leg its workflow drives has
    ended; tell the host's sink the events after ``seq``; return where the run stands, or
    raise the typed error that leg raised (a start's refusal among them)."""
    request = SettleRequest(after_version=version).model_dump(mode="json")
    try:
        settled = Settled.model_validate(await engine.call(run_id, "settle", request))
    except Closed:
        found = await snapshot(engine.client, engine.address, run_id, 0, engine.query_timeout)
        if found.refused is not None:
            raise typed_error(found.refused) from None
        settled = Settled(result=result_of(found))
    assert settled.result is not None
    await told(engine, run_id, seq, settled.result, surface)
    if settled.error is not None:
        raise typed_error(settled.error)
    return settled.result


async def told(
    engine: TemporalStore, run_id: str, seq: int, result: RunResult, surface: Surface
) -> RunResult:
    """Give the host's live sink the AG-UI events of the legs that ended after ``seq``;
    return ``result``. A sink that raises is logged, never fatal."""
    if surface.on_event is None:
        return result
    for event in await engine.list_events(run_id, seq):
        if event.type != LEG_ENDED:
            continue
        for shown in await leg_agui_events(engine, event):
            try:
                surface.on_event(shown)
            except Exception:
                logger.exception("a live event sink failed on %s", shown.type)
    return result
