"""The RPC mode host: one agent session driven by JSON-lines commands over a pair of streams.

:class:`RpcServer` serves one :class:`~recipes.AgentSession` (mode ``"rpc"``) until its
input ends or :meth:`RpcServer.stop` is called. Lines are split strictly on ``\\n``
(:mod:`hosts.rpc._framing`); each one is a command (:mod:`hosts.rpc._commands`) answered by
one ``response`` record, or an ``extension_ui_response`` answering a dialog
(:mod:`hosts.rpc._ui`). The session's events go out as pi's session-event records
(:mod:`hosts.rpc._records`); when a prompt's work is over the host writes ``agent_settled``,
and ``queue_update`` whenever the steering/follow-up queues change (:mod:`hosts.rpc._notices`).

Every record goes through one outbox drained by one writer task, so records never interleave
and keep the order they were produced in: a ``prompt``'s response comes before its
``agent_start``, an ``abort``'s response after the run's ``agent_end`` and ``agent_settled``.
The outbox is bounded (:mod:`hosts.rpc._outbox`): while the client does not read, the host stops
reading commands and the model's stream waits.

Nothing the client sends stops the server: a bad line gets a ``parse`` error response, a bad
command an error response, a dialog response nobody waits for an
``extension_ui_response_ignored`` notice, one of the wrong shape an
``extension_ui_response_invalid`` notice. The end of the input (or :meth:`RpcServer.stop`)
aborts a running prompt, waits (bounded) for its ``agent_end``, writes what is queued (bounded)
and returns.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from hosts.rpc._async import RpcAsyncQuestions
from hosts.rpc._commands import (
    Abort,
    Command,
    CommandError,
    FollowUp,
    GetMessages,
    GetState,
    Prompt,
    Steer,
    failure,
    parse_command,
    success,
)
from hosts.rpc._framing import FrameError, LineSplitter, decode_frame, encode_frame
from hosts.rpc._messages import Timestamps, pi_model
from hosts.rpc._notices import agent_settled
from hosts.rpc._outbox import OUTBOX_CAPACITY, Outbox, PacedModel
from hosts.rpc._queues import Queues
from hosts.rpc._records import EventRecords
from hosts.rpc._ui import DEFAULT_TIMEOUT, RpcDialogUI
from interactions import UsageError
from interactions.secrets import Secrets
from recipes import AgentSession, Recipe, create_agent_session, resolve_model
from recipes.async_questions import with_async_questions
from recipes.events import AgentEvent, MessageStart
from recipes.messages import UserMessage
from recipes.models import Model

__all__ = ["ABORT_GRACE", "DRAIN_GRACE", "RpcServer"]

logger = logging.getLogger("hosts.rpc")

ABORT_GRACE = 10.0
"""Seconds a run gets to end after an abort (or the end of the input) before the server stops
waiting for it."""

DRAIN_GRACE = 5.0
"""Seconds the server, once stopping, keeps writing queued records to a client that reads."""

WRITE_BATCH = 64
"""The most records one write to the client carries (the ones already queued, in order)."""

_Record = dict[str, Any]


class RpcServer:
    """One session of ``recipe`` served over a pair of byte streams; see the module docstring.

    The model is ``model`` (a ``Model`` or ``"provider:name"``), else the agent's, else the
    recipe's demo model. Raises ``UsageError`` for an unknown agent or when there is no model.
    ``env`` (default: ``os.environ``) is the session's environment. ``outbox_capacity`` bounds
    the records queued for a client that does not read; ``dialog_timeout`` is the seconds a
    dialog waits when its caller gives none; ``clock`` (seconds since the epoch) stamps
    messages. As pi's flags do: ``append_system_prompt`` ends the agent's instructions,
    ``tools`` narrows its tools to these names (``UsageError`` for one it does not have).
    ``async_questions`` gives it ``ask_user_async`` and ``await_answers``, whose calls go to
    the client (see :mod:`hosts.rpc._async`).
    """

    def __init__(
        self,
        recipe: Recipe,
        *,
        agent: str | None = None,
        model: Model | str | None = None,
        env: Mapping[str, str] | None = None,
        outbox_capacity: int = OUTBOX_CAPACITY,
        dialog_timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.time,
        append_system_prompt: str | None = None,
        tools: Sequence[str] | None = None,
        async_questions: bool = False,
    ) -> None:
        chosen = recipe.agent(agent)
        model = resolve_model(recipe, chosen.name, model, env=os.environ if env is None else env)
        self._outbox = Outbox(outbox_capacity)
        self.ui = RpcDialogUI(self._outbox.put, default_timeout=dialog_timeout)
        recipe = _narrowed(recipe, chosen.name, append_system_prompt, tools)
        if async_questions:
            binder = RpcAsyncQuestions(self.ui, os.environ if env is None else env)
            recipe = with_async_questions(recipe, chosen.name, binder)
        self.session: AgentSession = create_agent_session(
            recipe,
            chosen.name,
            PacedModel(model, self._outbox.wait_for_room),
            mode="rpc",
            ui=self.ui,
            env=env,
        )
        self._records = EventRecords(model.name, Timestamps(clock))
        self._secrets = Secrets.from_env(os.environ if env is None else env)  # out of every line
        self._queues = Queues()
        self.session.on_event(self._on_event)
        self._recipe = recipe.name
        self._busy = False
        self._run_scope: anyio.CancelScope | None = None
        self._idle: anyio.Event | None = None
        self._tasks: TaskGroup | None = None
        self._reading = anyio.CancelScope()
        self._stop_reason = "the client closed its input"
        self._drained = anyio.Event()
        self.stopping = anyio.Event()
        """Set once the server reads no more commands (its input ended, or :meth:`stop`)."""
        self.output_lost = False
        """Whether :meth:`run` returned because writing to the client failed (it is gone)."""

    async def run(self, stdin: ByteReceiveStream, stdout: ByteSendStream) -> None:
        """Serve commands from ``stdin`` until it ends or :meth:`stop` is called; write every
        record to ``stdout``.

        Returns once the input ended, the running prompt (if any) was aborted and the queued
        records were written (or :data:`DRAIN_GRACE` passed); or early, when ``stdout`` breaks
        (the client is gone: :attr:`output_lost`). Call it once.
        """
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            tasks.start_soon(self._write_records, stdout, tasks.cancel_scope)
            try:
                with self._reading:
                    await self._read_commands(stdin)
                self.stopping.set()
                await self._stop_run(self._stop_reason)
            except CommandError as exc:
                logger.warning("stopping anyway: %s", exc)
            finally:
                self._outbox.close()
            with anyio.move_on_after(DRAIN_GRACE):
                await self._drained.wait()
            tasks.cancel_scope.cancel()

    def stop(self, reason: str) -> None:
        """Stop serving as if the input had ended: read no more commands, abort the running
        prompt (its open dialogs get cancel notices), write what is queued. ``run`` returns."""
        self._stop_reason = reason
        self._reading.cancel()

    def state(self) -> dict[str, Any]:
        """The ``get_state`` data: pi 1.6's ``RpcSessionState`` fields (``model`` with the parts
        of pi's ``Model`` we know; ``thinkingLevel`` ``off``; no compaction; both queues
        delivered ``all`` at once), plus ours: ``recipe``, ``agent``, ``status`` (the
        session's, ``running`` while a prompt runs) and ``pendingDialogs`` (the ids of the open
        dialogs)."""
        session = self.session
        return {
            "model": pi_model(session.model.name),
            "thinkingLevel": "off",
            "isStreaming": self._busy,
            "isCompacting": False,
            "steeringMode": "all",
            "followUpMode": "all",
            "sessionId": session.session_id,
            "autoCompactionEnabled": False,
            "messageCount": len(session.messages),
            "pendingMessageCount": len(self._queues),
            "recipe": self._recipe,
            "agent": session.agent.name,
            "status": "running" if self._busy else session.status,
            "pendingDialogs": self.ui.open_dialogs,
        }

    # --- output ---------------------------------------------------------------------------

    def _on_event(self, event: AgentEvent) -> None:
        if isinstance(event, MessageStart) and self._queues.delivered(event.message):
            self._outbox.post(self._queues.record())
        for record in self._records.records(event):
            # a tool's progress, which its on_update reports unpaced: only the latest counts
            progress = record.get("type") == "tool_execution_update"
            self._outbox.post(record, key=record.get("toolCallId") if progress else None)

    async def _write_records(self, stdout: ByteSendStream, stop: anyio.CancelScope) -> None:
        while True:
            try:
                records = await self._outbox.get(WRITE_BATCH)
            except anyio.EndOfStream:
                self._drained.set()
                return
            try:
                scrub = self._secrets.scrub_value
                await stdout.send(b"".join(encode_frame(scrub(r)) for r in records))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                logger.warning("stopping: the client's output is gone (%s)", exc)
                self.output_lost = True
                stop.cancel()
                return

    # --- input ----------------------------------------------------------------------------

    async def _read_commands(self, stdin: ByteReceiveStream) -> None:
        splitter = LineSplitter()
        while True:
            try:
                chunk = await stdin.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            for line in splitter.feed(chunk):
                await self._handle_line(line)
        for line in splitter.finish():
            await self._handle_line(line)

    async def _handle_line(self, line: bytes | FrameError) -> None:
        await self._outbox.wait_for_room()  # a client that does not read is not read either
        if isinstance(line, FrameError):
            self._outbox.post(failure(None, "parse", str(line)))
            return
        if not line.strip():
            return  # blank lines are keep-alives, not commands
        try:
            frame = decode_frame(line)
        except FrameError as exc:
            self._outbox.post(failure(None, "parse", str(exc)))
            return
        if frame["type"] == "extension_ui_response":
            notice = self.ui.deliver(frame)
            if notice is not None:
                self._outbox.post(notice)
            return
        try:
            command = parse_command(frame)
            data = await self._execute(command)
        except (CommandError, UsageError) as exc:
            self._outbox.post(failure(frame, frame["type"], str(exc)))
        else:
            self._outbox.post(success(frame, command.type, data))

    async def _execute(self, command: Command) -> Any:
        """Carry out ``command``; its response data. Raises ``CommandError`` to refuse it."""
        match command:
            case Prompt():
                return {"disposition": self._prompt(command)}
            case Steer():
                self._steer(command.user_message())
                return {"disposition": "queued"}
            case FollowUp():
                self._follow_up(command.user_message())
                return {"disposition": "queued"}
            case Abort():
                await self._stop_run("aborted by the client")
            case GetState():
                return self.state()
            case GetMessages():
                return {"messages": [self._records.message(m) for m in self.session.messages]}
        return None

    # --- runs -----------------------------------------------------------------------------

    def _steer(self, message: UserMessage) -> None:
        self.session.steer(message)
        self._queues.steer(message)
        self._outbox.post(self._queues.record())

    def _follow_up(self, message: UserMessage) -> None:
        self.session.follow_up(message)
        self._queues.follow_up(message)
        self._outbox.post(self._queues.record())

    def _prompt(self, command: Prompt) -> str:
        """Start a run (``"started"``) or queue the message (``"queued"``)."""
        message = command.user_message()
        if self._busy:
            if command.streamingBehavior == "steer":
                self._steer(message)
            elif command.streamingBehavior == "followUp":
                self._follow_up(message)
            else:
                raise CommandError(
                    "the agent is already running: send the prompt with streamingBehavior "
                    "'steer' or 'followUp', or wait for agent_settled"
                )
            return "queued"
        if self.session.status == "paused":
            raise CommandError(
                f"the session is paused awaiting {self.session.awaiting_call_ids}, which RPC "
                "mode cannot resume: send abort, then prompt again"
            )
        assert self._tasks is not None, "run() starts the task group before reading commands"
        self._busy, self._run_scope, self._idle = True, anyio.CancelScope(), anyio.Event()
        self._tasks.start_soon(self._run_prompt, message, self._run_scope, self._idle)
        return "started"

    async def _run_prompt(
        self, message: UserMessage, scope: anyio.CancelScope, idle: anyio.Event
    ) -> None:
        try:
            with scope:
                await self.session.prompt(message)
        except Exception as exc:  # the session reported it: agent_end with status "failed"
            # scrubbed as agent_end's error is: a provider's failure may quote a credential
            logger.warning("the run failed: %s", self.session.scrub(f"{type(exc).__name__}: {exc}"))
        finally:
            self._busy, self._run_scope = False, None
            aborted = scope.cancel_called or self.session.status == "aborted"
            self._outbox.post(agent_settled(aborted=aborted))
            idle.set()

    async def _stop_run(self, reason: str) -> None:
        """Abort the running (or paused) run and wait, at most :data:`ABORT_GRACE` seconds,
        until it settled. Raises ``CommandError`` when it did not end."""
        if not self._busy:
            if self.session.status == "paused":  # it ends now: its agent_end, then it settles
                self.session.abort(reason)
                self._outbox.post(agent_settled(aborted=True))
            return
        if self.session.status == "running":
            self.session.abort(reason)
        elif self._run_scope is not None:  # accepted, not started yet
            self._run_scope.cancel()
        assert self._idle is not None
        with anyio.move_on_after(ABORT_GRACE):
            await self._idle.wait()
        if self._busy:
            if self._run_scope is not None:
                self._run_scope.cancel()
            raise CommandError(f"the run did not end within {ABORT_GRACE:g} s of the abort")


def _narrowed(
    recipe: Recipe, agent: str, append: str | None, tools: Sequence[str] | None
) -> Recipe:
    """``recipe`` whose agent's instructions end with ``append`` and whose tools are only
    ``tools`` (when given). Raises ``UsageError`` for a tool the agent does not have."""
    chosen = recipe.agent(agent)
    offered = [t.name for t in recipe.tools_for(chosen)]
    kept = offered if tools is None else list(tools)
    unknown = [t for t in kept if t not in offered]
    if unknown:
        raise UsageError(
            f"agent {agent!r} has no tool {', '.join(unknown)}; it has {', '.join(offered)}"
        )
    text = "\n\n".join(p for p in (chosen.instructions, append) if p)
    own = dataclasses.replace(chosen, instructions=text, tools=tuple(kept))
    return dataclasses.replace(recipe, agents={**recipe.agents, agent: own})
