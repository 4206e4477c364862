"""What the values an expression builds hold, counted as they are built: a list may hold the
same list twice (``[acc, acc]``), so a value's size is counted over what it holds, not over
the memory it takes. The size of a value is what JSON would write of it, in elements and
characters: a number, a bool or ``null`` is 1; a string its characters (at least 1); a list 1
and the sizes of its elements; a map 1 and its keys' characters and its values' sizes. Each
list or map's size is worked out once (kept by identity), so a value shared many times is
never walked many times."""

from __future__ import annotations

from typing import Any

from recipes.graph.language._errors import ExpressionError

__all__ = ["MAX_BUILT", "MAX_SIZE", "MAX_WALKED", "Sizes"]

MAX_SIZE = 1_000_000
"""The most a value an expression builds may hold: its elements, at any depth, and its
strings' characters (a list held twice counts twice, as JSON would write it twice)."""

MAX_BUILT = 10_000_000
"""The most elements and characters one evaluation may build in all (a string rebuilt at
every step of a ``reduce`` counts each time)."""

MAX_WALKED = 1_000_000
"""The most elements one evaluation may walk whole, at every depth, to compare values
(``==``, ``contains``, ``unique``, ``sort``): a list of lists compared at every step of a
``reduce`` counts all it holds each time."""


def too_large() -> ExpressionError:
    return ExpressionError(
        f"a value grew past {MAX_SIZE:,} elements and characters (the most one value may "
        "hold, shared parts counted each time they appear); build less",
        code="VALUE_TOO_LARGE",
    )


class Sizes:
    """The sizes of one evaluation's values, and what it built in all."""

    def __init__(self) -> None:
        self._known: dict[int, int] = {}
        self._kept: list[Any] = []  # each list or map sized, alive: its id stays its own
        self.total = 0
        self.walked = 0

    def of(self, value: Any) -> int:
        """``value``'s size (see the module's docstring)."""
        if isinstance(value, str):
            return max(len(value), 1)
        if not isinstance(value, list | dict):
            return 1
        known = self._known.get(id(value))
        return known if known is not None else self._measure(value)

    def hold(self, size: int) -> int:
        """``size``, unless past :data:`MAX_SIZE` (``VALUE_TOO_LARGE``)."""
        if size > MAX_SIZE:
            raise too_large()
        return size

    def build(self, count: int) -> None:
        """Count ``count`` more elements or characters built; past :data:`MAX_BUILT` the
        evaluation fails (``VALUE_TOO_LARGE``)."""
        self.total += count
        if self.total > MAX_BUILT:
            raise ExpressionError(
                f"the expression built more than {MAX_BUILT:,} elements and characters in "
                "all; build less",
                code="VALUE_TOO_LARGE",
            )

    def walk(self, *values: Any) -> None:
        """Count walking ``values`` whole (their lists' and maps' sizes, at every depth);
        past :data:`MAX_WALKED` the evaluation fails (``VALUE_TOO_LARGE``)."""
        self.walked += sum(self.of(v) for v in values if isinstance(v, list | dict))
        if self.walked > MAX_WALKED:
            raise ExpressionError(
                f"the expression compared more than {MAX_WALKED:,} elements in all (==, "
                "contains, unique and sort walk whole values); compare less",
                code="VALUE_TOO_LARGE",
            )

    def built_list(self, value: list[Any] | dict[str, Any], size: int) -> Any:
        """``value``, a list or map just built whose size is ``size`` (bounded), remembered."""
        self.hold(size)
        self.build(len(value))
        self._remember(value, size)
        return value

    def built_string(self, value: str) -> str:
        """``value``, a string just built, bounded and counted."""
        self.hold(len(value))
        self.build(len(value))
        return value

    def built(self, value: Any) -> Any:
        """``value``, whatever a built-in returned, bounded (its size measured) and counted."""
        if isinstance(value, str):
            return self.built_string(value)
        if isinstance(value, list | dict):
            if id(value) in self._known:  # handed back as it was given (a list sorted, say)
                return value
            return self.built_list(value, self.hold(self._measure(value)))
        return value

    def _remember(self, value: Any, size: int) -> None:
        self._known[id(value)] = size
        self._kept.append(value)

    def _measure(self, value: list[Any] | dict[str, Any]) -> int:
        """The size of ``value``, walked without recursion, each list or map in it sized once
        (remembered: the values read from the scope are walked once per evaluation)."""
        stack: list[tuple[Any, bool]] = [(value, False)]
        while stack:
            item, ready = stack.pop()
            if id(item) in self._known:
                continue
            inner = list(item.values()) if isinstance(item, dict) else item
            if not ready:
                stack.append((item, True))
                fresh = [
                    v for v in inner if isinstance(v, list | dict) and id(v) not in self._known
                ]
                stack.extend((v, False) for v in fresh)
                continue
            size = 1 + sum(self.of(v) for v in inner)
            if isinstance(item, dict):
                size += sum(len(k) for k in item)
            self._remember(item, size)
        return self._known[id(value)]
