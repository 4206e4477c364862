"""Where each ``{{…}}`` of a tool node's ``command:`` stands in the shell's grammar, and the
command that reads each value from the environment instead of from its text.

A value is never written into the command: :func:`bind_command` replaces each (non-raw)
reference with an expansion of an environment variable of its own (``PI_VAR_1``, ...) spelled
for the quoting context it stands in, and the caller passes the values in the command's
environment. The shell expands a variable once and never parses what it holds, so a value
with quotes, ``$(…)``, backticks, ``;``, newlines or globs arrives verbatim:

- in a bare word (also inside ``$(…)`` and backticks): ``"${PI_VAR_1}"``;
- inside ``"…"`` or an unquoted here-document's body: ``${PI_VAR_1}``;
- inside ``'…'``: ``'"${PI_VAR_1}"'`` (the quote is closed around it), ``$'…'`` likewise;
- in a comment: ``${PI_VAR_1}`` (never read).

Where bash would evaluate the text it expands a second time, no spelling is safe, and the
reference is refused (:func:`unsafe_references`, the compiler's ``P014``): shell arithmetic
(``$((…))``, ``((…))``, ``let``, a ``[[ … ]]`` comparing numbers with ``-eq``, ``-lt``...; its
array subscripts run commands), a ``${…}`` expansion (a subscript again), and the body of a
quoted here-document (``<<'EOF'``: nothing in it expands, the value would not arrive).

The scan is a lexer, not a parser: it follows quotes, escapes, ``$(…)``, backticks, ``${…}``,
arithmetic, comments and here-documents. What it cannot follow (a ``case`` pattern's ``)``
inside ``$(…)``) can make a value arrive with its quotes misplaced, never run it: a
variable's value is not shell text whatever surrounds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from recipes.expressions import Ref, references

__all__ = ["Bound", "Context", "bind_command", "reference_contexts", "unsafe_references"]

Context = Literal[
    "word", "double", "single", "ansi", "heredoc", "comment",
    "arithmetic", "expansion", "literal_heredoc",
]  # fmt: skip
"""Where a reference stands: the first six have a safe spelling, the last three none."""

UNSAFE: dict[str, str] = {
    "arithmetic": "inside shell arithmetic, whose array subscripts run the commands a value holds",
    "expansion": "inside a `${…}` expansion, whose array subscripts run the commands a value holds",
    "literal_heredoc": "inside a quoted here-document (`<<'EOF'`), where nothing expands",
}
"""Why each refused context is refused (a diagnostic's message)."""

_SPELLING: dict[str, str] = {
    "word": '"${%s}"',
    "double": "${%s}",
    "heredoc": "${%s}",
    "comment": "${%s}",
    "single": "'\"${%s}\"'",
    "ansi": "'\"${%s}\"$'",
}
_ARITHMETIC_TEST = re.compile(r"-(?:eq|ne|lt|le|gt|ge)\b")
_WORD_START = " \t\n;&|()<>"
_LET = re.compile(r"(?:^|[;&|\n(`])\s*let\s+[^;&|\n]*$")


@dataclass
class _Frame:
    kind: str  # cmd, sub, backtick, double, single, ansi, arith, param, comment, heredoc, test
    depth: int = 0
    start: int = 0
    delimiter: str = ""
    strip_tabs: bool = False
    literal: bool = False


def reference_contexts(command: str) -> list[tuple[Ref, Context]]:
    """Each reference of ``command`` (raw ones too) with the context it stands in."""
    refs = {r.offset: r for r in references(command)}
    found: list[tuple[Ref, Context]] = []
    stack = [_Frame("cmd")]
    pending: list[_Frame] = []  # here-documents whose bodies start at the next newline
    tests: list[tuple[int, int, list[int]]] = []  # each [[ … ]]: start, end, its references
    lets: list[int] = []  # the references after a `let` on its line
    i, n = 0, len(command)
    while i < n:
        top = stack[-1]
        if top.kind == "heredoc" and (i == 0 or command[i - 1] == "\n"):
            end = command.find("\n", i)
            line = command[i : n if end < 0 else end]
            if (line.lstrip("\t") if top.strip_tabs else line) == top.delimiter:
                stack.pop()
                i = n if end < 0 else end + 1
                continue
        if i in refs:
            ref = refs[i]
            found.append((ref, _context(stack)))
            if any(f.kind == "test" for f in stack):
                tests[-1][2].append(len(found) - 1)
            if top.kind in ("cmd", "sub", "backtick") and _LET.search(command, 0, i):
                lets.append(len(found) - 1)
            i += len(ref.text)
            continue
        char, two = command[i], command[i : i + 2]
        kind = top.kind
        if kind == "single":
            if char == "'":
                stack.pop()
            i += 1
            continue
        if kind == "comment":
            if char == "\n":
                stack.pop()
                continue  # the newline may start a here-document's body
            i += 1
            continue
        if kind == "heredoc" and top.literal:  # a quoted here-document: nothing is special
            i += 1
            continue
        if char == "\\":  # it escapes the next character, not a reference's first
            i += 1 if i + 1 in refs else 2
            continue
        if kind == "ansi":
            if char == "'":
                stack.pop()
            i += 1
            continue
        if command.startswith("$((", i):
            stack.append(_Frame("arith"))
            i += 3
            continue
        if two == "$(":
            stack.append(_Frame("sub"))
            i += 2
            continue
        if two == "${" and i + 1 not in refs:  # `${{{…}}}` is a `$` and a reference
            stack.append(_Frame("param"))
            i += 2
            continue
        if char == "`":
            if kind == "backtick":
                stack.pop()
            else:
                stack.append(_Frame("backtick"))
            i += 1
            continue
        if kind == "double" or (kind == "heredoc" and not top.literal):
            if char == '"' and kind == "double":
                stack.pop()
            i += 1
            continue
        if kind == "arith":
            if char == "(":
                top.depth += 1
            elif char == ")":
                if top.depth == 0:
                    stack.pop()
                    i += 2 if two == "))" else 1
                    continue
                top.depth -= 1
            i += 1
            continue
        if kind == "param":
            if char == "{":
                top.depth += 1
            elif char == "}":
                if top.depth == 0:
                    stack.pop()
                else:
                    top.depth -= 1
            elif char in "'\"":
                stack.append(_Frame("single" if char == "'" else "double"))
            i += 1
            continue
        # a command: cmd, sub, backtick or test
        at_word_start = i == 0 or command[i - 1] in _WORD_START
        if two == "$'":
            stack.append(_Frame("ansi"))
            i += 2
        elif two == '$"' or char == '"':
            stack.append(_Frame("double"))
            i += len(two) if two == '$"' else 1
        elif char == "'":
            stack.append(_Frame("single"))
            i += 1
        elif char == "#" and at_word_start:
            stack.append(_Frame("comment"))
            i += 1
        elif two == "((" and at_word_start:
            stack.append(_Frame("arith"))
            i += 2
        elif two == "[[" and at_word_start and kind != "test":
            stack.append(_Frame("test", start=i))
            tests.append((i, n, []))
            i += 2
        elif two == "]]" and kind == "test":
            stack.pop()
            start, _, indexes = tests[-1]
            tests[-1] = (start, i, indexes)
            i += 2
        elif command.startswith("<<<", i):  # a here-string: a word follows
            i += 3
        elif two == "<<":
            i = _heredoc(command, i + 2, pending)
        elif char == "(" and kind == "sub":
            top.depth += 1
            i += 1
        elif char == ")" and kind == "sub":
            if top.depth == 0:
                stack.pop()
            else:
                top.depth -= 1
            i += 1
        elif char == "\n" and pending:
            stack.extend(reversed(pending))
            pending.clear()
            i += 1
        else:
            i += 1
    for start, end, indexes in tests:
        if _ARITHMETIC_TEST.search(command[start:end]):
            for index in indexes:
                found[index] = (found[index][0], "arithmetic")
    for index in lets:
        found[index] = (found[index][0], "arithmetic")
    return found


def _context(stack: list[_Frame]) -> Context:
    kinds = [f.kind for f in stack]
    if "arith" in kinds:
        return "arithmetic"
    if "param" in kinds:
        return "expansion"
    top = stack[-1]
    match top.kind:
        case "double" | "single" | "ansi" | "comment":
            return top.kind
        case "heredoc":
            return "literal_heredoc" if top.literal else "heredoc"
        case _:
            return "word"


def _heredoc(command: str, i: int, pending: list[_Frame]) -> int:
    """Read a here-document's operator after ``<<`` at ``i``: note it in ``pending``, return
    where its delimiter word ends."""
    strip = command.startswith("-", i)
    i += 1 if strip else 0
    while i < len(command) and command[i] in " \t":
        i += 1
    start = i
    while i < len(command) and command[i] not in _WORD_START and not command.startswith("{{", i):
        i += 1
    word = command[start:i]
    literal = any(q in word for q in "'\"\\")
    delimiter = word.replace("'", "").replace('"', "").replace("\\", "")
    if delimiter:
        pending.append(_Frame("heredoc", delimiter=delimiter, strip_tabs=strip, literal=literal))
    return i


def unsafe_references(command: str) -> list[tuple[Ref, str]]:
    """The references of ``command`` no spelling makes safe, each with why (raw ones aside:
    the author wrote them as shell text on purpose)."""
    return [(ref, UNSAFE[context]) for ref, context in reference_contexts(command)
            if context in UNSAFE and not ref.raw]  # fmt: skip


@dataclass(frozen=True)
class Bound:
    """A command whose references read environment variables: the text for ``bash -c`` and
    the variables to set (name to the reference it stands for, in order)."""

    text: str
    variables: tuple[tuple[str, Ref], ...]


def bind_command(command: str) -> Bound:
    """``command`` with each non-raw reference replaced by its variable's expansion
    (``PI_VAR_1``, ``PI_VAR_2``... in order), raw ones kept as written for the caller to
    render. Raises ``ValueError`` naming the first reference standing where no spelling is
    safe (the compiler refuses such a command first, as ``P014``)."""
    out: list[str] = []
    variables: list[tuple[str, Ref]] = []
    last = 0
    seen = {ref.offset: context for ref, context in reference_contexts(command)}
    for ref in references(command):  # every one: none may stay for a render to fill in
        context = seen.get(ref.offset, "double")  # unseen: an expansion, safe as any text
        if ref.raw or not ref.path:
            continue
        if context in UNSAFE:
            raise ValueError(f"{ref.text} stands {UNSAFE[context]}")
        name = f"PI_VAR_{len(variables) + 1}"
        variables.append((name, ref))
        out.append(command[last : ref.offset])
        out.append(_SPELLING[context] % name)
        last = ref.offset + len(ref.text)
    out.append(command[last:])
    return Bound("".join(out), tuple(variables))
