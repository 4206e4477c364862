"""The bounded expression language: values, built-ins, namespaces, and the bounds that keep
an expression from running away."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recipes.graph.language import ExpressionError, compile_expr

SCOPE = {
    "vars": {"n": 3, "policy": "skip", "tags": ["b", "a", "b"]},
    "outputs": {"scan": {"findings": [1, 2, 3], "note": "Hi "}, "plan": {"meta": {"k": "v"}}},
    "input": {"approved": True},
    "loop": {"retry": {"iteration": 1, "max": 2}},
    "run": {"id": "run-1"},
}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("7 / 2", 3.5), ("7 % 3", 1), ("-vars.n", -3),
        ("'a' + 'b'", "ab"), ("vars.n >= 3 && vars.policy == 'skip'", True),
        ("not input.approved or false", False), ("!(vars.n < 2)", True),
        ("vars.policy != \"wait\"", True), ("'abc' < 'abd'", True),
        ("length(outputs.scan.findings)", 3), ("length(outputs.scan.note)", 3),
        ("concat(vars.tags, ['c'])", ["b", "a", "b", "c"]), ("concat('x', 'y')", "xy"),
        ("unique(vars.tags)", ["b", "a"]), ("sort(vars.tags)", ["a", "b", "b"]),
        ("contains(vars.tags, 'a')", True), ("contains(outputs.scan.note, 'i')", True),
        ("join(vars.tags, '-')", "b-a-b"), ("tail(outputs.scan.findings, 2)", [2, 3]),
        ("if(vars.n > 2, 'big', 'small')", "big"), ("keys(outputs.plan.meta)", ["k"]),
        ("values(outputs.plan.meta)", ["v"]), ("slice(outputs.scan.findings, 0, 2)", [1, 2]),
        ("sum(outputs.scan.findings)", 6), ("min(outputs.scan.findings, 0)", 0),
        ("max(4, 9, 2)", 9), ("flatten([[1], [2, 3]])", [1, 2, 3]), ("floor(-2.5)", -3),
        ("round(2.5)", 3), ("round(-2.5)", -3), ("upper(outputs.scan.note)", "HI "),
        ("lower('Ab')", "ab"), ("trim(outputs.scan.note)", "Hi"),
        ("map(outputs.scan.findings, x => x * 10)", [10, 20, 30]),
        ("filter(outputs.scan.findings, x => x % 2 == 1)", [1, 3]),
        ("reduce(outputs.scan.findings, 0, (acc, x) => acc + x)", 6),
        ("outputs.scan.findings[1]", 2), ("outputs.plan.meta['k']", "v"),
        ("outputs.scan.findings[9]", None), ("outputs.nobody.field", None),
        ("outputs.scan.findings[1.0]", 2), ("outputs.scan.findings[-1]", 3),
        ("loop.retry.iteration < loop.retry.max", True), ("run.id", "run-1"),
        ("true && null == null", True),
        ("join([true, null, 1.5, ['é'], outputs.plan.meta], ' ')", 'true null 1.5 ["é"] {"k":"v"}'),
    ],
)  # fmt: skip
def test_values(text: str, value: Any) -> None:
    assert compile_expr(text).evaluate(SCOPE) == value


def test_a_bare_name_reads_the_edge_source() -> None:
    expr = compile_expr("approved && score > 5")
    assert expr.evaluate(SCOPE, {"approved": True, "score": 9}.get) is True
    assert expr.evaluate(SCOPE, {"approved": True, "score": 1}.get) is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 / 0", "division by zero"), ("'a' * 2", "needs a number"),
        ("nothing(1)", "unknown function"), ("length(1, 2)", "takes 1 argument"),
        ("vars.missing < 3", "needs a number"), ("sort([1, 'a'])", "one kind"),
        ("sort([true, 2])", "one kind"), ("sort([[1], [false]])", "one kind"),
        ("tail([1, 2, 3], 1.5)", "whole number"), ("slice('abc', 0.5, 2)", "whole number"),
        ("[1, 2][0.5]", "whole number"),
        ("upper(3)", "needs a string"),
        ("reduce([1, 2], 0, x => x)", "takes 1 parameter"),
    ],
)  # fmt: skip
def test_failures_are_typed(text: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        compile_expr(text).evaluate(SCOPE)


def test_evaluation_is_bounded() -> None:
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    runaway = f"map({ten}, a => map({ten}, b => map({ten}, c => map({ten}, d => map({ten}, "
    runaway += "e => e)))))"
    with pytest.raises(ExpressionError, match="more than 100000 steps"):
        compile_expr(runaway).evaluate(SCOPE)
    doubling = "reduce([" + ",".join(["1"] * 25) + "], 'xx', (s, i) => s + s)"
    with pytest.raises(ExpressionError, match="grew past"):
        compile_expr(doubling).evaluate(SCOPE)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="()[]'\"!&|<>=+-*/%.,x1 abcmapnotr=>", max_size=40))
def test_any_text_parses_or_raises_the_documented_error(text: str) -> None:
    try:
        expr = compile_expr(text)
    except ExpressionError:
        return
    with contextlib.suppress(ExpressionError):  # a typed failure is a documented outcome
        expr.evaluate(SCOPE, {"x": 1}.get)


def test_what_an_expression_reads_and_calls() -> None:
    expr = compile_expr("map(path.call, call => length(call.x)) + [vars.n, outputs.a.b][0]")
    assert [p for p, _ in expr.paths()] == [
        ("path", "call"), ("call", "x"), ("vars", "n"), ("outputs", "a", "b"),
    ]  # fmt: skip
    assert [(name, count) for name, count, _ in expr.calls()] == [("length", 1)]
    assert expr.parameters() == {"call"}


@pytest.mark.parametrize("text", ["1+" * 600 + "1", "-" * 5000 + "1", "x && " * 150 + "x"])
def test_an_expression_nested_too_deep_is_refused_not_a_crash(text: str) -> None:
    """``graph validate`` and ``graph run`` died on a RecursionError and its traceback."""
    with pytest.raises(ExpressionError, match="nests deeper than 100 levels"):
        compile_expr(text)


def test_unique_keeps_first_occurrences_of_any_value_kind() -> None:
    values = [{"a": [1, 2]}, [1], "x", 1, 1.0, True, None, {"a": [1, 2]}, [1], "x", False, None]
    assert compile_expr("unique(vars.v)").evaluate({"vars": {"v": values}}) == [
        {"a": [1, 2]}, [1], "x", 1, True, None, False,
    ]  # fmt: skip


def test_unique_of_a_long_list_is_linear() -> None:
    """45,000 distinct lists: it compared each with every one before it (quadratic: minutes);
    a canonical key makes it one pass. Run in a subprocess, bounded."""
    code = (
        "from recipes.graph.language import compile_expr\n"
        "big = [[i] for i in range(45000)]\n"
        "out = compile_expr('unique(vars.big)').evaluate({'vars': {'big': big}})\n"
        "assert len(out) == 45000\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=30, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


@pytest.mark.parametrize(
    "text",
    [
        "sort(vars.big)", "unique(vars.big)", "contains(vars.big, -1)", "sum(vars.big)",
        "max(vars.big)", "join(vars.big, ',')", "flatten([vars.big])", "concat(vars.big, [1])",
        "tail(vars.big, 200000)", "values(vars.map)",
        "reduce(vars.small, [], (acc, x) => acc + [x])",
        "filter(vars.small, x => vars.big == vars.big)",
    ],
)  # fmt: skip
def test_list_built_ins_count_their_work_against_the_step_budget(text: str) -> None:
    """Before, a built-in walking a list of 200,000 items counted as one step: a huge list, or
    a list rebuilt at every step of a reduce (quadratic), or two long lists compared at every
    step of a filter, went past the bound unseen."""
    scope = {"vars": {"big": list(range(200_000)), "small": list(range(1000)),
                      "map": {str(i): i for i in range(200_000)}}}  # fmt: skip
    with pytest.raises(ExpressionError, match="more than 100000 steps"):
        compile_expr(text).evaluate(scope)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("floor(vars.f * 10)", "finite"),
        ("round(vars.f * 10 - vars.f * 10)", "finite"), ("sum([vars.f, vars.f])", "finite"),
        ("reduce(vars.l, 3, (a, x) => a * a)", "grew past"),
    ],
)  # fmt: skip
def test_values_no_json_holds_are_typed_failures_not_crashes(text: str, message: str) -> None:
    """Before, ``floor`` of an overflowed float raised OverflowError or ValueError (a compute
    node crashed the run), a sum overflowed to ``inf`` (no JSON can hold it), and an integer
    squared at each step of a reduce grew for seconds, then minutes, each step counted as
    one."""
    scope = {"vars": {"f": 1e308, "l": list(range(40))}}
    with pytest.raises(ExpressionError, match=message):
        compile_expr(text).evaluate(scope)


def test_contains_of_anything_but_a_string_in_a_map_is_false() -> None:
    """A map's keys are strings. Before, a list looked up in a map raised TypeError
    (unhashable), which crashed the compute node's run."""
    scope = {"vars": {"m": {"a": 1}}}
    assert compile_expr("contains(vars.m, [1])").evaluate(scope) is False
    assert compile_expr("contains(vars.m, 'a')").evaluate(scope) is True


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 == true", False), ("0 != false", True), ("[1] == [true]", False),
        ("1 == 1.0", True), ("[1, vars.m] == [1.0, vars.n]", True),
        ("contains([1, 2], true)", False), ("contains([true], true)", True),
        ("contains([[1]], [1.0])", True),
    ],
)  # fmt: skip
def test_equality_is_json_equality(text: str, value: bool) -> None:
    """A bool is not a number: ``unique`` keeps both, and so do ``==`` and ``contains``.
    Before, Python's ``true == 1`` made ``outputs.x.count == true`` hold for a count of 1."""
    scope = {"vars": {"m": {"k": 2}, "n": {"k": 2.0}}}
    assert compile_expr(text).evaluate(scope) is value


@pytest.mark.parametrize(
    "text",
    [
        "reduce(vars.l, [0], (acc, x) => [acc, acc])",
        "reduce(vars.l, [0], (acc, x) => [acc] + [acc])",
        "reduce(vars.l, 'ab', (s, x) => concat(s, s))",
        "reduce(vars.l, [1], (acc, x) => map([1, 2, 3], i => acc))",
        "reduce(vars.l, [1], (acc, x) => filter([acc, acc], i => true))",
        "reduce(vars.l, [1], (acc, x) => flatten([[acc], [acc]]))",
        "reduce(vars.l, 'ab', (s, x) => join([s, s], ''))",
    ],
)  # fmt: skip
def test_a_value_holding_itself_twice_is_bounded_by_what_it_holds(text: str) -> None:
    """A list holding the same list twice takes little memory, but what it holds doubles at
    each step: written out (as a node's output is), 2**40 elements. It was counted by its own
    length (2) and went on, for gigabytes and minutes."""
    with pytest.raises(ExpressionError, match="grew past 1,000,000 elements") as caught:
        compile_expr(text).evaluate({"vars": {"l": list(range(40))}})
    assert caught.value.code == "VALUE_TOO_LARGE"


def test_what_an_evaluation_builds_in_all_is_bounded() -> None:
    """A string of 500,000 characters rebuilt at each of 100 steps (each step counted as one)."""
    text = "reduce(vars.l, vars.s, (s, x) => slice(s, 1, 600000) + 'x')"
    with pytest.raises(ExpressionError, match="more than 10,000,000 elements and characters"):
        compile_expr(text).evaluate({"vars": {"l": list(range(100)), "s": "y" * 500_000}})


@pytest.mark.parametrize(
    "text",
    [
        "map(vars.l, x => vars.nested == vars.nested)",
        "filter(vars.l, x => contains(vars.nested, [x]))",
        "map(vars.l, x => length(unique(vars.nested)))",
        "map(vars.l, x => length(sort(vars.nested)))",
    ],
)  # fmt: skip
def test_what_an_evaluation_compares_in_all_is_bounded(text: str) -> None:
    """Comparing walks whole values; a list of lists compared at every step was counted by
    its own length (3,000), not by all it holds (123,000), and went on for many seconds."""
    nested = [[[i, [i]] for i in range(10)] for _ in range(3000)]
    with pytest.raises(ExpressionError, match="compared more than 1,000,000 elements"):
        compile_expr(text).evaluate({"vars": {"l": list(range(300)), "nested": nested}})
