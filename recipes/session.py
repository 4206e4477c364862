"""The agent loop: :class:`AgentSession` and :func:`create_agent_session`.

``await session.prompt(text)`` calls the model, runs the tools it asks for, and repeats until the
model stops calling tools. While it runs, :meth:`AgentSession.steer` queues a message delivered
after the current tool batch (before the next model call) and :meth:`AgentSession.follow_up` one
delivered when the agent would otherwise stop. :meth:`AgentSession.abort` cancels the run.

A tool may ask the run to *pause* (it returned an ``awaiting_user`` result): the model is not
called again; ``prompt()`` returns with status ``paused``, and :attr:`AgentSession.paused` says
which calls await an answer (each with its interrupt) and which have not run.
:meth:`AgentSession.resume` gives the answers, by interrupt id, and continues. A pause is data:
a new session built from the stored transcript and :class:`PausedBatch`
(``create_agent_session(messages=..., paused=...)``) resumes it as well.

The session's ``env`` decides how asks resolve (``PI_INTERRUPT_RESUME`` on: they pause;
``PI_ASK_USER_AUTO_APPROVE`` on: they resolve at once); ``can_pause=True`` says the host pauses
without the flag; ``ui`` lets a human answer in a dialog.

Errors: a model failure propagates out of ``prompt()``/``resume()`` unchanged (status
``failed``); calling them at the wrong time is a ``UsageError``. Tool failures become error
results the model reads, except a ``ContractError`` (a tool that would skip a human), which
fails the run and propagates.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from interactions import UsageError
from interactions.asks import ROOT_SCOPE, AskScope, interrupt_ttl
from interactions.channels import Channel
from interactions.dialogs import DialogUI
from interactions.store import utc_now
from recipes._events import (
    AgentEvent,
    PausedBatch,
    SessionStatus,
)
from recipes._recipe import Agent, Recipe, resolve_model
from recipes._resume import Answers
from recipes._run import Run
from recipes._state import unanswered_calls
from recipes.decisions import DecisionBook, SessionBook
from recipes.messages import Message, ToolCall, UserMessage
from recipes.models._base import Model
from recipes.policy import Policy

__all__ = ["DEFAULT_MAX_TURNS", "AgentSession", "EventListener", "create_agent_session"]

DEFAULT_MAX_TURNS = 50
"""Model calls a session's run (a prompt, a resume, a retry) may make before it fails with
``RunError`` reason ``max_turns``: a model that calls tools for ever is a run without end."""

logger = logging.getLogger(__name__)

EventListener = Callable[[AgentEvent], None]


class AgentSession:
    """One conversation of one recipe agent with one model. Build it with
    :func:`create_agent_session`. Use it from one event loop; it runs one prompt at a time."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._listeners: list[EventListener] = []
        # Not a bound method: the run would hold the session that holds it, a cycle only the
        # garbage collector frees (every session would wait for it).
        run.emit = functools.partial(_tell, self._listeners)

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

    async def resume(self, answers: Answers) -> None:
        """Answer every paused call's interrupt and continue the run.

        ``answers`` maps each interrupt id of :attr:`paused` (``paused.interrupts``) to its
        answer: an outcome (``Answered(answer="blue")``, ``Declined()``...), a resume payload
        (``{"answer": "blue"}``, checked against the interrupt) or the interrupt carrying its
        outcome. A call of a default tool takes the answer's text as its result (the tool does
        not run again); a call of a ``resume="replay"`` tool runs again, its asks returning the
        answers in order. Then the pending calls run, one at a time, and the loop continues.
        Raises ``UsageError``, changing nothing, when the session is not paused or an awaiting
        interrupt is left unanswered.
        """
        await self._run.resume(answers)

    async def retry(self) -> None:
        """Call the model again on the transcript as it stands, adding no message.

        For a session whose last model call failed (a quota window, an outage) or was aborted:
        the conversation continues where it stopped. Raises ``UsageError``, changing nothing,
        while running or paused, or when the transcript has nothing for the model to answer
        (it is empty or ends with an assistant message).
        """
        await self._run.retry()

    def scrub(self, text: str) -> str:
        """``text`` with every credential the session holds replaced by ``***``: the value of
        each credential-looking variable of its environment (``*_KEY``, ``*_TOKEN``,
        ``*_SECRET``, ``*PASSWORD``...), and anything shaped like a well-known key. How a host
        records or shows the text of a failure, which may quote one. A tool's failure text is
        scrubbed before the model gets it."""
        return self._run.scrub(text)

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


def _tell(listeners: list[EventListener], event: AgentEvent) -> None:
    """Give ``event`` to each of a session's ``listeners``; a failing one is logged."""
    for listener in list(listeners):
        try:
            listener(event)
        except Exception:
            logger.exception("an agent event listener failed on %s", event.type)


def create_agent_session(
    recipe: Recipe,
    agent: str | None = None,
    model: Model | str | None = None,
    mode: str = "print",
    ui: DialogUI | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    *,
    messages: Sequence[Message] = (),
    paused: PausedBatch | None = None,
    session_id: str | None = None,
    run_id: str | None = None,
    tool_timeout: float | None = None,
    max_turns: int | None = DEFAULT_MAX_TURNS,
    can_pause: bool = False,
    channels: Sequence[Channel] | None = None,
    inbox: Callable[[], Awaitable[Sequence[UserMessage]]] | None = None,
    ask_scope: AskScope = ROOT_SCOPE,
    clock: Callable[[], datetime] = utc_now,
    decisions: DecisionBook | None = None,
    policy: Policy | None = None,
) -> AgentSession:
    """Create a session running ``agent`` (default: the recipe's default agent).

    ``model`` (a ``Model`` or ``"provider:name"``, resolved with ``env``) defaults to the
    agent's model, then the recipe's demo model; ``env`` to a snapshot of ``os.environ`` — the
    session's environment, from which every ask reads its flags; ``cwd`` to the current
    directory; ``run_id`` to the session id. ``mode`` is the host's word for how the agent runs
    (``tui``, ``rpc``, ``print``...); ``ui`` a dialog surface; ``can_pause`` says the host
    pauses the run on an interrupt (as ``PI_INTERRUPT_RESUME`` in ``env`` does);
    ``channels`` replaces the default channel chain. ``inbox`` is read at every turn
    boundary (before each model call, and once more before the agent stops, so a late message
    forces one more turn): the messages it returns are delivered like :meth:`AgentSession.steer`
    ones (a run's async answers arrive this way). ``clock`` is "now" for the tools' asks (an
    ask expires at its now plus its lifetime; default: the wall clock): a runner passes its
    own. ``ask_scope`` is where the session's asks are raised (a graph node's visit: every
    interrupt id its tools' asks get is in it; default: the run's own scope). ``decisions`` is
    where the tools' approval gates find and keep remembered decisions ("approve always") and
    leave their audit (default: the session's own, in memory; a durable run's is its store).
    ``policy`` is the approval policy its tools' gates apply when ``env`` names none (a durable
    run continues under the policy it started with).
    ``messages`` and ``paused`` restore a stored conversation (status ``paused`` when ``paused``
    is given). ``tool_timeout`` bounds each tool call (seconds; ``None``: no bound, as a human
    at a terminal may take their time): a call past it ends with a ``timeout`` error result.
    ``max_turns`` bounds the model calls of one run (a prompt, a resume, a retry): the call
    past it fails the run with ``RunError`` reason ``max_turns`` (a durable run is left
    ``failed_resumable``: a retry lets it go on); ``None`` lifts the bound.
    Raises ``UsageError`` for an unknown agent, no model, an empty mode, a malformed
    ``PI_INTERRUPT_TTL_SECONDS`` (``ContractError``), a ``tool_timeout`` or ``max_turns``
    that is not positive, or a transcript that does not match ``paused``.
    """
    chosen = recipe.agent(agent)
    snapshot = dict(os.environ if env is None else env)
    interrupt_ttl(snapshot)  # a malformed lifetime fails here, before anything runs
    resolved = resolve_model(recipe, chosen.name, model, env=snapshot)
    if not isinstance(mode, str) or not mode.strip():
        raise UsageError(f"mode must be a non-empty string (tui, rpc, print...), got {mode!r}")
    _check_restore(list(messages), paused)
    if tool_timeout is not None and not tool_timeout > 0:
        raise UsageError(f"tool_timeout must be a positive number of seconds, got {tool_timeout!r}")
    if max_turns is not None and (
        not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1
    ):
        raise UsageError(f"max_turns must be a positive whole number, or None, got {max_turns!r}")
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
        max_turns=max_turns,
        can_pause=can_pause,
        channels=tuple(channels) if channels is not None else None,
        inbox=inbox,
        ask_scope=ask_scope,
        clock=clock,
        decisions=decisions if decisions is not None else SessionBook(),
        policy=policy,
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
