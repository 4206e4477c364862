"""A store that fails under the command line and ``serve``: a damaged SQLite page, a PostgreSQL
connection lost mid-leg, a PostgreSQL database that stays away. Each is one line naming what
failed and what to do, never a traceback; a run the failure leaves ``running`` is named with
the commands that free and continue it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.hosts.cli_helpers import PI_RECIPES, RELEASE, cli_env, pi, pi_json
from tests.hosts.web.server import serving

HERE = Path(__file__).parent
HOLDS = f"{HERE / 'slow_recipe.py'}:holds"  # its model holds until a file `go` appears
POSTGRES = os.environ.get("PI_RECIPES_TEST_POSTGRES")
WAIT = 30.0


def _damage(db: Path, table: str) -> None:
    """Write garbage over the first page of ``table`` (never page 1, the header's)."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every row in the main file
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
    assert root > 1
    with db.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * 64)


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Path, str]:
    """A folder whose store holds a paused run (its id given), the file then damaged."""
    done = pi("run", RELEASE, "Release v1", "--no-interactive", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (run,) = pi_json("runs", "list", cwd=tmp_path)
    return tmp_path, str(run["id"])


def _said_damaged(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 7, done.stderr
    assert done.stderr == (
        "pi-recipes: store unavailable: the store file .pi-recipes/state.db is damaged "
        "(database disk image is malformed): restore it from a backup, or move it aside to "
        "start an empty store (`sqlite3 .pi-recipes/state.db .recover` may save its rows)\n"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["runs", "list"],
        ["runs", "show", "RUN"],
        ["runs", "answer", "RUN", "int-call_channel", '{"answer": "beta"}'],
        ["runs", "cancel", "RUN"],
        ["run", RELEASE, "Release v2", "--no-interactive"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_a_damaged_sqlite_page_is_one_line_naming_the_file(
    damaged: tuple[Path, str], command: list[str]
) -> None:
    """It was ``error: DatabaseError: database disk image is malformed`` and its traceback,
    exit 1 (a bug's report)."""
    folder, run_id = damaged
    _damage(folder / ".pi-recipes" / "state.db", "runs")
    _said_damaged(pi(*[run_id if a == "RUN" else a for a in command], cwd=folder))


def test_serve_on_a_damaged_store_says_so_in_one_line(damaged: tuple[Path, str]) -> None:
    """``serve`` followed the damaged feed at startup: uvicorn's traceback, exit 3. Now it is
    the one line, before any token is made."""
    folder, _ = damaged
    _damage(folder / ".pi-recipes" / "state.db", "events")
    done = pi("serve", RELEASE, "--port", "0", cwd=folder)
    _said_damaged(done)
    assert done.stdout == "" and not (folder / ".pi-recipes" / "web-token").exists()


def test_the_slack_command_on_a_damaged_store_says_so_in_one_line(
    damaged: tuple[Path, str],
) -> None:
    import anyio

    from tests.hosts.slack.fake_slack import APP_TOKEN, BOT_TOKEN, fake_slack

    folder, _ = damaged
    _damage(folder / ".pi-recipes" / "state.db", "events")

    async def slack() -> subprocess.CompletedProcess[bytes]:
        async with fake_slack() as fake:
            env = {k: v for k, v in cli_env().items() if "proxy" not in k.lower()} | {
                "SLACK_API_URL": fake.api_url, "SLACK_BOT_TOKEN": BOT_TOKEN,
                "SLACK_APP_TOKEN": APP_TOKEN,
            }  # fmt: skip
            with anyio.fail_after(WAIT):
                return await anyio.run_process(
                    [PI_RECIPES, "slack", RELEASE], cwd=folder, env=env, check=False
                )

    done = anyio.run(slack)
    _said_damaged(subprocess.CompletedProcess(done.args, done.returncode, "", done.stderr.decode()))


def test_serve_answers_503_naming_the_damaged_file_and_logs_one_line(
    damaged: tuple[Path, str],
) -> None:
    """A damaged page met by a request was a 500 ``internal error`` and a traceback."""
    folder, _ = damaged
    _damage(folder / ".pi-recipes" / "state.db", "runs")
    with (
        serving(folder, store=".pi-recipes/state.db", recipe=RELEASE) as server,
        server.client() as http,
    ):
        reply = http.get("/api/runs")
    assert reply.status_code == 503
    assert reply.json()["reason"] == "corrupt"
    assert "the store file .pi-recipes/state.db is damaged" in reply.json()["message"]
    log = server.log.read_text()
    assert "Traceback" not in log
    assert "GET /api/runs: the store file .pi-recipes/state.db is damaged" in log


# -- PostgreSQL ------------------------------------------------------------------------------

postgres = pytest.mark.skipif(
    not POSTGRES, reason="set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL tests"
)


@pytest.fixture
def database() -> Iterator[tuple[str, str]]:
    """A database of its own (it is made to refuse connections) and the name its clients
    connect with (``application_name``, which the test ends their connections by)."""
    import psycopg

    assert POSTGRES is not None
    name, client = f"pi_test_{uuid.uuid4().hex[:12]}", f"pi-test-{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        try:
            base = POSTGRES.rsplit("/", 1)[0]
            yield f"{base}/{name}?application_name={quote(client)}", client
        finally:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def _cut(client: str, *, keep_away: str | None = None) -> None:
    """End every connection of ``client`` (and refuse new ones to ``keep_away``)."""
    import psycopg

    assert POSTGRES is not None
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        if keep_away:
            conn.execute(f'ALTER DATABASE "{keep_away}" ALLOW_CONNECTIONS false')
        ended = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s",
            (client,),
        ).fetchone()
    assert ended and ended[0] >= 1


def _welcome(name: str) -> None:
    import psycopg

    assert POSTGRES is not None
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def _run_and_cut(tmp_path: Path, url: str, client: str, keep_away: str | None) -> str:
    """Run the holding recipe; cut its connection mid-leg; let the leg end. Its stderr."""
    process = subprocess.Popen(
        [PI_RECIPES, "run", HOLDS, "hold", "--no-interactive", "--store", url],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    )  # fmt: skip
    try:
        _wait_for(tmp_path / "started")
        _cut(client, keep_away=keep_away)
        (tmp_path / "go").touch()
        _, stderr = process.communicate(timeout=WAIT)
    finally:
        process.kill()
        process.wait(5)
    assert process.returncode == 7, stderr
    return stderr


@postgres
def test_a_connection_lost_mid_leg_is_one_line_and_names_the_run_left_running(
    tmp_path: Path, database: tuple[str, str]
) -> None:
    url, client = database
    stderr = _run_and_cut(tmp_path, url, client, keep_away=None)
    (run,) = pi_json("runs", "list", "--store", url, cwd=tmp_path)
    assert run["status"] == "running"
    error, hint = stderr.splitlines()
    assert error.startswith("pi-recipes: store unavailable: cannot reach the PostgreSQL store")
    assert hint == (
        f"pi-recipes: run {run['id']} is left running: free it (from 60 s on) with: "
        f"{PI_RECIPES} runs recover --older-than 60 --store '{url}'; then continue it with: "
        f"{PI_RECIPES} runs retry {run['id']} --store '{url}'"
    )


@postgres
def test_a_database_that_stays_away_names_the_run_it_may_leave_running(
    tmp_path: Path, database: tuple[str, str]
) -> None:
    url, client = database
    name = url.rsplit("/", 1)[1].split("?")[0]
    try:
        stderr = _run_and_cut(tmp_path, url, client, keep_away=name)
    finally:
        _welcome(name)
    (run,) = pi_json("runs", "list", "--store", url, cwd=tmp_path)
    assert run["status"] == "running"
    error, hint = stderr.splitlines()
    assert error.startswith("pi-recipes: store unavailable: cannot reach the PostgreSQL store")
    assert hint.startswith(
        f"pi-recipes: run {run['id']} may be left running: once the store answers again, "
        f"free it (from 60 s on) with: {PI_RECIPES} runs recover --older-than 60 --store "
    )


@postgres
def test_serve_logs_one_line_naming_the_run_a_lost_connection_may_leave_running(
    tmp_path: Path, database: tuple[str, str]
) -> None:
    """The leg's end was logged at the info level only: ``serve`` said nothing of the run it
    left ``running``."""
    url, client = database
    with serving(tmp_path, store=url, recipe=HOLDS) as server, server.client() as http:
        reply = http.post("/api/runs", json={"prompt": "hold"})
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["run_id"]
        _wait_for(tmp_path / "started")
        _cut(client)
        (tmp_path / "go").touch()
        deadline = time.monotonic() + WAIT
        while "runs recover" not in server.log.read_text():
            assert time.monotonic() < deadline, server.log.read_text()
            time.sleep(0.05)
        assert http.get(f"/api/runs/{run_id}").json()["status"] == "running"
    log = server.log.read_text()
    assert "Traceback" not in log
    (line,) = [line for line in log.splitlines() if "runs recover" in line]
    assert line.startswith(f"leg of {run_id}: the store went away (cannot reach the PostgreSQL")
    assert "`pi-recipes runs recover --older-than 60` (on this store) frees it" in line
