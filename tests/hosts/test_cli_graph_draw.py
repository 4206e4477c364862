"""``pi-recipes graph draw`` as a user runs it, each a real process: an example to an SVG file
and to Mermaid text (every example is drawn in tests/recipes/graph/test_picture.py, through the
function the command calls); a file that does not validate, or cannot be read, refused with the
diagnostics and nothing written; without the layout library, the extra to install."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.hosts.cli_helpers import ROOT, cli_env, pi

FLOW = ROOT / "examples" / "release_notes.iter"


def test_draw_writes_svg_to_a_file_and_mermaid_to_standard_output(tmp_path: Path) -> None:
    out = tmp_path / "release_notes.svg"
    done = pi("graph", "draw", str(FLOW), "-o", str(out), cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    svg = ET.parse(out).getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and float(svg.get("width", 0)) > 100
    names = {g.get("id") for g in svg.iter("{http://www.w3.org/2000/svg}g")}
    assert {"node-draft", "node-approve", "node-publish", "node-done", "node-fail"} <= names
    flow = FLOW
    mermaid = pi("graph", "draw", str(flow), "--format", "mermaid", cwd=tmp_path)
    assert mermaid.returncode == 0, mermaid.stderr
    assert "flowchart TD" in mermaid.stdout
    assert 'n_approve -.->|"not approved · ↻ retry ≤2"| n_draft' in mermaid.stdout


def test_draw_refuses_a_bad_file_saying_why_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.iter"
    bad.write_text("agent a:\n  model: \"scripted:a.json\"\n\nworkflow w:\n  entry: b\n"
                   "  a -> done\n", encoding="utf-8")  # fmt: skip
    out = tmp_path / "out.svg"
    done = pi("graph", "draw", str(bad), "-o", str(out), cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert "pi-recipes: usage: the workflow has 1 error(s):" in done.stderr
    assert "bad.iter:4:10: error [C008]: entry `b` is not a declared node" in done.stderr
    assert not out.exists()
    missing = pi("graph", "draw", str(tmp_path / "nowhere.iter"), cwd=tmp_path)
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr and "Traceback" not in missing.stderr
    unknown = pi("graph", "draw", str(bad), "--format", "png", cwd=tmp_path)
    assert unknown.returncode == 2 and "invalid choice: 'png'" in unknown.stderr


def test_draw_without_the_layout_library_names_the_extra(tmp_path: Path) -> None:
    """grandalf absent (an import of it fails, as in an environment without the extra)."""
    script = (
        "import sys; sys.modules['grandalf'] = None\n"
        "from hosts.cli import main\n"
        f"sys.exit(main(['graph', 'draw', {str(FLOW)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env=cli_env())  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "pi-recipes: usage: drawing a workflow needs grandalf: pip install 'pi-recipes[draw]'\n"
    )
