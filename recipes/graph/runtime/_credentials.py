"""Vars derived from the credentials a run has: injected at launch, before the vars are checked.

A workflow opts in per var, by declaring it:

- ``llm_families`` (``string[]``; or ``json``, or ``string`` for Iterion's comma-joined form):
  the sorted model families the launching process holds a usable key for
  (``["anthropic", "openai"]``; ``recipes.models.credentialed_families``). It is a fact, not
  a choice: giving it with ``--var`` is refused (``P009``).
- ``plan_review`` (``string``, ``auto``/``on``/``off``): whether a second model family reviews
  the plan. ``--var plan_review=on|off`` decides; otherwise the deployment's brake
  (:data:`PLAN_REVIEW_BRAKE` in the launching process's environment: ``on``, ``off``,
  ``auto``; any other value reads as ``off``, a brake fails safe), otherwise the var's
  default; ``auto`` then resolves to ``on`` when two or more families are credentialed, else
  ``off``.

Only family names are read out of the environment, never a key. Pure: the environment is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipes.graph import ir
from recipes.graph.compiler import GraphError
from recipes.graph.language import diag
from recipes.models import credentialed_families

__all__ = [
    "LLM_FAMILIES",
    "PLAN_REVIEW",
    "PLAN_REVIEW_BRAKE",
    "credential_vars",
    "resolve_plan_review",
]

LLM_FAMILIES = "llm_families"
PLAN_REVIEW = "plan_review"
PLAN_REVIEW_BRAKE = "PI_RECIPES_PLAN_REVIEW"
"""The deployment-wide brake on ``plan_review``, read from the launching process's environment."""
_MODES = ("auto", "on", "off")


def resolve_plan_review(
    given: Any, default: Any, brake: str | None, families: list[str]
) -> tuple[str, str]:
    """``plan_review``'s value and what decided it (``var``, ``brake``, ``default`` or
    ``credentials``). Raises :class:`GraphError` (C126) for a ``--var`` value other than
    ``auto``, ``on`` or ``off``."""
    if given is not None:
        chosen = str(given).strip().lower()
        if chosen not in _MODES:
            raise GraphError([diag("C126", f"var `{PLAN_REVIEW}`: {given!r} is not one of "
                                   "'auto', 'on', 'off'", None)])  # fmt: skip
        if chosen != "auto":
            return chosen, "var"
    if brake is not None and brake.strip():
        held = brake.strip().lower()
        if held not in _MODES:
            return "off", "brake"  # an unrecognised brake reads as off
        if held != "auto":
            return held, "brake"
    if given is None and isinstance(default, str) and default.strip().lower() in ("on", "off"):
        return default.strip().lower(), "default"
    return ("on" if len(families) >= 2 else "off"), "credentials"


def credential_vars(
    graph: ir.Graph, given: Mapping[str, Any], env: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The launch values with the credential-derived vars the workflow declares filled in, and
    what was injected (for the ``vars_injected`` event). Raises :class:`GraphError` for a
    ``--var llm_families`` or a ``plan_review`` value outside ``auto``/``on``/``off``."""
    declared = {v.name: v for v in graph.all_vars()}
    values = dict(given)
    injected: dict[str, Any] = {}
    if LLM_FAMILIES not in declared and PLAN_REVIEW not in declared:
        return values, injected
    families = credentialed_families(env)
    if LLM_FAMILIES in declared:
        if LLM_FAMILIES in given:
            why = f"--var {LLM_FAMILIES}: derived from the credentials; it cannot be given"
            raise GraphError([diag("P009", why, None)])
        as_text = declared[LLM_FAMILIES].type == "string"
        values[LLM_FAMILIES] = ",".join(families) if as_text else families
        injected[LLM_FAMILIES] = families
    if PLAN_REVIEW in declared:
        mode, source = resolve_plan_review(
            given.get(PLAN_REVIEW), declared[PLAN_REVIEW].default, env.get(PLAN_REVIEW_BRAKE),
            families,
        )  # fmt: skip
        values[PLAN_REVIEW] = mode
        injected[PLAN_REVIEW] = mode
        injected["plan_review_from"] = source
    return values, injected
