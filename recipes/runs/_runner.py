"""The durable runner: start a run, pause it on interrupts, resume it in any process.

A run is written down, never kept waiting in memory. When a tool's ask resolves
``awaiting_user``, the session pauses; the runner writes the checkpoint, one interaction per
open interrupt and the status ``paused_waiting_human`` in one transaction. A resume (in this
process or another, now or next week) validates the answers against what was stored, records
them with a compare-and-set, rebuilds the session from the checkpoint and continues it: the
paused calls get their answers' outcome texts (their tools do not run again), the calls of the
batch that had not run yet run next, and the loop goes on.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ag_ui.core import ResumeEntry

from interactions import (
    INTERRUPT_RESUME_ENV,
    AskUserInterrupt,
    ConflictError,
    InvalidPayloadError,
    UsageError,
    interrupt_id_for,
    plan_resume,
)
from interactions._resume import validate_answer
from interactions.store import (
    InteractionAnswer,
    NewRun,
    RunRecord,
    RunStatus,
    Store,
    utc_now,
)
from recipes._loader import load_recipe
from recipes._recipe import Recipe
from recipes.models._base import Model
from recipes.runs._agui import AguiTranslator, event_record
from recipes.runs._checkpoint import Checkpoint, ExpiryPolicy
from recipes.runs._interrupts import answered_result
from recipes.runs._leg import drive_leg, last_text
from recipes.runs._results import AnswerResult, RunResult
from recipes.session import AgentSession, create_agent_session

__all__ = ["AnswerResult", "RunResult", "Runner"]


def _durable_ref(ref: str) -> str:
    """A recipe reference that another process, in another directory, can load."""
    path, sep, func = ref.partition(":")
    if path.endswith(".py") and Path(path).is_file():
        return str(Path(path).resolve()) + sep + func
    return ref


class Runner:
    """Runs recipes durably against ``store``.

    ``env`` is the environment the runs' tools see (default ``os.environ``); the interrupt
    channel is switched on in it for every run, without touching ``os.environ``. ``host``
    names this process in the audit trail (``cli``, ``web``, ``slack``...). ``model`` replaces
    the model a run is stored with, for every run (tests pass a scripted model here).
    ``tool_timeout`` bounds each tool call (seconds), as in ``create_agent_session``.
    """

    def __init__(
        self,
        store: Store,
        *,
        env: Mapping[str, str] | None = None,
        host: str = "api",
        model: Model | None = None,
        cwd: str | Path | None = None,
        tool_timeout: float | None = None,
    ) -> None:
        self.store = store
        self.env = dict(os.environ if env is None else env)
        self.env[INTERRUPT_RESUME_ENV] = "1"
        self.host = host
        self._model = model
        self._cwd = cwd
        self._tool_timeout = tool_timeout
        self._recipes: dict[str, Recipe] = {}

    # ---------------------------------------------------------------- recipe and model

    def _recipe(self, ref: str) -> Recipe:
        if ref not in self._recipes:
            self._recipes[ref] = load_recipe(ref)
        return self._recipes[ref]

    def _pick_model(self, recipe: Recipe, agent: str | None, model: Model | str | None) -> Model:
        chosen = model or self._model or recipe.agent(agent).model or recipe.demo_model
        if chosen is None:
            raise UsageError(
                f"recipe {recipe.name!r} names no model for agent {recipe.agent(agent).name!r}: "
                "pass model= ('provider:name' or a Model)"
            )
        if isinstance(chosen, str):
            from recipes.models._registry import model_from_name

            return model_from_name(chosen, env=self.env)
        return chosen

    def _model_by_name(self, recipe: Recipe, run: RunRecord) -> Model:
        if self._model is not None:
            return self._model
        for candidate in (recipe.agent(run.agent).model, recipe.demo_model):
            # The recipe's own model object (a scripted demo model, say) has no registry name.
            if isinstance(candidate, Model) and candidate.name == run.model_name:
                return candidate
        from recipes.models._registry import model_from_name

        return model_from_name(run.model_name, env=self.env)

    def _session(
        self, recipe: Recipe, run: RunRecord, model: Model, **restore: Any
    ) -> AgentSession:
        return create_agent_session(
            recipe,
            agent=run.agent,
            model=model,
            mode="print",
            env=self.env,
            cwd=self._cwd,
            run_id=run.id,
            tool_timeout=self._tool_timeout,
            **restore,
        )

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
    ) -> RunResult:
        """Start a run of ``recipe_ref`` on ``input`` and drive it until it finishes or pauses.

        Raises ``UsageError`` for a recipe that does not load, an unknown agent or no model.
        """
        if not input.strip():
            raise UsageError("the run's input must not be empty")
        ref = _durable_ref(recipe_ref)
        recipe = self._recipe(ref)
        chosen = self._pick_model(recipe, agent, model)
        agent_name = recipe.agent(agent).name
        checkpoint = Checkpoint(input=input, expiry_policy=expiry_policy)
        run = await self.store.create_run(
            NewRun(
                id=run_id or f"run-{uuid.uuid4().hex[:16]}",
                thread_id=thread_id or f"thread-{uuid.uuid4().hex[:16]}",
                recipe_ref=ref,
                agent=agent_name,
                model_name=chosen.name,
                checkpoint=checkpoint.dump(),
            )
        )
        session = self._session(recipe, run, chosen)
        return await drive_leg(self.store, run, session, checkpoint, session.prompt(input))

    # ---------------------------------------------------------------- the one place a leg ends

    # ---------------------------------------------------------------- resume and answer

    async def resume(
        self,
        run_id: str,
        entries: Sequence[ResumeEntry],
        *,
        answered_by: str | None = None,
        model: Model | None = None,
    ) -> RunResult:
        """Answer every open interrupt of a paused run and continue it.

        Replaying an identical resume returns the run as it stands, changing nothing. Raises
        ``UnknownRunError``, ``UnknownInteractionError``, ``ExpiredError``,
        ``InvalidPayloadError`` (schema, or open interrupts left out) and ``ConflictError`` (a
        different answer is stored, or the run is not paused); a refused resume changes nothing.
        """
        run = await self.store.get_run(run_id)
        interactions = await self.store.list_interactions(run_id)
        plan = plan_resume(
            interactions, entries, now=utc_now(), answered_by=answered_by, via=self.host
        )
        if plan.replay:
            return await self.status(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            raise ConflictError(
                f"run {run_id} is {run.status.value}, not paused; nothing to resume",
                run_id=run_id,
                reason="not_paused",
            )
        try:
            run = await self.store.update_run(
                run_id,
                expected_version=run.version,
                status=RunStatus.RUNNING,
                answers=plan.new_answers,
            )
        except ConflictError:
            # Another resume won the race. An identical one is a replay; a different one is not.
            again = plan_resume(await self.store.list_interactions(run_id), entries, now=utc_now())
            if again.replay:
                return await self.status(run_id)
            raise
        return await self._continue(run, model=model)

    async def _continue(self, run: RunRecord, *, model: Model | None = None) -> RunResult:
        checkpoint = Checkpoint.model_validate(run.checkpoint)
        paused = checkpoint.paused
        assert paused is not None, f"run {run.id} was paused without a paused batch"
        answered = {
            r.id: r for r in await self.store.list_interactions(run.id) if r.answer is not None
        }
        results = {
            m.tool_call_id: answered_result(m, answered[interrupt_id_for(m.tool_call_id)])
            for m in paused.awaiting
        }
        recipe = self._recipe(run.recipe_ref)
        chosen = model or self._model_by_name(recipe, run)
        session = self._session(recipe, run, chosen, messages=checkpoint.messages, paused=paused)
        return await drive_leg(self.store, run, session, checkpoint, session.resume(results))

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any = None,
        *,
        status: str = "resolved",
        answered_by: str | None = None,
        resume: bool = False,
    ) -> AnswerResult:
        """Answer one interaction (compare-and-set: the first answer wins).

        An identical second answer is a replay (``created=False``); a different one raises
        ``ConflictError`` and never overwrites. With ``resume=True``, answering the last open
        interaction of a paused run continues the run at once (``AnswerResult.run``).
        """
        record = await self.store.get_interaction(run_id, interaction_id)
        answer = InteractionAnswer.model_validate(
            {"status": status, "payload": payload, "answered_by": answered_by, "via": self.host}
        )
        if record.answer is None:
            validate_answer(record, answer, now=utc_now())
        stored, created = await self.store.answer_interaction(run_id, interaction_id, answer)
        result = None
        if resume:
            run = await self.store.get_run(run_id)
            open_ = [
                r for r in await self.store.list_interactions(run_id, pending=True) if r.kind == ""
            ]
            if run.status is RunStatus.PAUSED_WAITING_HUMAN and not open_:
                result = await self._resume_answered(run)
        return AnswerResult(interaction=stored, created=created, run=result)

    async def _resume_answered(self, run: RunRecord) -> RunResult:
        try:
            run = await self.store.update_run(
                run.id, expected_version=run.version, status=RunStatus.RUNNING
            )
        except ConflictError:
            return await self.status(run.id)  # someone else resumed it
        return await self._continue(run)

    async def resume_answered(self, run_id: str) -> RunResult:
        """Continue a paused run whose interactions were all answered one by one.

        Raises ``InvalidPayloadError`` (reason ``incomplete_resume``) while some are open; a
        run that is not paused is returned as it stands.
        """
        run = await self.store.get_run(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            return await self.status(run_id)
        open_ = [
            r.id for r in await self.store.list_interactions(run_id, pending=True) if r.kind == ""
        ]
        if open_:
            raise InvalidPayloadError(
                f"run {run_id} still waits for answers to {open_}",
                run_id=run_id,
                reason="incomplete_resume",
            )
        return await self._resume_answered(run)

    async def retry(self, run_id: str, *, model: Model | None = None) -> RunResult:
        """Continue a ``failed_resumable`` run from its last checkpoint.

        Such a run stopped on a passing model failure (a usage window, an outage, retries used
        up) or was found stranded by :meth:`recover`. The retry calls the model again on the
        stored transcript, finishes a resume that was cut short, or starts over from the
        input when nothing was checkpointed yet (tools of the lost leg may run again).
        Raises ``ConflictError`` (reason ``not_resumable``) for a run in any other status, and
        the model's error again if it still fails (the run stays ``failed_resumable``).
        """
        run = await self.store.get_run(run_id)
        if run.status is not RunStatus.FAILED_RESUMABLE:
            raise ConflictError(
                f"run {run_id} is {run.status.value}; only a failed_resumable run can be retried",
                run_id=run_id,
                reason="not_resumable",
            )
        run = await self.store.update_run(
            run_id, expected_version=run.version, status=RunStatus.RUNNING
        )
        checkpoint = Checkpoint.model_validate(run.checkpoint)
        if checkpoint.paused is not None:  # a resume whose process died: its answers are stored
            return await self._continue(run, model=model)
        recipe = self._recipe(run.recipe_ref)
        chosen = model or self._model_by_name(recipe, run)
        session = self._session(recipe, run, chosen, messages=checkpoint.messages)
        leg = session.retry() if checkpoint.messages else session.prompt(checkpoint.input)
        return await drive_leg(self.store, run, session, checkpoint, leg)

    async def recover(self, *, older_than: float, now: datetime | None = None) -> list[RunResult]:
        """Mark runs stranded in ``running`` as ``failed_resumable``, so :meth:`retry` can go on.

        A run is stranded when the process driving it died mid-leg; nothing else moves it. A
        run counts as stranded when it was last written more than ``older_than`` seconds ago:
        choose a bound longer than any leg of yours. A leg that was only slow loses: its own
        final write then fails with ``ConflictError``. Returns the runs it marked.
        """
        if not older_than >= 0:
            raise UsageError(f"older_than must be >= 0 seconds, got {older_than!r}")
        cutoff = (now or utc_now()) - timedelta(seconds=older_than)
        marked: list[RunResult] = []
        for run in await self.store.list_runs(status=RunStatus.RUNNING, limit=1000):
            if run.updated_at > cutoff:
                continue
            try:
                await self.store.update_run(
                    run.id,
                    expected_version=run.version,
                    status=RunStatus.FAILED_RESUMABLE,
                    error=f"stranded: no progress since {run.updated_at.isoformat()}",
                )
            except ConflictError:
                continue  # it moved meanwhile: not stranded
            marked.append(await self.status(run.id))
        return marked

    # ---------------------------------------------------------------- cancel, expire, status

    async def cancel(self, run_id: str, *, reason: str = "cancelled") -> RunResult:
        """Cancel a run that is not finished; its open interactions are closed as cancelled."""
        run = await self.store.get_run(run_id)
        open_ = await self.store.list_interactions(run_id, pending=True)
        translator = AguiTranslator(thread_id=run.thread_id, run_id=run.id)
        await self.store.update_run(
            run_id,
            expected_version=run.version,
            status=RunStatus.CANCELLED,
            error=reason,
            answers={
                r.id: InteractionAnswer(status="cancelled", answered_by="system", via=self.host)
                for r in open_
            },
            events=[event_record(translator.cancelled())],
        )
        return await self.status(run_id)

    async def expire_due(self, *, now: datetime | None = None) -> list[RunResult]:
        """Settle every paused run's interactions that passed ``expires_at``.

        Policy ``decline`` (the default) answers them as declined and, once nothing is open,
        continues the run; policy ``fail`` fails the run. Returns the runs it touched.
        """
        now = now or utc_now()
        touched: list[RunResult] = []
        for run in await self.store.list_runs(status=RunStatus.PAUSED_WAITING_HUMAN, limit=1000):
            due = [
                r
                for r in await self.store.list_interactions(run.id, pending=True)
                if r.kind == "" and r.expires_at <= now
            ]
            if not due:
                continue
            policy = Checkpoint.model_validate(run.checkpoint).expiry_policy
            expired = InteractionAnswer(status="cancelled", answered_by="system", via="expiry")
            if policy == "fail":
                open_ = await self.store.list_interactions(run.id, pending=True)
                await self.store.update_run(
                    run.id,
                    expected_version=run.version,
                    status=RunStatus.FAILED,
                    error=f"interaction {due[0].id} expired at {due[0].expires_at.isoformat()}",
                    answers={r.id: expired for r in open_},
                )
                touched.append(await self.status(run.id))
                continue
            for record in due:
                try:
                    await self.store.answer_interaction(
                        run.id, record.id, expired, now=record.expires_at
                    )
                except ConflictError:
                    continue  # answered meanwhile: the answer stands
            still_open = [
                r for r in await self.store.list_interactions(run.id, pending=True) if r.kind == ""
            ]
            if not still_open:
                touched.append(await self._resume_answered(await self.store.get_run(run.id)))
        return touched

    async def status(self, run_id: str) -> RunResult:
        """The run as stored: status, open interrupts, last text, error."""
        run = await self.store.get_run(run_id)
        checkpoint = Checkpoint.model_validate(run.checkpoint)
        interrupts = [
            AskUserInterrupt.model_validate(r.descriptor)
            for r in await self.store.list_interactions(run_id, pending=True)
            if r.kind == ""
        ]
        text = last_text(checkpoint.messages)
        return RunResult(
            run_id=run.id,
            thread_id=run.thread_id,
            status=run.status,
            interrupts=interrupts if run.status is RunStatus.PAUSED_WAITING_HUMAN else [],
            text=text,
            error=run.error,
        )
