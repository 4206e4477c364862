"""Shell completion: ``pi-recipes completion SHELL`` prints the script a shell loads; with it,
the shell completes the commands, options and choices (argcomplete's protocol, answered by the
installed ``pi-recipes`` without loading pi-recipes' packages)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hosts.cli._parser import (
    AUTO_APPROVE_ENV,
    LOG_LEVELS,
    RUN_STATUSES,
    STORE_ENV,
)
from tests.hosts.cli_helpers import PI_RECIPES, cli_env, pi


def _env() -> dict[str, str]:
    return cli_env(PATH=f"{Path(PI_RECIPES).parent}{os.pathsep}{os.environ['PATH']}")


def _bash_completes(script: Path, line: str) -> list[str]:
    """What bash offers after ``line`` (the cursor at its end), through the loaded script."""
    words = line.split(" ")
    program = f"""
source {script}
COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}
COMP_WORDS=({" ".join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}
_python_argcomplete pi-recipes {words[-1]!r} {words[-2]!r}
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True,
                          timeout=30, env=_env())  # fmt: skip
    assert done.returncode == 0, done.stderr
    return sorted(w.strip() for w in done.stdout.splitlines() if w.strip())


def test_bash_completes_commands_subcommands_and_choices(tmp_path: Path) -> None:
    printed = pi("completion", "bash", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    script = tmp_path / "pi-recipes.bash"
    script.write_text(printed.stdout, encoding="utf-8")
    assert _bash_completes(script, "pi-recipes ru") == ["rules", "run", "runs"]
    assert _bash_completes(script, "pi-recipes runs an") == ["answer"]
    assert _bash_completes(script, "pi-recipes runs list --status f") == [
        "failed", "failed_resumable", "finished"
    ]  # fmt: skip
    assert _bash_completes(script, "pi-recipes graph run flow.iter --no-") == ["--no-interactive"]


@pytest.mark.skipif(
    shutil.which("fish") is None, reason="fish is not installed (.ci/run installs it)"
)
def test_fish_completes_commands_through_its_script(tmp_path: Path) -> None:
    printed = pi("completion", "fish", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    script = tmp_path / "pi-recipes.fish"
    script.write_text(printed.stdout, encoding="utf-8")
    done = subprocess.run(
        ["fish", "--no-config", "-c", f"source {script}; complete -C 'pi-recipes runs re'"],
        capture_output=True, text=True, timeout=30, env=_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    offered = sorted(line.split("\t")[0] for line in done.stdout.splitlines())
    assert offered == ["recover", "resume", "retry"]


def test_zsh_gets_its_script_and_a_bad_shell_is_a_usage_error(tmp_path: Path) -> None:
    zsh = pi("completion", "zsh", cwd=tmp_path)
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef pi-recipes")
    assert "ZSH_VERSION" in zsh.stdout, "the script's zsh branch"
    bad = pi("completion", "tcsh", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice: 'tcsh'" in bad.stderr


def test_the_parsers_names_are_the_packages_own() -> None:
    """The parser spells a few names so that building it loads no package: they are the same."""
    from hosts._store import STORE_ENV as store_env
    from interactions import AUTO_APPROVE_ENV as auto_approve
    from interactions.store import RunStatus

    assert tuple(s.value for s in RunStatus) == RUN_STATUSES
    assert auto_approve == AUTO_APPROVE_ENV
    assert store_env == STORE_ENV
    assert LOG_LEVELS == ("debug", "info", "warning", "error")
