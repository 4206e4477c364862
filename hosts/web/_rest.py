"""REST under ``/api``, shaped like Iterion's where Iterion has the route.

``GET /api/runs`` (``?status=&kind=&ref=&mine=&cursor=&limit=``: a page, and ``next``),
``GET /api/runs/{id}``, ``GET /api/runs/{id}/events``
(``?follow=1`` tails them as server-sent events), ``GET /api/runs/{id}/agui`` (its AG-UI
events, rebuilt from the transcript), ``GET /api/runs/{id}/interactions/pending``
→ ``{"interactions": [...]}``, ``POST /api/runs/{id}/interactions/{iid}/answer`` →
``{"run_id", "interaction_id", "queued", "resumed", "created"}``, ``POST /api/runs`` → 202
and the id (a recipe run on a prompt, or a graph run of a served workflow on its vars), ``POST
/api/runs/{id}/resume`` → 202, ``POST /api/runs/{id}/retry`` → 202 (a ``failed_resumable``
run), ``POST /api/runs/{id}/cancel``;
``GET /api/decisions`` (remembered approval decisions) and ``POST
/api/decisions/{id}/revoke``; ``GET /api/audit`` (``?since=&until=``): every interaction
across runs, oldest asked first, streamed as JSON lines. Every
route needs the bearer token; refusals carry the typed body of
:class:`~hosts.web._errors.ErrorBody`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from hosts._kit import answerable
from hosts.web._answers import explain_answer, explain_resume
from hosts.web._errors import Complaint, ErrorBody, Kept, refusal
from hosts.web._host import Authorized, Me, WebHost
from hosts.web._legs import LegCall, WatchedLeg
from hosts.web._views import (
    InteractionView,
    RunDetail,
    RunView,
    interaction_views,
    prompt_of,
    run_view,
)
from interactions import PiRecipesError, UnknownRunError, UsageError
from interactions.audit import audit_rows, audit_time
from interactions.errors import InvalidPayloadError
from interactions.resume import parse_resume_entries
from interactions.store import (
    AuditStore,
    DecisionRecord,
    DecisionStore,
    RunStatus,
    Store,
    is_terminal,
)
from recipes.graph.runtime import start_graph
from recipes.runs import Runner, RunResult, Surface
from recipes.runs.agui import agui_events, event_json

__all__ = ["router"]

_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 410, 413, 422, 500, 503)
}
router = APIRouter(prefix="/api", tags=["runs"], responses=_REFUSALS)
KEEPALIVE = 15.0
"""Seconds of silence after which a followed event stream sends a comment line."""


class RunList(BaseModel):
    runs: list[RunView]
    next: str | None = Field(
        default=None, description="the cursor of the next page (pass it as cursor=); null: none"
    )


class PendingList(BaseModel):
    interactions: list[InteractionView]


class StartRequest(BaseModel):
    """Start a run of the server's recipe on ``prompt``, or (``workflow``: one of the
    server's ``--workflow`` files, as ``GET /api/startable`` names it) a graph run on
    ``vars`` (values as JSON, or as text the var's type reads: ``"3"``, ``"true"``)."""

    model_config = ConfigDict(extra="forbid")
    prompt: str | None = Field(default=None, min_length=1, max_length=100_000)
    agent: Kept | None = Field(default=None, description="default: the server's --agent")
    thread_id: Kept | None = Field(default=None, min_length=1, max_length=200)
    workflow: Kept | None = Field(default=None, min_length=1, max_length=1000)
    vars: dict[Kept, Any] | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _one_kind(self) -> StartRequest:
        if self.workflow is None and self.prompt is None:
            raise ValueError("a recipe run needs a prompt (or name a workflow)")
        if self.workflow is not None and (self.prompt is not None or self.agent is not None):
            raise ValueError("a workflow's run takes vars, not a prompt nor an agent")
        if self.workflow is None and self.vars is not None:
            raise ValueError("vars go with a workflow")
        return self


class RunRef(BaseModel):
    run_id: str
    thread_id: str | None = None
    status: RunStatus


class AnswerRequest(BaseModel):
    """An answer: ``{"answer": ...}``, ``{"answers": [...]}`` or ``{"approved": ...,
    "feedback": ...}`` as the interrupt's ``response_schema`` says (a tool call's approval
    also takes ``args``, the edited arguments, and ``remember``, ``{"scope": "run"|"thread",
    "args": bool}``: approve or decline its later calls too); ``{"status": "cancelled"}``
    declines. ``answered_by`` is ignored: the server records who signed in."""

    model_config = ConfigDict(extra="forbid")
    answer: Any = None
    answers: Any = None
    approved: Any = None
    feedback: Any = None
    args: Any = None
    remember: Any = None
    status: Literal["resolved", "cancelled"] = "resolved"
    answered_by: Kept | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="ignored: the server records who signed in",
    )

    def payload(self) -> dict[str, Any] | None:
        keys = ("answer", "answers", "approved", "feedback", "args", "remember")
        chosen = {k: getattr(self, k) for k in keys if k in self.model_fields_set}
        return chosen or None


class AnswerReply(BaseModel):
    """What an answer did: ``queued`` (stored, it waits for the run to take it), ``resumed``
    (this server took the run on), ``created`` (false when the identical answer was already
    stored: a replay, which writes and queues nothing; it still continues a run left paused
    with every question answered)."""

    run_id: str
    interaction_id: str
    queued: bool
    resumed: bool
    created: bool
    settled: bool = True
    """False while an approval that needs several approvals waits for more: this answer was
    one vote (``created``: it was counted)."""
    approvals: list[str] = []
    """Who approved so far, in order (an approval that needs several)."""
    required_approvals: int = 1


class ResumeRequest(BaseModel):
    """Resume with AG-UI ``ResumeEntry`` objects (``entries``), or, without them, with the
    answers already given one by one. ``answered_by`` is ignored: the server records who
    signed in."""

    model_config = ConfigDict(extra="forbid")
    entries: list[Any] | None = None
    answered_by: Kept | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="ignored: the server records who signed in",
    )


@router.get("/runs", response_model=RunList)
async def list_runs(
    host: Authorized,
    me: Me,
    status: RunStatus | None = None,
    thread_id: Annotated[Kept | None, Query(max_length=200)] = None,
    kind: Annotated[Kept | None, Query(min_length=1, max_length=50)] = None,
    ref: Annotated[
        Kept | None, Query(min_length=1, max_length=1000, description="a recipe or workflow")
    ] = None,
    mine: Annotated[
        bool, Query(description="only runs with a question the caller answered or voted on")
    ] = False,
    cursor: Annotated[
        Kept | None, Query(min_length=1, max_length=200, description="a page's `next`")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> RunList:
    """Runs, newest first, a page of ``limit`` at a time (``next``: the cursor of the page
    after), maybe only those of one status, AG-UI thread, kind (``recipe``, ``graph``), recipe
    or workflow (``ref``, as the runs list it), and (``mine``) those with a question the
    caller answered or voted on (the store does not record who started a run). The store
    filters. A cursor that names no run is a 422."""
    if cursor is not None:
        try:
            await host.store.get_run(cursor)
        except UnknownRunError:
            complaint = Complaint(path="cursor", message=f"no run {cursor!r} to page on from")
            raise refusal(InvalidPayloadError(complaint.message), [complaint]) from None
    runs = await host.store.list_runs(
        status,
        limit + 1,  # one more than asked: whether there is a next page
        after=cursor,
        thread_id=thread_id,
        kind=kind,
        ref=ref,
        answered_by=me.name if mine else None,
    )
    page = runs[:limit]
    more = len(runs) > limit
    return RunList(runs=[run_view(r) for r in page], next=page[-1].id if more else None)


@router.post("/runs", status_code=202, response_model=RunRef)
async def start_run(host: Authorized, body: StartRequest) -> RunRef:
    """Start a run of the server's recipe (or of one of its workflows); 202 once it is stored
    and running. A workflow this server does not serve is a 422; vars its workflow refuses
    (unknown, of the wrong type, missing) a 400, nothing written."""
    try:
        call = _starter(host, body)
        async with host.threads.start(body.thread_id) as run_id:
            await _leg_started(host, run_id, lambda surface: call(run_id, surface))
        return await _run_ref(host, run_id)
    except PiRecipesError as exc:
        raise refusal(exc) from None


def _starter(
    host: WebHost, body: StartRequest
) -> Callable[[str, Surface], Awaitable[RunResult]]:
    """The runner call that starts what ``body`` asks for, as run ``run_id``."""
    if body.workflow is None:
        recipe, agent, prompt = host.config.recipe, body.agent or host.config.agent, body.prompt
        assert prompt is not None  # the request's check

        def recipe_run(run_id: str, surface: Surface) -> Awaitable[RunResult]:
            return host.runner.start(
                recipe, prompt, agent=agent, thread_id=body.thread_id, run_id=run_id,
                surface=surface,
            )  # fmt: skip

        return recipe_run
    if body.workflow not in host.config.workflows:
        said = f"this server starts no workflow {body.workflow!r} (see GET /api/startable)"
        raise refusal(InvalidPayloadError(said), [Complaint(path="workflow", message=said)])
    runner = host.runner
    if not isinstance(runner, Runner):
        raise UsageError("this server's engine runs no workflows")
    workflow, values = body.workflow, dict(body.vars or {})

    def graph_run(run_id: str, surface: Surface) -> Awaitable[RunResult]:
        return start_graph(
            runner, workflow, vars=values, run_id=run_id, thread_id=body.thread_id,
            surface=surface,
        )  # fmt: skip

    return graph_run


@router.get("/runs/{run_id}", response_model=RunDetail)
async def get_run(host: Authorized, run_id: str) -> RunDetail:
    """One run, its latest assistant text and all its interactions."""
    try:
        run = await host.store.get_run(run_id)
        records = await host.store.list_interactions(run_id)
        views = await interaction_views(host.store, records)
    except PiRecipesError as exc:
        raise refusal(exc) from None
    summary = run_view(run).model_dump()
    graph_vars = run.checkpoint.get("vars")
    shown = host.runner.view(run)  # its text: the interrupts of a status are shown as views
    return RunDetail(
        **summary,
        text=shown.text,
        warning=shown.warning,
        prompt=prompt_of(run),
        vars=graph_vars if isinstance(graph_vars, dict) else {},
        interactions=views,
    )


@router.get("/runs/{run_id}/interactions/pending", response_model=PendingList)
async def pending(host: Authorized, run_id: str) -> PendingList:
    """The run's questions a person can answer (:func:`hosts._kit.answerable`: not the run's
    own ``await`` wait, which the system settles), oldest first."""
    try:
        records = answerable(await host.store.list_interactions(run_id, pending=True))
        return PendingList(interactions=await interaction_views(host.store, records))
    except PiRecipesError as exc:
        raise refusal(exc) from None


@router.post(  # an interaction id holds its call's id, which a model may write with a "/"
    "/runs/{run_id}/interactions/{interaction_id:path}/answer", response_model=AnswerReply
)
async def answer(
    host: Authorized, me: Me, run_id: str, interaction_id: str, body: AnswerRequest
) -> AnswerReply:
    """Answer one interaction as who signed in (the first answer wins: 409 for a different
    second one; 403 for a person the interaction's approvers do not name, nothing stored).
    Answering the run's last open one continues the run in this server (``resumed``)."""
    payload = body.payload()
    try:
        done = await host.desk.answer(
            run_id, interaction_id, payload, status=body.status, answered_by=me
        )
    except PiRecipesError as exc:
        raise await explain_answer(host.store, run_id, interaction_id, payload, exc) from None
    return AnswerReply(
        run_id=done.run_id,
        interaction_id=done.interaction_id,
        queued=done.queued,
        resumed=done.resumed,
        created=done.created,
        settled=done.settled,
        approvals=list(done.approvals),
        required_approvals=done.required_approvals,
    )


@router.post("/runs/{run_id}/resume", status_code=202, response_model=RunRef)
async def resume(
    host: Authorized, me: Me, run_id: str, body: ResumeRequest | None = None
) -> RunRef:
    """Continue a paused run: with ``entries`` (every open interrupt answered, as who signed
    in: 403 when an interrupt's approvers do not name them), or with the answers already
    given."""
    body = body or ResumeRequest()
    try:
        if body.entries is None:
            await host.desk.continue_answered(run_id)
        else:
            entries = parse_resume_entries(body.entries)
            try:
                await _leg_started(host, run_id, lambda surface: host.runner.resume(
                    run_id, entries, answered_by=me, surface=surface
                ))  # fmt: skip
            except PiRecipesError as exc:
                raise await explain_resume(host.store, run_id, entries, exc) from None
        return await _run_ref(host, run_id)
    except PiRecipesError as exc:
        raise refusal(exc) from None


async def _leg_started(host: WebHost, run_id: str, call: LegCall) -> None:
    """Hand ``call``, a leg of ``run_id``, to the workers and return once it began: raises
    :class:`~hosts.web._errors.Busy` when no worker took it in time, and the leg's own error
    when it failed before its first event (nothing was written then)."""
    leg = WatchedLeg(host.feed, run_id)
    await leg.started(leg.submit(host.workers, call), timeout=host.config.start_timeout)


async def _run_ref(host: WebHost, run_id: str) -> RunRef:
    run = await host.store.get_run(run_id)
    return RunRef(run_id=run.id, thread_id=run.thread_id, status=run.status)


@router.post("/runs/{run_id}/retry", status_code=202, response_model=RunRef)
async def retry(host: Authorized, run_id: str) -> RunRef:
    """Continue a ``failed_resumable`` run from its last checkpoint (``pi-recipes runs
    retry``) on this server's workers: 202 once it is claimed and its leg handed to a worker
    (409 for a run in any other status or claimed elsewhere; 503 when every worker is busy,
    nothing written)."""
    try:
        await host.desk.continue_retry(run_id)
        return await _run_ref(host, run_id)
    except PiRecipesError as exc:
        raise refusal(exc) from None


@router.post("/runs/{run_id}/cancel", response_model=RunRef)
async def cancel(host: Authorized, run_id: str) -> RunRef:
    """Cancel a run that has not ended; its open interactions close as cancelled."""
    try:
        result = await host.runner.cancel(run_id)
    except PiRecipesError as exc:
        raise refusal(exc) from None
    return RunRef(run_id=result.run_id, thread_id=result.thread_id, status=result.status)


class DecisionList(BaseModel):
    decisions: list[DecisionRecord]


class RevokeRequest(BaseModel):
    """``revoked_by`` is ignored: the server records who signed in."""

    model_config = ConfigDict(extra="forbid")
    revoked_by: Kept | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="ignored: the server records who signed in",
    )


@router.get("/decisions", response_model=DecisionList)
async def list_decisions(
    host: Authorized,
    run_id: Annotated[str | None, Query(max_length=200)] = None,
    thread_id: Annotated[str | None, Query(max_length=200)] = None,
    include_revoked: bool = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> DecisionList:
    """Remembered approval decisions ("approve always", "deny always"), newest first: maybe
    only those made in one run, or of one thread; the revoked ones too if asked."""
    store = _decisions_of(host)
    found = await store.list_decisions(
        run_id=run_id, thread_id=thread_id, include_revoked=include_revoked, limit=limit
    )
    return DecisionList(decisions=found)


@router.post("/decisions/{decision_id}/revoke", response_model=DecisionRecord)
async def revoke_decision(
    host: Authorized, me: Me, decision_id: str, body: RevokeRequest | None = None
) -> DecisionRecord:
    """End a remembered decision, as who signed in: the tool's next call asks again.
    Revoking a revoked one returns it unchanged; an unknown id is a 404."""
    store = _decisions_of(host)
    try:
        record, _ = await store.revoke_decision(decision_id, revoked_by=me.name)
    except PiRecipesError as exc:
        raise refusal(exc) from None
    return record


def _decisions_of(host: WebHost) -> DecisionStore:
    if not isinstance(host.store, DecisionStore):
        raise refusal(UsageError("this server's engine keeps no remembered decisions"))
    return host.store


@router.get("/runs/{run_id}/events", response_model=None)
async def events(
    host: Authorized,
    run_id: str,
    after: Annotated[int, Query(ge=0)] = 0,
    follow: bool = False,
    last_event_id: Annotated[str | None, Header()] = None,
) -> dict[str, Any] | StreamingResponse:
    """The run's events after ``after`` (``{"events": [...]}``); with ``follow=1`` a
    ``text/event-stream`` of them that goes on until the run ends (``id:`` is the seq, so a
    reconnect with ``Last-Event-ID`` misses nothing)."""
    try:
        stored = await host.store.list_events(run_id, after)
    except PiRecipesError as exc:
        raise refusal(exc) from None
    if not follow:
        return {"events": [e.model_dump(mode="json") for e in stored]}
    if last_event_id and last_event_id.isascii() and last_event_id.isdigit():
        after = max(after, int(last_event_id[:20]))  # the store reads past any seq as the end
    return StreamingResponse(
        _follow(host, run_id, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/runs/{run_id}/agui")
async def agui_history(host: Authorized, run_id: str) -> dict[str, Any]:
    """The run's AG-UI events, leg after leg, rebuilt from its stored transcript
    (``{"events": [...]}``): what its live streams carried, text as one event per message."""
    try:
        events = await agui_events(host.store, run_id)
    except PiRecipesError as exc:
        raise refusal(exc) from None
    return {"events": [event_json(e) for e in events]}


async def _follow(host: WebHost, run_id: str, after: int) -> AsyncIterator[str]:
    last = after
    while True:
        with host.feed.listening(run_id) as rung:
            ended = is_terminal((await host.store.get_run(run_id)).status)  # before the read:
            found = await host.store.list_events(run_id, last)  # its last events are in `found`
            for event in found:
                data = json.dumps(event.model_dump(mode="json"), separators=(",", ":"))
                yield f"id: {event.seq}\ndata: {data}\n\n"
                last = event.seq
            if found:
                continue
            if ended or host.feed.stopping:  # stopping: the client reconnects elsewhere, later
                return
            if not await host.feed.wait_run(rung, KEEPALIVE):
                yield ": keep-alive\n\n"


AUDIT_LINES_PER_CHUNK = 100
"""JSON lines ``GET /api/audit`` sends per chunk of its body."""


@router.get("/audit", response_model=None)
async def audit(
    host: Authorized,
    since: Annotated[str | None, Query(max_length=64)] = None,
    until: Annotated[str | None, Query(max_length=64)] = None,
) -> StreamingResponse:
    """Every interaction across runs, oldest asked first, as ``application/x-ndjson``: one
    JSON object per line (:class:`interactions.audit.AuditRow`), maybe only those asked at or
    after ``since`` and before ``until`` (ISO 8601 dates or times; no offset: UTC). Streamed
    a page at a time: any number of interactions in constant memory. A bad time is a 400; an
    engine that cannot list every run's interactions, too."""
    try:
        start = None if since is None else audit_time(since)
        end = None if until is None else audit_time(until)
        if not isinstance(host.store, AuditStore):
            raise UsageError("this server's engine cannot list every run's interactions")
    except PiRecipesError as exc:
        raise refusal(exc) from None
    return StreamingResponse(
        _audit_lines(host.store, start, end),
        media_type="application/x-ndjson",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _audit_lines(
    store: Store, since: datetime | None, until: datetime | None
) -> AsyncIterator[str]:
    chunk: list[str] = []
    async for row in audit_rows(store, since=since, until=until):
        chunk.append(row.json_line() + "\n")
        if len(chunk) >= AUDIT_LINES_PER_CHUNK:
            yield "".join(chunk)
            chunk = []
    if chunk:
        yield "".join(chunk)
