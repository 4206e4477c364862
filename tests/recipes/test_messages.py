"""What the transcript says of itself: whether its last answer is whole."""

from __future__ import annotations

import pytest

from recipes.messages import AssistantMessage, ToolCall, UserMessage, stop_warning


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("max_tokens", "output limit (max_tokens)"),
        ("model_context_window_exceeded", "context window was full"),
        ("content_filter", "content filter"),
        ("refusal", "is a refusal"),
    ],
)
def test_an_answer_the_model_did_not_finish_is_named(reason: str, said: str) -> None:
    messages = [UserMessage.of_text("Write"), AssistantMessage(text="Part", stop_reason=reason)]
    warning = stop_warning(messages)
    assert warning is not None and said in warning


@pytest.mark.parametrize(
    "reason", [None, "end_turn", "stop_sequence", "tool_use", "stop", "eos_token"]
)
def test_a_whole_answer_has_no_warning(reason: str | None) -> None:
    assert stop_warning([AssistantMessage(text="Done.", stop_reason=reason)]) is None


def test_only_the_last_answer_counts() -> None:
    cut = AssistantMessage(
        text="Checking", tool_calls=[ToolCall(id="c", name="x")], stop_reason="max_tokens"
    )
    assert stop_warning([cut, AssistantMessage(text="Done.", stop_reason="end_turn")]) is None
    assert stop_warning([UserMessage.of_text("hi")]) is None


@pytest.mark.parametrize("reason", ["repetition", "MALFORMED_FUNCTION_CALL", "pause_turn"])
def test_an_answer_stopped_for_a_reason_not_known_is_named(reason: str) -> None:
    """vLLM's repetition detector (``repetition``), a gateway's own words: an answer whose stop
    reason says nothing of being whole is not passed off as whole."""
    warning = stop_warning([AssistantMessage(text="Part", stop_reason=reason)])
    assert warning is not None and repr(reason) in warning
