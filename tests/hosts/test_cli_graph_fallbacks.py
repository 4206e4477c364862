"""Fallback routes through the command line, each step a real process, against a local fake
provider server: ``runs show`` lists the skipped node; a run that waits ends failed_resumable
and ``runs retry`` finishes it once the provider recovers; ``--auto-resume N`` waits for the
provider's reset and retries by itself."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import anyio

from interactions.store import open_sqlite_store
from tests.hosts.cli_helpers import cli_env, only_run_id, pi, pi_json
from tests.hosts.fake_providers import OPENAI_KEY, fake_providers, says, usage_window
from tests.recipes.graph.fallback_flows import REVIEW, write_plan_phase


def test_runs_show_lists_the_skipped_node(tmp_path: Path) -> None:
    write_plan_phase(tmp_path)
    with fake_providers() as fake:
        fake.queue("openai", usage_window())
        env = cli_env(**fake.env())
        done = pi("graph", "run", "flow.iter", "--var", "plan_review_policy=skip", cwd=tmp_path,
                  env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = only_run_id(tmp_path)
    assert f"Run {run_id} finished." in done.stdout
    assert '"provenance": "peer skipped mid-run"' in done.stdout
    shown = pi("runs", "show", run_id, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "  ⤼ plan_review#1 (judge) skipped by route give_up: " in shown.stdout
    assert "skipped: plan_review#1 (route give_up)" in shown.stdout.splitlines()
    details = pi_json("runs", "show", run_id, cwd=tmp_path)["details"]
    assert "skipped: plan_review#1 (route give_up)" in details
    assert OPENAI_KEY not in done.stdout + done.stderr + shown.stdout


def test_a_waiting_run_fails_resumable_then_runs_retry_finishes_it(tmp_path: Path) -> None:
    write_plan_phase(tmp_path)
    with fake_providers() as fake:
        fake.queue("openai", usage_window())
        env = cli_env(**fake.env())
        failed = pi("graph", "run", "flow.iter", "--var", "plan_review_policy=wait",
                    cwd=tmp_path, env=env)  # fmt: skip
        assert failed.returncode == 1
        run_id = only_run_id(tmp_path)
        assert f"Run {run_id} failed_resumable." in failed.stdout
        assert f"runs retry {run_id}" in failed.stdout
        assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "failed_resumable"
        fake.queue("openai", says(REVIEW))  # the provider recovers
        done = pi("runs", "retry", run_id, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert f"Run {run_id} finished." in done.stdout
    assert '"provenance": "peer-reviewed"' in done.stdout
    assert len(fake.requests["openai"]) == 2


def test_auto_resume_waits_for_the_reset_then_finishes(tmp_path: Path) -> None:
    write_plan_phase(tmp_path)
    with fake_providers() as fake:
        fake.queue("openai", usage_window(reset="1s"), says(REVIEW))
        env = cli_env(**fake.env())
        done = pi("graph", "run", "flow.iter", "--auto-resume", "2", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    run_id = only_run_id(tmp_path)
    assert f"Run {run_id} failed_resumable (node plan_review failed: ModelError: openai: HTTP " \
           "429 insufficient_quota: You exceeded your current quota.); retry 1 of 2 in " \
           in done.stdout  # fmt: skip
    assert f"Run {run_id} finished." in done.stdout
    shown = pi_json("runs", "show", run_id, cwd=tmp_path)
    assert shown["status"] == "finished"
    assert "auto-resume: 1 of 2 retries planned" in "\n".join(shown["details"])
    assert len(fake.requests["openai"]) == 2
    bad = pi("graph", "run", "flow.iter", "--auto-resume", "0", cwd=tmp_path)
    assert bad.returncode == 2 and "expected 1 to 1000 retries" in bad.stderr


def test_the_events_name_the_planned_retry(tmp_path: Path) -> None:
    write_plan_phase(tmp_path)
    with fake_providers() as fake:
        fake.queue("openai", usage_window(reset="1s"), says(REVIEW))
        done = pi("graph", "run", "flow.iter", "--auto-resume", "1", cwd=tmp_path,
                  env=cli_env(**fake.env()))  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = only_run_id(tmp_path)

    async def planned() -> list[dict[str, object]]:
        async with await open_sqlite_store(tmp_path / ".pi-recipes" / "state.db") as store:
            return [e.data for e in await store.list_events(run_id)
                    if e.type == "run_retry_scheduled"]  # fmt: skip

    [event] = anyio.run(planned)
    assert (event["attempt"], event["max"], event["delay_ms"], event["reason"]) == (
        1, 1, 1000, "usage_window"
    )
    assert json.dumps(event).count("due_at") == 1


README = (Path(__file__).resolve().parents[2] / "docs" / "fallback-routes.md").read_text(
    encoding="utf-8"
)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_readme_fallback_commands_run_as_printed(tmp_path: Path) -> None:
    [block] = [b for b in re.findall(r"```text\n(.*?)```", README, flags=re.S)
               if "fallbacks:" in b]  # fmt: skip
    example = (EXAMPLES / "plan_review.iter").read_text(encoding="utf-8")
    shown = "\n".join(line.split("  #")[0].rstrip() for line in block.splitlines())
    assert shown in example, "the README shows the example's peer as it is"
    (tmp_path / "examples").mkdir()
    for name in ("plan_review.iter", "plan_review.json"):
        shutil.copy(EXAMPLES / name, tmp_path / "examples" / name)
    [commands] = [b for b in re.findall(r"```sh\n(.*?)```", README, flags=re.S)
                  if "examples/plan_review.iter" in b]  # fmt: skip
    env = cli_env()
    env.pop("OPENAI_API_KEY", None)
    env.pop("ANTHROPIC_API_KEY", None)
    outputs = []
    for line in commands.splitlines():
        argv = shlex.split(line.split("  #")[0])
        assert argv[0] == "pi-recipes"
        if argv[1:3] == ["runs", "show"]:
            argv[3] = only_run_id(tmp_path)
        outputs.append(pi(*argv[1:], cwd=tmp_path, env=env))
    validated, skipped, shown_run, waited = outputs
    assert validated.returncode == 0 and "is valid" in validated.stdout
    assert skipped.returncode == 0 and "peer skipped mid-run" in skipped.stdout
    assert "skipped: plan_review#1 (route give_up)" in shown_run.stdout
    assert waited.returncode == 1 and "failed." in waited.stdout and "no API key" in waited.stdout


KEYLESS_RESCUE = """\
    cheaper:
      model: "anthropic:claude-haiku-4-5"
    give_up:
      action: skip
      when: "vars.plan_review_policy == 'skip'"
      on: [usage_window]
"""


def test_a_rescue_route_without_a_key_is_passed_over_to_the_skip_route(tmp_path: Path) -> None:
    """The peer's quota window is shut; its rescue route has no key in this process, so it is
    passed over and the filtered skip route takes the usage window. Before, the keyless route
    failed as `auth`, which the skip route does not take: the run ended failed_resumable."""
    write_plan_phase(tmp_path, KEYLESS_RESCUE)
    with fake_providers() as fake:
        fake.queue("openai", usage_window())
        env = cli_env(**fake.env(anthropic=False))
        env.pop("ANTHROPIC_API_KEY", None)
        done = pi("graph", "run", "flow.iter", "--var", "plan_review_policy=skip", cwd=tmp_path,
                  env=env)  # fmt: skip
        assert fake.requests["anthropic"] == []
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = only_run_id(tmp_path)
    assert f"Run {run_id} finished." in done.stdout
    assert '"provenance": "peer skipped mid-run"' in done.stdout

    async def hops() -> list[dict[str, object]]:
        async with await open_sqlite_store(tmp_path / ".pi-recipes" / "state.db") as store:
            return [e.data for e in await store.list_events(run_id) if e.type == "model_fallback"]

    first, second = anyio.run(hops)
    assert (first["to_route"], first["reason"], "build_failed" in first) == (
        "cheaper", "usage_window", False
    )
    assert (second["from_route"], second["served_by"], second["reason"], second["build_failed"]
            ) == ("cheaper", "give_up", "usage_window", True)  # fmt: skip
    assert "ANTHROPIC_API_KEY" in str(second["error"])


def test_graph_validate_refuses_a_model_provider_the_engine_does_not_have(
    tmp_path: Path,
) -> None:
    """Before, `graph validate` said the file was valid and `graph run` refused it at launch."""
    write_plan_phase(tmp_path, '    cheaper:\n      model: "mistral:mistral-large"\n')
    checked = pi("graph", "validate", "flow.iter", cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout
    first, fix = checked.stdout.splitlines()[:2]
    assert re.match(r"^.*flow\.iter:\d+:\d+: error \[P015\]: judge `plan_review`: fallback route "
                    r"`cheaper` names the model 'mistral:mistral-large': unknown provider "
                    r"'mistral'$", first), first  # fmt: skip
    assert fix.startswith("  fix: Name the model in one of the accepted forms: openai:<model>")
    assert "anthropic:<model>" in fix and "scripted:<path to a script file>" in fix
    ran = pi("graph", "run", "flow.iter", cwd=tmp_path)
    assert ran.returncode == 2 and "[P015]" in ran.stderr, "a usage error, before any write"
    assert pi_json("runs", "list", cwd=tmp_path) == [], "no run was written"
