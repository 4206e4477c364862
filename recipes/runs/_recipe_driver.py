"""The driver of recipe runs: an agent session, started, resumed or retried from the checkpoint.

A start writes the run, then drives the session's prompt. A resume rebuilds the session from
the checkpoint (the transcript and the paused calls, whose interrupts the store holds) and hands
it the stored answers: each paused call takes its answer as its result, or runs again if its
tool replays. Everything a continuation needs is checked by :meth:`RecipeDriver.check` before
the run leaves ``paused``, so a moved recipe or a missing model never strands it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

from pydantic import ValidationError

from interactions import UsageError
from interactions.asks import interrupt_ttl
from interactions.resume import check_text
from interactions.store import EventRecord, InteractionRecord, NewRun, RunRecord, RunStatus
from recipes._recipe import Recipe, resolve_model
from recipes.async_questions import with_async_questions
from recipes.decisions import StoreBook
from recipes.messages import stop_warning
from recipes.models._base import Model
from recipes.runs._async import LegWrites, RunAsyncQuestions
from recipes.runs._checkpoint import Checkpoint, ExpiryPolicy, LegRecord, new_run_id
from recipes.runs._drivers import RunView
from recipes.runs._envelope import KeptPolicy, continuing_policy
from recipes.runs._leg import drive_leg
from recipes.runs._plan import last_text, session_resume
from recipes.runs._results import Claim, RunResult, Surface
from recipes.session import AgentSession, create_agent_session

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

    from recipes.runs._runner import Runner

__all__ = ["MAX_INPUT_BYTES", "RecipeDriver", "durable_model", "durable_ref"]

MAX_INPUT_BYTES = 4 << 20
"""The largest input (prompt) a run accepts: 4 MiB of UTF-8."""


def durable_model(model: Model | str | None, cwd: Path) -> Model | str | None:
    """A model name another process in another folder resolves the same way: a relative
    ``scripted:`` script path made absolute against ``cwd``."""
    if isinstance(model, str) and model.startswith("scripted:"):
        path = Path(model.removeprefix("scripted:"))
        if not path.is_absolute():
            return f"scripted:{(cwd / path).resolve()}"
    return model


def durable_ref(ref: str, cwd: Path) -> str:
    """A recipe reference that another process, in another directory, can load: a file path
    made absolute against ``cwd``; a module reference as it is."""
    found = _DURABLE.get((ref, cwd))
    if found is not None:
        return found
    path, sep, func = ref.partition(":")
    if path.endswith(".py"):
        candidate = Path(path) if Path(path).is_absolute() else cwd / path
        if candidate.is_file():
            found = _DURABLE[(ref, cwd)] = str(candidate.resolve()) + sep + func
            return found
    return ref


_DURABLE: dict[tuple[str, Path], str] = {}
"""The recipe files already found (a file that exists keeps its absolute path)."""


class _Prepared(NamedTuple):
    """What a continuation of a recipe run needs, checked before the run was claimed."""

    recipe: Recipe
    model: Model


class RecipeDriver:
    """Runs of kind ``recipe``."""

    async def start(
        self,
        runner: Runner,
        recipe_ref: str,
        input: str,
        *,
        agent: str | None,
        model: Model | str | None,
        thread_id: str | None,
        run_id: str | None,
        expiry_policy: ExpiryPolicy,
        surface: Surface,
    ) -> RunResult:
        """Write a new run of ``recipe_ref`` and drive it until it finishes or pauses."""
        if not input.strip():
            raise UsageError("the run's input must not be empty")
        if len(input.encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
            raise UsageError(f"the run's input is larger than {MAX_INPUT_BYTES} bytes")
        check_text(input, what="run's input")
        if expiry_policy not in get_args(ExpiryPolicy):
            raise UsageError(
                f"expiry_policy is 'decline' or 'fail' (what an expired question does to the "
                f"run), got {expiry_policy!r}"
            )
        ref = durable_ref(recipe_ref, runner.cwd)
        recipe = runner.recipe(ref)
        chosen = self._model(runner, recipe, agent, durable_model(model, runner.cwd))
        _check_credentials(chosen, "start the run", "start it again")
        checkpoint = Checkpoint(
            input=input, expiry_policy=expiry_policy, policy=KeptPolicy.of(runner.env, runner.cwd)
        )
        run = await runner.store.create_run(
            _new_run(
                id=run_id or new_run_id(),
                thread_id=thread_id or f"thread-{uuid.uuid4().hex[:16]}",
                ref=ref,
                agent=recipe.agent(agent).name,
                model_name=chosen.name,
                checkpoint=checkpoint.dump(),
            )
        )
        writes = LegWrites(runner.store, run, asks_async=recipe.agent(run.agent).async_questions)
        session = self._session(runner, recipe, run, chosen, surface, writes, checkpoint)
        return await drive_leg(
            runner.store, run, session, checkpoint, session.prompt(input), surface, writes,
            runner.clock,
        )  # fmt: skip

    async def prepare(self, runner: Runner, run: RunRecord) -> _Prepared:
        """The recipe loads, its agent exists, the model is known and has its credentials in
        this process, the environment is sane — or ``UsageError`` saying what to fix and how to
        continue once it is. Returns the recipe and the model, for the leg."""
        recipe = runner.recipe(run.ref)
        model = self._model(runner, recipe, run.agent, run.model_name or None)
        verb = "resume" if run.status.value == "paused_waiting_human" else "retry"
        _check_credentials(model, f"continue run {run.id}", f"pi-recipes runs {verb} {run.id}")
        return _Prepared(recipe, model)

    async def proceed(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        """Resume the session from the checkpoint with the stored answers (the claim's
        interactions, when it read them; else read now)."""
        return await self._proceed(runner, claim, surface, Checkpoint.of(claim.run))

    async def _proceed(
        self, runner: Runner, claim: Claim, surface: Surface, checkpoint: Checkpoint
    ) -> RunResult:
        run = claim.run
        if checkpoint.paused is None:
            raise UsageError(f"run {run.id} has no paused calls to resume")
        interactions = claim.interactions
        if interactions is None:
            interactions = tuple(await runner.store.list_interactions(run.id))
        paused, answers = session_resume(checkpoint.paused, checkpoint.messages, interactions)
        recipe, model = await self._prepared(runner, claim)
        writes = LegWrites(runner.store, run, asks_async=recipe.agent(run.agent).async_questions)
        session = self._session(
            runner, recipe, run, model, surface, writes, checkpoint,
            messages=checkpoint.messages, paused=paused,
        )  # fmt: skip
        return await drive_leg(
            runner.store, run, session, checkpoint, session.resume(answers), surface, writes,
            runner.clock, interactions,
        )  # fmt: skip

    async def retry(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        """Call the model again on the stored transcript, finish a resume cut short, or start
        over from the input when nothing was checkpointed."""
        run = claim.run
        checkpoint = Checkpoint.of(run)
        checkpoint = checkpoint.model_copy(update={"retries": checkpoint.retries + 1})
        if checkpoint.paused is not None:  # a resume whose process died: its answers are stored
            return await self._proceed(runner, claim, surface, checkpoint)
        recipe, model = await self._prepared(runner, claim)
        writes = LegWrites(runner.store, run, asks_async=recipe.agent(run.agent).async_questions)
        session = self._session(
            runner, recipe, run, model, surface, writes, checkpoint, messages=checkpoint.messages
        )
        leg = session.retry() if checkpoint.messages else session.prompt(checkpoint.input)
        return await drive_leg(
            runner.store, run, session, checkpoint, leg, surface, writes, runner.clock
        )

    async def _prepared(self, runner: Runner, claim: Claim) -> _Prepared:
        """What the claim's check built, or (a claim made elsewhere) built now."""
        if isinstance(claim.prepared, _Prepared):
            return claim.prepared
        return await self.prepare(runner, claim.run)

    def view(self, run: RunRecord) -> RunView:
        """The run's last assistant text, its last leg's AG-UI run id, and, for a finished run,
        why that text may not be the whole answer."""
        try:
            checkpoint = Checkpoint.of(run)
        except ValueError:  # not a checkpoint this version wrote: show the run plainly
            return RunView()
        warning = stop_warning(checkpoint.messages) if run.status is RunStatus.FINISHED else None
        return RunView(last_text(checkpoint.messages), checkpoint.agui_run_id, warning=warning)

    def leg_events(
        self, run: RunRecord, leg: EventRecord, interactions: Mapping[str, InteractionRecord]
    ) -> list[BaseEvent]:
        """The leg's events rebuilt from the transcript and its :class:`LegRecord`."""
        from recipes.runs._agui import leg_events  # ag-ui's models load only when asked for

        record = LegRecord.of(leg.data, run.id)
        messages = Checkpoint.of(run).messages  # append-only: spans hold
        paused_on = [interactions[i].interrupt for i in record.interrupts if i in interactions]
        return leg_events(run.thread_id, record, messages, paused_on)

    # ---------------------------------------------------------------------------------------

    def _model(
        self, runner: Runner, recipe: Recipe, agent: str | None, requested: Model | str | None
    ) -> Model:
        interrupt_ttl(runner.env)  # a configuration the run cannot keep fails before it runs
        return resolve_model(recipe, agent, runner.model or requested, env=runner.env)

    def _session(
        self,
        runner: Runner,
        recipe: Recipe,
        run: RunRecord,
        model: Model,
        surface: Surface,
        writes: LegWrites,
        checkpoint: Checkpoint,
        **restore: Any,
    ) -> AgentSession:
        """The run's session; an agent that opted into async questions gets their tools,
        bound to the run (its answers arrive through the session's inbox). Its tools' gates
        apply the approval policy the run started under, unless this process names its own."""
        binder = None
        if recipe.agent(run.agent).async_questions:
            binder = RunAsyncQuestions(
                runner.store, writes, run.id, scope=run.agent, env=runner.env,
                clock=runner.clock,
            )  # fmt: skip
            recipe = with_async_questions(recipe, run.agent, binder)
        return create_agent_session(
            recipe,
            agent=run.agent,
            model=model,
            mode=surface.mode or runner.mode,
            ui=surface.ui,
            env=runner.env,
            cwd=runner.cwd,
            run_id=run.id,
            tool_timeout=runner.tool_timeout,
            max_turns=runner.max_turns,
            can_pause=True,
            channels=surface.channels,
            inbox=binder.inbox if binder is not None else None,
            clock=runner.clock,
            decisions=StoreBook(runner.store, run.id, run.thread_id, writes.later),
            policy=continuing_policy(checkpoint.policy, runner.env, runner.cwd),
            **restore,
        )


def _new_run(**fields: Any) -> NewRun:
    """The new run's record, or ``UsageError`` naming a field no store keeps (an id or thread
    that is blank, holds a NUL or text that is not valid Unicode)."""
    for name in ("id", "thread_id"):
        value = fields.get(name)
        if isinstance(value, str) and value and not value.strip():
            raise UsageError(f"cannot start the run: its {_FIELDS[name]} is blank")
    try:
        return NewRun(**fields)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        name = str(first["loc"][0]) if first["loc"] else "record"
        cause = (first.get("ctx") or {}).get("error") or first["msg"]
        raise UsageError(f"cannot start the run: its {_FIELDS.get(name, name)}: {cause}") from None


_FIELDS = {"id": "run id", "thread_id": "thread id"}


def _check_credentials(model: Model, doing: str, then: str) -> None:
    problem = getattr(model, "credentials_problem", None)
    found = problem() if callable(problem) else None
    if found:
        raise UsageError(f"cannot {doing} here: {found}, then: {then}")
