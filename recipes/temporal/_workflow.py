"""A run is a workflow: the unchanged runner on the run's own store, driven by updates.

The workflow's state is one :class:`~recipes.temporal._run_store.RunStore` holding its run. The
start, each answer, resume, claim, retry and cancel is the same :class:`~recipes.runs.Runner`
call as on the other engines, made inside the workflow (a claimed run is continued here, in
the background: its client waits with ``settle``), with the model and the tool bodies behind
activities; every write goes through the store's rules, on the workflow's clock. A pause is the
workflow waiting on a condition with a durable timer at the earliest ``expires_at``; the timer
settles what expired (recorded ``expired``) with the runner's own sweep. Updates carry
everything that changes a run; their validators refuse, before anything is written, what the
other engines refuse (:mod:`._checks`). One query returns the run as it stands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import FailureError

from interactions import RunError
from interactions.people import Identity
from interactions.reminders import remind_due
from interactions.resume import parse_resume_entries
from interactions.store import RunStatus, is_terminal
from recipes import Recipe
from recipes.runs import Claim, Runner, RunResult
from recipes.temporal._activities import PREPARE_ACTIVITY
from recipes.temporal._checks import (
    check_answer,
    check_cancel,
    check_resume,
    check_resume_answered,
    check_retry,
    require_run,
)
from recipes.temporal._errors import ErrorData, error_data, from_failure, to_failure, typed_error
from recipes.temporal._inside import refusals, surface_of, workflow_runner
from recipes.temporal._proxies import ActivityModel, proxied_recipe
from recipes.temporal._run_store import RunState, RunStore
from recipes.temporal._served import Served, served_for
from recipes.temporal._wire import (
    AnswerRequest,
    CancelRequest,
    EventsRequest,
    LegRequest,
    Prepared,
    ResumeRequest,
    Settled,
    SettleRequest,
    Snapshot,
    StartRequest,
    oversized,
)

__all__ = ["WORKFLOW", "RunWorkflow"]

WORKFLOW = "pi-recipes.run"
"""The workflow type of a run."""

_PREPARE_RETRY = RetryPolicy(maximum_attempts=3)


@workflow.defn(name=WORKFLOW)
class RunWorkflow:
    """One run (see the module docstring). Its id is the run's id."""

    @workflow.init
    def __init__(self, start: dict[str, Any]) -> None:
        self._start = StartRequest.model_validate(start)
        self._store = RunStore(self._start.run_id)
        self._served: Served | None = None
        self._recipe: Recipe | None = None
        self._prepared: Prepared | None = None
        self._refused: ErrorData | None = None
        self._errors: list[tuple[int, ErrorData]] = []
        self._legs: set[asyncio.Task[None]] = set()
        self._driving = 0
        """Legs the workflow drives itself (the first, a claimed one) still going: a cancel
        moves the run while its leg winds down, and ``settle`` returns that leg's error."""

    @property
    def state(self) -> RunState:
        return self._store.state

    @property
    def run_id(self) -> str:
        return self._start.run_id

    # ------------------------------------------------------------------------ the run

    @workflow.run
    async def run(self, start: dict[str, Any]) -> dict[str, Any]:
        self._served = served_for(workflow.info().task_queue)
        try:
            prepared = await workflow.execute_local_activity(
                PREPARE_ACTIVITY,
                start,
                start_to_close_timeout=timedelta(minutes=1),
                retry_policy=_PREPARE_RETRY,
            )
        except FailureError as exc:  # a local activity's failure may come unwrapped
            cause = getattr(exc, "cause", None) or exc
            self._refused = error_data(from_failure(exc) or RunError(str(cause)))
            return await self._end()
        self._prepared = Prepared.model_validate(prepared)
        self._recipe = proxied_recipe(self._served.recipe, self._served)
        try:
            if not await self._first_leg():
                return await self._end()  # refused before anything was written
            await self._keep()
        except asyncio.CancelledError:  # the workflow itself was cancelled, in Temporal
            await self._cancelled_in_temporal()
            raise
        return await self._end()

    async def _first_leg(self) -> bool:
        """Start the run and drive its first leg; ``False`` when the start was refused."""
        assert self._prepared is not None
        begin = self._start
        self._driving += 1
        try:
            await self._runner(begin.via).start(
                self._prepared.ref,
                begin.input,
                agent=self._prepared.agent,
                thread_id=begin.thread_id,
                run_id=begin.run_id,
                expiry_policy=begin.expiry_policy,
                surface=surface_of(begin),
            )
        except Exception as exc:
            if self.state.run is None:  # refused before anything was written
                self._refused = error_data(exc)
                return False
            self._remember(exc)
        finally:
            self._driving -= 1
        return True

    async def _cancelled_in_temporal(self) -> None:
        """Record the run cancelled when its workflow is (``temporal workflow cancel``, the
        Temporal UI), as ``runs cancel`` would: the workflow ends, and the run must not read
        back as still waiting for answers no one can give it any more."""
        run = self.state.run
        if run is None or is_terminal(run.status):
            return
        try:
            await self._runner("temporal").cancel(self.run_id, reason="cancelled in Temporal")
        except Exception as exc:
            self._remember(exc)

    async def _keep(self) -> None:
        """Wait while the run lives; settle what expires, and write the reminders and
        escalations due (``interactions.reminders.remind_due``), when their timer fires."""
        while True:
            run = self.state.run
            if run is None or is_terminal(run.status):
                return
            moved = self._moved()
            expiry, notice = self.state.next_expiry(), self.state.next_notice()
            due = min((d for d in (expiry, notice) if d is not None), default=None)
            if due is None:
                await workflow.wait_condition(moved)
                continue
            wait = max((due - workflow.now()).total_seconds(), 0.0) + 0.001
            try:
                await workflow.wait_condition(moved, timeout=wait)
                continue
            except TimeoutError:
                pass
            now = workflow.now()
            try:
                if notice is not None and notice <= now:  # reminders first: then it expires
                    await remind_due(self._store, now=now)
                if expiry is not None and expiry <= now:
                    await self._runner("expiry").expire_due(now=now)
            except Exception as exc:
                self._remember(exc)

    def _moved(self) -> Callable[[], bool]:
        """A condition that holds once the run was written to again."""
        changes = self.state.changes
        return lambda: self.state.changes != changes

    async def _end(self) -> dict[str, Any]:
        await workflow.wait_condition(lambda: workflow.all_handlers_finished() and not self._legs)
        run = self.state.run
        return {"status": run.status.value if run else None, "refused": self._refused is not None}

    def _runner(self, via: str) -> Runner:
        assert self._served is not None and self._prepared is not None and self._recipe
        return workflow_runner(
            self._store,
            self._recipe,
            env=self._start.flags,
            host=via,
            model=ActivityModel(self._prepared, self._served),
            cwd=self._served.cwd,
            tool_timeout=self._served.tool_timeout,
            clock=workflow.now,  # a replay decides on answers as the first run did
        )

    def _remember(self, error: BaseException) -> None:
        """Keep the error of a leg the workflow drove by itself, for ``settle`` to return."""
        run = self.state.run
        self._errors.append((run.version if run else 0, error_data(error)))
        workflow.logger.info("run %s: a leg raised %s", self.run_id, error)

    def _background(self, leg: Awaitable[RunResult]) -> None:
        async def drive() -> None:
            self._driving += 1
            try:
                await leg
            except Exception as exc:
                self._remember(exc)
            finally:
                self._driving -= 1

        task = asyncio.create_task(drive())
        self._legs.add(task)
        task.add_done_callback(self._legs.discard)

    def _continue_claimed(
        self, runner: Runner, claimed: Claim, request: LegRequest
    ) -> dict[str, Any]:
        """Continue what ``runner`` claimed, in the background; what the client needs to wait
        for that leg: the run as claimed, and the seq of its last event then (the leg's
        events, which the client's live sink gets, come after it)."""
        seq = self.state.events[-1].seq if self.state.events else 0
        self._background(runner.proceed(claimed, surface=surface_of(request)))
        return {"run": claimed.run.model_dump(mode="json"), "seq": seq}

    def _ready(self) -> Runner:
        require_run(self.state, self.run_id)
        return self._runner("api")

    async def _leg(
        self,
        request: LegRequest | CancelRequest,
        call: Callable[[Runner], Awaitable[RunResult]],
    ) -> dict[str, Any]:
        """An update that is one runner call: ``call`` made with the runner of the request's
        host, a refusal leaving as the typed failure it is; the run as it then stands, as
        JSON."""
        with refusals():
            result = await call(self._runner(request.via))
        return result.model_dump(mode="json")

    def _refuse(self, check: Callable[[RunState, str], object]) -> None:
        """A validator that is one of :mod:`._checks`' decisions on the run as last written:
        its refusal leaves as the typed failure it is, before anything is written."""
        with refusals():
            check(self.state, self.run_id)

    # ------------------------------------------------------------------------ reads

    @workflow.query(name="snapshot")
    def snapshot(self, after_seq: int = 0) -> dict[str, Any]:
        """The run, its interactions and its events after ``after_seq``."""
        state = self.state
        found = Snapshot(
            run=state.run,
            interactions=list(state.interactions.values()),
            events=[e for e in state.events if e.seq > after_seq],
            refused=self._refused,
        ).model_dump(mode="json")
        too_big = oversized(workflow.payload_converter(), found, "the run's snapshot")
        if too_big and found["run"] is not None:  # readable without its transcript, saying so
            found["run"]["checkpoint"].pop("messages", None)
            found["omitted"] = f"{too_big}: its transcript is left out"
        return found

    @workflow.update(name="settle")
    async def settle(self, data: dict[str, Any]) -> dict[str, Any]:
        """Wait until the run has moved past ``after_version``, is not running and the leg
        the workflow drives has ended (a cancelled run's leg stops first); return where it
        stands and the error its leg raised, if one did."""
        after = SettleRequest.model_validate(data).after_version

        def settled() -> bool:
            run = self.state.run
            return self._refused is not None or (
                run is not None
                and run.version > after
                and run.status is not RunStatus.RUNNING
                and not self._driving
            )

        await workflow.wait_condition(settled)
        if self._refused is not None:
            raise to_failure(typed_error(self._refused))
        with refusals():
            result = await self._ready().status(self.run_id)
        error = next((e for version, e in reversed(self._errors) if version > after), None)
        return Settled(result=result, error=error).model_dump(mode="json")

    # ------------------------------------------------------------------------ answers

    @workflow.update(name="answer")
    async def answer(self, data: dict[str, Any]) -> dict[str, Any]:
        request = AnswerRequest.model_validate(data)
        runner = self._runner(request.via)
        with refusals():
            done = await runner.answer(
                self.run_id,
                request.interaction_id,
                request.payload,
                status=request.status,
                answered_by=_who(request.answered_by, request.groups),
                resume=request.resume,
                claim=request.claim,
                surface=surface_of(request),
            )
        data = done.model_dump(mode="json")
        if done.claim is not None:  # continued here; the client waits for it with `settle`
            data["claimed"] = self._continue_claimed(runner, done.claim, request)
        return data

    @answer.validator
    def _check_answer(self, data: dict[str, Any]) -> None:
        with refusals():
            check_answer(
                self.state, self.run_id, AnswerRequest.model_validate(data), workflow.now()
            )

    @workflow.update(name="resume")
    async def resume(self, data: dict[str, Any]) -> dict[str, Any]:
        request = ResumeRequest.model_validate(data)
        return await self._leg(
            request,
            lambda runner: runner.resume(
                self.run_id,
                parse_resume_entries(request.entries),
                answered_by=_who(request.answered_by, request.groups),
                surface=surface_of(request),
            ),
        )

    @resume.validator
    def _check_resume(self, data: dict[str, Any]) -> None:
        with refusals():
            check_resume(
                self.state, self.run_id, ResumeRequest.model_validate(data), workflow.now()
            )

    @workflow.update(name="resume_answered")
    async def resume_answered(self, data: dict[str, Any]) -> dict[str, Any]:
        request = LegRequest.model_validate(data)
        return await self._leg(
            request, lambda runner: runner.resume_answered(self.run_id, surface=surface_of(request))
        )

    @resume_answered.validator
    def _check_resume_answered(self, data: dict[str, Any]) -> None:
        self._refuse(check_resume_answered)

    @workflow.update(name="claim")
    async def claim(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """Claim a paused, fully answered run and continue it here in the background (its
        client waits with ``settle``); ``None`` when it is not ready or was claimed."""
        request = LegRequest.model_validate(data)
        runner = self._runner(request.via)
        with refusals():
            claimed = await runner.claim_answered(self.run_id)
        if claimed is None:
            return None
        return self._continue_claimed(runner, claimed, request)

    @claim.validator
    def _check_claim(self, data: dict[str, Any]) -> None:
        self._refuse(require_run)

    @workflow.update(name="claim_retry")
    async def claim_retry(self, data: dict[str, Any]) -> dict[str, Any]:
        """Claim a ``failed_resumable`` run and retry it here in the background (its client
        waits with ``settle``)."""
        request = LegRequest.model_validate(data)
        runner = self._runner(request.via)
        with refusals():
            claimed = await runner.claim_retry(self.run_id)
        return self._continue_claimed(runner, claimed, request)

    @claim_retry.validator
    def _check_claim_retry(self, data: dict[str, Any]) -> None:
        self._refuse(check_retry)

    @workflow.update(name="retry")
    async def retry(self, data: dict[str, Any]) -> dict[str, Any]:
        request = LegRequest.model_validate(data)
        return await self._leg(
            request, lambda runner: runner.retry(self.run_id, surface=surface_of(request))
        )

    @retry.validator
    def _check_retry(self, data: dict[str, Any]) -> None:
        self._refuse(check_retry)

    @workflow.update(name="cancel")
    async def cancel(self, data: dict[str, Any]) -> dict[str, Any]:
        request = CancelRequest.model_validate(data)
        return await self._leg(
            request, lambda runner: runner.cancel(self.run_id, reason=request.reason)
        )

    @cancel.validator
    def _check_cancel(self, data: dict[str, Any]) -> None:
        self._refuse(check_cancel)

    @workflow.update(name="append_events")
    async def append_events(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        request = EventsRequest.model_validate(data)
        with refusals():
            appended = await self._store.append_events(self.run_id, request.events)
        return [event.model_dump(mode="json") for event in appended]

    @append_events.validator
    def _check_append(self, data: dict[str, Any]) -> None:
        with refusals():
            require_run(self.state, self.run_id)
            EventsRequest.model_validate(data)


def _who(name: str | None, groups: list[str]) -> str | Identity | None:
    """Who answers, with the groups they count in (as the validator checked them): the
    runner in the workflow checks the approvers again, the escalated ones too."""
    return Identity(name, frozenset(groups)) if name is not None and groups else name
