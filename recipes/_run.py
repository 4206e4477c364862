"""The engine behind :class:`~recipes.session.AgentSession`: one run of the agent loop.

The session is a thin public face; this module holds the state machine (:data:`TRANSITIONS`),
the turn loop, the model call and the bookkeeping that keeps the transcript valid: every tool
call of an assistant message gets exactly one result before the model is called again, also
after an abort or a failure.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType

import anyio
import anyio.lowlevel

from interactions import AskUserInterrupt, IllegalTransitionError, RunError, UsageError
from interactions.asks import ROOT_SCOPE, AskLedger, AskScope
from interactions.channels import Channel
from interactions.dialogs import DialogUI
from interactions.store import utc_now
from recipes import tracing
from recipes._batch import Batch, CallOutcome, error_result
from recipes._context import AbortSignal, ToolContext
from recipes._events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    AwaitingCall,
    MessageEnd,
    MessageStart,
    PausedBatch,
    SessionStatus,
    ToolExecutionEnd,
    TurnEnd,
    TurnStart,
)
from recipes._recipe import Agent
from recipes._resume import Answers, resume_results
from recipes._state import TRANSITIONS, call_key_in, unanswered_calls
from recipes._stream import stream_assistant
from recipes._tools import Tool
from recipes.decisions import DecisionBook, SessionBook
from recipes.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from recipes.models._base import Model, ModelRequest
from recipes.models._secrets import Secrets
from recipes.policy import Policy

__all__ = ["Run"]


def _no_listener(event: AgentEvent) -> None:
    pass


@dataclass(eq=False)
class Run:
    """A session's state and its loop. Not public: use ``AgentSession``."""

    agent: Agent
    tools: Mapping[str, Tool]
    model: Model
    mode: str
    ui: DialogUI | None
    env: Mapping[str, str]
    cwd: Path
    session_id: str
    run_id: str
    messages: list[Message]
    paused: PausedBatch | None = None
    tool_timeout: float | None = None
    max_turns: int | None = None
    """Model calls one run may make (a prompt, a resume, a retry); ``None``: no bound."""
    can_pause: bool = False
    channels: Sequence[Channel] | None = None
    steering: list[UserMessage] = field(default_factory=list)
    follow_ups: list[UserMessage] = field(default_factory=list)
    inbox: Callable[[], Awaitable[Sequence[UserMessage]]] | None = None
    """Messages from outside the session (async answers), read at each turn boundary."""
    ask_scope: AskScope = ROOT_SCOPE
    """Where the session's asks are raised (a graph node's visit): in every interrupt id."""
    clock: Callable[[], datetime] = utc_now
    """"Now" for the tools' asks (each tool context carries it)."""
    decisions: DecisionBook = field(default_factory=SessionBook)
    """Remembered approval decisions and the gates' audit (each tool context carries it)."""
    policy: Policy | None = None
    """The approval policy a durable run kept, when the environment names none."""
    emit: Callable[[AgentEvent], None] = _no_listener
    status: SessionStatus = field(init=False)
    _turn: int = field(default=0, init=False)
    _turns_this_run: int = field(default=0, init=False)
    _scope: anyio.CancelScope | None = field(default=None, init=False)
    _signal: AbortSignal = field(default_factory=AbortSignal, init=False)
    _batch: Batch | None = field(default=None, init=False)
    _answered: dict[str, AskUserInterrupt] = field(default_factory=dict, init=False)
    """Answered interrupts (with their outcomes) by id: what replayed calls' asks return."""

    def __post_init__(self) -> None:
        self.status = "paused" if self.paused is not None else "idle"
        self.env = MappingProxyType(dict(self.env))
        self._specs = [tool.spec() for tool in self.tools.values()]

    def scrub(self, text: str) -> str:
        """``text`` with the credentials of the session's environment replaced by ``***``."""
        return self._secrets.scrub(text)

    def scrub_known(self, text: str) -> str:
        """``text`` with the credentials of the session's environment replaced by ``***``, in
        any spelling; nothing else (what a tool's result goes through)."""
        return self._secrets.scrub_known(text)

    @functools.cached_property
    def _secrets(self) -> Secrets:
        """Built on the first batch of tool calls or the first scrub, once per session."""
        return Secrets.from_env(self.env)

    def move(self, to: SessionStatus) -> None:
        """Change the status along :data:`TRANSITIONS`."""
        if to not in TRANSITIONS[self.status]:
            raise IllegalTransitionError(
                f"a session cannot go from {self.status!r} to {to!r}", run_id=self.run_id
            )
        self.status = to

    async def run(
        self,
        first: UserMessage | None,
        answers: list[ToolResultMessage] | None = None,
        rerun: Sequence[ToolCall] = (),
    ) -> None:
        """One run: deliver ``first`` (or the resume ``answers``, then ``rerun`` the replayed
        calls), loop, and end the run."""
        self.move("running")
        self._turns_this_run = 0
        self._signal = AbortSignal()
        self._scope = anyio.CancelScope()
        self.emit(AgentStart(session_id=self.session_id, agent=self.agent.name))
        try:
            with self._scope:
                await self._body(first, answers, rerun)
        except anyio.get_cancelled_exc_class():  # cancelled from outside: record it as an abort
            self._signal.fire("cancelled")
            self._end()
            raise
        except Exception as exc:
            self._end(exc)
            raise
        self._end()

    async def _body(
        self,
        first: UserMessage | None,
        answers: list[ToolResultMessage] | None,
        rerun: Sequence[ToolCall],
    ) -> None:
        if first is not None:
            self._append(first)
        stopped: bool | None = None
        if answers is not None:
            pending = self.paused.pending if self.paused else []
            self.paused = None
            for answer in answers:
                self._append(answer)
            stopped = False
            if rerun or pending:
                _, stopped = await self._run_batch([*rerun, *pending], sequential=True)
        await self._loop(stopped)

    async def _loop(self, stopped: bool | None) -> None:
        while True:
            if stopped is None:
                await self._read_inbox()
                self._deliver(self.steering)
                stopped = await self._turn_once()
            if self.paused is not None:
                return
            if stopped:
                await self._read_inbox()  # a late message forces one more turn, never lost
                if not self.steering and not self._deliver(self.follow_ups):
                    return
            stopped = None

    async def _read_inbox(self) -> None:
        """Queue the inbox's messages for delivery before the next model call."""
        if self.inbox is not None:
            self.steering.extend(await self.inbox())

    def _end(self, error: Exception | None = None) -> None:
        self._scope = None
        if self._signal.aborted:
            self.paused = None
            self._close_open_calls("aborted", f"Aborted: {self._signal.reason}")
            self.move("aborted")
            self.emit(AgentEnd(status="aborted", error=self._signal.reason))
        elif error is not None:
            self.paused = None
            self._close_open_calls(
                "failed",
                self.scrub(f"Not run: the run failed ({error})"),
                started=self.scrub(
                    f"Stopped while it ran: the run failed ({error}); what the call did "
                    "before then may have taken effect"
                ),
            )
            self.move("failed")
            self.emit(
                AgentEnd(status="failed", error=self.scrub(f"{type(error).__name__}: {error}"))
            )
        elif self.paused is not None:
            self.move("paused")
            self.emit(AgentEnd(status="paused", paused=self.paused))
        else:
            self.move("idle")
            self.emit(AgentEnd(status="idle"))

    async def _turn_once(self) -> bool:
        """One model call and its batch; True when the agent would stop here."""
        # An abort raised by the last batch (a tool's InteractionAborted) must stop the run
        # here, before any model call, whatever the model's stream does with checkpoints.
        await anyio.lowlevel.checkpoint()
        if self.max_turns is not None and self._turns_this_run >= self.max_turns:
            raise RunError(
                f"the agent called the model {self._turns_this_run} times in this run without "
                f"finishing (max_turns={self.max_turns}): it may be going round in circles",
                run_id=self.run_id,
                reason="max_turns",
                hint="raise max_turns if the task needs more, or retry to let it go on",
            )
        self._turns_this_run += 1
        self._turn += 1
        self.emit(TurnStart(turn=self._turn))
        message = await self._call_model()
        results: list[ToolResultMessage] = []
        terminate = False
        if message.tool_calls:
            results, terminate = await self._run_batch(message.tool_calls, sequential=None)
        self.emit(TurnEnd(turn=self._turn, message=message, tool_results=results))
        return not message.tool_calls or terminate

    async def _call_model(self) -> AssistantMessage:
        request = ModelRequest(
            instructions=self.agent.instructions, messages=tuple(self.messages), tools=self._specs
        )
        with tracing.model_call(self.model.name, request) as traced:
            final = await stream_assistant(
                self.model, request, self.emit, self._keep_partial, self._secrets
            )
            tracing.model_done(traced, final, self.model.name)
        self.messages.append(final)
        self.emit(MessageEnd(message=final))
        return final

    def _keep_partial(self, partial: AssistantMessage) -> None:
        if partial.text:  # an empty aborted message would only confuse providers
            self.messages.append(partial)

    async def _run_batch(
        self, calls: list[ToolCall], *, sequential: bool | None
    ) -> tuple[list[ToolResultMessage], bool]:
        """Run a batch; append its results in source order; note a pause. Returns the results
        and whether every result asked to terminate."""
        batch = Batch(
            self.tools, self._context, self.emit, self._abort_from_tool, self.tool_timeout,
            scrub=self.scrub,
            scrub_known=self.scrub_known if self._secrets else None,
        )  # fmt: skip
        self._batch = batch
        await batch.run(calls, sequential=sequential)
        self._batch = None
        finished: list[CallOutcome] = []
        awaiting: list[AwaitingCall] = []
        pending: list[ToolCall] = []
        for call in calls:
            outcome = batch.done.get(call.id)
            if outcome is None:
                pending.append(call)
            elif outcome.pause and outcome.interrupt is not None:
                awaiting.append(
                    AwaitingCall(
                        tool_call_id=call.id, tool_name=call.name, interrupt=outcome.interrupt
                    )
                )
            else:
                finished.append(outcome)
                self._append(outcome.message)
        if awaiting:
            self.paused = PausedBatch(awaiting=awaiting, pending=pending)
        terminate = bool(finished) and not awaiting and all(o.terminate for o in finished)
        return [o.message for o in finished], terminate

    def _context(self, call: ToolCall) -> ToolContext:
        ledger = AskLedger(
            scope=self.call_scope(call.id),
            replay=True,  # a call runs again (replay, or paused on its approval): answers hold
            answers=self._answered,
        )
        return ToolContext(
            mode=self.mode,
            ui=self.ui,
            env=self.env,
            cwd=self.cwd,
            run_id=self.run_id,
            session_id=self.session_id,
            agent=self.agent.name,
            tool_call_id=call.id,
            abort=self._signal,
            can_pause=self.can_pause,
            interaction_channels=self.channels,
            asks=ledger,
            clock=self.clock,
            decisions=self.decisions,
            policy=self.policy,
        )

    def call_scope(self, tool_call_id: str) -> AskScope:
        """The ask scope of a call of the last assistant message (see ``call_key_in``)."""
        return self.ask_scope.keyed(call_key_in(self.messages, tool_call_id))

    def abort(self, reason: str) -> None:
        """See ``AgentSession.abort``."""
        if self.status == "running" and self._scope is not None:
            self._signal.fire(reason)
            self._scope.cancel()
        elif self.status == "paused":
            self.paused = None
            self._close_open_calls("aborted", f"Aborted: {reason}")
            self.move("aborted")
            self.emit(AgentEnd(status="aborted", error=reason))

    def _abort_from_tool(self, reason: str) -> None:
        self._signal.fire(reason)
        if self._scope is not None:
            self._scope.cancel()

    async def resume(self, answers: Answers) -> None:
        """See ``AgentSession.resume``."""
        if self.status != "paused" or self.paused is None:
            raise UsageError(f"resume() needs a paused session; this one is {self.status!r}")
        calls = {c.id: c for c in unanswered_calls(self.messages)}
        plan = resume_results(self.paused, answers, self.tools, calls, self.call_scope)
        self._answered.update(plan.answered)
        await self.run(None, plan.results, plan.rerun)

    async def retry(self) -> None:
        """See ``AgentSession.retry``."""
        if self.status not in ("idle", "failed", "aborted"):
            raise UsageError(f"retry() needs a stopped session; this one is {self.status!r}")
        if not self.messages or self.messages[-1].role == "assistant":
            raise UsageError(
                "retry() needs a transcript ending with a user message or tool results; "
                "use prompt() to say something new"
            )
        await self.run(None)

    def _deliver(self, queue: list[UserMessage]) -> bool:
        delivered = bool(queue)
        while queue:
            self._append(queue.pop(0))
        return delivered

    def _append(self, message: Message, *, started: bool = False) -> None:
        if not started:
            self.emit(MessageStart(message=message))
        self.messages.append(message)
        self.emit(MessageEnd(message=message))

    def _close_open_calls(self, kind: str, text: str, *, started: str | None = None) -> None:
        """Give every open call of the last assistant message a result (its own when it has
        one, else an error ``kind``: ``text``, or ``started`` for a call that started and did
        not end, which may have done part of its work), so the transcript stays valid."""
        batch, self._batch = self._batch, None
        for call in unanswered_calls(self.messages):
            outcome = batch.done.get(call.id) if batch else None
            if outcome is not None and not outcome.pause:
                self._append(outcome.message)
                continue
            running = batch is not None and call.id in batch.started and call.id not in batch.done
            result = error_result(call, started if running and started else text, kind)
            if running:
                self.emit(
                    ToolExecutionEnd(tool_call_id=call.id, tool_name=call.name, result=result)
                )
            self._append(result)
