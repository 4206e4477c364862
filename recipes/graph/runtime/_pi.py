"""The ``pi`` backend: an agent node whose agent runs in a subprocess speaking pi's RPC protocol.

By default the subprocess is ``pi-recipes rpc <recipe> --agent <agent>`` (``--model``,
``--tools``, ``--auto-approve`` for ``interaction: none``, ``--async-questions`` for
``interaction: async``), with the node's prompt and output schema passed as
``--append-system-prompt``. ``PI_RECIPES_PI_COMMAND`` in the runner's environment names another
pi-compatible agent instead (``pi --mode rpc``, say): it gets ``--append-system-prompt`` only,
and brings the async tools itself (an extension answering our two ``extension_ui_request``
methods, see :mod:`hosts.rpc._async`).

The engine stays the only side that touches the store, as Iterion's pi extension reports to
Iterion: the agent's ``ask_user_async`` calls come back to be stored here, its
``await_answers`` call is answered here once every question is answered (the run stays
``running``: the conversation lives in the subprocess, so this wait is bounded by the node's
``timeout:``, not a durable pause; a question that expires meanwhile is settled as at an
``await_answers`` node: a decline, or under the run's expiry policy ``fail`` the node fails,
``EXPIRED``), and the answers reach the agent as ``steer`` messages while
it works (and as one more ``prompt`` if it had already stopped). A dialog the agent opens
(``ask_user``) is shown to the host's person when there is one; with nobody there the node
fails rather than let a question go unanswered. A retry runs the node again from its prompt.

The agent's failure comes back over RPC as text, its model error's class lost (as across
Iterion's claw sandbox boundary): it is ``unclassified``, so the node's ``fallbacks:`` chain
advances to a model route whatever its ``on:``, and to a skip route only with ``on: [any]``.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
import sys
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from interactions import UsageError
from interactions.async_questions import answer_message
from interactions.store import InteractionRecord
from recipes.graph import ir
from recipes.graph.compiler import recipe_ref
from recipes.graph.runtime._agent import (
    CORRECTIVE,
    model_name,
    node_instructions,
    node_output,
    user_text,
)
from recipes.graph.runtime._asyncq import (
    ROUND,
    expired_async,
    expiry_failure,
    wait_for_answers,
)
from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome, failed, finished
from recipes.graph.runtime._process import node_process
from recipes.graph.runtime._state import NodeRun

__all__ = ["PI_BACKEND", "PI_COMMAND_ENV", "PiBackend", "pi_command"]

PI_COMMAND_ENV = "PI_RECIPES_PI_COMMAND"
"""Names another pi-compatible agent to run instead of ``pi-recipes rpc`` (split like a shell)."""
EXIT_GRACE = 5.0
"""Seconds the subprocess gets to exit once its input is closed, before it is killed."""
MAX_LINE = 16 << 20
_STDERR_KEPT = 4000
UNCLASSIFIED = "unclassified"
"""The class of the agent's failures: the RPC protocol carries no model error's class."""


def pi_command(ctx: NodeContext, node: ir.LLMNode, route: ir.Route | None = None) -> list[str]:
    """The command that runs ``node``'s agent (see the module docstring). Raises
    ``UsageError`` for a node without ``recipe:`` and no other command."""
    instructions = node_instructions(ctx, node)
    extra = ["--append-system-prompt", instructions] if instructions else []
    custom = ctx.runner.env.get(PI_COMMAND_ENV, "").strip()
    if custom:
        return [*shlex.split(custom), *extra]
    if node.recipe is None:
        raise UsageError(
            f"`{node.name}` runs on the pi backend: give it `recipe:` (served by "
            f"pi-recipes rpc), or name another pi-compatible agent in {PI_COMMAND_ENV}"
        )
    command = [sys.executable, "-m", "hosts.cli", "rpc", recipe_ref(node.recipe, ctx.base)]
    if node.agent is not None:
        command += ["--agent", node.agent]
    own = route.model if route is not None and route.name != ir.PRIMARY else None
    if own is not None:  # a fallback route's own model
        model: str | None = model_name(own, ctx.base)
    else:
        model = ctx.runner.model.name if ctx.runner.model is not None else None
        model = model or model_name(node.routes[0].model, ctx.base)
    if model:
        command += ["--model", model]
    if node.tools is not None:
        command += ["--tools", ",".join(node.tools)]
    if node.interaction == "none":
        command.append("--auto-approve")
    if node.interaction == "async":
        command.append("--async-questions")
    return [*command, *extra]


class PiBackend:
    """``backend: pi``; it carries async questions (by ``steer``, over RPC)."""

    def supports_async_questions(self) -> bool:
        return True

    async def run(
        self,
        ctx: NodeContext,
        node: ir.LLMNode,
        run: NodeRun,
        mode: Mode,
        route: ir.Route | None = None,
    ) -> NodeOutcome:
        """Run the node's agent in its subprocess, from its prompt (a retry starts over)."""
        try:
            command = pi_command(ctx, node, route)
        except UsageError as exc:
            return failed(f"the node cannot start: {exc}", "SETUP_FAILED", resumable=True)
        try:
            with anyio.fail_after(ctx.deadline) if ctx.deadline else contextlib.nullcontext():
                return await _Conversation(ctx, node).run(command)
        except TimeoutError:
            return failed(
                f"the node ran past its time bound ({ctx.deadline:g}s)", "TIMEOUT", resumable=True
            )


PI_BACKEND = PiBackend()


class _Exited(Exception):
    """The subprocess closed its output."""


class _Conversation:
    """One run of the node's agent in its subprocess."""

    def __init__(self, ctx: NodeContext, node: ir.LLMNode) -> None:
        self.ctx = ctx
        self.node = node
        self.asyncq = ctx.asyncq
        self.sent = 0
        self.send_lock = anyio.Lock()
        self.awaiting = 0  # await_answers calls being served: steering waits meanwhile
        self.handed: dict[str, list[InteractionRecord]] = {}  # command id -> answers it carries
        self.failure: NodeOutcome | None = None  # why the node stops, the agent aborted
        self.stderr = bytearray()
        self.stdin: anyio.abc.ByteSendStream | None = None
        self.stdout: BufferedByteReceiveStream | None = None

    async def run(self, command: list[str]) -> NodeOutcome:
        outcome: NodeOutcome | None = None
        async with node_process(command, self.ctx, stdin=subprocess.PIPE) as process:
            assert process.stdin is not None and process.stdout is not None
            self.stdin, self.stdout = process.stdin, BufferedByteReceiveStream(process.stdout)
            try:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(self._keep_stderr, process)
                    if self.asyncq is not None:
                        tasks.start_soon(self._steer)
                    try:
                        outcome = await self._talk(tasks)
                    except _Exited:
                        code = await process.wait()
                        tail = self.stderr.decode("utf-8", "replace").strip()[-_STDERR_KEPT:]
                        outcome = failed(f"the pi agent exited ({code}): {tail}", "PI_EXITED",
                                         resumable=True, error_class=UNCLASSIFIED)  # fmt: skip
                    finally:
                        tasks.cancel_scope.cancel()
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process)
        assert outcome is not None, "the conversation ended without an outcome"
        return outcome

    # -- the conversation -------------------------------------------------------------------

    async def _talk(self, tasks: anyio.abc.TaskGroup) -> NodeOutcome:
        await self._send({"type": "prompt", "message": user_text(self.ctx, self.node)})
        corrected = False
        while True:
            status, error = await self._until_settled(tasks)
            if self.failure is not None:
                return self.failure
            if status == "failed":
                return failed(f"the pi agent failed: {error}", "AGENT_FAILED", resumable=True,
                              error_class=UNCLASSIFIED)  # fmt: skip
            if status == "aborted":
                return failed(f"the pi agent was aborted: {error}", "ABORTED")
            late = await self.asyncq.take() if self.asyncq is not None else []
            if late:  # answers that came as it stopped: one more turn, never lost
                text = "\n\n".join(answer_message(r) for r in late)
                await self._send({"type": "prompt", "message": text}, late)
                continue
            output, errors = node_output(self.ctx, self.node, await self._last_text(tasks))
            if not errors:
                return finished(output)
            if corrected:
                return failed("the reply does not fit the output schema: " + "; ".join(errors),
                              "SCHEMA_MISMATCH")  # fmt: skip
            corrected = True
            await self._send(
                {"type": "prompt", "message": CORRECTIVE.format(errors="; ".join(errors))}
            )

    async def _until_settled(self, tasks: anyio.abc.TaskGroup) -> tuple[str, str | None]:
        """Read records (serving the agent's requests) until its prompt's work is over; the
        status its ``agent_end`` gave and its error."""
        status, error = "idle", None
        while True:
            record = await self._read(tasks)
            if record.get("type") == "agent_end":
                status, error = str(record.get("status") or "idle"), record.get("error")
            elif record.get("type") == "agent_settled":
                return status, error

    async def _last_text(self, tasks: anyio.abc.TaskGroup) -> str:
        ident = await self._send({"type": "get_messages"})
        while True:
            record = await self._read(tasks)
            if record.get("type") == "response" and record.get("id") == ident:
                for message in reversed((record.get("data") or {}).get("messages") or []):
                    if message.get("role") == "assistant":
                        parts = message.get("content") or []
                        text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
                        if text:
                            return text
                return ""

    async def _read(self, tasks: anyio.abc.TaskGroup) -> dict[str, Any]:
        """The next record; the agent's requests are served as they come (in their own
        tasks, so a long wait does not stop the reading)."""
        assert self.stdout is not None
        while True:
            try:
                line = await self.stdout.receive_until(b"\n", MAX_LINE)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                raise _Exited from None
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            if record.get("type") == "extension_ui_request":
                tasks.start_soon(self._serve, record)
                continue
            carried = self.handed.pop(str(record.get("id")), None)
            if record.get("type") == "response" and carried and record.get("success"):
                tasks.start_soon(self._delivered, carried)
            return record

    async def _delivered(self, records: list[InteractionRecord]) -> None:
        """The agent took these answers (its session queued them): say so in the run's log."""
        assert self.asyncq is not None
        await self.ctx.runner.store.append_events(self.ctx.run_id, self.asyncq.delivered(records))

    async def _send(
        self, record: dict[str, Any], carrying: list[InteractionRecord] | None = None
    ) -> str:
        async with self.send_lock:
            self.sent += 1
            ident = f"graph-{self.sent}"
            if carrying:
                self.handed[ident] = carrying
            line = json.dumps({**record, "id": record.get("id", ident)}, ensure_ascii=False)
            assert self.stdin is not None
            await self.stdin.send(line.encode("utf-8") + b"\n")
        return ident

    # -- the agent's requests ---------------------------------------------------------------

    async def _serve(self, request: dict[str, Any]) -> None:
        method, ident = request.get("method"), request.get("id")
        if method == "cancel" or not isinstance(ident, str):
            return
        try:
            reply = await self._answer(str(method), request)
        except Exception as exc:  # a refusal the agent reads (the tool's error result)
            reply = {"error": str(exc) or type(exc).__name__}
        await self._send({"type": "extension_ui_response", "id": ident, **reply})

    async def _answer(self, method: str, request: dict[str, Any]) -> dict[str, Any]:
        asyncq = self.asyncq
        if method in ("ask_user_async", "await_answers") and asyncq is None:
            raise UsageError(f"`{self.node.name}` is not `interaction: async`: no async questions")
        if method == "ask_user_async":
            assert asyncq is not None
            iid = await asyncq.post(
                str(request.get("question") or ""), options=request.get("options"),
                allow_free_text=request.get("allowFreeText"),
                tool_call_id=str(request.get("toolCallId") or ""),
            )  # fmt: skip
            return {"value": iid}
        if method == "await_answers":
            assert asyncq is not None
            self.awaiting += 1
            waited: set[str] = set()
            try:
                while True:
                    got = await asyncq.await_answers(str(request.get("toolCallId") or ""), "")
                    if isinstance(got, str):
                        return {"value": got}
                    waited.update((got.metadata or {}).get("pending", []))
                    records = await wait_for_answers(self.ctx.runner.store, self.ctx.run_id)
                    expired = expired_async(records or [], lambda r: r.id in waited)
                    if expired and self.ctx.expiry_policy == "fail":  # as the node's await does
                        why = expiry_failure(f"`{self.node.name}`'s await_answers", expired)
                        return await self._stop(failed(why, "EXPIRED"))
            finally:
                self.awaiting -= 1
        return await self._dialog(method, request)

    async def _dialog(self, method: str, request: dict[str, Any]) -> dict[str, Any]:
        """A dialog of the agent: the host's person answers it, or the node fails."""
        ui = self.ctx.surface.ui
        timeout = (request.get("timeout") or 120_000) / 1000
        title = str(request.get("title") or "")
        if ui is None:
            await self._stop(failed(
                f"`{self.node.name}` asked a blocking question ({title!r}) on the pi backend, "
                "where no one can answer it (no person at a terminal, and a subprocess's "
                "conversation cannot pause durably): use ask_user_async, a human node, or "
                "`backend: recipe`",
                "BLOCKING_ASK_UNSUPPORTED",
            ))  # fmt: skip
            return {"cancelled": True}
        if method == "select":
            picked = await ui.select(title, list(request.get("options") or []), timeout=timeout)
            return {"cancelled": True} if picked is None else {"value": picked}
        if method == "confirm":
            said = await ui.confirm(title, str(request.get("message") or ""), timeout=timeout)
            return {"cancelled": True} if said is None else {"confirmed": said}
        if method in ("input", "editor"):
            typed = await ui.input(title, request.get("placeholder"), timeout=timeout)
            return {"cancelled": True} if typed is None else {"value": typed}
        return {"cancelled": True}  # a method pi front ends ignore (notify, setStatus...)

    async def _stop(self, failure: NodeOutcome) -> dict[str, Any]:
        """Fail the node with ``failure``: the agent's turn is aborted, and the request being
        served gets the reason as its error."""
        self.failure = failure
        await self._send({"type": "abort"})
        return {"error": failure.error or ""}

    # -- answers while it works -------------------------------------------------------------

    async def _steer(self) -> None:
        """Hand the node's answers to the agent as ``steer`` messages as they arrive."""
        assert self.asyncq is not None
        store, run_id = self.ctx.runner.store, self.ctx.run_id
        events = await store.list_events(run_id)
        last = events[-1].seq if events else 0
        look = True  # answers given before the node started are delivered too
        while True:
            if look and not self.awaiting:
                look = False
                for record in await self.asyncq.take():
                    await self._send({"type": "steer", "message": answer_message(record)},
                                     [record])  # fmt: skip
            found = await store.wait_for_events(
                run_id, after_seq=last, timeout=ROUND
            )
            if found:
                last, look = found[-1].seq, True

    async def _keep_stderr(self, process: anyio.abc.Process) -> None:
        assert process.stderr is not None
        async for chunk in process.stderr:
            self.stderr.extend(chunk)
            del self.stderr[: max(0, len(self.stderr) - 4 * _STDERR_KEPT)]


async def _stop(process: anyio.abc.Process) -> None:
    """Close the subprocess's input (it aborts what runs and exits), then kill it if it lingers."""
    if process.stdin is not None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await process.stdin.aclose()
    with anyio.move_on_after(EXIT_GRACE):
        await process.wait()
        return
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with anyio.move_on_after(EXIT_GRACE):
        await process.wait()
