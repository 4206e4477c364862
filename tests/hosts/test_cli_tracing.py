"""Tracing across processes: ``pi-recipes run`` pauses a run, ``pi-recipes runs answer
--resume`` continues it in another process; both export over OTLP/HTTP to a receiver the test
runs, and what it got back is one trace."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.hosts.cli_helpers import RELEASE, ROOT, cli_env, only_run_id, pi
from tests.otlp_receiver import otlp_receiver


def _collector_block() -> list[list[str]]:
    """The commands of docs/tracing.md's "Sending traces to a collector", as printed."""
    page = (ROOT / "docs" / "tracing.md").read_text(encoding="utf-8")
    body = page.split("### Sending traces to a collector", 1)[1].split("```sh\n", 1)[1]
    return [shlex.split(line) for line in body.split("```", 1)[0].splitlines() if line]


def test_a_run_paused_and_resumed_by_two_commands_is_one_trace(tmp_path: Path) -> None:
    """The commands of docs/tracing.md, with the collector's address the receiver's."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    with otlp_receiver() as receiver:
        env = cli_env(OTEL_METRICS_EXPORTER="none", OTEL_BSP_SCHEDULE_DELAY="50")
        for words in _collector_block():
            if words[0] in ("pip", "docker"):
                continue  # the receiver stands for the collector
            if words[0] == "export":
                name, _, value = words[1].partition("=")
                env[name] = value.replace("http://localhost:4318", receiver.endpoint)
                continue
            assert words[0] == "pi-recipes", words
            if "RUN" in words:
                words = [only_run_id(tmp_path) if w == "RUN" else w for w in words]
            done = pi(*words[1:], cwd=tmp_path, env=env)
            assert done.returncode == 0, done.stderr
        spans = list(receiver.spans)  # each process flushed its spans before it exited

    legs = [s for s in spans if s.name == "leg recipe"]
    assert [s.attributes["pi_recipes.leg.number"] for s in legs] == [1, 2, 3]
    assert len({s.trace_id for s in spans}) == 1, [(s.name, s.trace_id) for s in spans]
    assert {s.service for s in spans} == {"release-bot"}
    assert legs[1].parent_span_id == legs[0].span_id
    assert legs[2].parent_span_id == legs[1].span_id
    waits = [s for s in spans if s.name == "wait for a person"]
    assert [w.attributes["pi_recipes.interaction.id"] for w in waits] == [
        "int-call_channel", "int-call_publish",
    ]  # fmt: skip
    assert all(w.attributes["pi_recipes.interaction.via"] == "cli" for w in waits)
    assert all(w.end > w.start for w in waits)
    names = {s.name for s in spans}
    assert {"execute_tool choose_channel", "execute_tool publish_release"} <= names
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == 3 and {c.parent_span_id for c in chats} == {s.span_id for s in legs}


def test_off_by_default_nothing_of_the_sdk_is_imported(tmp_path: Path) -> None:
    """With no OTEL_* configuration a durable run pauses and resumes importing nothing of
    OpenTelemetry."""
    script = f"""
import sys, anyio
from ag_ui.core import ResumeEntry
from interactions.store import open_sqlite_store
from recipes.runs import Runner

async def main():
    async with await open_sqlite_store({str(tmp_path / "state.db")!r}) as store:
        runner = Runner(store, env={{}})
        paused = await runner.start({RELEASE!r}, "Release v1.4.0")
        entry = ResumeEntry(interrupt_id="int-call_channel", status="resolved",
                            payload={{"answer": "beta"}})
        await runner.resume(paused.run_id, [entry])

anyio.run(main)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("opentelemetry"))))
"""
    env = {k: v for k, v in cli_env().items() if not k.startswith("OTEL_")}
    done = subprocess.run([sys.executable, "-c", "import json\n" + script], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
