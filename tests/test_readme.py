"""The README's examples run: its recipe loads, its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from hosts.cli import build_parser
from recipes import load_recipe

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_the_readme_recipe_loads(tmp_path: Path) -> None:
    (code,) = _blocks("python")
    path = tmp_path / "painter.py"
    path.write_text(code, encoding="utf-8")
    recipe = load_recipe(str(path))
    assert recipe.agent("painter").model == "openai:gpt-4.1-mini"
    assert [t.name for t in recipe.tools_for(recipe.agent(None))] == ["repaint"]


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
        ["runs", "list", "--json"],
        ["runs", "show", "RUN"],
        ["runs", "pending"],
        ["runs", "answer", "RUN", "INT", "{}", "--resume", "--store", "x.db"],
        ["runs", "resume", "RUN", "--entries", "f.json"],
        ["runs", "cancel", "RUN"],
        ["runs", "retry", "RUN"],
        ["runs", "recover", "--older-than", "600"],
        ["runs", "expire"],
    ):
        parser.parse_args(argv)
