"""The RPC mode host: one agent session driven by JSON-lines commands over a pair of streams.

:class:`RpcServer` serves one :class:`~recipes.AgentSession` (mode ``"rpc"``) until its
input ends. Lines are split strictly on ``\\n`` (:mod:`hosts.rpc._framing`); each one
is a command (:mod:`hosts.rpc._commands`) answered by one ``response`` record, or an
``extension_ui_response`` answering a dialog (:mod:`hosts.rpc._ui`). The session's events go
out as records without an id (:mod:`hosts.rpc._records`).

Every record goes through one queue drained by one writer task, so records never interleave
and keep the order they were produced in: a ``prompt``'s response comes before its
``agent_start``, an ``abort``'s response after the run's ``agent_end``. Each record is written
whole (and so flushed) before the next.

Nothing the client sends stops the server: a bad line gets a ``parse`` error response, a bad
command an error response, a response no dialog waits for an ``extension_ui_response_ignored``
notice. The end of the input aborts a running prompt, waits (bounded) for its ``agent_end``,
writes what is queued and returns.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

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
from hosts.rpc._records import event_record, ignored_response
from hosts.rpc._ui import RpcDialogUI
from interactions import UsageError
from recipes import AgentSession, Recipe, create_agent_session
from recipes.messages import TranscriptAdapter, UserMessage
from recipes.models import Model

__all__ = ["ABORT_GRACE", "RpcServer"]

logger = logging.getLogger("hosts.rpc")

ABORT_GRACE = 10.0
"""Seconds a run gets to end after an abort (or the end of the input) before the server stops
waiting for it."""

_Record = dict[str, Any]


class RpcServer:
    """One session of ``recipe`` served over a pair of byte streams; see the module docstring.

    The model is ``model`` (a ``Model`` or ``"provider:name"``), else the agent's, else the
    recipe's demo model. Raises ``UsageError`` for an unknown agent or when there is no model.
    ``env`` (default: ``os.environ``) is the session's environment.
    """

    def __init__(
        self,
        recipe: Recipe,
        *,
        agent: str | None = None,
        model: Model | str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        chosen = recipe.agent(agent)
        if model is None:
            model = chosen.model if chosen.model is not None else recipe.demo_model
        self._outbox_in, self._outbox = anyio.create_memory_object_stream[_Record](math.inf)
        self.ui = RpcDialogUI(self._send)
        self.session: AgentSession = create_agent_session(
            recipe, chosen.name, model, mode="rpc", ui=self.ui, env=env
        )
        self.session.on_event(lambda event: self._post(event_record(event)))
        self._recipe = recipe.name
        self._busy = False
        self._run_scope: anyio.CancelScope | None = None
        self._idle: anyio.Event | None = None
        self._tasks: TaskGroup | None = None

    async def run(self, stdin: ByteReceiveStream, stdout: ByteSendStream) -> None:
        """Serve commands from ``stdin`` until it ends; write every record to ``stdout``.

        Returns once the input ended, the running prompt (if any) was aborted and every record
        was written; or early, when ``stdout`` breaks (the client is gone). Call it once.
        """
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            tasks.start_soon(self._write_records, stdout, tasks.cancel_scope)
            try:
                await self._read_commands(stdin)
                await self._stop_run("the client closed its input")
            finally:
                self._outbox_in.close()

    def state(self) -> dict[str, Any]:
        """The ``get_state`` data: ``sessionId``, ``recipe``, ``agent``, ``model`` (its name),
        ``status`` (the session's, ``running`` while a prompt runs), ``isStreaming``,
        ``messageCount`` and ``pendingDialogs`` (the ids of the open dialogs)."""
        session = self.session
        return {
            "sessionId": session.session_id,
            "recipe": self._recipe,
            "agent": session.agent.name,
            "model": session.model.name,
            "status": "running" if self._busy else session.status,
            "isStreaming": self._busy,
            "messageCount": len(session.messages),
            "pendingDialogs": self.ui.open_dialogs,
        }

    # --- output ---------------------------------------------------------------------------

    def _post(self, record: _Record) -> None:
        try:
            self._outbox_in.send_nowait(record)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("dropped a %s record: the output is closed", record.get("type"))

    async def _send(self, record: _Record) -> None:
        self._post(record)

    async def _write_records(self, stdout: ByteSendStream, stop: anyio.CancelScope) -> None:
        async with self._outbox:
            async for record in self._outbox:
                try:
                    await stdout.send(encode_frame(record))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                    logger.warning("stopping: the client's output is gone (%s)", exc)
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
        if isinstance(line, FrameError):
            self._post(failure(None, "parse", str(line)))
            return
        if not line.strip():
            return  # blank lines are keep-alives, not commands
        try:
            frame = decode_frame(line)
        except FrameError as exc:
            self._post(failure(None, "parse", str(exc)))
            return
        if frame["type"] == "extension_ui_response":
            if not self.ui.deliver(frame):
                self._post(ignored_response(frame))
            return
        try:
            command = parse_command(frame)
            data = await self._execute(command)
        except (CommandError, UsageError) as exc:
            self._post(failure(frame, frame["type"], str(exc)))
        else:
            self._post(success(frame, command.type, data))

    async def _execute(self, command: Command) -> Any:
        """Carry out ``command``; its response data. Raises ``CommandError`` to refuse it."""
        match command:
            case Prompt():
                self._prompt(command)
            case Steer():
                self.session.steer(command.user_message())
            case FollowUp():
                self.session.follow_up(command.user_message())
            case Abort():
                await self._stop_run("aborted by the client")
            case GetState():
                return self.state()
            case GetMessages():
                messages = TranscriptAdapter.dump_python(self.session.messages, mode="json")
                return {"messages": messages}
        return None

    # --- runs -----------------------------------------------------------------------------

    def _prompt(self, command: Prompt) -> None:
        message = command.user_message()
        if self._busy:
            if command.streamingBehavior == "steer":
                self.session.steer(message)
            elif command.streamingBehavior == "followUp":
                self.session.follow_up(message)
            else:
                raise CommandError(
                    "the agent is already running: send the prompt with streamingBehavior "
                    "'steer' or 'followUp', or wait for agent_end"
                )
            return
        if self.session.status == "paused":
            raise CommandError(
                f"the session is paused awaiting {self.session.awaiting_call_ids}, which RPC "
                "mode cannot resume: send abort, then prompt again"
            )
        assert self._tasks is not None, "run() starts the task group before reading commands"
        self._busy, self._run_scope, self._idle = True, anyio.CancelScope(), anyio.Event()
        self._tasks.start_soon(self._run_prompt, message, self._run_scope, self._idle)

    async def _run_prompt(
        self, message: UserMessage, scope: anyio.CancelScope, idle: anyio.Event
    ) -> None:
        try:
            with scope:
                await self.session.prompt(message)
        except Exception as exc:  # the session reported it: agent_end with status "failed"
            logger.warning("the run failed: %s: %s", type(exc).__name__, exc)
        finally:
            self._busy, self._run_scope = False, None
            idle.set()

    async def _stop_run(self, reason: str) -> None:
        """Abort the running (or paused) run and wait, at most :data:`ABORT_GRACE` seconds,
        until its ``agent_end`` was posted. Raises ``CommandError`` when it did not end."""
        if not self._busy:
            if self.session.status == "paused":
                self.session.abort(reason)
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
