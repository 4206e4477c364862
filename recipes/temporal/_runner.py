"""The runner of a Temporal engine: the :class:`~recipes.runs.Runner` API, each call an update.

:class:`TemporalRunner` is what :func:`recipes.runs.runner_for` gives for a
:class:`~recipes.temporal.TemporalStore`, so the command line and the hosts drive Temporal runs
with the calls they make on the other engines. A start is a new workflow; an answer, resume,
retry or cancel is the same runner call made inside the run's workflow (:mod:`._workflow`);
its refusals come back as the same typed errors. A leg runs on a worker: the call returns once
it has ended, and the host's live sink then gets the leg's AG-UI events, rebuilt from its
``leg_ended`` record as for any run. There is no sweep to run (``expire_due``: the runs' timers
settle what expires) and nothing to recover (``recover``: a lost worker's work is taken over by
another).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from interactions import ConflictError, UsageError
from interactions.async_questions import open_for_pause
from interactions.store import RunRecord, RunStatus, utc_now
from recipes.models import Model
from recipes.runs import (
    LEG_ENDED,
    AnswerResult,
    Claim,
    ExpiryPolicy,
    Runner,
    RunResult,
    Surface,
    leg_agui_events,
    new_run_id,
)
from recipes.runs._recipe_driver import durable_model, durable_ref
from recipes.session import DEFAULT_MAX_TURNS
from recipes.temporal._calls import Closed
from recipes.temporal._closed import closed_answer, closed_cancel, closed_resume, closed_retry
from recipes.temporal._errors import typed_error
from recipes.temporal._wire import (
    RUN_FLAGS,
    AnswerRequest,
    CancelRequest,
    LegRequest,
    ResumeRequest,
    Settled,
    SettleRequest,
    Snapshot,
    StartRequest,
    oversized,
)
from recipes.temporal._workflow import WORKFLOW

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

    from recipes.temporal._store import TemporalStore

__all__ = ["TemporalRunner"]

logger = logging.getLogger("recipes.temporal")

_NO_SURFACE = Surface()


class TemporalRunner(Runner):
    """Runs on a Temporal engine (see the module docstring). Options as :class:`Runner`'s;
    ``env`` gives the runs their ask flags (the workers' environment the rest); a ``model``
    object, ``tool_timeout`` and ``max_turns`` belong to the workers (``UsageError``)."""

    strandable = False

    def __init__(
        self,
        store: TemporalStore,
        *,
        env: Mapping[str, str] | None = None,
        host: str = "api",
        model: Model | None = None,
        cwd: str | Path | None = None,
        tool_timeout: float | None = None,
        mode: str = "print",
        max_turns: int | None = DEFAULT_MAX_TURNS,
    ) -> None:
        if max_turns != DEFAULT_MAX_TURNS:
            raise UsageError(
                "on the Temporal engine the workers run the agent loop, with its default bound "
                f"of {DEFAULT_MAX_TURNS} model calls a leg; max_turns cannot be set here"
            )
        if model is not None:
            raise UsageError(
                "on the Temporal engine the workers call the model: name it when you start a "
                "run (model='provider:name'), not as an object"
            )
        if tool_timeout is not None:
            raise UsageError("on the Temporal engine tool calls are bounded by the workers "
                             "(pi-recipes worker --tool-timeout)")  # fmt: skip
        super().__init__(store, env=env, host=host, cwd=cwd, mode=mode)
        self.engine = store

    # ---------------------------------------------------------------- start

    async def start(
        self,
        recipe_ref: str,
        input: str,
        *,
        agent: str | None = None,
        model: Model | str | None = None,
        thread_id: str | None = None,
        run_id: str | None = None,
        expiry_policy: ExpiryPolicy = "decline",
        surface: Surface = _NO_SURFACE,
    ) -> RunResult:
        """Start a run as a workflow on the engine's task queue; return once its first leg
        has ended (refusals as :meth:`Runner.start`'s, found by a worker)."""
        if model is not None and not isinstance(model, str):
            raise UsageError("on the Temporal engine a run's model is a name ('provider:name')")
        chosen = durable_model(model, self.cwd)
        request = StartRequest(
            run_id=run_id or new_run_id(),
            thread_id=thread_id or f"thread-{uuid.uuid4().hex[:16]}",
            ref=durable_ref(recipe_ref, self.cwd),
            input=input,
            agent=agent,
            model=chosen if isinstance(chosen, str) else None,
            expiry_policy=expiry_policy,
            flags={name: self.env[name] for name in RUN_FLAGS if name in self.env},
            via=self.host,
            mode=surface.mode or self.mode,
            agui_run_id=surface.agui_run_id,
        )
        start = request.model_dump(mode="json")
        converter = self.engine.client.data_converter.payload_converter
        too_big = oversized(converter, start, "the run's input")
        if too_big:  # Temporal would refuse it with a bare "Blob data size exceeds limit"
            raise UsageError(f"{too_big}; pass less (a file path its tools read, say)")
        try:
            await self.engine.client.start_workflow(
                WORKFLOW,
                start,
                id=request.run_id,
                task_queue=self.engine.address.task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            )
        except WorkflowAlreadyStartedError:
            raise ConflictError(
                f"a run with id {request.run_id!r} already exists; choose another id",
                run_id=request.run_id,
                reason="duplicate_run",
            ) from None
        return await self._settle(request.run_id, 0, 0, surface)

    # ---------------------------------------------------------------- answers and legs

    async def resume(
        self,
        run_id: str,
        entries: Sequence[ResumeEntry],
        *,
        answered_by: str | None = None,
        surface: Surface = _NO_SURFACE,
    ) -> RunResult:
        request = ResumeRequest(
            entries=[e.model_dump(mode="json", by_alias=True) for e in entries],
            answered_by=answered_by,
            **self._leg(surface),
        )
        seq = await self._seq(run_id, surface)
        try:
            data = await self.engine.call(run_id, "resume", request.model_dump(mode="json"))
        except Closed:
            closed_resume(await self.engine.snapshot(run_id), request, utc_now())
            return await self.status(run_id)
        return await self._told(run_id, seq, RunResult.model_validate(data), surface)

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any = None,
        *,
        status: str = "resolved",
        answered_by: str | None = None,
        resume: bool = False,
        claim: bool = False,
        before_claim: Callable[[], object] | None = None,
        surface: Surface = _NO_SURFACE,
    ) -> AnswerResult:
        """As :meth:`Runner.answer`; the run's workflow decides and writes. A claim is made
        there and continued there (:meth:`proceed` waits for that leg); ``before_claim`` is
        called before the update is sent, since the decision is made in the workflow."""
        try:
            request = AnswerRequest.model_validate(
                {
                    "interaction_id": interaction_id,
                    "status": status,
                    "payload": payload,
                    "answered_by": answered_by,
                    "resume": resume,
                    "claim": claim and not resume,
                    **self._leg(surface),
                }
            )
        except ValueError as exc:
            raise UsageError(f"not an answer: {exc}") from None
        seq = await self._seq(run_id, surface) if resume else 0
        if request.claim and before_claim is not None:
            before_claim()
        try:
            data = await self.engine.call(run_id, "answer", request.model_dump(mode="json"))
        except Closed:
            return closed_answer(await self.engine.snapshot(run_id), request)
        claimed = data.pop("claimed", None)
        done = AnswerResult.model_validate(data)
        if claimed is not None:
            done = done.model_copy(update={"claim": Claim(RunRecord.model_validate(claimed))})
        if done.run is not None:
            await self._told(run_id, seq, done.run, surface)
        return done

    async def resume_answered(self, run_id: str, *, surface: Surface = _NO_SURFACE) -> RunResult:
        return await self._leg_call(run_id, "resume_answered", surface)

    async def claim_answered(self, run_id: str, *, before: Any = None) -> Claim | None:
        """Claim a paused, fully answered run: its workflow continues it at once, and
        :meth:`proceed` waits for that leg. ``None`` when it is not ready or was claimed."""
        if before is not None:
            before()
        try:
            data = await self.engine.call(run_id, "claim", LegRequest(via=self.host).model_dump())
        except Closed:
            return None
        return None if data is None else Claim(RunRecord.model_validate(data))

    async def proceed(self, claim: Claim, *, surface: Surface = _NO_SURFACE) -> RunResult:
        """Wait for the leg :meth:`claim_answered` started; return where the run stands."""
        run = claim.run
        seq = len((await self.engine.snapshot(run.id)).events) if surface.on_event else 0
        return await self._settle(run.id, run.version, seq, surface)

    async def release(self, claim: Claim) -> None:
        """Nothing to give back: the run's workflow continues what it claimed by itself."""

    async def retry(self, run_id: str, *, surface: Surface = _NO_SURFACE) -> RunResult:
        return await self._leg_call(run_id, "retry", surface)

    async def recover(self, *, older_than: float, now: datetime | None = None) -> list[RunResult]:
        """Nothing to recover: a lost worker's runs are continued by another worker."""
        if not 0 <= older_than < 10**9:
            raise UsageError(f"older_than must be a number of seconds >= 0, got {older_than!r}")
        return []

    async def cancel(self, run_id: str, *, reason: str = "cancelled") -> RunResult:
        request = CancelRequest(reason=reason, via=self.host).model_dump(mode="json")
        try:
            data = await self.engine.call(run_id, "cancel", request)
        except Closed:
            closed_cancel(await self.engine.snapshot(run_id))
            raise AssertionError("an ended run cannot be cancelled") from None
        return RunResult.model_validate(data)

    async def expire_due(
        self, *, now: datetime | None = None, resume: bool = True
    ) -> list[RunResult]:
        """Nothing to sweep: each run's own timer settles what expires, at its time."""
        return []

    async def status(self, run_id: str) -> RunResult:
        return self.result_of(await self.engine.snapshot(run_id))

    def result_of(self, snapshot: Snapshot) -> RunResult:
        """Where a run read back from its workflow stands."""
        run = snapshot.run
        assert run is not None
        paused = run.status is RunStatus.PAUSED_WAITING_HUMAN
        view = self.view(run)
        return RunResult(
            run_id=run.id,
            thread_id=run.thread_id,
            kind=run.kind,
            status=run.status,
            interrupts=[r.interrupt for r in open_for_pause(snapshot.interactions)]
            if paused
            else [],
            text=view.text,
            error=run.error,
            warning=view.warning,
            agui_run_id=view.agui_run_id,
        )

    # ---------------------------------------------------------------------------------------

    def _leg(self, surface: Surface) -> dict[str, Any]:
        return {
            "via": self.host,
            "agui_run_id": surface.agui_run_id,
            "mode": surface.mode or self.mode,
        }

    async def _leg_call(self, run_id: str, name: str, surface: Surface) -> RunResult:
        seq = await self._seq(run_id, surface)
        request = LegRequest(**self._leg(surface)).model_dump(mode="json")
        try:
            data = await self.engine.call(run_id, name, request)
        except Closed:
            snapshot = await self.engine.snapshot(run_id)
            if name == "retry":
                closed_retry(snapshot)
            return self.result_of(snapshot)
        return await self._told(run_id, seq, RunResult.model_validate(data), surface)

    async def _settle(self, run_id: str, version: int, seq: int, surface: Surface) -> RunResult:
        request = SettleRequest(after_version=version).model_dump(mode="json")
        try:
            settled = Settled.model_validate(await self.engine.call(run_id, "settle", request))
        except Closed:
            from recipes.temporal._calls import snapshot

            found = await snapshot(
                self.engine.client, self.engine.address, run_id, 0, self.engine.query_timeout
            )
            if found.refused is not None:
                raise typed_error(found.refused) from None
            settled = Settled(result=self.result_of(found))
        assert settled.result is not None
        await self._told(run_id, seq, settled.result, surface)
        if settled.error is not None:
            raise typed_error(settled.error)
        return settled.result

    async def _seq(self, run_id: str, surface: Surface) -> int:
        """The run's last event number, when the leg's events are to be told."""
        if surface.on_event is None:
            return 0
        return len((await self.engine.snapshot(run_id)).events)

    async def _told(self, run_id: str, seq: int, result: RunResult, surface: Surface) -> RunResult:
        """Give the host's live sink the AG-UI events of the legs that ended after ``seq``."""
        if surface.on_event is None:
            return result
        for event in await self.engine.list_events(run_id, seq):
            if event.type != LEG_ENDED:
                continue
            for shown in await leg_agui_events(self.engine, event):
                try:
                    surface.on_event(shown)
                except Exception:
                    logger.exception("a live event sink failed on %s", shown.type)
        return result
