"""A tool node's command never runs what a value holds: each ``{{…}}`` reaches the command as
an environment variable, whatever quoting context it is written in, and arrives verbatim; where
the shell would evaluate a value (arithmetic, ``${…}``, a quoted here-document) the workflow is
refused before it runs. The command's environment holds none of the engine's credentials but
those its node names in ``env:``."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hosts.cli._graph_commands import diagnostics_of
from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import start_graph
from recipes.graph.language import bind_command, references
from recipes.graph.language._shell import Context, reference_contexts
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner
from tests.recipes.graph.flows import write_flow
from tests.recipes.runs.conftest import postgres_store

pytestmark = pytest.mark.anyio

CONTEXTS = {
    "bare": "printf '%s' {{vars.x}} > got.bare",
    "single quotes": "printf '%s' 'value: {{vars.x}}' > got.single",
    "double quotes": 'printf \'%s\' "value: {{vars.x}}" > got.double',
    "ansi quotes": "printf '%s' $'value: {{vars.x}}' > got.ansi",
    "backticks": "printf '%s' \"`printf '%s' {{vars.x}}`\" > got.backticks",
    "backticks in double quotes": 'printf \'%s\' "`printf %s "{{vars.x}}"`" > got.btdouble',
    "command substitution": "printf '%s' \"$(printf '%s' '{{vars.x}}')\" > got.subst",
    "nested quotes": "printf '%s' \"$(echo \"'{{vars.x}}'\")\" > got.nested",
    "here-document": "cat > got.heredoc <<EOF\n{{vars.x}}\nEOF",
    "here-string": "cat <<< {{vars.x}} > got.herestring",
    "test": '[[ "{{vars.x}}" == {{vars.x}} ]] && printf same > got.test',
    "comment": "true # {{vars.x}} $(touch pwned)",
}
EXPECTED = {
    "bare": "{x}", "single quotes": "value: {x}", "double quotes": "value: {x}",
    "ansi quotes": "value: {x}", "backticks": "{x}", "backticks in double quotes": "{x}",
    "subst": "{x}", "nested": "'{x}'", "heredoc": "{x}\n", "test": "same",
    "herestring": "{x}\n",
}  # fmt: skip
FILES = {
    "bare": "bare", "single quotes": "single", "double quotes": "double", "ansi quotes": "ansi",
    "backticks": "backticks", "backticks in double quotes": "btdouble", "subst": "subst",
    "nested": "nested", "heredoc": "heredoc", "test": "test", "herestring": "herestring",
}  # fmt: skip

PAYLOADS = {
    "semicolon": "a; touch pwned",
    "command substitution": "$(touch pwned)",
    "backticks": "`touch pwned`",
    "single quote break-out": "' ; touch pwned ; '",
    "double quote break-out": '" ; touch pwned ; "',
    "backslashed quote": '\\" ; touch pwned ; \\"',
    "ansi break-out": "\\' ; touch pwned ; \\'",
    "newlines": "a\ntouch pwned\nb",
    "here-document end": "x\nEOF\ntouch pwned\ncat <<EOF",
    "IFS": "$IFS;touch${IFS}pwned",
    "globs": "* ?[a-z] {a,b} ~",
    "arithmetic subscript": "a[$(touch pwned)]",
    "and-or": "x && touch pwned || touch pwned",
    "redirect": "> pwned",
    "references": "{{vars.x}} {{!vars.x}}",
}


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A real SQLite file, or PostgreSQL when ``PI_RECIPES_TEST_POSTGRES`` names a server."""
    if request.param == "sqlite":
        async with await open_sqlite_store(tmp_path / "state.db") as opened:
            yield opened
        return
    async with postgres_store("the tool injection tests") as pg:
        yield pg


def _tool(name: str, command: str) -> str:
    """A tool node whose command is a ``|`` block scalar: kept as written, quotes and all."""
    lines = "".join(f"    {line}\n" for line in command.splitlines())
    return f"tool {name}:\n  command: |\n{lines}"


def _flow() -> str:
    nodes = [_tool(f"t{i}", command) for i, command in enumerate(CONTEXTS.values())]
    chain = " -> ".join(f"t{i}" for i in range(len(CONTEXTS)))
    return (
        "vars:\n  x: string\n\n" + "\n".join(nodes)
        + f"\nworkflow w:\n  entry: t0\n  {chain} -> done\n"
    )  # fmt: skip


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
async def test_a_value_runs_nothing_and_arrives_verbatim_in_every_quoting_context(
    tmp_path: Path, store: Store, payload: str
) -> None:
    (tmp_path / "abc").touch()  # something a glob would match
    flow = write_flow(tmp_path, _flow())
    runner = Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    result = await start_graph(runner, flow, vars={"x": payload})
    assert not (tmp_path / "pwned").exists(), "the value ran as a command"
    assert result.status is RunStatus.FINISHED, result.error
    got = {name: (tmp_path / f"got.{file}").read_bytes().decode() for name, file in FILES.items()}
    assert got == {name: shown.replace("{x}", payload) for name, shown in EXPECTED.items()}


REFUSED = {
    "arithmetic expansion": "echo $(( {{vars.x}} + 1 ))",
    "arithmetic command": "(( {{vars.x}} > 1 )) && echo '{}'",
    "numeric test": '[[ "{{vars.x}}" -gt 1 ]] && echo "{}"',
    "let": "let n={{vars.x}}; echo '{}'",
    "parameter expansion": "echo ${HOME:-{{vars.x}}}",
    "array subscript": 'a=(1 2); echo "${a[{{vars.x}}]}"',
    "quoted here-document": "cat <<'EOF'\n{{vars.x}}\nEOF",
}


@pytest.mark.parametrize("command", REFUSED.values(), ids=REFUSED.keys())
async def test_a_reference_the_shell_would_evaluate_is_refused_before_the_run(
    tmp_path: Path, store: Store, command: str
) -> None:
    text = f"vars:\n  x: string\n\n{_tool('t', command)}\nworkflow w:\n  entry: t\n  t -> done\n"
    flow = write_flow(tmp_path, text)
    [found] = [d for d in diagnostics_of(flow) if d.code == "P014"]
    assert found.is_error and "{{vars.x}}" in found.message and found.pos is not None
    assert found.fix.startswith("Write the reference as a word or inside quotes")
    runner = Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    with pytest.raises(Exception, match="P014"):
        await start_graph(runner, flow, vars={"x": "a[$(touch pwned)]"})
    assert not (tmp_path / "pwned").exists()
    assert await store.list_runs() == []


ENV_FLOW = """\
tool look:
  command: `env`
  {asked}

workflow w:
  entry: look
  look -> done
"""
CREDENTIALS = {
    "OPENAI_API_KEY": "sk-proj-ENVLEAK0123456789abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-ENVLEAK0123456789abcdef",
    "PI_RECIPES_TOKEN": "ENVLEAK-web-token-0123456789",
    "SLACK_BOT_TOKEN": "xoxb-ENVLEAK-0123456789",
    "SLACK_SIGNING_SECRET": "ENVLEAK-signing-0123456789",
    "GITHUB_TOKEN": "ENVLEAK-github-0123456789",
    "PGPASSWORD": "ENVLEAK-pg-0123456789",
    "DATABASE_URL": "postgresql://app:ENVLEAKpw0123@db.example/app",
}


async def _env_seen(runner: Runner, where: Path, asked: str) -> str:
    """What ``env`` printed in a tool node whose ``env:`` is ``asked``."""
    ended = await start_graph(runner, write_flow(where, ENV_FLOW.format(asked=asked)))
    assert ended.status is RunStatus.FINISHED, ended.error
    stored = await runner.store.get_run(ended.run_id)
    checkpoint = GraphCheckpoint.model_validate(stored.checkpoint)
    [execution] = checkpoint.executions
    return str(execution.output["result"])


async def test_the_command_gets_no_credential_of_the_engine_unless_its_node_names_it(
    tmp_path: Path, store: Store
) -> None:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PI_VAR_1": "stale", **CREDENTIALS}
    runner = Runner(store, env=env, cwd=tmp_path)
    plain = await _env_seen(runner, tmp_path / "a", "")
    seen = dict(line.split("=", 1) for line in plain.splitlines() if "=" in line)
    assert "ENVLEAK" not in plain
    assert seen["PATH"] == "/usr/bin:/bin" and seen["LANG"] == "C.UTF-8"
    assert "PI_VAR_1" not in seen
    named = await _env_seen(runner, tmp_path / "b", "env: [GITHUB_TOKEN, DATABASE_URL]")
    lines = set(named.splitlines())
    assert f"GITHUB_TOKEN={CREDENTIALS['GITHUB_TOKEN']}" in lines
    assert f"DATABASE_URL={CREDENTIALS['DATABASE_URL']}" in lines
    assert not any(name in named for name in CREDENTIALS
                   if name not in ("GITHUB_TOKEN", "DATABASE_URL"))  # fmt: skip


def test_env_takes_variable_names(tmp_path: Path) -> None:
    text = ENV_FLOW.format(asked='env: ["not a name"]')
    found = [d for d in diagnostics_of(write_flow(tmp_path, text)) if d.code == "E002"]
    assert found and "`env:` takes variable names" in found[0].message


_VALUES = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
).filter(lambda v: not v.endswith("\n"))  # a command substitution drops trailing newlines


@settings(max_examples=40, deadline=None)
@given(value=_VALUES)
def test_any_value_reaches_bash_verbatim_through_every_context(value: str) -> None:
    """The binding alone, under bash: whatever the value, each context prints it as is."""
    script = "\n".join(CONTEXTS.values())
    bound = bind_command(script)
    with tempfile.TemporaryDirectory() as where:
        env = {"PATH": "/usr/bin:/bin", **{name: value for name, _ in bound.variables}}
        done = subprocess.run(
            ["bash", "-c", bound.text], cwd=where, env=env, capture_output=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        got = {name: Path(where, f"got.{f}").read_bytes().decode() for name, f in FILES.items()}
        assert not Path(where, "pwned").exists()
    assert got == {name: shown.replace("{x}", value) for name, shown in EXPECTED.items()}


@settings(max_examples=300, deadline=None)
@given(
    command=st.lists(
        st.sampled_from(["{{vars.x}}", "{{!vars.y}}", "<<", *"ab {}$()`'\"\\#<-;&|[]=\n!EOF."]),
        max_size=40,
    ).map("".join)
)
def test_the_scan_of_any_command_gives_each_reference_one_context(command: str) -> None:
    found = reference_contexts(command)
    assert [ref.offset for ref, _ in found] == [ref.offset for ref in references(command)]
    assert all(context in get_args(Context) for _, context in found)
    try:
        bound = bind_command(command)
    except ValueError:
        return  # refused, as the compiler refuses it
    left = [ref for ref in references(bound.text) if ref.path and not ref.raw]
    assert not left, "a reference left in the text would be filled in as shell text"
