"""The command line on a PostgreSQL store: pause in one process, answer from another."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import pytest

from tests.hosts.cli_helpers import RELEASE, pi, pi_json
from tests.hosts.web.server import serving

SERVER = os.environ.get("PI_RECIPES_TEST_POSTGRES")
pytestmark = pytest.mark.skipif(
    not SERVER, reason="set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests"
)


@pytest.fixture
def store_url() -> Iterator[str]:
    import psycopg

    assert SERVER is not None
    schema = f"pi_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in SERVER else "?"
            yield f"{SERVER}{sep}options={quote(f'-csearch_path={schema}')}"
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_pause_and_answer_across_processes(tmp_path: Path, store_url: str) -> None:
    store = ["--store", store_url]
    paused = pi("run", RELEASE, "Release v8", "--no-interactive", *store, cwd=tmp_path)
    assert paused.returncode == 0, paused.stderr
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert run["status"] == "paused_waiting_human"
    answered = pi(
        "runs", "answer", run["id"], "int-call_channel", '{"answer": "beta"}', "--resume", *store,
        cwd=tmp_path,
    )  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert "Publish v8 to beta?" in answered.stdout
    conflict = pi(
        "runs", "answer", run["id"], "int-call_channel", '{"answer": "stable"}', *store,
        cwd=tmp_path,
    )  # fmt: skip
    assert conflict.returncode == 3
    assert not (tmp_path / ".pi-recipes").exists(), "nothing went to the SQLite default"


def _with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    user = parts.username or "postgres"
    netloc = f"{user}:{password}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit(parts._replace(netloc=netloc))


def test_a_password_in_the_store_url_is_never_printed(tmp_path: Path, store_url: str) -> None:
    secret = f"pw-{uuid.uuid4().hex}"  # the server trusts the test's connections: any password
    url = _with_password(store_url, secret)
    paused = pi("run", RELEASE, "Release v9", "--no-interactive", "--store", url, cwd=tmp_path)
    assert paused.returncode == 0, paused.stderr
    assert secret not in paused.stdout + paused.stderr
    hint = next(line for line in paused.stdout.splitlines() if "runs answer" in line)
    assert f"--store '{_with_password(store_url, '***')}' --resume" in hint
    (run,) = pi_json("runs", "list", "--store", url, cwd=tmp_path)
    answered = pi(
        "runs", "answer", run["id"], "int-call_channel", '{"answer": "beta"}', "--resume",
        "--store", url, cwd=tmp_path,
    )  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert secret not in answered.stdout + answered.stderr
    assert "***" in answered.stdout  # the next hint names the store all the same
    with serving(tmp_path, store=url) as server:
        assert secret not in "\n".join(server.banner)
        assert any("store: " in line and "***" in line for line in server.banner)


def test_a_libpq_connection_string_names_the_database_not_a_file(
    tmp_path: Path, store_url: str
) -> None:
    """``host=… dbname=…`` was read as a SQLite path: the run went into a new local file named
    after it, and the printed command repeated its password."""
    parts = urlsplit(store_url)
    secret = f"pw-{uuid.uuid4().hex}"  # trusted: any password
    schema_options = dict(p.split("=", 1) for p in parts.query.split("&"))["options"]
    dsn = (
        f"host={parts.hostname} port={parts.port or 5432} user={parts.username or 'postgres'} "
        f"password={secret} dbname={parts.path.lstrip('/')} options='{unquote(schema_options)}'"
    )
    paused = pi("run", RELEASE, "Release v7", "--no-interactive", "--store", dsn, cwd=tmp_path)
    assert paused.returncode == 0, paused.stderr
    assert list(tmp_path.iterdir()) == [], "nothing went to a local file"
    assert secret not in paused.stdout + paused.stderr
    assert "password=***" in paused.stdout
    (run,) = pi_json("runs", "list", "--store", store_url, cwd=tmp_path)
    assert run["status"] == "paused_waiting_human"
