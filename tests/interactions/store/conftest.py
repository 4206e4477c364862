"""What the PostgreSQL store tests share: a fresh schema per test (``schema``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest


@pytest.fixture
def schema() -> Iterator[str]:
    """A PostgreSQL schema name nobody uses; dropped (with everything in it) after the test.

    Every test that needs the server uses this fixture, so they all skip without one.
    """
    from tests.interactions.store.test_postgres import DSN, NO_SERVER, sql

    if not DSN:
        pytest.skip(NO_SERVER)
    name = f"pi_test_{uuid.uuid4().hex}"
    yield name
    sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
