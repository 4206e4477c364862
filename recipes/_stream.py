"""Streaming one assistant message from a model, as ``message_*`` events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio

from interactions import RunError
from interactions.secrets import Secrets, TextScrubber
from recipes._events import AgentEvent, MessageEnd, MessageStart, MessageUpdate
from recipes.messages import AssistantMessage
from recipes.models._base import Completed, Model, ModelEvent, ModelRequest, TextDelta

__all__ = ["stream_assistant"]


async def stream_assistant(
    model: Model,
    request: ModelRequest,
    emit: Callable[[AgentEvent], None],
    keep_partial: Callable[[AssistantMessage], None],
    secrets: Secrets | None = None,
) -> AssistantMessage:
    """Call ``model`` and return its completed message (``model`` filled in when missing).

    The text is scrubbed of ``secrets`` as it streams (:class:`TextScrubber`: a secret split
    across deltas is replaced whole, a delta's tail held back while it could begin one) and
    whole in the message returned, so that no update, no partial and no stored turn holds one.

    Emits ``message_start`` and one ``message_update`` per delta; the caller emits
    ``message_end`` once it appended the message. When cancelled, emits ``message_end`` for the
    partial message (``stop_reason="aborted"``), hands it to ``keep_partial`` and re-raises. A
    model error propagates unchanged; a stream without ``Completed``, or a message whose tool
    calls share an id, is a ``RunError`` (reason ``model_protocol``). The model's stream is
    always closed.
    """
    emit(MessageStart(message=AssistantMessage()))
    text = ""
    final: AssistantMessage | None = None
    scrubber = TextScrubber(secrets) if secrets else None
    stream = model.stream(request)
    try:
        async for event in stream:
            if isinstance(event, Completed):
                final = event.message
                if scrubber is not None:
                    if rest := scrubber.finish():
                        text += rest
                        emit(MessageUpdate(delta=TextDelta(delta=rest), text=text))
                    final = final.model_copy(update={"text": _scrubbed_text(final, secrets)})
                continue
            if isinstance(event, TextDelta):
                if scrubber is not None:
                    shown = scrubber.feed(event.delta)
                    if not shown:
                        continue  # held back: it may begin a secret
                    event = TextDelta(delta=shown)
                text += event.delta
            emit(MessageUpdate(delta=event, text=text))
    except anyio.get_cancelled_exc_class():
        if scrubber is not None:
            text += scrubber.finish()
        partial = AssistantMessage(text=text, stop_reason="aborted", model=model.name)
        emit(MessageEnd(message=partial))
        keep_partial(partial)
        raise
    finally:
        await _close(stream)
    if final is None:
        raise RunError(
            f"model {model.name} ended its stream without a Completed event",
            reason="model_protocol",
        )
    _check_call_ids(model, final)
    return final.model_copy(update={"model": final.model or model.name})


def _scrubbed_text(message: AssistantMessage, secrets: Secrets | None) -> str:
    """The message's text with ``secrets`` scrubbed out (as is without secrets)."""
    return secrets.scrub_known(message.text) if secrets else message.text


def _check_call_ids(model: Model, message: AssistantMessage) -> None:
    """Refuse a message whose tool calls share an id: their results (and a durable run's
    pauses) are keyed by it, so one call's result would be lost."""
    seen: set[str] = set()
    for call in message.tool_calls:
        if call.id in seen:
            raise RunError(
                f"model {model.name} gave two tool calls the id {call.id!r}; each call of a "
                "message needs its own id",
                reason="model_protocol",
            )
        seen.add(call.id)


async def _close(stream: AsyncIterator[ModelEvent]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):  # close even when the run was cancelled
            await aclose()
