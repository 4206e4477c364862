"""The workflow as a picture (:mod:`recipes.graph.picture`): every example laid out, written as
SVG (parsed back with ElementTree) and as Mermaid, naming every node and edge; texts escaped;
loops drawn as edges that go back; and a run's node states read from what it stored."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from interactions import UsageError
from interactions.store import MemoryStore, RunStatus
from recipes.graph import start_graph
from recipes.graph.compiler import GraphError, load_graph
from recipes.graph.picture import (
    Picture,
    draw_file,
    layout,
    picture_of,
    run_picture,
    to_mermaid,
    to_svg,
)
from recipes.runs import Runner
from tests.hosts.fake_providers import FakeProviders, fake_providers, usage_window
from tests.recipes.graph.fallback_flows import write_plan_phase

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples").glob("*.iter"))
NS = {"svg": "http://www.w3.org/2000/svg"}


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _declared(path: Path) -> tuple[set[str], list[tuple[str, str]]]:
    graph = load_graph(path).graph
    edges = [(e.src, e.dst) for e in graph.workflow.edges]
    return {n.name for n in graph.nodes} | {d for _, d in edges if d in ("done", "fail")}, edges


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_draws_as_svg_naming_every_node_and_edge(path: Path) -> None:
    nodes, edges = _declared(path)
    root = ET.fromstring(draw_file(path, "svg").split("\n", 1)[1])
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    groups = {g.get("id"): g for g in root.iterfind(".//svg:g", NS) if g.get("id")}
    for name in nodes:
        title = groups[f"node-{name}"].find("svg:title", NS)
        assert title is not None and title.text is not None and title.text.startswith(name)
        texts = [t.text for t in groups[f"node-{name}"].iterfind("svg:text", NS)]
        assert texts[0] == name
    for index, (src, dst) in enumerate(edges):
        title = groups[f"edge-e{index}"].find("svg:title", NS)
        assert title is not None and title.text is not None
        assert title.text.startswith(f"{src} → {dst}")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_draws_as_mermaid_naming_every_node_and_edge(path: Path) -> None:
    nodes, edges = _declared(path)
    text = draw_file(path, "mermaid")
    lines = text.splitlines()
    assert "flowchart TD" in lines
    for name in nodes:
        assert any(line.strip().startswith(f"n_{name}") and f'"{name}' in line for line in lines)
    for src, dst in edges:
        assert any(line.strip().startswith(f"n_{src} ") and line.endswith(f" n_{dst}")
                   for line in lines), (src, dst)  # fmt: skip


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_no_node_or_label_covers_another(path: Path) -> None:
    picture = layout(load_graph(path).graph)
    boxes = [(n.x, n.y, n.width, n.height) for n in picture.nodes]
    for e in picture.edges:
        if e.label_x is not None and e.label_y is not None:
            boxes.append((e.label_x - e.label_width / 2, e.label_y - 10, e.label_width, 20))
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b), (a, b)
    assert all(0 <= x <= picture.width and 0 <= y <= picture.height
               for e in picture.edges for x, y in e.points)  # fmt: skip


def test_a_loop_back_is_drawn_as_a_labelled_edge_that_goes_back() -> None:
    picture = layout(load_graph(ROOT / "examples" / "release_notes.iter").graph)
    by_ends = {(e.source, e.target): e for e in picture.edges}
    back = by_ends[("approve", "draft")]
    assert (back.back, back.kind, back.label) == (True, "loop", "not approved · ↻ retry ≤2")
    assert [e for e in picture.edges if e.back] == [back]
    assert by_ends[("approve", "publish")].label == "approved"
    entry = picture.node("draft")
    assert entry is not None and entry.entry and entry.kind == "agent"
    assert {n.id: n.kind for n in picture.nodes}["approve"] == "human"
    assert picture.model_dump(by_alias=True)["edges"][0]["from"] == "draft"
    assert "-.->" in to_mermaid(picture)


HOSTILE = """\
vars:
  tone: string = "plain"

schema out:
  text: string

compute first:
  output: out
  expr:
    text: "vars.tone"

compute second:
  output: out
  expr:
    text: "'second'"

workflow w:
  entry: first
  first -> second when "vars.tone == '<script>&\\"#x'"
  first -> done
  second -> second when "vars.tone == 'again'" as again(2)
  second -> done
"""


def test_texts_are_written_literally_and_a_self_loop_is_drawn_beside_its_node() -> None:
    picture = picture_of(HOSTILE)
    svg = to_svg(picture)
    labels = [t.text for t in ET.fromstring(svg.split("\n", 1)[1]).iterfind(".//svg:text", NS)]
    assert "vars.tone == '<script>&\\\"#x'" in labels, "as written"
    assert "<script>" not in svg
    mermaid = to_mermaid(picture)
    assert "<script>" not in mermaid and '&"' not in mermaid
    assert "#lt;script#gt;&\\#quot;#35;x" in mermaid
    loop = next(e for e in picture.edges if e.source == e.target == "second")
    node = picture.node("second")
    assert node is not None and loop.back and loop.label == "vars.tone == 'again' · ↻ again ≤2"
    assert all(x >= node.x + node.width for x, _ in loop.points), "beside, not across"


def test_a_workflow_that_does_not_parse_or_validate_is_refused_with_its_diagnostics(
    tmp_path: Path,
) -> None:
    with pytest.raises(GraphError, match="E"):
        picture_of("agent draft\n  oops\n")
    bad = tmp_path / "bad.iter"
    bad.write_text("workflow w:\n  entry: nowhere\n", encoding="utf-8")
    with pytest.raises(GraphError, match="entry `nowhere` is not a declared node"):
        draw_file(bad)
    with pytest.raises(UsageError, match="cannot read"):
        draw_file(tmp_path / "missing.iter")


def test_the_layout_of_a_text_is_remembered() -> None:
    assert picture_of(HOSTILE) is picture_of(HOSTILE)
    assert isinstance(picture_of(HOSTILE), Picture)


@pytest.fixture
def fake() -> Iterator[FakeProviders]:
    with fake_providers() as served:
        yield served


@pytest.mark.anyio
async def test_a_node_a_route_skipped_is_skipped_and_the_run_path_says_so(
    tmp_path: Path, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)
    fake.queue("openai", usage_window(reset="2s"))
    async with MemoryStore() as store:
        runner = Runner(store, env=fake.env(), cwd=tmp_path)
        done = await start_graph(runner, flow, vars={"plan_review_policy": "skip"})
        assert done.status is RunStatus.FINISHED, done.error
        seen = run_picture(await store.get_run(done.run_id))
    assert seen.states == {"plan": "done", "plan_review": "skipped", "plan_gate": "done",
                           "done": "done"}  # fmt: skip
    assert [(s.node, s.state, s.route) for s in seen.path] == [
        ("plan", "done", None), ("plan_review", "skipped", "give_up"), ("plan_gate", "done", None),
    ]  # fmt: skip


@pytest.mark.anyio
async def test_a_recipe_run_has_no_picture(tmp_path: Path) -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={"PI_ASK_USER_AUTO_APPROVE": "1"}, cwd=tmp_path)
        result = await runner.start(str(ROOT / "examples" / "release.py"), "Release v1.0.0")
        with pytest.raises(UsageError, match="is a recipe run, not a graph run"):
            run_picture(await store.get_run(result.run_id))


ROUTED_TO_FAIL = """\
schema out:
  ok: bool

compute check:
  output: out
  expr:
    ok: "false"

workflow w:
  entry: check
  check -> done when ok
  check -> fail
"""


@pytest.mark.anyio
async def test_a_cancelled_run_s_waiting_node_is_cancelled_and_a_run_routed_to_fail_fails_there(
    tmp_path: Path,
) -> None:
    flow = tmp_path / "fails.iter"
    flow.write_text(ROUTED_TO_FAIL, encoding="utf-8")
    async with MemoryStore() as store:
        runner = Runner(store, env={"PI_INTERRUPT_RESUME": "1"}, cwd=tmp_path)
        paused = await start_graph(runner, ROOT / "examples" / "release_notes.iter")
        assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
        assert run_picture(await store.get_run(paused.run_id)).states["draft"] == "waiting"
        await runner.cancel(paused.run_id)
        cancelled = run_picture(await store.get_run(paused.run_id))
        assert (cancelled.status, cancelled.states["draft"]) == ("cancelled", "cancelled")
        assert cancelled.states["done"] == "not_reached"
        failed = await start_graph(runner, flow)
        assert failed.status is RunStatus.FAILED
        seen = run_picture(await store.get_run(failed.run_id))
    assert seen.states == {"check": "done", "done": "not_reached", "fail": "failed"}


EVERY_KIND = """\
schema o:
  ok: bool

schema d:
  draft: string

router split:
  mode: fan_out_all

router pick:
  mode: condition

agent writer:
  model: "openai:gpt-4.1-mini"
  interaction: async
  output: d

judge review:
  model: "openai:gpt-4.1"
  output: o
  fallbacks:
    cheap:
      model: "anthropic:claude-haiku-4-5"

tool lint:
  command: `make lint`
  output: o

await_answers gate:
  from: writer
  timeout: "30m"

human sign:
  instructions: "Sign off?"
  output: o

compute merge:
  output: o
  expr:
    ok: "true"

workflow all:
  entry: split
  split -> writer
  split -> lint
  writer -> gate
  gate -> merge
  lint -> merge
  merge -> review
  review -> pick
  pick -> sign when ok
  pick -> fail else
  sign -> done when ok
  sign -> review when not ok as again(3)
  sign -> fail
"""


def test_every_kind_is_drawn_by_its_shape_and_named_in_the_legend() -> None:
    picture = picture_of(EVERY_KIND)
    kinds = {n.id: n.kind for n in picture.nodes}
    assert kinds == {
        "split": "fan_out", "pick": "router", "writer": "agent", "review": "judge",
        "lint": "tool", "gate": "await_answers", "sign": "human", "merge": "compute",
        "done": "done", "fail": "fail",
    }  # fmt: skip
    review = picture.node("review")
    assert review is not None and review.routes == "fallbacks: cheap"
    svg = ET.fromstring(to_svg(picture).split("\n", 1)[1])
    legend = svg.find(".//svg:g[@id='legend']", NS)
    assert legend is not None
    named = [t.text for t in legend.iterfind(".//svg:text", NS)]
    assert named == ["agent", "judge", "person (human)", "await answers", "compute", "tool",
                     "router", "fan out", "done", "fail", "goes back (loop)"]  # fmt: skip
    mermaid = to_mermaid(picture)
    for line in ('n_sign(["sign', 'n_gate[/"gate', 'n_lint[["lint', 'n_pick{"pick',
                 'n_split{"split', 'n_review{{"review', 'n_writer("writer'):  # fmt: skip
        assert line in mermaid, line

