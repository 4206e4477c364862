"""``pi-recipes serve`` as a command: its help, usage errors before it serves, the token
printed once, and the command line staying light when it does not serve."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import cli_env, pi
from tests.hosts.web.server import RELEASE, serving


def test_help() -> None:
    done = pi("serve", "--help", cwd=Path.cwd())
    assert done.returncode == 0
    for flag in ("--store", "--host", "--port", "--token-file", "--allow-origin", "--workers"):
        assert flag in done.stdout
    assert "usage: pi-recipes serve" in done.stdout


def test_usage_errors_come_before_serving(tmp_path: Path) -> None:
    missing = pi("serve", str(tmp_path / "nope.py"), "--port", "0", cwd=tmp_path)
    assert missing.returncode == 2 and "nope.py" in missing.stderr
    no_token = pi(
        "serve", RELEASE, "--port", "0", "--token-file", str(tmp_path / "none"), cwd=tmp_path
    )
    assert no_token.returncode == 2 and "cannot read the token file" in no_token.stderr
    assert not (tmp_path / ".pi-recipes").exists(), "nothing was created"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--store", "mysql://root:hunter2@db/x"], "mysql://… is not a store this pi-recipes can"),
        (["--store", "temporal://127.0.0.1:1/default"], "names an engine, not a store: give it as"),
        (["--engine", "runs.db"], "--engine names a store, not an engine: give it as --store"),
        (["--store", ""], "--store needs a SQLite file path or a postgresql:// URL, got ''"),
        (["--store", "nowhere/x.db", "--engine", "temporal://h:1"], "not both"),
    ],
)
def test_a_store_the_command_line_refuses_is_refused_alike(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    """``serve`` read ``--store mysql://…`` (or ``temporal://…``) as a SQLite file, and made a
    folder ``mysql:`` for it; ``--store ''`` served the default store. Now it opens what
    ``--store`` names as every command does, and refuses alike, creating nothing (no token)."""
    done = pi("serve", RELEASE, "--port", "0", *flags, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "hunter2" not in done.stderr
    assert list(tmp_path.iterdir()) == [], "nothing was created"


def test_without_the_web_extra_it_says_what_to_install(tmp_path: Path) -> None:
    probe = (
        "import sys; sys.modules['uvicorn'] = None\n"
        "from hosts.cli import main\n"
        f"sys.exit(main(['serve', {RELEASE!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == "pi-recipes: usage: pi-recipes serve needs uvicorn: pip install 'pi-recipes[web]'\n"
    )


def test_the_token_is_printed_at_first_start_only(tmp_path: Path) -> None:
    with serving(tmp_path, store=".pi-recipes/state.db", recipe=RELEASE) as first:
        printed = "".join(first.banner)
    token = first.token
    assert f"  token: {token}  (new; kept in .pi-recipes/web-token)" in printed
    assert f"  open:  {first.url}#token={token}" in printed
    assert (tmp_path / ".pi-recipes" / "web-token").stat().st_mode & 0o777 == 0o600
    with serving(tmp_path, store=".pi-recipes/state.db", recipe=RELEASE) as second:
        again = "".join(second.banner)
    assert second.token == token
    assert token not in again and "  token: kept in .pi-recipes/web-token" in again
    assert token not in second.log.read_text(), "nor in the server's log"
    assert (tmp_path / ".pi-recipes" / "state.db").exists()


def test_a_port_in_use_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    """A port another program listens on made ``serve`` exit 3 (the conflict code) after
    uvicorn's log lines, having made the token without printing it: the next start only said
    where it was kept. Now it exits 2 with one line naming the port, before any token is made,
    so the first start that serves prints the token and the sign-in link."""
    with socket.create_server(("127.0.0.1", 0)) as held:
        port = held.getsockname()[1]
        done = pi("serve", RELEASE, "--store", ".pi-recipes/state.db", "--port", str(port),
                  cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"pi-recipes: usage: port {port} on 127.0.0.1 is in use: stop what listens there, "
        "or pass another --port (--port 0 takes a free one)\n"
    )
    assert not (tmp_path / ".pi-recipes" / "web-token").exists(), "no token made"
    with serving(tmp_path, store=".pi-recipes/state.db", recipe=RELEASE) as first:
        printed = "".join(first.banner)
    assert f"  token: {first.token}  (new; kept in .pi-recipes/web-token)" in printed
    assert f"  open:  {first.url}#token={first.token}" in printed


def test_answering_from_the_command_line_does_not_load_the_web_host(tmp_path: Path) -> None:
    probe = (
        "import json, sys\nfrom hosts.cli import main\ncode = main(['runs', 'list', '--json'])\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, env=cli_env(),
    )  # fmt: skip
    modules = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert not {"fastapi", "uvicorn", "starlette", "hosts.web"} & modules
