"""Decisions that stick: an approver answers "approve always" or "deny always" for a tool, in the
run or its thread, maybe only for the same arguments. The decision is stored with the run's store
(every process on it sees it), applied before the tool's next call would ask, audited as events
of the run, and revocable; a policy's ``deny`` still holds over it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from interactions import AskUserInterrupt
from interactions.store import DecisionStore, RunStatus, Store
from interactions.testing.dialogs import ScriptedDialogUI
from recipes import create_agent_session, load_recipe
from recipes.decisions import TOOL_CALL_DECIDED
from recipes.messages import AssistantMessage
from recipes.runs import Runner
from tests.hosts.cli_helpers import pi, pi_json

RECIPE = str(Path(__file__).with_name("approval_many_recipe.py"))

pytestmark = pytest.mark.anyio


def _deploys(folder: Path) -> list[str]:
    log = folder / "deploys.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _env(**more: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PI_")} | more


async def _paused_on(runner: Runner, prompt: str, **kw: object) -> tuple[str, AskUserInterrupt]:
    started = await runner.start(RECIPE, prompt, **kw)  # type: ignore[arg-type]
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN, started
    (gate,) = started.interrupts
    return started.run_id, gate


async def test_approve_always_in_the_run_asks_once_then_runs_each_call(
    store: Store, tmp_path: Path
) -> None:
    runner = Runner(store, cwd=tmp_path, env=_env())
    run_id, gate = await _paused_on(runner, "deploy prod prod canary")
    other = Runner(store, cwd=tmp_path, env=_env())  # another process on the same store
    done = await other.answer(
        run_id, gate.id, {"approved": True, "remember": {"scope": "run"}},
        answered_by="ada", resume=True,
    )  # fmt: skip
    assert done.run is not None and done.run.status is RunStatus.FINISHED, done
    assert _deploys(tmp_path) == ["prod", "prod", "canary"], "each call ran once"
    assert [i.id for i in await store.list_interactions(run_id)] == [gate.id], "asked once"
    assert done.run.text == (
        "The user approved its later calls in this run too.\nDeployed to prod. | "
        "Deployed to prod. | Deployed to canary."
    )

    assert isinstance(store, DecisionStore)
    (kept,) = await store.list_decisions(run_id=run_id)
    assert (kept.tool, kept.action, kept.scope, kept.args, kept.decided_by) == (
        "deploy", "allow", "run", None, "ada",
    )  # fmt: skip
    events = await store.list_events(run_id)
    decided = [e.data for e in events if e.type == TOOL_CALL_DECIDED]
    assert [(d["decision"], d["by"], d["args"]) for d in decided] == [
        ("allowed", "answer", {"env": "prod"}),
        ("allowed", "remembered", {"env": "prod"}),
    ], "each ruled call is audited: the answer, then the decision it left"
    assert decided[0]["remembered"]["id"] == kept.id == decided[1]["remembered"]["id"]
    assert decided[1]["remembered"]["decided_by"] == "ada"
    remembered = [e.data for e in events if e.type == "decision_remembered"]
    assert [(r["id"], r["decided_by"]) for r in remembered] == [(kept.id, "ada")]

    again = await runner.start(RECIPE, "deploy prod", thread_id=done.run.thread_id)
    assert again.status is RunStatus.PAUSED_WAITING_HUMAN, "a run's decision holds in it only"


async def test_approve_always_in_the_thread_holds_for_its_next_runs_until_revoked(
    store: Store, tmp_path: Path
) -> None:
    runner = Runner(store, cwd=tmp_path, env=_env())
    run_id, gate = await _paused_on(runner, "deploy prod", thread_id="thread-ops")
    await runner.answer(
        run_id, gate.id, {"approved": True, "remember": {"scope": "thread"}}, resume=True
    )
    next_run = await runner.start(RECIPE, "deploy prod prod", thread_id="thread-ops")
    assert next_run.status is RunStatus.FINISHED, "the thread's decision answered both calls"
    assert _deploys(tmp_path) == ["prod", "prod", "prod"]
    elsewhere = await runner.start(RECIPE, "deploy prod", thread_id="thread-other")
    assert elsewhere.status is RunStatus.PAUSED_WAITING_HUMAN, "another thread asks"

    assert isinstance(store, DecisionStore)
    (kept,) = await store.list_decisions(thread_id="thread-ops")
    revoked, now = await store.revoke_decision(kept.id, revoked_by="grace")
    assert now and revoked.revoked_by == "grace"
    after = await runner.start(RECIPE, "deploy prod", thread_id="thread-ops")
    assert after.status is RunStatus.PAUSED_WAITING_HUMAN, "revoked: the next call asks again"
    assert _deploys(tmp_path) == ["prod", "prod", "prod"]


async def test_only_these_arguments_leaves_other_calls_to_ask(
    store: Store, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[[rule]]\ntool = "deploy"\naction = "ask"\n', encoding="utf-8")
    runner = Runner(store, cwd=tmp_path, env=_env(PI_RECIPES_POLICY=str(policy)))
    run_id, gate = await _paused_on(runner, "deploy prod prod canary")
    remember = {"scope": "run", "args": True}
    paused = await runner.answer(
        run_id, gate.id, {"approved": True, "remember": remember}, resume=True
    )
    assert paused.run is not None and paused.run.status is RunStatus.PAUSED_WAITING_HUMAN
    assert _deploys(tmp_path) == ["prod", "prod"], "the same arguments ran without asking"
    (canary,) = paused.run.interrupts
    assert canary.metadata is not None and canary.metadata["arguments"] == {"env": "canary"}


async def test_an_edited_approval_remembered_for_its_arguments_holds_for_the_edited_ones(
    store: Store, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[[rule]]\ntool = "deploy"\naction = "ask"\n', encoding="utf-8")
    runner = Runner(store, cwd=tmp_path, env=_env(PI_RECIPES_POLICY=str(policy)))
    run_id, gate = await _paused_on(runner, "deploy prod canary")
    remember = {"scope": "run", "args": True}
    answer = {"approved": True, "args": {"env": "canary"}, "remember": remember}
    done = await runner.answer(run_id, gate.id, answer, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert _deploys(tmp_path) == ["canary", "canary"]
    decided = [e.data for e in await store.list_events(run_id) if e.type == TOOL_CALL_DECIDED]
    assert decided[0]["args"] == {"env": "prod"} and decided[0]["edited_args"] == {"env": "canary"}


async def test_deny_always_refuses_the_later_calls_without_asking(
    store: Store, tmp_path: Path
) -> None:
    runner = Runner(store, cwd=tmp_path, env=_env())
    run_id, gate = await _paused_on(runner, "deploy prod prod")
    done = await runner.answer(
        run_id, gate.id,
        {"approved": False, "feedback": "not this week", "remember": {"scope": "run"}},
        resume=True,
    )  # fmt: skip
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert _deploys(tmp_path) == [], "no call ran"
    assert done.run.text == (
        "Not run: the user declined this call of deploy and every later call of it in this "
        "run. Their feedback: not this week | "
        "Not run: the user declined every call of deploy in this run."
    )
    assert len(await store.list_interactions(run_id)) == 1


async def test_a_policy_deny_holds_over_a_remembered_approval_and_auto_approve(
    store: Store, tmp_path: Path
) -> None:
    runner = Runner(store, cwd=tmp_path, env=_env())
    run_id, gate = await _paused_on(runner, "deploy prod", thread_id="thread-1")
    await runner.answer(
        run_id, gate.id, {"approved": True, "remember": {"scope": "thread"}}, resume=True
    )
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\nwhen = "args.env == \'prod\'"\naction = "deny"\n'
        'reason = "frozen"\n',
        encoding="utf-8",
    )
    env = _env(PI_RECIPES_POLICY=str(policy), PI_ASK_USER_AUTO_APPROVE="1")
    strict = Runner(store, cwd=tmp_path, env=env)
    denied = await strict.start(RECIPE, "deploy prod", thread_id="thread-1")
    assert denied.status is RunStatus.FINISHED
    assert denied.text == "Not run: a policy rule denies this call of deploy: frozen"
    assert _deploys(tmp_path) == ["prod"], "only the first, approved, call ran"
    decided = [
        e.data for e in await store.list_events(denied.run_id) if e.type == TOOL_CALL_DECIDED
    ]
    assert [(d["decision"], d["by"], d["rule"]["line"]) for d in decided] == [
        ("denied", "policy", 1)
    ]


async def test_in_a_session_approve_always_holds_for_the_session(tmp_path: Path) -> None:
    ui = ScriptedDialogUI(["Approve always", "In this run"])
    session = create_agent_session(load_recipe(RECIPE), ui=ui, env={}, cwd=tmp_path)
    await session.prompt("deploy prod prod prod")
    assert _deploys(tmp_path) == ["prod", "prod", "prod"]
    assert [c.method for c in ui.calls] == ["select", "select"], "one approval, asked once"
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.text.endswith("Deployed to prod. | Deployed to prod. | Deployed to prod.")


def test_the_cli_lists_and_revokes_a_remembered_decision(tmp_path: Path) -> None:
    started = pi("run", RECIPE, "deploy prod prod", "--no-interactive", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    (run,) = pi_json("runs", "list", cwd=tmp_path)
    answer = '{"approved": true, "remember": {"scope": "thread", "args": true}}'
    answered = pi("runs", "answer", run["id"], "int-call_0", answer, "--by", "ada", "--resume",
                  cwd=tmp_path)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert _deploys(tmp_path) == ["prod", "prod"]

    listed = pi("rules", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (kept,) = pi_json("rules", "list", cwd=tmp_path)
    assert f'{kept["id"]}  allow deploy in thread {run["thread_id"]} (only {{"env":"prod"}})\n' in (
        listed.stdout
    )
    assert "    decided by ada at " in listed.stdout

    shown = pi("runs", "show", run["id"], cwd=tmp_path)
    assert "decisions:\n" in shown.stdout
    assert 'deploy {"env":"prod"}: allowed by the answer to int-call_0 (approved), ' in shown.stdout
    only = '(only {"env":"prod"})'
    assert f"remembered {kept['id']}: allow deploy in this thread {only} by ada" in shown.stdout
    by = f"allowed by remembered decision {kept['id']} of ada"
    assert f'deploy {{"env":"prod"}}: {by}' in shown.stdout

    revoked = pi("rules", "revoke", kept["id"], "--by", "grace", cwd=tmp_path)
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout.startswith(f"Revoked {kept['id']}: allow deploy in thread")
    again = pi("rules", "revoke", kept["id"], cwd=tmp_path)
    assert again.returncode == 0 and "was already revoked by grace" in again.stdout
    assert pi_json("rules", "list", cwd=tmp_path) == []
    (shown_all,) = pi_json("rules", "list", "--all", cwd=tmp_path)
    assert shown_all["revoked_by"] == "grace"
    unknown = pi("rules", "revoke", "dec-000000000000", cwd=tmp_path)
    assert unknown.returncode == 4, unknown.stderr
    assert "dec-000000000000" in unknown.stderr


async def test_a_run_continues_under_the_policy_it_started_with(
    store: Store, tmp_path: Path
) -> None:
    """Continued by a process that names no policy, the run keeps its own; a process that
    names one applies that one instead."""
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\nwhen = "args.env == \'staging\'"\naction = "deny"\n'
        'reason = "staging is frozen"\n',
        encoding="utf-8",
    )
    started = Runner(store, cwd=tmp_path, env=_env(PI_RECIPES_POLICY=str(policy)))
    run_id, gate = await _paused_on(started, "deploy prod staging")
    policy.unlink()  # the file is gone: the run kept what it said
    bare = Runner(store, cwd=tmp_path, env=_env())
    done = await bare.answer(run_id, gate.id, {"approved": True}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert _deploys(tmp_path) == ["prod"], "the kept policy still denied staging"
    assert done.run.text.endswith("Not run: a policy rule denies this call of deploy: "
                                  "staging is frozen")  # fmt: skip

    strict = tmp_path / "strict.toml"
    strict.write_text(
        '[[rule]]\ntool = "deploy"\nwhen = "args.env == \'staging\'"\naction = "deny"\n',
        encoding="utf-8",
    )
    lax = tmp_path / "lax.toml"
    lax.write_text('[[rule]]\ntool = "deploy"\naction = "allow"\n', encoding="utf-8")
    first = Runner(store, cwd=tmp_path, env=_env(PI_RECIPES_POLICY=str(strict)))
    run_id, gate = await _paused_on(first, "deploy prod staging")
    own = Runner(store, cwd=tmp_path, env=_env(PI_RECIPES_POLICY=str(lax)))
    done = await own.answer(run_id, gate.id, {"approved": True}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert _deploys(tmp_path) == ["prod", "prod", "staging"], "the process's own policy ruled"
