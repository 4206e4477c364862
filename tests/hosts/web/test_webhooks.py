"""``pi-recipes serve --webhook URL`` (a real server process): a question opened and answered
reaches a real local receiver, signed; ``--webhook`` without its secret stops before serving;
the commands and the receiver of docs/reaching.md work as printed."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
import threading
import time
from http.server import HTTPServer
from pathlib import Path

import anyio
import anyio.to_thread
import httpx
import pytest

from tests.hosts.cli_helpers import RELEASE, cli_env, pi
from tests.hosts.kit.webhook_receiver import Receiver
from tests.hosts.web.server import serving, wait_for_status

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

pytestmark = pytest.mark.anyio


async def test_a_question_opened_and_answered_reaches_the_webhook(tmp_path: Path) -> None:
    receiver = Receiver(SECRET)
    try:
        env = cli_env(PI_RECIPES_WEBHOOK_SECRET=SECRET)
        with serving(tmp_path, args=("--webhook", receiver.url), env=env) as server:
            run_id = server.start_run("text: Name?")
            await receiver.wait(received=1)
            with server.client() as http:
                reply = http.post(
                    f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "Pipette"}
                )
                assert reply.status_code == 200, reply.text
                wait_for_status(http, run_id, {"finished"})
            await receiver.wait(received=2)
        opened, answered = receiver.received[:2]
        assert all(r.signed for r in receiver.received)
        assert (opened.body["type"], opened.body["run_id"], opened.body["interaction_id"]) == (
            "interaction.opened", run_id, "int-c1",
        )  # fmt: skip
        assert opened.body["data"]["question"]["message"] == "Name?"
        assert (answered.body["type"], answered.body["interaction_id"]) == (
            "interaction.answered", "int-c1",
        )  # fmt: skip
        assert answered.body["data"]["answered_by"] == "token"
        assert SECRET not in server.log.read_text()
    finally:
        receiver.close()


def test_a_webhook_without_its_secret_stops_before_serving(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/hooks"
    done = pi("serve", RELEASE, "--port", "0", "--webhook", url, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "PI_RECIPES_WEBHOOK_SECRET" in done.stderr and "--webhook-secret-file" in done.stderr
    bad = tmp_path / "secret"
    bad.write_text("whsec_c2hvcnQ=")
    done = pi("serve", RELEASE, "--port", "0", "--webhook", url, "--webhook-secret-file",
              str(bad), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "base64 of 24 to 64 bytes" in done.stderr, done.stderr
    assert "c2hvcnQ" not in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["secret"], "nothing was created"


PAGE = Path(__file__).resolve().parents[3] / "docs" / "reaching.md"


async def test_the_receiver_of_reaching_md_verifies_what_serve_posts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's commands, run as printed (the secret made as it says, the receiver it shows,
    ``serve --webhook``), but on free ports: the page's receiver takes the posts, refuses a
    forged one."""
    page = PAGE.read_text(encoding="utf-8")
    program = re.search(r'```python title="receiver.py"\n(.*?)```', page, re.S)
    commands = re.search(r"```sh\n(.*?)```", page, re.S)
    assert program and commands
    export, start, serve = commands[1].splitlines()
    made = re.search(r"python -c '(.*?)'", export)
    assert made and shlex.split(start, comments=True) == ["python", "receiver.py", "&"]
    made_one = await anyio.run_process([sys.executable, "-c", made[1]])
    secret = "whsec_" + made_one.stdout.decode().strip()
    monkeypatch.setenv("PI_RECIPES_WEBHOOK_SECRET", secret)
    (tmp_path / "receiver.py").write_text(program[1], encoding="utf-8")
    spec = importlib.util.spec_from_file_location("receiver", tmp_path / "receiver.py")
    assert spec and spec.loader
    receiver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(receiver)
    posted = threading.Event()

    class Hooks(receiver.Hooks):  # type: ignore[misc,name-defined]
        def do_POST(self) -> None:
            super().do_POST()
            posted.set()

        def log_message(self, *args: object) -> None:
            pass

    hooks = HTTPServer(("127.0.0.1", 0), Hooks)
    threading.Thread(target=hooks.serve_forever, args=(0.02,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{hooks.server_address[1]}/hooks"
        words = shlex.split(serve, comments=True)
        assert words[:3] == ["pi-recipes", "serve", "examples/release.py"]
        assert words[3:] == ["--webhook", "http://127.0.0.1:8001/hooks"]
        env = cli_env(PI_RECIPES_WEBHOOK_SECRET=secret)
        with serving(tmp_path, recipe=RELEASE, args=("--webhook", url), env=env) as server:
            run_id = server.start_run("Release v1")
            assert await anyio.to_thread.run_sync(posted.wait, 30)
        assert f"interaction.opened {run_id} int-" in capsys.readouterr().out
        assert len(receiver.seen) >= 1
        forged = {"webhook-id": "evt_1", "webhook-timestamp": str(int(time.time())),
                  "webhook-signature": "v1," + "A" * 44}  # fmt: skip
        with pytest.raises(ValueError):
            receiver.verify(secret, forged, b"{}")
        async with httpx.AsyncClient(timeout=10) as http:
            refused = await http.post(url, content=b"{}", headers=forged)
        assert refused.status_code == 400
    finally:
        hooks.shutdown()
        hooks.server_close()
