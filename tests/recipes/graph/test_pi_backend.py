"""The ``pi`` backend: the node's agent runs in a real ``pi-recipes rpc`` subprocess. Its
``ask_user_async`` is stored by the engine, an answer given from yet another connection reaches
it as a ``steer`` at its next turn boundary, its ``await_answers`` is answered by the engine."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions.async_questions import ALL_ANSWERED_HEADER, MESSAGE_DELIVERED
from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import start_graph
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner
from tests.hosts.fake_providers import FakeProviders, fake_providers, says
from tests.recipes.graph.fallback_flows import REVIEW

pytestmark = pytest.mark.anyio

CHILD = '''\
"""The agent the pi backend runs in its subprocess (pi-recipes rpc)."""

import json

import anyio
from pydantic import BaseModel

from interactions.store import open_sqlite_store
from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ScriptedModel
from recipes.runs import Runner


class Answer(BaseModel):
    interaction_id: str


def _told(request):
    return [text_of(m.content) for m in request.messages[1:]
            if isinstance(m, ToolResultMessage | UserMessage)]


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def work(tool_call_id, params: Answer, ctx, on_update):
        """Work; meanwhile the operator answers from another connection."""
        run_id = params.interaction_id.split("_")[0]
        async with await open_sqlite_store(ctx.cwd / "state.db") as store:
            await Runner(store, host="operator").answer(
                run_id, params.interaction_id, {"answer": "teal"})
            with anyio.fail_after(20):  # until the engine has steered it in
                seen = 0
                while True:
                    for event in await store.wait_for_events(run_id, after_seq=seen, timeout=5):
                        seen = event.seq
                        if event.type == "user_message_delivered":
                            return "worked"

    def work_on(request):
        posted = _told(request)[-1]
        iid = posted.split("Question posted as ")[1].split(";")[0]
        return AssistantMessage(tool_calls=[
            ToolCall(id="w", name="work", arguments={"interaction_id": iid})])

    api.register_agent("pidrafter", "You draft.", model=ScriptedModel([
        AssistantMessage(tool_calls=[ToolCall(id="q", name="ask_user_async",
                                              arguments={"question": "Colour?"})]),
        work_on,
        AssistantMessage(tool_calls=[ToolCall(id="a", name="await_answers", arguments={})]),
        lambda request: AssistantMessage(text=json.dumps({"draft": json.dumps(_told(request))})),
    ], label="pidrafter"))
'''

FLOW = """\
schema draft_out:
  draft: string

agent draft:
  recipe: ./child.py
  agent: pidrafter
  backend: pi
  interaction: async
  system: "Draft the colour scheme."
  output: draft_out
  timeout: "60s"

await_answers gate:
  from: draft
  timeout: "30s"

workflow w:
  entry: draft
  draft -> gate
  gate -> done
"""


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


async def test_a_pi_node_posts_gets_its_answer_by_steer_and_awaits(
    tmp_path: Path, store: Store
) -> None:
    (tmp_path / "child.py").write_text(CHILD, encoding="utf-8")
    (tmp_path / "flow.iter").write_text(FLOW, encoding="utf-8")
    runner = Runner(store, cwd=tmp_path, host="test")  # the environment is the process's
    done = await start_graph(runner, tmp_path / "flow.iter", run_id="run-pi")
    assert done.status is RunStatus.FINISHED, done.error
    cp = GraphCheckpoint.model_validate((await store.get_run("run-pi")).checkpoint)
    told = json.loads(cp.outputs["draft"]["draft"])
    iid = "run-pi_draft_async_1"
    assert told == [
        f"Question posted as {iid}; keep working. The answer arrives as a message "
        f'"[Answer to question {iid}] ..." when the operator replies. Call await_answers only '
        "when you cannot proceed without it.",
        "worked",
        f'[Answer to question {iid}] Q: "Colour?" — A: teal',  # the steer, at the boundary
        f"{ALL_ANSWERED_HEADER}\n- [{iid}] Q: Colour? — A: teal",  # the engine's await
    ]
    assert cp.outputs["gate"]["answers"][0]["answer"] == "teal"
    events = await store.list_events("run-pi")
    assert [e.data["interaction_id"] for e in events if e.type == MESSAGE_DELIVERED] == [iid]
    record = await store.get_interaction("run-pi", iid)
    assert record.node_id == "draft" and record.answer is not None
    assert record.answer.via == "operator"


PEER = """\
from recipes import RecipeAPI


def recipe(api: RecipeAPI) -> None:
    api.register_agent("peer", "You review plans.")
"""

PEER_FLOW = """\
schema review_out:
  approved: bool
  critique: string

judge review:
  recipe: ./peer.py
  agent: peer
  backend: pi
  model: "openai:gpt-4.1"
  user: "Review this plan: 1. cut the release 2. tag it"
  output: review_out
  timeout: "60s"
  fallbacks:
{routes}
workflow w:
  entry: review
  review -> done
"""


@pytest.fixture
def fake() -> Any:
    with fake_providers() as served:
        yield served


@pytest.mark.parametrize(
    ("routes", "served_by"),
    [
        ('    cheaper:\n      model: "anthropic:claude-haiku-4-5"\n', "cheaper"),
        ("    give_up:\n      action: skip\n      on: [any]\n", "give_up"),
        ("    give_up:\n      action: skip\n      on: [auth, usage_window]\n", None),
    ],
    ids=["model-route", "skip-on-any", "filtered-skip"],
)
async def test_a_pi_agents_failure_walks_the_nodes_fallback_routes(
    tmp_path: Path, store: Store, fake: FakeProviders, routes: str, served_by: str | None
) -> None:
    """The pi agent's model failure comes back over RPC as text, its class lost (as across
    Iterion's claw sandbox boundary): it is unclassified, so it advances to a model route
    whatever its ``on:`` and to a skip route only with ``on: [any]``. Before, the chain was
    never walked on pi: the node failed with its routes unread, no ``model_fallback``."""
    (tmp_path / "peer.py").write_text(PEER, encoding="utf-8")
    (tmp_path / "flow.iter").write_text(PEER_FLOW.format(routes=routes), encoding="utf-8")
    fake.queue("anthropic", says(REVIEW))
    runner = Runner(store, env=fake.env(openai=False), cwd=tmp_path, host="test")  # no key
    result = await start_graph(runner, tmp_path / "flow.iter", run_id="run-f")
    events = [e.data for e in await store.list_events("run-f") if e.type == "model_fallback"]
    if served_by is None:  # a filtered skip refuses what nobody could describe
        assert result.status is RunStatus.FAILED_RESUMABLE
        assert result.error is not None and "no API key" in result.error
        assert events == []
        return
    assert result.status is RunStatus.FINISHED, result.error
    cp = GraphCheckpoint.model_validate((await store.get_run("run-f")).checkpoint)
    review = cp.outputs["review"]
    assert review["_served_by"] == served_by and review["_fallback_used"] is True
    assert review.get("_skipped", False) is (served_by == "give_up")
    assert [(e["from_route"], e["reason"]) for e in events] == [("primary", "unclassified")]
    assert "no API key" in events[0]["error"]


LATE = '''\
"""An agent that posts a question no one answers, then awaits it (pi-recipes rpc)."""

import json

from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ScriptedModel


def recipe(api: RecipeAPI) -> None:
    api.register_agent("asker", "You draft.", model=ScriptedModel([
        AssistantMessage(tool_calls=[ToolCall(id="q", name="ask_user_async",
                                              arguments={"question": "Colour?"})]),
        AssistantMessage(tool_calls=[ToolCall(id="a", name="await_answers", arguments={})]),
        lambda request: AssistantMessage(text=json.dumps({"draft": text_of(
            [m for m in request.messages if isinstance(m, ToolResultMessage)][-1].content)})),
    ], label="asker"))
'''

LATE_FLOW = """\
schema draft_out:
  draft: string

agent draft:
  recipe: ./late.py
  agent: asker
  backend: pi
  interaction: async
  output: draft_out
  timeout: "60s"

workflow w:
  entry: draft
  draft -> done
"""


async def test_a_question_expiring_under_a_pi_await_fails_the_node_under_policy_fail(
    tmp_path: Path, store: Store
) -> None:
    """The run's expiry policy `fail` holds on the pi backend as at an ``await_answers`` node:
    a question that expires while the agent's ``await_answers`` waits fails the node. Before,
    the engine settled it as a decline, the agent went on, and the run finished."""
    (tmp_path / "late.py").write_text(LATE, encoding="utf-8")
    (tmp_path / "flow.iter").write_text(LATE_FLOW, encoding="utf-8")
    # The engine's questions live 1 s; the agent's own bound on its await call is longer
    # (the same TTL there would race the engine's settling by the few ms between the calls).
    agent = ["env", "PI_INTERRUPT_TTL_SECONDS=30", sys.executable, "-m", "hosts.cli", "rpc",
             "./late.py", "--agent", "asker", "--async-questions"]  # fmt: skip
    env = {
        **os.environ,
        "PI_INTERRUPT_TTL_SECONDS": "1",
        "PI_RECIPES_PI_COMMAND": shlex.join(agent),
    }
    runner = Runner(store, env=env, cwd=tmp_path, host="test")
    with anyio.fail_after(30):  # failed at the question's expiry, not at the node's timeout
        failed = await start_graph(runner, tmp_path / "flow.iter", run_id="run-x",
                                   expiry_policy="fail")  # fmt: skip
    assert failed.status is RunStatus.FAILED, failed.error
    assert failed.error is not None
    assert "1 question(s) expired unanswered (the run's expiry policy is `fail`)" in failed.error
    assert "[run-x_draft_async_1] (node draft) Colour?" in failed.error
    cp = GraphCheckpoint.model_validate((await store.get_run("run-x")).checkpoint)
    [draft] = cp.executions
    assert (draft.status, draft.code) == ("failed", "EXPIRED")
    record = await store.get_interaction("run-x", "run-x_draft_async_1")
    assert record.answer is not None and record.answer.status == "expired"

    decline = await start_graph(runner, tmp_path / "flow.iter", run_id="run-d")  # the default
    assert decline.status is RunStatus.FINISHED, decline.error
    assert "(no answer: the question expired)" in decline.text


BLOCKING = '''\
"""An agent whose tool opens a blocking dialog (pi-recipes rpc)."""

from pydantic import BaseModel

from interactions import ask_user_question
from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ScriptedModel


class Pick(BaseModel):
    topic: str


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def pick(tool_call_id, params: Pick, ctx, on_update):
        """Ask which colour."""
        return await ask_user_question(f"Colour of {params.topic}?", options=["red", "teal"],
                                       tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("asker", "You draft.", model=ScriptedModel([
        AssistantMessage(tool_calls=[ToolCall(id="p", name="pick",
                                              arguments={"topic": "the logo"})]),
        AssistantMessage(text='{"draft": "no one should read this"}'),
    ], label="asker"))
'''


async def test_a_blocking_dialog_on_pi_with_nobody_there_fails_the_node(
    tmp_path: Path, store: Store
) -> None:
    """No person at a terminal and a subprocess's conversation that cannot pause: the node
    fails rather than let the question go unanswered (or be declined)."""
    (tmp_path / "late.py").write_text(BLOCKING, encoding="utf-8")
    (tmp_path / "flow.iter").write_text(
        LATE_FLOW.replace("  interaction: async\n", ""), encoding="utf-8"
    )
    runner = Runner(store, cwd=tmp_path, host="test")
    with anyio.fail_after(30):
        failed = await start_graph(runner, tmp_path / "flow.iter", run_id="run-b")
    assert failed.status is RunStatus.FAILED, failed.error
    assert failed.error is not None
    assert "asked a blocking question ('Colour of the logo?') on the pi backend" in failed.error
    cp = GraphCheckpoint.model_validate((await store.get_run("run-b")).checkpoint)
    assert [(r.status, r.code) for r in cp.executions] == [("failed", "BLOCKING_ASK_UNSUPPORTED")]
