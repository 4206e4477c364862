"""From IR to a runnable plan: validation with diagnostics, and the graph's structure.

- :func:`validate` checks a graph (declarations, the graph's shape, references, and, with a
  base directory, the recipes its agents name) and returns every diagnostic.
- :func:`load_graph` / :func:`compile_graph` read, validate and plan in one go; they raise
  :class:`GraphError` (a ``UsageError`` carrying the diagnostics) when any is an error;
  :func:`read_source` reads a workflow file (bounded, UTF-8).
- :func:`compile_stored` reads and plans the workflow a run stored when it started, for the
  run to continue: its rules are not applied again (a rule added since must not strand a run
  the rules of its day accepted), except those that guard running it at all.
- :func:`analyse` gives the :class:`Plan` the runtime walks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from interactions import UsageError
from recipes import Recipe, load_recipe
from recipes.graph import ir
from recipes.graph.compiler._analysis import FanOut, Plan, analyse
from recipes.graph.compiler._async import VAR_REF, check_async
from recipes.graph.compiler._declarations import check_declarations, human_field_problem
from recipes.graph.compiler._fallbacks import STAMPS, check_fallbacks, check_models
from recipes.graph.compiler._recipes import check_recipes, recipe_ref
from recipes.graph.compiler._references import RUN_MEMBERS, check_references, output_fields
from recipes.graph.compiler._structure import check_structure
from recipes.graph.language import CATALOG, Diagnostic, diag, parse

__all__ = [
    "MAX_SOURCE",
    "RUN_MEMBERS",
    "STAMPS",
    "VAR_REF",
    "Compiled",
    "FanOut",
    "GraphError",
    "Plan",
    "analyse",
    "compile_graph",
    "compile_stored",
    "diagnose",
    "human_field_problem",
    "load_graph",
    "output_fields",
    "read_source",
    "recipe_ref",
    "validate",
]


class GraphError(UsageError):
    """A workflow that cannot run: ``diagnostics`` says why (each with its fix line)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        errors = [d for d in diagnostics if d.is_error]
        shown = "\n".join(d.format() for d in errors[:20])
        more = f"\n… and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"the workflow has {len(errors)} error(s):\n{shown}{more}")
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class Compiled:
    """A validated graph, its plan, its source text and where it was read from."""

    graph: ir.Graph
    plan: Plan
    source: str
    base: Path
    diagnostics: tuple[Diagnostic, ...] = ()


def validate(
    graph: ir.Graph, *, base: Path | None = None, loader: Callable[[str], Recipe] = load_recipe
) -> list[Diagnostic]:
    """Every diagnostic of ``graph`` (recipes are loaded and checked when ``base``, the
    directory relative recipe paths start from, is given), errors and warnings, in file order.
    ``loader`` loads a recipe by reference: by default afresh each time; a runner passes its
    own (``Runner.recipe``), so a run checks the very recipes it will run."""
    plan = analyse(graph)
    found = check_declarations(graph) + check_structure(plan) + check_references(plan)
    found += check_async(plan)
    found += check_fallbacks(graph) + check_models(graph)
    if base is not None:
        found += check_recipes(graph, base, loader)
    return sorted(found, key=_in_file_order)


_DECLARED = re.compile(r"^(?P<kw>[A-Za-z_][A-Za-z0-9_]*)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)")


def diagnose(
    source: str,
    *,
    file: str = "<graph>",
    base: Path | None = None,
    loader: Callable[[str], Recipe] = load_recipe,
) -> tuple[ir.Graph, list[Diagnostic]]:
    r"""The graph ``source`` holds and every diagnostic of it, in file order: the parse errors
    and, beside them, the compile diagnostics of the declarations that read (a line that does
    not read hides nothing else). A declaration with a parse error is left unchecked: what its
    unread line would have said is unknown, so a compile diagnostic inside it or naming it
    (`no node \`draft\`` after `agnet draft:`) is left out; the parse error is its cause."""
    graph, found = parse(source, file)
    checked = validate(graph, base=base, loader=loader)
    if any(d.is_error for d in found):
        read = {d.name for d in (*graph.nodes, *graph.schemas, *graph.prompts, *graph.workflows)}
        unread = {name for _, _, name in _declarations(source) if name and name not in read}
        broken = [d.pos.line for d in found
                  if d.is_error and d.code != "E005" and d.pos is not None]  # fmt: skip
        spans = [(a, b) for a, b, _ in _declarations(source) if any(a <= n <= b for n in broken)]
        checked = [d for d in checked if not _caused(d, unread, spans)]
    return graph, sorted(found + checked, key=_in_file_order)


def _caused(diagnostic: Diagnostic, unread: set[str], spans: list[tuple[int, int]]) -> bool:
    """Whether a compile diagnostic may be caused by a parse error: it names a declaration
    that did not read (before its did-you-mean), or lies in one with a line that did not."""
    said = diagnostic.message.partition("; did you mean")[0]
    if any(f"`{name}`" in said for name in unread):
        return True
    line = diagnostic.pos.line if diagnostic.pos is not None else 0
    return any(start <= line <= end for start, end in spans)


def _declarations(source: str) -> list[tuple[int, int, str | None]]:
    """Each top-level declaration of ``source``: its first and last line, and its name."""
    lines = source.splitlines()
    starts = [
        n for n, line in enumerate(lines, 1)
        if line[:1].strip() and not line.startswith("#")
    ]  # fmt: skip
    out = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(lines)
        match = _DECLARED.match(lines[start - 1])
        out.append((start, end, match["name"] if match else None))
    return out


def _in_file_order(diagnostic: Diagnostic) -> tuple[int, int]:
    pos = diagnostic.pos
    return (pos.line, pos.col) if pos else (0, 0)


def compile_graph(
    source: str,
    *,
    file: str = "<graph>",
    base: Path | None = None,
    recipes: bool = True,
    loader: Callable[[str], Recipe] = load_recipe,
) -> Compiled:
    """Parse, validate and plan ``source`` (its recipes loaded by ``loader`` and checked when
    ``base`` is given and ``recipes`` is true); raises :class:`GraphError` on any error."""
    graph, found = diagnose(source, file=file, base=base if recipes else None, loader=loader)
    if any(d.is_error for d in found):
        raise GraphError(found)
    return Compiled(graph, analyse(graph), source, base or Path.cwd(), tuple(found))


def compile_stored(source: str, *, file: str, base: Path) -> Compiled:
    """The workflow a run stored when it started (``source``, read from ``file`` in ``base``),
    parsed and planned for the run to continue. It was validated then, so its rules are not
    applied again: one added since (a field name it now reserves, say) would refuse a run the
    engine accepted and started, stranding it. Raises :class:`GraphError` when the source does
    not parse (the engine cannot build the graph) or breaks a rule that guards running it at
    all (:attr:`~recipes.graph.language.CatalogEntry.guards`: a wait or a loop with no bound);
    the recipes and models its agents name are checked by the caller, which loads them."""
    graph, found = parse(source, file)
    if any(d.is_error for d in found):
        raise GraphError(found)
    guarding = [d for d in validate(graph) if d.is_error and CATALOG[d.code].guards]
    if guarding:
        raise GraphError(found + guarding)
    return Compiled(graph, analyse(graph), source, base, tuple(found))


def load_graph(path: str | Path, *, loader: Callable[[str], Recipe] = load_recipe) -> Compiled:
    """Read, validate and plan the workflow file at ``path`` (recipes relative to it, loaded
    by ``loader``).

    Raises :class:`GraphError` for a file that does not validate, ``UsageError`` for one that
    cannot be read.
    """
    where = Path(path)
    return compile_graph(
        read_source(where), file=str(where), base=where.resolve().parent, loader=loader
    )


MAX_SOURCE = 4_000_000
"""The most bytes a workflow file may hold (no workflow is that long: a bound on what a file
given by mistake, a log or ``/dev/zero``, can cost)."""


def read_source(where: Path) -> str:
    """The text of the workflow file at ``where``. Raises ``UsageError`` for a file that
    cannot be read or is larger than :data:`MAX_SOURCE`, :class:`GraphError` (E006) for one
    that is not UTF-8."""
    try:
        with where.open("rb") as file:
            data = file.read(MAX_SOURCE + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {where}: {exc.strerror}") from None
    if len(data) > MAX_SOURCE:
        raise UsageError(f"{where} is larger than {MAX_SOURCE:,} bytes: not a workflow file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise GraphError(
            [diag("E006", f"byte {exc.start} is not UTF-8", ir.Pos(str(where), line))]
        ) from None
