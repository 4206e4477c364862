"""A tool that declares its approval (``requires_approval``): the runtime asks before the body
runs, in durable runs on every store and across processes; approved, the body runs exactly
once; declined or sent back for changes, never, and the model reads why."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from interactions import InvalidPayloadError
from interactions.dialogs import EDIT
from interactions.store import RunStatus, Store
from interactions.testing.dialogs import ScriptedDialogUI
from recipes import RecipeAPI, RecipeDefinitionError, create_agent_session, load_recipe
from recipes.messages import AssistantMessage
from recipes.runs import Runner
from tests.hosts.cli_helpers import pi, pi_json
from tests.recipes.runs.conftest import RELEASE

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
    assert gate.metadata == {
        "kind": "tool_call",
        "tool": "deploy",
        "arguments": {"env": "prod"},
        "args_schema": {
            "properties": {"env": {"type": "string"}},
            "required": ["env"],
            "type": "object",
        },
    }
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
    assert ', or edit its arguments: {"approved": true, "args": {...}}' in started.stdout
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


async def test_the_approver_may_edit_the_arguments_checked_against_the_tool(
    store: Store, tmp_path: Path
) -> None:
    runner = Runner(store, cwd=tmp_path)
    started = await runner.start(RECIPE, "deploy to prod")
    (gate,) = started.interrupts
    schema = gate.response_schema
    assert schema is not None
    assert schema["properties"]["args"]["properties"]["env"] == {"type": "string"}, (
        "a client builds the edit form from the tool's parameters"
    )
    for bad, said in [
        ({"env": 3}, "args: env: 3 is not of type 'string'"),
        ({"region": "eu"}, "args: 'env' is a required property"),
    ]:
        with pytest.raises(InvalidPayloadError, match=said):
            await runner.answer(started.run_id, gate.id, {"approved": True, "args": bad})
    with pytest.raises(InvalidPayloadError, match="edited arguments go with an approval"):
        await runner.answer(started.run_id, gate.id, {"approved": False, "args": {"env": "x"}})
    assert (await store.get_interaction(started.run_id, gate.id)).answer is None, "still open"

    done = await runner.answer(
        started.run_id, gate.id, {"approved": True, "args": {"env": "canary"}}, resume=True
    )
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert _deploys(tmp_path) == ["canary"], "the body ran once, on the edited arguments"
    assert done.run.text == (
        'Tool said: The approver edited the arguments before approving: {"env":"canary"}.\n'
        "Deployed to canary."
    ), "the model reads that the call ran with edited arguments, and which"
    stored = await store.get_interaction(started.run_id, gate.id)
    assert stored.answer is not None
    assert stored.answer.payload == {"approved": True, "args": {"env": "canary"}}


async def test_a_plain_approval_takes_no_arguments(store: Store, tmp_path: Path) -> None:
    started = await Runner(store, cwd=tmp_path).start(RELEASE, "Release v1")
    runner = Runner(store, cwd=tmp_path)
    await runner.answer(started.run_id, "int-call_channel", {"answer": "Beta"}, resume=True)
    with pytest.raises(InvalidPayloadError, match="this approval's arguments cannot be edited"):
        await runner.answer(
            started.run_id, "int-call_publish", {"approved": True, "args": {"version": "v9"}}
        )


async def test_in_a_dialog_the_arguments_are_edited_as_json_checked_before_they_are_taken(
    tmp_path: Path,
) -> None:
    """The dialog offers Edit arguments: JSON in an editor, asked again, saying why, until it
    fits the tool's parameters; the body then runs once on them."""
    ui = ScriptedDialogUI([EDIT, '{"env": 3}', '{"env": "canary"', '{"env": "canary"}'])
    session = create_agent_session(load_recipe(RECIPE), ui=ui, env={}, cwd=tmp_path)
    await session.prompt("deploy to prod")
    assert _deploys(tmp_path) == ["canary"]
    shown = [(c.method, c.title) for c in ui.calls]
    assert shown[0][0] == "select" and shown[0][1].startswith("Run deploy?")
    assert [c.method for c in ui.calls[1:]] == ["editor"] * 3
    assert ui.calls[1].placeholder == '{\n  "env": "prod"\n}', "it starts from the call's own"
    assert ui.calls[2].title.startswith("The arguments to approve, as JSON (env: 3 is not of")
    assert ui.calls[3].title.startswith("The arguments to approve, as JSON (not JSON:")
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.text.startswith("Tool said: The approver edited the arguments")
