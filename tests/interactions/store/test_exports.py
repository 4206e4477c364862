"""Pin the public names of the store packages, so nothing leaks or vanishes by accident."""

from __future__ import annotations

import interactions.store
import interactions.testing
import interactions.testing.store_conformance


def test_store_exports() -> None:
    assert sorted(interactions.store.__all__) == [
        "DEFAULT_STORE_PATH",
        "EventInput",
        "EventRecord",
        "InteractionAnswer",
        "InteractionKind",
        "InteractionRecord",
        "MemoryStore",
        "NewInteraction",
        "NewRun",
        "PostgresStore",
        "RunRecord",
        "RunStatus",
        "SCHEMA_VERSION",
        "SQLiteStore",
        "Store",
        "StoreEventType",
        "StoreSchemaError",
        "TERMINAL_STATUSES",
        "TRANSITIONS",
        "canonical_json",
        "check_transition",
        "is_terminal",
        "open_postgres_store",
        "open_sqlite_store",
        "utc_now",
    ]
    for name in interactions.store.__all__:
        assert hasattr(interactions.store, name)


def test_testing_exports() -> None:
    assert interactions.testing.__all__ == []
    module = interactions.testing.store_conformance
    assert sorted(module.__all__) == [
        "StoreConformance",
        "StoreSnapshot",
        "answer",
        "new_interaction",
        "new_run",
        "store_snapshot",
    ]
    for name in module.__all__:
        assert hasattr(module, name)


def test_backends_satisfy_the_protocol() -> None:
    store_cls = interactions.store.Store
    assert isinstance(interactions.store.MemoryStore(), store_cls)
    assert isinstance(interactions.store.SQLiteStore("unused.db"), store_cls)
    assert isinstance(interactions.store.PostgresStore("postgresql://unused"), store_cls)
