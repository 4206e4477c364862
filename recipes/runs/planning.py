"""The runner's decisions as pure functions (no store, no model): what a leg's end writes, what a
resume hands a session, which expired interactions to settle. Other drivers reuse them."""

from recipes._resume import ResumeResults, answered_result, resume_results
from recipes.runs._auto_retry import plan_retry, retry_delay
from recipes.runs._plan import (
    RESUMABLE_ERROR_CLASSES,
    ExpiryPlan,
    LegEnd,
    answered_interrupt,
    checkpoint_paused,
    describe_error,
    expiry_policy_of,
    last_text,
    leg_end,
    new_interaction,
    plan_expiry,
    resumable,
    session_resume,
)

__all__ = [
    "RESUMABLE_ERROR_CLASSES",
    "ExpiryPlan",
    "LegEnd",
    "ResumeResults",
    "answered_interrupt",
    "answered_result",
    "checkpoint_paused",
    "describe_error",
    "expiry_policy_of",
    "last_text",
    "leg_end",
    "new_interaction",
    "plan_expiry",
    "plan_retry",
    "resumable",
    "resume_results",
    "retry_delay",
    "session_resume",
]
