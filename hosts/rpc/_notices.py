"""Records the host writes on its own, not for one session event. Pure: no I/O.

- ``agent_settled`` (pi 1.6): the prompt is over and nothing more will run by itself;
  ``aborted`` when it ended by an abort. pi's ``RpcClient.waitForIdle()`` waits for it.
- ``queue_update`` (pi 1.6): the whole queue of steering and follow-up messages, as text, each
  time it changes.
- ``extension_ui_response_ignored`` (ours): a dialog response nobody waits for was dropped.
- ``extension_ui_response_invalid`` (ours): a dialog response of the wrong shape was refused;
  the dialog stays open (see :mod:`hosts.rpc._dialogs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recipes.messages import UserMessage, text_of

__all__ = [
    "IGNORED_REASON",
    "agent_settled",
    "ignored_response",
    "invalid_response",
    "queue_update",
]

IGNORED_REASON = "unknown or closed dialog"


def agent_settled(*, aborted: bool) -> dict[str, Any]:
    """The record that ends a prompt's work."""
    return {"type": "agent_settled", "aborted": aborted}


def queue_update(
    steering: Sequence[UserMessage], follow_up: Sequence[UserMessage]
) -> dict[str, Any]:
    """The record of the current queues (each message as its text)."""
    return {
        "type": "queue_update",
        "steering": [text_of(m.content) for m in steering],
        "followUp": [text_of(m.content) for m in follow_up],
    }


def ignored_response(frame: dict[str, Any]) -> dict[str, Any]:
    """The notice for an ``extension_ui_response`` no open dialog waits for (late, unknown,
    or answering a dialog already closed): it is dropped, and the client is told so."""
    return {
        "type": "extension_ui_response_ignored",
        "id": frame.get("id"),
        "reason": IGNORED_REASON,
    }


def invalid_response(dialog_id: str, method: str, error: str, expected: str) -> dict[str, Any]:
    """The notice for a response to dialog ``dialog_id`` that was refused: ``error`` says what
    was wrong, ``expected`` what the dialog accepts. The dialog is still open."""
    return {
        "type": "extension_ui_response_invalid",
        "id": dialog_id,
        "method": method,
        "error": error,
        "expected": expected,
    }
