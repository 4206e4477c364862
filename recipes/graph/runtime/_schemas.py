"""Output schemas at run time: the JSON Schema an agent is asked to fit, and conforming a
value to a schema (ints stay ints, ``3.0`` under ``int`` reads ``3``, a fraction fails)."""

from __future__ import annotations

import json
import re
from typing import Any

from recipes.graph import ir

__all__ = ["conform", "extract_json", "json_schema"]

_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "bool": {"type": "boolean"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "json": {},
    "string[]": {"type": "array", "items": {"type": "string"}},
}
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)


def json_schema(schema: ir.Schema) -> dict[str, Any]:
    """The JSON Schema of an object fitting ``schema`` (every field required, no others)."""
    properties: dict[str, Any] = {}
    for field in schema.fields:
        prop = json.loads(json.dumps(_TYPES[field.type]))
        if field.enum:
            (prop["items"] if field.type == "string[]" else prop)["enum"] = list(field.enum)
        properties[field.name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": [f.name for f in schema.fields],
        "additionalProperties": False,
    }


def _field(field: ir.Field, value: Any) -> tuple[Any, str | None]:
    kind = field.type
    if kind == "json":
        return value, None
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "float":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif kind == "string":
        ok = isinstance(value, str)
    else:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if not ok:
        return value, f"{field.name}: {json.dumps(value)[:80]} is not of type {kind}"
    values = value if isinstance(value, list) else [value]
    bad = [v for v in values if field.enum and v not in field.enum]
    if bad:
        return value, f"{field.name}: {bad[0]!r} is not one of {', '.join(field.enum)}"
    return value, None


def conform(schema: ir.Schema, value: Any) -> tuple[dict[str, Any], list[str]]:
    """``value`` as ``schema`` types it (declared fields only) and what does not fit."""
    if not isinstance(value, dict):
        return {}, [f"expected a JSON object, got {type(value).__name__}"]
    out: dict[str, Any] = {}
    errors = []
    for field in schema.fields:
        if field.name not in value:
            errors.append(f"{field.name}: missing")
            continue
        out[field.name], problem = _field(field, value[field.name])
        if problem:
            errors.append(problem)
    return out, errors


def extract_json(text: str) -> Any:
    """The JSON value a reply carries: the whole text, a fenced block, or the outermost
    ``{…}``. Raises ``ValueError`` when there is none."""
    candidates = [text.strip(), *_FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError("the reply holds no JSON object")
