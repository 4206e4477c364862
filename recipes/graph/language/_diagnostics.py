"""Diagnostics: a code, a position, a message and a ``fix:`` line, printed like a compiler's.

Codes follow Iterion's where the rule is Iterion's (``E0xx`` parse, ``C0xx``/``C1xx`` compile);
``S001`` names a construct of Iterion's language that this engine does not run (never a silent
ignore), and ``P0xx`` are rules of this engine's own (recipes, human-node forms, fan-outs).
Every code has an entry in :data:`CATALOG`, whose fix line a diagnostic carries unless its site
gives a more precise one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from recipes.graph.ir import Pos

__all__ = ["CATALOG", "CatalogEntry", "Diagnostic", "Severity", "diag", "did_you_mean"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class CatalogEntry:
    """What a code means (``title``), how bad it is by default, and the next step (``fix``).
    ``guards``: the rule keeps the engine's own promises when the workflow runs (every wait and
    every loop has a bound), so it holds for a stored workflow that continues too; any other
    rule applies to new runs only (a run continues under the rules it started with)."""

    severity: Severity
    title: str
    fix: str
    guards: bool = False


def _e(title: str, fix: str) -> CatalogEntry:
    return CatalogEntry("error", title, fix)


def _g(title: str, fix: str) -> CatalogEntry:
    return CatalogEntry("error", title, fix, guards=True)


def _w(title: str, fix: str) -> CatalogEntry:
    return CatalogEntry("warning", title, fix)


CATALOG: dict[str, CatalogEntry] = {
    # --- parse (Iterion's E0xx)
    "E001": _e("unexpected token", "Inside a block every line is `key: value` (or `src -> dst` "
               "inside `workflow:`); check this line's indentation and that its block is open."),
    "E002": _e("expected token", "Give this position the shape the parser wanted: a bare name for "
               "a reference, a quoted string for a value, an indented block under a header."),
    "E003": _e("bad indentation", "Indent with spaces only, by the same width at every level, and "
               "align the line with an enclosing block."),
    "E004": _e("unterminated string", "Close the quote, or use a backtick raw string / a `|` block "
               "scalar for multi-line content."),
    "E005": _e("missing colon", "End a declaration's header (`agent NAME:`) and each property's "
               "key (`model: \"openai:gpt-4.1\"`) with a colon; the rest of the file was "
               "checked as if it were there."),
    "E006": _e("not UTF-8", "Save the file as UTF-8."),
    "E010": _e("duplicate declaration", "Rename one of the two declarations."),
    "E012": _e("unknown property", "Use a property this block accepts (the message names the "
               "closest one); a property another kind accepts is not accepted here."),
    "E013": _e("missing property", "Add the property the message names."),
    "E020": _e("invalid value", "Use one of the accepted values the message lists."),
    "E021": _e("invalid type", "Types are `string`, `bool`, `int`, `float`, `json` and "
               "`string[]`."),
    "E030": _e("duplicate edge clause", "Each of `when`/`else`, `as` and `with` may appear once "
               "per edge."),
    "E031": _e("else with when", "An edge is either guarded (`when`) or the fallback (`else`), "
               "never both."),
    "E032": _e("clause before arrow", "In a chain `a -> b -> c …` the clauses apply to the last "
               "segment only; write a guarded segment as its own edge line."),
    # --- outside the subset, and this engine's own rules
    "S001": _e("outside the subset", "Remove the construct, or express it with what the subset "
               "has (see docs/workflows.md); this engine refuses rather than "
               "ignores it."),
    "P001": _e("recipe does not load", "Point `recipe:` at a recipe file (relative to the "
               ".iter file) or module:function that loads: `pi-recipes run` must accept it."),
    "P002": _e("unknown agent or tool of a recipe", "Name an agent (or tools) the recipe "
               "registers; the message lists them."),
    "P003": _e("human field cannot be asked", "A human node's output fields are `bool`, "
               "`string` (with or without `[enum: …]`), `string[]` with `[enum: …]`, `int` or "
               "`float`; compute other shapes in a `compute` node after it."),
    "P004": _e("fan-out branches do not converge", "Give the branches of a `fan_out_all` router "
               "a common node to meet at (or let each end at `done`), reached by no other "
               "branch before it."),
    "P005": _e("fan-out inside a fan-out branch", "Run the inner fan-out after the outer one's "
               "join, on the trunk."),
    "P006": _e("condition on a fan-out edge", "A `fan_out_all` router takes every edge: remove "
               "the `when`/`else`, or use a `condition` router."),
    "P007": _e("invalid duration", "Use a positive duration string such as `\"30m\"`, "
               "`\"1h30m\"` or `\"90s\"`."),
    "P008": _e("invalid budget value", "`max_parallel_branches` and `max_iterations` are "
               "integers >= 1."),
    "P009": _e("var derived from the credentials", "Declare `llm_families` as `string[]` (or "
               "`json`, or `string`) and `plan_review` as a `string` taking `auto`, `on` and "
               "`off`; never give `llm_families` at launch: set or unset the keys "
               "(OPENAI_API_KEY, ANTHROPIC_API_KEY) instead."),
    "P010": _e("unknown backend", "Use `backend: recipe` (in-process, the default) or "
               "`backend: pi` (a subprocess speaking the RPC protocol), a backend registered "
               "with `recipes.graph.backends.register_backend`, or `\"{{vars.NAME}}\"`."),
    "P011": _e("await_answers before its questions", "Put the `await_answers` node after the "
               "`interaction: async` node whose questions it waits for (`draft -> gate`)."),
    "P012": _e("node with no outgoing edge", "Add an edge from the node: to the next one, or "
               "`node -> done` to end the run there (`node -> fail` to fail it)."),
    "P013": _e("output field named like the engine's own", "Rename the field without the "
               "leading `_`: names that start with `_` are the engine's (`_skipped`, "
               "`_fallback_used`, `_served_by`, `_backend`, `_declined`), which it writes on "
               "the output itself and a gate reads."),
    "P014": _g("reference where the shell evaluates it", "Write the reference as a word or "
               "inside quotes (`n={{vars.n}}`), check it is a number there "
               "(`[[ $n =~ ^[0-9]+$ ]] || exit 2`) and compute with `$n` (`$((n + 1))`), or "
               "compute in a `compute` node; in a here-document, use `<<EOF`, not `<<'EOF'`."),
    "P015": _e("unknown model provider", "Name the model `provider:model` with a provider "
               "this engine has: `openai:<model>`, `anthropic:<model>` or "
               "`scripted:<path to a script file>`."),
    # --- compile and validate (Iterion's C0xx/C1xx)
    "C001": _e("unknown node reference", "Declare the node or fix the name typo."),
    "C002": _e("unknown schema reference", "Declare the schema or fix the name."),
    "C003": _e("unknown prompt reference", "Declare the prompt or fix the name."),
    "C004": _e("bad template reference", "Use `{{vars.X}}`, `{{input.X}}`, "
               "`{{outputs.node.field}}`, `{{artifacts.X}}`, `{{loop.name.iteration}}` or "
               "`{{run.id}}`."),
    "C005": _e("duplicate loop definition", "Use the same iteration count on every edge of a "
               "loop, or different loop names."),
    "C006": _e("no workflow", "Add a `workflow name:` block."),
    "C007": _e("multiple workflows", "One workflow per file: remove the extras."),
    "C008": _e("missing entry node", "Set `entry:` to a declared node."),
    "C010": _e("multiple unconditional edges", "Keep one default edge (plus a loop back-edge "
               "and its exhaustion exit), or use a router for fan-out."),
    "C011": _e("ambiguous conditions", "Remove the duplicate edge or use different "
               "conditions."),
    "C012": _e("missing fallback", "Add `when not X` to complement `when X`, or add an "
               "unconditional edge."),
    "C013": _e("condition field not boolean", "Change the schema field to `bool`."),
    "C014": _e("condition field not found", "Add the field to the source's output schema or "
               "fix the field name."),
    "C015": _e("else without conditional sibling", "Add the conditional sibling(s), or use a "
               "plain `src -> dst` edge."),
    "C016": _e("unreachable node", "Add edges to reach the node, or remove the declaration."),
    "C019": _g("undeclared cycle", "Add `as loop_name(N)` to the back-edge to bound the "
               "cycle."),
    "C026": _e("invalid loop iterations", "Set the loop's iteration count to at least 1."),
    "C029": _e("unknown outputs node reference", "Declare the node or fix the typo."),
    "C031": _e("outputs field not in output schema", "Reference an existing field, or add it to "
               "the node's output schema."),
    "C033": _e("undeclared variable", "Declare the variable in `vars:`, or fix the name."),
    "C035": _e("unknown artifact", "Add `publish: <name>` on a node, or fix the artifact "
               "name."),
    "C039": _e("compute node has no expressions", "Add at least one `expr:` entry, or remove "
               "the node."),
    "C040": _e("expression failed to parse", "Check operators, parentheses, namespaces (`vars`, "
               "`input`, `outputs`, `artifacts`, `loop`, `run`) and the built-in calls."),
    "C041": _e("duplicate node id", "Rename one: node ids are one global namespace."),
    "C042": _e("reserved node name", "Pick a name other than `done` or `fail`."),
    "C109": _e("var value type mismatch", "Give the variable a value of its declared type."),
    "C122": _e("invalid node timeout", "Use a positive duration string, e.g. `timeout: \"20m\"` "
               "or `\"1200s\"`."),
    "C123": _e("multiple else edges", "Keep exactly one `else` per source."),
    "C124": _e("else alongside unconditional", "`else` is the fallback: remove the bare "
               "unconditional edge, or drop the `else` keyword."),
    "C125": _e("var enum on non-string type", "Declare the var as `string`, or drop the "
               "constraint."),
    "C126": _e("var value not in enum", "Use one of the enum values, or extend the list."),
    "C127": _w("duplicate var enum value", "Remove the duplicate value."),
    "C138": _e("builtin call the evaluator cannot satisfy", "Fix the number of arguments the "
               "message names."),
    "C140": _w("node references an empty schema", "Give the schema at least one field, or point "
               "the node at another schema."),
    "C145": _w("bounded loop with no exit at its cap", "Add the loop-exhaustion exit: a bare "
               "edge from the same node, taken once the loop is spent."),
    "C173": _e("malformed fallback route", "Give each route of `fallbacks:` a unique name and "
               "either a `model:` or `action: skip` (last, with no model); gate it with a "
               "`when:` over declared vars only."),
    "C175": _w("unknown fallback trigger", "List only the failure classes usage_window, auth, "
               "unavailable, transient_exhausted, or any, in `on:`."),
    "C018": _w("agent without a model", "Give the node `model:` or a `recipe:` whose agent has "
               "a model (or run it with a recipe's demo model)."),
    "C249": _w("duplicate fan-out target", "Remove the duplicate edge."),
    # --- async questions (Iterion's ADR-081)
    "C240": _e("async interaction on a human node", "A human node is the blocking question: "
               "drop `interaction: async` there, and put it on the agent or judge that should "
               "ask while it works."),
    "C241": _g("await_answers without a positive timeout", "Give the node a bound, e.g. "
               "`timeout: \"30m\"`: no wait is silent and infinite."),
    "C242": _w("await_answers from a missing or non-async node", "Name an `interaction: async` "
               "agent or judge in `from:`, or drop `from:` to wait on the whole run."),
    "C267": _e("backend cannot carry async questions", "Run the node on a backend that can "
               "(`recipe` or `pi`), on every route including fallbacks, or drop "
               "`interaction: async`."),
}  # fmt: skip
"""Every diagnostic code this engine emits, with its default severity and its fix line."""


@dataclass(frozen=True)
class Diagnostic:
    """A finding about a workflow: ``code``, ``severity``, ``message``, where, and the fix."""

    code: str
    severity: Severity
    message: str
    pos: Pos | None
    fix: str

    @property
    def is_error(self) -> bool:
        """Whether it blocks running the workflow."""
        return self.severity == "error"

    def format(self) -> str:
        """``file:line:col: error [C019]: message`` and an indented ``fix:`` line."""
        where = f"{self.pos}: " if self.pos is not None else ""
        return f"{where}{self.severity} [{self.code}]: {self.message}\n  fix: {self.fix}"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``; did you mean `NAME`?`` naming the known name closest to ``name`` (what a typo most
    likely meant), or ``""`` when none is close: the end of a message about an unknown name."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def diag(
    code: str,
    message: str,
    pos: Pos | None,
    *,
    fix: str | None = None,
    severity: Severity | None = None,
) -> Diagnostic:
    """A diagnostic of ``code`` (which must be in :data:`CATALOG`), its fix from the catalog
    unless ``fix`` is given; a message past :data:`MESSAGE_KEPT` characters is cut (it quotes
    the file, whose names and lines may be megabytes long)."""
    entry = CATALOG[code]
    if len(message) > MESSAGE_KEPT:
        message = message[: MESSAGE_KEPT - 1] + "…"
    return Diagnostic(code, severity or entry.severity, message, pos, fix or entry.fix)


MESSAGE_KEPT = 1000
"""The most characters of a diagnostic's message."""
