"""How the command line reports errors: one exit code per error family, the reason on stderr."""

from __future__ import annotations

import sys

from interactions import (
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    PiRecipesError,
    RunError,
    UnknownInteractionError,
    UnknownRunError,
    UsageError,
)
from recipes.runs import RESUMABLE_ERROR_CLASSES

__all__ = ["EXIT_CODES", "exit_code_for", "report"]

EXIT_CODES: dict[type[PiRecipesError], tuple[int, str]] = {
    ConflictError: (3, "conflict"),
    UnknownRunError: (4, "unknown run"),
    UnknownInteractionError: (4, "unknown interaction"),
    ExpiredError: (5, "expired"),
    InvalidPayloadError: (6, "invalid payload"),
    UsageError: (2, "usage"),
}
"""Exit code and label per error: 3 a conflict (HTTP 409), 4 an unknown id (404), 5 an expired
interaction (410), 6 a payload that fails the schema (422), 2 a usage error, 1 anything else."""


def exit_code_for(error: PiRecipesError) -> tuple[int, str]:
    for cls, (code, label) in EXIT_CODES.items():
        if isinstance(error, cls):
            return code, label
    return 1, "error"


def report(error: PiRecipesError) -> int:
    """Print ``error`` as ``pi-recipes: <label>: <message>`` on stderr; return its exit code."""
    code, label = exit_code_for(error)
    print(f"pi-recipes: {label}: {error}", file=sys.stderr)
    if isinstance(error, RunError) and error.run_id and error.reason in RESUMABLE_ERROR_CLASSES:
        print(
            f"pi-recipes: retry it later with: pi-recipes runs retry {error.run_id}",
            file=sys.stderr,
        )
    return code
