"""Who may answer: an ask names its approvers (people, ``group:NAME``); an answer is checked
against the identity the host established, on every store and through both the answer and the
resume paths; anyone else is refused (``NotAllowedError``, 403 / exit 8) and nothing is
stored. A policy rule may name approvers too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ag_ui.core import ResumeEntry

from interactions import NotAllowedError, UsageError, ask_user_approval
from interactions.errors import error_code
from interactions.people import APPROVERS, Identity, may_answer
from interactions.store import RunStatus, Store
from interactions.testing.dialogs import StaticToolContext
from recipes.policy import PolicyError, load_policy
from recipes.runs import Runner

RECIPE = str(Path(__file__).with_name("approvers_recipe.py"))
DEPLOY = str(Path(__file__).with_name("approval_many_recipe.py"))

pytestmark = pytest.mark.anyio


async def _paused(store: Store, tmp_path: Path) -> tuple[Runner, str, str]:
    runner = Runner(store, cwd=tmp_path, env={})
    started = await runner.start(RECIPE, "release it")
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN
    (gate,) = started.interrupts
    assert gate.metadata is not None and gate.metadata[APPROVERS] == ["ada", "group:release"]
    assert gate.to_agui().metadata["approvers"] == ["ada", "group:release"], (
        "an AG-UI client reads them in the interrupt's metadata"
    )
    return runner, started.run_id, gate.id


async def test_only_a_named_approver_or_a_member_of_their_group_may_answer(
    store: Store, tmp_path: Path
) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    for stranger in (Identity("bob", frozenset({"dev"})), "bob", None):
        with pytest.raises(NotAllowedError, match="only ada, group:release may answer") as no:
            await runner.answer(run_id, gate, {"approved": True}, answered_by=stranger)
        assert no.value.approvers == ("ada", "group:release")
        assert error_code(no.value).http_status == 403 and error_code(no.value).exit_code == 8
    with pytest.raises(NotAllowedError):
        await runner.answer(run_id, gate, status="cancelled", answered_by="bob")
    assert (await store.get_interaction(run_id, gate)).answer is None, "nothing was stored"

    grace = Identity("grace", frozenset({"release"}), via="users-file")
    done = await runner.answer(run_id, gate, {"approved": True}, answered_by=grace, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    stored = (await store.get_interaction(run_id, gate)).answer
    assert stored is not None and stored.answered_by == "grace"


async def test_a_resume_by_someone_not_allowed_is_refused_whole(
    store: Store, tmp_path: Path
) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    entry = ResumeEntry(interrupt_id=gate, status="resolved", payload={"approved": True})
    with pytest.raises(NotAllowedError):
        await runner.resume(run_id, [entry], answered_by=Identity("bob"))
    assert (await store.get_run(run_id)).status is RunStatus.PAUSED_WAITING_HUMAN
    done = await runner.resume(run_id, [entry], answered_by="ada")
    assert done.status is RunStatus.FINISHED


async def test_an_ask_s_approvers_are_checked_when_it_is_made() -> None:
    for bad, said in [
        ("ada", "a list of names"),
        (["ada smith"], "an approver is a name or group:NAME"),
        (["group:"], "an approver is a name or group:NAME"),
    ]:
        with pytest.raises(UsageError, match=said):
            await ask_user_approval(title="Ship?", approvers=bad, tool_call_id="t",
                                    ctx=StaticToolContext(), env={})  # type: ignore[arg-type]  # fmt: skip
    with pytest.raises(UsageError, match="required_approvals must be a whole number"):
        await ask_user_approval(title="Ship?", required_approvals=0, tool_call_id="t",
                                ctx=StaticToolContext(), env={})  # fmt: skip


def test_may_answer_reads_names_and_groups() -> None:
    assert may_answer((), None), "an ask naming no one is open to whoever reaches it"
    assert may_answer(("ada",), "ada") and not may_answer(("ada",), "adam")
    assert may_answer(("group:ops",), "bob", {"ops"}) and not may_answer(("group:ops",), "ops")


async def test_a_policy_rule_names_who_may_approve_the_calls_it_asks_about(
    store: Store, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\naction = "ask"\napprovers = ["group:release"]\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    runner = Runner(store, cwd=tmp_path, env=env | {"PI_RECIPES_POLICY": str(policy)})
    started = await runner.start(DEPLOY, "deploy canary")
    (gate,) = started.interrupts
    assert gate.metadata is not None and gate.metadata[APPROVERS] == ["group:release"]
    with pytest.raises(NotAllowedError):
        await runner.answer(started.run_id, gate.id, {"approved": True}, answered_by="bob")
    kim = Identity("kim", frozenset({"release"}))
    done = await runner.answer(
        started.run_id, gate.id, {"approved": True}, answered_by=kim, resume=True
    )
    assert done.run is not None and done.run.text == "Deployed to canary."


def test_a_policy_s_approvers_are_checked_when_it_is_loaded(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\naction = "allow"\napprovers = ["ada smith"]\n',
        encoding="utf-8",
    )
    with pytest.raises(PolicyError) as bad:
        load_policy(policy)
    assert any("an approver is a name or group:NAME" in p for p in bad.value.problems)
    assert any("go with action = \"ask\"" in p for p in bad.value.problems)
