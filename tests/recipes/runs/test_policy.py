"""Approval policies: rules in a file allow a tool call, ask a person first, or deny it; the
first matching rule decides, a tool's own ``requires_approval`` when none does; a deny holds
under auto-approve; a bad file is refused with every mistake, its line and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from interactions.store import RunStatus, Store
from recipes.policy import POLICY_ENV, PolicyError, load_policy
from recipes.runs import Runner
from tests.hosts.cli_helpers import pi
from tests.recipes.runs.test_requires_approval import RECIPE, _deploys

POLICY = """\
# what the deployer may do
[[rule]]
tool = "deploy"
when = "args.env == 'prod' and args.env != 'canary'"
action = "deny"
reason = "prod deploys go through the release train"

[[rule]]
tool = "dep*"
when = "args.env == 'staging'"
action = "ask"
reason = "staging is shared"

[[rule]]
tool = "*"
when = "args.env == 'canary'"
action = "allow"
"""


def _policy(folder: Path, text: str = POLICY) -> Path:
    path = folder / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.anyio
async def test_the_first_matching_rule_decides_and_a_deny_holds_under_auto_approve(
    store: Store, tmp_path: Path
) -> None:
    env = {POLICY_ENV: str(_policy(tmp_path)), "PI_ASK_USER_AUTO_APPROVE": "1"}
    denied = await Runner(store, cwd=tmp_path, env=env).start(RECIPE, "deploy to prod")
    assert denied.status is RunStatus.FINISHED
    assert denied.text == (
        "Tool said: Not run: a policy rule denies this call of deploy: prod deploys go through "
        "the release train"
    )
    assert _deploys(tmp_path) == [], "denied without asking, auto-approve or not"

    asking = Runner(store, cwd=tmp_path, env={POLICY_ENV: str(tmp_path / "policy.toml")})
    staging = await asking.start(RECIPE, "deploy to staging")
    assert staging.status is RunStatus.PAUSED_WAITING_HUMAN, "the tool declares nothing here"
    (gate,) = staging.interrupts
    assert gate.display is not None
    assert [s.title for s in gate.display.sections] == ["Arguments", "Why"]
    assert gate.display.sections[1].body == "staging is shared"
    assert (gate.metadata or {})["policy"]["line"] == 8
    done = await asking.answer(staging.run_id, gate.id, {"approved": True}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED

    canary = await asking.start(RECIPE, "deploy to canary")
    assert canary.status is RunStatus.FINISHED, "allowed: not asked"
    assert _deploys(tmp_path) == ["staging", "canary"]


@pytest.mark.anyio
async def test_an_answer_to_the_policy_s_ask_holds_where_the_run_resumes_without_it(
    store: Store, tmp_path: Path
) -> None:
    env = {POLICY_ENV: str(_policy(tmp_path))}
    started = await Runner(store, cwd=tmp_path, env=env).start(RECIPE, "deploy to staging")
    elsewhere = Runner(store, cwd=tmp_path)  # a process without the policy
    done = await elsewhere.answer(
        started.run_id, started.interrupts[0].id, status="cancelled", resume=True
    )
    assert done.run is not None and done.run.text.startswith(
        "Tool said: Not run: this call of deploy was not approved"
    )
    assert _deploys(tmp_path) == [], "the decline holds, though no rule asks here"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[rule]]\ntool = "x"\naction = "allow"\nwhen = "args.a ==\n',
         "not TOML: "),
        ('\n[[rule]]\ntool = "x"\naction = "permit"\n',
         'policy.toml:2: rule 1: `action` must be allow, ask or deny (got \'permit\')'),
        ('[[rule]]\ntool = "x"\naction = "ask"\n\n[[rule]]\ntol = "y"\naction = "ask"\n',
         "policy.toml:5: rule 2: unknown key `tol`; did you mean `tool`?"),
        ('[[rule]]\ntool = "x"\naction = "ask"\n\n[[rule]]\ntol = "y"\naction = "ask"\n',
         "policy.toml:5: rule 2: no `tool`; fix: name the tool it is about"),
        ('[[rule]]\ntool = "x"\naction = "ask"\nwhen = "args.env =="\n',
         "policy.toml:1: rule 1: `when` does not read: "),
        ('[[rule]]\ntool = "x"\naction = "ask"\nwhen = "arg.env == \'prod\'"\n',
         "policy.toml:1: rule 1: `when` names `arg`; did you mean `args`?"),
        ('[rules]\ntool = "x"\n', "unknown table or key 'rules'"),
    ],
    ids=["toml", "action", "key", "tool", "when", "name", "table"],
)  # fmt: skip
def test_a_bad_policy_lists_each_mistake_with_its_line_and_fix(
    tmp_path: Path, text: str, said: str
) -> None:
    with pytest.raises(PolicyError) as refused:
        load_policy(_policy(tmp_path, text))
    assert said in str(refused.value)


def test_the_command_line_checks_the_policy_before_anything_starts(tmp_path: Path) -> None:
    _policy(tmp_path, '[[rule]]\ntool = "deploy"\naction = "never"\n')
    bad = pi("run", RECIPE, "deploy to prod", "--policy", "policy.toml", cwd=tmp_path)
    assert bad.returncode == 2
    assert "policy.toml:1: rule 1: `action` must be allow, ask or deny" in bad.stderr
    assert not (tmp_path / ".pi-recipes").exists(), "nothing was started"
    _policy(tmp_path)
    ran = pi("run", RECIPE, "deploy to prod", "--policy", "policy.toml", "--auto-approve",
             cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "Not run: a policy rule denies this call of deploy" in ran.stdout
    assert _deploys(tmp_path) == []
