"""No import cycle between packages, read from the source as it stands.

A *package* is a folder, or one module of a folder that has sub-folders of Python code: in
``interactions/`` (which holds ``store/`` and ``testing/``) ``_models.py`` and ``_payloads.py``
are two packages, while the modules of ``recipes/graph/runtime/`` (no sub-folders) are one. An
import names the package its module belongs to; imports made under ``if TYPE_CHECKING:`` are
left out (they never run), imports inside functions are not (they run, later).
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = ("interactions", "recipes", "hosts")


def _has_python_subfolder(folder: Path) -> bool:
    return any(sub.is_dir() and any(sub.glob("*.py")) for sub in folder.iterdir())


def package_of(path: Path) -> str:
    """The package a source file belongs to: its folder, or itself where the folder has
    sub-folders of Python code (``recipes/graph/ir.py``, ``recipes/graph/runtime``)."""
    relative = path.relative_to(ROOT)
    folder = path.parent
    if _has_python_subfolder(folder):
        return relative.as_posix()
    return relative.parent.as_posix()


def module_file(name: str) -> Path | None:
    """The file a dotted module name loads, or ``None`` where it is not ours."""
    base = ROOT.joinpath(*name.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _run_time_imports(child)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _run_time_imports(node)


def _targets(path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[Path]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            found = module_file(alias.name)
            if found:
                yield found
        return
    if node.level:
        anchor = path.relative_to(ROOT).parts[: -node.level]
        base = ".".join((*anchor, *([node.module] if node.module else [])))
    else:
        base = node.module or ""
    for alias in node.names:
        # ``from pkg import mod`` loads pkg/mod.py; ``from pkg import name`` reads pkg/__init__
        found = module_file(f"{base}.{alias.name}") or module_file(base)
        if found:
            yield found


def package_graph() -> dict[str, dict[str, str]]:
    """Each package -> the packages it imports at run time, each with one import that ties them
    (``file: module``), for the failure message."""
    graph: dict[str, dict[str, str]] = {}
    for top in TOP:
        for path in sorted((ROOT / top).rglob("*.py")):
            source = package_of(path)
            edges = graph.setdefault(source, {})
            for node in _run_time_imports(ast.parse(path.read_text(encoding="utf-8"))):
                for target in _targets(path, node):
                    other = package_of(target)
                    if other != source:
                        name = target.relative_to(ROOT).as_posix()
                        where = f"{path.relative_to(ROOT)}:{node.lineno}"
                        edges.setdefault(other, f"{where} imports {name}")
    return graph


def find_cycle(graph: dict[str, dict[str, str]], among: set[str] | None = None) -> list[str] | None:
    """One cycle of the graph (only through the packages ``among``, when given) as its
    packages in order, the first repeated at the end; ``None`` when there is none."""
    done: set[str] = set()

    def children(node: str) -> Iterator[str]:
        return iter(sorted(c for c in graph.get(node, {}) if among is None or c in among))

    for start in sorted(among if among is not None else graph):
        if start in done:
            continue
        trail = [start]
        stack = [(start, children(start))]
        while stack:
            node, left = stack[-1]
            child = next(left, None)
            if child is None:
                stack.pop()
                trail.pop()
                done.add(node)
            elif child in trail:
                return [*trail[trail.index(child) :], child]
            elif child not in done:
                stack.append((child, children(child)))
                trail.append(child)
    return None


def tangles(graph: dict[str, dict[str, str]]) -> list[set[str]]:
    """The sets of packages that import each other, directly or not (the strongly connected
    components of more than one package)."""
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for child in graph.get(todo.pop(), {}):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        reach[start] = seen
    found: list[set[str]] = []
    for node in sorted(graph):
        tangle = {other for other in reach[node] if node in reach.get(other, set())}
        if len(tangle) > 1 and tangle not in found:
            found.append(tangle)
    return found


def test_the_package_graph_reads_the_packages_as_defined() -> None:
    assert package_of(ROOT / "interactions/_models.py") == "interactions/_models.py"
    assert package_of(ROOT / "interactions/store/_records.py") == "interactions/store"
    assert package_of(ROOT / "recipes/graph/ir.py") == "recipes/graph/ir.py"
    assert package_of(ROOT / "recipes/graph/runtime/_engine.py") == "recipes/graph/runtime"
    graph = package_graph()
    assert "recipes/graph/ir.py" in graph["recipes/graph/runtime"]
    assert "interactions/store" in graph["recipes/runs"]


def test_a_cycle_is_found_and_shown() -> None:
    graph = {"a": {"b": "a.py imports b.py"}, "b": {"c": ""}, "c": {"a": ""}, "d": {"a": ""}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert tangles(graph) == [{"a", "b", "c"}]
    assert find_cycle({"a": {"b": ""}, "b": {}}) is None
    assert tangles({"a": {"b": ""}, "b": {}}) == []


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph()
    shown = []
    for tangle in tangles(graph):
        cycle = find_cycle(graph, tangle)
        assert cycle is not None
        ties = "\n".join(f"    {graph[a][b]}" for a, b in itertools.pairwise(cycle))
        shown.append(f"  {' -> '.join(cycle)}\n{ties}")
    assert not shown, "import cycles between packages:\n" + "\n".join(shown)
