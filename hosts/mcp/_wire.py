"""What every message the MCP host sends must be: text a UTF-8 writer can write."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["sendable"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(value: Any) -> Any:
    """``value`` with every lone surrogate (which no UTF-8 message can carry) replaced by
    U+FFFD, in its strings, keys and nested values: the SDK's writer would otherwise fail on
    it, and the session would never answer again."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [sendable(v) for v in value]
    return value
