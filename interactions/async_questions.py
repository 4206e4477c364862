"""Async questions, for hosts and engines: ask, keep working, sync later.

The ids, texts and decisions shared by every place async questions cross (the agent's tools,
the runner, the graph engine, the hosts): see :mod:`interactions._async`.
"""

from interactions._async import (
    ALL_ANSWERED_HEADER,
    ASYNC_KIND,
    ASYNC_PROMPT_SECTION,
    AWAIT_KIND,
    AWAIT_REASON,
    MESSAGE_CANCELLED,
    MESSAGE_DELIVERED,
    MESSAGE_QUEUED,
    answer_line,
    answer_message,
    answer_text,
    async_interaction,
    async_interaction_id,
    await_interrupt,
    awaited_ids,
    collected_text,
    open_for_pause,
    pending_async,
    posted_text,
    question_of,
    settle_awaits,
)

__all__ = [
    "ALL_ANSWERED_HEADER",
    "ASYNC_KIND",
    "ASYNC_PROMPT_SECTION",
    "AWAIT_KIND",
    "AWAIT_REASON",
    "MESSAGE_CANCELLED",
    "MESSAGE_DELIVERED",
    "MESSAGE_QUEUED",
    "answer_line",
    "answer_message",
    "answer_text",
    "async_interaction",
    "async_interaction_id",
    "await_interrupt",
    "awaited_ids",
    "collected_text",
    "open_for_pause",
    "pending_async",
    "posted_text",
    "question_of",
    "settle_awaits",
]
