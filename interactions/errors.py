"""The errors of pi-recipes and the one table that says how each is reported.

:data:`ERROR_CODES` gives each error its label, the command line's exit code and the HTTP
status a web host answers with; :func:`error_code` reads it for any error.
"""

from interactions._errors import (
    ERROR_CODES,
    ConflictError,
    ContractError,
    ErrorCode,
    ExpiredError,
    IllegalTransitionError,
    InteractionAborted,
    InvalidPayloadError,
    NotAllowedError,
    PiRecipesError,
    RunError,
    StoreUnavailableError,
    UnknownDecisionError,
    UnknownInteractionError,
    UnknownRunError,
    UnreadableInteractionError,
    UsageError,
    error_code,
)

__all__ = [
    "ERROR_CODES",
    "ConflictError",
    "ContractError",
    "ErrorCode",
    "ExpiredError",
    "IllegalTransitionError",
    "InteractionAborted",
    "InvalidPayloadError",
    "NotAllowedError",
    "PiRecipesError",
    "RunError",
    "StoreUnavailableError",
    "UnknownDecisionError",
    "UnknownInteractionError",
    "UnknownRunError",
    "UnreadableInteractionError",
    "UsageError",
    "error_code",
]
