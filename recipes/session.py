"""The agent loop: :class:`AgentSession` and :func:`create_agent_session`.

``await session.prompt(text)`` calls the model, runs the tools it asks for, and repeats until the
model stops calling tools. While it runs, :meth:`AgentSession.steer` queues a message delivered
after the current tool batch (before the next model call) and :meth:`AgentSession.follow_up` one
delivered when the agent would otherwise stop. :meth:`AgentSession.abort` cancels the run.

A tool may ask the run to *pause* (it returned an ``awaiting_user`` result): the model is not
called again; ``prompt()`` returns with status ``paused``, and :attr:`AgentSession.paused` says
which calls await an answer and which have not run. :meth:`AgentSession.resume` gives the
answers and continues. A pause is data: a new session built from the stored transcript and
:class:`PausedBatch` (``create_agent_session(messages=..., paused=...)``) resumes it as well.

Errors: a model failure propagates out of ``prompt()``/``resume()`` unchanged (status
``failed``); calling them at the wrong time is a ``UsageError``. Tools never raise out of the
loop: their failures become error results.
"""

from __future__ import annotations

import logging
import math
import os
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import get_args

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from interactions import DialogUI, Mode, UsageError
from recipes._api import Agent, Recipe
from recipes._events import (
    AgentEnd,
    AgentEvent,
    AgentEventAdapter,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    PausedBatch,
    SessionStatus,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from recipes._run import Run
from recipes._state import unanswered_calls
from recipes.messages import Message, ToolCall, UserMessage
from recipes.models._base import Model

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentEventAdapter",
    "AgentSession",
    "AgentStart",
    "EventListener",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "PausedBatch",
    "SessionStatus",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TurnEnd",
    "TurnStart",
    "create_agent_session",
]

logger = logging.getLogger(__name__)

EventListener = Callable[[AgentEvent], None]


class AgentSession:
    """One conversation of one recipe agent with one model. Build it with
    :func:`create_agent_session`. Use it from one event loop; it runs one prompt at a time."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._listeners: list[EventListener] = []
        run.emit = self._emit

    @property
    def session_id(self) -> str:
        """This session's id (also ``ctx.session_id``)."""
        return self._run.session_id

    @property
    def agent(self) -> Agent:
        """The agent this session runs."""
        return self._run.agent

    @property
    def model(self) -> Model:
        """The model this session calls."""
        return self._run.model

    @property
    def status(self) -> SessionStatus:
        """``idle``, ``running``, ``paused``, ``aborted`` (the last run was aborted; a new
        prompt may follow) or ``failed`` (the last run raised; a new prompt may follow)."""
        return self._run.status

    @property
    def messages(self) -> list[Message]:
        """A copy of the transcript (round-trips through ``TranscriptAdapter``)."""
        return list(self._run.messages)

    @property
    def paused(self) -> PausedBatch | None:
        """What the paused batch waits for, while ``status == "paused"``."""
        return self._run.paused

    @property
    def pending_calls(self) -> list[ToolCall]:
        """The calls of the paused batch that have not run (empty unless paused)."""
        return list(self._run.paused.pending) if self._run.paused else []

    @property
    def awaiting_call_ids(self) -> list[str]:
        """The ids of the calls waiting for a human (empty unless paused)."""
        return self._run.paused.awaiting_call_ids if self._run.paused else []

    async def prompt(self, text: str | UserMessage) -> None:
        """Send a user message and run until the agent stops, pauses or is aborted.

        Raises ``UsageError`` while a run is going (use :meth:`steer` / :meth:`follow_up`) or
        the session is paused (use :meth:`resume`). A model error propagates unchanged.
        """
        if self.status == "running":
            raise UsageError("the session is running; use steer() or follow_up() to add a message")
        if self.status == "paused":
            raise UsageError(
                f"the session is paused awaiting {self.awaiting_call_ids}; call resume() first"
            )
        await self._run.run(_user(text))

    async def resume(self, results: Mapping[str, object]) -> None:
        """Answer every paused call and continue the run.

        ``results`` maps each of :attr:`awaiting_call_ids` to its result: a
        ``ToolResultMessage``, a ``ToolResult``, a ``str`` or an ``AskUserResult``-like object.
        The paused tools are not run again; then the pending calls run, one at a time, and the
        loop continues. Raises ``UsageError``, changing nothing, when the session is not paused
        or ``results`` does not cover exactly the awaiting ids.
        """
        await self._run.resume(results)

    async def retry(self) -> None:
        """Call the model again on the transcript as it stands, adding no message.

        For a session whose last model call failed (a quota window, an outage) or was aborted:
        the conversation continues where it stopped. Raises ``UsageError``, changing nothing,
        while running or paused, or when the transcript has nothing for the model to answer
        (it is empty or ends with an assistant message).
        """
        await self._run.retry()

    def steer(self, text: str | UserMessage) -> None:
        """Queue a message delivered after the current tool batch, before the next model call
        (when idle: at the start of the next run)."""
        self._run.steering.append(_user(text))

    def follow_up(self, text: str | UserMessage) -> None:
        """Queue a message delivered when the agent would otherwise stop."""
        self._run.follow_ups.append(_user(text))

    def abort(self, reason: str = "aborted by the caller") -> None:
        """Abort the running run: running tools are cancelled, the rest are not started, every
        open tool call gets an ``aborted`` error result, the status becomes ``aborted``. When
        paused, the awaiting and pending calls get ``aborted`` results. Otherwise nothing
        happens. Call it from the session's event loop thread."""
        self._run.abort(reason)

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every event, in order; returns a function that unsubscribes.

        Listeners run inline, so they must not block. One that raises is logged and skipped.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    @asynccontextmanager
    async def subscribe(
        self, max_buffer: float = math.inf
    ) -> AsyncIterator[MemoryObjectReceiveStream[AgentEvent]]:
        """Receive the events as an async stream while the block lasts (an SSE host iterates
        it). Events past ``max_buffer`` unread ones are dropped and logged."""
        send, receive = anyio.create_memory_object_stream[AgentEvent](max_buffer)
        unsubscribe = self.on_event(send.send_nowait)
        try:
            with send:
                async with receive:
                    yield receive
        finally:
            unsubscribe()

    def _emit(self, event: AgentEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("an agent event listener failed on %s", event.type)


def create_agent_session(
    recipe: Recipe,
    agent: str | None = None,
    model: Model | str | None = None,
    mode: Mode = "print",
    ui: DialogUI | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    *,
    messages: Sequence[Message] = (),
    paused: PausedBatch | None = None,
    session_id: str | None = None,
    run_id: str | None = None,
    tool_timeout: float | None = None,
) -> AgentSession:
    """Create a session running ``agent`` (default: the recipe's default agent).

    ``model`` (a ``Model`` or ``"provider:name"``, resolved with ``env``) defaults to the agent's
    model; ``env`` to a snapshot of ``os.environ``; ``cwd`` to the current directory;
    ``run_id`` to the session id.
    ``messages`` and ``paused`` restore a stored conversation (status ``paused`` when ``paused``
    is given). ``tool_timeout`` bounds each tool call (seconds; ``None``: no bound, as a human
    at a terminal may take their time): a call past it ends with a ``timeout`` error result.
    Raises ``UsageError`` for an unknown agent, no model, a bad mode, a ``tool_timeout`` that is
    not positive, or a transcript that does not match ``paused``.
    """
    chosen = recipe.agent(agent)
    snapshot = dict(os.environ if env is None else env)
    resolved = model if model is not None else chosen.model
    if resolved is None:
        hint = " or model=recipe.demo_model" if recipe.demo_model is not None else ""
        raise UsageError(
            f"agent {chosen.name!r} of recipe {recipe.name!r} has no model: pass model= "
            f"(a Model or 'provider:name'){hint}"
        )
    if isinstance(resolved, str):
        from recipes.models._registry import model_from_name  # lazy: providers load on use

        resolved = model_from_name(resolved, env=snapshot)
    if mode not in get_args(Mode):
        raise UsageError(f"mode must be one of {get_args(Mode)}, got {mode!r}")
    _check_restore(list(messages), paused)
    if tool_timeout is not None and not tool_timeout > 0:
        raise UsageError(f"tool_timeout must be a positive number of seconds, got {tool_timeout!r}")
    sid = session_id or uuid.uuid4().hex
    run = Run(
        agent=chosen,
        tools={t.name: t for t in recipe.tools_for(chosen)},
        model=resolved,
        mode=mode,
        ui=ui,
        env=snapshot,
        cwd=Path.cwd() if cwd is None else Path(cwd),
        session_id=sid,
        run_id=run_id or sid,
        messages=list(messages),
        paused=paused,
        tool_timeout=tool_timeout,
    )
    return AgentSession(run)


def _check_restore(messages: list[Message], paused: PausedBatch | None) -> None:
    open_ids = sorted(c.id for c in unanswered_calls(messages))
    if paused is None and open_ids:
        raise UsageError(
            f"the transcript ends with tool calls lacking results {open_ids}; pass the "
            "PausedBatch stored with it as paused="
        )
    if paused is not None:
        expected = sorted(paused.awaiting_call_ids + [c.id for c in paused.pending])
        if open_ids != expected:
            raise UsageError(
                f"paused= does not match the transcript: it names the calls {expected}, the "
                f"transcript's last assistant message leaves {open_ids} without results"
            )


def _user(text: str | UserMessage) -> UserMessage:
    return text if isinstance(text, UserMessage) else UserMessage.of_text(text)
