"""Loading recipes from real files, modules and entry points, and the errors that name where."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

import pytest

from interactions import UsageError
from recipes._loader import ENTRY_POINT_GROUP, RecipeLoadError, load_recipe

GOOD = """\
from pydantic import BaseModel


class Greet(BaseModel):
    name: str


async def greet(tool_call_id, params: Greet, ctx, on_update):
    return f"Hello {params.name}"


def recipe(api):
    api.register_tool("greet", description="Greet.", parameters=Greet, execute=greet)
    api.register_agent("greeter", "Greet people.")


def other(api):
    api.register_agent("other", "Something else.")
"""


def write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def test_a_recipe_file(tmp_path: Path) -> None:
    path = write(tmp_path, "demo.py", GOOD)
    recipe = load_recipe(str(path))
    assert recipe.name == "demo"
    assert list(recipe.tools) == ["greet"] and recipe.default_agent == "greeter"
    assert recipe.tools["greet"].spec().parameters["required"] == ["name"]


def test_a_recipe_file_with_another_function(tmp_path: Path) -> None:
    path = write(tmp_path, "demo.py", GOOD)
    assert list(load_recipe(f"{path}:other").agents) == ["other"]


def test_a_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").mkdir()
    write(tmp_path / "examples", "demo.py", GOOD)
    monkeypatch.chdir(tmp_path)
    assert load_recipe("examples/demo.py").default_agent == "greeter"


def test_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.py", "def recipe(api):\n    pass\n\nx = (1,\n")
    with pytest.raises(RecipeLoadError) as caught:
        load_recipe(str(path))
    assert str(caught.value).startswith(f"{path}:4: syntax error")
    assert (caught.value.path, caught.value.line) == (str(path), 4)


def test_an_import_failure_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "fails.py", "import os\n\nraise RuntimeError('no config')\n")
    with pytest.raises(RecipeLoadError, match=r"fails\.py:3: importing the recipe failed: "):
        load_recipe(str(path))


def test_a_missing_recipe_function_says_what_to_define(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.py", "X = 1\n")
    with pytest.raises(RecipeLoadError, match=r"define `def recipe\(api: RecipeAPI\) -> None`"):
        load_recipe(str(path))
    with pytest.raises(RecipeLoadError, match="no function 'build'"):
        load_recipe(f"{path}:build")


def test_a_duplicate_tool_names_the_tool_file_and_line(tmp_path: Path) -> None:
    source = GOOD.replace(
        '    api.register_agent("greeter"',
        '    api.register_tool("greet", description="Again.", parameters=Greet, execute=greet)\n'
        '    api.register_agent("greeter"',
    )
    path = write(tmp_path, "dup.py", source)
    with pytest.raises(RecipeLoadError) as caught:
        load_recipe(str(path))
    assert str(caught.value).startswith(f"{path}:14: the recipe function failed")
    assert "tool 'greet' is registered twice" in str(caught.value)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecipeLoadError, match="no such recipe file"):
        load_recipe(str(tmp_path / "nope.py"))


def test_module_function_and_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = unique("recipe_mod")
    write(tmp_path, f"{name}.py", GOOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert list(load_recipe(f"{name}:other").agents) == ["other"]
    assert load_recipe(name).default_agent == "greeter"


def test_a_bad_module_function_raised_inside_names_the_authors_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = unique("bad_mod")
    write(tmp_path, f"{name}.py", "def recipe(api):\n    api.register_agent('a', 'x', tools='t')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RecipeLoadError, match=rf"{name}\.py:2: the recipe function failed"):
        load_recipe(f"{name}:recipe")


@pytest.mark.parametrize("ref", ["no_such_module_xyz:recipe", "no_such_module_xyz", "a b c"])
def test_unknown_references(ref: str) -> None:
    with pytest.raises(RecipeLoadError) as caught:
        load_recipe(ref)
    assert isinstance(caught.value, UsageError)
    assert ENTRY_POINT_GROUP in str(caught.value) or "expected" in str(caught.value)


def test_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = unique("ep_recipe")
    write(tmp_path, f"{module}.py", GOOD)
    dist = tmp_path / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n{module}-demo = {module}:other\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    recipe = load_recipe(f"{module}-demo")
    assert list(recipe.agents) == ["other"] and recipe.name == f"{module}-demo"
