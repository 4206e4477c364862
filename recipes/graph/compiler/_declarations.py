"""Checks of the declarations themselves: names, vars, schemas, prompts, node properties."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, assert_never

from recipes.graph import ir
from recipes.graph.compiler._fallbacks import STAMPS
from recipes.graph.compiler._references import DECLINED
from recipes.graph.language import (
    Diagnostic,
    diag,
    did_you_mean,
    duration_seconds,
    read_json,
    unsafe_references,
)

__all__ = ["check_declarations", "human_field_problem"]

_UNREADABLE = object()


def _duplicates(
    items: Iterable[tuple[str, ir.Pos | None]], code: str, what: str
) -> list[Diagnostic]:
    seen: set[str] = set()
    out = []
    for name, pos in items:
        if name in seen:
            out.append(diag(code, f"{what} `{name}` is declared twice", pos))
        seen.add(name)
    return out


def _check_var(var: ir.Var) -> list[Diagnostic]:
    out = []
    if var.enum and var.type != "string":
        out.append(
            diag(
                "C125",
                f"var `{var.name}` is of type {var.type}; only strings take an enum",
                var.pos,
            )
        )
    for index, value in enumerate(var.enum):
        if value in var.enum[:index]:
            out.append(diag("C127", f"var `{var.name}` lists {value!r} twice", var.pos))
    if var.default is not None and var.enum and var.default not in var.enum:
        out.append(
            diag(
                "C126",
                f"default {var.default!r} of var `{var.name}` is not one of "
                f"{', '.join(map(repr, var.enum))}",
                var.pos,
            )
        )
    if var.type in ("json", "string[]") and isinstance(var.default, str):
        try:
            parsed: Any = read_json(var.default)
        except ValueError:  # not JSON, or too deep to keep
            parsed = _UNREADABLE
        if parsed is _UNREADABLE or (
            var.type == "string[]"
            and not (isinstance(parsed, list) and all(isinstance(v, str) for v in parsed))
        ):
            out.append(
                diag(
                    "C109",
                    f"default of var `{var.name}` is not a JSON {var.type} "
                    '(write it as a backtick raw string: `["a"]`)',
                    var.pos,
                )
            )
    return out


def human_field_problem(field: ir.Field) -> str | None:
    """Why a human node cannot ask for ``field`` (``None``: it can)."""
    if field.type == "json":
        return f"field `{field.name}` is json: no one can answer it in a form"
    if field.type == "string[]" and not field.enum:
        return f"field `{field.name}` is string[] without `[enum: …]`: list the choices"
    return None


def _check_node(graph: ir.Graph, node: ir.Node) -> list[Diagnostic]:
    out = []
    for ref in (node.input, node.output):
        if ref is None:
            continue
        schema = graph.schema(ref)
        if schema is None:
            hint = did_you_mean(ref, (s.name for s in graph.schemas))
            message = f"node `{node.name}` uses schema `{ref}`, not declared{hint}"
            out.append(diag("C002", message, node.pos))
        elif not schema.fields:
            out.append(diag("C140", f"node `{node.name}` uses the empty schema `{ref}`", node.pos))
    texts: list[ir.Text | None] = []
    match node:
        case ir.LLMNode():
            texts = [node.system, node.user]
            out += _timeout(node)
            if node.recipe is None and node.model is None:
                message = f"agent `{node.name}` has neither `recipe:` nor `model:`"
                out.append(diag("C018", message, node.pos))
        case ir.ToolNode():
            out += _timeout(node)
            for unsafe, why in unsafe_references(node.command or ""):
                message = f"tool `{node.name}`: the command's {unsafe.text} stands {why}"
                out.append(diag("P014", message, node.pos))
        case ir.HumanNode():
            texts = [node.instructions]
            out += _human(graph, node)
        case ir.ComputeNode():
            out += _compute(graph, node)
        case ir.RouterNode() | ir.AwaitAnswersNode():
            pass  # a fan-out's edges are _structure's; a gate's timeout is _async's
        case _:
            assert_never(node)
    for text in texts:
        if text is not None and text.ref is not None and graph.prompt(text.ref) is None:
            out.append(
                diag(
                    "C003",
                    f"node `{node.name}` uses prompt `{text.ref}`, not declared"
                    + did_you_mean(text.ref, (p.name for p in graph.prompts)),
                    text.pos or node.pos,
                )
            )
    return out


def _timeout(node: ir.LLMNode | ir.ToolNode) -> list[Diagnostic]:
    if node.timeout is None or duration_seconds(node.timeout) is not None:
        return []
    message = f"timeout {node.timeout!r} of `{node.name}` is not a positive duration"
    return [diag("C122", message, node.pos)]


def _human(graph: ir.Graph, node: ir.HumanNode) -> list[Diagnostic]:
    out = []
    schema = graph.schema(node.output)
    if node.output is None:
        out.append(
            diag(
                "E013",
                f"human node `{node.name}` needs `output:`: its fields are the questions",
                node.pos,
            )
        )
    for field in schema.fields if schema else ():
        problem = human_field_problem(field)
        if problem is not None:
            out.append(diag("P003", f"human node `{node.name}`: {problem}", field.pos))
    return out


def _compute(graph: ir.Graph, node: ir.ComputeNode) -> list[Diagnostic]:
    out = []
    if not node.expr:
        out.append(diag("C039", f"compute node `{node.name}` has no expressions", node.pos))
    for index, (key, _) in enumerate(node.expr):
        if any(key == k for k, _ in node.expr[:index]):
            where = node.expr_pos[index] if index < len(node.expr_pos) else node.pos
            message = f"compute `{node.name}` gives two expressions for `{key}`"
            out.append(diag("E010", message, where))
    schema = graph.schema(node.output)
    if schema is not None and node.expr:
        keys = [k for k, _ in node.expr]
        for key in keys:
            if schema.field(key) is None:
                out.append(
                    diag(
                        "C031",
                        f"compute `{node.name}` sets `{key}`, not in schema `{schema.name}`"
                        + did_you_mean(key, (f.name for f in schema.fields)),
                        node.pos,
                    )
                )
        for field in schema.fields:
            if field.name not in keys:
                out.append(
                    diag(
                        "E013",
                        f"compute `{node.name}` gives no expression for `{field.name}`",
                        node.pos,
                    )
                )
    return out


ENGINE_FIELDS = (*STAMPS, DECLINED)
"""The fields the engine writes on a node's output itself (a fallback route's stamps, a human
node's declined fields): an output schema's field may not start with ``_``."""


def _engine_named(graph: ir.Graph) -> list[Diagnostic]:
    """P013 for each output schema field whose name starts with ``_``, once per field."""
    users: dict[str, list[str]] = {}
    for node in graph.nodes:
        if node.output is not None:
            users.setdefault(node.output, []).append(node.name)
    out = []
    own = ", ".join(f"`{name}`" for name in ENGINE_FIELDS)
    for schema in graph.schemas:
        nodes = users.get(schema.name)
        if not nodes:
            continue
        which = ", ".join(f"`{n}`" for n in nodes)
        for field in schema.fields:
            if field.name.startswith("_"):
                message = (
                    f"field `{field.name}` of schema `{schema.name}` (the output of {which}) "
                    f"starts with `_`: names that start with `_` are the engine's own ({own})"
                )
                out.append(diag("P013", message, field.pos or schema.pos))
    return out


def check_declarations(graph: ir.Graph) -> list[Diagnostic]:
    """Duplicates, reserved names (P013: an output field named like the engine's own), vars,
    schema references, prompts, timeouts, budgets."""
    out = _duplicates(((v.name, v.pos) for v in graph.all_vars()), "E010", "var")
    out += _duplicates(((s.name, s.pos) for s in graph.schemas), "E010", "schema")
    out += _duplicates(((p.name, p.pos) for p in graph.prompts), "E010", "prompt")
    out += _duplicates(((n.name, n.pos) for n in graph.nodes), "C041", "node")
    for schema in graph.schemas:
        out += _duplicates(((f.name, f.pos) for f in schema.fields), "E010", "field")
        for field in schema.fields:
            if field.enum and field.type not in ("string", "string[]"):
                out.append(
                    diag(
                        "C125",
                        f"field `{field.name}` is of type {field.type}; only strings take an enum",
                        field.pos,
                    )
                )
    for var in graph.all_vars():
        out += _check_var(var)
    out += _engine_named(graph)
    for node in graph.nodes:
        if node.name in ir.TERMINALS:
            out.append(diag("C042", f"`{node.name}` is a reserved terminal target", node.pos))
        out += _check_node(graph, node)
    if not graph.workflows:
        out.append(diag("C006", "the file declares no workflow", ir.Pos(graph.file, 1)))
    for extra in graph.workflows[1:]:
        out.append(diag("C007", f"a second workflow `{extra.name}`", extra.pos))
    for workflow in graph.workflows[:1]:
        budget = workflow.budget
        if budget and budget.max_duration and duration_seconds(budget.max_duration) is None:
            out.append(
                diag(
                    "P007",
                    f"max_duration {budget.max_duration!r} is not a positive duration",
                    workflow.pos,
                )
            )
        for count in (budget.max_parallel_branches, budget.max_iterations) if budget else ():
            if count is not None and count < 1:
                out.append(diag("P008", f"budget value {count} is not >= 1", workflow.pos))
    return out
