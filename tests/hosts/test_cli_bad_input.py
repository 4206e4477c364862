"""Bad input gets one line and a non-zero exit of its family, never a traceback; faults and
signals never strand a run. Each case runs the installed command as a user would."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import PI_RECIPES, RELEASE, cli_env, only_run_id, pi, pi_json

HERE = Path(__file__).parent
SLOW = str(HERE / "slow_recipe.py")


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder whose store holds one run paused on ``int-call_channel``."""
    folder = tmp_path_factory.mktemp("paused")
    pi("run", RELEASE, "Release v1", "--no-interactive", cwd=folder)
    return folder, only_run_id(folder)


def _one_line(done: subprocess.CompletedProcess[str], code: int, label: str) -> None:
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"pi-recipes: {label}: "), done.stderr


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        ('{"answer": NaN}', "NaN"),
        ('{"answer": Infinity}', "Infinity"),
        ('{"answer": "\\ud800"}', "not valid Unicode"),
        ('{"answer": ' + "9" * 5000 + "}", "digits"),
        ("[" * 50_000 + "]" * 50_000, "not usable JSON"),
        ('{"answer": "x"', "not JSON"),
        ("[1, 2]", "JSON object"),
        ("[internal] mirror", """give it as a JSON string: '"[internal] mirror"'"""),
    ],
)
def test_malformed_payloads_are_invalid_input(
    paused: tuple[Path, str], payload: str, why: str
) -> None:
    folder, run_id = paused
    done = pi("runs", "answer", run_id, "int-call_channel", payload, cwd=folder)
    _one_line(done, 6, "invalid payload")
    assert why in done.stderr


def test_arguments_that_are_not_utf8_are_usage_errors(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    done = subprocess.run(
        [PI_RECIPES.encode(), b"runs", b"answer", run_id.encode(), b"int-\xff", b"x"],
        cwd=folder,
        capture_output=True,
        timeout=60,
        env=cli_env(),
    )
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert b"is not valid UTF-8" in done.stderr


def test_an_entries_file_that_is_not_utf8_or_repeats_an_id(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    (folder / "bad.json").write_bytes(b'[{"interruptId": "\xff"}]')
    _one_line(
        pi("runs", "resume", run_id, "--entries", "bad.json", cwd=folder), 6, "invalid payload"
    )
    twice = (
        '[{"interruptId": "int-call_channel", "status": "resolved", "payload": {"answer": "a"}}]'
    )
    (folder / "twice.json").write_text(twice[:-1] + "," + twice[1:])
    done = pi("runs", "resume", run_id, "--entries", "twice.json", cwd=folder)
    _one_line(done, 6, "invalid payload")  # a repeated id is bad input, not an unknown id
    assert "answered twice" in done.stderr


@pytest.mark.parametrize(
    ("store", "code", "label", "why"),
    [
        ("mysql://db/x", 2, "usage", "not a store this pi-recipes can open"),
        ("a-folder", 2, "usage", "is a folder"),
        ("a-file/state.db", 2, "usage", "is a file, not a folder"),
        ("notes.db", 2, "usage", "not a pi-recipes store"),
        ("nowhere/state.db", 2, "usage", "no store at nowhere/state.db: nothing was created"),
        ("", 2, "usage", "--store needs a SQLite file path or a postgresql:// URL"),
        ("postgresql://nobody:hunter2pw@127.0.0.1:1/none", 7, "store unavailable", "***"),
    ],
)
def test_store_locations_that_cannot_work(
    tmp_path: Path, store: str, code: int, label: str, why: str
) -> None:
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_text("x")
    with closing(sqlite3.connect(tmp_path / "notes.db")) as conn, conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    before = (tmp_path / "notes.db").read_bytes()
    done = pi("runs", "list", "--store", store, cwd=tmp_path)
    _one_line(done, code, label)
    assert why in done.stderr and "hunter2pw" not in done.stderr
    assert (tmp_path / "notes.db").read_bytes() == before  # another application's file: untouched
    assert not (tmp_path / "mysql:").exists()
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / ".pi-recipes").exists()


@pytest.mark.parametrize(
    ("command", "code", "out"),
    [
        (["runs", "list"], 0, ""),
        (["runs", "list", "--json"], 0, "[]\n"),
        (["runs", "pending"], 0, "Nothing is waiting for an answer.\n"),
        (["runs", "pending", "--json"], 0, "[]\n"),
        (["runs", "show", "run-1"], 4, ""),
        (["runs", "show", "run-1", "--json"], 4, ""),
        (["runs", "pending", "run-1"], 4, ""),
        (["runs", "questions", "run-1"], 4, ""),
        (["runs", "answer", "run-1", "int-x", "yes"], 4, ""),
        (["runs", "answer", "run-1", "int-x", "--cancel", "--resume"], 4, ""),
        (["runs", "resume", "run-1"], 4, ""),
        (["runs", "cancel", "run-1"], 4, ""),
        (["runs", "retry", "run-1"], 4, ""),
        (["runs", "expire", "--json"], 0, "[]\n"),
        (["runs", "recover", "--older-than", "60", "--json"], 0, "[]\n"),
    ],
)
def test_a_runs_command_where_no_store_is_creates_none_and_says_so(
    tmp_path: Path, command: list[str], code: int, out: str
) -> None:
    """A ``runs`` command in a folder with no ``.pi-recipes/state.db`` used to create an
    empty store there and act on it, silently (an answer to a run of another folder was
    "unknown", and left a store behind); each acts on runs a store holds, so it creates
    nothing and says where it looked."""
    done = pi(*command, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (code, out), done.stderr
    assert not (tmp_path / ".pi-recipes").exists()
    where = f"there is no store at {tmp_path / '.pi-recipes' / 'state.db'} (nothing was created)"
    (line,) = done.stderr.splitlines()
    if code:
        assert line.startswith(f"pi-recipes: unknown run: no run 'run-1': {where}")
    else:
        assert line.startswith(f"pi-recipes: note: {where}")
    assert "--store PATH" in line and "PI_RECIPES_ENGINE" in line


def test_a_command_that_writes_still_creates_the_default_store(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v1", "--no-interactive", cwd=tmp_path)
    assert (tmp_path / ".pi-recipes" / "state.db").exists()
    listed = pi("runs", "list", cwd=tmp_path)
    assert listed.returncode == 0 and listed.stderr == "" and len(listed.stdout.splitlines()) == 1


def test_markup_in_stored_text_is_printed_literally(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release [/x] [bold]v1", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    done = pi("runs", "show", run_id, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    head = f"{run_id}  paused_waiting_human  recipe  agent=release  model=scripted:release-demo"
    assert done.stdout.splitlines()[0] == head
    listing = pi("runs", "list", cwd=tmp_path, env=cli_env(COLUMNS="200"))
    assert listing.returncode == 0, listing.stderr


def test_a_corrupt_row_is_reported_and_the_rest_of_the_store_is_usable(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v1", "--no-interactive", cwd=tmp_path)
    pi("run", RELEASE, "Release v2", "--no-interactive", cwd=tmp_path)
    runs = pi_json("runs", "list", cwd=tmp_path)
    broken, fine = runs[0]["id"], runs[1]["id"]
    with closing(sqlite3.connect(tmp_path / ".pi-recipes" / "state.db")) as conn, conn:
        conn.execute("UPDATE runs SET checkpoint = '{not json' WHERE id = ?", (broken,))
    conn.close()
    listing = pi("runs", "list", "--json", cwd=tmp_path)
    assert listing.returncode == 0 and [r["id"] for r in pi_json("runs", "list", cwd=tmp_path)] == [
        fine
    ]
    assert broken in listing.stderr and "cannot read" in listing.stderr
    shown = pi("runs", "show", broken, cwd=tmp_path)
    _one_line(shown, 1, "error")
    assert pi("runs", "show", fine, cwd=tmp_path).returncode == 0


def test_a_malformed_interrupt_lifetime_refuses_the_run_loudly(tmp_path: Path) -> None:
    env = cli_env(PI_INTERRUPT_TTL_SECONDS="a week")
    done = pi("run", RELEASE, "Release v1", "--no-interactive", cwd=tmp_path, env=env)
    _one_line(done, 2, "usage")
    assert "PI_INTERRUPT_TTL_SECONDS" in done.stderr
    assert pi_json("runs", "list", cwd=tmp_path) == []


@contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """``path`` cannot be written while inside: immutable for root (who ignores modes), else
    mode 0444. Skips, saying why, when neither is possible here."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"root cannot make a file immutable here ({done.stderr.strip()})")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_store_still_reads(paused: tuple[Path, str], tmp_path: Path) -> None:
    folder, run_id = paused
    db = tmp_path / "state.db"
    db.write_bytes((folder / ".pi-recipes" / "state.db").read_bytes())
    assert pi("runs", "list", "--store", str(db), cwd=tmp_path).returncode == 0
    with _read_only(db):
        shown = pi("runs", "show", run_id, "--store", str(db), cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "int-call_channel" in shown.stdout
        done = pi(
            "runs", "answer", run_id, "int-call_channel", "Beta", "--store", str(db), cwd=tmp_path
        )
        _one_line(done, 7, "store unavailable")
        assert "read-only" in done.stderr


def test_sigterm_during_a_run_leaves_it_retryable_not_running(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [PI_RECIPES, "run", SLOW, "take your time", "--no-interactive"],
        cwd=tmp_path,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not (tmp_path / "started").exists():  # the model is thinking
        assert time.monotonic() < deadline and child.poll() is None, child.stderr
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=30)
    assert child.returncode == 143 and "Traceback" not in stderr
    (run,) = pi_json("runs", "list", cwd=tmp_path)
    assert run["status"] == "failed_resumable" and "interrupted" in run["error"]
    assert "pi-recipes runs retry" in run["error"]


def _stopped_once_started(
    argv: list[str], cwd: Path, sent: signal.Signals
) -> subprocess.CompletedProcess[str]:
    """Run ``pi-recipes ARGV`` until its model is thinking (``started``), then send ``sent``."""
    child = subprocess.Popen(
        [PI_RECIPES, *argv],
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (cwd / "started").exists():  # the model is thinking
            assert time.monotonic() < deadline and child.poll() is None, child.stderr
            time.sleep(0.05)
        child.send_signal(sent)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_during_a_run_says_what_became_of_it_and_how_to_go_on(
    tmp_path: Path, sent: signal.Signals
) -> None:
    """A run stopped by SIGTERM (or Ctrl-C, SIGHUP) used to exit without a word, the run left
    ``failed_resumable`` for the user to find; one line now says so and how to continue it."""
    argv = ["run", SLOW, "take your time", "--no-interactive", "--store", "runs.db"]
    done = _stopped_once_started(argv, tmp_path, sent)
    assert done.returncode == 128 + sent and done.stdout == ""
    (run,) = pi_json("runs", "list", "--store", "runs.db", cwd=tmp_path)
    assert run["status"] == "failed_resumable"
    name = {signal.SIGINT: "Ctrl-C"}.get(sent, sent.name)
    (line,) = done.stderr.splitlines()
    head = f"pi-recipes: stopped by {name}: run {run['id']} was interrupted: it is "
    assert line.startswith(head + "failed_resumable; continue it with: ")
    assert line.endswith(f"pi-recipes runs retry {run['id']} --store runs.db")


def test_sigterm_during_runs_resume_says_what_became_of_the_run(tmp_path: Path) -> None:
    pi("run", f"{SLOW}:asks_then_thinks", "go", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    assert pi("runs", "answer", run_id, "int-a1", "yes", cwd=tmp_path).returncode == 0
    done = _stopped_once_started(["runs", "resume", run_id], tmp_path, signal.SIGTERM)
    assert done.returncode == 143 and done.stdout == ""
    assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "failed_resumable"
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"pi-recipes: stopped by SIGTERM: run {run_id} was interrupted: ")
    go_on = f"{_program(line)} runs retry {run_id}"
    assert line.endswith(f"failed_resumable; continue it with: {go_on}")


def _program(line: str) -> str:
    """How a printed command names this program: its path, unless ``pi-recipes`` is on PATH."""
    return PI_RECIPES if PI_RECIPES in line else "pi-recipes"


def test_reading_commands_never_wait_behind_a_long_write(paused: tuple[Path, str]) -> None:
    folder, run_id = paused
    writer = sqlite3.connect(folder / ".pi-recipes" / "state.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process's long write holds the lock
    try:
        for args in (["runs", "list"], ["runs", "show", run_id], ["runs", "pending"]):
            done = pi(*args, cwd=folder, env=cli_env(PI_RECIPES_TEST_NOTE="lock held"))
            assert done.returncode == 0, (args, done.stderr)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_commands_say_when_a_run_looks_stranded(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v1", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    with closing(sqlite3.connect(tmp_path / ".pi-recipes" / "state.db")) as conn, conn:
        conn.execute(  # as a process killed mid-leg leaves it: running, an hour ago
            "UPDATE runs SET status = 'running', updated_at = 1577836800000000 WHERE id = ?",
            (run_id,),
        )
    conn.close()
    done = pi("runs", "list", cwd=tmp_path)
    assert done.returncode == 0
    assert f"run {run_id} has been running for" in done.stderr
    assert "pi-recipes runs recover --older-than 600" in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["serve", RELEASE, "--port", "0"],
        ["mcp", RELEASE],
        ["mcp", RELEASE, "--http", "127.0.0.1:0"],
        ["rpc", RELEASE],
        ["slack", RELEASE],
    ],
)
def test_a_malformed_question_lifetime_stops_a_server_at_its_start(
    tmp_path: Path, command: list[str]
) -> None:
    """A server that would pause runs with a lifetime nobody chose says so before it serves,
    not at every question; Slack is not even reached."""
    env = cli_env(
        PI_INTERRUPT_TTL_SECONDS="two days",
        SLACK_BOT_TOKEN="xoxb-not-a-token",
        SLACK_APP_TOKEN="xapp-not-a-token",
        SLACK_API_URL="http://127.0.0.1:9/api/",
    )
    done = pi(*command, cwd=tmp_path, env=env, input="")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "PI_INTERRUPT_TTL_SECONDS='two days' is not a number of seconds" in done.stderr
    assert "serving" not in done.stderr and done.stdout == ""


def test_a_limit_no_store_could_take_is_a_usage_error(paused: tuple[Path, str]) -> None:
    """``--limit 99999999999999999999`` reached the store: an OverflowError and a traceback."""
    folder, _ = paused
    for limit in ("99999999999999999999", "0", "ten"):
        done = pi("runs", "list", "--limit", limit, cwd=folder)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.splitlines()[-1].startswith("pi-recipes runs list: error: argument")


def test_a_closed_stdout_drops_what_is_printed_and_the_run_goes_on(tmp_path: Path) -> None:
    """A command started with its standard output closed (``>&-``, a cron job's) died on an
    AttributeError and a traceback before anything ran."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", PI_RECIPES, "run", RELEASE, "Release v2",
         "--no-interactive", "--auto-approve"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    (run,) = pi_json("runs", "list", cwd=tmp_path)
    assert run["status"] == "finished"


def test_an_answer_replayed_to_a_cancelled_run_exits_3_with_or_without_json(
    tmp_path: Path,
) -> None:
    """With ``--json`` it exited 0 where the text said the run will not continue (exit 3); and
    the text said the answer 'was stored' when it was a replay that stored nothing."""
    pi("run", RELEASE, "Release v3", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    answer = ["runs", "answer", run_id, "int-call_channel", "Beta"]
    stored = pi(*answer, cwd=tmp_path)  # stored, not resumed: it says what continues the run
    assert stored.returncode == 0
    assert stored.stdout.splitlines()[1].startswith(
        "It was the last answer the run waited for; continue it with: "
    ) and stored.stdout.rstrip().endswith(f"runs resume {run_id}")
    assert pi("runs", "cancel", run_id, cwd=tmp_path).returncode == 0
    answer.append("--resume")
    texted = pi(*answer, cwd=tmp_path)
    assert texted.returncode == 3, texted.stderr
    assert f"The answer is stored (it was already), but run {run_id} is cancelled" in texted.stdout
    as_json = pi(*answer, "--json", cwd=tmp_path)
    assert as_json.returncode == 3, as_json.stderr
