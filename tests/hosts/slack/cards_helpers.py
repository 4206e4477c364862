"""Interrupts made by the real ask helpers, stored as records, for the pure card tests."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
from slack_sdk.models.blocks import Block

from interactions import ask_user_approval, ask_user_question
from interactions.store import InteractionAnswer, InteractionRecord
from interactions.testing.dialogs import StaticToolContext

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
PAUSE = StaticToolContext(can_pause=True)


def question(text: str = "Where to?", **kwargs: Any) -> InteractionRecord:
    result = anyio.run(lambda: ask_user_question(text, tool_call_id="c1", ctx=PAUSE, **kwargs))
    return record(result.details.interrupt.model_dump(mode="json", exclude_none=True))


def approval(**kwargs: Any) -> InteractionRecord:
    result = anyio.run(lambda: ask_user_approval(tool_call_id="c1", ctx=PAUSE, **kwargs))
    return record(result.details.interrupt.model_dump(mode="json", exclude_none=True))


def record(
    descriptor: dict[str, Any],
    answer: InteractionAnswer | None = None,
    *,
    expires_at: datetime = NOW + timedelta(days=6, hours=3),
) -> InteractionRecord:
    return InteractionRecord(
        id=descriptor["id"],
        run_id="run-1",
        tool_call_id="c1",
        requested_at=NOW,
        expires_at=expires_at,
        answered_at=NOW if answer is not None else None,
        descriptor=descriptor,
        answer=answer,
    )


def answered(base: InteractionRecord, **answer: Any) -> InteractionRecord:
    return base.model_copy(update={"answer": InteractionAnswer(**answer), "answered_at": NOW})


def validated(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's blocks, after slack-sdk read each back and wrote the same JSON."""
    blocks: list[dict[str, Any]] = payload["blocks"]
    assert 1 <= len(blocks) <= 50
    for raw in blocks:
        parsed = Block.parse(raw)
        assert parsed is not None and parsed.to_dict() == raw
    return blocks


def mrkdwn_texts(value: Any) -> list[str]:
    """Every mrkdwn text in a block tree."""
    found: list[str] = []
    if isinstance(value, dict):
        if value.get("type") == "mrkdwn":
            found.append(value["text"])
        for item in value.values():
            found += mrkdwn_texts(item)
    elif isinstance(value, list):
        for item in value:
            found += mrkdwn_texts(item)
    return found


OURS = re.compile(r"<!date\^\d+\^[^|>]*\|[^>]*>|<https?://[^|>]*\|Full text>|<@U[A-Z0-9]+>")


def markup_left(text: str) -> str:
    """What is left of ``text`` that Slack would parse, once this host's own tokens (dates, the
    full-text link, a Slack user's mention) are taken out: must be nothing."""
    return "".join(re.findall(r"[<>]", OURS.sub("", text)))
