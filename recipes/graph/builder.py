"""Workflows in Python: :class:`GraphBuilder` produces the same IR a ``.iter`` file reads to.

::

    g = GraphBuilder()
    g.schema("draft_out", draft="string")
    g.schema("approval_out", approved="bool", feedback="string")
    sys = g.prompt("draft_sys", "You draft release notes.")
    g.agent("draft", recipe="./notes.py", system=sys, output="draft_out")
    g.human("approve", instructions="Approve the notes?", output="approval_out")
    w = g.workflow("release", entry="draft")
    w.edge("draft", "approve")
    w.edge("approve", "done", when="approved")
    w.edge("approve", "draft", when="not approved", loop=("retry", 2))
    w.edge("approve", "fail")
    graph = g.build()

A text given where a prompt goes (``system=``, ``user=``, ``instructions=``) is written in
place; the value :meth:`GraphBuilder.prompt` returns refers to the declared prompt. The builder
checks only what no file could write (an edge given two conditions: ``UsageError`` at once):
validate the result (:func:`recipes.graph.compiler.validate`) or run it, which validates first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from interactions import UsageError
from recipes.graph import ir

__all__ = ["GraphBuilder", "WorkflowBuilder"]


def _text(value: str | ir.Text | None) -> ir.Text | None:
    if value is None or isinstance(value, ir.Text):
        return value
    return ir.Text(text=value)


def _fields(spec: Mapping[str, str | tuple[str, Sequence[str]]]) -> tuple[ir.Field, ...]:
    out = []
    for name, kind in spec.items():
        type_, enum = (kind, ()) if isinstance(kind, str) else (kind[0], tuple(kind[1]))
        out.append(ir.Field(name=name, type=type_, enum=tuple(enum)))  # type: ignore[arg-type]
    return tuple(out)


class WorkflowBuilder:
    """The edges and budget of one workflow (from :meth:`GraphBuilder.workflow`)."""

    def __init__(self, name: str, entry: str | None) -> None:
        self.name = name
        self.entry = entry
        self.edges: list[ir.Edge] = []
        self.budget: ir.Budget | None = None
        self.vars: list[ir.Var] = []

    def edge(
        self,
        src: str,
        dst: str,
        *,
        when: str | None = None,
        when_expr: str | None = None,
        otherwise: bool = False,
        loop: tuple[str, int] | None = None,
        with_: Mapping[str, str] | None = None,
    ) -> WorkflowBuilder:
        """Add ``src -> dst``. ``when="approved"`` / ``when="not approved"`` test a bool field
        of ``src``'s output; ``when_expr`` is a quoted condition; ``otherwise`` makes it the
        ``else`` edge (at most one of the three); ``loop=("retry", 2)`` is ``as retry(2)``;
        ``with_`` maps the input. Raises ``UsageError`` for two of the three."""
        if sum((when is not None, when_expr is not None, otherwise)) > 1:
            raise UsageError(
                f"edge {src} -> {dst}: give one of `when`, `when_expr` and `otherwise` (an edge "
                "is guarded by a field, or by an expression, or is the else edge)"
            )
        condition = None
        if when is not None:
            negated = when.startswith("not ")
            condition = ir.Condition(field=when.removeprefix("not ").strip(), negated=negated)
        elif when_expr is not None:
            condition = ir.Condition(expr=when_expr)
        self.edges.append(
            ir.Edge(
                src=src,
                dst=dst,
                when=condition,
                otherwise=otherwise,
                loop=ir.Loop(name=loop[0], max=loop[1]) if loop else None,
                with_=tuple((with_ or {}).items()),
            )
        )
        return self

    def set_budget(
        self,
        *,
        max_parallel_branches: int | None = None,
        max_duration: str | None = None,
        max_iterations: int | None = None,
    ) -> WorkflowBuilder:
        """Set the workflow's ``budget:``."""
        self.budget = ir.Budget(
            max_parallel_branches=max_parallel_branches,
            max_duration=max_duration,
            max_iterations=max_iterations,
        )
        return self

    def build(self) -> ir.Workflow:
        """The workflow's IR."""
        return ir.Workflow(
            name=self.name,
            entry=self.entry,
            edges=tuple(self.edges),
            budget=self.budget,
            vars=tuple(self.vars),
        )


class GraphBuilder:
    """Declarations in the order they are made; :meth:`build` gives the :class:`ir.Graph`."""

    def __init__(self) -> None:
        self._vars: list[ir.Var] = []
        self._schemas: list[ir.Schema] = []
        self._prompts: list[ir.Prompt] = []
        self._nodes: list[ir.Node] = []
        self._workflows: list[WorkflowBuilder] = []

    def var(
        self,
        name: str,
        type: str,
        *,
        enum: Sequence[str] = (),
        default: str | int | float | bool | None = None,
    ) -> GraphBuilder:
        """Declare a var (``default=None``: a value must be given at launch)."""
        self._vars.append(
            ir.Var(
                name=name,
                type=cast(ir.ValueType, type),
                enum=tuple(enum),
                default=default,
            )
        )
        return self

    def schema(self, name: str, **fields: str | tuple[str, Sequence[str]]) -> GraphBuilder:
        """Declare a schema: ``field="string"`` or ``field=("string", ["a", "b"])`` (an enum)."""
        self._schemas.append(ir.Schema(name=name, fields=_fields(fields)))
        return self

    def prompt(self, name: str, text: str) -> ir.Text:
        """Declare a prompt; returns the reference to pass as ``system=``/``user=``."""
        self._prompts.append(ir.Prompt(name=name, text=text))
        return ir.Text(ref=name)

    def agent(
        self,
        name: str,
        *,
        judge: bool = False,
        system: str | ir.Text | None = None,
        user: str | ir.Text | None = None,
        tools: Sequence[str] | None = None,
        fallbacks: Sequence[ir.Route] = (),
        **props: Any,
    ) -> GraphBuilder:
        """An agent (or ``judge=True``) node; ``props``: ``recipe``, ``agent``, ``model``,
        ``backend``, ``input``, ``output``, ``publish``, ``timeout``, ``interaction``,
        ``description``. ``fallbacks`` are its routes, in order (see :meth:`route`)."""
        self._nodes.append(
            ir.LLMNode(
                name=name,
                judge=judge,
                system=_text(system),
                user=_text(user),
                tools=tuple(tools) if tools is not None else None,
                fallbacks=tuple(fallbacks),
                **props,
            )
        )
        return self

    @staticmethod
    def route(
        name: str,
        *,
        model: str | None = None,
        action: str | None = None,
        on: Sequence[str] | None = None,
        when: str | None = None,
    ) -> ir.Route:
        """A fallback route for :meth:`agent`'s ``fallbacks=``: ``route("cheaper",
        model="anthropic:claude-haiku-4-5")`` or ``route("give_up", action="skip", on=["any"],
        when="vars.policy == 'skip'")``."""
        return ir.Route(
            name=name, model=model, action=action, on=tuple(on) if on is not None else None,
            when=when,
        )  # fmt: skip

    def human(
        self, name: str, *, instructions: str | ir.Text | None = None, **props: Any
    ) -> GraphBuilder:
        """A human node; its ``output=`` schema's fields are its questions."""
        self._nodes.append(ir.HumanNode(name=name, instructions=_text(instructions), **props))
        return self

    def compute(self, name: str, *, expr: Mapping[str, str], **props: Any) -> GraphBuilder:
        """A compute node: one expression per output field."""
        self._nodes.append(ir.ComputeNode(name=name, expr=tuple(expr.items()), **props))
        return self

    def tool(self, name: str, *, command: str, **props: Any) -> GraphBuilder:
        """A tool node running ``command`` with ``bash -c``."""
        self._nodes.append(ir.ToolNode(name=name, command=command, **props))
        return self

    def router(self, name: str, *, mode: str, **props: Any) -> GraphBuilder:
        """A router: ``fan_out_all`` or ``condition``."""
        self._nodes.append(ir.RouterNode(name=name, mode=mode, **props))  # type: ignore[arg-type]
        return self

    def await_answers(
        self, name: str, *, from_: str | None = None, timeout: str | None = None, **props: Any
    ) -> GraphBuilder:
        """An ``await_answers`` node: wait for the async questions (of ``from_``, else of the
        whole run), at most ``timeout`` (mandatory, e.g. ``"30m"``)."""
        self._nodes.append(ir.AwaitAnswersNode(name=name, from_=from_, timeout=timeout, **props))
        return self

    def workflow(self, name: str, *, entry: str | None = None) -> WorkflowBuilder:
        """Start the workflow; add its edges on the returned builder."""
        builder = WorkflowBuilder(name, entry)
        self._workflows.append(builder)
        return builder

    def build(self) -> ir.Graph:
        """The graph declared so far."""
        return ir.Graph(
            vars=tuple(self._vars),
            schemas=tuple(self._schemas),
            prompts=tuple(self._prompts),
            nodes=tuple(self._nodes),
            workflows=tuple(w.build() for w in self._workflows),
        )
