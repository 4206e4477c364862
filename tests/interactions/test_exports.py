"""The public names of ``interactions``: nothing leaks, nothing vanishes by accident."""

from __future__ import annotations

import interactions

PUBLIC = {
    "AUTO_APPROVE_ENV", "AWAITING_TEXT", "DECLINED_TEXT", "DEFAULT_CHANNELS",
    "DEFAULT_INTERRUPT_TTL", "INTERRUPT_RESUME_ENV", "INTERRUPT_TTL_ENV", "RPC_DIALOG_TIMEOUT",
    "UNAVAILABLE_TEXT", "AnswerPayload", "Answered", "AnsweredMultiple", "AnswersPayload",
    "ApprovalPayload", "ApprovalRequest", "Approved", "AskCall", "AskUserDetails",
    "AskUserDisplay", "AskUserInterrupt", "AskUserOption", "AskUserOutcome", "AskUserRequest",
    "AskUserResult", "AskUserSection", "AwaitingUser", "Channel", "ChannelFacts",
    "ConflictError", "Declined", "DialogStep", "DialogUI", "ExpiredError",
    "IllegalTransitionError", "InputStep", "InteractionAborted", "InvalidPayloadError", "Mode",
    "MultiSelectStep", "MultiSelectUI", "PiRecipesError", "QuestionRequest", "ResumePlan",
    "parse_resume_entries", "plan_resume",
    "RevisionRequested", "RunError", "SelectStep", "Selection", "TextContent",
    "ToolContextLike", "Unavailable", "UnknownInteractionError", "UnknownRunError",
    "UsageError", "ask_user", "ask_user_approval", "ask_user_question",
    "auto_resolve_interactions", "check_payload_against_schema", "dialog_walk", "flag_on",
    "format_interaction_outcome", "format_interaction_resume", "gather_facts",
    "interrupt_id_for", "normalize_options", "outcome_from_resume", "response_schema_for",
    "run_dialog", "select_channel",
}  # fmt: skip


def test_public_names_are_pinned() -> None:
    assert set(interactions.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(interactions, name) is not None


def test_public_functions_and_classes_have_docstrings() -> None:
    for name in interactions.__all__:
        obj = getattr(interactions, name)
        if callable(obj) and getattr(obj, "__module__", "").startswith("interactions"):
            assert obj.__doc__ and obj.__doc__.strip(), f"{name} has no docstring"


def test_error_families() -> None:
    assert issubclass(interactions.UsageError, ValueError)
    assert issubclass(interactions.InteractionAborted, Exception)
    assert not issubclass(interactions.InteractionAborted, interactions.RunError)
    for cls in (
        interactions.ConflictError,
        interactions.ExpiredError,
        interactions.UnknownRunError,
        interactions.UnknownInteractionError,
        interactions.InvalidPayloadError,
        interactions.IllegalTransitionError,
    ):
        assert issubclass(cls, interactions.RunError)
    err = interactions.ConflictError(
        "taken", run_id="r1", interaction_id="int-1", reason="conflict"
    )
    assert (err.run_id, err.interaction_id, err.reason) == ("r1", "int-1", "conflict")
