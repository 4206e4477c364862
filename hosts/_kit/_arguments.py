"""A tool call's arguments as its approver edits them: the rule every host's form follows.

An approval of a tool call carries the tool's parameters (their JSON Schema, under
:data:`~interactions.asks.ARGS_SCHEMA` in its metadata) and the call's arguments. A host shows
one field per parameter where every parameter is *flat* (a string, a number, an integer, a
boolean, an enum of strings) and one JSON text otherwise; a host whose forms have bounds of
their own (Slack's select menus, MCP's flat forms) adds them on top of :func:`flat_parameters`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interactions.asks import ARGS_SCHEMA

__all__ = ["FLAT_TYPES", "call_arguments", "flat_parameters"]

FLAT_TYPES = ("string", "number", "integer", "boolean")
"""The JSON Schema types a parameter of its own field may have."""


def call_arguments(
    metadata: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The tool's parameters (their JSON Schema) and the call's arguments, from the metadata of
    an approval whose arguments its approver may edit; ``None`` for any other ask."""
    schema = (metadata or {}).get(ARGS_SCHEMA)
    if not isinstance(schema, dict):
        return None
    arguments = (metadata or {}).get("arguments")
    return schema, arguments if isinstance(arguments, dict) else {}


def flat_parameters(schema: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """The tool's parameters in order, each with its schema, when every one is flat (one of
    :data:`FLAT_TYPES`; an ``enum`` only of non-empty strings, on a string); ``None``
    otherwise."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    found: list[tuple[str, dict[str, Any]]] = []
    for name, prop in properties.items():
        if not isinstance(prop, dict) or prop.get("type") not in FLAT_TYPES:
            return None
        if "enum" in prop:
            choices = prop["enum"]
            if prop["type"] != "string" or not isinstance(choices, list) or not choices:
                return None
            if any(not isinstance(choice, str) or not choice for choice in choices):
                return None
        found.append((name, prop))
    return found
