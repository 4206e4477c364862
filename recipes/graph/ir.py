"""The typed IR of a workflow file: what the parser and the builder both produce.

Plain frozen dataclasses. Positions (``pos``) say where a declaration was written and take no
part in equality, so a file parsed, written back (:func:`recipes.graph.language.unparse`) and
parsed again compares equal to the first reading, and a graph built in Python
(:mod:`recipes.graph.builder`) compares equal to the same graph written as a file.

A node's **route chain** (:attr:`LLMNode.routes`: its primary model, then its ``fallbacks:``
routes in declaration order) and its **tool set** (:attr:`LLMNode.tools`, a subset of its
recipe's tools) are where fallback routes and async questions plug in; ``interaction`` is kept
as written.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal, TypeAlias

__all__ = [
    "DEFAULT_TRIGGERS",
    "FALLBACK_ACTIONS",
    "FALLBACK_TRIGGERS",
    "PRIMARY",
    "TERMINALS",
    "TYPES",
    "AwaitAnswersNode",
    "Budget",
    "ComputeNode",
    "Condition",
    "Edge",
    "Field",
    "Graph",
    "HumanNode",
    "LLMNode",
    "Loop",
    "Node",
    "Pos",
    "Prompt",
    "Route",
    "RouterNode",
    "Schema",
    "Text",
    "ToolNode",
    "Var",
    "Workflow",
]


@dataclass(frozen=True)
class Pos:
    """Where something was written: a file and a 1-based line and column."""

    file: str
    line: int
    col: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


TYPES = ("string", "bool", "int", "float", "json", "string[]")
"""The value types of vars and schema fields."""
TERMINALS = ("done", "fail")
"""The reserved edge targets: the run finishes, or fails."""

PRIMARY = "primary"
"""The name of an LLM node's own route (its ``model:``), first in its chain."""
FALLBACK_TRIGGERS = ("usage_window", "auth", "unavailable", "transient_exhausted", "any")
"""The failure classes a route's ``on:`` may name (``any``: every model failure)."""
DEFAULT_TRIGGERS = ("usage_window", "unavailable")
"""A route's ``on:`` when it declares none (never ``auth`` nor ``any`` by default)."""
FALLBACK_ACTIONS = ("skip",)
"""What a route may do instead of calling a model: ``skip`` completes the node with a
zero-value output stamped ``_skipped``."""

ValueType = Literal["string", "bool", "int", "float", "json", "string[]"]


@dataclass(frozen=True, kw_only=True)
class Field:
    """A schema field: its name, type and, for strings, the values it may take."""

    name: str
    type: ValueType
    enum: tuple[str, ...] = ()
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Var:
    """A workflow variable; ``default`` ``None`` means a value must be given at launch."""

    name: str
    type: ValueType
    enum: tuple[str, ...] = ()
    default: str | int | float | bool | None = None
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Schema:
    """A named set of fields: a node's input or output shape."""

    name: str
    fields: tuple[Field, ...] = ()
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def field(self, name: str) -> Field | None:
        """The field called ``name``, if any."""
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """A named, templated text (``{{vars.x}}``, ``{{input.x}}``, ``{{outputs.node.field}}``)."""

    name: str
    text: str
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Text:
    """A prompt by name (``ref``) or written in place (``text``): exactly one is set."""

    ref: str | None = None
    text: str | None = None
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Route:
    """One route an LLM node's call may take, named.

    ``model`` is the model it calls (``None``: the node's baseline, the recipe's) on
    ``backend`` (``None``: the node's; a ``{{vars.x}}`` reference is resolved when the node
    runs); ``action`` ``skip`` instead completes the node with a zero-value output. ``on`` lists
    the failure classes of the route before that advance to this one (``None``:
    :data:`DEFAULT_TRIGGERS`); ``when`` is a condition over ``vars.*`` deciding, at dispatch,
    whether the route is in the chain at all. The primary route (:data:`PRIMARY`) has only a
    model and a backend.
    """

    name: str
    model: str | None = None
    backend: str | None = None
    action: str | None = None
    on: tuple[str, ...] | None = None
    when: str | None = None
    pos: Pos | None = field(default=None, compare=False, repr=False)

    @property
    def triggers(self) -> tuple[str, ...]:
        """The classes that advance to this route (``on:``, or the default)."""
        return DEFAULT_TRIGGERS if self.on is None else self.on

    @property
    def skip(self) -> bool:
        """Whether this is an ``action: skip`` route."""
        return self.action == "skip"


@dataclass(frozen=True, kw_only=True)
class _Node:
    """What every node has. ``kind`` names the node type as the language spells it."""

    kind: ClassVar[str] = ""
    name: str
    description: str | None = None
    input: str | None = None
    output: str | None = None
    publish: str | None = None
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class LLMNode(_Node):
    """An ``agent`` (or ``judge``) node: a recipe's agent, with the recipe's tools.

    ``recipe`` names the recipe (a file relative to the workflow file, or a module reference;
    ``None``: a bare agent with no tools); ``agent`` one of its agents (default: the recipe's
    default); ``model`` the model (default: the agent's, then the recipe's demo model);
    ``tools`` restricts the recipe's tools to these names (``None``: all of the agent's);
    ``fallbacks`` are the routes tried after the primary, in order, when its model fails.
    """

    kind: ClassVar[str] = "agent"
    judge: bool = False
    recipe: str | None = None
    agent: str | None = None
    model: str | None = None
    system: Text | None = None
    user: Text | None = None
    timeout: str | None = None
    tools: tuple[str, ...] | None = None
    interaction: str | None = None
    backend: str | None = None
    """What runs the agent: ``recipe`` (in-process, the default) or ``pi`` (a subprocess
    speaking the RPC protocol); see :mod:`recipes.graph.backends`."""
    fallbacks: tuple[Route, ...] = ()

    @property
    def routes(self) -> tuple[Route, ...]:
        """The route chain tried in order: the primary route (the node's model on its backend),
        then the ``fallbacks:`` (each on the node's backend unless it names its own)."""
        primary = Route(name=PRIMARY, model=self.model, backend=self.backend)
        rest = (r if r.backend or r.skip else replace(r, backend=self.backend)
                for r in self.fallbacks)  # fmt: skip
        return (primary, *rest)

    @property
    def keyword(self) -> str:
        """``agent`` or ``judge``."""
        return "judge" if self.judge else "agent"


@dataclass(frozen=True, kw_only=True)
class HumanNode(_Node):
    """A ``human`` node: the run pauses; the answers to its output fields are its output."""

    kind: ClassVar[str] = "human"
    instructions: Text | None = None
    interaction: str | None = None


@dataclass(frozen=True, kw_only=True)
class AwaitAnswersNode(_Node):
    """An ``await_answers`` node: the sync point of async questions. Done when no async
    question is pending (of the node ``from_``, or of the whole run); fails at ``timeout``.
    Its output is ``{answers: [{interaction_id, node, question, answer}, ...]}``."""

    kind: ClassVar[str] = "await_answers"
    from_: str | None = None
    timeout: str | None = None


@dataclass(frozen=True, kw_only=True)
class ComputeNode(_Node):
    """A ``compute`` node: bounded expressions, one per output field, in order."""

    kind: ClassVar[str] = "compute"
    expr: tuple[tuple[str, str], ...] = ()
    expr_pos: tuple[Pos, ...] = field(default=(), compare=False, repr=False)
    """Where each expression is written (its line), in ``expr``'s order; empty when built
    in code."""


@dataclass(frozen=True, kw_only=True)
class ToolNode(_Node):
    """A ``tool`` node: a shell command (``bash -c``) whose JSON stdout is its output."""

    kind: ClassVar[str] = "tool"
    command: str | None = None
    timeout: str | None = None
    env: tuple[str, ...] = ()
    """The credentials of the engine's environment the command gets, by name
    (``env: [GITHUB_TOKEN]``): every other credential-looking variable is left out of it."""


@dataclass(frozen=True, kw_only=True)
class RouterNode(_Node):
    """A ``router``: ``fan_out_all`` takes every edge at once; ``condition`` chooses one."""

    kind: ClassVar[str] = "router"
    mode: Literal["fan_out_all", "condition"] = "condition"


Node: TypeAlias = LLMNode | HumanNode | AwaitAnswersNode | ComputeNode | ToolNode | RouterNode
"""A node: one of these kinds and no other. Code that chooses by kind matches over this union
and ends in ``case _: assert_never(node)``, so the type checker names every place a new kind
must be handled."""


@dataclass(frozen=True, kw_only=True)
class Condition:
    """``when approved`` (``field``), ``when not approved`` (``negated``), or ``when "<expr>"``."""

    field: str | None = None
    negated: bool = False
    expr: str | None = None


@dataclass(frozen=True, kw_only=True)
class Loop:
    """``as name(N)``: the edge may be crossed ``max`` times."""

    name: str
    max: int


@dataclass(frozen=True, kw_only=True)
class Edge:
    """``src -> dst`` with its optional ``when``/``else``, ``as`` loop and ``with`` mapping."""

    src: str
    dst: str
    when: Condition | None = None
    otherwise: bool = False
    loop: Loop | None = None
    with_: tuple[tuple[str, str], ...] = ()
    pos: Pos | None = field(default=None, compare=False, repr=False)

    @property
    def unconditional(self) -> bool:
        """Neither guarded nor ``else``."""
        return self.when is None and not self.otherwise


@dataclass(frozen=True, kw_only=True)
class Budget:
    """A workflow's budget; ``None`` fields take the engine's defaults (see docs/workflows.md)."""

    max_parallel_branches: int | None = None
    max_duration: str | None = None
    max_iterations: int | None = None


@dataclass(frozen=True, kw_only=True)
class Workflow:
    """The graph: its entry node, its edges, its budget and its own vars."""

    name: str
    entry: str | None = None
    edges: tuple[Edge, ...] = ()
    budget: Budget | None = None
    vars: tuple[Var, ...] = ()
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class Graph:
    """A workflow file: its declarations by category, each in the order written."""

    vars: tuple[Var, ...] = ()
    schemas: tuple[Schema, ...] = ()
    prompts: tuple[Prompt, ...] = ()
    nodes: tuple[Node, ...] = ()
    workflows: tuple[Workflow, ...] = ()
    file: str = field(default="<graph>", compare=False)

    @functools.cached_property
    def _nodes(self) -> dict[str, Node]:
        return {n.name: n for n in self.nodes}

    def node(self, name: str) -> Node | None:
        """The node called ``name``, if declared."""
        return self._nodes.get(name)

    def schema(self, name: str | None) -> Schema | None:
        """The schema called ``name``, if declared."""
        return next((s for s in self.schemas if s.name == name), None)

    def prompt(self, name: str) -> Prompt | None:
        """The prompt called ``name``, if declared."""
        return next((p for p in self.prompts if p.name == name), None)

    def all_vars(self) -> tuple[Var, ...]:
        """File-level vars, then the (first) workflow's own."""
        extra = self.workflows[0].vars if self.workflows else ()
        return self.vars + extra

    @property
    def workflow(self) -> Workflow:
        """The workflow (validation guarantees exactly one before anything runs)."""
        return self.workflows[0]
