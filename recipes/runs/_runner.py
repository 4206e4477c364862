"""The durable runner: start a run, pause it on interrupts, resume it in any process.

A run is written down, never kept waiting in memory. When a tool's ask resolves
``awaiting_user``, the session pauses; the leg writes the checkpoint, one interaction per open
interrupt and the status ``paused_waiting_human`` in one transaction. A resume (in this process
or another, now or next week) is checked against what was stored (:func:`plan_resume`), then
everything the continuation needs is checked (the run's driver), then the answers are recorded
with a compare-and-set together with the move to ``running``, and the run's driver continues it.

The runner works on runs of every kind; what continues a run after its answers is the driver
registered for its ``kind`` (:mod:`recipes.runs._drivers`). Recipe runs are built in.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from interactions import (
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    UnknownInteractionError,
    UsageError,
)
from interactions.async_questions import (
    ASYNC_KIND,
    AWAIT_KIND,
    MESSAGE_QUEUED,
    awaited_ids,
    open_for_pause,
    settle_awaits,
)
from interactions.resume import new_answer, plan_resume, same_as_stored, validate_answer
from interactions.store import (
    InteractionAnswer,
    InteractionRecord,
    RunRecord,
    RunStatus,
    Store,
    is_terminal,
    utc_now,
)
from recipes._loader import load_recipe
from recipes._recipe import Recipe
from recipes.models._base import Model
from recipes.models._secrets import Secrets
from recipes.runs._auto_retry import retry_schedule_of
from recipes.runs._checkpoint import ExpiryPolicy
from recipes.runs._drivers import RunDriver, RunView, driver_for, register_driver
from recipes.runs._leg import RUN_ENDED, record_failed_resumable
from recipes.runs._plan import describe_error, expiry_policy_of, plan_expiry
from recipes.runs._recipe_driver import RecipeDriver
from recipes.runs._results import NO_SURFACE, AnswerResult, RunResult, Surface
from recipes.session import DEFAULT_MAX_TURNS

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

__all__ = ["Runner"]

logger = logging.getLogger("recipes.runs")

_CANCEL_TRIES = 5
_PAGE = 500

RECIPE_DRIVER = RecipeDriver()
register_driver("recipe", RECIPE_DRIVER)


class Runner:
    """Runs recipes durably against ``store``.

    ``env`` is the environment the runs' tools see (default: a copy of ``os.environ``); the
    runner pauses runs on interrupts without any flag in it. ``host`` names this process in
    the audit trail (``cli``, ``web``, ``slack``...); ``mode`` is how its agents run, in its
    own words (default ``print``). ``model`` replaces the model a run is stored with, for
    every run (tests pass a scripted model here). ``cwd`` is where relative recipe paths
    resolve (default: the current directory). ``tool_timeout`` bounds each tool call
    (seconds) and ``max_turns`` the model calls of each leg, as in ``create_agent_session``.
    ``clock`` is "now" for deciding on answers and for the questions' lifetimes (a workflow
    engine gives its own, so that a replay decides as the first run did).
    """

    strandable = True
    """Whether a run can be left ``running`` by a process that died mid-leg (:meth:`recover`
    finds such runs); an engine that moves a lost worker's work elsewhere says ``False``."""

    def __init__(
        self,
        store: Store,
        *,
        env: Mapping[str, str] | None = None,
        host: str = "api",
        model: Model | None = None,
        cwd: str | Path | None = None,
        tool_timeout: float | None = None,
        mode: str = "print",
        max_turns: int | None = DEFAULT_MAX_TURNS,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self.clock = clock
        self.env = dict(os.environ if env is None else env)
        self.host = host
        self.model = model
        self.cwd = Path.cwd() if cwd is None else Path(cwd)
        self.tool_timeout = tool_timeout
        self.mode = mode
        self.max_turns = max_turns
        self._recipes: dict[str, Recipe] = {}

    def recipe(self, ref: str) -> Recipe:
        """The recipe ``ref`` names, loaded once per runner (``RecipeLoadError`` if it can't)."""
        if ref not in self._recipes:
            self._recipes[ref] = load_recipe(ref)
        return self._recipes[ref]

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
        surface: Surface = NO_SURFACE,
    ) -> RunResult:
        """Start a run of ``recipe_ref`` on ``input`` and drive it until it finishes or pauses.

        ``surface`` is what the host brings to this leg (a person's UI, a live event sink...).
        Raises ``UsageError`` for a recipe that does not load, an unknown agent, no model, or a
        malformed configuration — before anything is written.
        """
        return await RECIPE_DRIVER.start(
            self,
            recipe_ref,
            input,
            agent=agent,
            model=model,
            thread_id=thread_id,
            run_id=run_id,
            expiry_policy=expiry_policy,
            surface=surface,
        )

    # ---------------------------------------------------------------- resume and answer

    async def resume(
        self,
        run_id: str,
        entries: Sequence[ResumeEntry],
        *,
        answered_by: str | None = None,
        surface: Surface = NO_SURFACE,
    ) -> RunResult:
        """Answer every open interrupt of a paused run and continue it.

        Replaying an identical resume returns the run as it stands, changing nothing; when
        those answers were given one by one and the run still waits paused with nothing open,
        it is continued, as the resume asks (of two such resumes, one continues it). Raises
        ``UnknownRunError``, ``UnknownInteractionError``, ``ExpiredError``,
        ``InvalidPayloadError`` (off the interrupt's schema, or open interrupts left out),
        ``ConflictError`` (a different answer is stored, or the run is not paused) and
        ``UsageError`` (the run cannot be continued here: its recipe or model is missing); a
        refused resume changes nothing.
        """
        run = await self.store.get_run(run_id)
        interactions = await self.store.list_interactions(run_id)
        plan = plan_resume(
            interactions, entries, now=self.clock(), answered_by=answered_by, via=self.host
        )
        if plan.replay:
            pending = [r for r in interactions if r.answer is None]
            if run.status is RunStatus.PAUSED_WAITING_HUMAN and not open_for_pause(pending):
                return await self._resume_answered(run, surface)
            return await self.status(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            raise ConflictError(
                f"run {run_id} is {run.status.value}, not paused; nothing to resume",
                run_id=run_id,
                reason="not_paused",
            )
        settled = settle_awaits(interactions, plan.new_answers, via=self.host)
        driver = driver_for(run.kind)
        await driver.check(self, run)
        try:
            run = await self.store.update_run(
                run_id,
                expected_version=run.version,
                status=RunStatus.RUNNING,
                answers={**plan.new_answers, **settled},
                durable=False,  # the leg's end, written durably before this returns, follows
            )
        except ConflictError:
            # Another resume won the race. An identical one is a replay; a different one is not.
            again = plan_resume(
                await self.store.list_interactions(run_id), entries, now=self.clock()
            )
            if again.replay:
                return await self.status(run_id)
            raise
        return await self._driven(run, driver.proceed(self, run, surface))

    async def interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        """The run's interaction. Raises ``UnknownRunError`` for an unknown run (a mistyped run
        id is named as such), ``UnknownInteractionError`` for an unknown interaction."""
        try:
            return await self.store.get_interaction(run_id, interaction_id)
        except UnknownInteractionError:
            await self.store.get_run(run_id)  # raises when the run is what is unknown
            raise

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any = None,
        *,
        status: str = "resolved",
        answered_by: str | None = None,
        resume: bool = False,
        surface: Surface = NO_SURFACE,
    ) -> AnswerResult:
        """Answer one interaction (compare-and-set: the first answer wins).

        The payload is checked against the interrupt (an option's label records its value). An
        identical second answer is a replay (``created=False``); a different one raises
        ``ConflictError`` and never overwrites. ``still_open`` lists what the run still waits
        for. With ``resume=True``, answering the last open interaction of a paused run continues
        the run at once (``AnswerResult.run``, ``resumed``).

        An async question's answer is also queued for its agent (``queued``: it is delivered
        at the agent's next turn boundary while the run goes on); when it was the last answer
        an ``await`` pause waited for, ``resume=True`` continues the run. The ``await`` record
        itself is never answered directly: ``ConflictError`` (reason ``await``) names the
        questions to answer instead.
        """
        record, paused = await self._lookup(run_id, interaction_id, resume)
        if record.kind == AWAIT_KIND:
            raise ConflictError(
                f"{interaction_id} is the run's wait for its async questions; answer those "
                f"instead: {', '.join(awaited_ids(record))}",
                run_id=run_id,
                interaction_id=interaction_id,
                reason="await",
            )
        answer = new_answer(record, status, payload, answered_by=answered_by, via=self.host)
        if record.answer is None:
            _, answer = validate_answer(record, answer, now=self.clock())
            if paused is not None:
                done = await self._answer_and_resume(*paused, record, answer, surface)
                if done is not None:
                    return done
            elif record.kind == ASYNC_KIND:  # no agent of an ended run would ever read it
                run = await self.store.get_run(run_id)
                if is_terminal(run.status):
                    raise _ended_before(run, interaction_id)
        elif _closed_by_system(record.answer) and is_terminal(
            (ended := await self.store.get_run(run_id)).status
        ):  # a cancel or the run's end closed it: no one answered, nothing is replayed
            raise _ended_before(ended, interaction_id)
        elif same_as_stored(record, answer):
            answer = record.answer
        elif record.answer.status == "expired":  # settled by the expiry sweep: no one answered
            raise ExpiredError(
                f"interaction {interaction_id} expired at {record.expires_at.isoformat()} and "
                "was settled as expired; it can no longer be answered",
                run_id=run_id,
                interaction_id=interaction_id,
                reason="expired",
            )
        try:
            stored, created = await self.store.answer_interaction(run_id, interaction_id, answer)
        except ConflictError as exc:
            run = await self.store.get_run(run_id)
            closed = await self.store.get_interaction(run_id, interaction_id)
            closed_by_end = closed.answer is not None and closed.answer.via == RUN_ENDED.via
            if run.status is RunStatus.CANCELLED or closed_by_end:
                raise _ended_before(run, interaction_id) from exc
            raise
        queued = created and stored.kind == ASYNC_KIND and await self._queue(stored)
        still_open = await self._open_ids(run_id)
        result = None
        resumed = False
        if resume and not still_open:
            run = await self.store.get_run(run_id)
            if run.status is RunStatus.PAUSED_WAITING_HUMAN:
                claimed = await self._claim(run)
                if claimed is not None:
                    resumed = True
                    result = await self.proceed(claimed, surface=surface)
                else:
                    result = await self.status(run_id)
            elif stored.kind != ASYNC_KIND:  # a cancel, a resume or the expiry sweep was first
                result = await self.status(run_id)
        return AnswerResult(
            interaction=stored, created=created, run=result, still_open=still_open,
            queued=queued, resumed=resumed,
        )  # fmt: skip

    async def _queue(self, record: InteractionRecord) -> bool:
        """Queue an async answer for its agent (while the run has not ended): an event the
        agent's inbox reads at its next turn boundary. Returns whether it was queued."""
        run = await self.store.get_run(record.run_id)
        if is_terminal(run.status):
            return False
        data = {"interaction_id": record.id, "node_id": record.node_id}
        await self.store.append_events(record.run_id, [(MESSAGE_QUEUED, data)])
        return True

    async def _lookup(
        self, run_id: str, interaction_id: str, resume: bool
    ) -> tuple[InteractionRecord, tuple[RunRecord, list[InteractionRecord]] | None]:
        """The interaction; with ``resume``, also its run and all the run's interactions when
        the run is paused (what answering and resuming at once decides on), in two reads: the
        interaction is found among the run's. ``UnknownRunError`` names an unknown run,
        ``UnknownInteractionError`` an unknown interaction of a known one."""
        if resume:
            run = await self.store.get_run(run_id)
            if run.status is RunStatus.PAUSED_WAITING_HUMAN:
                records = await self.store.list_interactions(run_id)
                for record in records:
                    if record.id == interaction_id:
                        return record, (run, records)
        return await self.interaction(run_id, interaction_id), None

    async def _answer_and_resume(
        self,
        run: RunRecord,
        records: list[InteractionRecord],
        record: InteractionRecord,
        answer: InteractionAnswer,
        surface: Surface,
    ) -> AnswerResult | None:
        """The last open answer of a paused run (``run`` and its ``records``, read in that
        order) and its move to ``running``, in one transaction, then the run continued; ``None``
        when that is not the case (the caller answers alone). If the run cannot continue here,
        the answer is stored all the same, then the reason is raised."""
        waited_on = [r.id for r in open_for_pause(records)]
        if waited_on != [record.id]:
            return None  # others are open, or an async question no await waits on
        settled = settle_awaits(records, {record.id: answer}, via=self.host)
        driver = driver_for(run.kind)
        try:
            await driver.check(self, run)
        except UsageError:
            await self.store.answer_interaction(record.run_id, record.id, answer)  # kept
            raise
        try:
            run = await self.store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.RUNNING,
                answers={record.id: answer, **settled},
                durable=False,  # the leg's end, written durably before this returns, follows
            )
        except ConflictError:
            return None  # another writer moved first: answer the slow way, which sorts it out
        # Stored as given, stamped with the write's time (the store's contract). What the run's
        # interactions are now is known without reading them again: all were read at the
        # version the claim moved on from, and answers are never taken back.
        given = {record.id: answer, **settled}
        known = [
            r.model_copy(update={"answer": given[r.id], "answered_at": run.updated_at})
            if r.id in given
            else r
            for r in records
        ]
        (stored,) = [r for r in known if r.id == record.id]
        leg = (
            driver.proceed(self, run, surface, interactions=known)
            if isinstance(driver, RecipeDriver)
            else driver.proceed(self, run, surface)
        )
        result = await self._driven(run, leg)
        return AnswerResult(
            interaction=stored, created=True, run=result, still_open=[], resumed=True
        )

    async def resume_answered(self, run_id: str, *, surface: Surface = NO_SURFACE) -> RunResult:
        """Continue a paused run whose interactions were all answered one by one.

        Raises ``InvalidPayloadError`` (reason ``incomplete_resume``) while some are open; a
        run that is not paused is returned as it stands.
        """
        run = await self.store.get_run(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            return await self.status(run_id)
        still_open = await self._open_ids(run_id)
        if still_open:
            raise InvalidPayloadError(
                f"run {run_id} still waits for answers to {still_open}",
                run_id=run_id,
                reason="incomplete_resume",
            )
        return await self._resume_answered(run, surface)

    async def claim_answered(self, run_id: str) -> RunRecord | None:
        """Claim a paused run whose interactions are all answered, to continue it elsewhere.

        Moves the run to ``running`` (compare-and-set: of several processes claiming it, exactly
        one gets it) and returns the claimed record; the caller must then :meth:`proceed` with
        it (a host hands it to a worker). Returns ``None`` when the run is not paused, still
        waits for answers, or another claim won. Raises ``UsageError`` when the run cannot be
        continued here (its recipe or model is missing); the run is left as it was.
        """
        run = await self.store.get_run(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN or await self._open_ids(run_id):
            return None
        return await self._claim(run)

    async def proceed(self, run: RunRecord, *, surface: Surface = NO_SURFACE) -> RunResult:
        """Continue a run claimed by :meth:`claim_answered` until it finishes or pauses."""
        return await self._driven(run, driver_for(run.kind).proceed(self, run, surface))

    async def _driven(self, run: RunRecord, leg: Awaitable[RunResult]) -> RunResult:
        """Await ``leg``, the continuation of ``run`` just moved to ``running``. Should it fail
        before it records anything (its stored answers cannot be read back, say), the run is
        left ``failed_resumable`` with the reason, not ``running`` with no one driving it."""
        try:
            return await leg
        except Exception as exc:
            await record_failed_resumable(
                self.store, run, self.scrub(f"could not continue: {describe_error(exc)}")
            )
            raise

    async def _claim(self, run: RunRecord) -> RunRecord | None:
        await driver_for(run.kind).check(self, run)
        try:
            settled = settle_awaits(await self.store.list_interactions(run.id), via=self.host)
            return await self.store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.RUNNING,
                answers=settled,
                durable=False,  # the answers are stored; the continuation's end is durable
            )
        except (ConflictError, InvalidPayloadError):
            return None  # someone else resumed it (or a question it waits on is open again)

    async def _resume_answered(self, run: RunRecord, surface: Surface) -> RunResult:
        claimed = await self._claim(run)
        if claimed is None:
            return await self.status(run.id)
        return await self.proceed(claimed, surface=surface)

    async def _open_ids(self, run_id: str) -> list[str]:
        """What a pause of the run waits on: its open blocking interactions, and the pending
        async questions an open ``await`` lists."""
        pending = await self.store.list_interactions(run_id, pending=True)
        return [r.id for r in open_for_pause(pending)]

    # ---------------------------------------------------------------- retry and recover

    async def retry(self, run_id: str, *, surface: Surface = NO_SURFACE) -> RunResult:
        """Continue a ``failed_resumable`` run from its last checkpoint.

        Such a run stopped on a passing failure (a usage window, an outage, retries used up)
        or was found stranded by :meth:`recover`. Raises ``ConflictError`` (reason
        ``not_resumable``) for a run in any other status, ``UsageError`` when it cannot be
        continued here (left as it was), and the model's error again if it still fails (the run
        stays ``failed_resumable``).
        """
        return await self.continue_retry(await self.claim_retry(run_id), surface=surface)

    async def claim_retry(self, run_id: str) -> RunRecord:
        """Claim a ``failed_resumable`` run to retry it elsewhere: move it to ``running``
        (compare-and-set: of several processes claiming it, exactly one gets it) and return
        the claimed record; the caller must then :meth:`continue_retry` with it (a host hands
        it to a worker). Raises as :meth:`retry` does before its leg starts, and
        ``ConflictError`` (reason ``version``) when another claim won."""
        run = await self.store.get_run(run_id)
        if run.status is not RunStatus.FAILED_RESUMABLE:
            raise ConflictError(
                f"run {run_id} is {run.status.value}; only a failed_resumable run can be retried",
                run_id=run_id,
                reason="not_resumable",
            )
        await driver_for(run.kind).check(self, run)
        try:
            return await self.store.update_run(
                run_id, expected_version=run.version, status=RunStatus.RUNNING
            )
        except ConflictError as exc:
            if exc.reason != "version":
                raise
            now = (await self.store.get_run(run_id)).status.value
            raise ConflictError(
                f"run {run_id} was moved by another process first (a retry, a cancel...): it "
                f"is {now} now; see it with: pi-recipes runs show {run_id}",
                run_id=run_id,
                reason="version",
            ) from None

    async def continue_retry(self, run: RunRecord, *, surface: Surface = NO_SURFACE) -> RunResult:
        """Retry a run claimed by :meth:`claim_retry`, until it finishes, pauses or fails."""
        return await self._driven(run, driver_for(run.kind).retry(self, run, surface))

    async def recover(self, *, older_than: float, now: datetime | None = None) -> list[RunResult]:
        """Mark runs stranded in ``running`` as ``failed_resumable``, so :meth:`retry` can go on.

        A run is stranded when the process driving it died mid-leg; nothing else moves it. A
        run counts as stranded when it was last written more than ``older_than`` seconds ago:
        choose a bound longer than any leg of yours. A leg that was only slow loses: its own
        final write then fails with ``ConflictError``. Returns the runs it marked.
        """
        if not 0 <= older_than < 10**9:  # NaN and infinity fail too
            raise UsageError(f"older_than must be a number of seconds >= 0, got {older_than!r}")
        cutoff = (now or self.clock()) - timedelta(seconds=older_than)
        marked: list[RunResult] = []
        for run in await self._all_runs(RunStatus.RUNNING):
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

    async def retry_due(self, *, now: datetime | None = None) -> list[RunResult]:
        """Retry every ``failed_resumable`` run whose automatic retry is due (the run opted in at
        its start: its checkpoint's ``auto_resume`` schedule has a ``due_at`` not after
        ``now``), oldest first. Of several processes sweeping one store, exactly one retries a
        given run (the move to ``running`` is a compare-and-set); a run that cannot continue
        here (``UsageError``: a key missing in this process) is left as it is. A retry that
        fails again is recorded on its run (and logged), never raised: the other due runs are
        retried all the same. Returns the runs it retried, as each leg left them.
        """
        retried: list[RunResult] = []
        for run in await self.due_retries(now=now):
            try:
                retried.append(await self.retry(run.id))
            except ConflictError:
                continue  # another process retried it first, or it moved
            except UsageError as exc:
                logger.warning("run %s is due for a retry but cannot continue here: %s",
                               run.id, exc)  # fmt: skip
            except (
                Exception
            ) as exc:  # recorded on the run; the next due run is retried all the same
                logger.warning("run %s failed again on its automatic retry: %s",
                               run.id, self.scrub(describe_error(exc)))  # fmt: skip
                retried.append(await self.status(run.id))
        return retried

    async def due_retries(self, *, now: datetime | None = None) -> list[RunRecord]:
        """The ``failed_resumable`` runs whose automatic retry is due at ``now``, oldest first
        (what :meth:`retry_due` retries; a host that drives legs on its own workers claims
        each with :meth:`claim_retry`, then :meth:`continue_retry`)."""
        now = now or self.clock()
        due: list[RunRecord] = []
        for run in await self._all_runs(RunStatus.FAILED_RESUMABLE):
            schedule = retry_schedule_of(run.checkpoint)
            if schedule is not None and schedule.due_at is not None and schedule.due_at <= now:
                due.append(run)
        return due

    # ---------------------------------------------------------------- cancel, expire, status

    async def cancel(self, run_id: str, *, reason: str = "cancelled") -> RunResult:
        """Cancel a run that is not finished; its interactions still open are closed as
        cancelled (an answer that got in first stands). Racing a resume, the cancel tries again
        on the moved run. Raises ``IllegalTransitionError`` for a run that already ended."""
        closing = InteractionAnswer(status="cancelled", answered_by="system", via=self.host)
        for _ in range(_CANCEL_TRIES):
            run = await self.store.get_run(run_id)
            try:
                await self.store.update_run(
                    run_id,
                    expected_version=run.version,
                    status=RunStatus.CANCELLED,
                    error=reason,
                    close_open=closing,
                )
            except ConflictError as exc:
                if exc.reason != "version":
                    raise
                continue  # the run moved (a resume started): cancel it where it is now
            return await self.status(run_id)
        raise ConflictError(
            f"run {run_id} kept changing while it was being cancelled; try again",
            run_id=run_id,
            reason="version",
        )

    async def expire_due(
        self, *, now: datetime | None = None, resume: bool = True
    ) -> list[RunResult]:
        """Settle every paused run's interactions that passed ``expires_at``.

        They are recorded ``expired`` (the model reads a decline). Policy ``decline`` (the
        default) then continues each run left with nothing open, once every due run is
        settled; policy ``fail`` fails the run. Returns the runs it touched, as they stand.

        One run never holds up the others: a continuation that fails is recorded on its run
        (``failed_resumable`` or ``failed``, as any leg's failure) and logged, and one that
        cannot continue here (``UsageError``: its recipe or key is missing in this process)
        leaves its run paused with everything answered, for ``runs resume`` (logged too); the
        sweep goes on with the next. ``resume=False`` continues none: a host that drives legs
        on its own workers continues the returned runs that are still paused
        (:meth:`claim_answered`, then :meth:`proceed`).
        """
        now = now or self.clock()
        touched: dict[str, RunResult] = {}
        answered: list[str] = []
        expired = InteractionAnswer(status="expired", answered_by="system", via="expiry")
        by_run: dict[str, list[InteractionRecord]] = {}
        for record in await self.store.list_interactions(pending=True):
            by_run.setdefault(record.run_id, []).append(record)
        oldest_due_first = sorted(
            by_run.items(), key=lambda item: min(r.expires_at for r in item[1])
        )
        for run_id, pending in oldest_due_first:
            if not any(r.expires_at <= now for r in pending):
                continue
            run = await self.store.get_run(run_id)
            if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
                continue
            policy = expiry_policy_of(run.checkpoint)  # any kind's checkpoint keeps it
            plan = plan_expiry(policy, pending, now)
            if plan is None:
                continue
            if plan.fail:
                first = plan.due[0]
                await self.store.update_run(
                    run.id,
                    expected_version=run.version,
                    status=RunStatus.FAILED,
                    error=f"interaction {first.id} expired at {first.expires_at.isoformat()}",
                    answers={r.id: expired for r in pending},
                )
                touched[run.id] = await self.status(run.id)
                continue
            for record in plan.due:
                try:
                    await self.store.answer_interaction(
                        run.id, record.id, expired, now=record.expires_at
                    )
                except ConflictError:
                    continue  # answered meanwhile: the answer stands
            touched[run.id] = await self.status(run.id)
            if not touched[run.id].interrupts:
                answered.append(run.id)
        for run_id in answered if resume else ():
            touched[run_id] = await self._continue_expired(run_id)
        return list(touched.values())

    async def _continue_expired(self, run_id: str) -> RunResult:
        """Continue a run the expiry sweep left with nothing open; a failure is recorded on
        the run (or, when it cannot continue here, leaves it paused) and logged, not raised."""
        try:
            run = await self.store.get_run(run_id)
            if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
                return await self.status(run_id)  # another process continued it first
            return await self._resume_answered(run, NO_SURFACE)
        except UsageError as exc:
            logger.warning(
                "run %s: its expired questions are settled, but it cannot continue here: %s",
                run_id, exc,
            )  # fmt: skip
        except Exception as exc:
            logger.warning(
                "run %s failed after its expired questions were settled: %s",
                run_id, self.scrub(describe_error(exc)),
            )  # fmt: skip
        return await self.status(run_id)

    def scrub(self, text: str) -> str:
        """``text`` with every credential of the runner's environment replaced by ``***`` (see
        ``AgentSession.scrub``): what a driver does to a failure's text before it records it."""
        return self._secrets.scrub(text)

    @functools.cached_property
    def _secrets(self) -> Secrets:
        """Built on the first failure to scrub, not for every runner."""
        return Secrets.from_env(self.env)

    def view(self, run: RunRecord) -> RunView:
        """What the driver of ``run``'s kind shows of it: its text, last AG-UI run id and the
        lines to print under it (a plain view when no driver of that kind is installed)."""
        return _view(run)

    async def _all_runs(self, status: RunStatus) -> list[RunRecord]:
        """Every run in ``status``, oldest first, read a page at a time."""
        found: list[RunRecord] = []
        while True:
            after = found[-1].id if found else None
            page = await self.store.list_runs(status, _PAGE, oldest_first=True, after=after)
            found += page
            if len(page) < _PAGE:
                return found

    async def status(self, run_id: str) -> RunResult:
        """The run as stored: status, open interrupts, last text, error."""
        run = await self.store.get_run(run_id)
        pending = await self.store.list_interactions(run_id, pending=True)
        interrupts = [r.interrupt for r in open_for_pause(pending)]
        view = _view(run)
        return RunResult(
            run_id=run.id,
            thread_id=run.thread_id,
            kind=run.kind,
            status=run.status,
            interrupts=interrupts if run.status is RunStatus.PAUSED_WAITING_HUMAN else [],
            text=view.text,
            error=run.error,
            warning=view.warning,
            agui_run_id=view.agui_run_id,
        )


def _view(run: RunRecord) -> RunView:
    try:
        driver: RunDriver = driver_for(run.kind)
    except UsageError:
        return RunView()  # a kind no installed driver knows: still listed, shown plainly
    return driver.view(run)


def _closed_by_system(answer: InteractionAnswer) -> bool:
    """Whether ``answer`` is the close a cancel or a run's end gave a question still open."""
    return answer.status == "cancelled" and answer.answered_by == RUN_ENDED.answered_by


def _ended_before(run: RunRecord, interaction_id: str) -> ConflictError:
    """The refusal of an answer that came after its run ended (a cancel, or the run's end,
    closed the question first)."""
    if run.status is RunStatus.CANCELLED:
        return ConflictError(
            f"run {run.id} was cancelled before this answer; nothing was stored",
            run_id=run.id,
            interaction_id=interaction_id,
            reason="run_cancelled",
        )
    return ConflictError(
        f"run {run.id} {run.status.value} before this answer: its open questions closed with "
        "it, and no agent will read the answer; nothing was stored",
        run_id=run.id,
        interaction_id=interaction_id,
        reason="run_ended",
    )
