"""Evaluating an expression's tree: counted steps, bounded sizes, total built-ins. A step is a
node of the tree evaluated, or an element a built-in walks or builds, a list ``+`` copies or
``==`` compares: no list is too large to count. Every string, list and map built is sized as
it is built (:mod:`~recipes.graph.language._sizes`): none may hold more than
:data:`MAX_SIZE`, shared parts counted each time they appear, and one evaluation may build no
more than :data:`MAX_BUILT` in all, nor compare more than
:data:`~recipes.graph.language._sizes.MAX_WALKED`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from recipes.graph.language._builtins import (
    BUILTINS,
    WALKING,
    as_list,
    same,
    whole,
    work,
)
from recipes.graph.language._builtins import number as _number
from recipes.graph.language._builtins import sized as _sized
from recipes.graph.language._errors import ExpressionError
from recipes.graph.language._sizes import MAX_BUILT, MAX_SIZE, Sizes
from recipes.graph.language._templates import as_text

__all__ = ["ARITY", "MAX_BUILT", "MAX_SIZE", "MAX_STEPS", "Evaluator", "ExpressionError", "truthy"]

DEEP = frozenset({"contains", "unique", "sort"})
"""The built-ins that compare whole values (a list in a list, at every depth): what they walk
counts against :data:`~recipes.graph.language._sizes.MAX_WALKED`."""

MAX_STEPS = 100_000
"""The most evaluation steps one expression may take."""

ARITY: dict[str, tuple[int, int]] = {
    "length": (1, 1), "unique": (1, 1), "sort": (1, 1), "keys": (1, 1), "values": (1, 1),
    "sum": (1, 1), "flatten": (1, 1), "floor": (1, 1), "round": (1, 1), "upper": (1, 1),
    "lower": (1, 1), "trim": (1, 1), "contains": (2, 2), "join": (2, 2), "tail": (2, 2),
    "if": (3, 3), "slice": (3, 3), "concat": (1, 99), "min": (1, 99), "max": (1, 99),
}  # fmt: skip
"""Each built-in's accepted number of arguments (least, most)."""


def truthy(value: Any) -> bool:
    """Iterion's truth: ``false``, ``null``, zero, ``""``, ``[]`` and ``{}`` are false."""
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | list | dict):
        return len(value) > 0
    return True


class Evaluator:
    """One evaluation: the scope, the bare-name resolver and the step count."""

    def __init__(self, scope: Mapping[str, Any], bare: Callable[[str], Any] | None) -> None:
        self.scope = scope
        self.bare = bare
        self.locals: list[dict[str, Any]] = []
        self.steps = 0
        self.sizes = Sizes()

    def count(self, steps: int) -> None:
        """Count ``steps`` more; raises ``ExpressionError`` past :data:`MAX_STEPS`."""
        self.steps += steps
        if self.steps > MAX_STEPS:
            raise ExpressionError(f"the expression took more than {MAX_STEPS} steps")

    def run(self, node: Any) -> Any:
        self.count(1)
        kind = node[0]
        if kind == "const":
            return node[1]
        if kind == "path":
            return self.path(node[1])
        if kind == "and":
            return truthy(self.run(node[1])) and truthy(self.run(node[2]))
        if kind == "or":
            return truthy(self.run(node[1])) or truthy(self.run(node[2]))
        if kind == "not":
            return not truthy(self.run(node[1]))
        if kind == "neg":
            return -_number(self.run(node[1]), "-")
        if kind == "cmp":
            a, b = self.run(node[2]), self.run(node[3])
            if node[1] in ("==", "!="):  # two lists (or maps) are compared element by element
                self.count(work((a, b), None))
                self.sizes.walk(a, b)
            return self.compare(node[1], a, b)
        if kind == "bin":
            return self.binary(node[1], self.run(node[2]), self.run(node[3]))
        if kind == "index":
            return self.index(self.run(node[1]), self.run(node[2]))
        if kind == "call":
            return self.call(node[1], node[2])
        if kind == "list":
            return self.collect(self.run(item) for item in node[1])
        return self.combinator(node)

    def collect(self, items: Iterable[Any]) -> list[Any]:
        """A list of ``items``, bounded as it grows (its size is counted item by item, so a
        list that would be too large stops at the item that makes it so)."""
        out: list[Any] = []
        size = 1
        for item in items:
            size = self.sizes.hold(size + self.sizes.of(item))
            out.append(item)
        self.sizes.built_list(out, size)
        return out

    def binary(self, op: str, a: Any, b: Any) -> Any:
        """``a op b``; two strings or two lists joined by ``+`` are sized before they are."""
        if op == "+" and isinstance(a, str) and isinstance(b, str):
            self.sizes.hold(len(a) + len(b))
            return self.sizes.built_string(a + b)
        if op == "+" and isinstance(a, list) and isinstance(b, list):
            size = self.sizes.hold(self.sizes.of(a) + self.sizes.of(b) - 1)
            self.count(len(a) + len(b))  # a copy of both lists
            return self.sizes.built_list(a + b, size)
        return _sized(self.arith(op, a, b))

    def path(self, names: tuple[str, ...]) -> Any:
        head, rest = names[0], names[1:]
        for frame in reversed(self.locals):
            if head in frame:
                value = frame[head]
                break
        else:
            if head in self.scope:
                value = self.scope[head]
            else:
                value = self.bare(head) if self.bare is not None else None
        for name in rest:
            value = value.get(name) if isinstance(value, dict) else None
        return value

    def compare(self, op: str, a: Any, b: Any) -> bool:
        if op == "==":
            return same(a, b)
        if op == "!=":
            return not same(a, b)
        if isinstance(a, str) and isinstance(b, str):
            pair: tuple[Any, Any] = (a, b)
        else:
            pair = (_number(a, op), _number(b, op))
        return bool({"<": pair[0] < pair[1], "<=": pair[0] <= pair[1],
                     ">": pair[0] > pair[1], ">=": pair[0] >= pair[1]}[op])  # fmt: skip

    def arith(self, op: str, a: Any, b: Any) -> Any:
        if op == "+" and isinstance(a, str) and isinstance(b, str):
            return a + b
        if op == "+" and isinstance(a, list) and isinstance(b, list):
            return a + b
        x, y = _number(a, op), _number(b, op)
        if op in ("/", "%") and y == 0:
            raise ExpressionError("division by zero")
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if op == "/":
            return x / y
        return x % y

    def index(self, target: Any, key: Any) -> Any:
        """``target[key]``: a list's element by a whole number (``1.0`` too, as JSON gives
        numbers; a fraction is an error), a map's value by a string; else ``null``."""
        if isinstance(target, list) and isinstance(key, int | float) and not isinstance(key, bool):
            key = whole(key, "an index")
            return target[key] if -len(target) <= key < len(target) else None
        if isinstance(target, dict) and isinstance(key, str):
            return target.get(key)
        return None

    def call(self, name: str, args: tuple[Any, ...]) -> Any:
        if name not in BUILTINS and name != "if":
            raise ExpressionError(f"unknown function {name!r}")
        least, most = ARITY[name]
        if not least <= len(args) <= most:
            raise ExpressionError(f"{name} takes {least} argument(s), got {len(args)}")
        if name == "if":  # lazy: only the branch taken is evaluated
            return self.run(args[1] if truthy(self.run(args[0])) else args[2])
        values = tuple(self.run(a) for a in args)
        if name in WALKING:  # its work grows with its lists: counted before and after
            self.count(work(values, None))
            if name in DEEP:
                self.sizes.walk(*values)
            if name == "join":
                result = self.join(*values)
            else:
                self.before(name, values)
                result = self.sizes.built(_sized(BUILTINS[name](*values)))
            self.count(work((), result))
            return result
        return self.sizes.built(_sized(BUILTINS[name](*values)))

    def before(self, name: str, values: tuple[Any, ...]) -> None:
        """What ``concat`` would build, bounded before it is built."""
        if name != "concat":
            return
        if all(isinstance(v, str) for v in values):
            self.sizes.hold(sum(len(v) for v in values))
        elif all(isinstance(v, list) for v in values):
            self.sizes.hold(1 + sum(self.sizes.of(v) - 1 for v in values))

    def join(self, values: Any, separator: Any) -> str:
        """``join``, its text bounded as it grows (a list or map joined is written as JSON)."""
        sep = as_text(separator)
        pieces: list[str] = []
        size = 0
        for item in as_list(values, "join"):
            text = as_text(item)
            size = self.sizes.hold(size + len(text) + (len(sep) if pieces else 0))
            pieces.append(text)
        return self.sizes.built_string(sep.join(pieces))

    def apply(self, fn: Any, *values: Any) -> Any:
        params, body = fn
        if len(params) != len(values):
            raise ExpressionError(f"the function takes {len(params)} parameter(s)")
        self.locals.append(dict(zip(params, values, strict=True)))
        try:
            return self.run(body)
        finally:
            self.locals.pop()

    def combinator(self, node: Any) -> Any:
        items = as_list(self.run(node[1]), node[0])
        if node[0] == "map":
            return self.collect(self.apply(node[2], item) for item in items)
        if node[0] == "filter":
            return self.collect(item for item in items if truthy(self.apply(node[2], item)))
        acc = self.run(node[2])
        for item in items:
            acc = self.apply(node[3], acc, item)
        return acc
