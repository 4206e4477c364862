"""The durable runner: start a run, pause it on interrupts, answer, claim and continue it anywhere.

A run is written down, never kept waiting in memory. When a tool's ask resolves
``awaiting_user``, the session pauses; the leg writes the checkpoint, one interaction per open
interrupt and the status ``paused_waiting_human`` in one transaction.

Every answer and resume is decided once, here, on one read of the run with its interactions:
the pure planners (:func:`~interactions.resume.plan_answer`, :func:`~interactions.resume.
plan_resume`) accept or refuse it, the run's driver checks that a continuation can run here,
and one compare-and-set write stores the answers together with the run's move to ``running``
when they are the last it waited for — the *claim*. Of several processes answering or resuming
one run, exactly one claims it. A host turns a person's action into one call and hands the
:class:`Claim` it gets back to a worker (:meth:`Runner.proceed`); it decides nothing itself.

The runner works on runs of every kind; what continues a run after its answers is the driver
registered for its ``kind`` (:mod:`recipes.runs._drivers`). Recipe runs are built in. The
sweeps (expiry, automatic retries, stranded runs) and cancel are in :mod:`._sweeps`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from interactions import ConflictError, InvalidPayloadError, UnknownInteractionError, UsageError
from interactions.async_questions import open_for_pause, settle_awaits
from interactions.people import Identity, who
from interactions.reminders import escalated_ids
from interactions.resume import plan_resume
from interactions.store import (
    InteractionRecord,
    RunRecord,
    RunStatus,
    Store,
    utc_now,
)
from recipes._loader import load_recipe
from recipes._recipe import Recipe
from recipes.models._base import Model
from recipes.models._secrets import Secrets
from recipes.runs import _answering, _sweeps
from recipes.runs._answering import BeforeClaim, claim_write
from recipes.runs._checkpoint import ExpiryPolicy
from recipes.runs._close import record_failed_resumable, record_interrupted
from recipes.runs._drivers import RunView, driver_for, register_driver
from recipes.runs._plan import describe_error
from recipes.runs._recipe_driver import RecipeDriver
from recipes.runs._results import NO_SURFACE, AnswerResult, Claim, RunResult, Surface
from recipes.runs._voting import resume_with_votes, votes_of
from recipes.session import DEFAULT_MAX_TURNS

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

__all__ = ["Runner"]

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
    ``clock`` is "now" for deciding on answers and for the questions' lifetimes, an ask's
    expiry among them (a workflow engine gives its own, so that a replay decides as the first
    run did). ``recipes`` loads a
    recipe from its reference (default: :func:`~recipes.load_recipe`, once per reference).
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
        recipes: Callable[[str], Recipe] = load_recipe,
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
        self._load = recipes
        self._recipes: dict[str, Recipe] = {}

    def recipe(self, ref: str) -> Recipe:
        """The recipe ``ref`` names, loaded once per runner (``RecipeLoadError`` if it can't)."""
        if ref not in self._recipes:
            self._recipes[ref] = self._load(ref)
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

    # ---------------------------------------------------------------- answers

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
        before_claim: BeforeClaim | None = None,
        surface: Surface = NO_SURFACE,
    ) -> AnswerResult:
        """Answer one interaction (compare-and-set: the first answer wins).

        The payload is checked against the interrupt (an option's label records its value). An
        identical second answer is a replay (``created=False``); a different one raises
        ``ConflictError`` and never overwrites; every refusal is
        :func:`~interactions.resume.plan_answer`'s. ``still_open`` lists what the run still
        waits for.

        When this is the last answer a paused run waits for, ``claim=True`` stores it together
        with the run's move to ``running`` (one write) and returns the :class:`Claim`
        (``AnswerResult.claim``) for the caller to continue with :meth:`proceed`;
        ``before_claim`` is called first (raise there, and nothing is written). ``resume=True``
        claims it the same way and continues the run at once (``AnswerResult.run``,
        ``resumed``). A replayed answer claims a paused run that waits for nothing (its claim
        was lost before). If the run cannot continue here (``UsageError``: its recipe or key is
        missing, or its driver fails), the answer is stored all the same, then that is raised.

        ``answered_by`` is who answers: an :class:`~interactions.people.Identity` the host
        established (its name is recorded, its groups count where the interrupt names
        approvers), or a bare name. An interrupt naming approvers refuses anyone else with
        ``NotAllowedError``, storing nothing.

        An approval that needs several approvals (``required_approvals`` in its metadata)
        takes each answer as one vote (:class:`~interactions.store.VoteStore`, which the store
        must be, else ``UsageError``): ``created`` says it was counted (a person's identical
        second vote is not; a different one is ``ConflictError``, reason ``already_voted``),
        ``settled`` whether the approval is decided, ``approvals`` and ``required_approvals``
        how far it got ("1 of 2 approvals"). A decline or revision request settles it at once;
        the last approval needed settles it as one approval naming the approvers, and then
        ``claim`` / ``resume`` continue the run as above. A vote takes no ``args`` nor
        ``remember`` (``InvalidPayloadError``, reason ``not_a_vote``) and needs a person
        (``NotAllowedError``, reason ``no_voter``).

        An async question's answer is also queued for its agent (``queued``: it is delivered
        at the agent's next turn boundary while the run goes on). The ``await`` record itself
        is never answered directly: ``ConflictError`` (reason ``await``) names the questions
        to answer instead.
        """
        return await _answering.answer(
            self, run_id, interaction_id, payload, status=status, answered_by=answered_by,
            resume=resume, claim=claim, before_claim=before_claim, surface=surface,
        )  # fmt: skip

    async def interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        """The run's interaction. Raises ``UnknownRunError`` for an unknown run (a mistyped run
        id is named as such), ``UnknownInteractionError`` for an unknown interaction."""
        try:
            return await self.store.get_interaction(run_id, interaction_id)
        except UnknownInteractionError:
            await self.store.get_run(run_id)  # raises when the run is what is unknown
            raise

    # ---------------------------------------------------------------- resume, claim, continue

    async def resume(
        self,
        run_id: str,
        entries: Sequence[ResumeEntry],
        *,
        answered_by: str | Identity | None = None,
        surface: Surface = NO_SURFACE,
    ) -> RunResult:
        """Answer every open interrupt of a paused run and continue it (``answered_by`` as
        :meth:`answer` takes it).

        Replaying an identical resume returns the run as it stands, changing nothing; when
        those answers were given one by one and the run still waits paused with nothing open,
        it is continued, as the resume asks (of two such resumes, one continues it). Raises
        ``UnknownRunError``, ``UnknownInteractionError``, ``ExpiredError``,
        ``InvalidPayloadError`` (off the interrupt's schema, or open interrupts left out),
        ``ConflictError`` (a different answer is stored, or the run is not paused) and
        ``UsageError`` (the run cannot be continued here: its recipe or model is missing); a
        refused resume changes nothing.

        An entry for an approval that needs several approvals is one vote (as :meth:`answer`
        takes it): the run continues once every such approval is settled; until then the other
        answers are stored and the run is returned still paused. Each vote is its own write:
        of a resume holding several, one refused by the store (``already_voted``) leaves the
        ones before it counted.
        """
        run, records = await self._read(run_id)
        name, groups = who(answered_by)
        escalated = await escalated_ids(self.store, records)
        plan = plan_resume(
            records, entries, now=self.clock(), answered_by=name, via=self.host, groups=groups,
            escalated=escalated,
        )  # fmt: skip
        if plan.replay:
            pending = [r for r in records if r.answer is None]
            if run.status is RunStatus.PAUSED_WAITING_HUMAN and not open_for_pause(pending):
                return await self._continue_answered(run, records, surface)
            return self._result(run, records)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            raise ConflictError(
                f"run {run_id} is {run.status.value}, not paused; nothing to resume",
                run_id=run_id,
                reason="not_paused",
            )
        votes = votes_of(records, plan.new_answers)
        if votes:  # one resume is one vote on each approval that needs several
            return await resume_with_votes(self, run, records, plan.new_answers, votes, surface)
        answers = {**plan.new_answers, **settle_awaits(records, plan.new_answers, via=self.host)}
        prepared = await driver_for(run.kind).prepare(self, run)
        claimed = await claim_write(self.store, run, records, answers, prepared)
        if claimed is None:
            # Another resume won the race. An identical one is a replay; a different one is not.
            again = plan_resume(
                await self.store.list_interactions(run_id), entries, now=self.clock(),
                answered_by=name, groups=groups, escalated=escalated,
            )  # fmt: skip
            if again.replay:
                return await self.status(run_id)
            raise ConflictError(
                f"run {run_id} was resumed by another process first",
                run_id=run_id,
                reason="version",
            )
        return await self.proceed(claimed, surface=surface)

    async def resume_answered(self, run_id: str, *, surface: Surface = NO_SURFACE) -> RunResult:
        """Continue a paused run whose interactions were all answered one by one.

        Raises ``InvalidPayloadError`` (reason ``incomplete_resume``) while some are open; a
        run that is not paused is returned as it stands.
        """
        run, records = await self._read(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            return self._result(run, records)
        still_open = [r.id for r in open_for_pause(records)]
        if still_open:
            raise InvalidPayloadError(
                f"run {run_id} still waits for answers to {still_open}",
                run_id=run_id,
                reason="incomplete_resume",
            )
        return await self._continue_answered(run, records, surface)

    async def claim_answered(
        self, run_id: str, *, before: BeforeClaim | None = None
    ) -> Claim | None:
        """Claim a paused run whose interactions are all answered, to continue it elsewhere.

        Moves the run to ``running`` (compare-and-set: of several processes claiming it, exactly
        one gets it) and returns the :class:`Claim`; the caller must then :meth:`proceed` with
        it (a host hands it to a worker). Returns ``None`` when the run is not paused, still
        waits for answers, or another claim won. Raises ``UsageError`` when the run cannot be
        continued here (its recipe or model is missing); the run is left as it was.
        """
        run, records = await self._read(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN or open_for_pause(records):
            return None
        return await self._claim(run, records, before=before)

    async def claim_retry(self, run_id: str) -> Claim:
        """Claim a ``failed_resumable`` run to retry it elsewhere: move it to ``running``
        (compare-and-set: of several processes claiming it, exactly one gets it) and return
        the :class:`Claim`; the caller must then :meth:`proceed` with it (a host hands it to a
        worker). Raises ``ConflictError`` (reason ``not_resumable``) for a run in any other
        status, ``UsageError`` when it cannot be continued here (left as it was), and
        ``ConflictError`` (reason ``version``) when another claim won."""
        run, records = await self._read(run_id)
        if run.status is not RunStatus.FAILED_RESUMABLE:
            raise ConflictError(
                f"run {run_id} is {run.status.value}; only a failed_resumable run can be retried",
                run_id=run_id,
                reason="not_resumable",
            )
        prepared = await driver_for(run.kind).prepare(self, run)
        try:
            moved = await self.store.update_run(
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
        return Claim(moved, retry=True, interactions=tuple(records), prepared=prepared)

    async def proceed(self, claim: Claim, *, surface: Surface = NO_SURFACE) -> RunResult:
        """Continue a claimed run (:meth:`claim_answered`, :meth:`claim_retry`, an answer's
        claim) until it finishes, pauses or fails. Should the leg fail before it records
        anything, the run is left ``failed_resumable`` with the reason, never ``running``
        with no one driving it."""
        driver = driver_for(claim.run.kind)
        leg = driver.retry if claim.retry else driver.proceed
        return await self._driven(claim.run, leg(self, claim, surface))

    async def release(self, claim: Claim) -> None:
        """Give back a claim that will not be continued (the host stops before its leg
        begins): the run is recorded interrupted (``failed_resumable``, to retry), as a leg cut
        short is, never left ``running`` with no one driving it."""
        await record_interrupted(self.store, claim.run)

    async def retry(self, run_id: str, *, surface: Surface = NO_SURFACE) -> RunResult:
        """Continue a ``failed_resumable`` run from its last checkpoint.

        Such a run stopped on a passing failure (a usage window, an outage, retries used up)
        or was found stranded by :meth:`recover`. Raises ``ConflictError`` (reason
        ``not_resumable``) for a run in any other status, ``UsageError`` when it cannot be
        continued here (left as it was), and the model's error again if it still fails (the run
        stays ``failed_resumable``).
        """
        return await self.proceed(await self.claim_retry(run_id), surface=surface)

    async def _driven(self, run: RunRecord, leg: Awaitable[RunResult]) -> RunResult:
        try:
            return await leg
        except Exception as exc:
            await record_failed_resumable(
                self.store, run, self.scrub(f"could not continue: {describe_error(exc)}")
            )
            raise

    async def _claim(
        self,
        run: RunRecord,
        records: Sequence[InteractionRecord],
        *,
        before: BeforeClaim | None = None,
    ) -> Claim | None:
        """Claim a paused run whose questions are all answered (``None``: another claim won,
        or a question it waits on is open again)."""
        if open_for_pause(records):
            return None  # a question it waits on is open (again)
        prepared = await driver_for(run.kind).prepare(self, run)
        try:
            settled = settle_awaits(records, via=self.host)
        except InvalidPayloadError:
            return None
        if before is not None:
            before()
        return await claim_write(self.store, run, records, settled, prepared)

    async def _continue_answered(
        self, run: RunRecord, records: Sequence[InteractionRecord], surface: Surface
    ) -> RunResult:
        claimed = await self._claim(run, records)
        if claimed is None:
            return await self.status(run.id)
        return await self.proceed(claimed, surface=surface)

    # ---------------------------------------------------------------- sweeps and cancel

    async def cancel(self, run_id: str, *, reason: str = "cancelled") -> RunResult:
        """Cancel a run that is not finished; its interactions still open are closed as
        cancelled (an answer that got in first stands). Racing a resume, the cancel tries again
        on the moved run. Raises ``IllegalTransitionError`` for a run that already ended."""
        return await _sweeps.cancel(self, run_id, reason)

    async def expire_due(
        self, *, now: datetime | None = None, resume: bool = True
    ) -> list[RunResult]:
        """Settle every paused run's interactions that passed ``expires_at``.

        They are recorded ``expired`` (the model reads a decline). Policy ``decline`` (the
        default) then continues each run left with nothing open, once every due run is
        settled; policy ``fail`` fails the run. Returns the runs it touched, as they stand.

        One run never holds up the others: a continuation that fails is recorded on its run
        and logged, and one that cannot continue here (``UsageError``) leaves its run paused
        with everything answered, for ``runs resume`` (logged too). ``resume=False`` continues
        none: a host that drives legs on its own workers continues the returned runs that are
        still paused (:meth:`claim_answered`, then :meth:`proceed`).
        """
        return await _sweeps.expire_due(self, now or self.clock(), resume)

    async def recover(self, *, older_than: float, now: datetime | None = None) -> list[RunResult]:
        """Mark runs stranded in ``running`` as ``failed_resumable``, so :meth:`retry` can go on.

        A run is stranded when the process driving it died mid-leg; nothing else moves it. A
        run counts as stranded when it was last written more than ``older_than`` seconds ago:
        choose a bound longer than any leg of yours. A leg that was only slow loses: its own
        final write then fails with ``ConflictError``. Returns the runs it marked.
        """
        return await _sweeps.recover(self, older_than, now or self.clock())

    async def retry_due(self, *, now: datetime | None = None) -> list[RunResult]:
        """Retry every ``failed_resumable`` run whose automatic retry is due (the run opted in
        at its start: its checkpoint's ``auto_resume`` schedule has a ``due_at`` not after
        ``now``), oldest first. Of several processes sweeping one store, exactly one retries a
        given run; a run that cannot continue here (``UsageError``) is left as it is; a retry
        that fails again is recorded on its run (and logged), never raised. Returns the runs it
        retried, as each leg left them.
        """
        return await _sweeps.retry_due(self, now or self.clock())

    async def due_retries(self, *, now: datetime | None = None) -> list[RunRecord]:
        """The ``failed_resumable`` runs whose automatic retry is due at ``now``, oldest first
        (what :meth:`retry_due` retries; a host that drives legs on its own workers claims
        each with :meth:`claim_retry`, then :meth:`proceed`)."""
        return await _sweeps.due_retries(self, now or self.clock())

    # ---------------------------------------------------------------- reading

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
        try:
            driver = driver_for(run.kind)
        except UsageError:
            return RunView()  # a kind no installed driver knows: still listed, shown plainly
        return driver.view(run)

    async def status(self, run_id: str) -> RunResult:
        """The run as stored: status, open interrupts, last text, error."""
        return self._result(*await self._read(run_id))

    def _result(self, run: RunRecord, records: Sequence[InteractionRecord]) -> RunResult:
        paused = run.status is RunStatus.PAUSED_WAITING_HUMAN
        view = self.view(run)
        return RunResult(
            run_id=run.id,
            thread_id=run.thread_id,
            kind=run.kind,
            status=run.status,
            interrupts=[r.interrupt for r in open_for_pause(records)] if paused else [],
            text=view.text,
            error=run.error,
            warning=view.warning,
            agui_run_id=view.agui_run_id,
        )

    async def _read(self, run_id: str) -> tuple[RunRecord, list[InteractionRecord]]:
        """The run and its interactions, in one store call where the store has one."""
        read = getattr(self.store, "get_run_with_interactions", None)
        if read is not None:
            found: tuple[RunRecord, list[InteractionRecord]] = await read(run_id)
            return found
        return await self.store.get_run(run_id), await self.store.list_interactions(run_id)
