"""Evaluating an expression's tree: counted steps, bounded sizes, total built-ins."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ARITY", "MAX_SIZE", "MAX_STEPS", "Evaluator", "ExpressionError", "truthy"]

MAX_STEPS = 100_000
"""The most evaluation steps one expression may take."""
MAX_SIZE = 1_000_000
"""The longest string, or the most list elements, an expression may build."""

ARITY: dict[str, tuple[int, int]] = {
    "length": (1, 1), "unique": (1, 1), "sort": (1, 1), "keys": (1, 1), "values": (1, 1),
    "sum": (1, 1), "flatten": (1, 1), "floor": (1, 1), "round": (1, 1), "upper": (1, 1),
    "lower": (1, 1), "trim": (1, 1), "contains": (2, 2), "join": (2, 2), "tail": (2, 2),
    "if": (3, 3), "slice": (3, 3), "concat": (1, 99), "min": (1, 99), "max": (1, 99),
}  # fmt: skip
"""Each built-in's accepted number of arguments (least, most)."""


class ExpressionError(Exception):
    """An expression that does not parse, or fails while evaluating (``EXPRESSION_FAILED``)."""

    def __init__(self, message: str, col: int = 1) -> None:
        super().__init__(message)
        self.col = col


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


def _number(value: Any, what: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExpressionError(f"{what} needs a number, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {bool: "a bool", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "a map", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def _sized(value: Any) -> Any:
    if isinstance(value, str | list) and len(value) > MAX_SIZE:
        raise ExpressionError(f"a value grew past {MAX_SIZE} elements")
    return value


def _flat(args: list[Any]) -> list[Any]:
    out: list[Any] = []
    for arg in args:
        out.extend(arg if isinstance(arg, list) else [arg])
    return out


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ExpressionError(f"{what} needs a list, got {_kind(value)}")
    return value


def _round(value: Any) -> int:
    number = _number(value, "round")
    return math.floor(abs(number) + 0.5) * (1 if number >= 0 else -1)


def _concat(*args: Any) -> Any:
    if all(isinstance(a, str) for a in args):
        return "".join(args)
    return [item for a in args for item in _list(a, "concat")]


def _tail(value: Any, count: Any) -> Any:
    n = int(_number(count, "tail"))
    return _list(value, "tail")[-n:] if n > 0 else []


def _slice(value: Any, start: Any, end: Any) -> Any:
    if not isinstance(value, str | list):
        raise ExpressionError(f"slice needs a list or a string, got {_kind(value)}")
    return value[int(_number(start, "slice")) : int(_number(end, "slice"))]


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        return isinstance(item, str) and item in container
    if isinstance(container, list | dict):
        return item in container
    raise ExpressionError(f"contains needs a list, a map or a string, got {_kind(container)}")


def _text(fn: Callable[[str], str], name: str) -> Callable[[Any], str]:
    def apply(value: Any) -> str:
        if not isinstance(value, str):
            raise ExpressionError(f"{name} needs a string, got {_kind(value)}")
        return fn(value)

    return apply


def _extreme(pick: Callable[..., Any], name: str) -> Callable[..., Any]:
    def apply(*args: Any) -> Any:
        values = _flat(list(args))
        if not values:
            raise ExpressionError(f"{name} of nothing")
        return pick(_number(v, name) for v in values)

    return apply


def _sum(values: Any) -> Any:
    return sum(_number(v, "sum") for v in _list(values, "sum"))


def _sort(values: Any) -> Any:
    try:
        return sorted(_list(values, "sort"))
    except TypeError:
        raise ExpressionError("sort needs values of one kind") from None


_BUILTINS: dict[str, Callable[..., Any]] = {
    "length": lambda v: len(v) if isinstance(v, str | list | dict) else 0,
    "concat": _concat,
    "unique": lambda v: [x for i, x in enumerate(_list(v, "unique")) if x not in v[:i]],
    "contains": _contains,
    "join": lambda v, sep: str(sep).join(str(x) for x in _list(v, "join")),
    "tail": _tail,
    "sort": _sort,
    "keys": lambda v: list(v) if isinstance(v, dict) else [],
    "values": lambda v: list(v.values()) if isinstance(v, dict) else [],
    "slice": _slice,
    "sum": _sum,
    "min": _extreme(min, "min"),
    "max": _extreme(max, "max"),
    "flatten": lambda v: _flat(_list(v, "flatten")),
    "floor": lambda v: math.floor(_number(v, "floor")),
    "round": _round,
    "upper": _text(str.upper, "upper"),
    "lower": _text(str.lower, "lower"),
    "trim": _text(str.strip, "trim"),
}


class Evaluator:
    """One evaluation: the scope, the bare-name resolver and the step count."""

    def __init__(self, scope: Mapping[str, Any], bare: Callable[[str], Any] | None) -> None:
        self.scope = scope
        self.bare = bare
        self.locals: list[dict[str, Any]] = []
        self.steps = 0

    def run(self, node: Any) -> Any:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ExpressionError(f"the expression took more than {MAX_STEPS} steps")
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
            return self.compare(node[1], self.run(node[2]), self.run(node[3]))
        if kind == "bin":
            return _sized(self.arith(node[1], self.run(node[2]), self.run(node[3])))
        if kind == "index":
            return self.index(self.run(node[1]), self.run(node[2]))
        if kind == "call":
            return self.call(node[1], node[2])
        return self.combinator(node)

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
            return bool(a == b)
        if op == "!=":
            return bool(a != b)
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
        if isinstance(target, list) and isinstance(key, int) and not isinstance(key, bool):
            return target[key] if -len(target) <= key < len(target) else None
        if isinstance(target, dict) and isinstance(key, str):
            return target.get(key)
        return None

    def call(self, name: str, args: tuple[Any, ...]) -> Any:
        if name not in _BUILTINS and name != "if":
            raise ExpressionError(f"unknown function {name!r}")
        least, most = ARITY[name]
        if not least <= len(args) <= most:
            raise ExpressionError(f"{name} takes {least} argument(s), got {len(args)}")
        if name == "if":  # lazy: only the branch taken is evaluated
            return self.run(args[1] if truthy(self.run(args[0])) else args[2])
        return _sized(_BUILTINS[name](*(self.run(a) for a in args)))

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
        items = _list(self.run(node[1]), node[0])
        if node[0] == "map":
            return [self.apply(node[2], item) for item in items]
        if node[0] == "filter":
            return [item for item in items if truthy(self.apply(node[2], item))]
        acc = self.run(node[2])
        for item in items:
            acc = self.apply(node[3], acc, item)
        return acc
