"""The language: every construct of the subset is read into the IR and written back to a file
that reads the same; the builder gives the same IR; bad input never crashes the parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interactions import UsageError
from recipes.graph import ir
from recipes.graph.builder import GraphBuilder
from recipes.graph.compiler import compile_graph, validate
from recipes.graph.language import parse, unparse

EVERY_CONSTRUCT = """\
# a comment line
vars:
  audience: string [enum: "dev", "ops"] = "dev"
  retries: int = 2
  ratio: float = 0.5
  strict: bool = false
  extra: json = `{"k": [1, 2]}`
  tags: string[] = `["a", "b"]`
  who: string

schema draft_out:
  draft: string
  tone: string [enum: "plain", "warm"]
  labels: string[] [enum: "x", "y"]

schema approval_out:
  approved: bool
  feedback: string

schema scored:
  score: int
  weight: float
  blob: json

prompt draft_sys:
  You draft release notes for {{vars.audience}}.
    An indented line keeps its extra indentation.
  # a hash in a prompt is text, not a comment

prompt draft_user:
  Feedback so far: {{outputs.approve.feedback}} (run {{run.id}}, pass {{loop.retry.iteration}})

agent draft:
  description: "Drafts the notes"
  recipe: ./writer.py          # a trailing comment
  agent: writer
  model: "openai:gpt-4.1-mini"
  system: draft_sys
  user: draft_user
  input: approval_out
  output: draft_out
  publish: notes_draft
  timeout: "10m"
  tools: [pick_highlight, "another tool"]
  interaction: human

judge check:
  model: "scripted:./judge.json"
  system: "Judge the draft: {{artifacts.notes_draft}}"
  user: |
    Draft:
    {{outputs.draft.draft}}
  output: approval_out
  interaction: none

human approve:
  description: `Approve "the notes"`
  instructions: "Approve the notes?"
  output: approval_out
  interaction: human

compute score:
  input: draft_out
  output: scored
  expr:
    score: "length(outputs.draft.labels) * vars.retries"
    weight: "if(vars.strict, 1.0, vars.ratio)"
    blob: "map(outputs.draft.labels, l => upper(l))"

tool lint:
  command: `echo '{"ok": true}' {{vars.who}} {{!input.raw}}`
  timeout: "30s"

router split:
  mode: fan_out_all

router gate:
  description: "Explicit guards"
  mode: condition

workflow release:
  entry: draft
  budget:
    max_parallel_branches: 2
    max_duration: "1h30m"
    max_iterations: 50
  vars:
    channel: string = "stable"
  draft -> check
  check -> approve when approved
  check -> draft when not approved as review(1)
  check -> fail
  approve -> gate when approved with { notes: "{{input.feedback}}", who: "{{vars.who}}" }
  approve -> draft when not approved as retry(2)
  approve -> fail
  gate -> split when "length(notes) > 1 || vars.strict"
  gate -> lint else
  split -> score
  split -> lint
  score -> done
  lint -> done
"""


def test_every_construct_is_read() -> None:
    graph, found = parse(EVERY_CONSTRUCT, "all.iter")
    assert found == []
    assert [v.name for v in graph.all_vars()] == [
        "audience", "retries", "ratio", "strict", "extra", "tags", "who", "channel",
    ]  # fmt: skip
    assert graph.vars[1].default == 2 and graph.vars[2].default == 0.5
    assert graph.vars[3].default is False and graph.vars[6].default is None
    assert graph.schema("draft_out").fields[2] == ir.Field(  # type: ignore[union-attr]
        name="labels", type="string[]", enum=("x", "y")
    )
    prompt = graph.prompt("draft_sys")
    assert prompt is not None and prompt.text.splitlines() == [
        "You draft release notes for {{vars.audience}}.",
        "  An indented line keeps its extra indentation.",
        "# a hash in a prompt is text, not a comment",
    ]
    draft = graph.node("draft")
    assert isinstance(draft, ir.LLMNode)
    assert (draft.recipe, draft.agent, draft.timeout) == ("./writer.py", "writer", "10m")
    assert draft.tools == ("pick_highlight", "another tool")
    assert draft.system == ir.Text(ref="draft_sys")
    check = graph.node("check")
    assert isinstance(check, ir.LLMNode) and check.judge and check.interaction == "none"
    assert check.user == ir.Text(text="Draft:\n{{outputs.draft.draft}}")
    approve = graph.node("approve")
    assert isinstance(approve, ir.HumanNode) and approve.description == 'Approve "the notes"'
    assert approve.instructions == ir.Text(text="Approve the notes?")
    edges = {(e.src, e.dst): e for e in graph.workflow.edges}
    assert edges["approve", "draft"].loop == ir.Loop(name="retry", max=2)
    assert edges["approve", "draft"].when == ir.Condition(field="approved", negated=True)
    assert edges["approve", "gate"].with_ == (
        ("notes", "{{input.feedback}}"), ("who", "{{vars.who}}"),
    )  # fmt: skip
    assert edges["gate", "split"].when == ir.Condition(expr="length(notes) > 1 || vars.strict")
    assert edges["gate", "lint"].otherwise
    assert graph.workflow.budget == ir.Budget(
        max_parallel_branches=2, max_duration="1h30m", max_iterations=50
    )
    assert graph.node("split") == ir.RouterNode(name="split", mode="fan_out_all")


ON_ONE_CLASS = '  fallbacks:\n    cheaper:\n      model: "x:y"\n      on: usage_window\n'


@pytest.mark.parametrize(
    ("props", "line", "message"),
    [
        ("  tools: shell\n", 3, "`tools:` takes a list: `tools: [a, b]`"),
        (ON_ONE_CLASS, 6, "`on:` takes a list: `on: [usage_window, unavailable]`"),
    ],
)
def test_a_list_property_given_one_value_is_refused_with_an_example(
    props: str, line: int, message: str
) -> None:
    _, found = parse('agent a:\n  model: "m"\n' + props, "l.iter")
    assert [(d.code, d.message, d.pos and d.pos.line) for d in found] == [("E002", message, line)]


def test_every_construct_round_trips() -> None:
    graph, _ = parse(EVERY_CONSTRUCT, "all.iter")
    text = unparse(graph)
    again, found = parse(text, "again.iter")
    assert found == []
    assert again == graph
    assert unparse(again) == text, "writing is stable"


def test_positions_point_at_what_was_written() -> None:
    graph, _ = parse(EVERY_CONSTRUCT, "all.iter")
    lines = EVERY_CONSTRUCT.splitlines()
    draft = graph.node("draft")
    assert draft is not None and draft.pos == ir.Pos("all.iter", lines.index("agent draft:") + 1, 7)
    edge = graph.workflow.edges[0]
    where = lines.index("  draft -> check") + 1
    assert edge.pos == ir.Pos("all.iter", where, 12), "an edge is placed at its target"


def test_a_chain_is_its_edges_and_the_clauses_belong_to_the_last_segment() -> None:
    text = 'agent a:\n  model: "m"\n\nagent b:\n  model: "m"\n\nworkflow w:\n  entry: a\n'
    graph, found = parse(text + '  a -> b -> done when "true"\n', "c.iter")
    assert found == []
    assert [(e.src, e.dst, e.when) for e in graph.workflow.edges] == [
        ("a", "b", None), ("b", "done", ir.Condition(expr="true")),
    ]  # fmt: skip


def test_the_builder_gives_the_same_ir_as_the_file() -> None:
    g = GraphBuilder()
    g.var("audience", "string", enum=["dev", "ops"], default="dev")
    g.schema("draft_out", draft="string")
    g.schema("approval_out", approved="bool", feedback="string")
    g.schema("notes_out", notes="string")
    sys_prompt = g.prompt("draft_sys", "You draft release notes for {{vars.audience}}.")
    g.agent("draft", recipe="./release.py", agent="writer", model="openai:gpt-4.1-mini",
            system=sys_prompt, output="draft_out", timeout="10m")  # fmt: skip
    g.human("approve", instructions="Approve the notes?", output="approval_out")
    g.compute("publish", output="notes_out", expr={"notes": "upper(outputs.draft.draft)"})
    w = g.workflow("release", entry="draft")
    w.edge("draft", "approve").edge("approve", "publish", when="approved")
    w.edge("approve", "draft", when="not approved", loop=("retry", 2))
    w.edge("approve", "fail").edge("publish", "done")
    built = g.build()
    issue_text = (Path(__file__).parent / "issue_example.iter").read_text(encoding="utf-8")
    parsed, found = parse(issue_text, "issue_example.iter")
    assert found == []
    assert built == parsed
    compiled = compile_graph(unparse(built))  # the builder's graph runs as the file does
    assert compiled.graph == parsed


def test_a_text_with_no_written_form_is_refused_not_mangled() -> None:
    g = GraphBuilder()
    g.prompt("p", "first paragraph\n\nsecond paragraph")  # profile 1 drops blank lines
    with pytest.raises(UsageError, match="no written form"):
        unparse(g.build())
    g2 = GraphBuilder()
    g2.agent("a", model="m", system='both " and ` quotes')
    with pytest.raises(UsageError, match="no written form"):
        unparse(g2.build())


def test_validate_reports_in_file_order_with_positions() -> None:
    graph, _ = parse(EVERY_CONSTRUCT, "all.iter")
    found = validate(graph)  # recipes are not loaded without a base directory
    assert [d.code for d in found if d.is_error] == []


_LINES = st.lists(
    st.sampled_from([
        "agent a:", "  model: \"m\"", "workflow w:", "  entry: a", "  a -> done", "  a -> b",
        "schema s:", "  x: string", "  y: int [enum: \"1\"]", "vars:", "  v: bool = true",
        "prompt p:", "  text {{vars.v}}", "human h:", "  output: s", "router r:",
        "  mode: fan_out_all", "  a -> a as l(0)", "\t  bad", "   misaligned", "compute c:",
        "  expr:", "    x: \"1 +\"", "  b -> c when \"x ==\" else", "supervisor s:", "  x: |",
        "    body", "  with { a: \"b\"", "`", "\"", "# comment", "", "  - item",
    ]),
    max_size=25,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_LINES)
def test_the_parser_returns_a_graph_and_diagnostics_for_any_lines(lines: list[str]) -> None:
    text = "\n".join(lines)
    graph, found = parse(text, "f.iter")
    assert isinstance(graph, ir.Graph)
    assert all(d.pos is not None and d.fix for d in found)
    if not any(d.is_error for d in found):
        validate(graph)  # the validator takes whatever the parser gave


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_the_parser_survives_arbitrary_text(text: str) -> None:
    graph, found = parse(text, "f.iter")
    assert isinstance(graph, ir.Graph)
    assert all(d.fix for d in found)


@pytest.mark.parametrize(
    "clauses",
    [
        {"when": "approved", "when_expr": "score > 3"},
        {"when": "approved", "otherwise": True},
        {"when_expr": "score > 3", "otherwise": True},
    ],
)
def test_a_built_edge_with_two_conditions_is_refused(clauses: dict[str, object]) -> None:
    """An edge is guarded by a field, or by an expression, or is the ``else``: one of them.
    Before, ``when_expr`` beside ``when`` was dropped in silence, and ``otherwise`` beside a
    condition built an edge no file can write."""
    flow = GraphBuilder().workflow("w", entry="a")
    with pytest.raises(UsageError, match="one of `when`, `when_expr` and `otherwise`"):
        flow.edge("a", "b", **clauses)  # type: ignore[arg-type]
    assert flow.edges == []
