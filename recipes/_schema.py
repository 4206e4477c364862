"""The JSON Schema a model sees for a tool's parameters: pydantic's, cleaned of noise.

Pydantic's schema names every model and field with a generated ``title`` and puts nested models
behind ``$ref``. Providers read a plain, inlined object schema best, so :func:`tool_json_schema`
drops generated titles, inlines every non-recursive ``$ref`` and always returns an ``object``
schema with ``properties``. Field descriptions and nested models' docstrings are kept; the
top model's docstring is dropped (the tool's description speaks for it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["tool_json_schema"]

_REF_PREFIX = "#/$defs/"
_LITERAL_KEYS = frozenset({"default", "examples", "const", "enum"})


def tool_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the cleaned JSON Schema of ``model``'s fields (see the module docstring).

    Recursive models keep their ``$defs`` for the recursive part only; everything else is
    inlined. The result is a new dict; the model's own schema is not changed.
    """
    if not model.model_fields and model.model_config.get("extra") == "forbid":
        return {"additionalProperties": False, "properties": {}, "type": "object"}  # no params
    raw = model.model_json_schema()
    defs: dict[str, Any] = raw.pop("$defs", {})
    kept: dict[str, Any] = {}
    schema = _clean(raw, defs, kept, stack=())
    if not isinstance(schema, dict):  # pragma: no cover - pydantic always returns an object
        raise TypeError("a tool's parameters schema must be a JSON object")
    schema.pop("description", None)  # the model class's docstring: the tool has its own
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if kept:
        schema["$defs"] = kept
    return schema


def _clean(node: Any, defs: dict[str, Any], kept: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_clean(item, defs, kept, stack) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        name = ref[len(_REF_PREFIX) :]
        if name in stack:  # recursive: keep the reference and its definition
            if name not in kept:
                kept[name] = {}
                kept[name] = _clean(defs[name], defs, kept, stack)
            return {k: v for k, v in node.items() if k != "title"}
        target = _clean(defs[name], defs, kept, (*stack, name))
        extra = {k: v for k, v in node.items() if k not in ("$ref", "title")}
        return {**target, **_clean(extra, defs, kept, stack)}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue  # generated titles are noise to a model
        if key in _LITERAL_KEYS:
            out[key] = value  # data, not schema: never rewrite it
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(prop, defs, kept, stack) for name, prop in value.items()}
        else:
            out[key] = _clean(value, defs, kept, stack)
    return out
