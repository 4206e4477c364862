"""The docs site builds with warnings as errors (the command docs/index.md prints), and its
generated pages hold what the code defines: every command's help, every diagnostic code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def _page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    docs = ROOT / "docs"
    pages = sorted(p.relative_to(docs).with_suffix("") for p in docs.rglob("*.md"))
    for page in pages:
        name = "" if page.name == "index" and page.parent == Path() else str(page)
        assert (site / name / "index.html").is_file(), page


def test_the_cli_reference_has_every_command_s_help(site: Path) -> None:
    from hosts.cli import build_parser

    page = _page(site, "reference/cli")
    for command in ("run", "graph", "runs", "worker", "rpc", "mcp", "slack", "serve"):
        assert f"pi-recipes {command}</code>" in page, command
    for runs in ("list", "show", "pending", "questions", "answer", "resume", "cancel", "retry",
                 "recover", "expire"):  # fmt: skip
        assert f"pi-recipes runs {runs}</code>" in page, runs
    assert "usage: pi-recipes runs answer" in page
    assert "usage: pi-recipes serve" in page  # the web host's own parser
    assert build_parser().prog == "pi-recipes"


def test_the_diagnostics_page_lists_every_code(site: Path) -> None:
    from recipes.graph.language import CATALOG

    page = _page(site, "reference/diagnostics")
    for code in CATALOG:
        assert f'<span id="{code}"><code>{code}</code></span>' in page, code


def test_the_api_reference_renders_the_docstrings(site: Path) -> None:
    page = _page(site, "reference/api/interactions")
    assert 'id="interactions.ask_user_question"' in page
    assert ":func:<code>" not in page and "<code>ask_user_question</code>" in page  # roles read
    assert 'id="recipes.runs.Runner"' in _page(site, "reference/api/runs")


def test_the_api_reference_has_every_public_module(site: Path) -> None:
    """Every module the public surface pins has its section, with its docstring's members."""
    from tests.test_public_surface import PUBLIC

    pages = "".join(
        page.read_text(encoding="utf-8") for page in (site / "reference" / "api").rglob("*.html")
    )
    loaded_lazily = {"recipes.graph"}  # its names are documented in the modules that hold them
    for module in sorted(set(PUBLIC) - loaded_lazily):
        if module == "hosts" or module.endswith(".testing"):
            continue  # packages that export nothing themselves
        assert f'id="{module}"' in pages, module
