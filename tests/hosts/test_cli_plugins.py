"""What another package plugs into the command line, as it plugs in pi-recipes' own hosts: a
command (``pi_recipes.commands``), a store and an engine by URL scheme (``pi_recipes.stores``,
``pi_recipes.engines``). The package is a real one on ``PYTHONPATH`` (``tests/plugin_dist.py``);
every call is a real ``pi-recipes`` process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import cli_env, pi
from tests.plugin_dist import HELLO_EXIT, install_fake_plugin, with_plugin_path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "site"
    folder.mkdir()
    return with_plugin_path(cli_env(), install_fake_plugin(folder))


def _pi(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return pi(*args, cwd=cwd, env=env)


def test_a_plugged_in_command_is_listed_and_gets_its_arguments(
    tmp_path: Path, env: dict[str, str]
) -> None:
    listed = _pi("--help", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[0]: line for line in listed.stdout.splitlines() if line[:4] == "    "}
    assert "(from pi-fake-host)" in lines["hello"]
    assert (
        "serve the web host" in lines["serve"] and "serve a recipe as a Slack app" in lines["slack"]
    )
    assert "boom" in lines, "listed without importing it (its module raises when imported)"
    done = _pi("hello", "a b", "--store", "x", "-h", cwd=tmp_path, env=env)
    assert done.returncode == HELLO_EXIT
    assert done.stdout == "hello from a plugged-in host: ['a b', '--store', 'x', '-h']\n"


def test_a_command_whose_extra_is_missing_says_what_to_install(
    tmp_path: Path, env: dict[str, str]
) -> None:
    done = _pi("chat", "r.py", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr == (
        "pi-recipes: usage: pi-recipes chat needs absent_dep_for_test: "
        "pip install 'pi-fake-host[chat]'\n"
    )


def test_a_plugin_neither_replaces_a_command_of_the_cli_nor_stops_the_others(
    tmp_path: Path, env: dict[str, str]
) -> None:
    done = _pi("runs", "list", "--json", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
    assert "hello from" not in done.stdout


def test_a_store_scheme_a_package_installs_is_a_store(tmp_path: Path, env: dict[str, str]) -> None:
    done = _pi("runs", "list", "--json", "--store", "fakemem://somewhere", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
    assert done.stderr == "opened fakemem://somewhere\n"
    wrong = _pi("runs", "list", "--engine", "fakemem://somewhere", cwd=tmp_path, env=env)
    assert wrong.returncode == 2
    assert "--engine names a store, not an engine: give it as --store" in wrong.stderr
    assert "fakeengine://…" in wrong.stderr and "temporal://…" in wrong.stderr


def test_an_engine_scheme_a_package_installs_is_an_engine(
    tmp_path: Path, env: dict[str, str]
) -> None:
    done = _pi("runs", "list", "--json", "--engine", "fakeengine://x", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
    from_env = pi(
        "runs", "list", "--json", cwd=tmp_path, env=env | {"PI_RECIPES_ENGINE": "fakeengine://y"}
    )
    assert (from_env.returncode, from_env.stderr) == (0, "opened fakeengine://y\n")
    wrong = _pi("runs", "list", "--store", "fakeengine://x", cwd=tmp_path, env=env)
    assert wrong.returncode == 2
    assert (
        "--store fakeengine://… names an engine, not a store: give it as --engine" in wrong.stderr
    )
    assert not (tmp_path / ".pi-recipes").exists()


def test_without_the_package_its_schemes_and_commands_are_unknown(tmp_path: Path) -> None:
    unknown = pi("runs", "list", "--store", "fakemem://somewhere", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "fakemem://… is not a store this pi-recipes can open" in unknown.stderr
    assert pi("hello", cwd=tmp_path).returncode == 2  # argparse: invalid choice


def test_pi_recipes_own_host_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    """The extra is read from pi-recipes' own metadata, as for any package's command."""
    probe = (
        "import sys; sys.modules['mcp'] = None\nfrom hosts.cli import main\n"
        "sys.exit(main(['mcp', 'r.py']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env=cli_env(),
    )  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr
        == "pi-recipes: usage: pi-recipes mcp needs mcp: pip install 'pi-recipes[mcp]'\n"
    )
