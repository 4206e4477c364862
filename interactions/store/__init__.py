"""Durable state of runs: one async :class:`Store` abstraction and its backends.

- :class:`Store`: the protocol (runs, interactions, events; atomic writes; bounded waits).
- :class:`DecisionStore`: remembered approval decisions (:class:`NewDecision`,
  :class:`DecisionRecord`: "approve, and don't ask again", scoped to a run or a thread),
  audited and revocable; the backends below implement it.
- :class:`VoteStore`: votes on approvals that need several people (:class:`NewVote`,
  :class:`VoteRecord`, :class:`VoteOutcome`): one per person, the approval settled once, in
  the vote's own transaction; the backends below implement it.
- :class:`ConsumerStore`: consumers of the store-wide feed (webhook targets), each with a
  durable cursor leased to one owner at a time; the backends below implement it.
- :class:`ReminderStore`: reminders and escalations of pending interactions, each written
  once however many servers sweep the store.
- :class:`AuditStore`: every run's interactions a page at a time, oldest asked first (what
  an audit export reads in constant memory); the backends below implement it.
- :class:`SQLiteStore` / :func:`open_sqlite_store`: the embedded default, one file
  (:data:`DEFAULT_STORE_PATH`), safe across threads and processes.
- :class:`PostgresStore` / :func:`open_postgres_store`: many processes, many machines
  (``pip install 'pi-recipes[postgres]'``); answers from other processes wake waiters
  through LISTEN/NOTIFY.
- :class:`MemoryStore`: the same contract in memory, for tests and examples.
- :func:`open_store`: the store a URL names, as every host and command reads ``--store`` and
  ``--engine``: a SQLite path (or ``sqlite:///PATH``), a PostgreSQL URL or ``key=value``
  string, or a scheme another package registers (:func:`register_store_scheme`, the entry
  point groups :data:`STORE_ENTRY_POINTS` and :data:`ENGINE_ENTRY_POINTS`: the Temporal
  engine's ``temporal://``).
- :class:`RunStatus` and :data:`TRANSITIONS`: the one table of legal status moves.

Errors: refusals are :class:`~interactions.RunError` subclasses carrying ``run_id``,
``interaction_id`` and ``reason`` (``ConflictError``, ``ExpiredError``, ``UnknownRunError``,
``UnknownInteractionError``, ``UnknownDecisionError``, ``IllegalTransitionError``); bad
arguments are :class:`~interactions.UsageError`; a store file this version cannot use is
:class:`StoreSchemaError` (a ``UsageError``). A refused write changes nothing.

Every backend passes :class:`interactions.testing.store_conformance.StoreConformance`.
"""

from interactions.store._decisions import (
    DecisionAction,
    DecisionRecord,
    DecisionScope,
    NewDecision,
)
from interactions.store._open import (
    ENGINE_ENTRY_POINTS,
    STORE_ENTRY_POINTS,
    SchemeKind,
    StoreOpener,
    names_engine,
    open_store,
    register_store_scheme,
    sqlite_path,
    store_schemes,
)
from interactions.store._protocol import (
    AuditStore,
    ConsumerStore,
    DecisionStore,
    ReminderStore,
    Store,
    VoteStore,
)
from interactions.store._records import (
    MAX_JSON_DEPTH,
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionKind,
    InteractionRecord,
    NewInteraction,
    NewRun,
    RunRecord,
    StoreEventType,
    canonical_json,
    utc_now,
)
from interactions.store._sqlite_schema import SCHEMA_VERSION, StoreSchemaError
from interactions.store._status import (
    TERMINAL_STATUSES,
    TRANSITIONS,
    RunStatus,
    check_transition,
    is_terminal,
)
from interactions.store._votes import NewVote, VoteOutcome, VoteRecord
from interactions.store._where import names_postgres
from interactions.store.memory import MemoryStore
from interactions.store.postgres import PostgresStore, open_postgres_store
from interactions.store.sqlite import DEFAULT_STORE_PATH, SQLiteStore, open_sqlite_store

__all__ = [
    "DEFAULT_STORE_PATH",
    "ENGINE_ENTRY_POINTS",
    "MAX_JSON_DEPTH",
    "SCHEMA_VERSION",
    "STORE_ENTRY_POINTS",
    "TERMINAL_STATUSES",
    "TRANSITIONS",
    "AuditStore",
    "ConsumerStore",
    "DecisionAction",
    "DecisionRecord",
    "DecisionScope",
    "DecisionStore",
    "EventInput",
    "EventRecord",
    "InteractionAnswer",
    "InteractionKind",
    "InteractionRecord",
    "MemoryStore",
    "NewDecision",
    "NewInteraction",
    "NewRun",
    "NewVote",
    "PostgresStore",
    "ReminderStore",
    "RunRecord",
    "RunStatus",
    "SQLiteStore",
    "SchemeKind",
    "Store",
    "StoreEventType",
    "StoreOpener",
    "StoreSchemaError",
    "VoteOutcome",
    "VoteRecord",
    "VoteStore",
    "canonical_json",
    "check_transition",
    "is_terminal",
    "names_engine",
    "names_postgres",
    "open_postgres_store",
    "open_sqlite_store",
    "open_store",
    "register_store_scheme",
    "sqlite_path",
    "store_schemes",
    "utc_now",
]
