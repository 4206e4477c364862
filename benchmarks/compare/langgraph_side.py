"""LangGraph's side: the scenario as a LangGraph agent loop, checkpointed by ``SqliteSaver``
(or, given a PostgreSQL URL, by ``PostgresSaver``).

The graph is the usual tool-calling loop: a ``model`` node (scripted: first a call of
``deploy``, then "Deployed." once the tool has answered) and a ``ToolNode`` whose ``deploy``
tool calls ``interrupt()`` for the approval. ``invoke`` runs until the interrupt (the
checkpoint is in SQLite when it returns), ``invoke(Command(resume=...))`` with the same
``thread_id`` resumes it to the end. Durability is LangGraph's default; the connection is a
plain ``sqlite3`` one as its docs show (``SqliteSaver`` turns WAL on; synchronous stays FULL).
On PostgreSQL (package ``langgraph-checkpoint-postgres``) the connection is the one its docs
show (``autocommit=True, prepare_threshold=0, row_factory=dict_row``), in a fresh schema of the
server dropped when the side closes; the server's commits are durable (``synchronous_commit``
stays on), as pi-recipes' paused runs and ends are.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import pg
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt
from measure import reset_wal, sqlite_bytes, wal_commits
from worker import BulkRound, side_main

APPROVE = {"approved": True}


@tool
def deploy() -> str:
    """Deploy once a human approves."""
    answer = interrupt({"title": "Deploy?"})
    return "deployed" if answer.get("approved") is True else "declined"


def model(state: MessagesState) -> dict[str, list[AIMessage]]:
    """The scripted model: call ``deploy``, then say it is done."""
    if isinstance(state["messages"][-1], ToolMessage):
        return {"messages": [AIMessage("Deployed.")]}
    call = {"id": "call_1", "name": "deploy", "args": {}}
    return {"messages": [AIMessage("", tool_calls=[call])]}


Builder = StateGraph[MessagesState, None, MessagesState, MessagesState]


@cache
def builder() -> Builder:
    """The agent loop: model -> tools (while the model calls one) -> model -> end."""
    graph: Builder = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([deploy]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph


class Checkpointed:
    """A compiled graph with a checkpointer (see :class:`Opened`, :class:`OpenedPostgres`)."""

    graph: Any

    def start(self) -> str:
        """Run a new thread until it pauses; return its thread id."""
        thread_id = uuid.uuid4().hex
        result = self.graph.invoke({"messages": [HumanMessage("Deploy")]}, _config(thread_id))
        interrupts = result.get("__interrupt__", ())
        if len(interrupts) != 1 or interrupts[0].value != {"title": "Deploy?"}:
            raise AssertionError(f"the run did not pause on the approval: {result!r}")
        return thread_id

    def resume(self, thread_id: str) -> None:
        """Answer the paused thread and run it to the end."""
        result = self.graph.invoke(Command(resume=APPROVE), _config(thread_id))
        if "__interrupt__" in result or result["messages"][-1].content != "Deployed.":
            raise AssertionError(f"the run did not finish: {result!r}")

    def close(self) -> None:
        raise NotImplementedError


class Opened(Checkpointed):
    """A compiled graph checkpointed in the SQLite file ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.graph = builder().compile(checkpointer=SqliteSaver(self.conn))

    def close(self) -> None:
        self.conn.close()


class OpenedPostgres(Checkpointed):
    """A compiled graph checkpointed by ``PostgresSaver`` in ``schema`` (created here) at
    ``url``."""

    def __init__(self, url: str, schema: str) -> None:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row

        pg.sql(url, f'CREATE SCHEMA "{schema}"')
        self.pg_conn = Connection.connect(
            url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            options=f"-c search_path={schema}",
        )
        saver = PostgresSaver(self.pg_conn)
        saver.setup()
        self.graph = builder().compile(checkpointer=saver)

    def close(self) -> None:
        self.pg_conn.close()


def _config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


class LangGraphSide:
    """The operations the orchestrator calls (see ``worker.py``); times are in seconds."""

    def __init__(self, folder: Path, url: str | None = None) -> None:
        self.folder = folder
        self.url = url
        self._schemas: list[str] = []
        self._cycles: Checkpointed | None = None
        self._bulk: BulkRound[Opened] | None = None
        self._made = 0

    def _new_path(self, tag: str) -> Path:
        self._made += 1
        return self.folder / f"langgraph-{tag}-{self._made}.db"

    def _open_cycles(self) -> Checkpointed:
        if self.url is None:
            return Opened(self._new_path("cycles"))
        self._schemas.append(pg.new_schema_name())
        return OpenedPostgres(self.url, self._schemas[-1])

    def cycle(self) -> float:
        """One in-process durable cycle: start (the checkpoint stored at the interrupt), then
        resume to the end."""
        if self._cycles is None:
            self._cycles = self._open_cycles()
        started = time.perf_counter()
        self._cycles.resume(self._cycles.start())
        return time.perf_counter() - started

    def cycles(self, n: int) -> list[float]:
        return [self.cycle() for _ in range(n)]

    def pause_for_child(self) -> dict[str, Any]:
        opened = Opened(self._new_path("fresh"))
        try:
            return {"store": str(opened.path), "schema": None, "run_id": opened.start()}
        finally:
            opened.close()

    def bulk_create(self, n: int) -> float:
        """Start ``n`` more runs that pause, in this round's store (a new file each round)."""
        if self._bulk is None:
            path = self._new_path("bulk")
            self._bulk = BulkRound(path, Opened(path))
        opened = self._bulk.handle
        assert opened is not None, "bulk_create after bulk_size"
        started = time.perf_counter()
        self._bulk.ids += [opened.start() for _ in range(n)]
        return time.perf_counter() - started

    def bulk_size(self) -> int:
        """Close this round's store; its bytes on disk."""
        assert self._bulk is not None and self._bulk.handle is not None
        self._bulk.handle.close()
        self._bulk.handle = None
        return sqlite_bytes(self._bulk.place)

    def bulk_resume(self, n: int) -> float:
        """Answer and resume the next ``n`` paused runs of this round (the store reopened)."""
        assert self._bulk is not None
        if self._bulk.handle is None:
            self._bulk.handle = Opened(self._bulk.place)
        opened, thread_ids = self._bulk.handle, self._bulk.next_ids(n)
        started = time.perf_counter()
        for thread_id in thread_ids:
            opened.resume(thread_id)
        return time.perf_counter() - started

    def bulk_end(self) -> None:
        assert self._bulk is not None and self._bulk.handle is not None
        self._bulk.check_done()
        self._bulk.handle.close()
        self._bulk = None

    def commits(self, n: int) -> list[int]:
        self.cycle()  # opens the file
        assert isinstance(self._cycles, Opened), "SQLite commits are counted in a file"
        counts = []
        for _ in range(n):
            reset_wal(self._cycles.path)
            self.cycle()
            counts.append(wal_commits(self._cycles.path))
        return counts

    def close(self) -> None:
        if self._cycles is not None:
            self._cycles.close()
        for schema in self._schemas:
            assert self.url is not None
            pg.drop_schema(self.url, schema)


def resume_in_fresh_process(store: str, run_id: str, schema: str | None) -> None:
    opened = Opened(Path(store))
    opened.resume(run_id)
    opened.close()


if __name__ == "__main__":
    side_main(lambda args: LangGraphSide(args.dir, args.store), resume_in_fresh_process)
