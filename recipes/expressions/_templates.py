"""``{{namespace.path}}`` references in prompts, commands and ``with`` mappings.

A reference names ``vars``, ``input``, ``outputs``, ``artifacts``, ``loop`` or ``run`` and a
dotted path under it. Rendering replaces each with its value (a string as is, anything else as
compact JSON); a reference with no value yet stays as written (Iterion's rule: a prompt shows
the gap; a tool node does not run a command holding one). ``{{!…}}`` is the raw form: in a
command, every other reference is shell-quoted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MISSING",
    "NAMESPACES",
    "OUTSIDE_SUBSET",
    "Ref",
    "as_text",
    "duration_seconds",
    "references",
    "render",
]

NAMESPACES = ("vars", "input", "outputs", "artifacts", "loop", "run")
OUTSIDE_SUBSET = ("attachments", "secrets", "each", "params", "include")
_REF = re.compile(r"\{\{(!?)([^{}]*)\}\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
MISSING = object()


@dataclass(frozen=True)
class Ref:
    """One ``{{…}}``: its text, offset, whether raw, and its path (empty when malformed)."""

    text: str
    offset: int
    raw: bool
    path: tuple[str, ...]

    @property
    def namespace(self) -> str:
        return self.path[0] if self.path else ""


def references(text: str) -> list[Ref]:
    """Every ``{{…}}`` in ``text``; a malformed one has an empty ``path``."""
    found = []
    for match in _REF.finditer(text):
        inner = match[2].strip()
        parts = tuple(inner.split(".")) if inner else ()
        if inner.startswith("include ") or not all(_NAME.match(p) for p in parts):
            parts = ("include",) if inner.startswith("include ") else ()
        if parts and parts[0] in NAMESPACES and len(parts) < 2:
            parts = ()
        found.append(Ref(match[0], match.start(), bool(match[1]), parts))
    return found


def as_text(value: Any) -> str:
    """``value`` as a template (or ``join``) writes it: a string as is, anything else as
    compact JSON (``true``, ``null``, ``["a"]``; never Python's ``True``, ``None``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(
    text: str,
    lookup: Callable[[tuple[str, ...]], Any],
    quote: Callable[[str], str] | None = None,
) -> str:
    """``text`` with every reference replaced by ``lookup(path)`` (:data:`MISSING`: kept as
    written). ``quote`` wraps each non-raw value (a shell command's ``shlex.quote``)."""

    def replace(match: re.Match[str]) -> str:
        inner = match[2].strip()
        parts = tuple(inner.split("."))
        if not inner or not all(_NAME.match(p) for p in parts):
            return match[0]
        value = lookup(parts)
        if value is MISSING or value is None:
            return match[0]
        out = as_text(value)
        return quote(out) if quote is not None and not match[1] else out

    return _REF.sub(replace, text)


def duration_seconds(text: str | None) -> float | None:
    """A duration such as ``"30m"``, ``"1h30m"``, ``"90s"`` in seconds; ``None`` when ``text``
    is not a positive duration."""
    if not text:
        return None
    spot = text.strip()
    parts = _DURATION.findall(spot)
    if not parts or "".join(n + u for n, u in parts) != spot:
        return None
    seconds = sum(float(n) * _UNIT[u] for n, u in parts)
    return seconds if seconds > 0 else None
