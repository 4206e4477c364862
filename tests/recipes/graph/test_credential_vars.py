"""Vars derived from the credentials a run has (``llm_families``, ``plan_review``), injected at
launch from fake credentials (0, 1, 2 families), under the deployment's brake; ``--var`` values
checked against their enums before anything is written; the keys themselves never stored."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import GraphError, start_graph
from recipes.graph.runtime import PLAN_REVIEW_BRAKE, GraphCheckpoint
from recipes.runs import Runner

pytestmark = pytest.mark.anyio

OPENAI = {"OPENAI_API_KEY": "sk-test-openai-credential-1"}
ANTHROPIC = {"ANTHROPIC_API_KEY": "sk-ant-test-anthropic-credential-2"}
BOTH = OPENAI | ANTHROPIC

FLOW = """\
vars:
  llm_families: {families_type}
  plan_review: string [enum: "auto", "on", "off"] = "{default}"
  plan_review_policy: string [enum: "wait", "skip"] = "skip"

schema topology_out:
  review: bool
  families: string

compute topology:
  output: topology_out
  expr:
    review: "vars.plan_review == 'on'"
    families: "{families_expr}"

workflow w:
  entry: topology
  topology -> done
"""


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


def write(where: Path, *, default: str = "auto", as_text: bool = False) -> Path:
    path = where / "flow.iter"
    path.write_text(FLOW.format(
        families_type="string" if as_text else "string[]", default=default,
        families_expr="vars.llm_families" if as_text else "join(vars.llm_families, ',')",
    ), encoding="utf-8")  # fmt: skip
    return path


async def launched(
    store: Store, where: Path, env: dict[str, str], **kw: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's vars and its ``vars_injected`` event."""
    flow = write(where, **{k: kw.pop(k) for k in ("default", "as_text") if k in kw})
    done = await start_graph(Runner(store, env=env, cwd=where), flow, **kw)
    assert done.status is RunStatus.FINISHED, done.error
    run = await store.get_run(done.run_id)
    [event] = [e.data for e in await store.list_events(done.run_id) if e.type == "vars_injected"]
    everything = json.dumps(run.checkpoint) + json.dumps(
        [e.data for e in await store.list_events(done.run_id)]
    )
    assert not any(key in everything for key in BOTH.values()), "a key was stored"
    return GraphCheckpoint.model_validate(run.checkpoint).vars, event


@pytest.mark.parametrize(
    ("env", "families", "review"),
    [({}, [], "off"), (OPENAI, ["openai"], "off"), (ANTHROPIC, ["anthropic"], "off"),
     (BOTH, ["anthropic", "openai"], "on"),
     (BOTH | {"OPENAI_API_KEY": "  "}, ["anthropic"], "off"),
     (BOTH | {"OPENAI_API_KEY": "sk-test-with\nline-break"}, ["anthropic"], "off")],
)  # fmt: skip
async def test_families_from_the_credentials_and_auto_resolves_by_their_count(
    tmp_path: Path, store: Store, env: dict[str, str], families: list[str], review: str
) -> None:
    values, event = await launched(store, tmp_path, env)
    assert values["llm_families"] == families and values["plan_review"] == review
    assert event == {"llm_families": families, "plan_review": review,
                     "plan_review_from": "credentials"}  # fmt: skip


async def test_a_string_var_gets_the_families_comma_joined(tmp_path: Path, store: Store) -> None:
    values, _ = await launched(store, tmp_path, BOTH, as_text=True)
    assert values["llm_families"] == "anthropic,openai"


@pytest.mark.parametrize(
    ("brake", "given", "default", "review", "source"),
    [("off", None, "auto", "off", "brake"), ("OFF ", None, "auto", "off", "brake"),
     ("maybe", None, "auto", "off", "brake"), ("auto", None, "auto", "on", "credentials"),
     ("", None, "auto", "on", "credentials"), ("off", None, "on", "off", "brake"),
     ("off", "on", "auto", "on", "var"), ("on", "off", "auto", "off", "var"),
     ("off", "auto", "auto", "off", "brake"), (None, None, "off", "off", "default"),
     (None, "auto", "off", "on", "credentials")],
)  # fmt: skip
async def test_the_var_then_the_brake_then_the_default_then_the_credentials(
    tmp_path: Path, store: Store, brake: str | None, given: str | None, default: str,
    review: str, source: str,
) -> None:  # fmt: skip
    env = BOTH | ({PLAN_REVIEW_BRAKE: brake} if brake is not None else {})
    vars = {"plan_review": given} if given is not None else {}
    values, event = await launched(store, tmp_path, env, default=default, vars=vars)
    assert (values["plan_review"], event["plan_review_from"]) == (review, source)


@pytest.mark.parametrize(
    ("vars", "code", "said"),
    [({"plan_review_policy": "skpi"}, "C126", "'skpi' is not one of 'wait', 'skip'"),
     ({"plan_review": "sometimes"}, "C126", "'sometimes' is not one of 'auto', 'on', 'off'"),
     ({"llm_families": '["openai"]'}, "P009", "derived from the credentials")],
)  # fmt: skip
async def test_bad_launch_values_fail_the_launch_and_write_nothing(
    tmp_path: Path, store: Store, vars: dict[str, str], code: str, said: str
) -> None:
    with pytest.raises(GraphError) as raised:
        await start_graph(Runner(store, env=BOTH, cwd=tmp_path), write(tmp_path), vars=vars)
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == code and said in diagnostic.message and diagnostic.fix
    assert await store.list_runs() == []


NUMBERS = """\
vars:
  n: int = 1
  ratio: float = 0.5

schema out:
  total: float

compute sum:
  output: out
  expr:
    total: "vars.n * vars.ratio"

workflow w:
  entry: sum
  sum -> done
"""


@pytest.mark.parametrize(
    ("vars", "said"),
    [({"ratio": "nan"}, "'nan' is not of type float"),
     ({"ratio": "inf"}, "'inf' is not of type float"),
     ({"ratio": "1e999"}, "'1e999' is not of type float"),
     ({"n": "1_000"}, "'1_000' is not of type int"),
     ({"n": " 12 "}, "' 12 ' is not of type int"),
     ({"n": "١٢"}, "'١٢' is not of type int")],
)  # fmt: skip
async def test_a_number_var_reads_as_json_writes_numbers(
    tmp_path: Path, store: Store, vars: dict[str, str], said: str
) -> None:
    """``--var`` numbers used to go through Python's ``int``/``float``: ``nan``, ``inf``,
    ``1e999`` (inf), ``1_000``, padded or non-ASCII digits were all taken."""
    path = tmp_path / "flow.iter"
    path.write_text(NUMBERS, encoding="utf-8")
    with pytest.raises(GraphError) as raised:
        await start_graph(Runner(store, env={}, cwd=tmp_path), path, vars=vars)
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "C109" and said in diagnostic.message
    assert await store.list_runs() == []
    done = await start_graph(
        Runner(store, env={}, cwd=tmp_path), path, vars={"n": "-12", "ratio": "2.5e1"}
    )
    assert done.status is RunStatus.FINISHED, done.error
    vars_ = GraphCheckpoint.model_validate((await store.get_run(done.run_id)).checkpoint).vars
    assert vars_ == {"n": -12, "ratio": 25.0}


@pytest.mark.parametrize("depth", [150, 100_000])
async def test_a_json_var_nested_deeper_than_a_run_keeps_is_refused(
    tmp_path: Path, store: Store, depth: int
) -> None:
    """It raised out of the launch (the checkpoint refused it; past the parser's depth, a
    RecursionError), with a traceback, where every other bad value is C109."""
    path = tmp_path / "flow.iter"
    path.write_text(NUMBERS.replace("  ratio: float = 0.5\n", "  ratio: float = 0.5\n  j: json\n"),
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(GraphError) as raised:
        await start_graph(
            Runner(store, env={}, cwd=tmp_path), path, vars={"j": "[" * depth + "]" * depth}
        )
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "C109"
    assert diagnostic.message.endswith("is not of type json (it nests deeper than 100 levels)")
    assert len(diagnostic.message) < 200
    assert await store.list_runs() == []
