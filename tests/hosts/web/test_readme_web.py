"""The web host page's commands (docs/hosts/web.md) run as printed (``curl`` against a real
server; only the address is this test's free port)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hosts.web.server import RELEASE, serving

SECTION = (Path(__file__).resolve().parents[3] / "docs" / "hosts" / "web.md").read_text(
    encoding="utf-8"
)


def test_the_readme_section_serves_the_demo_recipe() -> None:
    (serve, *_) = re.findall(r"```sh\n(.*?)```", SECTION, flags=re.S)
    assert serve.split("#")[0].split() == ["pi-recipes", "serve", "examples/release.py"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_readme_curl_commands_run_as_printed(tmp_path: Path) -> None:
    _, rest, agui, *_ = re.findall(r"```sh\n(.*?)```", SECTION, flags=re.S)
    with serving(tmp_path, store=".pi-recipes/state.db", recipe=RELEASE) as server:
        script = (rest + agui).replace("http://127.0.0.1:8000", server.url.rstrip("/"))
        done = subprocess.run(
            ["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert '{"interactions":[{"id":"int-call_channel"' in out
    for iid in ("int-call_channel", "int-call_publish"):
        assert f'"interaction_id":"{iid}","queued":false,"resumed":true,"created":true,' in out
    assert '"settled":true,"approvals":[],"required_approvals":1}' in out
    assert "Revision requested. Feedback: after QA" in out
    assert '"outcome":{"type":"interrupt","interrupts":[{"id":"int-call_channel"' in out
    assert '{"type":"RUN_STARTED","threadId":"t1","runId":"r2","parentRunId":"r1"}' in out
