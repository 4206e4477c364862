"""Pages built from the code at every site build, so they cannot drift from it:

- ``reference/cli.md``: each command's ``--help`` as ``pi-recipes`` prints it, walked from the
  command line's own argparse parsers (hosts' commands through their own parsers);
- ``reference/diagnostics.md``: every diagnostic code of the workflow language, from
  :data:`recipes.graph.language.CATALOG`, where the codes are defined.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
from collections.abc import Iterator

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

CLI_PAGE = "reference/cli.md"
DIAGNOSTICS_PAGE = "reference/diagnostics.md"

INTRO = """# CLI reference

Generated from the command line's parsers when the site is built: each section is what
`pi-recipes … --help` prints. The commands `rpc`, `mcp`, `slack`, `email` and `serve` are
plugged in by pi-recipes' hosts through the `pi_recipes.commands` entry point group (see
[Building a host](../building-a-host.md)); their help is their host's own parser.
"""


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Every command path under ``parser``, depth first, in the parser's order."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.get_default("host_command") is not None:
                    yield (*path, name)  # a host's command: its own parser answers --help
                else:
                    yield from _commands(sub, (*path, name))


def _help(path: tuple[str, ...]) -> str:
    """What ``pi-recipes PATH --help`` prints, at a fixed width."""
    from hosts.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([*path, "--help"])
    return out.getvalue().rstrip()


def cli_reference() -> str:
    """The page's Markdown."""
    from hosts.cli import build_parser

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        sections = [INTRO]
        for path in _commands(build_parser(), ()):
            title = " ".join(("pi-recipes", *path))
            sections.append(f"## `{title}`\n\n```text\n{_help(path)}\n```\n")
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return "\n".join(sections)


DIAGNOSTICS_INTRO = """# Diagnostic codes

Every code `pi-recipes graph validate` (and `graph run`, before it starts) can report, generated
from the catalog where the codes are defined (`recipes.graph.language.CATALOG`). Codes follow
Iterion's where the rule is Iterion's: `E0xx` parse errors, `C0xx`/`C1xx`/`C2xx` compile and
validation rules; `S001` names a construct of Iterion's language this engine refuses rather than
ignores; `P0xx` are this engine's own rules. The fix column is the line a diagnostic carries
unless its site gives a more precise one (see [Workflows](../workflows.md#diagnostics)).

| code | severity | what | fix |
|---|---|---|---|
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def diagnostics_reference() -> str:
    """The page's Markdown: one row per code of the catalog, in code order."""
    from recipes.graph.language import CATALOG

    rows = [
        f"| <span id=\"{code}\">`{code}`</span> | {entry.severity} | {_cell(entry.title)} "
        f"| {_cell(entry.fix)} |"
        for code, entry in sorted(CATALOG.items())
    ]
    return DIAGNOSTICS_INTRO + "\n".join(rows) + "\n"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, CLI_PAGE, content=cli_reference()))
    files.append(File.generated(config, DIAGNOSTICS_PAGE, content=diagnostics_reference()))
    return files


_ROLE = re.compile(r":(?:func|class|mod|data|meth|attr|exc|obj|const):(<code>)~?")


def on_page_content(html: str, **kwargs: object) -> str:
    """The docstrings' Sphinx roles (``:func:`name```) show as the code they name."""
    return _ROLE.sub(r"\1", html)
