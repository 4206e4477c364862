"""Tracing through the web host: a ``pi-recipes serve`` process exporting over OTLP/HTTP to a
receiver the test runs. The request that starts a run and the run's legs are one trace; the
request that answers continues nothing of its own but is linked from the leg it resumes."""

from __future__ import annotations

import time
from pathlib import Path

from tests.hosts.cli_helpers import cli_env
from tests.hosts.web.server import serving, wait_for_status
from tests.otlp_receiver import ReceivedSpan, Receiver, otlp_receiver


def _wait_for(receiver: Receiver, name: str, count: int) -> list[ReceivedSpan]:
    deadline = time.monotonic() + 20
    while len(found := receiver.named(name)) < count:
        assert time.monotonic() < deadline, [s.name for s in receiver.spans]
        time.sleep(0.05)
    return found


def test_the_request_that_starts_a_run_and_its_legs_are_one_trace(tmp_path: Path) -> None:
    with otlp_receiver() as receiver:
        env = cli_env(
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_METRICS_EXPORTER="none",
            OTEL_BSP_SCHEDULE_DELAY="50",
        )
        with serving(tmp_path, env=env) as server, server.client() as http:
            run_id = server.start_run("pick: Which channel?")
            answered = http.post(
                f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "Beta"}
            )
            assert answered.status_code in (200, 202), answered.text
            wait_for_status(http, run_id, {"finished"})
            legs = _wait_for(receiver, "leg recipe", 2)
        spans = list(receiver.spans)

    (start,) = [s for s in spans if s.name == "POST /api/runs" and not s.parent_span_id]
    assert legs[0].trace_id == start.trace_id
    assert legs[0].parent_span_id == start.span_id
    assert legs[1].trace_id == start.trace_id and legs[1].parent_span_id == legs[0].span_id
    (answer,) = [s for s in spans if s.name.startswith("POST /api/runs/{run_id}/interactions")
                 and not s.parent_span_id]  # fmt: skip
    assert answer.trace_id != start.trace_id  # the request's own trace, linked from the leg
    assert (answer.trace_id, answer.span_id) in legs[1].links
    (wait,) = [s for s in spans if s.name == "wait for a person"]
    assert wait.trace_id == start.trace_id
    assert wait.attributes["pi_recipes.interaction.via"] == "web"
