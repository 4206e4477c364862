"""``fallbacks:`` in the language: routes read, written back and built alike; every C173 case
reported at the route with its own fix line; C175 warns; Iterion's route fields outside the
subset are refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from hosts.cli._graph_commands import diagnostics_of
from recipes.graph import GraphBuilder, ir
from recipes.graph.compiler import GraphError, compile_graph, validate
from recipes.graph.language import CATALOG, parse, unparse

PLAN_REVIEW = """\
vars:
  plan_review_policy: string [enum: "wait", "skip"] = "wait"

schema review_out:
  approved: bool
  critique: string

schema gate_out:
  reviewed: bool

judge plan_review:
  model: "openai:gpt-4.1"
  output: review_out
  fallbacks:
    cheaper:
      model: "anthropic:claude-haiku-4-5"
      on: [usage_window, unavailable]
    give_up:
      action: skip
      when: "vars.plan_review_policy == 'skip'"
      on: [any]

compute plan_gate:
  output: gate_out
  expr:
    reviewed: "not outputs.plan_review._skipped and not outputs.plan_review._fallback_used"

workflow w:
  entry: plan_review
  plan_review -> plan_gate -> done
"""


def test_routes_read_in_order_and_write_back() -> None:
    graph, found = parse(PLAN_REVIEW, "flow.iter")
    assert found == []
    node = graph.node("plan_review")
    assert isinstance(node, ir.LLMNode) and node.judge
    assert [(r.name, r.model, r.action, r.on, r.when) for r in node.routes] == [
        ("primary", "openai:gpt-4.1", None, None, None),
        ("cheaper", "anthropic:claude-haiku-4-5", None, ("usage_window", "unavailable"), None),
        ("give_up", None, "skip", ("any",), "vars.plan_review_policy == 'skip'"),
    ]
    assert node.routes[0].triggers == ir.DEFAULT_TRIGGERS == ("usage_window", "unavailable")
    assert node.routes[2].skip and not node.routes[1].skip
    assert validate(graph) == []  # the gate may read the stamps of a node with routes
    text = unparse(graph)
    again, found = parse(text, "again.iter")
    assert found == [] and again == graph and unparse(again) == text


def test_the_builder_makes_the_same_graph() -> None:
    g = GraphBuilder()
    g.var("plan_review_policy", "string", enum=["wait", "skip"], default="wait")
    g.schema("review_out", approved="bool", critique="string")
    g.schema("gate_out", reviewed="bool")
    g.agent("plan_review", judge=True, model="openai:gpt-4.1", output="review_out", fallbacks=[
        g.route("cheaper", model="anthropic:claude-haiku-4-5",
                on=["usage_window", "unavailable"]),
        g.route("give_up", action="skip", when="vars.plan_review_policy == 'skip'", on=["any"]),
    ])  # fmt: skip
    g.compute("plan_gate", output="gate_out", expr={
        "reviewed": "not outputs.plan_review._skipped and not outputs.plan_review._fallback_used"
    })  # fmt: skip
    g.workflow("w", entry="plan_review").edge("plan_review", "plan_gate").edge("plan_gate", "done")
    assert g.build() == parse(PLAN_REVIEW)[0]
    compile_graph(unparse(g.build()))  # it runs as the file does


def _with_routes(routes: str, vars: str = 'vars:\n  policy: string = "wait"\n\n') -> str:
    return (
        f'{vars}agent a:\n  model: "openai:m"\n  fallbacks:\n{routes}\n'
        "workflow w:\n  entry: a\n  a -> done\n"
    )


C173_CASES = {
    "unknown action": (
        "    odd:\n      action: explode\n",
        "unknown action 'explode'",
        "Write `action: skip`",
    ),
    "skip with a model": (
        '    give_up:\n      action: skip\n      model: "openai:x"\n',
        "action: skip together with a model",
        "Remove `model:` from route `give_up`",
    ),
    "skip with a provider": (
        "    give_up:\n      action: skip\n      provider: openai\n",
        "action: skip together with `provider:`",
        "Remove `provider:` from route `give_up`",
    ),
    "skip with a backend": (
        "    give_up:\n      action: skip\n      backend: claw\n",
        "action: skip together with `backend:`",
        "Remove `backend:` from route `give_up`",
    ),
    "skip not last": (
        '    give_up:\n      action: skip\n    cheaper:\n      model: "anthropic:x"\n',
        "not the last one",
        "Move `give_up` to the end",
    ),
    "when: an undeclared var": (
        "    give_up:\n      action: skip\n      when: \"vars.polcy == 'skip'\"\n",
        "undeclared var `polcy`",
        "Declare `polcy` in `vars:`",
    ),
    "when: outside vars": (
        '    give_up:\n      action: skip\n      when: "outputs.a.text"\n',
        "only `vars.*` exists",
        "Gate the route on a var only",
    ),
    "when: does not parse": (
        '    give_up:\n      action: skip\n      when: "vars.policy =="\n',
        "does not parse",
        "Write the gate as an expression over vars",
    ),
    "neither model nor action": (
        "    cheaper:\n      on: [usage_window]\n",
        "neither a model nor an action",
        'Give route `cheaper` a `model: "provider:model"`',
    ),
    "duplicate names": (
        '    cheaper:\n      model: "anthropic:x"\n    cheaper:\n      model: "anthropic:y"\n',
        "reuses the name of an earlier route",
        "Rename one of the routes called `cheaper`",
    ),
    "the primary's name": (
        '    primary:\n      model: "anthropic:x"\n',
        "reuses the name of the node's own route",
        "Rename one of the routes called `primary`",
    ),
    "an empty on:": (
        '    cheaper:\n      model: "anthropic:x"\n      on: []\n',
        "empty `on:` list",
        "List the failure classes",
    ),
    "no route at all": ("", "`fallbacks:` declares no route", "Declare at least one named route"),
}


@pytest.mark.parametrize("case", sorted(C173_CASES))
def test_every_c173_case_names_the_route_and_a_fix(tmp_path: Path, case: str) -> None:
    routes, message, fix = C173_CASES[case]
    path = tmp_path / "flow.iter"
    path.write_text(_with_routes(routes), encoding="utf-8")
    found = [d for d in diagnostics_of(path) if d.code == "C173"]
    assert len(found) == 1, [d.format() for d in diagnostics_of(path)]
    [diagnostic] = found
    assert diagnostic.severity == "error" and message in diagnostic.message
    assert diagnostic.fix.startswith(fix) and diagnostic.fix != CATALOG["C173"].fix
    assert diagnostic.pos is not None and diagnostic.pos.line >= 4
    printed = diagnostic.format().splitlines()
    assert "error [C173]" in printed[0] and printed[1] == f"  fix: {diagnostic.fix}"
    with pytest.raises(GraphError):
        compile_graph(_with_routes(routes))


def test_an_unknown_on_class_warns_c175_and_the_file_still_compiles() -> None:
    text = _with_routes('    cheaper:\n      model: "anthropic:x"\n      on: [quota, any]\n')
    compiled = compile_graph(text)
    [warning] = [d for d in compiled.diagnostics if d.code == "C175"]
    assert warning.severity == "warning" and "'quota'" in warning.message
    assert warning.fix == CATALOG["C175"].fix and "usage_window" in warning.fix


def test_iterion_route_fields_outside_the_subset_are_refused_by_name() -> None:
    text = _with_routes('    cheaper:\n      model: "anthropic:x"\n      metered: true\n')
    _, found = parse(text, "flow.iter")
    assert [(d.code, "`metered:`" in d.message) for d in found] == [("S001", True)]


@pytest.mark.parametrize(
    ("declaration", "ok"),
    [
        ("llm_families: string[]", True),
        ("llm_families: json", True),
        ("llm_families: string", True),
        ("llm_families: int = 0", False),
        ('plan_review: string [enum: "auto", "on", "off"] = "auto"', True),
        ('plan_review: string = "auto"', True),
        ('plan_review: string [enum: "auto", "on"] = "auto"', False),
        ('plan_review: string = "sometimes"', False),
        ("plan_review: bool = false", False),
    ],
)
def test_credential_vars_are_declared_so_their_values_fit(declaration: str, ok: bool) -> None:
    graph, found = parse(f"vars:\n  {declaration}\n\n" + _with_routes("    x:\n      model: m\n"))
    assert found == []
    codes = [d.code for d in validate(graph) if d.is_error]
    assert ("P009" not in codes) is ok, codes


@pytest.mark.parametrize(
    ("model", "why"),
    [
        ("mistral:mistral-large", "unknown provider 'mistral'"),
        ("gpt-4.1", "expected '<provider>:<model>'"),
        ("openai: ", "the model part is empty"),
    ],
)
def test_a_model_the_engine_cannot_make_is_p015_at_compile_time(model: str, why: str) -> None:
    """On a fallback route and on the node's own model alike; before, the file compiled and
    the run was refused at launch."""
    routed = PLAN_REVIEW.replace('"anthropic:claude-haiku-4-5"', f'"{model}"')
    with pytest.raises(GraphError) as caught:
        compile_graph(routed, file="flow.iter")
    [found] = [d for d in caught.value.diagnostics if d.code == "P015"]
    assert found.message == (
        f"judge `plan_review`: fallback route `cheaper` names the model {model!r}: {why}"
    )
    assert found.pos is not None and found.pos.line == 15, "at the route"
    assert found.fix.startswith("Name the model in one of the accepted forms: openai:<model>")
    own = PLAN_REVIEW.replace('"openai:gpt-4.1"', f'"{model}"')
    with pytest.raises(GraphError) as caught:
        compile_graph(own, file="flow.iter")
    [found] = [d for d in caught.value.diagnostics if d.code == "P015"]
    assert found.message == f"judge `plan_review` names the model {model!r}: {why}"
