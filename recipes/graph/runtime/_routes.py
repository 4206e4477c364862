"""An LLM node's route chain at run time: its primary model, then its ``fallbacks:`` routes.

At dispatch, each route's ``when:`` gate is evaluated over the run's vars: false removes the
route; an evaluation error deactivates it with a ``fallback_when_failed`` warning event (a
broken gate must not take down the primary it backs up). The walk then runs the node on the
primary route; when a model call fails, the first later route whose ``on:`` accepts the
failure's class takes over, in a fresh conversation, after a ``model_fallback`` event. An
unclassified failure advances to a model route whatever its ``on:`` (a safety net), but never
to a *filtered* skip route: turning a failure nobody could describe into a zero-value success
would be a lie; ``on: [any]`` opts in. A skip route completes the node with every field of its
output schema at its zero value, stamped ``_skipped``, ``_fallback_used``, ``_served_by`` (the
skip route) and ``_backend`` (the last route that ran). A node served by a later model route
is stamped ``_fallback_used``, ``_served_by`` and ``_backend``.

A fallback route that cannot be built (its model has no key here, its recipe does not load,
its backend is unknown or cannot carry the node's async questions) calls nothing: the walk
passes over it with the failure that led to it, recorded by a ``model_fallback`` event stamped
``build_failed`` (Iterion's ADR-091: after a usage window, an unbuildable rescue route does not
disarm the skip route behind it).

A route's call past the node's ``timeout:`` and a reply that does not fit the output schema
(after its corrective turn) are unclassified failures too. Each later route gets the node's
``timeout:`` afresh, capped by what is left of the run's ``max_duration``; a failure met once
that is spent takes no route (the run is out of time: the engine fails it ``BUDGET_EXCEEDED``).

When no route takes the failure, the node fails; resumably when any failure of the walk was of
a class that passes with time (``usage_window``, ``unavailable``, ``transient_exhausted``), with
the longest wait a provider asked for. A node paused on a fallback route resumes on it; a retry
walks the chain again from the primary.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from interactions import UsageError
from recipes import tracing
from recipes.graph import ir
from recipes.graph.language import ExpressionError, compile_expr, truthy
from recipes.graph.runtime._asyncq import NodeQuestions
from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome, failed, finished
from recipes.graph.runtime._dispatch import run_on_backend
from recipes.graph.runtime._state import NodeRun

__all__ = ["accepts", "active_routes", "next_route", "run_llm", "zero_output"]

logger = logging.getLogger("recipes.graph")

_ZERO: dict[str, Any] = {
    "string": "", "bool": False, "int": 0.0, "float": 0.0, "json": None, "string[]": [],
}  # fmt: skip
"""Each type's zero value; numbers as floats, as a JSON round-trip gives them."""


@dataclass(frozen=True)
class Inactive:
    """A route whose ``when:`` could not be evaluated, and why."""

    route: ir.Route
    error: str


def active_routes(
    node: ir.LLMNode, vars: dict[str, Any]
) -> tuple[list[ir.Route], list[Inactive]]:
    """The node's chain at dispatch: the routes whose ``when:`` holds over ``vars`` (the
    primary always), and those whose gate failed to evaluate."""
    chain: list[ir.Route] = []
    broken: list[Inactive] = []
    for route in node.routes:
        if route.when is None:
            chain.append(route)
            continue
        try:
            holds = truthy(compile_expr(route.when).evaluate({"vars": vars}))
        except (ExpressionError, ArithmeticError, TypeError, ValueError) as exc:
            broken.append(Inactive(route, str(exc)))
            continue
        if holds:
            chain.append(route)
    return chain, broken


def accepts(route: ir.Route, error_class: str) -> bool:
    """Whether a failure of ``error_class`` on the route before may advance to ``route``."""
    triggers = route.triggers
    if "any" in triggers:
        return True
    if error_class == "unclassified":
        return not route.skip  # a filtered skip refuses what nobody could describe
    return error_class in triggers


def next_route(chain: list[ir.Route], after: int, error_class: str) -> int | None:
    """The index of the first route after ``after`` that takes the failure (``on:`` filters a
    route, it does not end the chain), or ``None``."""
    return next(
        (i for i in range(after + 1, len(chain)) if accepts(chain[i], error_class)), None
    )


def zero_output(ctx: NodeContext, node: ir.LLMNode) -> dict[str, Any]:
    """Every field of the node's output schema at its zero value (``{"text": ""}`` without a
    schema)."""
    schema = ctx.graph.schema(node.output)
    if schema is None:
        return {"text": ""}
    return {f.name: list(_ZERO[f.type]) if f.type == "string[]" else _ZERO[f.type]
            for f in schema.fields}  # fmt: skip


def _model_name(ctx: NodeContext, node: ir.LLMNode, route: ir.Route) -> str:
    if route.skip:
        return ""
    try:
        return ctx.agents(node, route)[2].name
    except UsageError:
        return route.model or ""


def _provider(model: str) -> str:
    return model.partition(":")[0] if ":" in model else ""


def _fallback_event(
    ctx: NodeContext, node: ir.LLMNode, run: NodeRun, source: ir.Route, target: ir.Route,
    outcome: NodeOutcome, built: bool,
) -> None:  # fmt: skip
    from_model, to_model = _model_name(ctx, node, source), _model_name(ctx, node, target)
    data: dict[str, Any] = {
        "node_id": node.name, "visit": run.visit, "branch": run.branch,
        "from_route": source.name, "to_route": "" if target.skip else target.name,
        "from_backend": source.name, "to_backend": "" if target.skip else target.name,
        "from_model": from_model, "to_model": to_model,
        "from_provider": _provider(from_model), "to_provider": _provider(to_model),
        "reason": outcome.error_class, "attempts": outcome.attempts, "error": outcome.error,
    }  # fmt: skip
    if target.skip:
        data["to_action"] = "skip"
        data["served_by"] = target.name
    if not built:
        data["build_failed"] = True
    ctx.events.graph("model_fallback", data)
    tracing.event("route_fallback", data)


def _exhausted(failures: list[tuple[ir.Route, NodeOutcome]]) -> NodeOutcome:
    """The node's failure once no route takes the last one."""
    last = failures[-1][1]
    if len(failures) == 1:
        return last
    passing = [o for _, o in failures if o.error_class is not None and o.resumable]
    waits = [o.retry_after for o in passing if o.retry_after is not None]
    error = "every route failed: " + "; ".join(f"{r.name}: {o.error}" for r, o in failures)
    why = passing[-1] if passing else last  # the code says why a retry may cure it
    return failed(
        error, why.code or "", resumable=bool(passing), session=last.session,
        error_class=why.error_class, retry_after=max(waits) if waits else None,
        attempts=sum(o.attempts for _, o in failures),
    )  # fmt: skip


UNCLASSIFIED_CODES = ("TIMEOUT", "SCHEMA_MISMATCH")
"""A node's own failures that no model error class describes: a route's call past the node's
``timeout:``, a reply that does not fit the output schema after its corrective turn."""


def _classified(outcome: NodeOutcome) -> NodeOutcome:
    """``outcome``, its class ``unclassified`` when it is one of :data:`UNCLASSIFIED_CODES`."""
    failed_ = outcome.status == "failed" and outcome.error_class is None
    if failed_ and outcome.code in UNCLASSIFIED_CODES:
        outcome.error_class = "unclassified"
    return outcome


BUILD_CODES = ("SETUP_FAILED", "UNKNOWN_BACKEND", "CAPABILITY_UNSUPPORTED")
"""A route's failures before any call: it could not be built."""


def _passed_over(outcome: NodeOutcome, before: NodeOutcome) -> NodeOutcome:
    """The failure of a route that could not be built, carrying the class of the failure that
    led to it (``before``), which the walk goes on with; it calls nothing, waits for nothing."""
    return failed(outcome.error or "", outcome.code or "", error_class=before.error_class)


def _stamp(outcome: NodeOutcome, served_by: ir.Route) -> NodeOutcome:
    if outcome.status == "finished" and outcome.output is not None:
        outcome.output = {**outcome.output, "_fallback_used": True,
                          "_served_by": served_by.name, "_backend": served_by.name}  # fmt: skip
    return outcome


async def run_llm(ctx: NodeContext, node: ir.LLMNode, run: NodeRun, mode: Mode) -> NodeOutcome:
    """Run one execution of ``node`` along its route chain (see the module docstring)."""
    if not node.fallbacks:
        return await run_on_backend(ctx, node, run, mode, node.routes[0])
    chain, broken = active_routes(node, dict(ctx.scope.namespaces.get("vars") or {}))
    if mode != "resume":
        for inactive in broken:
            logger.warning("node %s: the when: of fallback route %s failed (%s); route "
                           "inactive", node.name, inactive.route.name, inactive.error)  # fmt: skip
            ctx.events.graph("fallback_when_failed", {
                "node_id": node.name, "visit": run.visit, "branch": run.branch,
                "route": inactive.route.name, "when": inactive.route.when,
                "error": inactive.error, "level": "warning",
            })  # fmt: skip
    names = [r.name for r in chain]
    index = names.index(run.route) if mode == "resume" and run.route in names else 0
    if index == 0 and run.route != ir.PRIMARY:  # a retry starts over on the primary, afresh
        run.route, run.session = ir.PRIMARY, None
    failures: list[tuple[ir.Route, NodeOutcome]] = []
    ran = chain[index]  # the last route that ran (one that could not be built did not)
    while True:
        route = chain[index]
        outcome = _classified(await run_on_backend(ctx, node, run, mode, route))
        built = not (failures and outcome.status == "failed" and outcome.code in BUILD_CODES)
        if built:
            ran = route
        else:
            outcome = _passed_over(outcome, failures[-1][1])
        if outcome.status != "failed" or outcome.error_class is None or ctx.spent():
            return _stamp(outcome, route) if index > 0 else outcome  # spent: the run's bound
        failures.append((route, outcome))
        found = next_route(chain, index, outcome.error_class)
        if found is None:
            return _exhausted(failures)
        target = chain[found]
        _fallback_event(ctx, node, run, route, target, outcome, built)
        if target.skip:
            output = zero_output(ctx, node) | {
                "_skipped": True, "_fallback_used": True, "_served_by": target.name,
                "_backend": ran.name,
            }  # fmt: skip
            run.route = target.name
            return finished(output)
        index, mode = found, "start"
        run.route, run.session = target.name, None
        if ctx.bound is not None:  # the route's own time, within what the run has left
            ctx = dataclasses.replace(ctx, deadline=ctx.bound())
        if isinstance(ctx.asyncq, NodeQuestions):  # it may ask the primary's questions again
            ctx.asyncq.new_conversation()
