"""What every stream decoder assembles a message with: streamed text made storable, finished
tool calls, the stop reason a message records, distinct call ids, and the failures of a stream
that holds no whole answer."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any, Final

from recipes.messages import ToolCall
from recipes.models._errors import ModelError

__all__ = [
    "TextJoiner",
    "distinct_id",
    "ended_early",
    "final_stop_reason",
    "no_answer",
    "tool_call",
]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _well_formed(text: str) -> str:
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class TextJoiner:
    """Streamed text made storable. JSON can escape half of a UTF-16 surrogate pair (``\\ud83d``),
    and a gateway that cuts text by UTF-16 code units sends the halves of one emoji in two events;
    no UTF-8 text (no store, no terminal) can hold a half. :meth:`feed` holds back a trailing
    high half until the next piece, so a split pair is joined again, and turns any other lone
    half into U+FFFD, as the SSE parser does with invalid UTF-8; :meth:`flush` gives what is
    held back at the end of the stream."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """``piece`` (after what was held back), well-formed, less a trailing high half."""
        text, self._held = self._held + piece, ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return _well_formed(text)

    def flush(self) -> str:
        """What is held back (a lone high half, as U+FFFD), or ``""``."""
        held, self._held = self._held, ""
        return _well_formed(held)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def tool_call(call_id: str, name: str, raw_arguments: str, *, cut: bool = False) -> ToolCall:
    """A finished tool call from its streamed arguments: a JSON object becomes ``arguments``;
    anything else (bad JSON, an array, a number) lands in ``invalid_arguments``, raw, as does an
    object a transcript cannot hold as sent (``NaN`` or ``Infinity``, text with a lone surrogate,
    nesting deeper than Python reads or a transcript can be saved with). Blank arguments are
    ``{}``, unless the call was ``cut`` by the output limit: then the model never wrote them, and
    they are invalid too (so the tool does not run with its defaults)."""
    if not raw_arguments.strip() and not cut:
        return ToolCall(id=call_id, name=name)
    try:
        value = json.loads(raw_arguments, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        call = ToolCall(id=call_id, name=name, arguments=value)
        try:
            call.model_dump_json()
        except (ValueError, RecursionError):  # too deep, or a lone surrogate: it cannot be saved
            pass
        else:
            return call
    return ToolCall(id=call_id, name=name, invalid_arguments=raw_arguments)


def final_stop_reason(reason: str | None, *, has_calls: bool) -> str:
    """The stop reason a finished message records: ``reason`` (already in Anthropic's words),
    ``no_stop_reason`` when the stream gave none (a proxy that cut the answer and then ended the
    stream cleanly), ``tool_use_without_calls`` when it said ``tool_use`` and no call came. The
    last two are not a whole answer's: ``recipes.messages.stop_warning`` warns of them."""
    if reason is None:
        return "no_stop_reason"
    if reason == "tool_use" and not has_calls:
        return "tool_use_without_calls"
    return reason


def distinct_id(wanted: str, taken: Collection[str]) -> str:
    """``wanted``, or ``wanted_2``, ``wanted_3``... when another call of the message has it: a
    result is matched to its call by id, so two calls with one id would lose one result."""
    candidate, number = wanted, 1
    while candidate in taken:
        number += 1
        candidate = f"{wanted}_{number}"
    return candidate


def ended_early(provider: str, marker: str) -> ModelError:
    """The failure of a stream that ended before its end ``marker`` (``message_stop``): the
    connection was cut or the server gave up, so the call may succeed again (``unavailable``)."""
    return ModelError(
        f"{provider}: the stream ended before {marker}",
        error_class="unavailable",
        provider=provider,
    )


def no_answer(provider: str, missing: str) -> ModelError:
    """The failure of a stream that ended holding no answer at all (``missing`` says what did
    not come): ``unclassified``, as the same request will most likely fail the same way."""
    return ModelError(
        f"{provider}: the stream ended with no answer ({missing}); "
        "the server may have failed without saying why",
        error_class="unclassified",
        provider=provider,
    )
