"""Pydantic AI's side: a deferred tool that requires approval, its message history in SQLite.

The agent's model is a ``FunctionModel`` (scripted: first a call of ``deploy``, then
"Deployed." once the tool has returned); ``deploy`` is registered with
``requires_approval=True`` and the agent's output type includes ``DeferredToolRequests``, so
the first run ends asking for the approval. As the deferred-tools and message-history docs
show, the run's messages are stored as JSON (``ModelMessagesTypeAdapter``), here in one row of a
SQLite table (``paused``); the answer is a new run over the loaded history with
``DeferredToolResults(approvals={call_id: True})``, and its messages replace the row
(``finished``, guarded by ``status = 'paused'`` so a run finishes once). Pydantic AI ships no
SQLite store, so the table is the simplest one that holds this: one autocommit write per state
change (WAL, synchronous FULL, like the other sides), run inline on the event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

from measure import reset_wal, sqlite_bytes, wal_commits
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelMessagesTypeAdapter
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from worker import BulkRound, side_main

CALL_ID = "call_1"


def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The scripted model: call ``deploy``, then say it is done."""
    if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
        return ModelResponse(parts=[TextPart("Deployed.")])
    return ModelResponse(parts=[ToolCallPart("deploy", {}, tool_call_id=CALL_ID)])


def make_agent() -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(script), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def deploy() -> str:
        """Deploy once a human approves."""
        return "deployed"

    return agent


class Opened:
    """The agent and a SQLite file holding each run's message history."""

    def __init__(self, path: Path, agent: Agent[None, str | DeferredToolRequests]) -> None:
        self.path = path
        self.agent = agent
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, status TEXT NOT NULL, "
            "messages BLOB NOT NULL)"
        )

    async def start(self) -> str:
        """Run until the approval is asked, store the history; return the run's id."""
        result = await self.agent.run("Deploy")
        output = result.output
        if not isinstance(output, DeferredToolRequests) or [
            call.tool_call_id for call in output.approvals
        ] != [CALL_ID]:
            raise AssertionError(f"the run did not pause on the approval: {output!r}")
        run_id = uuid.uuid4().hex
        history = ModelMessagesTypeAdapter.dump_json(result.all_messages())
        self.conn.execute("INSERT INTO runs VALUES (?, 'paused', ?)", (run_id, history))
        return run_id

    async def resume(self, run_id: str) -> None:
        """Load the paused history, approve the call, run to the end, store the history."""
        row = self.conn.execute(
            "SELECT messages FROM runs WHERE id = ? AND status = 'paused'", (run_id,)
        ).fetchone()
        if row is None:
            raise AssertionError(f"no paused run {run_id}")
        result = await self.agent.run(
            message_history=ModelMessagesTypeAdapter.validate_json(row[0]),
            deferred_tool_results=DeferredToolResults(approvals={CALL_ID: True}),
        )
        if result.output != "Deployed.":
            raise AssertionError(f"the run did not finish: {result.output!r}")
        history = ModelMessagesTypeAdapter.dump_json(result.all_messages())
        stored = self.conn.execute(
            "UPDATE runs SET status = 'finished', messages = ? WHERE id = ? AND status = 'paused'",
            (history, run_id),
        )
        if stored.rowcount != 1:
            raise AssertionError(f"run {run_id} was finished by someone else")

    def close(self) -> None:
        self.conn.close()


class PydanticAISide:
    """The operations the orchestrator calls (see ``worker.py``); times are in seconds."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.agent = make_agent()
        self._cycles: Opened | None = None
        self._bulk: BulkRound[Opened] | None = None
        self._made = 0

    def _open_new(self, tag: str) -> Opened:
        self._made += 1
        return Opened(self.folder / f"pydantic-ai-{tag}-{self._made}.db", self.agent)

    async def cycle(self) -> float:
        if self._cycles is None:
            self._cycles = self._open_new("cycles")
        started = time.perf_counter()
        await self._cycles.resume(await self._cycles.start())
        return time.perf_counter() - started

    async def cycles(self, n: int) -> list[float]:
        return [await self.cycle() for _ in range(n)]

    async def pause_for_child(self) -> dict[str, Any]:
        opened = self._open_new("fresh")
        try:
            return {"store": str(opened.path), "schema": None, "run_id": await opened.start()}
        finally:
            opened.close()

    async def bulk_create(self, n: int) -> float:
        """Start ``n`` more runs that pause, in this round's store (a new file each round)."""
        if self._bulk is None:
            first = self._open_new("bulk")
            self._bulk = BulkRound(first.path, first)
        opened = self._bulk.handle
        assert opened is not None, "bulk_create after bulk_size"
        started = time.perf_counter()
        self._bulk.ids += [await opened.start() for _ in range(n)]
        return time.perf_counter() - started

    def bulk_size(self) -> int:
        """Close this round's store; its bytes on disk."""
        assert self._bulk is not None and self._bulk.handle is not None
        self._bulk.handle.close()
        self._bulk.handle = None
        return sqlite_bytes(self._bulk.place)

    async def bulk_resume(self, n: int) -> float:
        """Answer and resume the next ``n`` paused runs of this round (the store reopened)."""
        assert self._bulk is not None
        if self._bulk.handle is None:
            self._bulk.handle = Opened(self._bulk.place, self.agent)
        opened, run_ids = self._bulk.handle, self._bulk.next_ids(n)
        started = time.perf_counter()
        for run_id in run_ids:
            await opened.resume(run_id)
        return time.perf_counter() - started

    def bulk_end(self) -> None:
        assert self._bulk is not None and self._bulk.handle is not None
        self._bulk.check_done()
        self._bulk.handle.close()
        self._bulk = None

    async def commits(self, n: int) -> list[int]:
        await self.cycle()  # opens the file
        assert self._cycles is not None
        counts = []
        for _ in range(n):
            reset_wal(self._cycles.path)
            await self.cycle()
            counts.append(wal_commits(self._cycles.path))
        return counts

    def close(self) -> None:
        if self._cycles is not None:
            self._cycles.close()


def resume_in_fresh_process(store: str, run_id: str, schema: str | None) -> None:
    opened = Opened(Path(store), make_agent())
    asyncio.run(opened.resume(run_id))
    opened.close()


if __name__ == "__main__":
    side_main(lambda args: PydanticAISide(args.dir), resume_in_fresh_process)
