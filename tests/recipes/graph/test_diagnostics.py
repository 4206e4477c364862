"""Diagnostics: every code the engine emits is in the catalog with a fix line, and a minimal
file triggers each one, at the right place, printed like a compiler's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from hosts.cli._graph_commands import diagnostics_of
from interactions import UsageError
from recipes.graph.compiler import MAX_SOURCE
from recipes.graph.language import CATALOG
from tests.hosts.cli_helpers import PI_RECIPES, cli_env

ROOT = Path(__file__).resolve().parents[3]

OK = 'agent a:\n  model: "openai:m"\n\nworkflow w:\n  entry: a\n  a -> done\n'
TWO = 'agent a:\n  model: "openai:m"\n\nagent b:\n  model: "openai:m"\n\n'
APPROVAL = "schema verdict:\n  approved: bool\n  note: string\n\n"
WRITER = '''\
def recipe(api):
    @api.tool
    async def pick(tool_call_id, params, ctx, on_update):
        """Pick something."""
        return "picked"

    api.register_agent("writer", "Write.", model="scripted:none.json")
'''


def _flow(edges: str, nodes: str = TWO, extra: str = "") -> str:
    return f"{nodes}workflow w:\n  entry: a\n{extra}{edges}"


MINIMAL: dict[str, str | bytes] = {
    "E001": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  ? y'),
    "E002": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  output: "quoted"'),
    "E003": OK.replace('  model: "openai:m"', '    model: "openai:m"\n  description: "d"'),
    "E004": OK.replace('"openai:m"', '"openai:m'),
    "E005": OK.replace("model:", "model"),
    "E006": b'agent a:\n  description: "caf\xe9"\n',
    "E010": "schema s:\n  x: string\n\nschema s:\n  y: string\n\n" + OK,
    "E012": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  colour: red'),
    "E013": "tool t:\n  description: \"no command\"\n\nworkflow w:\n  entry: t\n  t -> done\n",
    "E020": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  interaction: sometimes'),
    "E021": "schema s:\n  x: strnig\n\n" + OK,
    "E030": _flow("  a -> b as l(1) as m(1)\n  a -> done\n  b -> done\n"),
    "E031": _flow("  a -> b when x else\n  a -> done\n  b -> done\n"),
    "E032": _flow("  a -> b when x -> done\n  a -> done\n"),
    "S001": "supervisor guard:\n  watches: [a]\n\n" + OK,
    "P001": OK.replace('  model: "openai:m"', "  recipe: ./missing.py"),
    "P002": OK.replace('  model: "openai:m"', "  recipe: ./writer.py\n  agent: nobody"),
    "P003": "schema s:\n  data: json\n\nhuman h:\n  output: s\n\nworkflow w:\n  entry: h\n"
            "  h -> done\n",
    "P004": _flow("  r -> a\n  r -> b\n  a -> done\n  b -> fail\n",
                  nodes=TWO + "router r:\n  mode: fan_out_all\n\n").replace("entry: a", "entry: r"),
    "P005": _flow("  r -> a\n  r -> q\n  q -> b\n  q -> c\n  a -> done\n  b -> done\n"
                  "  c -> done\n",
                  nodes=TWO + 'agent c:\n  model: "openai:m"\n\nrouter r:\n  mode: fan_out_all\n\n'
                  "router q:\n  mode: fan_out_all\n\n").replace("entry: a", "entry: r"),
    "P006": _flow("  r -> a when x\n  r -> b\n  a -> done\n  b -> done\n",
                  nodes=TWO + "router r:\n  mode: fan_out_all\n\n").replace("entry: a", "entry: r"),
    "P007": OK.replace("  entry: a", "  entry: a\n  budget:\n    max_duration: \"forever\""),
    "P008": OK.replace("  entry: a", "  entry: a\n  budget:\n    max_parallel_branches: 0"),
    "C001": OK.replace("a -> done", "a -> nowhere"),
    "C002": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  output: missing'),
    "C003": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  system: missing'),
    "C004": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  system: "bad {{vars}}"'),
    "C005": _flow("  a -> b as l(1)\n  b -> a as l(2)\n  a -> done\n  b -> done\n"),
    "C006": 'agent a:\n  model: "openai:m"\n',
    "C007": OK + "\nworkflow x:\n  entry: a\n",
    "C008": OK.replace("entry: a", "entry: z"),
    "C010": _flow("  a -> b\n  a -> done\n  b -> done\n"),
    "C011": APPROVAL + _flow("  a -> b when approved\n  a -> done when approved\n"
                             "  a -> done\n  b -> done\n",
                             nodes=TWO.replace('"openai:m"', '"openai:m"\n  output: verdict', 1)),
    "C012": APPROVAL + _flow("  a -> b when approved\n  b -> done\n",
                             nodes=TWO.replace('"openai:m"', '"openai:m"\n  output: verdict', 1)),
    "C013": APPROVAL + _flow("  a -> b when note\n  a -> done\n  b -> done\n",
                             nodes=TWO.replace('"openai:m"', '"openai:m"\n  output: verdict', 1)),
    "C014": APPROVAL + _flow("  a -> b when missing\n  a -> done\n  b -> done\n",
                             nodes=TWO.replace('"openai:m"', '"openai:m"\n  output: verdict', 1)),
    "C015": _flow("  a -> b else\n  b -> done\n"),
    "C016": _flow("  a -> done\n  b -> done\n"),
    "C019": _flow("  a -> b\n  b -> a\n"),
    "C026": _flow("  a -> b as l(0)\n  a -> done\n  b -> done\n"),
    "C029": OK.replace('  model: "openai:m"',
                       '  model: "openai:m"\n  system: "{{outputs.nope.x}}"'),
    "C031": OK.replace('  model: "openai:m"',
                       '  model: "openai:m"\n  system: "{{outputs.a.nofield}}"'),
    "C033": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  system: "{{vars.nope}}"'),
    "C035": OK.replace('  model: "openai:m"',
                       '  model: "openai:m"\n  system: "{{artifacts.nope}}"'),
    "C039": "compute c:\n  description: \"empty\"\n\nworkflow w:\n  entry: c\n  c -> done\n",
    "C040": "compute c:\n  expr:\n    x: \"1 +\"\n\nworkflow w:\n  entry: c\n  c -> done\n",
    "C041": OK + '\nagent a:\n  model: "n"\n',
    "C042": 'agent done:\n  model: "openai:m"\n\nworkflow w:\n  entry: done\n',
    "C109": "vars:\n  n: int = \"three\"\n\n" + OK,
    "C122": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  timeout: "soon"'),
    "C123": APPROVAL + _flow("  a -> b when approved\n  a -> done else\n  a -> b else\n"
                             "  b -> done\n",
                             nodes=TWO.replace('"openai:m"', '"openai:m"\n  output: verdict', 1)),
    "C124": APPROVAL + _flow("  a -> b when approved\n  a -> done else\n  a -> b\n"
                             "  b -> done\n",
                             nodes=TWO.replace('"openai:m"', '"openai:m"\n  output: verdict', 1)),
    "C125": 'vars:\n  n: int [enum: "1"]\n\n' + OK,
    "C126": 'vars:\n  mode: string [enum: "a", "b"] = "c"\n\n' + OK,
    "C127": 'vars:\n  mode: string [enum: "a", "a"] = "a"\n\n' + OK,
    "C138": "compute c:\n  expr:\n    x: \"length(1, 2)\"\n\nworkflow w:\n  entry: c\n"
            "  c -> done\n",
    "C140": "schema s:\n\n" + OK.replace('  model: "openai:m"', '  model: "openai:m"\n  output: s'),
    "C145": _flow("  a -> b as l(1)\n  b -> done\n"),
    "C018": OK.replace('  model: "openai:m"', '  description: "no model"'),
    "P010": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  backend: nowhere'),
    "C240": "schema s:\n  x: string\n\nhuman h:\n  output: s\n  interaction: async\n\n"
            "workflow w:\n  entry: h\n  h -> done\n",
    "C241": _flow("  a -> g\n  g -> done\n", nodes=OK.split("workflow")[0].replace(
                  '"openai:m"',
                  '"openai:m"\n  interaction: async') + "await_answers g:\n  from: a\n\n"),
    "C242": _flow("  a -> g\n  g -> done\n", nodes=OK.split("workflow")[0]
                  + 'await_answers g:\n  from: a\n  timeout: "1m"\n\n'),
    "C267": OK.replace('  model: "openai:m"',
                       '  model: "openai:m"\n  interaction: async\n  backend: codex'),
    "P012": _flow("  a -> b\n"),
    "P013": "schema s:\n  _skipped: bool\n\n"
            + OK.replace('  model: "openai:m"', '  model: "openai:m"\n  output: s'),
    "P011": _flow("  g -> a\n  a -> done\n", nodes=OK.split("workflow")[0].replace(
                  '"openai:m"', '"openai:m"\n  interaction: async')
                  + 'await_answers g:\n  from: a\n  timeout: "1m"\n\n').replace("entry: a",
                                                                               "entry: g"),
    "C173": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  fallbacks:\n    give_up:\n'
                       '      action: skip\n    cheap:\n      model: "openai:y"'),
    "P015": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  fallbacks:\n    cheap:\n'
                       '      model: "mistral:large"'),
    "C175": OK.replace('  model: "openai:m"', '  model: "openai:m"\n  fallbacks:\n    cheap:\n'
                       '      model: "openai:y"\n      on: [quota]'),
    "P014": "vars:\n  n: int = 1\n\ntool t:\n  command: `echo $(( {{vars.n}} + 1 ))`\n\n"
            "workflow w:\n  entry: t\n  t -> done\n",
    "P009": "vars:\n  llm_families: int = 0\n\n" + OK,
    "C249": _flow("  r -> a\n  r -> a\n  a -> done\n",
                  nodes=TWO.replace('agent b:\n  model: "openai:m"\n\n', "")
                  + "router r:\n  mode: fan_out_all\n\n").replace("entry: a", "entry: r"),
}  # fmt: skip


def _write(tmp_path: Path, text: str | bytes) -> Path:
    (tmp_path / "writer.py").write_text(WRITER, encoding="utf-8")
    path = tmp_path / "flow.iter"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_every_code_has_a_fix_line_and_a_minimal_file() -> None:
    assert all(entry.fix.strip() and entry.title for entry in CATALOG.values())
    assert sorted(MINIMAL) == sorted(CATALOG)


def test_every_code_the_engine_can_emit_is_in_the_catalog() -> None:
    emitted: set[str] = set()
    for path in (ROOT / "recipes" / "graph").rglob("*.py"):
        if path.name != "_diagnostics.py":  # the catalog itself
            emitted |= set(re.findall(r'"([CEPS][0-9]{3})"', path.read_text(encoding="utf-8")))
    assert emitted <= set(CATALOG)
    assert emitted == set(CATALOG), "a catalogued code nothing emits is a dead entry"


@pytest.mark.parametrize("code", sorted(MINIMAL))
def test_a_minimal_file_triggers_the_code(tmp_path: Path, code: str) -> None:
    found = diagnostics_of(_write(tmp_path, MINIMAL[code]))
    mine = [d for d in found if d.code == code]
    assert mine, f"{code} not reported; got {[d.format() for d in found]}"
    diagnostic = mine[0]
    assert diagnostic.severity == CATALOG[code].severity
    assert diagnostic.fix == CATALOG[code].fix or diagnostic.fix
    assert diagnostic.pos is not None and diagnostic.pos.file.endswith("flow.iter")
    assert diagnostic.pos.line >= 1 and diagnostic.pos.col >= 1
    line = diagnostic.format().splitlines()
    assert re.match(rf"^.*flow\.iter:\d+:\d+: (error|warning) \[{code}\]: .+", line[0])
    assert line[1].startswith("  fix: ")


def test_the_valid_minimal_file_has_no_diagnostic(tmp_path: Path) -> None:
    assert diagnostics_of(_write(tmp_path, OK)) == []


def test_a_file_saved_with_a_byte_order_mark_reads_as_without(tmp_path: Path) -> None:
    """Some Windows editors write a UTF-8 byte-order mark first; it used to be read as part
    of the first word (``unknown declaration `\ufeffagent` ``)."""
    path = tmp_path / "flow.iter"
    path.write_bytes(b"\xef\xbb\xbf" + OK.encode())
    assert diagnostics_of(path) == []
    path.write_bytes(b"\xef\xbb\xbf" + OK.replace('"openai:m"', '"openai:m').encode())
    (error,) = diagnostics_of(path)
    assert (error.code, error.pos.line, error.pos.col) == ("E004", 2, 10), error


def test_a_compute_expression_error_points_at_its_own_line(tmp_path: Path) -> None:
    """It pointed at the node's header, however many expressions the node had."""
    text = ('compute c:\n  expr:\n    ok: "1 + 1"\n    bad: "1 +"\n'
            '    lost: "outputs.nope.x"\n\nworkflow w:\n  entry: c\n  c -> done\n')  # fmt: skip
    found = {d.code: d.pos for d in diagnostics_of(_write(tmp_path, text))}
    assert found["C040"] is not None and (found["C040"].line, found["C040"].col) == (4, 5)
    assert found["C029"] is not None and (found["C029"].line, found["C029"].col) == (5, 5)


def _chain(n: int, back_to: int | None = None) -> str:
    nodes = "".join(f'compute c{i}:\n  expr:\n    n: "1"\n\n' for i in range(n))
    edges = "".join(f"  c{i} -> c{i + 1}\n" for i in range(n - 1))
    last = f"  c{n - 1} -> {'done' if back_to is None else f'c{back_to}'}\n"
    return f"{nodes}workflow w:\n  entry: c0\n{edges}{last}"


def test_a_chain_of_thousands_of_nodes_is_checked_cycle_and_all(tmp_path: Path) -> None:
    """Past about 990 nodes the cycle check ran out of Python's stack: a RecursionError."""
    assert diagnostics_of(_write(tmp_path, _chain(3000))) == []
    (cycle,) = [d for d in diagnostics_of(_write(tmp_path, _chain(3000, back_to=2990)))]
    assert cycle.code == "C019"
    assert cycle.message.startswith("the cycle c2990 -> c2991 -> ")


def test_a_file_no_workflow_could_be_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    """A 60 MB file took 2.5 GB and ``/dev/zero`` ended in a MemoryError traceback."""
    big = tmp_path / "big.iter"
    big.write_bytes(b"x" * (MAX_SOURCE + 1))
    for path in (big, Path("/dev/zero")):
        with pytest.raises(UsageError, match="is larger than 4,000,000 bytes: not a workflow"):
            diagnostics_of(path)


def test_a_diagnostic_quoting_a_huge_name_is_cut(tmp_path: Path) -> None:
    """Each diagnostic quoted the name whole: a 100,000-character one filled the terminal."""
    found = diagnostics_of(_write(tmp_path, f"agent {'x' * 100_000}:\n"))
    assert found and all(len(d.message) <= 1000 for d in found)
    assert any(d.message.endswith("…") for d in found)


def test_outside_the_subset_names_the_construct(tmp_path: Path) -> None:
    cases = {
        OK.replace('  model: "openai:m"',
                   '  model: "openai:m"\n  interaction: review'): "interaction: review",
        OK.replace('  model: "openai:m"', '  model: "openai:m"\n  backend: claw'): "backend `claw`",
        OK.replace('  model: "openai:m"',
                   '  model: "openai:m"\n  fallbacks:\n    cheap:\n      model: "x"\n'
                   '      provider: openai'): "`provider:`",
        OK.replace("a -> done", "a -> done as l(unbounded 3)"): "unbounded",
        "router r:\n  mode: round_robin\n\n" + OK: "round_robin",
        "schema s:\n  up: file\n\n" + OK: "`file`",
        OK.replace('  model: "openai:m"',
                   '  model: "openai:m"\n  system: "{{secrets.key}}"'): "`secrets`",
    }  # fmt: skip
    for text, named in cases.items():
        found = [d for d in diagnostics_of(_write(tmp_path, text)) if d.code == "S001"]
        assert found and named in found[0].message, (named, found)


def test_graph_validate_prints_like_a_compiler_and_exits_1_on_errors(tmp_path: Path) -> None:
    bad = _write(tmp_path, MINIMAL["C019"])
    done = subprocess.run([PI_RECIPES, "graph", "validate", str(bad)], capture_output=True,
                          text=True, timeout=60, env=cli_env())  # fmt: skip
    assert done.returncode == 1
    first, fix = done.stdout.splitlines()[:2]
    assert re.match(r"^.*flow\.iter:\d+:\d+: error \[C019\]: the cycle a -> b -> a", first)
    assert fix == f"  fix: {CATALOG['C019'].fix}"
    assert done.stdout.splitlines()[-1].endswith("does not validate: 1 error(s), 0 warning(s)")
    good = _write(tmp_path, MINIMAL["C145"])  # a warning only
    done = subprocess.run([PI_RECIPES, "graph", "validate", str(good), "--json"],
                          capture_output=True, text=True, timeout=60, env=cli_env())  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert '"code": "C145"' in done.stdout and '"errors": 0' in done.stdout


ROUTED = """\
schema approval_out:
  approved: bool
  feedback: string

schema r_out:
  result: string

human approve:
  instructions: "Ship it?"
  output: approval_out

router decide:
  mode: condition

compute ship:
  output: r_out
  expr:
    result: "'shipped'"

compute hold:
  output: r_out
  expr:
    result: "'held'"

workflow w:
  entry: approve
  approve -> decide
  decide -> ship {condition}
  decide -> hold {other}
  ship -> done
  hold -> done
"""


def test_a_condition_router_reads_only_fields_its_input_can_have(tmp_path: Path) -> None:
    """A router's output is its input: a condition naming a field no edge into it carries
    reads as false at run time, and the run silently takes the other way (an approval typed
    `aproved` routed every approved run to `hold`). It is C014, as on any other source."""
    typos = {
        ("when aproved", "when not aproved"): "has no field `aproved`",
        ('when "aproved"', "else"): "has no output field `aproved`",
    }
    for (condition, other), message in typos.items():
        text = ROUTED.replace("{condition}", condition).replace("{other}", other)
        found = [d for d in diagnostics_of(_write(tmp_path, text)) if d.is_error]
        assert found and {d.code for d in found} == {"C014"}, [d.format() for d in found]
        assert message in found[0].message and "decide" in found[0].message
    fine = {
        ("when approved", "when not approved"): ROUTED,
        ("when \"approved and feedback == ''\"", "else"): ROUTED,
        ("when go", "when not go"): ROUTED.replace(  # what `with` carries is the input
            "approve -> decide", 'approve -> decide with { go: "{{input.approved}}" }'
        ),
        ("when ok", "when not ok"): ROUTED.replace(  # a tool's output is not known statically
            'human approve:\n  instructions: "Ship it?"\n  output: approval_out',
            "tool approve:\n  command: \"echo '{}'\"",
        ),
    }
    for (condition, other), flow in fine.items():
        text = flow.replace("{condition}", condition).replace("{other}", other)
        assert [d.format() for d in diagnostics_of(_write(tmp_path, text))] == []


def test_what_a_human_node_declined_can_be_read(tmp_path: Path) -> None:
    """Its output lists the declined questions under `_declined` (the README says so); reading
    it was refused (C031), as if no such field existed."""
    flow = ROUTED.replace("{condition}", "when approved").replace("{other}", "when not approved")
    declined = flow.replace(
        "result: \"'shipped'\"",
        "result: \"if(outputs.approve._declined == null, 'shipped', 'shipped, unasked')\"",
    )
    assert declined != flow
    assert [d.format() for d in diagnostics_of(_write(tmp_path, declined))] == []
    typo = declined.replace("_declined", "_decline")
    assert [d.code for d in diagnostics_of(_write(tmp_path, typo))] == ["C031"]


def test_an_output_field_named_like_the_engines_own_is_refused(tmp_path: Path) -> None:
    """``_skipped``, ``_fallback_used``, ``_declined``...: the engine writes these on a node's
    output. Before, a schema could declare them too: a compute node could set ``_skipped`` and
    a gate reading it could not tell the engine's stamp from the author's value."""
    text = (
        "schema s:\n  note: string\n  _skipped: bool\n  _mine: string\n\n"
        + OK.replace('  model: "openai:m"', '  model: "openai:m"\n  output: s')
        + "\nschema unused:\n  _free: string\n"
    )
    found = [d for d in diagnostics_of(_write(tmp_path, text)) if d.code == "P013"]
    assert [(d.message, d.pos.line if d.pos else 0) for d in found] == [
        ("field `_skipped` of schema `s` (the output of `a`) starts with `_`: names that start "
         "with `_` are the engine's own (`_skipped`, `_fallback_used`, `_served_by`, "
         "`_backend`, `_declined`)", 3),
        ("field `_mine` of schema `s` (the output of `a`) starts with `_`: names that start "
         "with `_` are the engine's own (`_skipped`, `_fallback_used`, `_served_by`, "
         "`_backend`, `_declined`)", 4),
    ]  # fmt: skip
    assert all(d.is_error for d in found)


def test_a_compute_field_given_two_expressions_is_refused(tmp_path: Path) -> None:
    """Before, the second expression silently replaced the first (no diagnostic)."""
    text = ('schema s:\n  x: int\n\ncompute c:\n  output: s\n  expr:\n    x: "1"\n    x: "2"\n'
            "\nworkflow w:\n  entry: c\n  c -> done\n")  # fmt: skip
    (found,) = diagnostics_of(_write(tmp_path, text))
    assert (found.code, found.severity, found.pos and found.pos.line) == ("E010", "error", 8)
    assert found.message == "compute `c` gives two expressions for `x`"
