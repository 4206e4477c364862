"""Launch values: ``--var k=v`` checked against the declared types and enums before anything
starts (C126 outside an enum, C109 a value that does not read as its type)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from recipes.graph import ir
from recipes.graph.compiler import GraphError
from recipes.graph.language import Diagnostic, diag, did_you_mean, read_json

__all__ = ["launch_vars", "parse_assignments"]


def parse_assignments(items: list[str]) -> dict[str, str]:
    """``["k=v", …]`` as a mapping; raises ``GraphError`` for an item without ``=``, or a name
    given twice (which value was meant is not for us to guess)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            problem, fix = f"--var {item!r} is not NAME=VALUE", "Write --var name=value."
        elif key.strip() in out:
            problem = f"--var {key.strip()} is given twice ({out[key.strip()]!r}, then {value!r})"
            fix = "Give each var once."
        else:
            out[key.strip()] = value
            continue
        raise GraphError([diag("C109", problem, None, fix=fix)])
    return out


_INT = r"-?[0-9]+"
_NUMBER = r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?"


def _read(var: ir.Var, value: Any) -> Any:
    """``value`` as ``var``'s type (a string from the command line is parsed)."""
    kind = var.type
    if isinstance(value, str) and kind != "string":
        if kind == "bool":
            if value not in ("true", "false"):
                raise ValueError
            return value == "true"
        if kind in ("int", "float"):  # as JSON writes numbers: no 1_000, nan, inf or ' 12 '
            if not re.fullmatch(_INT if kind == "int" else _NUMBER, value):
                raise ValueError
            value = int(value) if kind == "int" else float(value)
        else:
            value = read_json(value)
    if kind == "string[]" and not (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    ):
        raise ValueError
    ok = {"string": str, "bool": bool, "json": object}.get(kind)
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError
    if kind == "float" and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
    ):
        raise ValueError  # 1e999 reads as inf: no number a node could use
    if ok is not None and not isinstance(value, ok):
        raise ValueError
    return float(value) if kind == "float" else value


def _shown(raw: Any) -> str:
    """``raw`` as a message quotes it: its ``repr``, cut past 60 characters."""
    text = repr(raw)
    return text if len(text) <= 60 else text[:59] + "…"


def launch_vars(graph: ir.Graph, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared var's value: given, else its default.

    Raises :class:`GraphError` for an unknown name, a value of the wrong type or outside the
    enum, or a var with no default that was not given.
    """
    declared = {v.name: v for v in graph.all_vars()}
    problems: list[Diagnostic] = []
    for name in given:
        if name not in declared:
            problems.append(
                diag(
                    "C033",
                    f"--var {name}: the workflow declares no var `{name}`"
                    f"{did_you_mean(name, declared)} (declared: {', '.join(declared) or 'none'})",
                    None,
                )
            )
    values: dict[str, Any] = {}
    for name, var in declared.items():
        raw = given.get(name, var.default)
        if raw is None:
            problems.append(
                diag("C109", f"var `{name}` has no default: give it with --var {name}=…", var.pos)
            )
            continue
        try:
            value = _read(var, raw)
        except ValueError as exc:  # not of its type; or JSON, but too deep to keep
            why = f" ({exc})" if not isinstance(exc, json.JSONDecodeError) and str(exc) else ""
            said = f"var `{name}`: {_shown(raw)} is not of type {var.type}{why}"
            problems.append(diag("C109", said, var.pos))
            continue
        if var.enum and value not in var.enum:
            problems.append(
                diag(
                    "C126",
                    f"var `{name}`: {value!r} is not one of {', '.join(map(repr, var.enum))}",
                    var.pos,
                )
            )
            continue
        values[name] = value
    if problems:
        raise GraphError(problems)
    return values
