"""``pi-recipes graph validate`` as a newcomer meets it: a misspelled name gets the declared
name it most likely meant; a missing colon is said as such and the file is checked as if it
were there; a line that does not parse hides none of the other declarations' errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hosts.cli import main

TYPOS = """\
vars:
  audience: string = "dev"

schema draft_out:
  draft: string

agent draft:
  model: "openai:gpt-4.1"
  user: "For {{vars.audiense}}"
  output: draft_out

compute publish:
  output: draft_outt
  expr:
    draft: "upper(outputs.draftt.draft)"

compute check:
  output: draft_out
  expr:
    draft: "lower(outputs.draft.draf)"

workflow release:
  entry: drafts
  drafts -> publsh
  publish -> check
  check -> done
"""

HALF_READ = """\
schema out:
  text: string

agnet writer:
  model: "openai:gpt-4.1"

agent reviewer
  model "openai:gpt-4.1"
  output: outt

workflow w:
  entry: reviewer
  reviewer -> writer
  writer -> done
"""


def _validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> tuple[int, list[str]]:
    (tmp_path / "flow.iter").write_text(text, encoding="utf-8")
    code = main(["graph", "validate", str(tmp_path / "flow.iter")])
    lines = capsys.readouterr().out.splitlines()
    return code, [line.split(": ", 1)[1] for line in lines if " [" in line and ": " in line]


def test_a_misspelled_name_is_given_the_name_it_most_likely_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _validate(tmp_path, capsys, TYPOS)
    assert code == 1
    assert said == [
        "error [C033]: text of `draft`: no var `audiense`; did you mean `audience`?",
        "error [C002]: node `publish` uses schema `draft_outt`, not declared; did you mean "
        "`draft_out`?",
        "error [C029]: `publish.draft`: no node `draftt`; did you mean `draft`?",
        "error [C031]: `check.draft`: `draft` has no output field `draf`; did you mean `draft`?",
        "error [C008]: entry `drafts` is not a declared node; did you mean `draft`?",
        "error [C001]: edge drafts -> publsh: no node `drafts`; did you mean `draft`?",
        "error [C001]: edge drafts -> publsh: no node `publsh`; did you mean `publish`?",
    ]


def test_a_missing_colon_is_said_and_a_line_that_does_not_read_hides_no_other_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _validate(tmp_path, capsys, HALF_READ)
    assert code == 1
    assert said == [
        "error [E001]: unknown declaration `agnet`; did you mean `agent`?",
        "error [C002]: node `reviewer` uses schema `outt`, not declared; did you mean `out`?",
        "error [E005]: missing `:` at the end of `agent reviewer`: write `agent reviewer:`",
        "error [E005]: missing `:` after `model`: write `model: …`",
    ], "`writer` did not read: the errors naming it would be its parse error's, said once"


def test_a_misspelled_var_on_the_command_line_is_given_the_declared_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    flow = 'vars:\n  audience: string = "dev"\n\nworkflow w:\n  entry: c\n  c -> done\n\n'
    flow += 'compute c:\n  expr:\n    x: "vars.audience"\n'
    (tmp_path / "flow.iter").write_text(flow, encoding="utf-8")
    assert main(["graph", "run", "flow.iter", "--var", "audiense=ops", "--no-interactive"]) == 2
    assert "no var `audiense`; did you mean `audience`? (declared: audience)" in (
        capsys.readouterr().err
    )
    assert main(["runs", "list", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "[]", "no run was started"
