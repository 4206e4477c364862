"""From IR to a runnable plan: validation with diagnostics, and the graph's structure.

- :func:`validate` checks a graph (declarations, the graph's shape, references, and, with a
  base directory, the recipes its agents name) and returns every diagnostic.
- :func:`load_graph` / :func:`compile_graph` read, validate and plan in one go; they raise
  :class:`GraphError` (a ``UsageError`` carrying the diagnostics) when any is an error;
  :func:`read_source` reads a workflow file (bounded, UTF-8).
- :func:`analyse` gives the :class:`Plan` the runtime walks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from interactions import UsageError
from recipes import Recipe, load_recipe
from recipes.graph import ir
from recipes.graph.compiler._analysis import FanOut, Plan, analyse
from recipes.graph.compiler._async import VAR_REF, check_async
from recipes.graph.compiler._declarations import check_declarations, human_field_problem
from recipes.graph.compiler._fallbacks import STAMPS, check_fallbacks
from recipes.graph.compiler._recipes import check_recipes, recipe_ref
from recipes.graph.compiler._references import RUN_MEMBERS, check_references, output_fields
from recipes.graph.compiler._structure import check_structure
from recipes.graph.language import Diagnostic, diag, parse

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
    found += check_fallbacks(graph)
    if base is not None:
        found += check_recipes(graph, base, loader)
    return sorted(found, key=lambda d: (d.pos.line if d.pos else 0, d.pos.col if d.pos else 0))


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
    graph, found = parse(source, file)
    if not any(d.is_error for d in found):
        found += validate(graph, base=base if recipes else None, loader=loader)
    if any(d.is_error for d in found):
        raise GraphError(found)
    return Compiled(graph, analyse(graph), source, base or Path.cwd(), tuple(found))


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
