"""A compute node is bounded by what it builds, not only by its steps: a value that would grow
past the language's bound (shared parts counted each time they appear), or an output past a
node's 1,000,000 bytes, fails the node at once with one line naming the bound; the run is
stored ``failed`` and the store stays small. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import start_graph
from recipes.runs import Runner
from tests.recipes.graph.flows import write_flow
from tests.recipes.runs.conftest import postgres_store

pytestmark = pytest.mark.anyio
HOG = Path(__file__).parents[2] / "hosts" / "bounds_recipe.py"


def _count(n: int) -> str:
    return "[" + ", ".join(str(i) for i in range(n)) + "]"


HOLDS = "a value grew past 1,000,000 elements and characters"
BUILT = "the expression built more than 10,000,000 elements and characters in all"
COMPARED = "the expression compared more than 1,000,000 elements in all"
OUTPUT = "more than the 1,000,000 a node's output may be"

GROWING = {
    "a doubling reduce": (f"reduce({_count(40)}, [0], (acc, x) => [acc, acc])", HOLDS),
    "a string concat doubling": (f"reduce({_count(40)}, 'ab', (acc, x) => concat(acc, acc))",
                                 HOLDS),
    "a string + doubling": (f"reduce({_count(40)}, 'ab', (s, x) => s + s)", HOLDS),
    "a nested map of a shared value": (
        f"reduce({_count(20)}, [0], (acc, x) => map([1, 2, 3, 4], i => acc))", HOLDS,
    ),
    "a map of a large value": (f"map({_count(300)}, i => outputs.seed.big)", HOLDS),
    "a join of a large value": (f"join(map({_count(30)}, i => outputs.seed.big), '')", HOLDS),
    "a string rebuilt at every step": (
        f"reduce({_count(200)}, outputs.seed.big, (s, i) => upper(slice(s, 1, 400000) + 'x'))",
        BUILT,
    ),
    "a shared value compared at every step": (
        f"reduce({_count(200)}, map({_count(500)}, i => outputs.seed.list), "
        "(acc, i) => if(acc == acc, acc, []))", COMPARED,
    ),
    "an output past its bytes": ("outputs.seed.big + outputs.seed.big", OUTPUT),
}  # fmt: skip
"""Each expression, and the bound its node names when it fails."""

FLOW = """\
compute seed:
  expr:
    big: "reduce({doubling}, 'x', (s, i) => s + s)"
    list: "map({thousand}, i => i)"

compute grow:
  expr:
    value: "{expr}"
    again: "{again}"

workflow w:
  entry: seed
  seed -> grow
  grow -> done
"""
"""``seed`` builds a string of 262,144 characters and a list of 1,000 numbers (within the
bounds); ``grow`` runs the expression over them (twice, for an output past its bytes)."""


def _flow(expr: str, doubling: int = 18) -> str:
    again = expr if "+" in expr and "reduce" not in expr else "1"
    return FLOW.format(doubling=_count(doubling), thousand=_count(1000), expr=expr, again=again)


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "sqlite":
        async with await open_sqlite_store(tmp_path / "state.db") as opened:
            yield opened
        return
    async with postgres_store("the compute bounds tests") as pg:
        yield pg


async def _stored_bytes(store: Store, run_id: str) -> int:
    """What the store holds of the run: its checkpoint and its events, as JSON."""
    run = await store.get_run(run_id)
    events = await store.list_events(run_id)
    return len(json.dumps(run.checkpoint)) + sum(len(json.dumps(e.data)) for e in events)


@pytest.mark.parametrize("case", GROWING.values(), ids=GROWING.keys())
async def test_a_compute_that_grows_past_its_bounds_fails_the_run_at_once(
    tmp_path: Path, store: Store, case: tuple[str, str]
) -> None:
    """Before, a doubling ``reduce`` built a value of 2**40 elements (gigabytes, minutes, the
    run left ``running``), and a ``map`` over a large value made an output of tens of
    megabytes, kept in the store several times over."""
    expr, bound = case
    flow = write_flow(tmp_path, _flow(expr))
    result = await start_graph(Runner(store, env={}, cwd=tmp_path), flow)
    assert result.status is RunStatus.FAILED
    assert result.error is not None and "\n" not in result.error
    assert result.error.startswith("node grow failed: ") and bound in result.error
    assert (await store.get_run(result.run_id)).status is RunStatus.FAILED
    (failed,) = [e.data for e in await store.list_events(result.run_id)
                 if e.type == "node_failed"]  # fmt: skip
    assert failed["code"] == ("OUTPUT_TOO_LARGE" if bound == OUTPUT else "VALUE_TOO_LARGE")
    assert await _stored_bytes(store, result.run_id) < 3_000_000


async def test_a_compute_within_the_bounds_still_builds_large_values(
    tmp_path: Path, store: Store
) -> None:
    """The bounds leave room: a string of 524,288 characters, a list of 100,000 elements."""
    flow = write_flow(tmp_path, _flow(f"length(map(map({_count(100)}, i => outputs.seed.list), "
                                      "l => length(l)))", doubling=19))  # fmt: skip
    result = await start_graph(Runner(store, env={}, cwd=tmp_path), flow)
    assert result.status is RunStatus.FINISHED, result.error
    assert result.text is not None and '"value": 100' in result.text


async def test_a_memory_error_in_a_node_fails_the_run(tmp_path: Path, store: Store) -> None:
    """A tool that runs out of memory in an agent node: the agent read the ``MemoryError`` as
    its tool's error and the node finished, in a process out of memory. The run is ``failed``
    now, and the error raised to the caller."""
    (tmp_path / "hog.py").write_text(HOG.read_text() + "\n\nrecipe = hog\n")
    flow = write_flow(
        tmp_path, "agent work:\n  recipe: ./hog.py\n\nworkflow w:\n  entry: work\n  work -> done\n"
    )
    with pytest.raises(MemoryError):
        await start_graph(Runner(store, env={}, cwd=tmp_path), flow)
    (run,) = await store.list_runs()
    assert run.status is RunStatus.FAILED
    assert run.error == "node work failed: MemoryError: the process ran out of memory"
