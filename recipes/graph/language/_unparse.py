"""From the IR back to a workflow file: the text that reads back as the same graph.

Texts are written quoted when they can be, as backtick raw strings when they hold a ``"``, and
as ``|`` block scalars when they span lines; a text no form can carry (a blank line inside a
block, a line starting with spaces...) raises ``UsageError`` rather than writing a file that
would read back as another graph.
"""

from __future__ import annotations

import re
from typing import assert_never

from interactions import UsageError
from recipes.graph import ir

__all__ = ["unparse"]

_WORD = re.compile(r"^[A-Za-z0-9_./~\-][A-Za-z0-9_./~\-:@+]*$")


def _block_ok(text: str) -> bool:
    lines = text.split("\n")
    return (
        all(line.strip() for line in lines)
        and not lines[0][:1].isspace()
        and all(line == line.rstrip() for line in lines)
    )


def scalar(text: str, indent: str = "") -> str:
    """``text`` as a value: quoted, raw, or a block scalar (lines indented under ``indent``)."""
    if "\n" not in text and "\r" not in text:
        if '"' not in text and "\\" not in text:
            return f'"{text}"'
        if "`" not in text:
            return f"`{text}`"
    elif _block_ok(text):
        body = "\n".join(f"{indent}  {line}" for line in text.split("\n"))
        return f"|\n{body}"
    raise UsageError(f"the text {text!r} has no written form in a .iter file")


def _word(text: str) -> str:
    return text if _WORD.match(text) else scalar(text)


def _default(var: ir.Var) -> str:
    value = var.default
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if "e" not in text and "n" not in text else f"{value:.17f}".rstrip("0")
    return scalar(str(value))


def _field(name: str, type_: str, enum: tuple[str, ...]) -> str:
    line = f"{name}: {type_}"
    if enum:
        line += " [enum: " + ", ".join(scalar(v) for v in enum) + "]"
    return line


def _vars(items: tuple[ir.Var, ...], indent: str) -> list[str]:
    out = []
    for var in items:
        line = _field(var.name, var.type, var.enum)
        if var.default is not None:
            line += f" = {_default(var)}"
        out.append(indent + line)
    return out


def _text(value: ir.Text, indent: str) -> str:
    if value.ref is not None:
        return value.ref
    return scalar(value.text or "", indent)


def _put(out: list[tuple[str, str]], key: str, value: str | None, bare: bool = False) -> None:
    if value is not None:
        out.append((key, value if bare else scalar(value, "  ")))


def _props(node: ir.Node) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    _put(out, "description", node.description)
    out += _own_props(node)
    _put(out, "input", node.input, bare=True)
    _put(out, "output", node.output, bare=True)
    _put(out, "publish", node.publish, bare=True)
    out += _own_limits(node)
    return out


def _own_props(node: ir.Node) -> list[tuple[str, str]]:
    """What this kind of node alone has, written after its description."""
    out: list[tuple[str, str]] = []
    match node:
        case ir.LLMNode():
            if node.recipe is not None:
                out.append(("recipe", _word(node.recipe)))
            if node.agent is not None:
                out.append(("agent", _word(node.agent)))
            _put(out, "model", node.model)
            if node.backend is not None:
                out.append(("backend", _word(node.backend)))
            if node.system is not None:
                out.append(("system", _text(node.system, "  ")))
            if node.user is not None:
                out.append(("user", _text(node.user, "  ")))
        case ir.HumanNode():
            if node.instructions is not None:
                out.append(("instructions", _text(node.instructions, "  ")))
        case ir.ToolNode():
            _put(out, "command", node.command)
        case ir.RouterNode():
            out.append(("mode", node.mode))
        case ir.AwaitAnswersNode():
            if node.from_ is not None:
                out.append(("from", node.from_))
            _put(out, "timeout", node.timeout)
        case ir.ComputeNode():
            pass  # its expressions are a block of their own (_node)
        case _:
            assert_never(node)
    return out


def _own_limits(node: ir.Node) -> list[tuple[str, str]]:
    """Its timeout, tools and interaction, written after its schemas."""
    out: list[tuple[str, str]] = []
    match node:
        case ir.LLMNode():
            _put(out, "timeout", node.timeout)
            if node.tools is not None:
                out.append(("tools", "[" + ", ".join(_word(t) for t in node.tools) + "]"))
            _put(out, "interaction", node.interaction, bare=True)
        case ir.ToolNode():
            _put(out, "timeout", node.timeout)
            if node.env:
                out.append(("env", "[" + ", ".join(node.env) + "]"))
        case ir.HumanNode():
            _put(out, "interaction", node.interaction, bare=True)
        case ir.RouterNode() | ir.AwaitAnswersNode() | ir.ComputeNode():
            pass
        case _:
            assert_never(node)
    return out


def _route(route: ir.Route) -> list[str]:
    lines = [f"    {route.name}:"]
    if route.model is not None:
        lines.append(f"      model: {scalar(route.model)}")
    if route.action is not None:
        lines.append(f"      action: {_word(route.action)}")
    if route.when is not None:
        lines.append(f"      when: {scalar(route.when)}")
    if route.on is not None:
        lines.append("      on: [" + ", ".join(_word(c) for c in route.on) + "]")
    return lines


def _node(node: ir.Node) -> list[str]:
    keyword = node.keyword if isinstance(node, ir.LLMNode) else node.kind
    lines = [f"{keyword} {node.name}:"]
    lines += [f"  {key}: {value}" for key, value in _props(node)]
    match node:  # its blocks
        case ir.LLMNode():
            if node.fallbacks:
                lines.append("  fallbacks:")
                for route in node.fallbacks:
                    lines += _route(route)
        case ir.ComputeNode():
            lines.append("  expr:")
            lines += [f"    {key}: {scalar(value, '    ')}" for key, value in node.expr]
        case ir.HumanNode() | ir.ToolNode() | ir.RouterNode() | ir.AwaitAnswersNode():
            pass
        case _:
            assert_never(node)
    return lines


def _edge(edge: ir.Edge) -> str:
    line = f"  {edge.src} -> {edge.dst}"
    if edge.when is not None:
        if edge.when.expr is not None:
            if '"' in edge.when.expr or "\\" in edge.when.expr or "\n" in edge.when.expr:
                raise UsageError(f"the condition {edge.when.expr!r} has no written form")
            line += f' when "{edge.when.expr}"'
        else:
            line += f" when {'not ' if edge.when.negated else ''}{edge.when.field}"
    if edge.otherwise:
        line += " else"
    if edge.loop is not None:
        line += f" as {edge.loop.name}({edge.loop.max})"
    if edge.with_:
        line += " with { " + ", ".join(f"{k}: {scalar(v)}" for k, v in edge.with_) + " }"
    return line


def _workflow(workflow: ir.Workflow) -> list[str]:
    lines = [f"workflow {workflow.name}:"]
    if workflow.entry is not None:
        lines.append(f"  entry: {workflow.entry}")
    budget = workflow.budget
    if budget is not None:
        lines.append("  budget:")
        if budget.max_parallel_branches is not None:
            lines.append(f"    max_parallel_branches: {budget.max_parallel_branches}")
        if budget.max_duration is not None:
            lines.append(f"    max_duration: {scalar(budget.max_duration)}")
        if budget.max_iterations is not None:
            lines.append(f"    max_iterations: {budget.max_iterations}")
    if workflow.vars:
        lines.append("  vars:")
        lines += _vars(workflow.vars, "    ")
    lines += [_edge(e) for e in workflow.edges]
    return lines


def unparse(graph: ir.Graph) -> str:
    """The workflow file of ``graph``: parsing it gives a graph equal to ``graph``.

    Raises ``UsageError`` for a text that has no written form.
    """
    chunks: list[list[str]] = []
    if graph.vars:
        chunks.append(["vars:", *_vars(graph.vars, "  ")])
    for schema in graph.schemas:
        chunks.append(
            [f"schema {schema.name}:"]
            + [f"  {_field(f.name, f.type, f.enum)}" for f in schema.fields]
        )
    for prompt in graph.prompts:
        if prompt.text and not _block_ok(prompt.text):
            raise UsageError(
                f"prompt {prompt.name}: its text has no written form (blank lines "
                "or leading spaces on its first line)"
            )
        chunks.append(
            [f"prompt {prompt.name}:"]
            + [f"  {line}" for line in prompt.text.split("\n") if prompt.text]
        )
    chunks += [_node(node) for node in graph.nodes]
    chunks += [_workflow(w) for w in graph.workflows]
    return "\n\n".join("\n".join(chunk) for chunk in chunks) + "\n"
