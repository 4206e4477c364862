"""Checks of what texts and expressions refer to: vars, outputs and their fields, artifacts,
loops, and the expressions' own syntax and built-in calls."""

from __future__ import annotations

from typing import assert_never

from recipes.graph import ir
from recipes.graph.compiler._analysis import Plan
from recipes.graph.compiler._fallbacks import STAMPS
from recipes.graph.language import (
    ARITY,
    OUTSIDE_SUBSET,
    Diagnostic,
    ExpressionError,
    compile_expr,
    diag,
    did_you_mean,
    references,
)

__all__ = ["DECLINED", "RUN_MEMBERS", "check_references", "input_fields", "output_fields"]

DECLINED = "_declined"
"""A human node's list of the fields whose questions were declined (absent when none was)."""
RUN_MEMBERS = ("id", "elapsed_seconds", "iterations")
"""What ``{{run.…}}`` offers."""


def output_fields(graph: ir.Graph, node: ir.Node) -> set[str] | None:
    """The fields a node's output has (``None``: not known statically); an LLM node with
    fallback routes has the stamps of a fall-through too (``_skipped``...)."""
    stamps: set[str] = set()
    unschemed: set[str] | None = None  # the fields of an output without a schema
    match node:
        case ir.LLMNode():
            stamps, unschemed = set(STAMPS) if node.fallbacks else set(), {"text"}
        case ir.HumanNode():  # the questions declined are listed, when there are any
            stamps = {DECLINED}
        case ir.ComputeNode():
            unschemed = {k for k, _ in node.expr}
        case ir.AwaitAnswersNode():
            unschemed = {"answers"}
        case ir.ToolNode() | ir.RouterNode():
            pass
        case _:
            assert_never(node)
    schema = graph.schema(node.output)
    if schema is not None:
        return {f.name for f in schema.fields} | stamps
    return None if unschemed is None else unschemed | stamps


def input_fields(plan: Plan, name: str, seen: frozenset[str] = frozenset()) -> set[str] | None:
    """The fields node ``name``'s input may have: what any edge into it carries (its ``with``
    keys, else its source's output; a router passes its own input on), united (``None``: not
    known statically)."""
    graph = plan.graph
    fields: set[str] = set()
    for edge in graph.workflow.edges:
        if edge.dst != name:
            continue
        source = graph.node(edge.src)
        given: set[str] | None
        if edge.with_:
            given = {key for key, _ in edge.with_}
        elif source is None:
            given = None
        elif isinstance(source, ir.RouterNode):
            seen_here = seen | {name}
            given = (
                set() if source.name in seen_here else input_fields(plan, source.name, seen_here)
            )
        else:
            given = output_fields(graph, source)
        if given is None:
            return None
        fields |= given
    return fields


class _Checker:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.graph = plan.graph
        self.vars = {v.name for v in self.graph.all_vars()}
        self.artifacts = {n.publish for n in self.graph.nodes if n.publish}
        self.out: list[Diagnostic] = []

    def path(self, path: tuple[str, ...], what: str, pos: ir.Pos | None) -> None:
        """Check one reference path (``vars.x``, ``outputs.node.field``...)."""
        head = path[0]
        if head in OUTSIDE_SUBSET:
            self.out.append(
                diag("S001", f"{what}: `{head}` references are outside the subset", pos)
            )
        elif head == "vars" and path[1] not in self.vars:
            hint = did_you_mean(path[1], self.vars)
            self.out.append(diag("C033", f"{what}: no var `{path[1]}`{hint}", pos))
        elif head == "outputs":
            node = self.graph.node(path[1])
            if node is None:
                hint = did_you_mean(path[1], (n.name for n in self.graph.nodes))
                self.out.append(diag("C029", f"{what}: no node `{path[1]}`{hint}", pos))
            elif len(path) > 2:
                fields = output_fields(self.graph, node)
                if fields is not None and path[2] not in fields:
                    hint = did_you_mean(path[2], fields)
                    message = f"{what}: `{path[1]}` has no output field `{path[2]}`{hint}"
                    self.out.append(diag("C031", message, pos))
        elif head == "artifacts" and path[1] not in self.artifacts:
            hint = did_you_mean(path[1], self.artifacts)
            self.out.append(diag("C035", f"{what}: no node publishes `{path[1]}`{hint}", pos))
        elif head == "loop" and (
            path[1] not in self.plan.loops or len(path) < 3 or path[2] not in ("iteration", "max")
        ):
            self.out.append(
                diag(
                    "C004",
                    f"{what}: `{'.'.join(path)}` is not `loop.<declared loop>.iteration|max`",
                    pos,
                )
            )
        elif head == "run" and path[1] not in RUN_MEMBERS:
            self.out.append(
                diag("C004", f"{what}: `run.{path[1]}` is not one of {', '.join(RUN_MEMBERS)}", pos)
            )

    def text(self, text: str | None, what: str, pos: ir.Pos | None) -> None:
        for ref in references(text or ""):
            if not ref.path:
                self.out.append(diag("C004", f"{what}: {ref.text} is not a reference", pos))
            else:
                self.path(ref.path, what, pos)

    def expression(self, text: str, what: str, pos: ir.Pos | None, bare: set[str] | None) -> None:
        try:
            expr = compile_expr(text)
        except ExpressionError as exc:
            self.out.append(diag("C040", f"{what}: {exc}: {text!r}", pos))
            return
        for name, count, _ in expr.calls():
            if name not in ARITY:
                hint = did_you_mean(name, ARITY)
                self.out.append(diag("C040", f"{what}: unknown function `{name}`{hint}", pos))
            elif not ARITY[name][0] <= count <= ARITY[name][1]:
                least, most = ARITY[name]
                takes = str(least) if least == most else f"{least} or more"
                self.out.append(
                    diag("C138", f"{what}: `{name}` takes {takes} argument(s), got {count}", pos)
                )
        params = expr.parameters()
        for path, _ in expr.paths():
            if path[0] in params:
                continue
            if path[0] in ("vars", "outputs", "artifacts", "loop", "run", "input"):
                if len(path) > 1:
                    self.path(path, what, pos)
            elif path[0] in OUTSIDE_SUBSET:
                self.path(path, what, pos)
            elif bare is None:
                self.out.append(
                    diag(
                        "C040",
                        f"{what}: unknown name `{path[0]}` (use `input.`, `vars.`, `outputs.`...)",
                        pos,
                    )
                )
            elif bare and path[0] not in bare:
                hint = did_you_mean(path[0], bare)
                message = f"{what}: the source has no output field `{path[0]}`{hint}"
                self.out.append(diag("C014", message, pos))


def check_references(plan: Plan) -> list[Diagnostic]:
    """Every template and expression of the workflow refers to what exists."""
    checker = _Checker(plan)
    graph = plan.graph
    used_prompts: set[str] = set()
    for node in graph.nodes:
        texts: list[ir.Text | None] = []
        match node:
            case ir.LLMNode():
                texts = [node.system, node.user]
            case ir.HumanNode():
                texts = [node.instructions]
            case ir.ToolNode():
                checker.text(node.command, f"command of `{node.name}`", node.pos)
            case ir.ComputeNode():
                for i, (key, expression) in enumerate(node.expr):
                    at = node.expr_pos[i] if i < len(node.expr_pos) else node.pos
                    checker.expression(expression, f"`{node.name}.{key}`", at, None)
            case ir.RouterNode() | ir.AwaitAnswersNode():
                pass  # no text of their own
            case _:
                assert_never(node)
        for text in texts:
            if text is None:
                continue
            if text.ref is not None:
                used_prompts.add(text.ref)
            else:
                checker.text(text.text, f"text of `{node.name}`", text.pos)
    for prompt in graph.prompts:
        if prompt.name in used_prompts:
            checker.text(prompt.text, f"prompt `{prompt.name}`", prompt.pos)
    for edge in graph.workflow.edges if graph.workflows else ():
        for key, value in edge.with_:
            checker.text(value, f"`with {key}` of {edge.src} -> {edge.dst}", edge.pos)
        if edge.when is not None and edge.when.expr is not None:
            source = graph.node(edge.src)
            if isinstance(source, ir.RouterNode):  # its output is its input
                fields = input_fields(plan, source.name)
            else:
                fields = output_fields(graph, source) if source is not None else None
            checker.expression(
                edge.when.expr,
                f"condition of {edge.src} -> {edge.dst}",
                edge.pos,
                fields if fields is not None else set(),
            )
    return checker.out
