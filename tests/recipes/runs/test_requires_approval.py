"""A tool that declares its approval (``requires_approval``): the runtime asks before the body
runs, in durable runs on every store and across processes; approved, the body runs exactly
once; declined or sent back for changes, never, and the model reads why."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from interactions.store import RunStatus, Store
from recipes import RecipeAPI, RecipeDefinitionError
from recipes.runs import Runner
from tests.hosts.cli_helpers import pi, pi_json

RECIPE = str(Path(__file__).with_name("approval_recipe.py"))

pytestmark = pytest.mark.anyio


def _deploys(folder: Path) -> list[str]:
    log = folder / "deploys.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


async def test_the_tool_asks_before_its_body_runs_then_runs_it_once(
    store: Store, tmp_path: Path
) -> None:
    started = await Runner(store, cwd=tmp_path).start(RECIPE, "deploy to prod")
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN
    (gate,) = started.interrupts
    assert gate.is_approval and gate.message == "Run deploy?"
    assert gate.display is not None
    assert gate.display.body == "Deploy the current build to an environment."
    assert [(s.title, s.body) for s in gate.display.sections] == [
        ("Arguments", '{\n  "env": "prod"\n}')
    ]
    assert gate.metadata == {"kind": "tool_call", "tool": "deploy", "arguments": {"env": "prod"}}
    assert _deploys(tmp_path) == [], "nothing runs before the approval"

    other = Runner(store, cwd=tmp_path)  # another process's runner on the same store
    done = await other.answer(started.run_id, gate.id, {"approved": True}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert done.run.text == "Tool said: Deployed to prod."
    assert _deploys(tmp_path) == ["prod"]


@pytest.mark.parametrize(
    ("payload", "status", "said"),
    [
        (None, "cancelled", "Not run: this call of deploy was not approved"),
        ({"approved": False, "feedback": "after QA"}, "resolved",
         "Not run: the user asked for changes to this call of deploy instead of approving it. "
         "Their feedback: after QA"),
    ],
    ids=["declined", "revision requested"],
)  # fmt: skip
async def test_a_refused_call_never_runs_and_the_model_reads_why(
    store: Store, tmp_path: Path, payload: dict[str, object] | None, status: str, said: str
) -> None:
    runner = Runner(store, cwd=tmp_path)
    started = await runner.start(RECIPE, "deploy to prod")
    done = await runner.answer(
        started.run_id, started.interrupts[0].id, payload, status=status, resume=True
    )
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert done.run.text.startswith(f"Tool said: {said}")
    assert _deploys(tmp_path) == []


async def test_the_rule_decides_per_call_and_auto_approve_answers_it(
    store: Store, tmp_path: Path
) -> None:
    staging = await Runner(store, cwd=tmp_path).start(RECIPE, "deploy to staging")
    assert staging.status is RunStatus.FINISHED, "the rule asks for prod only"
    assert _deploys(tmp_path) == ["staging"]
    auto = Runner(store, cwd=tmp_path, env={"PI_ASK_USER_AUTO_APPROVE": "1"})
    prod = await auto.start(RECIPE, "deploy to prod")
    assert prod.status is RunStatus.FINISHED
    assert _deploys(tmp_path) == ["staging", "prod"]


def test_approved_in_another_process_the_body_runs_once(tmp_path: Path) -> None:
    started = pi("run", RECIPE, "deploy to prod", "--no-interactive", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    assert "  int-call_deploy: Run deploy?\n" in started.stdout
    assert '      Arguments:\n        {\n          "env": "prod"\n        }\n' in started.stdout
    (run,) = pi_json("runs", "list", cwd=tmp_path)
    answered = pi("runs", "answer", run["id"], "int-call_deploy", '{"approved": true}',
                  "--resume", cwd=tmp_path)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert "Tool said: Deployed to prod." in answered.stdout
    again = pi("runs", "answer", run["id"], "int-call_deploy", '{"approved": true}',
               "--resume", cwd=tmp_path)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert _deploys(tmp_path) == ["prod"], "an identical replay of the answer runs nothing"


def test_requires_approval_must_be_a_flag_or_a_function() -> None:
    class Nothing(BaseModel):
        pass

    async def body(tool_call_id: str, params: Nothing, ctx: object, on_update: object) -> str:
        return "done"

    with pytest.raises(RecipeDefinitionError, match="requires_approval must be True, False"):
        RecipeAPI().register_tool(
            "t",
            description="d",
            execute=body,
            requires_approval="yes",  # type: ignore[arg-type]
        )
