"""The runner of a Temporal engine: :class:`~recipes.runs.Runs`, each call an update or a query.

:class:`TemporalRunner` is what :func:`recipes.runs.runner_for` gives for a
:class:`~recipes.temporal.TemporalStore`, so the command line and the hosts drive Temporal runs
with the calls they make on the other engines. It implements the protocol itself and inherits
from no other engine's runner: it never writes to a store. A start is a new workflow; an
answer, resume, claim, retry or cancel is the same :class:`~recipes.runs.Runner` call made
inside the run's workflow (:mod:`._workflow`), whose validators refuse with the runner's own
rules (:mod:`._checks`): the same typed errors. A claim is continued by the workflow itself;
:meth:`TemporalRunner.proceed` waits for that leg (:mod:`._legs`). The sweeps have nothing to do
here: each run's timers settle what expires, Temporal retries a failed model call by its retry
policy (no run on this engine carries an ``auto_resume`` schedule), and a lost worker's work is
taken over by another.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from interactions import UsageError
from interactions.people import Identity, who
from interactions.store import InteractionRecord, RunRecord, Store, utc_now
from recipes.models import Model
from recipes.runs import AnswerResult, Claim, ExpiryPolicy, RunResult, Runs, RunView, Surface
from recipes.session import DEFAULT_MAX_TURNS
from recipes.temporal._calls import Closed
from recipes.temporal._closed import closed_answer, closed_cancel, closed_resume, closed_retry
from recipes.temporal._legs import result_of, seq_of, settle, told, view_of
from recipes.temporal._start import start_run
from recipes.temporal._wire import AnswerRequest, CancelRequest, LegRequest, ResumeRequest

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

    from recipes.temporal._store import TemporalStore

__all__ = ["TemporalRunner"]

_NO_SURFACE = Surface()


class TemporalRunner:
    """The runs of a Temporal engine (see the module docstring), with :class:`Runner`'s
    options: ``env`` gives the runs their ask flags (the workers' environment the rest),
    ``host`` names this process in the audit trail, ``cwd`` is where relative recipe paths
    resolve, ``mode`` is how its agents run. A ``model`` object, ``tool_timeout`` and
    ``max_turns`` belong to the workers: ``UsageError``. Each method keeps the contract of
    :class:`~recipes.runs.Runner`'s, with the differences its docstring names."""

    strandable = False
    """A lost worker's runs are continued by another worker: none is left ``running``."""

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
        self.store: Store = store
        self.engine = store
        self.env = dict(os.environ if env is None else env)
        self.host = host
        self.cwd = Path.cwd() if cwd is None else Path(cwd)
        self.mode = mode

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
        has ended (refusals as :meth:`Runner.start`'s, found by a worker; a ``model`` is a
        name; a ``run_id`` in use is ``ConflictError``, reason ``duplicate_run``)."""
        if model is not None and not isinstance(model, str):
            raise UsageError("on the Temporal engine a run's model is a name ('provider:name')")
        started = await start_run(
            self.engine, recipe_ref, input, agent=agent, model=model, thread_id=thread_id,
            run_id=run_id, expiry_policy=expiry_policy, cwd=self.cwd,
            flags=self.env, **self._leg(surface),
        )  # fmt: skip
        return await settle(self.engine, started, 0, 0, surface)

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any = None,
        *,
        status: str = "resolved",
        answered_by: str | Identity | None = None,
        resume: bool = False,
        claim: bool = False,
        before_claim: Callable[[], object] | None = None,
        surface: Surface = _NO_SURFACE,
    ) -> AnswerResult:
        """As :meth:`Runner.answer`; the run's workflow decides and writes. A claim is made
        there and continued there (:meth:`proceed` waits for that leg); ``before_claim`` is
        called before the update is sent (whether or not this answer turns out the last),
        since the decision is made in the workflow."""
        try:
            request = AnswerRequest.model_validate(
                {
                    "interaction_id": interaction_id,
                    "status": status,
                    "payload": payload,
                    "answered_by": who(answered_by)[0],
                    "groups": sorted(who(answered_by)[1]),
                    "resume": resume,
                    "claim": claim and not resume,
                    **self._leg(surface),
                }
            )
        except ValueError as exc:
            raise UsageError(f"not an answer: {exc}") from None
        seq = await seq_of(self.engine, run_id, surface) if resume else 0
        if request.claim and before_claim is not None:
            before_claim()
        try:
            data = await self.engine.call(run_id, "answer", request.model_dump(mode="json"))
        except Closed:
            return closed_answer(await self.engine.snapshot(run_id), request)
        claimed = data.pop("claimed", None)
        done = AnswerResult.model_validate(data)
        if claimed is not None:
            done = done.model_copy(update={"claim": _claim(claimed)})
        if done.run is not None:
            await told(self.engine, run_id, seq, done.run, surface)
        return done

    async def resume(
        self,
        run_id: str,
        entries: Sequence[ResumeEntry],
        *,
        answered_by: str | Identity | None = None,
        surface: Surface = _NO_SURFACE,
    ) -> RunResult:
        """As :meth:`Runner.resume`, in the run's workflow."""
        request = ResumeRequest(
            entries=[e.model_dump(mode="json", by_alias=True) for e in entries],
            answered_by=who(answered_by)[0],
            groups=sorted(who(answered_by)[1]),
            **self._leg(surface),
        )
        seq = await seq_of(self.engine, run_id, surface)
        try:
            data = await self.engine.call(run_id, "resume", request.model_dump(mode="json"))
        except Closed:
            closed_resume(await self.engine.snapshot(run_id), request, utc_now())
            return await self.status(run_id)
        return await told(self.engine, run_id, seq, RunResult.model_validate(data), surface)

    async def resume_answered(self, run_id: str, *, surface: Surface = _NO_SURFACE) -> RunResult:
        """As :meth:`Runner.resume_answered`, in the run's workflow."""
        return await self._leg_call(run_id, "resume_answered", surface)

    async def claim_answered(
        self, run_id: str, *, before: Callable[[], object] | None = None
    ) -> Claim | None:
        """Claim a paused, fully answered run: its workflow continues it at once, and
        :meth:`proceed` waits for that leg. ``None`` when it is not ready, was claimed, or has
        ended. ``before`` is called before the update is sent."""
        if before is not None:
            before()
        try:
            data = await self.engine.call(run_id, "claim", LegRequest(via=self.host).model_dump())
        except Closed:
            return None
        return None if data is None else _claim(data)

    async def claim_retry(self, run_id: str) -> Claim:
        """Claim a ``failed_resumable`` run to retry it: its workflow retries it at once, and
        :meth:`proceed` waits for that leg. Raises as :meth:`Runner.claim_retry` does
        (``ConflictError``, reason ``not_resumable``, for a run in any other status)."""
        try:
            data = await self.engine.call(
                run_id, "claim_retry", LegRequest(via=self.host).model_dump()
            )
        except Closed:
            closed_retry(await self.engine.snapshot(run_id))
            raise AssertionError("an ended run cannot be retried") from None
        return _claim(data, retry=True)

    async def proceed(self, claim: Claim, *, surface: Surface = _NO_SURFACE) -> RunResult:
        """Wait for the leg the run's workflow started when it was claimed (an answer's
        claim, :meth:`claim_answered`, :meth:`claim_retry`); return where the run stands, or
        raise that leg's error."""
        run = claim.run
        since = claim.prepared
        seq = since.seq if isinstance(since, _Since) else await seq_of(self.engine, run.id, surface)
        return await settle(self.engine, run.id, run.version, seq, surface)

    async def release(self, claim: Claim) -> None:
        """Nothing to give back: the run's workflow continues what it claimed by itself."""

    async def retry(self, run_id: str, *, surface: Surface = _NO_SURFACE) -> RunResult:
        """As :meth:`Runner.retry`, in the run's workflow."""
        return await self._leg_call(run_id, "retry", surface)

    async def cancel(self, run_id: str, *, reason: str = "cancelled") -> RunResult:
        """As :meth:`Runner.cancel`, in the run's workflow: a running leg's activity is
        cancelled too."""
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
        """Nothing to sweep (``[]``): each run's own timer settles what expires, at its time,
        and its workflow continues it."""
        return []

    async def due_retries(self, *, now: datetime | None = None) -> list[RunRecord]:
        """Nothing is due (``[]``): Temporal retries a failed model call by the workers' retry
        policy (``MODEL_FAILURES``), and no run on this engine carries an ``auto_resume``
        schedule (only graph runs opt in, and they run on the other engines)."""
        return []

    async def recover(self, *, older_than: float, now: datetime | None = None) -> list[RunResult]:
        """Nothing to recover (``[]``): a lost worker's runs are continued by another worker.
        Raises ``UsageError`` for an ``older_than`` that is not a number of seconds."""
        if not 0 <= older_than < 10**9:
            raise UsageError(f"older_than must be a number of seconds >= 0, got {older_than!r}")
        return []

    async def status(self, run_id: str) -> RunResult:
        """The run as its workflow holds it (``UnknownRunError`` when there is none)."""
        return result_of(await self.engine.snapshot(run_id))

    async def interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        """One interaction of the run, as its workflow holds it (``UnknownRunError``,
        ``UnknownInteractionError``)."""
        return await self.engine.get_interaction(run_id, interaction_id)

    def view(self, run: RunRecord) -> RunView:
        """What the driver of ``run``'s kind shows of it, as :meth:`Runner.view`."""
        return view_of(run)

    def _leg(self, surface: Surface) -> dict[str, Any]:
        return {"via": self.host, "agui_run_id": surface.agui_run_id,
                "mode": surface.mode or self.mode}  # fmt: skip

    async def _leg_call(self, run_id: str, name: str, surface: Surface) -> RunResult:
        seq = await seq_of(self.engine, run_id, surface)
        request = LegRequest(**self._leg(surface)).model_dump(mode="json")
        try:
            data = await self.engine.call(run_id, name, request)
        except Closed:
            found = await self.engine.snapshot(run_id)
            if name == "retry":
                closed_retry(found)
            return result_of(found)
        return await told(self.engine, run_id, seq, RunResult.model_validate(data), surface)


if TYPE_CHECKING:
    _IMPLEMENTS: type[Runs] = TemporalRunner  # checked by mypy: every method of the protocol


@dataclass(frozen=True)
class _Since:
    """What :meth:`TemporalRunner.proceed` needs of a claim: the seq of the run's last event
    when its workflow claimed it (the leg's events, for the live sink, come after it: a leg
    that ends before the client looks is not missed)."""

    seq: int


def _claim(data: dict[str, Any], *, retry: bool = False) -> Claim:
    """A claim as the workflow's update returned it."""
    run = RunRecord.model_validate(data["run"])
    return Claim(run, retry=retry, prepared=_Since(int(data["seq"])))
