"""``pi-recipes email`` as a user runs it (a real process), as docs/reaching.md prints it: it
starts, says where it listens, mails a question asked by a run started elsewhere on its store
through a local SMTP server that wants a login, and stops on SIGTERM, never printing the
password or the links' secret; without its secret or its users file it stops before anything
starts (exit 2)."""

from __future__ import annotations

import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import uuid
from importlib.metadata import entry_points
from pathlib import Path

import anyio
import pytest

from hosts.email import main
from hosts.email._config import PASSWORD_ENV, SECRET_ENV, USERNAME_ENV
from interactions.store import SQLiteStore
from recipes.runs import Runner
from tests.hosts.cli_helpers import PI_RECIPES, cli_env
from tests.hosts.email.harness import RECIPE, SECRET, SENDER, write_users
from tests.hosts.email.mailbox import MailServer

pytestmark = pytest.mark.anyio

PASSWORD = "smtp-pw-" + uuid.uuid4().hex


def _env(folder: Path, **extra: str) -> dict[str, str]:
    """The command's environment. Until the checkout is installed again (``pip install -e``),
    the installed metadata does not name the ``email`` command: a metadata folder of the
    pyproject's entry point stands in for it."""
    env = cli_env(**extra)
    if not entry_points(group="pi_recipes.commands", name="email"):
        shim = folder / "shim" / "pi_recipes_email_command-0.dist-info"
        shim.mkdir(parents=True)
        (shim / "METADATA").write_text("Metadata-Version: 2.1\nName: pi-recipes-email-command\n"
                                       "Version: 0\n")  # fmt: skip
        (shim / "entry_points.txt").write_text("[pi_recipes.commands]\nemail = hosts.email:main\n")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shim.parent),
                                                          env.get("PYTHONPATH")]))  # fmt: skip
    return env


def _started(
    command: list[str], cwd: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    """``command`` started, and the lines of its standard error as they come ("" at the end)."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    return process, lines


PAGE = Path(__file__).resolve().parents[3] / "docs" / "reaching.md"


def _documented() -> tuple[str, list[str], list[str]]:
    """The email section's commands: the secret's maker, the login's names, the command."""
    section = PAGE.read_text(encoding="utf-8").split("\n## Email\n", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    secret, login, command = block[1].splitlines()
    return secret, shlex.split(login, comments=True), shlex.split(command)


async def test_the_command_starts_and_mails_a_question(tmp_path: Path) -> None:
    """The command of docs/reaching.md as printed, then the placeholders' real values (the
    local SMTP server, its login, a free port, the test's users file and store): a later flag
    overrides an earlier one."""
    make_secret, login, printed = _documented()
    made = re.search(r"python -c '(.*?)'", make_secret)
    assert made is not None
    secret = (await anyio.run_process([sys.executable, "-c", made[1]])).stdout.decode().strip()
    assert len(secret) >= 32
    assert login == ["export", f"{USERNAME_ENV}=pi-recipes", f"{PASSWORD_ENV}=…"]
    assert printed[:2] == ["pi-recipes", "email"]
    mail = MailServer(login=("pi-recipes", PASSWORD))
    mail.start()
    users = write_users(tmp_path)
    env = _env(tmp_path, **{SECRET_ENV: secret, USERNAME_ENV: "pi-recipes", PASSWORD_ENV: PASSWORD})
    db = tmp_path / "state.db"
    command = [
        PI_RECIPES, *printed[1:], "--store", str(db), "--users", str(users),
        "--listen", "127.0.0.1:0", "--smtp-host", "127.0.0.1", "--smtp-port", str(mail.port),
        "--smtp-tls", "none",
    ]  # fmt: skip
    process, lines = _started(command, tmp_path, env)
    said: list[str] = []
    try:
        while not any("listening on http://127.0.0.1:" in line for line in said):
            said.append(lines.get(timeout=30))
            assert said[-1], "".join(said)
        async with SQLiteStore(db) as store:
            run = await Runner(store, env={}, host="test").start(RECIPE, "gate: Ship v3?")
        mails = await mail.mailbox.wait(2)
        assert sorted(m.to for m in mails) == [("ada@example.com",), ("bob@example.com",)]
        assert mails[0].subject == "Approval needed: Ship v3?"
        assert mails[0].message["From"] == "pi-recipes@example.com"
        assert all(
            u.startswith("https://pi.example/email/answer/") for u in mails[0].links().values()
        )
        assert "Open it on the page: https://pi.example/" in mails[0].part("plain")
        assert run.run_id  # asked by another process, mailed by this one
        assert mail.logins == ["pi-recipes"]
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        mail.stop()
    while (line := lines.get(timeout=10)) != "":
        said.append(line)
    assert process.stderr is not None
    process.stderr.close()
    output = "".join(said)
    assert code == 0, output
    assert "mailing questions through 127.0.0.1" in output and "stopping" in output
    assert PASSWORD not in output and secret not in output


def test_without_its_secret_or_users_file_it_stops_before_starting(
    here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    users = write_users(here)
    args = ["--users", str(users), "--base-url", "https://pi.example/email", "--from", SENDER]
    assert main(args) == 2
    said = capsys.readouterr().err
    assert SECRET_ENV in said and "--secret-file" in said
    monkeypatch.setenv(SECRET_ENV, "too-short")
    assert main(args) == 2
    said = capsys.readouterr().err
    assert "at least 32 characters" in said and "too-short" not in said
    monkeypatch.setenv(SECRET_ENV, SECRET)
    assert main(args[2:]) == 2
    assert "needs the users file" in capsys.readouterr().err
    assert main([*args, "--smtp-port", "70000"]) == 2
    assert "--smtp-port is 1 to 65535" in capsys.readouterr().err
    assert main([*args[:3], "ftp://pi.example", *args[4:]]) == 2
    assert "--base-url is the http(s) address" in capsys.readouterr().err
    assert sorted(p.name for p in here.iterdir()) == ["users.toml"], "nothing was created"
