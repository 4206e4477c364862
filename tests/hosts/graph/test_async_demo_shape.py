"""Iterion's async-questions demo shape (a drafting agent with ``interaction: async``, an
``await_answers`` gate, a finalizing agent) is read in full; the two constructs async questions
will add are refused by name, and nothing else in the file draws an error."""

from __future__ import annotations

from hosts.graph import ir
from hosts.graph.compiler import validate
from hosts.graph.language import parse

DEMO = """\
## A README drafting workflow shaped like Iterion's async-questions demo.

schema draft_out:
  draft: string

schema final_out:
  readme: string

prompt draft_sys:
  You draft a README skeleton for a small project.

  Two things only the operator can decide: the name and the tone.
  Post both questions first, then draft everything else with placeholders.

prompt draft_user:
  Start now: post your questions, then draft while the operator answers.

prompt finalize_sys:
  You finalize a README draft, resolving every placeholder.

prompt finalize_user:
  Draft:
  {{outputs.draft.draft}}

  Operator answers:
  {{outputs.gate.answers}}

agent draft:
  interaction: async
  system: draft_sys
  user: draft_user
  output: draft_out

## The sync point: wait here until every posted question is answered.
await_answers gate:
  from: draft
  timeout: "30m"

agent finalize:
  system: finalize_sys
  user: finalize_user
  output: final_out
  publish: readme

workflow async_questions:
  entry: draft
  draft -> gate
  gate -> finalize
  finalize -> done
"""


def test_the_demo_is_read_but_for_the_two_async_constructs() -> None:
    graph, found = parse(DEMO, "demo.iter")
    errors = [d for d in found if d.is_error]
    assert [d.code for d in errors] == ["S001", "S001"]
    assert "interaction: async" in errors[0].message and "not supported yet" in errors[0].message
    assert "await_answers" in errors[1].message and "not supported yet" in errors[1].message
    assert [n.name for n in graph.nodes] == ["draft", "finalize"]
    assert [p.name for p in graph.prompts] == [
        "draft_sys", "draft_user", "finalize_sys", "finalize_user",
    ]  # fmt: skip
    assert graph.prompt("finalize_user").text.splitlines() == [  # type: ignore[union-attr]
        "Draft:", "{{outputs.draft.draft}}", "Operator answers:", "{{outputs.gate.answers}}",
    ]  # fmt: skip
    finalize = graph.node("finalize")
    assert isinstance(finalize, ir.LLMNode) and finalize.publish == "readme"
    assert [(e.src, e.dst) for e in graph.workflow.edges] == [
        ("draft", "gate"), ("gate", "finalize"), ("finalize", "done"),
    ]  # fmt: skip


def test_with_a_human_gate_in_place_of_the_async_ones_it_validates() -> None:
    blocking = (
        DEMO.replace("  interaction: async\n", "")
        .replace('await_answers gate:\n  from: draft\n  timeout: "30m"',
                 'schema answers_out:\n  answers: string\n\n'
                 'human gate:\n  instructions: "Name and tone?"\n  output: answers_out')
    )  # fmt: skip
    graph, found = parse(blocking, "demo.iter")
    assert found == []
    problems = validate(graph)
    assert [d.code for d in problems if d.is_error] == []
    assert {d.code for d in problems} == {"C018"}, "agents without a model: a warning only"
