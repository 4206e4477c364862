"""The README's examples run: its recipe loads, its commands exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from hosts.cli import build_parser
from interactions import DECLINED_TEXT
from interactions.store import MemoryStore
from interactions.testing.dialogs import ScriptedDialogUI
from recipes import create_agent_session, load_recipe
from recipes.messages import AssistantMessage, ToolCall, text_of
from recipes.models import ScriptedModel
from recipes.runs import Runner

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def _painter(tmp_path: Path) -> str:
    path = tmp_path / "painter.py"
    path.write_text(_blocks("python")[0], encoding="utf-8")
    return str(path)


def test_the_readme_recipe_loads(tmp_path: Path) -> None:
    recipe = load_recipe(_painter(tmp_path))
    assert recipe.agent("painter").model == "openai:gpt-4.1-mini"
    assert [t.name for t in recipe.tools_for(recipe.agent(None))] == ["repaint"]


def _model() -> ScriptedModel:
    return ScriptedModel(
        [
            AssistantMessage(
                tool_calls=[ToolCall(id="c1", name="repaint", arguments={"element": "door"})]
            ),
            lambda request: AssistantMessage(text=text_of(request.messages[-1].content)),  # type: ignore[union-attr]
        ]
    )


DONE = "Repainted the door #33d."


@pytest.mark.anyio
async def test_the_readme_recipe_on_a_terminal_and_under_auto_approve(tmp_path: Path) -> None:
    recipe = load_recipe(_painter(tmp_path))
    ui = ScriptedDialogUI(["Blue", "Approve"])
    session = create_agent_session(recipe, model=_model(), mode="tui", ui=ui, env={})
    await session.prompt("paint the door blue")
    assert session.messages[-1].text == DONE  # type: ignore[union-attr]
    assert ui.calls[0].descriptions == (None, "the house blue", None)
    auto = create_agent_session(recipe, model=_model(), env={"PI_ASK_USER_AUTO_APPROVE": "1"})
    await auto.prompt("paint the door")  # a question auto-declines: the tool says so
    assert auto.messages[-1].text == DECLINED_TEXT  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_the_readme_recipe_in_a_durable_run_asks_both_and_does_the_work(
    tmp_path: Path,
) -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={}, model=_model())
        paused = await runner.start(_painter(tmp_path), "paint the door")
        assert [i.message for i in paused.interrupts] == ["Which colour for the door?"]
        asked = await runner.answer(paused.run_id, "int-c1", {"answer": "Blue"}, resume=True)
        assert asked.run is not None
        [approval] = asked.run.interrupts  # the approval is asked too, after the answer
        assert approval.id == "int-c1.2" and approval.display is not None
        assert approval.display.title == "Repaint the door?"
        done = await runner.answer(paused.run_id, "int-c1.2", {"approved": True}, resume=True)
        assert done.run is not None and done.run.text == DONE


def test_the_two_setup_commands_come_first() -> None:
    (setup, *_) = _blocks("sh")
    commands = [line for line in setup.splitlines() if line and not line.startswith("#")]
    assert commands[0].endswith('pi-recipes run examples/release.py "Release v1.4.0"')
    assert commands[1].endswith(".venv/bin/pytest")
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci, ".ci/run calls the README's test command verbatim"


def test_every_command_in_the_table_parses() -> None:
    parser = build_parser()
    for argv in (
        ["run", "r.py", "p", "--no-interactive", "--auto-approve", "--model", "openai:x"],
        ["rpc", "r.py"],
        ["rpc", "r.py", "--append-system-prompt", "x", "--tools", "a,b", "--async-questions"],
        ["graph", "validate", "flow.iter"],
        ["graph", "run", "flow.iter", "--var", "a=1", "--var", "b=2", "--no-interactive"],
        ["graph", "run", "flow.iter", "--auto-resume", "3"],
        ["slack", "r.py", "--http", "127.0.0.1:3000"],
        ["runs", "list", "--json"],
        ["runs", "show", "RUN"],
        ["runs", "pending"],
        ["runs", "questions", "RUN", "--json"],
        ["runs", "answer", "RUN", "INT", "{}", "--resume", "--store", "x.db"],
        ["runs", "resume", "RUN", "--entries", "f.json"],
        ["runs", "cancel", "RUN"],
        ["runs", "retry", "RUN"],
        ["runs", "recover", "--older-than", "600"],
        ["runs", "expire"],
        ["worker", "r.py", "--temporal", "127.0.0.1:7233", "--namespace", "n", "--task-queue", "q"],
        ["runs", "list", "--engine", "temporal://127.0.0.1:7233/default"],
        ["run", "r.py", "p", "--engine", "temporal://127.0.0.1:7233/default"],
    ):
        parser.parse_args(argv)


def test_the_engine_commands_parse_as_printed() -> None:
    (block,) = [b for b in _blocks("sh") if "pi-recipes worker" in b]
    parser = build_parser()
    commands = [line.split("#")[0].strip().rstrip("&").strip() for line in block.splitlines()]
    ours = [shlex.split(c)[1:] for c in commands if c.startswith(".venv/bin/pi-recipes ")]
    assert [argv[0] for argv in ours] == ["worker", "run", "runs", "serve"]
    for argv in ours:
        if argv[0] != "serve":  # serve's own parser is the web host's
            parser.parse_args(argv)


def test_the_readme_workflow_validates_beside_the_example_recipe() -> None:
    from recipes.graph.compiler import compile_graph

    (workflow,) = [b for b in _blocks("text") if "workflow release:" in b]
    examples = Path(__file__).resolve().parent.parent / "examples"
    compiled = compile_graph(workflow, file="readme.iter", base=examples)
    assert [d for d in compiled.diagnostics if d.is_error] == []
    assert compiled.graph.workflow.entry == "draft"


def test_the_async_questions_example_validates_and_matches_the_readme() -> None:
    from recipes.graph.compiler import load_graph

    example = Path(__file__).resolve().parent.parent / "examples" / "async_questions.iter"
    compiled = load_graph(example)
    assert compiled.diagnostics == ()
    (shown,) = [b for b in _blocks("text") if "workflow async_questions:" in b]
    for line in shown.strip().splitlines():
        assert line in example.read_text(encoding="utf-8"), line
