"""Checks of an LLM node's fallback routes: C173 (a malformed route, each case with its own fix
line), C175 (a warning: an ``on:`` class no failure has) and P015 (a route's model, the
primary's included, named with a provider this engine does not have: it would pass here and
fail at launch).

Iterion's rules (ADR-087, ADR-091): a route names a model or an action; the only action is
``skip``, which calls nothing (so it names no model) and ends the chain (so it comes last);
route names are unique (a fall-through is reported by them); a ``when:`` gate is evaluated at
dispatch, where only ``vars.*`` exists, and only declared vars (an absent one would read false
and silently disarm the route).
"""

from __future__ import annotations

from recipes.graph import ir
from recipes.graph.language import ARITY, Diagnostic, ExpressionError, compile_expr, diag
from recipes.models import ACCEPTED_FORMS, model_name_problem

__all__ = ["CREDENTIAL_VARS", "STAMPS", "check_credential_vars", "check_fallbacks", "check_models"]

STAMPS = ("_skipped", "_fallback_used", "_served_by", "_backend")
"""The fields a node whose fallback route served (or skipped) it carries beside its schema's."""


CREDENTIAL_VARS = ("llm_families", "plan_review")
"""The vars the engine injects at launch from the credentials, when a workflow declares them."""


def check_credential_vars(graph: ir.Graph) -> list[Diagnostic]:
    """P009 for a credential-derived var declared so that its injected value cannot fit."""
    out = []
    for var in graph.all_vars():
        if var.name == "llm_families" and var.type not in ("string[]", "json", "string"):
            out.append(diag("P009", f"var `llm_families` is a {var.type}; it receives the list "
                            "of credentialed model families", var.pos))  # fmt: skip
        elif var.name == "plan_review":
            missing = [m for m in ("on", "off") if var.enum and m not in var.enum]
            default = var.default
            if var.type != "string" or missing or (
                isinstance(default, str) and default not in ("auto", "on", "off")
            ):
                why = "var `plan_review` must be a string taking `auto`, `on` and `off`"
                out.append(diag("P009", why, var.pos))
    return out


def _c173(node: ir.LLMNode, route: ir.Route, why: str, fix: str) -> Diagnostic:
    message = f"{node.keyword} `{node.name}`: fallback route `{route.name}` {why}"
    return diag("C173", message, route.pos or node.pos, fix=fix)


def _check_when(
    node: ir.LLMNode, route: ir.Route, declared: set[str], when: str
) -> list[Diagnostic]:
    try:
        expr = compile_expr(when)
    except ExpressionError as exc:
        return [_c173(node, route, f"has a `when:` that does not parse ({exc}): {when!r}",
                      "Write the gate as an expression over vars, strings in single quotes: "
                      "`when: \"vars.policy == 'skip'\"`.")]  # fmt: skip
    out = []
    for name, count, _ in expr.calls():
        least, most = ARITY.get(name, (-1, -1))
        if not least <= count <= most:
            out.append(_c173(node, route, f"calls `{name}` with {count} argument(s) in its "
                             "`when:`, which the evaluator cannot do",
                             "Use a built-in with its number of arguments (see the expression "
                             "language in docs/workflows.md)."))  # fmt: skip
    for path, _ in expr.paths():
        if path[0] != "vars" or len(path) < 2:
            out.append(_c173(node, route, f"reads `{'.'.join(path)}` in its `when:`; a route "
                             "gate is evaluated at dispatch, where only `vars.*` exists",
                             "Gate the route on a var only (`vars.<name>`); compute anything "
                             "else into a var's value at launch."))  # fmt: skip
        elif path[1] not in declared:
            out.append(_c173(node, route, f"reads the undeclared var `{path[1]}` in its "
                             "`when:`; at run time it would read as false and silently disarm "
                             "the route",
                             f"Declare `{path[1]}` in `vars:` (with the values the gate "
                             "tests), or fix the name."))  # fmt: skip
    return out


def _check_route(
    node: ir.LLMNode, route: ir.Route, last: bool, declared: set[str]
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if route.action is not None and route.action not in ir.FALLBACK_ACTIONS:
        out.append(_c173(
            node, route, f"declares the unknown action {route.action!r}; the only action is "
            "`skip`", "Write `action: skip` for a route that completes the node with a "
            "zero-value output, or remove `action:` and give a `model:`.",
        ))  # fmt: skip
    elif route.skip and route.model is not None:
        out.append(_c173(node, route, "declares action: skip together with a model: a skip "
                         "route calls nothing",
                         f"Remove `model:` from route `{route.name}`, or remove `action: skip` "
                         "to make it a model route."))  # fmt: skip
    elif route.skip and not last:
        out.append(_c173(node, route, "is an action: skip route but not the last one: skip ends "
                         "the chain, so the routes after it are unreachable",
                         f"Move `{route.name}` to the end of `fallbacks:`, or remove the routes "
                         "after it."))  # fmt: skip
    if route.action is None and route.model is None:
        out.append(_c173(node, route, "declares neither a model nor an action: it would repeat "
                         "the call that just failed",
                         f'Give route `{route.name}` a `model: "provider:model"`, or '
                         "`action: skip`."))  # fmt: skip
    if route.on == ():
        out.append(_c173(node, route, "has an empty `on:` list: no failure would ever reach it",
                         "List the failure classes that advance to it (`on: [usage_window, "
                         "unavailable]`), or drop `on:` for that default."))  # fmt: skip
    for trigger in route.on or ():
        if trigger not in ir.FALLBACK_TRIGGERS:
            message = (f"{node.keyword} `{node.name}`: fallback route `{route.name}` lists the "
                       f"unknown failure class {trigger!r} in `on:`; no failure will match it")
            out.append(diag("C175", message, route.pos or node.pos))  # fmt: skip
    if route.when is not None:
        out += _check_when(node, route, declared, route.when)
    return out


def check_fallbacks(graph: ir.Graph) -> list[Diagnostic]:
    """C173 and C175 for every LLM node's ``fallbacks:``; P009 for the credential vars."""
    declared = {v.name for v in graph.all_vars()}
    out = check_credential_vars(graph)
    for node in graph.nodes:
        if not isinstance(node, ir.LLMNode):
            continue
        seen = {ir.PRIMARY}
        for index, route in enumerate(node.fallbacks):
            if not route.name.isidentifier():
                out.append(_c173(node, route, "has a name that is not an identifier",
                                 "Name routes with letters, digits and `_`."))  # fmt: skip
            elif route.name in seen:
                what = ("the name of the node's own route" if route.name == ir.PRIMARY
                        else "the name of an earlier route")  # fmt: skip
                out.append(_c173(node, route, f"reuses {what}: routes are reported by name, so "
                                 "names must be unique",
                                 f"Rename one of the routes called `{route.name}`."))  # fmt: skip
            seen.add(route.name)
            out += _check_route(node, route, index == len(node.fallbacks) - 1, declared)
    return out


def check_models(graph: ir.Graph) -> list[Diagnostic]:
    """P015 for every route of an LLM node (its primary included) whose ``model:`` is not a
    ``provider:model`` name of a provider this engine has; the fix line lists the forms."""
    fix = "Name the model in one of the accepted forms: " + "; ".join(ACCEPTED_FORMS) + "."
    out = []
    for node in graph.nodes:
        if not isinstance(node, ir.LLMNode):
            continue
        for route in node.routes:
            if route.model is None or "{{" in route.model:
                continue
            problem = model_name_problem(route.model)
            if problem is None:
                continue
            where = (f"{node.keyword} `{node.name}`" if route.name == ir.PRIMARY else
                     f"{node.keyword} `{node.name}`: fallback route `{route.name}`")  # fmt: skip
            message = f"{where} names the model {route.model!r}: {problem}"
            out.append(diag("P015", message, route.pos or node.pos, fix=fix))
    return out
