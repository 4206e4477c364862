"""``pi-recipes serve --webhook URL`` (a real server process): a question opened and answered
reaches a real local receiver, signed; ``--webhook`` without its secret stops before serving."""

from __future__ import annotations

from pathlib import Path

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
