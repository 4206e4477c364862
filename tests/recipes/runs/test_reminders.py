"""Reminders and escalation of an ask nobody answered, through the runner and the sweep's
public call (``interactions.reminders.remind_due``) on every store, with an injected "now":
reminded at the right times and not once answered; each notice written once by two servers on
one store; an escalation lets the escalated group answer, and not before; a policy rule's
``remind_after`` applies; bad arguments are refused with a typed error."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from interactions import NotAllowedError, UsageError, ask_user_approval, ask_user_question
from interactions.people import Identity
from interactions.reminders import (
    ESCALATE_AFTER,
    ESCALATE_TO,
    REMIND_AFTER,
    current_approvers,
    remind_due,
)
from interactions.store import EventRecord, RunStatus, SQLiteStore, Store
from interactions.testing.dialogs import StaticToolContext
from interactions.testing.store_conformance import new_interaction, new_run
from recipes.policy import PolicyError, load_policy
from recipes.runs import Runner
from tests.recipes.runs.conftest import postgres_stores

RECIPE = str(Path(__file__).with_name("reminders_recipe.py"))
DEPLOY = str(Path(__file__).with_name("approval_many_recipe.py"))
HOUR = timedelta(hours=1)

pytestmark = pytest.mark.anyio


async def _paused(store: Store, tmp_path: Path) -> tuple[Runner, str, str]:
    runner = Runner(store, cwd=tmp_path, env={})
    started = await runner.start(RECIPE, "release it")
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN
    (gate,) = started.interrupts
    assert gate.metadata is not None
    assert (gate.metadata[REMIND_AFTER], gate.metadata[ESCALATE_AFTER]) == (3600.0, 14400.0)
    assert gate.metadata[ESCALATE_TO] == ["group:oncall"]
    return runner, started.run_id, gate.id


def _said(events: list[EventRecord]) -> list[tuple[str, object]]:
    return [
        (e.type, e.data.get("count", e.data.get("added")))
        for e in events
        if e.type in ("interaction_reminded", "interaction_escalated")
    ]


async def test_an_ask_is_reminded_on_time_escalated_and_never_after_its_answer(
    store: Store, tmp_path: Path
) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    asked = (await store.get_interaction(run_id, gate)).requested_at
    assert await remind_due(store, now=asked + HOUR - timedelta(seconds=1)) == []
    first = await remind_due(store, now=asked + HOUR)
    assert [(e.type, e.data) for e in first] == [
        ("interaction_reminded", {"interaction_id": gate, "count": 1, "approvers": ["ada"]})
    ]
    assert await remind_due(store, now=asked + 1.5 * HOUR) == []
    assert len(await remind_due(store, now=asked + 2 * HOUR)) == 1
    at_four = await remind_due(store, now=asked + 4 * HOUR)
    assert [(e.type, e.data) for e in at_four] == [
        ("interaction_escalated", {"interaction_id": gate, "added": ["group:oncall"],
                                   "approvers": ["ada", "group:oncall"]}),
        ("interaction_reminded", {"interaction_id": gate, "count": 4,
                                  "approvers": ["ada", "group:oncall"]}),
    ]  # fmt: skip
    done = await runner.answer(run_id, gate, {"approved": True}, answered_by="ada", resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert await remind_due(store, now=asked + 9 * HOUR) == [], "answered: no more reminders"
    assert _said(await store.list_events(run_id)) == [
        ("interaction_reminded", 1), ("interaction_reminded", 2),
        ("interaction_escalated", ["group:oncall"]), ("interaction_reminded", 4),
    ]  # fmt: skip


async def test_the_escalated_group_may_answer_once_escalated_and_not_before(
    store: Store, tmp_path: Path
) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    asked = (await store.get_interaction(run_id, gate)).requested_at
    kim = Identity("kim", frozenset({"oncall"}))
    await remind_due(store, now=asked + 3 * HOUR)  # reminders only: not escalated yet
    with pytest.raises(NotAllowedError, match="only ada may answer"):
        await runner.answer(run_id, gate, {"approved": True}, answered_by=kim)
    assert (await store.get_interaction(run_id, gate)).answer is None
    await remind_due(store, now=asked + 4 * HOUR)
    record = await store.get_interaction(run_id, gate)
    assert await current_approvers(store, record) == ("ada", "group:oncall")
    with pytest.raises(NotAllowedError):  # escalated to on-call, not to everyone
        await runner.answer(run_id, gate, {"approved": True}, answered_by="bob")
    done = await runner.answer(run_id, gate, {"approved": True}, answered_by=kim, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    stored = (await store.get_interaction(run_id, gate)).answer
    assert stored is not None and stored.answered_by == "kim"
    assert record.interrupt.metadata is not None
    assert record.interrupt.metadata["approvers"] == ["ada"], "the interrupt is not rewritten"


async def test_the_sweep_skips_an_interaction_it_cannot_read_and_reminds_the_others(
    store: Store, tmp_path: Path
) -> None:
    """A pending interaction whose descriptor another tool wrote (no ``reason``, so no pause
    record) asks for reminders in its metadata: the sweep leaves it alone instead of failing
    for every run, and still reminds the ask it can read."""
    _, run_id, gate = await _paused(store, tmp_path)
    foreign = await store.create_run(new_run(id="run-foreign"))
    odd = {"message": "no reason", "metadata": {REMIND_AFTER: 60.0}}
    await store.update_run(
        foreign.id,
        expected_version=foreign.version,
        status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[new_interaction("int-odd", descriptor=odd)],
    )
    assert (await store.get_interaction(foreign.id, "int-odd")).unreadable == (
        "reason: Field required"
    )
    asked = (await store.get_interaction(run_id, gate)).requested_at
    reminded = await remind_due(store, now=asked + HOUR)
    assert [(e.run_id, e.data["interaction_id"]) for e in reminded] == [(run_id, gate)]
    assert _said(await store.list_events(foreign.id)) == []


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_two_servers_sweeping_one_store_write_each_notice_once(
    backend: str, tmp_path: Path
) -> None:
    async def sweep_both(stores: tuple[Store, ...], run_id: str, gate: str) -> None:
        asked = (await stores[0].get_interaction(run_id, gate)).requested_at
        for hours in (1, 2, 4, 5):
            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    for one in stores:
                        tg.start_soon(lambda s=one, h=hours: remind_due(s, now=asked + h * HOUR))
        assert _said(await stores[1].list_events(run_id)) == [
            ("interaction_reminded", 1), ("interaction_reminded", 2),
            ("interaction_escalated", ["group:oncall"]), ("interaction_reminded", 4),
            ("interaction_reminded", 5),
        ]  # fmt: skip

    if backend == "sqlite":
        async with SQLiteStore(tmp_path / "state.db") as one, SQLiteStore(
            tmp_path / "state.db"
        ) as two:
            _, run_id, gate = await _paused(one, tmp_path)
            await sweep_both((one, two), run_id, gate)
    else:
        async with postgres_stores("the two-server reminder test", 2) as stores:
            _, run_id, gate = await _paused(stores[0], tmp_path)
            await sweep_both(stores, run_id, gate)


async def test_a_policy_rule_s_reminders_and_escalation_apply(
    store: Store, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\naction = "ask"\napprovers = ["group:release"]\n'
        'remind_after = 600\nescalate_after = 1800\nescalate_to = ["vp"]\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    runner = Runner(store, cwd=tmp_path, env=env | {"PI_RECIPES_POLICY": str(policy)})
    started = await runner.start(DEPLOY, "deploy canary")
    (gate,) = started.interrupts
    assert gate.metadata is not None and gate.metadata[REMIND_AFTER] == 600.0
    asked = (await store.get_interaction(started.run_id, gate.id)).requested_at
    reminded = await remind_due(store, now=asked + timedelta(minutes=10))
    assert [e.data["count"] for e in reminded] == [1]
    with pytest.raises(NotAllowedError):
        await runner.answer(started.run_id, gate.id, {"approved": True}, answered_by="vp")
    await remind_due(store, now=asked + timedelta(minutes=30))
    done = await runner.answer(
        started.run_id, gate.id, {"approved": True}, answered_by="vp", resume=True
    )
    assert done.run is not None and done.run.text == "Deployed to canary."


BAD_ASKS: list[tuple[dict[str, object], str]] = [
    ({"remind_after": 0}, "remind_after must be a positive duration"),
    ({"remind_after": -5}, "remind_after must be a positive duration"),
    ({"remind_after": timedelta(0)}, "remind_after must be a positive duration"),
    ({"remind_after": float("nan")}, "remind_after must be a positive duration"),
    ({"remind_after": "1h"}, "remind_after is a duration"),
    ({"remind_after": True}, "remind_after is a duration"),
    ({"escalate_to": ["ops"]}, "escalate_to needs escalate_after"),
    ({"escalate_after": 60}, "escalate_after needs escalate_to"),
    ({"escalate_after": 60, "escalate_to": []}, "escalate_to names no one"),
    ({"escalate_after": 60, "escalate_to": ["ops team"]}, "an approver is a name"),
    ({"escalate_after": timedelta(days=8), "escalate_to": ["ops"]}, "beyond the ask's expiry"),
    ({"remind_after": timedelta(days=8)}, "beyond the ask's expiry"),
]


@pytest.mark.parametrize(("bad", "said"), BAD_ASKS)
async def test_bad_reminders_are_refused_when_asked(bad: dict[str, object], said: str) -> None:
    ctx = StaticToolContext()
    with pytest.raises(UsageError, match=said):
        await ask_user_approval(title="Ship?", tool_call_id="t", ctx=ctx, env={}, **bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=said):
        await ask_user_question("Which?", tool_call_id="t", ctx=ctx, env={}, **bad)  # type: ignore[arg-type]


def test_a_policy_s_reminders_are_checked_when_it_is_loaded(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\naction = "allow"\nremind_after = 0\n\n'
        '[[rule]]\ntool = "ship"\naction = "allow"\nremind_after = 60\n',
        encoding="utf-8",
    )
    with pytest.raises(PolicyError) as bad:
        load_policy(policy)
    assert any("remind_after must be a positive duration" in p for p in bad.value.problems)
    assert any('go with action = "ask"' in p for p in bad.value.problems)
