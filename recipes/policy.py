"""Approval policies: rules, in a file, that allow a tool call, ask a person first, or deny it.

A policy file is TOML: a list of ``[[rule]]`` tables, each with

- ``tool``: a tool's name, or a glob of names (``"db_*"``, ``"*"``);
- ``when`` (optional): a condition over the call's arguments in the bounded expression language
  (:mod:`recipes.expressions`: no I/O, bounded steps), e.g. ``"args.env == 'prod'"``; ``tool``
  names the tool;
- ``action``: ``allow`` (run without asking), ``ask`` (a person approves first, as a tool's
  ``requires_approval`` asks) or ``deny`` (refuse without asking: the model reads the reason);
- ``reason`` (optional): what the model reads of a denial, and the person of an ask.

The first rule that matches a call decides; when none does, the tool's own ``requires_approval``
does. A deny holds whatever answers asks (``PI_ASK_USER_AUTO_APPROVE`` answers what is asked; a
denied call is never asked). A rule whose condition fails while evaluating asks (never allows).

:func:`load_policy` reads and checks a file: every mistake is a :class:`PolicyError` listing
each with its line and a fix, and nothing starts. A run gets its policy through its environment
(:data:`POLICY_ENV`, set by ``--policy FILE``); the approval gate of every tool reads it there,
so it holds in every kind of run and on every host.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from interactions import UsageError
from interactions.people import check_approvers, people_metadata
from interactions.reminders import reach_metadata
from recipes.expressions import Expr, ExpressionError, compile_expr, truthy

__all__ = [
    "ACTIONS",
    "POLICY_ENV",
    "Decision",
    "Policy",
    "PolicyError",
    "Rule",
    "kept_policy",
    "load_policy",
    "parse_policy",
    "policy_of",
]

POLICY_ENV = "PI_RECIPES_POLICY"
"""The environment variable naming the policy file of a run (``--policy FILE`` sets it)."""

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")
_KEYS = (
    "tool", "when", "action", "reason", "approvers", "required_approvals", "remind_after",
    "escalate_after", "escalate_to",
)
_NAMES = ("args", "tool")
MAX_RULES = 1000


class PolicyError(UsageError):
    """A policy file that cannot be used: ``problems`` lists each mistake with its line and
    fix (exit 2 on the command line)."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        shown = "\n".join(f"  {problem}" for problem in problems)
        super().__init__(f"the policy {path} has {len(problems)} problem(s):\n{shown}")
        self.problems = problems


@dataclass(frozen=True)
class Rule:
    """One ``[[rule]]``: which calls it matches, and what it decides for them."""

    tool: str
    action: Action
    when: Expr | None = None
    when_text: str | None = None
    reason: str | None = None
    line: int = 0
    approvers: tuple[str, ...] = ()
    required_approvals: int | None = None
    reach: Mapping[str, Any] = field(default_factory=dict)

    def matches(self, tool: str, args: Mapping[str, Any]) -> bool | None:
        """Whether the rule takes this call; ``None`` when its condition failed to evaluate."""
        if not fnmatch.fnmatchcase(tool, self.tool):
            return False
        if self.when is None:
            return True
        try:
            return truthy(self.when.evaluate({"args": dict(args), "tool": tool}))
        except ExpressionError:
            return None


@dataclass(frozen=True)
class Decision:
    """What a policy decided for one call, and which rule decided it (by its line)."""

    action: Action
    reason: str | None
    line: int
    approvers: tuple[str, ...] = ()
    """Who may answer the approval an ``ask`` asks for (names, ``group:NAME``)."""
    required_approvals: int | None = None
    """How many distinct approvers must approve it."""
    reach: Mapping[str, Any] = field(default_factory=dict)
    """Its reminders and escalation, as an interrupt's metadata carries them
    (:func:`interactions.reminders.reach_metadata`)."""


@dataclass(frozen=True)
class Policy:
    """The rules of a policy file, in order; ``text``: the file as it was read (what a
    durable run keeps, to continue under the rules it started with)."""

    path: Path
    rules: tuple[Rule, ...]
    text: str = field(default="", repr=False, compare=False)

    def decide(self, tool: str, args: Mapping[str, Any]) -> Decision | None:
        """The first matching rule's decision for a call of ``tool`` with ``args``; ``None``
        when no rule matches (the tool's own ``requires_approval`` decides). A rule whose
        condition fails to evaluate asks, saying so."""
        for rule in self.rules:
            matched = rule.matches(tool, args)
            if matched is None:
                why = f"the rule on line {rule.line} could not evaluate its condition here"
                return Decision("ask", f"{why}, so a person decides", rule.line)
            if matched:
                return Decision(rule.action, rule.reason, rule.line, rule.approvers,
                                rule.required_approvals, rule.reach)  # fmt: skip
        return None


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Read and check the policy file at ``path``; raise :class:`PolicyError` listing every
    mistake (with its line and fix), ``UsageError`` for a file that cannot be read."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8"
        raise UsageError(f"cannot read the policy {where}: {why}") from None
    return parse_policy(text, where)


def parse_policy(text: str, where: Path) -> Policy:
    """The policy ``text`` holds (read from ``where``, which its diagnostics name); raise
    :class:`PolicyError` listing every mistake."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(where, [f"{where}: not TOML: {exc}"]) from None
    lines = _rule_lines(text)
    problems: list[str] = []
    unknown = [key for key in data if key != "rule"]
    if unknown:
        problems.append(f"{where}: unknown table or key {', '.join(map(repr, unknown))}; fix: "
                        "a policy holds [[rule]] tables only")  # fmt: skip
    raw = data.get("rule", [])
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        problems.append(f"{where}: `rule` must be [[rule]] tables")
        raise PolicyError(where, problems)
    if len(raw) > MAX_RULES:
        problems.append(f"{where}: {len(raw)} rules; at most {MAX_RULES}")
    rules = []
    for index, table in enumerate(raw):
        line = lines[index] if index < len(lines) else 0
        rule = _rule(table, line, f"{where}:{line}: rule {index + 1}", problems)
        if rule is not None:
            rules.append(rule)
    if problems:
        raise PolicyError(where, problems)
    return Policy(where, tuple(rules), text)


_KEPT: dict[tuple[str, str], Policy] = {}


def kept_policy(path: str, text: str) -> Policy:
    """The policy a durable run kept when it started (its file's path and text), parsed once
    per process."""
    key = (path, text)
    if key not in _KEPT:
        if len(_KEPT) >= 16:
            _KEPT.pop(next(iter(_KEPT)))
        _KEPT[key] = parse_policy(text, Path(path))
    return _KEPT[key]


def _rule(table: dict[str, Any], line: int, at: str, problems: list[str]) -> Rule | None:
    found = len(problems)
    for key in table:
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            problems.append(f"{at}: unknown key `{key}`{hint}; fix: a rule takes "
                            f"{', '.join(_KEYS)}")  # fmt: skip
    tool, action = table.get("tool"), table.get("action")
    if not isinstance(tool, str) or not tool.strip():
        problems.append(f'{at}: no `tool`; fix: name the tool it is about (tool = "deploy", '
                        'or a glob: "db_*", "*")')  # fmt: skip
    if action not in ACTIONS:
        got = f" (got {action!r})" if action is not None else ""
        problems.append(f"{at}: `action` must be allow, ask or deny{got}")
    reason = table.get("reason")
    if reason is not None and not isinstance(reason, str):
        problems.append(f"{at}: `reason` must be a string")
    when, when_text = None, table.get("when")
    if when_text is not None:
        if not isinstance(when_text, str):
            problems.append(f"{at}: `when` must be a string holding a condition")
        else:
            when = _condition(when_text, at, problems)
    approvers, required = table.get("approvers"), table.get("required_approvals")
    try:
        people_metadata(approvers, required)
    except UsageError as exc:
        problems.append(f"{at}: {exc}; fix: approvers = [\"ada\", \"group:release\"], "
                        "required_approvals = 2")  # fmt: skip
    if (approvers is not None or required is not None) and action != "ask":
        problems.append(f"{at}: `approvers` and `required_approvals` go with action = \"ask\"")
    reach: dict[str, Any] = {}
    remind, escalate, to = (table.get(k) for k in ("remind_after", "escalate_after",
                                                   "escalate_to"))  # fmt: skip
    try:
        reach = reach_metadata(remind, escalate, to)
    except UsageError as exc:
        problems.append(f"{at}: {exc}; fix: remind_after = 3600, escalate_after = 86400, "
                        "escalate_to = [\"group:oncall\"] (seconds)")  # fmt: skip
    if reach and action != "ask":
        problems.append(f"{at}: `remind_after`, `escalate_after` and `escalate_to` go with "
                        "action = \"ask\"")  # fmt: skip
    if len(problems) > found:
        return None
    assert isinstance(tool, str) and action in ACTIONS
    return Rule(tool.strip(), action, when, when_text, reason, line,
                check_approvers(approvers), required, reach)  # fmt: skip


def _condition(text: str, at: str, problems: list[str]) -> Expr | None:
    try:
        expr = compile_expr(text)
    except ExpressionError as exc:
        problems.append(f"{at}: `when` does not read: {exc}; fix: a condition such as "
                        "\"args.env == 'prod'\"")  # fmt: skip
        return None
    for path, _ in expr.paths():
        if path and path[0] not in _NAMES and path[0] not in expr.parameters():
            close = difflib.get_close_matches(path[0], _NAMES, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            problems.append(f"{at}: `when` names `{path[0]}`{hint}; fix: a condition reads "
                            "`args.NAME` (the call's arguments) and `tool`")  # fmt: skip
            return None
    return expr


def _rule_lines(text: str) -> list[int]:
    """The line of each ``[[rule]]`` header, in order."""
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == "[[rule]]"]


_LOADED: dict[tuple[str, int, int], Policy] = {}


def policy_of(env: Mapping[str, str], cwd: Path) -> Policy | None:
    """The policy a run's environment names (:data:`POLICY_ENV`, relative to ``cwd``), read
    once per version of the file; ``None`` when it names none."""
    named = env.get(POLICY_ENV)
    if not named:
        return None
    path = (cwd / named) if not os.path.isabs(named) else Path(named)
    try:
        stat = path.stat()
    except OSError as exc:
        raise UsageError(f"cannot read the policy {path} ({POLICY_ENV}): {exc.strerror}") from None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _LOADED:
        if len(_LOADED) >= 16:  # a few files in use at once, each at its newest version
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[key] = load_policy(path)
    return _LOADED[key]
