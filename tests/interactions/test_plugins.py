"""Entry points other packages declare: listed without importing them, loaded with a missing
extra turned into a usage error that says what to install (read from the package's own
metadata)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interactions import UsageError
from interactions.plugins import installed_plugins, load_plugin
from tests.plugin_dist import install_fake_plugin, with_plugin_path


@pytest.fixture
def fake_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> importlib.metadata.Distribution:
    monkeypatch.syspath_prepend(str(install_fake_plugin(tmp_path)))
    return importlib.metadata.distribution("pi-fake-host")


def _entry(dist: importlib.metadata.Distribution, name: str) -> importlib.metadata.EntryPoint:
    (entry,) = [e for e in dist.entry_points if e.name == name]
    return entry


def test_pi_recipes_own_entry_points_are_listed() -> None:
    commands = installed_plugins("pi_recipes.commands")
    assert {name: entry.value for name, entry in commands.items()} == {
        "email": "hosts.email:main",
        "mcp": "hosts.mcp:main",
        "rpc": "hosts.rpc:main",
        "serve": "hosts.web:main",
        "slack": "hosts.slack:main",
    }
    engines = installed_plugins("pi_recipes.engines")
    assert engines["temporal"].value == "recipes.temporal:open_temporal_engine"
    assert installed_plugins("pi_recipes.no_such_group") == {}


def test_listing_imports_nothing(tmp_path: Path) -> None:
    probe = (
        "import json, sys\nfrom interactions.plugins import installed_plugins\n"
        "names = sorted(installed_plugins('pi_recipes.commands'))\n"
        "print(json.dumps([names, 'pi_fake_boom' in sys.modules, 'hosts.slack' in sys.modules]))"
    )
    env = with_plugin_path(dict(os.environ), install_fake_plugin(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env
    )
    names, boom, slack = json.loads(done.stdout)
    assert {"boom", "hello", "chat", "serve", "slack"} <= set(names)
    assert (boom, slack) == (False, False)


def test_load_plugin_gives_the_object(fake_plugin: importlib.metadata.Distribution) -> None:
    main = load_plugin(_entry(fake_plugin, "hello"), what="pi-recipes hello")
    assert callable(main) and main(["x"]) == 7


@pytest.mark.parametrize(
    ("name", "said"),
    [
        # both extras bring the module: the one named like the entry point
        ("chat", "pi-recipes chat needs absent_dep_for_test: pip install 'pi-fake-host[chat]'"),
        # none named so: every extra that brings it
        (
            "talk",
            "pi-recipes talk needs absent_dep_for_test: pip install 'pi-fake-host[chat]' or "
            "pip install 'pi-fake-host[voice]'",
        ),
    ],
)
def test_a_missing_extra_names_what_to_install(
    fake_plugin: importlib.metadata.Distribution, name: str, said: str
) -> None:
    with pytest.raises(UsageError) as raised:
        load_plugin(_entry(fake_plugin, name), what=f"pi-recipes {name}")
    assert str(raised.value) == said


def test_a_module_no_extra_brings_is_named_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry point of no known package (or one whose extras do not bring the module)."""
    (tmp_path / "pi_lonely_plugin.py").write_text("import absent_dep_for_test\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = importlib.metadata.EntryPoint("lonely", "pi_lonely_plugin:main", "pi_recipes.test")
    with pytest.raises(UsageError) as raised:
        load_plugin(entry, what="the lonely:// store")
    assert (
        str(raised.value) == "the lonely:// store needs absent_dep_for_test, which is not installed"
    )


def test_a_missing_module_of_the_plugins_own_package_is_not_hidden() -> None:
    """A broken installation, not a missing extra: the import error, traceback and all."""
    entry = importlib.metadata.EntryPoint("x", "tests.no_such_module:main", "pi_recipes.test")
    with pytest.raises(ModuleNotFoundError, match=r"tests\.no_such_module"):
        load_plugin(entry, what="x")
