"""The AG-UI endpoint: ``POST /agui`` takes a ``RunAgentInput`` and answers a
``text/event-stream`` written with ag-ui-protocol's ``EventEncoder``.

A conversation is its ``thread_id``: a thread's first call (or a call after its last run ended)
starts a run on the user message that ends its history (a history ending with anything else has
nothing new to run: 422, reason ``no_user_message``); a call carrying ``resume`` continues the
thread's paused run as a new AG-UI run whose ``parentRunId`` is the paused one. AG-UI clients
send a fresh ``run_id`` and the whole history every time: the history is not replayed (the
store is the source of truth), and the input's ``run_id`` is echoed in ``RUN_STARTED`` and
``RUN_FINISHED``.
A call without ``resume`` on a thread that waits for answers is refused (409), as is one on a
thread whose run is still running. Refusals found before the stream starts (a conflict, an
unknown id, an expired interrupt, a payload off the schema, an empty ``threadId`` or ``runId``)
are HTTP errors with the typed body (so is a failure that is none of ours: 500, see
:mod:`hosts.web._unexpected`); a failure found later is a ``RUN_ERROR`` with a ``code``. A run
cancelled while its leg streams ends the stream with ``RUN_FINISHED`` outcome ``cancelled``.
An identical resume replayed answers with the frame its leg had (the same ``parentRunId``)
where the run stands, once that leg has ended (waiting at most :data:`REPLAY_WAIT` seconds);
:mod:`hosts.web._agui_close` says how each of these ends.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import nullcontext
from typing import Any

import anyio
from ag_ui.core import BaseEvent, EventType, RunAgentInput, RunErrorEvent, RunFinishedEvent
from ag_ui.encoder import EventEncoder
from anyio.streams.memory import MemoryObjectReceiveStream
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, ValidationError

from hosts.web._agui_close import REPLAY_WAIT, failed, unclosed
from hosts.web._answers import explain_resume
from hosts.web._errors import ErrorBody, Kept, refusal, validation_refusal
from hosts.web._host import Authorized, Me, WebHost
from hosts.web._legs import LegCall, WatchedLeg
from interactions import InvalidPayloadError, PiRecipesError, UnknownRunError
from interactions.people import Identity
from recipes.runs.agui import agui_events, event_json

__all__ = ["EVENT_BUFFER", "REPLAY_WAIT", "router"]

THREAD_RUNS = 50
"""How many of a thread's latest runs a resume naming an earlier leg (``parentRunId``) looks
through for it."""
EVENT_BUFFER = 10_000
"""AG-UI events held for one stream's client; a client that reads slower loses its stream
(a ``RUN_ERROR`` with code ``slow_client`` ends it) while the run goes on."""

logger = logging.getLogger("hosts.web")
router = APIRouter(tags=["ag-ui"])
_CLOSING = {EventType.RUN_FINISHED, EventType.RUN_ERROR}
_INSTRUCTIONS = {"system", "developer"}
_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 410, 413, 422, 500, 503)
}


class _Ids(BaseModel):
    """The ids every call must carry: its thread (the conversation, named again to resume it)
    and its run id (echoed in ``RUN_STARTED`` and ``RUN_FINISHED``)."""

    thread_id: Kept = Field(min_length=1, max_length=200, alias="threadId")  # as REST's
    run_id: Kept = Field(min_length=1, max_length=200, alias="runId")


@router.post(
    "/agui",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **_REFUSALS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/RunAgentInput"}}
            },
        }
    },
)
async def agui(host: Authorized, me: Me, request: Request) -> StreamingResponse:
    """Run (or resume) the thread's agent; stream its AG-UI events. A resume answers as who
    signed in (403 when an interrupt's approvers do not name them, nothing stored)."""
    try:
        run_input = RunAgentInput.model_validate_json(await request.body())
        _Ids.model_validate({"threadId": run_input.thread_id, "runId": run_input.run_id})
    except ValidationError as exc:
        raise validation_refusal(exc, "not an AG-UI RunAgentInput") from None
    starting = nullcontext(None) if run_input.resume else host.threads.start(run_input.thread_id)
    try:
        async with starting as new_id:
            run_id, call = await _plan(host, run_input, new_id, me)
            leg = WatchedLeg(host.feed, run_id, agui_run_id=run_input.run_id, buffer=EVENT_BUFFER)
            ticket = leg.submit(host.workers, call)
            try:
                await leg.started(ticket, timeout=host.config.start_timeout)
            except PiRecipesError as exc:
                if not run_input.resume:
                    raise  # a start: the thread's check says what a refusal means
                raise await explain_resume(host.store, run_id, run_input.resume, exc) from None
    except PiRecipesError as exc:
        raise refusal(exc) from None
    encoder = EventEncoder(accept=request.headers.get("accept", "text/event-stream"))
    return StreamingResponse(
        _stream(host, leg, run_input, encoder),
        media_type=encoder.get_content_type(),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _plan(
    host: WebHost, run_input: RunAgentInput, new_id: str | None, me: Identity
) -> tuple[str, LegCall]:
    """Which run the call continues or starts (a start takes ``new_id``, given by
    :class:`Threads` once it checked the thread), and the runner call that drives its leg."""
    thread = run_input.thread_id
    if run_input.resume:
        run_id = await _resumed_run(host, thread, run_input.parent_run_id)
        entries = run_input.resume
        return run_id, lambda surface: host.runner.resume(
            run_id, entries, answered_by=me, surface=surface
        )
    prompt = _last_user_text(run_input)
    assert new_id is not None, "a start is checked by Threads, which names the new run"
    run_id = new_id
    recipe, agent = host.config.recipe, host.config.agent
    return run_id, lambda surface: host.runner.start(
        recipe, prompt, agent=agent, thread_id=thread, run_id=run_id, surface=surface
    )


async def _resumed_run(host: WebHost, thread: str, parent: str | None) -> str:
    """The run a resume continues: the thread's latest run, unless the input's
    ``parentRunId`` names a leg of an earlier run of the thread (a client replaying an old
    resume after a new run began there). Then that earlier run decides it, as a replay there
    (or a conflict), and the resume never answers the latest run's questions, whose ids may be
    the same. A ``parentRunId`` no leg of the thread's last :data:`THREAD_RUNS` runs has is
    left aside: the latest run, as for a client that sends none."""
    runs = await host.store.list_runs(limit=THREAD_RUNS, thread_id=thread)
    if not runs:
        raise UnknownRunError(f"thread {thread!r} has no run to resume", reason="unknown_thread")
    latest = runs[0]
    if parent is None or host.runner.view(latest).agui_run_id == parent:
        return latest.id  # the leg that paused last: a resume as clients send it
    for run in runs:
        legs = await agui_events(host.store, run.id)
        if any(isinstance(e, RunFinishedEvent) and e.run_id == parent for e in legs):
            return run.id
    return latest.id


def _last_user_text(run_input: RunAgentInput) -> str:
    """The text of the new user message a start runs: the last message (instructions after
    it aside). A history ending otherwise (an assistant's answer, a tool result, a blank
    message) has no new question, and running an earlier one would do its work again."""
    turns = [m for m in run_input.messages if m.role not in _INSTRUCTIONS]
    if turns and turns[-1].role == "user":
        content: Any = getattr(turns[-1], "content", "")
        if isinstance(content, str):
            text = content
        else:
            text = "\n".join(getattr(p, "text", "") for p in content if p.type == "text")
        if text.strip():
            return text
    raise InvalidPayloadError(
        "the input's last message is not a user message with text, so there is nothing new "
        "to run; add the user's message at the end of messages",
        reason="no_user_message",
    )


async def _next_unless_stopping(
    events: MemoryObjectReceiveStream[BaseEvent], host: WebHost
) -> BaseEvent | None:
    """The leg's next event; ``None`` once there is none, or the server is stopping."""
    got: list[BaseEvent] = []
    async with anyio.create_task_group() as race:

        async def receive() -> None:
            with contextlib.suppress(anyio.EndOfStream):
                got.append(await events.receive())
            race.cancel_scope.cancel()

        async def stop() -> None:
            await host.feed.stopped.wait()
            race.cancel_scope.cancel()

        race.start_soon(receive)
        race.start_soon(stop)
    return got[0] if got else None


def _wire(event: BaseEvent) -> BaseEvent:
    """``event`` rebuilt from its wire JSON, so the encoder writes every field (the interrupt
    descriptors' own fields included: AG-UI keeps unknown fields)."""
    return type(event).model_validate(event_json(event))


async def _stream(
    host: WebHost, leg: WatchedLeg, run_input: RunAgentInput, encoder: EventEncoder
) -> AsyncIterator[str]:
    closed = False
    assert leg.events is not None
    async with leg.events:
        while (event := await _next_unless_stopping(leg.events, host)) is not None:
            yield encoder.encode(_wire(event))
            closed = event.type in _CLOSING
    if closed:
        return
    if host.feed.stopping:  # the stream ends now, not when the shutdown's grace runs out
        message = (
            f"the server is stopping: this stream ends here; run {leg.run_id} gets the "
            "shutdown's grace to end its leg, else it is left to retry (see /api/runs)"
        )
        yield encoder.encode(RunErrorEvent(message=message, code="server_stopping"))
        return
    if leg.overflowed:
        message = "the stream's client read too slowly; the run goes on (see /api/runs)"
        yield encoder.encode(RunErrorEvent(message=message, code="slow_client"))
        return
    await leg.done.wait()
    try:
        async for event in unclosed(host, leg, run_input):
            yield encoder.encode(_wire(event))
    except Exception as exc:  # reading where the run stands failed: still end with a frame
        if not isinstance(exc, PiRecipesError):
            logger.exception("the AG-UI stream of run %s failed", leg.run_id)
        yield encoder.encode(failed(exc))
