"""A model that plays a script: THE way to test a recipe's tools without a provider.

Each call to :meth:`ScriptedModel.stream` plays the turn the transcript has reached: turn ``n``
when the request already holds ``n`` assistant messages. The script's position is read from the
conversation, not kept in the model, so a run paused in one process and resumed in another with
a freshly loaded script continues at the right turn::

    model = ScriptedModel([
        AssistantMessage(tool_calls=[ToolCall(id="c1", name="greet", arguments={"name": "Ada"})]),
        lambda request: AssistantMessage(text=f"Saw {len(request.messages)} messages."),
        "Done.",                      # a str is a text-only turn
    ])
    session = create_agent_session(recipe, model=model)

A turn is an :class:`AssistantMessage`, a ``str``, or a function ``(ModelRequest) ->
AssistantMessage`` (sync or async; it may raise to play a failing model). The text streams as a
few :class:`TextDelta` chunks, each tool call as :class:`ToolCallDelta` chunks, then
:class:`Completed`. A call past the end raises :class:`ScriptExhausted`. The requests the model
received are kept in :attr:`ScriptedModel.requests` (the last 100, or ``keep_requests``: a host
serving a demo model for weeks does not grow).

Script files (:meth:`ScriptedModel.from_file`) are JSON::

    {"turns": [
        {"text": "Let me look.",
         "tool_calls": [{"id": "c1", "name": "greet", "arguments": {"name": "Ada"}}]},
        {"text": "Done."}
    ]}

``text`` defaults to ``""``, ``tool_calls`` to ``[]``, a call's ``id`` to ``call_<turn>_<n>``
and its ``arguments`` to ``{}``. Unknown keys are refused.
"""

from __future__ import annotations

import inspect
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from interactions import RunError, UsageError
from recipes.messages import AssistantMessage, ToolCall
from recipes.models._base import Completed, ModelEvent, ModelRequest, TextDelta, ToolCallDelta

__all__ = ["ScriptExhausted", "ScriptFileError", "ScriptTurn", "ScriptedModel"]

ScriptTurn = (
    AssistantMessage
    | str
    | Callable[[ModelRequest], AssistantMessage | Awaitable[AssistantMessage]]
)


class ScriptExhausted(RunError):
    """The scripted model was called more times than its script has turns."""


class ScriptFileError(UsageError):
    """A script file is missing, not JSON, or not in the script format; ``path`` names it."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


class ScriptedModel:
    """A :class:`~recipes.models.Model` playing scripted assistant turns, in order.

    ``name`` is ``scripted:<label>``. The turn played is the number of assistant messages in the
    request's transcript, so one instance can serve many sessions and a resumed run continues
    where it paused. :meth:`replay` gives a copy with an empty request log.
    """

    def __init__(
        self, turns: Iterable[ScriptTurn], *, label: str = "script", keep_requests: int = 100
    ) -> None:
        if (
            isinstance(keep_requests, bool)
            or not isinstance(keep_requests, int)
            or keep_requests < 0
        ):
            raise UsageError(f"keep_requests must be a whole number >= 0, got {keep_requests!r}")
        self._turns: list[ScriptTurn] = list(turns)
        self._label = label
        self._played = 0
        self.requests: deque[ModelRequest] = deque(maxlen=keep_requests)
        """The last ``keep_requests`` requests received, oldest first (including one that found
        the script exhausted)."""

    @property
    def name(self) -> str:
        """``scripted:<label>``."""
        return f"scripted:{self._label}"

    @property
    def remaining(self) -> int:
        """How many turns come after the furthest one played so far."""
        return len(self._turns) - self._played

    def replay(self) -> ScriptedModel:
        """A fresh model with the same script and label, starting at the first turn."""
        return ScriptedModel(
            self._turns, label=self._label, keep_requests=self.requests.maxlen or 0
        )

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load a script file (format in the module docstring); the label is the path.

        Raises :class:`ScriptFileError` naming the file (and the line, for bad JSON).
        """
        where = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptFileError(f"cannot read the script: {exc.strerror}", path=where) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScriptFileError(
                f"line {exc.lineno}: not valid JSON: {exc.msg}", path=where
            ) from exc
        try:
            script = _ScriptFile.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ScriptFileError(
                f'not a script ({problems}); expected {{"turns": [{{"text": ..., '
                '"tool_calls": [{"id": ..., "name": ..., "arguments": {...}}]}]}',
                path=where,
            ) from exc
        return cls([turn.to_message(i) for i, turn in enumerate(script.turns)], label=where)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Play the next turn (see the module docstring). Raises :class:`ScriptExhausted`."""
        self.requests.append(request)
        index = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if index >= len(self._turns):
            raise ScriptExhausted(
                f"{self.name} was asked for turn {index + 1} but its script has only "
                f"{len(self._turns)} turns; add a turn for this call",
                reason="script_exhausted",
            )
        turn = self._turns[index]
        self._played = max(self._played, index + 1)
        message = await _play(turn, request)
        for chunk in _chunks(message.text):
            yield TextDelta(delta=chunk)
        for call in message.tool_calls:
            arguments = call.invalid_arguments or json.dumps(call.arguments)
            half = len(arguments) // 2
            yield ToolCallDelta(id=call.id, name=call.name, arguments_delta=arguments[:half])
            yield ToolCallDelta(id=call.id, arguments_delta=arguments[half:])
        stop = message.stop_reason or ("tool_use" if message.tool_calls else "stop")
        yield Completed(
            message=message.model_copy(
                update={"model": message.model or self.name, "stop_reason": stop}
            )
        )


async def _play(turn: ScriptTurn, request: ModelRequest) -> AssistantMessage:
    if isinstance(turn, AssistantMessage):
        return turn
    if isinstance(turn, str):
        return AssistantMessage(text=turn)
    result = turn(request)
    if inspect.isawaitable(result):
        result = await result
    if not isinstance(result, AssistantMessage):
        raise UsageError(
            f"a script function must return an AssistantMessage, got {type(result).__name__}"
        )
    return result


def _chunks(text: str, parts: int = 3) -> list[str]:
    """``text`` cut in at most ``parts`` non-empty pieces."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


class _CallSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class _TurnSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = ""
    tool_calls: list[_CallSpec] = Field(default_factory=list)

    def to_message(self, turn: int) -> AssistantMessage:
        calls = [
            ToolCall(id=c.id or f"call_{turn}_{n}", name=c.name, arguments=c.arguments)
            for n, c in enumerate(self.tool_calls)
        ]
        return AssistantMessage(text=self.text, tool_calls=calls)


class _ScriptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: list[_TurnSpec] = Field(min_length=1)
