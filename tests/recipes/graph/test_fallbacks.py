"""Fallback routes at run time, in-process on a real SQLite store. Model failures come from a
local fake provider server (real HTTP, reached by the real OpenAI and Anthropic clients): a 429
with a reset header, a 401, a 503, a malformed body."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import start_graph
from recipes.graph.runtime import GraphCheckpoint, path_lines
from recipes.runs import Runner
from tests.hosts.fake_providers import (
    ANTHROPIC_KEY,
    OPENAI_KEY,
    FakeProviders,
    calls,
    error,
    fake_providers,
    malformed,
    outage,
    says,
    usage_window,
)
from tests.recipes.graph.fallback_flows import REVIEW, SKIP_ROUTE, write_plan_phase
from tests.recipes.graph.flows import WRITER

pytestmark = pytest.mark.anyio

REVIEWED = {"approved": True, "critique": "Sound; test step 2.", "score": 4}


@pytest.fixture
def fake() -> Any:
    with fake_providers() as served:
        yield served


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


def runner(store: Store, fake: FakeProviders, where: Path) -> Runner:
    return Runner(store, env=fake.env(), cwd=where)


async def checkpoint(store: Store, run_id: str) -> GraphCheckpoint:
    return GraphCheckpoint.model_validate((await store.get_run(run_id)).checkpoint)


async def events(store: Store, run_id: str, *types: str) -> list[dict[str, Any]]:
    return [e.data for e in await store.list_events(run_id) if e.type in types]


async def output(store: Store, run_id: str, node: str) -> dict[str, Any]:
    cp = await checkpoint(store, run_id)
    found = [r.output for r in cp.executions if r.node == node and r.output is not None]
    assert found, f"{node} has no output"
    return found[-1]


async def test_skip_policy_skips_the_peer_loudly_and_the_gate_reads_it(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)
    fake.queue("openai", usage_window(reset="2s"))
    done = await start_graph(runner(store, fake, tmp_path), flow,
                             vars={"plan_review_policy": "skip"})  # fmt: skip
    assert done.status is RunStatus.FINISHED, done.error
    review = await output(store, done.run_id, "plan_review")
    assert review == {
        "approved": False, "critique": "", "score": 0.0,
        "_skipped": True, "_fallback_used": True, "_served_by": "give_up", "_backend": "primary",
    }  # fmt: skip
    assert isinstance(review["score"], float), "numbers at zero as a JSON round-trip gives them"
    assert json.loads(json.dumps(review)) == review
    assert await output(store, done.run_id, "plan_gate") == {
        "reviewed": False, "provenance": "peer skipped mid-run"
    }
    [fallback] = await events(store, done.run_id, "model_fallback")
    assert fallback == {
        "node_id": "plan_review", "visit": 1, "branch": "main",
        "from_route": "primary", "to_route": "", "from_backend": "primary", "to_backend": "",
        "from_model": "openai:gpt-4.1", "to_model": "", "from_provider": "openai",
        "to_provider": "", "reason": "usage_window", "attempts": 1,
        "error": "ModelError: openai: HTTP 429 insufficient_quota: You exceeded your current "
                 "quota.",
        "to_action": "skip", "served_by": "give_up",
    }  # fmt: skip
    types = [e.type for e in await store.list_events(done.run_id) if e.type != "leg_ended"]
    at = types.index("model_fallback")
    assert types[at - 1 : at + 2] == ["node_started", "model_fallback", "node_finished"]
    lines = path_lines(await checkpoint(store, done.run_id))
    assert "  ⤼ plan_review#1 (judge) skipped by route give_up: " in "\n".join(lines)
    assert lines[-1] == "skipped: plan_review#1 (route give_up)"
    [request] = fake.requests["openai"]  # a quota refusal is not retried in place
    assert request["headers"]["authorization"] == f"Bearer {OPENAI_KEY}"
    assert "1. cut the release" in json.dumps(request["body"]["messages"])
    stored = json.dumps([e.data for e in await store.list_events(done.run_id)])
    assert OPENAI_KEY not in stored and ANTHROPIC_KEY not in stored


async def test_wait_policy_fails_resumable_and_a_retry_finishes_once_the_provider_recovers(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)
    run = runner(store, fake, tmp_path)
    fake.queue("openai", usage_window(reset="6m0s"))
    failed = await start_graph(run, flow)  # plan_review_policy defaults to wait
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert failed.error is not None and "HTTP 429 insufficient_quota" in failed.error
    assert await events(store, failed.run_id, "model_fallback") == []
    cp = await checkpoint(store, failed.run_id)
    assert cp.executions[-1].retry_after == 360.0, "the reset header is kept for a retry"
    fake.queue("openai", says(REVIEW))
    done = await run.retry(failed.run_id)
    assert done.status is RunStatus.FINISHED
    assert await output(store, done.run_id, "plan_review") == REVIEWED  # no stamps
    assert await output(store, done.run_id, "plan_gate") == {
        "reviewed": True, "provenance": "peer-reviewed"
    }
    assert [r.node for r in (await checkpoint(store, done.run_id)).executions] == [
        "plan", "plan_review", "plan_gate"
    ], "the finished author was not run again"
    assert len(fake.requests["openai"]) == 2


async def test_an_auth_failure_met_on_a_retry_leaves_the_run_resumable(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)  # its skip route is off: the policy is wait
    run = runner(store, fake, tmp_path)
    fake.queue("openai", usage_window(reset="30s"))
    first = await start_graph(run, flow)
    assert first.status is RunStatus.FAILED_RESUMABLE
    fake.queue("openai", error(401, "invalid_api_key", "Incorrect API key provided."))
    again = await run.retry(first.run_id)
    assert again.status is RunStatus.FAILED_RESUMABLE, "a key set now cures it: not lost"
    assert again.error is not None and "HTTP 401" in again.error
    fake.queue("openai", says(REVIEW))  # the key was fixed
    done = await run.retry(first.run_id)
    assert done.status is RunStatus.FINISHED
    assert await output(store, done.run_id, "plan_review") == REVIEWED
    assert [r.node for r in (await checkpoint(store, done.run_id)).executions] == [
        "plan", "plan_review", "plan_gate"
    ], "the finished author was not run again"


async def test_a_model_route_serves_and_on_filters_routes_without_ending_the_chain(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    routes = """\
    cheaper:
      model: "anthropic:claude-haiku-4-5"
      on: [usage_window]
    rescue:
      model: "anthropic:claude-sonnet-4-5"
      on: [transient_exhausted]
"""
    flow = write_plan_phase(tmp_path, routes)
    fake.queue("openai", outage(), outage(), outage())
    fake.queue("anthropic", says(REVIEW))
    done = await start_graph(runner(store, fake, tmp_path), flow)
    assert done.status is RunStatus.FINISHED, done.error
    assert await output(store, done.run_id, "plan_review") == REVIEWED | {
        "_fallback_used": True, "_served_by": "rescue", "_backend": "rescue"
    }
    assert (await output(store, done.run_id, "plan_gate"))["provenance"] == "reviewed by rescue"
    [fallback] = await events(store, done.run_id, "model_fallback")
    assert {k: fallback[k] for k in ("from_route", "to_route", "to_model", "to_provider",
                                     "reason", "attempts")} == {
        "from_route": "primary", "to_route": "rescue", "to_model": "anthropic:claude-sonnet-4-5",
        "to_provider": "anthropic", "reason": "transient_exhausted", "attempts": 3,
    }  # fmt: skip
    assert "to_action" not in fallback
    [request] = fake.requests["anthropic"]
    assert request["body"]["model"] == "claude-sonnet-4-5", "cheaper did not take the outage"
    assert request["headers"]["x-api-key"] == ANTHROPIC_KEY
    assert len(request["body"]["messages"]) == 1, "the route starts a fresh conversation"


async def test_auth_advances_only_to_a_route_that_names_it(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    default = '    cheaper:\n      model: "anthropic:claude-haiku-4-5"\n'
    flow = write_plan_phase(tmp_path / "default", default)
    fake.queue("openai", error(401, "invalid_api_key", "Incorrect API key provided."))
    failed = await start_graph(runner(store, fake, tmp_path / "default"), flow)
    assert failed.status is RunStatus.FAILED, "auth is neither taken by default nor resumable"
    assert failed.error is not None and "HTTP 401" in failed.error
    assert fake.requests["anthropic"] == []

    named = default + "      on: [auth]\n"
    flow = write_plan_phase(tmp_path / "named", named)
    fake.queue("openai", error(401, "invalid_api_key", "Incorrect API key provided."))
    fake.queue("anthropic", says(REVIEW))
    done = await start_graph(runner(store, fake, tmp_path / "named"), flow)
    assert done.status is RunStatus.FINISHED
    assert (await output(store, done.run_id, "plan_review"))["_served_by"] == "cheaper"


async def test_a_filtered_skip_refuses_an_unclassified_failure_and_on_any_accepts_it(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    filtered = SKIP_ROUTE.replace("on: [any]", "on: [usage_window, unavailable]")
    flow = write_plan_phase(tmp_path / "filtered", filtered)
    fake.queue("openai", malformed())
    failed = await start_graph(runner(store, fake, tmp_path / "filtered"), flow,
                               vars={"plan_review_policy": "skip"})  # fmt: skip
    assert failed.status is RunStatus.FAILED, "a malformed body never becomes a skip"
    assert failed.error is not None and "is not valid JSON" in failed.error
    assert await events(store, failed.run_id, "model_fallback") == []

    flow = write_plan_phase(tmp_path / "any", SKIP_ROUTE)
    fake.queue("openai", malformed())
    skipped = await start_graph(runner(store, fake, tmp_path / "any"), flow,
                                vars={"plan_review_policy": "skip"})  # fmt: skip
    assert skipped.status is RunStatus.FINISHED
    assert (await output(store, skipped.run_id, "plan_review"))["_skipped"] is True
    [fallback] = await events(store, skipped.run_id, "model_fallback")
    assert fallback["reason"] == "unclassified" and fallback["to_action"] == "skip"


async def test_an_unclassified_failure_still_advances_to_a_filtered_model_route(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    routes = '    cheaper:\n      model: "anthropic:claude-haiku-4-5"\n      on: [usage_window]\n'
    flow = write_plan_phase(tmp_path, routes)
    fake.queue("openai", malformed())
    fake.queue("anthropic", says(REVIEW))
    done = await start_graph(runner(store, fake, tmp_path), flow)
    assert done.status is RunStatus.FINISHED
    assert (await output(store, done.run_id, "plan_review"))["_served_by"] == "cheaper"


async def test_a_when_error_deactivates_the_route_with_a_warning_and_never_fails_the_node(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    gate = SKIP_ROUTE.replace("vars.plan_review_policy == 'skip'", "10 / vars.divisor > 1")
    flow = write_plan_phase(tmp_path, gate, extra_vars="  divisor: int = 0\n")
    fake.queue("openai", says(REVIEW))
    done = await start_graph(runner(store, fake, tmp_path), flow)
    assert done.status is RunStatus.FINISHED, "the broken gate took nothing down"
    [warning] = await events(store, done.run_id, "fallback_when_failed")
    assert warning == {
        "node_id": "plan_review", "visit": 1, "branch": "main", "route": "give_up",
        "when": "10 / vars.divisor > 1", "error": "division by zero", "level": "warning",
    }  # fmt: skip

    fake.queue("openai", usage_window())
    failed = await start_graph(runner(store, fake, tmp_path), flow)
    assert failed.status is RunStatus.FAILED_RESUMABLE, "the inactive skip route took nothing"
    assert len(await events(store, failed.run_id, "fallback_when_failed")) == 1


async def test_an_exhausted_chain_is_resumable_when_any_failure_passes_with_time(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    routes = '    cheaper:\n      model: "anthropic:claude-haiku-4-5"\n'
    flow = write_plan_phase(tmp_path, routes)
    run = runner(store, fake, tmp_path)
    fake.queue("openai", usage_window(reset="30s"))
    fake.queue("anthropic", error(401, "authentication_error", "invalid x-api-key"))
    failed = await start_graph(run, flow)
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert failed.error is not None
    assert "every route failed: primary: ModelError: openai: HTTP 429" in failed.error
    assert "; cheaper: ModelError: anthropic: HTTP 401" in failed.error
    execution = (await checkpoint(store, failed.run_id)).executions[-1]
    assert (execution.retry_after, execution.code) == (30.0, "usage_window"), "why it may pass"
    fake.queue("openai", says(REVIEW))  # the primary's window reopened
    done = await run.retry(failed.run_id)
    assert done.status is RunStatus.FINISHED
    assert await output(store, done.run_id, "plan_review") == REVIEWED, "the primary served"
    assert len(fake.requests["anthropic"]) == 1


async def test_a_node_paused_on_a_fallback_route_resumes_on_it(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    (tmp_path / "writer.py").write_text(WRITER, encoding="utf-8")
    flow = tmp_path / "flow.iter"
    flow.write_text("""\
schema draft_out:
  draft: string

agent draft:
  recipe: ./writer.py
  model: "openai:gpt-4.1"
  output: draft_out
  fallbacks:
    cheaper:
      model: "anthropic:claude-haiku-4-5"

workflow w:
  entry: draft
  draft -> done
""")
    run = runner(store, fake, tmp_path)
    fake.queue("openai", usage_window())
    fake.queue("anthropic", calls("pick_highlight", version="v2"))
    paused = await start_graph(run, flow)
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    [interrupt] = paused.interrupts
    assert interrupt.id == "int-draft.1.toolu_fake"  # asked from the cheaper route's call
    assert (await checkpoint(store, paused.run_id)).executions[-1].route == "cheaper"
    fake.queue("anthropic", says(json.dumps({"draft": "Safety first."})))
    answered = await run.answer(paused.run_id, interrupt.id, {"answer": "safety"}, resume=True)
    assert answered.run is not None and answered.run.status is RunStatus.FINISHED
    assert await output(store, paused.run_id, "draft") == {
        "draft": "Safety first.", "_fallback_used": True, "_served_by": "cheaper",
        "_backend": "cheaper",
    }  # fmt: skip
    assert len(fake.requests["openai"]) == 1, "the resume went back to the serving route"
    last = fake.requests["anthropic"][-1]["body"]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert "Answer: safety" in json.dumps(last[-1])


NAPPER = '''\
import anyio


def recipe(api):
    @api.tool
    async def nap(tool_call_id, params, ctx, on_update):
        """Sleep a minute."""
        await anyio.sleep(60)
        return "rested"

    api.register_agent("napper", "You nap.")
'''

SLOW_FLOW = """\
schema out:
  text: string

agent slow:
  recipe: ./napper.py
  model: "{model}"
  output: out
  timeout: "{timeout}"
  fallbacks:
{routes}
workflow w:
  entry: slow
{budget}  slow -> done
"""

ON_ANY_SKIP = "    give_up:\n      action: skip\n      on: [any]\n"


def _slow_flow(where: Path, routes: str, *, model: str = "scripted:nap.json",
               timeout: str = "300ms", budget: str = "") -> Path:  # fmt: skip
    where.mkdir(parents=True, exist_ok=True)
    (where / "napper.py").write_text(NAPPER, encoding="utf-8")
    nap = {"turns": [{"tool_calls": [{"name": "nap"}]}, {"text": '{"text": "rested"}'}]}
    (where / "nap.json").write_text(json.dumps(nap), encoding="utf-8")
    misfit = {"turns": [{"text": "no JSON here"}, {"text": "still none"}]}
    (where / "misfit.json").write_text(json.dumps(misfit), encoding="utf-8")
    fits = {"turns": [{"text": '{"text": "fits"}'}]}
    (where / "fits.json").write_text(json.dumps(fits), encoding="utf-8")
    path = where / "flow.iter"
    text = SLOW_FLOW.format(model=model, timeout=timeout, routes=routes, budget=budget)
    path.write_text(text, encoding="utf-8")
    return path


async def test_a_node_timeout_is_unclassified_and_on_any_skips_it(
    tmp_path: Path, store: Store
) -> None:
    """A node past its ``timeout:`` is a failure no class describes: a skip route with
    ``on: [any]`` takes it, a filtered one does not. Before, a timeout never reached any route:
    the node failed whatever its ``fallbacks:`` said."""
    run = Runner(store, env={}, cwd=tmp_path)
    done = await start_graph(run, _slow_flow(tmp_path / "any", ON_ANY_SKIP))
    assert done.status is RunStatus.FINISHED, done.error
    assert (await output(store, done.run_id, "slow"))["_skipped"] is True
    [fallback] = await events(store, done.run_id, "model_fallback")
    assert fallback["reason"] == "unclassified" and "time bound" in fallback["error"]
    filtered = ON_ANY_SKIP.replace("[any]", "[usage_window]")
    failed = await start_graph(run, _slow_flow(tmp_path / "filtered", filtered))
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert failed.error is not None and "ran past its time bound" in failed.error


async def test_an_output_schema_mismatch_is_unclassified_and_a_model_route_serves(
    tmp_path: Path, store: Store
) -> None:
    """Before, a reply that did not fit the schema (after its corrective turn) failed the node
    and no route was tried."""
    routes = '    fitting:\n      model: "scripted:fits.json"\n'
    flow = _slow_flow(tmp_path, routes, model="scripted:misfit.json")
    done = await start_graph(Runner(store, env={}, cwd=tmp_path), flow)
    assert done.status is RunStatus.FINISHED, done.error
    assert await output(store, done.run_id, "slow") == {
        "text": "fits", "_fallback_used": True, "_served_by": "fitting", "_backend": "fitting"
    }  # fmt: skip
    [fallback] = await events(store, done.run_id, "model_fallback")
    assert fallback["reason"] == "unclassified" and "output schema" in fallback["error"]


async def test_a_later_route_is_still_bounded_by_the_runs_max_duration(
    tmp_path: Path, store: Store
) -> None:
    """The primary times out at its 2 s; the route after it gets what is left of the run's
    2.5 s, not another 2 s of its own."""
    routes = '    again:\n      model: "scripted:nap.json"\n'
    budget = '  budget:\n    max_duration: "2500ms"\n'
    flow = _slow_flow(tmp_path, routes, timeout="2s", budget=budget)
    failed = await start_graph(Runner(store, env={}, cwd=tmp_path), flow)
    assert failed.status is RunStatus.FAILED, failed.error
    assert failed.error is not None and "max_duration (2500ms) spent" in failed.error
    [fallback] = await events(store, failed.run_id, "model_fallback")
    assert fallback["to_route"] == "again"
    assert (await checkpoint(store, failed.run_id)).elapsed < 3.5


async def test_a_timeout_that_spends_the_runs_budget_takes_no_route(
    tmp_path: Path, store: Store
) -> None:
    """The run's max_duration, not the node's timeout, cut the primary: the run is out of
    time, and no skip route turns that into a success."""
    budget = '  budget:\n    max_duration: "400ms"\n'
    flow = _slow_flow(tmp_path, ON_ANY_SKIP, timeout="30s", budget=budget)
    failed = await start_graph(Runner(store, env={}, cwd=tmp_path), flow)
    assert failed.status is RunStatus.FAILED
    assert failed.error is not None and "budget exceeded: max_duration (400ms)" in failed.error
    assert await events(store, failed.run_id, "model_fallback") == []


KEYLESS_THEN_SKIP = """\
    cheaper:
      model: "anthropic:claude-haiku-4-5"
      on: [usage_window]
    give_up:
      action: skip
      when: "vars.plan_review_policy == 'skip'"
      on: [usage_window]
"""


async def test_a_route_that_cannot_be_built_is_passed_over_to_a_filtered_skip(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    """The rescue route's model has no key here: it cannot be built, so the walk goes on with
    the primary's failure (a usage window), which the filtered skip route takes; both hops are
    recorded. Before, the keyless route failed as ``auth``, which the skip route does not take,
    and the run ended failed_resumable instead of skipping."""
    flow = write_plan_phase(tmp_path, KEYLESS_THEN_SKIP)
    run = Runner(store, env=fake.env(anthropic=False), cwd=tmp_path)
    fake.queue("openai", usage_window(reset="2s"))
    done = await start_graph(run, flow, vars={"plan_review_policy": "skip"})
    assert done.status is RunStatus.FINISHED, done.error
    review = await output(store, done.run_id, "plan_review")
    assert review["_skipped"] is True and review["_served_by"] == "give_up"
    assert review["_backend"] == "primary", "the last route that ran"
    first, second = await events(store, done.run_id, "model_fallback")
    assert (first["from_route"], first["to_route"], first["reason"]) == (
        "primary", "cheaper", "usage_window"
    )
    assert "build_failed" not in first
    assert {k: second[k] for k in ("from_route", "to_route", "to_action", "served_by", "reason",
                                   "attempts", "build_failed", "from_model")} == {
        "from_route": "cheaper", "to_route": "", "to_action": "skip", "served_by": "give_up",
        "reason": "usage_window", "attempts": 0, "build_failed": True,
        "from_model": "anthropic:claude-haiku-4-5",
    }  # fmt: skip
    assert "no Anthropic API key" in second["error"] and "ANTHROPIC_API_KEY" in second["error"]
    assert fake.requests["anthropic"] == [], "nothing was sent without a key"

    fake.queue("openai", usage_window(reset="2s"))
    waiting = await start_graph(run, flow)  # the policy is wait: the skip route is off
    assert waiting.status is RunStatus.FAILED_RESUMABLE, waiting.error
    assert waiting.error is not None and "primary: ModelError: openai: HTTP 429" in waiting.error
    assert "cheaper: the route cannot be built: no Anthropic API key" in waiting.error
    execution = (await checkpoint(store, waiting.run_id)).executions[-1]
    assert (execution.code, execution.retry_after) == ("usage_window", 2.0), "why it may pass"
