"""Every host takes the approval policy of its runs (``--policy FILE`` or
``PI_RECIPES_POLICY``), checks it before it serves anything, and its tools are ruled by it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.hosts.cli_helpers import cli_env, pi
from tests.hosts.mcp_client import RECIPE, WAIT, connect, text

BAD = '[[rule]]\ntool = "free_text"\naction = "never"\n'
DENY = '[[rule]]\ntool = "free_*"\naction = "deny"\nreason = "not today"\n'


@pytest.mark.parametrize(
    "command",
    [["serve", RECIPE], ["mcp", RECIPE], ["mcp", RECIPE, "--http", "127.0.0.1:0"],
     ["rpc", RECIPE], ["slack", RECIPE], ["worker", RECIPE, "--temporal", "127.0.0.1:9"],
     ["run", RECIPE, "go"], ["graph", "run", "flow.iter"]],
    ids=" ".join,
)  # fmt: skip
def test_a_bad_policy_stops_every_host_before_it_serves(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "policy.toml").write_text(BAD, encoding="utf-8")
    (tmp_path / "flow.iter").write_text("", encoding="utf-8")
    env = cli_env(SLACK_BOT_TOKEN="xoxb-1", SLACK_APP_TOKEN="xapp-1")
    given = pi(*command, "--policy", "policy.toml", cwd=tmp_path, env=env)
    assert given.returncode == 2, given.stderr
    assert "policy.toml:1: rule 1: `action` must be allow, ask or deny" in given.stderr
    named = pi(*command, cwd=tmp_path, env={**env, "PI_RECIPES_POLICY": "policy.toml"})
    assert named.returncode == 2 and "`action` must be allow, ask or deny" in named.stderr


@pytest.mark.anyio
async def test_the_mcp_host_s_tools_are_ruled_by_the_policy(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(DENY, encoding="utf-8")
    async with connect("stdio", cwd=tmp_path, env={"PI_RECIPES_POLICY": str(policy)}) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("free_text", {})
    assert text(result) == "Not run: a policy rule denies this call of free_text: not today"
