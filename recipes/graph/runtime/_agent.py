"""``agent`` and ``judge`` nodes: a recipe's agent, with its tools, run by the session.

The node's system prompt and output schema are added to the agent's instructions (the model is
asked for one JSON object fitting the schema); a reply that does not fit gets one corrective
turn, then the node fails with the validation errors. An ask inside the node pauses it: the
conversation and the paused calls go into the checkpoint, the interrupts are stored under the
node's prefix, and the answers resume the same conversation where it stopped.

Extension points: :func:`node_tools` (the node's tool set) and the route chain
(:attr:`recipes.graph.ir.LLMNode.routes`: :func:`run_agent` runs one route, whose model it calls;
``recipes.graph.runtime._routes`` walks the chain).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from interactions import PiRecipesError, UsageError, auto_resolve_interactions
from interactions.asks import interrupt_ttl
from interactions.store import EventInput
from recipes import Agent, Recipe, Tool, create_agent_session, resolve_model
from recipes.async_questions import with_async_questions
from recipes.decisions import StoreBook
from recipes.graph import ir
from recipes.graph.compiler import recipe_ref
from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome, failed, finished
from recipes.graph.runtime._schemas import conform, extract_json, json_schema
from recipes.graph.runtime._state import NodeRun, SessionState
from recipes.messages import AssistantMessage
from recipes.models import Model, ModelError
from recipes.runs.agui import LegTranslator
from recipes.runs.planning import checkpoint_paused, last_text, resumable, session_resume
from recipes.session import AgentSession

if TYPE_CHECKING:
    from recipes.runs import Runner

__all__ = [
    "CORRECTIVE",
    "RECIPE_BACKEND",
    "Agents",
    "RecipeBackend",
    "agent_setup",
    "model_name",
    "node_instructions",
    "node_output",
    "node_tools",
    "prompt_text",
    "resolve_agent",
    "run_agent",
    "user_text",
]

_READS_INPUT = re.compile(r"\{\{!?\s*input\.")
CORRECTIVE = (
    "Your reply does not fit the required output schema: {errors}. Reply again with only the "
    "JSON object, matching the schema exactly."
)


def node_tools(recipe: Recipe, agent: Agent, node: ir.LLMNode) -> list[Tool]:
    """The tools the node's agent may call: the agent's own, narrowed by the node's
    ``tools:`` (the extension point where a node gains tools of the engine's)."""
    offered = recipe.tools_for(agent)
    if node.tools is None:
        return offered
    return [t for t in offered if t.name in node.tools]


def model_name(model: str | None, base: Path) -> str | None:
    """A ``scripted:`` model's script path, relative to the workflow file."""
    if model is not None and model.startswith("scripted:"):
        path = model.removeprefix("scripted:")
        if not Path(path).is_absolute():
            return f"scripted:{(base / path).resolve()}"
    return model


def prompt_text(graph: ir.Graph, text: ir.Text | None) -> str:
    """A node's prompt as written: the declared prompt it names, or its own text."""
    if text is None:
        return ""
    if text.ref is not None:
        prompt = graph.prompt(text.ref)
        return prompt.text if prompt is not None else ""
    return text.text or ""


def resolve_agent(
    runner: Runner, graph: ir.Graph, base: Path, node: ir.LLMNode, route: ir.Route | None = None
) -> tuple[Recipe, Agent, Model]:
    """The node's recipe, its agent and the model ``route`` calls (default: the primary's).

    A route naming its own model calls it; the primary route (and a route naming none) calls
    the node's baseline: the runner's model override, else the node's ``model:``, else the
    agent's. Raises ``UsageError``: a recipe that does not load, an unknown agent, no model, a
    model whose credentials are missing.
    """
    if node.recipe is not None:
        recipe = runner.recipe(recipe_ref(node.recipe, base))
    else:
        bare = Agent(name=node.name, instructions="")
        recipe = Recipe(
            name=f"graph:{node.name}", tools={}, agents={node.name: bare}, default_agent=node.name
        )
    agent = recipe.agent(node.agent)
    own = route.model if route is not None and route.name != ir.PRIMARY else None
    if own is not None:
        requested: Model | str | None = model_name(own, base)
    else:
        requested = runner.model or model_name(node.routes[0].model, base)
    interrupt_ttl(runner.env)
    return recipe, agent, resolve_model(recipe, agent.name, requested, env=runner.env)


class Agents:
    """The agents of a workflow's LLM nodes, each resolved once (its recipe loaded, its model
    made) and kept: a resume checks every node's before the run is claimed, then the nodes it
    runs use what the check made. Call it with a node and a route (default: the primary)."""

    def __init__(self, runner: Runner, graph: ir.Graph, base: Path) -> None:
        self._args = runner, graph, base
        self._found: dict[tuple[str, str], tuple[Recipe, Agent, Model]] = {}

    def __call__(
        self, node: ir.LLMNode, route: ir.Route | None = None
    ) -> tuple[Recipe, Agent, Model]:
        """See :func:`resolve_agent` (raises its ``UsageError``, keeping nothing)."""
        key = (node.name, route.name if route is not None else ir.PRIMARY)
        if key not in self._found:
            self._found[key] = resolve_agent(*self._args, node, route)
        return self._found[key]

    def check(self) -> Agents:
        """Resolve every route of every LLM node that calls a model; return this (raises
        ``UsageError`` for the first that cannot run here)."""
        graph = self._args[1]
        for node in graph.nodes:
            if isinstance(node, ir.LLMNode):
                for route in node.routes:
                    if not route.skip:
                        self(node, route)
        return self


def agent_setup(
    ctx: NodeContext, node: ir.LLMNode, route: ir.Route | None = None
) -> tuple[Recipe, str, Model]:
    """The node's recipe (its agent's instructions completed, its tools chosen), the agent's
    name and ``route``'s model. Raises ``UsageError`` (see :func:`resolve_agent`)."""
    recipe, agent, model = ctx.agents(node, route)
    parts = [agent.instructions, node_instructions(ctx, node)]
    tools = node_tools(recipe, agent, node)
    own = dataclasses.replace(agent, instructions="\n\n".join(p for p in parts if p), tools=None)
    derived = dataclasses.replace(
        recipe, tools={t.name: t for t in tools}, agents={agent.name: own}, default_agent=agent.name
    )
    if ctx.asyncq is not None:  # interaction: async: the tools and the prompt's section
        derived = with_async_questions(derived, agent.name, ctx.asyncq)
    return derived, agent.name, model


def node_instructions(ctx: NodeContext, node: ir.LLMNode) -> str:
    """What the node adds to its agent's instructions: its ``system:`` prompt rendered, and
    the JSON Schema its reply must fit (when it has an ``output:``)."""
    parts = [ctx.scope.render(prompt_text(ctx.graph, node.system))]
    schema = ctx.graph.schema(node.output)
    if schema is not None:
        parts.append(
            "Reply with one JSON object and nothing else. It must match this JSON Schema:\n"
            + json.dumps(json_schema(schema), ensure_ascii=False)
        )
    return "\n\n".join(p for p in parts if p)


def user_text(ctx: NodeContext, node: ir.LLMNode) -> str:
    """The node's user message: its ``user:`` prompt rendered, then its input as JSON when
    it has one the prompt does not read itself (no ``{{input.…}}`` in it)."""
    raw = prompt_text(ctx.graph, node.user)
    text = ctx.scope.render(raw)
    given = ctx.scope.namespaces.get("input") or {}
    if given and not _READS_INPUT.search(raw):
        shown = json.dumps(given, ensure_ascii=False, indent=2)
        text += ("\n\n" if text else "") + f"Input:\n{shown}"
    return text or "Begin."


def node_output(
    ctx: NodeContext, node: ir.LLMNode, text: str
) -> tuple[dict[str, Any], list[str]]:
    """The node's output read from the agent's reply, and what keeps it from fitting the
    output schema (``[]``: it fits)."""
    schema = ctx.graph.schema(node.output)
    if schema is None:
        return {"text": text}, []
    try:
        value = extract_json(text)
    except ValueError as exc:
        return {}, [str(exc)]
    return conform(schema, value)


async def _drive(ctx: NodeContext, session: AgentSession, step: Any, quiet: bool) -> None:
    guard = auto_resolve_interactions() if quiet else contextlib.nullcontext()
    with guard:
        if ctx.deadline is None:
            await step
        else:
            with anyio.fail_after(ctx.deadline):
                await step


def _book(ctx: NodeContext) -> StoreBook:
    """The run's remembered decisions; the gates' audit goes with the leg's graph events."""

    def later(*events: EventInput) -> None:
        for type_, data in events:
            ctx.events.graph(type_, dict(data))

    return StoreBook(ctx.runner.store, ctx.run_id, ctx.thread_id, later)


async def run_agent(
    ctx: NodeContext, node: ir.LLMNode, run: NodeRun, mode: Mode, route: ir.Route | None = None
) -> NodeOutcome:
    """Run (or resume, or retry) one execution of ``node`` on ``route`` (default: primary)."""
    try:
        recipe, agent, model = agent_setup(ctx, node, route)
    except UsageError as exc:  # fixed where the run goes on (a key set, a recipe repaired)
        return failed(f"the node cannot start: {exc}", "SETUP_FAILED", resumable=True)
    if route is not None and route.name != ir.PRIMARY and (problem := _credentials(model)):
        return failed(f"the route cannot be built: {problem}", "SETUP_FAILED", resumable=True)
    state = run.session or SessionState()
    restore: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    if mode == "resume" and state.paused is not None:
        restore["paused"], answers = session_resume(
            state.paused, state.messages, ctx.interactions, run.scope
        )
    if mode != "start" and state.messages:
        messages = list(state.messages)
        if (
            "paused" not in restore
            and isinstance(messages[-1], AssistantMessage)
            and not (messages[-1].tool_calls)
        ):
            messages.pop()  # a reply cut short by the failure: asked again
        restore["messages"] = messages
    session = create_agent_session(
        recipe, agent=agent, model=model, mode=ctx.surface.mode or ctx.runner.mode,
        ui=ctx.surface.ui, env=ctx.runner.env, cwd=ctx.cwd, run_id=ctx.run_id,
        tool_timeout=ctx.runner.tool_timeout, can_pause=True, channels=ctx.surface.channels,
        inbox=ctx.asyncq.inbox if ctx.asyncq is not None else None, ask_scope=run.scope,
        clock=ctx.runner.clock, decisions=_book(ctx), policy=ctx.policy, **restore,
    )  # fmt: skip
    translator = LegTranslator(  # message ids: <leg>.<node>.<visit>.m<index>
        thread_id=ctx.thread_id, run_id=f"{ctx.agui_run_id}.{run.node}.{run.visit}",
        parent_run_id=None, size=lambda: len(session.messages),
    )  # fmt: skip
    session.on_event(lambda event: ctx.events.agui(*translator.translate(event)))
    quiet = node.interaction == "none"
    if "paused" in restore:
        step = session.resume(answers)
    elif mode == "retry" and restore:
        step = session.retry()
    else:
        step = session.prompt(user_text(ctx, node))
    try:
        await _drive(ctx, session, step, quiet)
        while True:
            if session.status == "aborted":  # a person stopped it (Ctrl-C in a dialog)
                return failed("the node was aborted while asking a person", "ABORTED")
            keep = SessionState(messages=session.messages,
                                paused=checkpoint_paused(session.paused),
                                corrective=state.corrective)  # fmt: skip
            if session.status == "paused" and session.paused is not None:
                return _paused(node, run, session, keep)
            output, errors = node_output(ctx, node, last_text(session.messages))
            if not errors:
                return finished(output)
            if state.corrective:
                return failed(
                    "the reply does not fit the output schema: " + "; ".join(errors),
                    "SCHEMA_MISMATCH",
                    session=keep,
                )
            state = keep.model_copy(update={"corrective": True})
            await _drive(
                ctx, session, session.prompt(CORRECTIVE.format(errors="; ".join(errors))), quiet
            )
    except TimeoutError:
        session.abort("timeout")
        return failed(
            f"the node ran past its time bound ({ctx.deadline:g}s)", "TIMEOUT", resumable=True
        )
    except ModelError as exc:
        keep = SessionState(messages=session.messages, corrective=state.corrective)
        cured_by_a_key = ctx.continuing and exc.error_class == "auth"
        return failed(
            f"{type(exc).__name__}: {exc}", exc.error_class, session=keep,
            resumable=resumable(exc) or cured_by_a_key,
            error_class=exc.error_class, retry_after=exc.retry_after, attempts=exc.attempts,
        )  # fmt: skip
    except PiRecipesError as exc:  # a contract breach, a script run dry: not cured by a retry
        code = getattr(exc, "reason", None) or type(exc).__name__
        return failed(f"{type(exc).__name__}: {exc}", code)


def _credentials(model: Model) -> str | None:
    """What keeps ``model`` from being called in this process (no key), or ``None``."""
    problem = getattr(model, "credentials_problem", None)
    found = problem() if callable(problem) else None
    return str(found) if found else None


class RecipeBackend:
    """The in-process backend (``backend: recipe``, the default): the node's recipe agent runs
    in this process's agent session. It carries async questions."""

    def supports_async_questions(self) -> bool:
        return True

    run = staticmethod(run_agent)


RECIPE_BACKEND = RecipeBackend()


def _paused(
    node: ir.LLMNode, run: NodeRun, session: AgentSession, keep: SessionState
) -> NodeOutcome:
    assert session.paused is not None
    stored = [
        a.interrupt.model_copy(
            update={"metadata": {**(a.interrupt.metadata or {}), "node_id": node.name}}
        )
        for a in session.paused.awaiting
    ]
    return NodeOutcome("paused", interrupts=stored, session=keep)
