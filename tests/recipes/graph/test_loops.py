"""Loops at run time, in-process on a real SQLite store (compute nodes only, no model): a loop
nested in another starts over at each crossing of the outer one, and a fan-out's branches see
the loop counters of the line that opened them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import compile_graph, start_graph
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner

pytestmark = pytest.mark.anyio

COUNTS = """\
schema n_out:
  n: int

compute a:
  output: n_out
  expr:
    n: "loop.outer.iteration"

compute b:
  output: n_out
  expr:
    n: "loop.inner.iteration"

compute c:
  output: n_out
  expr:
    n: "loop.inner.iteration"

compute d:
  output: n_out
  expr:
    n: "loop.outer.iteration"

workflow nested:
  entry: a
  a -> b
  b -> c
  c -> b as inner(2)
  c -> d
  d -> a as outer(2)
  d -> done
"""


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


async def _run(store: Store, tmp_path: Path, text: str, run_id: str) -> GraphCheckpoint:
    flow = tmp_path / f"{run_id}.iter"
    flow.write_text(text, encoding="utf-8")
    done = await start_graph(Runner(store, env={}, cwd=tmp_path), flow, run_id=run_id)
    assert done.status is RunStatus.FINISHED, done.error
    return GraphCheckpoint.model_validate((await store.get_run(run_id)).checkpoint)


def _seen(cp: GraphCheckpoint, node: str) -> list[int]:
    return [int((r.output or {})["n"]) for r in cp.executions if r.node == node]


async def test_an_inner_loop_starts_over_at_each_pass_of_the_outer_one(
    tmp_path: Path, store: Store
) -> None:
    """``b -> c -> b as inner(2)`` inside ``a -> … -> d -> a as outer(2)``: every outer pass
    runs the inner loop in full. Before, the inner loop's body was computed as every node on a
    cycle through its edge — the outer loop's nodes too — so it was not seen as nested: its
    count was never reset, and the second and third outer passes ran ``b`` once each."""
    cp = await _run(store, tmp_path, COUNTS, "run-n")
    assert _seen(cp, "b") == [0, 1, 2] * 3
    assert _seen(cp, "a") == [0, 1, 2]
    plan = compile_graph(COUNTS).plan
    assert plan.loop_bodies == {
        "inner": frozenset({"b", "c"}),
        "outer": frozenset({"a", "b", "c", "d"}),
    }


async def test_a_loop_nested_by_its_header_alone_is_still_told_apart(
    tmp_path: Path, store: Store
) -> None:
    """Two loops back to the same node (``b``), one inside the other's body: ``c -> b as
    inner`` and ``d -> b as outer``, where ``d`` comes after ``c``."""
    text = COUNTS.replace("  d -> a as outer(2)\n", "  d -> b as outer(2)\n")
    cp = await _run(store, tmp_path, text, "run-h")
    assert _seen(cp, "b") == [0, 1, 2] * 3
    assert compile_graph(text).plan.loop_bodies["inner"] == frozenset({"b", "c"})


FANNED = """\
schema n_out:
  n: int

router split:
  mode: fan_out_all

compute left:
  output: n_out
  expr:
    n: "loop.again.iteration"

compute right:
  output: n_out
  expr:
    n: "loop.again.iteration"

compute join:
  output: n_out
  expr:
    n: "loop.again.iteration"

workflow fanned:
  entry: split
  split -> left
  split -> right
  left -> join
  right -> join
  join -> split as again(2)
  join -> done
"""


async def test_branches_opened_inside_a_loop_carry_its_counters(
    tmp_path: Path, store: Store
) -> None:
    """A fan-out inside ``again``: its branches read ``loop.again.iteration`` as the trunk
    does. Before, a branch started with no loop counters: it read 0 on every pass."""
    cp = await _run(store, tmp_path, FANNED, "run-f")
    assert _seen(cp, "join") == [0, 1, 2]
    assert _seen(cp, "left") == [0, 1, 2]
    assert _seen(cp, "right") == [0, 1, 2]


async def test_a_loop_crossed_in_a_branch_keeps_the_limit_the_trunk_spent(
    tmp_path: Path, store: Store
) -> None:
    """One loop, ``again(2)``, crossed on the trunk and, by a retry edge, inside a branch:
    its two crossings are the run's, wherever they happen. Before, the branch counted from
    0 on every pass and crossed it twice more each time."""
    text = FANNED.replace("  left -> join\n", "  left -> left as again(2)\n  left -> join\n")
    cp = await _run(store, tmp_path, text, "run-l")
    assert _seen(cp, "join") == [2]
    assert _seen(cp, "left") == [0, 1, 2]
