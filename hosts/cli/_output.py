"""What the command line prints about runs: for people, or as JSON with ``--json``.

Text from models, providers and users is printed literally (never read as markup), and output
that is not a terminal is not re-wrapped.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from interactions import AskUserInterrupt
from interactions.asks import ARGS_SCHEMA
from interactions.people import approvers_of
from interactions.reminders import Reached
from interactions.secrets import Secrets
from interactions.store import EventRecord, InteractionRecord, RunRecord, RunStatus, utc_now
from recipes.decisions import TOOL_CALL_DECIDED
from recipes.messages import Message, ToolResultMessage, text_of
from recipes.runs import RunResult

__all__ = [
    "AUDITED",
    "answer_command",
    "console",
    "decision_line",
    "example_payload",
    "interaction_json",
    "literal",
    "print_json",
    "print_result",
    "print_runs",
    "reach_line",
    "result_json",
    "resume_command",
    "resume_hint",
    "retry_command",
    "shown_store",
    "store_flag",
]


_SHOWN_CONTROLS: dict[int, str | None] = {
    **{code: f"^{chr(code + 64)}" for code in range(0x20) if chr(code) not in "\n\t\r"},
    ord("\r"): None,  # a model's CRLF line ends are line ends
    0x7F: "^?",
    **{code: f"<{code:x}>" for code in range(0x80, 0xA0)},
}
"""Control characters as the dialogs (prompt_toolkit) show them; newlines and tabs stay, and
carriage returns go (as rich drops them)."""


def literal(text: str) -> str:
    """``text`` with its control characters made visible: an escape sequence from a model or a
    tool is shown, never obeyed by the terminal."""
    return text.translate(_SHOWN_CONTROLS)


class Console(Protocol):
    """Where the commands print: ``print(text, markup=False)``; ``is_terminal``."""

    @property
    def is_terminal(self) -> bool: ...

    def print(self, *objects: Any, end: str = "\n", markup: bool | None = None) -> None: ...


class _Plain:
    """Output that is not a terminal: text as it is, lines whole (no wrapping, no colour),
    the environment's credentials scrubbed out."""

    is_terminal = False

    def __init__(self, secrets: Secrets) -> None:
        self._secrets = secrets

    def print(self, *objects: Any, end: str = "\n", markup: bool | None = None) -> None:
        print(*(self._secrets.scrub_value(o) for o in objects), end=end)


class _Terminal:
    """Output on a terminal: rich (soft-wrapped), with the control characters of what it prints
    shown (:func:`literal`): a question or an error that holds an escape sequence is read, never
    obeyed by the terminal."""

    is_terminal = True

    def __init__(self, secrets: Secrets) -> None:
        from rich.console import Console as RichConsole

        self._rich = RichConsole(highlight=False, soft_wrap=True, emoji=False)
        self._secrets = secrets

    def print(self, *objects: Any, end: str = "\n", markup: bool | None = None) -> None:
        scrub = self._secrets.scrub_known
        shown = [literal(scrub(o)) if isinstance(o, str) else o for o in objects]
        self._rich.print(*shown, end=end, markup=markup)


def console() -> Console:
    """The console the commands print on: rich on a terminal (soft-wrapped, control characters
    shown), plain otherwise (what a script reads: nothing re-wrapped, nothing styled, nothing
    changed, rich not even loaded) — but the environment's credentials, scrubbed out of every
    text printed."""
    secrets = Secrets.from_env(os.environ)
    return _Terminal(secrets) if sys.stdout.isatty() else _Plain(secrets)


def print_json(data: Any) -> None:
    """``data`` as indented JSON, the environment's credentials scrubbed out."""
    data = Secrets.from_env(os.environ).scrub_value(data)
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def example_payload(interrupt: AskUserInterrupt) -> dict[str, Any]:
    """A payload that fits the interrupt, to show in the hints (an option by its label)."""
    if interrupt.is_approval:
        return {"approved": True}
    first = interrupt.options[0].label if interrupt.options else "your answer"
    return {"answers": [first]} if interrupt.selection == "multiple" else {"answer": first}


def program() -> str:
    """How the user can run this command again: ``pi-recipes`` when that is on ``PATH``, else
    the path they used (``.venv/bin/pi-recipes``)."""
    invoked = Path(sys.argv[0])
    if invoked.name != "pi-recipes":
        return "pi-recipes"
    found = shutil.which("pi-recipes")
    if found and Path(found).resolve() == invoked.resolve():
        return "pi-recipes"
    try:
        return str(invoked.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(invoked)


def store_flag(store: str | None) -> str:
    """The ``--store``/``--engine`` a printed command repeats to reach the same runs (a
    PostgreSQL URL's password shown as ``***``: printed commands never carry a secret)."""
    from interactions.store import names_engine

    if store and names_engine(store):
        return f" --engine {shlex.quote(store)}"
    return f" --store {shlex.quote(shown_store(store))}" if store else ""


def shown_store(store: str) -> str:
    """``store`` as printed: a PostgreSQL URL or connection string without its password
    (``***``)."""
    from interactions.store import names_postgres

    if names_postgres(store):
        from interactions.store.postgres import redact_dsn

        return redact_dsn(store)
    return store


def retry_command(run_id: str, store: str | None) -> str:
    """The exact command that continues a ``failed_resumable`` run."""
    return f"{program()} runs retry {run_id}{store_flag(store)}"


def resume_command(run_id: str, store: str | None) -> str:
    """The exact command that continues a paused run whose questions are all answered."""
    return f"{program()} runs resume {run_id}{store_flag(store)}"


def _expired(interrupt: AskUserInterrupt, now: datetime) -> bool:
    """Whether the question's time is past (an answer is refused; ``runs expire`` settles it)."""
    return interrupt.expires_at is not None and datetime.fromisoformat(interrupt.expires_at) < now


def answer_command(run_id: str, interrupt: AskUserInterrupt, store: str | None) -> str:
    """The exact command that answers ``interrupt`` (with an example payload) and resumes the
    run once it was the last question; for an expired one, the command that settles it."""
    if _expired(interrupt, utc_now()):
        return f"{program()} runs expire{store_flag(store)}"
    payload = shlex.quote(json.dumps(example_payload(interrupt), ensure_ascii=False))
    return f"{program()} runs answer {run_id} {interrupt.id} {payload}{store_flag(store)} --resume"


def resume_hint(result: RunResult, store: str | None) -> list[str]:
    """The exact commands that answer a paused run and resume it."""
    lines = []
    now = utc_now()
    for interrupt in result.interrupts:
        command = answer_command(result.run_id, interrupt, store)
        if _expired(interrupt, now):
            lines.append(
                f"  {interrupt.id} expired unanswered; settle it (the run goes on as its "
                f"expiry policy says) with: {command}"
            )
        else:
            lines.append(f"  {command}")
    return lines


def result_json(result: RunResult, store: str | None) -> dict[str, Any]:
    """A run after a start or a resume, for machines: the result whole, each open question with
    the command that answers it (``questions``), and the command that continues the run where
    one does (``resume_command`` for a paused run whose questions are all answered,
    ``retry_command`` for a ``failed_resumable`` one)."""
    data: dict[str, Any] = result.model_dump(mode="json")
    data["interrupts"] = [i.model_dump(mode="json", exclude_none=True) for i in result.interrupts]
    data["questions"] = [
        {"id": interrupt.id, "message": interrupt.message,
         "answer_command": answer_command(result.run_id, interrupt, store)}
        for interrupt in result.interrupts
    ]  # fmt: skip
    if result.status is RunStatus.PAUSED_WAITING_HUMAN and not result.interrupts:
        data["resume_command"] = resume_command(result.run_id, store)
    if result.status is RunStatus.FAILED_RESUMABLE:
        data["retry_command"] = retry_command(result.run_id, store)
    return data


def _indented(text: str, margin: str) -> str:
    return "\n".join(f"{margin}{line}".rstrip() for line in text.splitlines())


def display_lines(interrupt: AskUserInterrupt) -> str:
    """What an interrupt shows beyond its message, whole: the display's title (where it differs
    from the message), its body, and each section under its title (an approval's changelog, a
    graph human node's input, a tool call's arguments). A question's header, a short label
    that dialogs show above it, is left out."""
    display = interrupt.display
    if display is None:
        return ""
    text = ""
    if display.title and display.title != interrupt.message:
        text += f"\n      {display.title}"
    if display.body:
        text += "\n" + _indented(display.body, "      ")
    for section in display.sections:
        text += f"\n      {section.title}:"
        text += "\n" + _indented(section.body, "        ") if section.body.strip() else " (empty)"
    return text


def describe_unreadable(record: InteractionRecord) -> str:
    """An interaction stored in a form this version cannot read, for people, where an
    interrupt would be described: its id, why, and that it cannot be answered here."""
    return f"  {record.id}: unreadable ({record.unreadable}); it cannot be answered here"


def describe_interrupt(interrupt: AskUserInterrupt) -> str:
    """An interrupt for people: its id and message, what it shows (:func:`display_lines`), the
    options by label (with descriptions), and what an answer looks like."""
    text = f"  {interrupt.id}: {interrupt.message}"
    text += display_lines(interrupt)
    for option in interrupt.options:
        about = f" — {option.description}" if option.description else ""
        text += f"\n      - {option.label}{about}"
    if interrupt.options:
        several = interrupt.selection == "multiple"
        text += f"\n      {'any of the options' if several else 'one of the options'}"
        text += " (or your own answer)" if interrupt.allow_other else ""
    approvers = approvers_of(interrupt.metadata)
    if approvers:
        text += f"\n      only {', '.join(approvers)} may answer"
    if interrupt.is_approval:
        text += '\n      answer {"approved": true} or {"approved": false, "feedback": "..."}'
        if ARGS_SCHEMA in (interrupt.metadata or {}):
            text += ', or edit its arguments: {"approved": true, "args": {...}}'
    return text


def reach_line(reached: Reached) -> str | None:
    """What a question's reminders and escalation did, for people (``None``: nothing yet):
    ``      reminded 2× · escalated to group:oncall``."""
    said = []
    if reached.reminded:
        said.append(f"reminded {reached.reminded}×")
    if reached.escalated:
        said.append(f"escalated to {', '.join(reached.added) or 'no one new'}")
    return f"      {' · '.join(said)}" if said else None


def print_result(out: Console, result: RunResult, store: str | None) -> None:
    """A run after a start or a resume: its text, or how to answer what it waits for."""
    if result.status is RunStatus.PAUSED_WAITING_HUMAN and not result.interrupts:
        out.print(
            f"Run {result.run_id} is paused with every question answered; continue it with: "
            f"{resume_command(result.run_id, store)}",
            markup=False,
        )
        return
    if result.status is RunStatus.PAUSED_WAITING_HUMAN:
        count = len(result.interrupts)
        out.print(
            f"Run {result.run_id} paused, waiting for {count} answer{'s' * (count != 1)}:",
            markup=False,
        )
        for interrupt in result.interrupts:
            out.print(describe_interrupt(interrupt), markup=False)
        now = utc_now()
        expired = any(_expired(interrupt, now) for interrupt in result.interrupts)
        out.print("Next:" if expired else "Answer and resume with:", markup=False)
        for line in resume_hint(result, store):
            out.print(line, markup=False)
        return
    if result.text and result.status is RunStatus.FINISHED:  # a failed run's is no result
        out.print(result.text, markup=False)
    if result.warning:
        out.print(f"Warning: {result.warning}", markup=False)
    line = f"Run {result.run_id} {result.status.value}."
    if result.status is RunStatus.RUNNING:  # a leg run here ends: this is another's
        line = f"Run {result.run_id} is running, in another process."
    said = result.error if result.error != result.status.value else None  # "cancelled" once
    out.print(line + (f" {said}" if said else ""), markup=False)
    if result.status is RunStatus.FAILED_RESUMABLE:
        out.print(
            f"Retry it with: {retry_command(result.run_id, store)}",
            markup=False,
        )


def print_runs(out: Console, runs: list[RunRecord]) -> None:
    """Runs as a table on a terminal, as tab-separated lines otherwise."""
    rows = [
        (run.id, run.status.value, run.kind, run.agent, run.model_name,
         run.updated_at.strftime("%Y-%m-%d %H:%M:%S"))
        for run in runs
    ]  # fmt: skip
    if not out.is_terminal:
        for row in rows:
            print("\t".join(row))
        return
    from rich.table import Column, Table
    from rich.text import Text

    table = Table("status", "kind", "agent", "model", "updated")
    table.columns.insert(0, Column("run", no_wrap=True))
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))  # literal: a "[/x]" is just text
    out.print(table)


def interaction_line(record: InteractionRecord) -> str:
    """One interaction for people: id, message, and whether and how it was answered; one
    stored in a form this version cannot read says so (``(unreadable: reason: Field
    required)``) in place of its message."""
    why = record.unreadable
    message = f"(unreadable: {why})" if why else record.interrupt.message or ""
    answer = record.answer
    if answer is None and record.expires_at < utc_now():
        when = record.expires_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        return f"  {record.id}: {message} [expired at {when}, unanswered: runs expire settles it]"
    if answer is None:
        return f"  {record.id}: {message} [pending]"
    state = {"resolved": "answered", "cancelled": "declined", "expired": "expired"}[answer.status]
    if answer.status == "resolved":
        state += f" {json.dumps(answer.payload, ensure_ascii=False)}"
    if answer.answered_by and answer.status != "expired":
        state += f" by {answer.answered_by}"
    if answer.via and answer.status != "expired":
        state += f" via {answer.via}"
    return f"  {record.id}: {message} [{state}]"


AUDITED = frozenset({TOOL_CALL_DECIDED, "decision_remembered", "decision_revoked"})
"""The events ``runs show`` lists as a run's decisions: each ruled tool call, and each
decision remembered or revoked."""


def decision_line(event: EventRecord) -> str:
    """One audited decision for people: ``deploy {"env":"prod"}: allowed by policy (line 3)``."""
    data = event.data
    when = event.at.astimezone().strftime("%H:%M:%S")

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    if event.type == "decision_remembered":
        who = f" by {data['decided_by']}" if data.get("decided_by") else ""
        only = f" (only {compact(data['args'])})" if data.get("args") is not None else ""
        return (f"  {when} remembered {data.get('id')}: {data.get('action')} "
                f"{data.get('tool')} in this {data.get('scope')}{only}{who}")  # fmt: skip
    if event.type == "decision_revoked":
        who = f" by {data['revoked_by']}" if data.get("revoked_by") else ""
        return f"  {when} revoked {data.get('id')} ({data.get('tool')}){who}"
    said = f"  {when} {data.get('tool')} {compact(data.get('args', {}))}: {data.get('decision')}"
    by = data.get("by")
    if by == "policy":
        rule = data.get("rule") or {}
        return f"{said} by the policy ({rule.get('file')}, line {rule.get('line')})"
    if by == "remembered":
        kept = data.get("remembered") or {}
        who = f" of {kept['decided_by']}" if kept.get("decided_by") else ""
        return f"{said} by remembered decision {kept.get('id', '(this session)')}{who}"
    line = f"{said} by the answer to {data.get('interaction_id')} ({data.get('outcome')})"
    if "edited_args" in data:
        line += f", arguments edited to {compact(data['edited_args'])}"
    if data.get("remembered"):
        line += f", remembered as {data['remembered'].get('id', 'for this session')}"
    return line


def tool_result_lines(messages: list[Message]) -> list[str]:
    """What the run's tools returned, one line each (first line of the text)."""
    lines = []
    for message in messages:
        if isinstance(message, ToolResultMessage):
            text = text_of(message.content).strip().splitlines() or [""]
            mark = "✗" if message.is_error else "✓"
            more = " …" if len(text) > 1 else ""
            lines.append(f"  {mark} {message.tool_name} ({message.tool_call_id}): {text[0]}{more}")
    return lines


def interaction_json(record: InteractionRecord) -> dict[str, Any]:
    """An interaction for machines, its descriptor whole (the pause record's wire form, not
    the compact one the store keeps); one stored in a form this version cannot read keeps its
    descriptor as stored and says why in ``unreadable`` (``null`` for every other one)."""
    data: dict[str, Any] = record.model_dump(mode="json")
    data["unreadable"] = why = record.unreadable
    if why is None:
        data["descriptor"] = record.interrupt.model_dump(mode="json", exclude_none=True)
    return data
