"""The expression language's built-ins: total functions over JSON values (a wrong type is an
:class:`ExpressionError`, never a crash), and the helpers the evaluator shares with them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from recipes.graph.language._errors import ExpressionError
from recipes.graph.language._templates import as_text

__all__ = [
    "BUILTINS",
    "WALKING",
    "as_list",
    "number",
    "same",
    "sized",
    "whole",
    "work",
]


def number(value: Any, what: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExpressionError(f"{what} needs a number, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {bool: "a bool", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "a map", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


MAX_INT_BITS = 1024
"""The most bits an integer an expression computes may take (it would grow at every step of
a ``reduce`` that squares it, each step slower than the last)."""


def sized(value: Any) -> Any:
    """``value``, unless it is a number past the bounds: an integer past
    :data:`MAX_INT_BITS`, a float that is not finite (no JSON holds it). (What strings, lists
    and maps hold is bounded as they are built: :mod:`recipes.graph.language._sizes`.)"""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ExpressionError(f"a number grew past {MAX_INT_BITS} bits", code="VALUE_TOO_LARGE")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExpressionError("a number is not finite (it overflowed): no JSON can hold it")
    return value


WALKING = frozenset({
    "concat", "unique", "contains", "join", "tail", "sort", "keys", "values", "slice", "sum",
    "min", "max", "flatten",
})  # fmt: skip
"""The built-ins whose work grows with the lists (and maps) they are given or build."""


def work(args: tuple[Any, ...], result: Any) -> int:
    """The steps a :data:`WALKING` built-in's call counts: one per element of each list or map
    it was given and of the list it built (a string counts as one)."""
    sizes = [len(v) for v in (*args, result) if isinstance(v, list | dict)]
    return sum(sizes)


def _flat(args: list[Any]) -> list[Any]:
    out: list[Any] = []
    for arg in args:
        out.extend(arg if isinstance(arg, list) else [arg])
    return out


def as_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ExpressionError(f"{what} needs a list, got {_kind(value)}")
    return value


def _finite(value: Any, what: str) -> float | int:
    x = number(value, what)
    if isinstance(x, float) and not math.isfinite(x):
        raise ExpressionError(f"{what} needs a finite number, got {x}")
    return x


def _round(value: Any) -> int:
    x = _finite(value, "round")
    return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)


def _concat(*args: Any) -> Any:
    if all(isinstance(a, str) for a in args):
        return "".join(args)
    return [item for a in args for item in as_list(a, "concat")]


def whole(value: Any, what: str) -> int:
    """``value`` as a count or an index: a whole number (``2.0`` reads ``2``; ``1.5`` is
    refused rather than cut)."""
    x = _finite(value, what)
    if x != int(x):
        raise ExpressionError(f"{what} needs a whole number, got {x}")
    return int(x)


def _tail(value: Any, count: Any) -> Any:
    n = whole(count, "tail")
    return as_list(value, "tail")[-n:] if n > 0 else []


def _slice(value: Any, start: Any, end: Any) -> Any:
    if not isinstance(value, str | list):
        raise ExpressionError(f"slice needs a list or a string, got {_kind(value)}")
    return value[whole(start, "slice") : whole(end, "slice")]


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        return isinstance(item, str) and item in container
    if isinstance(container, dict):
        return isinstance(item, str) and item in container  # a map's keys are strings
    if isinstance(container, list):
        key = _key(item)
        return any(_key(v) == key for v in container)
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
        return pick(number(v, name) for v in values)

    return apply


def _sum(values: Any) -> Any:
    return sum(number(v, "sum") for v in as_list(values, "sum"))


def _key(value: Any) -> Any:
    """A hashable key equal for equal JSON values (``1`` and ``1.0`` alike; ``true`` not ``1``),
    so that lists and maps, which Python cannot hash, are compared in one pass."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, list):
        return ("l", tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("d", frozenset((k, _key(v)) for k, v in value.items()))
    return ("s", value) if isinstance(value, str) else ("z", repr(value))


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``1`` equals ``1.0``, ``true`` equals no number, lists and maps by
    their elements (what ``==``, ``contains`` and ``unique`` mean by equal)."""
    return bool(_key(a) == _key(b))


def _unique(values: Any) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for value in as_list(values, "unique"):
        key = _key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _ordered(value: Any) -> Any:
    """``value`` as :func:`_sort` compares it: a bool only with bools (Python would take
    ``true`` for ``1``), a list element by element, the same way."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def _sort(values: Any) -> Any:
    try:
        return sorted(as_list(values, "sort"), key=_ordered)
    except TypeError:
        raise ExpressionError("sort needs values of one kind") from None


BUILTINS: dict[str, Callable[..., Any]] = {
    "length": lambda v: len(v) if isinstance(v, str | list | dict) else 0,
    "concat": _concat,
    "unique": _unique,
    "contains": _contains,
    "join": lambda v, sep: as_text(sep).join(as_text(x) for x in as_list(v, "join")),
    "tail": _tail,
    "sort": _sort,
    "keys": lambda v: list(v) if isinstance(v, dict) else [],
    "values": lambda v: list(v.values()) if isinstance(v, dict) else [],
    "slice": _slice,
    "sum": _sum,
    "min": _extreme(min, "min"),
    "max": _extreme(max, "max"),
    "flatten": lambda v: _flat(as_list(v, "flatten")),
    "floor": lambda v: math.floor(_finite(v, "floor")),
    "round": _round,
    "upper": _text(str.upper, "upper"),
    "lower": _text(str.lower, "lower"),
    "trim": _text(str.strip, "trim"),
}
