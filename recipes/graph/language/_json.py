"""JSON from outside the engine (a tool's stdout, a ``--var``, a file's default), bounded so
that whatever a run holds can be stored: every store refuses values nested deeper than
:data:`~interactions.store.MAX_JSON_DEPTH`, and a run keeps a node's output a few levels down
in its checkpoint."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["VALUE_DEPTH", "nests_deeper", "read_json"]

VALUE_DEPTH = 100
"""How deeply a node's output, or a var's value, may nest (well inside what a store keeps)."""


def nests_deeper(value: Any, limit: int = VALUE_DEPTH) -> bool:
    """Whether ``value`` nests deeper than ``limit`` levels (a list or an object in another
    counts one), walked one level at a time: no recursion, whatever the depth."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
        if not level:
            return False
    return True


def read_json(text: str) -> Any:
    """``text`` parsed as JSON. Raises ``ValueError`` (``json.JSONDecodeError`` for text that
    is not JSON) when it is not, or nests deeper than :data:`VALUE_DEPTH` levels."""
    try:
        value = json.loads(text)
    except RecursionError:  # deeper than the parser goes: deeper than any limit of ours
        raise ValueError(f"it nests deeper than {VALUE_DEPTH} levels") from None
    if nests_deeper(value):
        raise ValueError(f"it nests deeper than {VALUE_DEPTH} levels")
    return value
