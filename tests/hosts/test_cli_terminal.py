"""``pi-recipes run`` on a real pseudo-terminal: arrow keys, typing, Ctrl-C."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.hosts.cli_helpers import PI_RECIPES, RELEASE, cli_env
from tests.recipes.runs.conftest import CUT_SHORT

DOWN = "\x1b[B"
ENTER = "\r"


def spawn(tmp_path: Path, *args: str, recipe: str = RELEASE) -> pexpect.spawn:
    child = pexpect.spawn(
        PI_RECIPES,
        ["run", recipe, *args],
        cwd=str(tmp_path),
        env=cli_env(),
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 120),
    )
    return child


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return int(child.exitstatus)


def test_arrow_keys_pick_an_option_and_approve(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v1.4.0")
    child.expect("Where should v1.4.0 be published")
    child.send(DOWN + ENTER)  # Stable -> Beta
    child.expect("Asking for approval to publish to beta")
    child.expect("Publish v1.4.0 to beta")
    child.send(ENTER)  # Approve
    child.expect("Published v1.4.0. Approved.")
    child.expect("idle: 2 tool call")
    assert finish(child) == 0
    assert not (tmp_path / ".pi-recipes").exists(), "a terminal run needs no store"


def test_other_answer_typed_and_changes_requested_with_feedback(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v2.1.0")
    child.expect("Where should v2.1.0 be published")
    child.send(DOWN * 3 + ENTER)  # Other
    child.expect("Type your answer")
    child.send("canary" + ENTER)
    child.expect("Publish v2.1.0 to canary")
    child.send(DOWN + ENTER)  # Request changes
    child.expect("Feedback")
    child.send("wait for the load test" + ENTER)
    child.expect("Did not publish v2.1.0: Revision requested. Feedback: wait for the load test")
    assert finish(child) == 0


def test_an_answer_cut_at_the_output_limit_is_said_after_the_summary(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Write the report", recipe=CUT_SHORT)
    child.expect("Write the report")
    child.send(ENTER)  # Approve
    child.expect("part one of three: sales")
    child.expect("idle: 1 tool call")
    child.expect("Warning: The model's last answer stopped at the model's output limit")
    assert finish(child) == 0


def test_ctrl_c_in_a_dialog_aborts_the_turn(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v3.0.0")
    child.expect("Where should v3.0.0 be published")
    child.sendcontrol("c")
    child.expect("aborted")
    assert finish(child) == 130


def test_auto_approve_flag_for_this_run_only(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v4.0.0", "--auto-approve")
    child.expect("No channel was chosen, so I'll use stable")
    child.expect("Published v4.0.0. Approved.")
    assert finish(child) == 0


def test_descriptions_show_and_escape_declines(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v3.0.0")
    child.expect("Where should v3.0.0 be published")
    child.expect("every user gets it")  # the highlighted option's description
    child.send("\x1b")  # Escape: the question is declined
    child.expect("No channel was chosen, so I'll use stable")
    child.expect("Publish v3.0.0 to stable")
    child.send("\x1b[B\x1b[B\r")  # Decline
    child.expect("Did not publish v3.0.0: User declined to answer")
    assert finish(child) == 0


def test_an_enter_typed_ahead_does_not_answer_the_next_dialog(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v5.0.0")
    child.expect("Where should v5.0.0 be published")
    child.send(ENTER + ENTER)  # Stable, and a second Enter before the approval is on screen
    child.expect(r"Publish v5\.0\.0 to stable\?")  # the approval is shown, not answered
    child.send(DOWN + DOWN + ENTER)  # Decline
    child.expect("Did not publish v5.0.0: User declined to answer")
    assert finish(child) == 0


def test_ctrl_c_at_the_prompt_question_aborts(tmp_path: Path) -> None:
    child = spawn(tmp_path)  # no PROMPT: the run asks for one
    child.expect("What should the agent do")
    child.sendcontrol("c")
    child.expect("Aborted.")
    assert finish(child) == 130


HOSTILE = """
from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ScriptedModel


def recipe(api: RecipeAPI) -> None:
    calls = [ToolCall(id=f"c{i}", name=name, arguments={}) for i, name in enumerate(TOOLS)]
    script = [AssistantMessage(text=SAYS, tool_calls=[call]) for call in calls]
    api.register_agent("hostile", "Say odd things.")
    api.set_demo_model(ScriptedModel([*script, AssistantMessage(text="done")], label="hostile"))
"""


def test_model_text_and_tool_names_are_shown_literally(tmp_path: Path) -> None:
    says = "\x1b]0;PWNED\x07 \x1b[8mhidden\x1b[0m [bold]x[/bold] a:b:c :smile:\r\n"
    recipe = tmp_path / "hostile.py"
    tools = ["[blink]nap[/blink]", "[/]"]
    recipe.write_text(f"SAYS = {says!r}\nTOOLS = {tools!r}\n{HOSTILE}")
    child = spawn(tmp_path, "go", recipe=str(recipe))
    child.expect(pexpect.EOF)
    shown = child.before
    assert finish(child) == 0
    for obeyed in ("\x1b]0;PWNED", "\x1b[8m", "\x1b[5m"):  # a window title, concealed, blink
        assert obeyed not in shown
    assert "^[]0;PWNED^G ^[[8mhidden^[[0m [bold]x[/bold] a:b:c :smile:\r\n" in shown
    assert "[blink]nap[/blink]…" in shown  # the spinner shows the name, not its markup
    assert "[/]…" in shown and "MarkupError" not in shown


ASKS_ODDLY = """
from interactions import ask_user_question
from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ScriptedModel


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def ask(tool_call_id, params, ctx, on_update):
        \"\"\"Ask.\"\"\"
        return await ask_user_question(QUESTION, tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("asker", "Ask.")
    api.set_demo_model(ScriptedModel(
        [AssistantMessage(tool_calls=[ToolCall(id="q1", name="ask", arguments={})])],
        label="asker"))
"""


def test_a_paused_runs_question_is_shown_literally_on_a_terminal(tmp_path: Path) -> None:
    """Before, the pause summary sent the question's escape sequences to the terminal."""
    recipe = tmp_path / "odd.py"
    question = "Clear \x1b[2J now? \x1b]0;PWNED\x07"
    recipe.write_text(f"QUESTION = {question!r}\n{ASKS_ODDLY}")
    child = spawn(tmp_path, "go", "--no-interactive", recipe=str(recipe))
    child.expect(pexpect.EOF)
    shown = child.before
    assert finish(child) == 0
    assert "paused" in shown and "int-q1: Clear ^[[2J now? ^[]0;PWNED^G" in shown
    assert "\x1b[2J" not in shown and "\x1b]0;PWNED" not in shown
