"""The indentation layer: a file's lines as a tree of blocks, before any line is parsed.

A line more indented than the one before it opens a block under it; a line less indented closes
blocks back to the one it aligns with (a line aligned with none is E003). Blank lines and
comment lines are skipped, except in raw bodies: under a ``prompt NAME:`` header and after a
``key: |`` block scalar, the deeper lines are text, kept as written (``#`` included), minus the
first line's indentation; blank lines in them are dropped (Iterion's profile 1). A line whose
``{`` is not closed continues on the next lines (an edge's ``with {`` mapping).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from recipes.graph.ir import Pos
from recipes.graph.language._diagnostics import Diagnostic, diag

__all__ = ["Block", "Line", "read_blocks"]

_PROMPT_HEADER = re.compile(r"^prompt\s+[A-Za-z_][A-Za-z0-9_]*\s*:\s*(#.*)?$")
_BLOCK_SCALAR = re.compile(r":\s*\|\s*(#.*)?$")


@dataclass(frozen=True)
class Line:
    """One logical line: its first physical line number, indentation and text (comments kept;
    the line parsers drop them)."""

    no: int
    indent: int
    text: str


@dataclass
class Block:
    """A line and the lines indented under it; ``raw`` holds a raw body's text lines."""

    line: Line
    children: list[Block] = field(default_factory=list)
    raw: list[str] | None = None


def _comment_or_blank(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith("#")


def _open_braces(text: str) -> int:
    """How many ``{`` the line leaves open, outside strings and comments."""
    depth, quote = 0, ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"`'":
            quote = char
        elif char == "#":
            break
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
    return depth


class _Reader:
    def __init__(self, text: str, file: str) -> None:
        self.lines = text.split("\n")
        self.file = file
        self.diagnostics: list[Diagnostic] = []
        self.index = 0

    def pos(self, no: int, col: int = 1) -> Pos:
        return Pos(self.file, no, col)

    def next_line(self) -> Line | None:
        """The next logical line, skipping blanks and comments; ``None`` at the end."""
        while self.index < len(self.lines):
            no, raw = self.index + 1, self.lines[self.index].rstrip("\r")
            self.index += 1
            if _comment_or_blank(raw):
                continue
            head = raw[: len(raw) - len(raw.lstrip(" \t"))]
            if "\t" in head:
                self.diagnostics.append(
                    diag("E003", "a tab in the indentation", self.pos(no, head.index("\t") + 1))
                )
            indent = len(head.expandtabs(2))
            text = raw.strip()
            while _open_braces(text) > 0 and self.index < len(self.lines):
                text += "\n" + self.lines[self.index].rstrip("\r").strip()
                self.index += 1
            return Line(no, indent, text)
        return None

    def raw_body(self, header: Line) -> list[str]:
        """The lines deeper than ``header`` as text, dedented by the first one's indentation."""
        body: list[str] = []
        first: int | None = None
        while self.index < len(self.lines):
            raw = self.lines[self.index].rstrip("\r")
            if not raw.strip():
                self.index += 1
                continue
            indent = len(raw) - len(raw.lstrip(" "))
            if indent <= header.indent:
                break
            if first is None:
                first = indent
            elif indent < first:
                self.diagnostics.append(
                    diag(
                        "E003",
                        "a text line less indented than the body's first line",
                        self.pos(self.index + 1, indent + 1),
                    )
                )
            body.append(raw[min(indent, first) :])
            self.index += 1
        return body


def read_blocks(text: str, file: str) -> tuple[list[Block], list[Diagnostic]]:
    """The top-level blocks of ``text``, and the indentation errors found."""
    reader = _Reader(text, file)
    roots: list[Block] = []
    stack: list[Block] = []
    while (line := reader.next_line()) is not None:
        block = Block(line)
        while stack and stack[-1].line.indent >= line.indent:
            closed = stack.pop()
            if closed.line.indent > line.indent and (
                not stack or stack[-1].line.indent < line.indent
            ):
                reader.diagnostics.append(
                    diag(
                        "E003",
                        "this line aligns with no enclosing block",
                        reader.pos(line.no, line.indent + 1),
                    )
                )
        if stack:
            stack[-1].children.append(block)
        elif line.indent > 0:
            reader.diagnostics.append(
                diag("E003", "a declaration must start at column 1", reader.pos(line.no))
            )
            roots.append(block)
        else:
            roots.append(block)
        if (line.indent == 0 and _PROMPT_HEADER.match(line.text)) or _BLOCK_SCALAR.search(
            line.text
        ):
            block.raw = reader.raw_body(line)
            continue
        stack.append(block)
    return roots, reader.diagnostics
