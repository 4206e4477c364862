"""What the command line prints about runs: for people, or as JSON with ``--json``."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Column, Table

from interactions import AskUserInterrupt
from interactions.store import InteractionRecord, RunRecord, RunStatus
from recipes.runs import RunResult

__all__ = ["example_payload", "print_json", "print_result", "print_runs", "resume_hint"]


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def example_payload(interrupt: AskUserInterrupt) -> dict[str, Any]:
    """A payload that fits the interrupt's schema, to show in the hints."""
    if interrupt.reason == "confirmation":
        return {"approved": True}
    first = interrupt.options[0].answer if interrupt.options else "your answer"
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


def _store_flag(store: str | None) -> str:
    return f" --store {shlex.quote(store)}" if store else ""


def resume_hint(result: RunResult, store: str | None) -> list[str]:
    """The exact commands that answer a paused run and resume it."""
    lines = []
    for interrupt in result.interrupts:
        payload = shlex.quote(json.dumps(example_payload(interrupt)))
        lines.append(
            f"  {program()} runs answer {result.run_id} {interrupt.id} {payload}"
            f"{_store_flag(store)} --resume"
        )
    return lines


def _fixed(interrupt: AskUserInterrupt) -> bool:
    """Whether the answer must be one of the options (the schema lists them as an enum)."""
    properties = (interrupt.response_schema or {}).get("properties", {})
    answer = properties.get("answer") or properties.get("answers", {}).get("items", {})
    return "enum" in answer


def _describe(interrupt: AskUserInterrupt) -> str:
    text = f"  {interrupt.id}: {interrupt.message}"
    if interrupt.options:
        choices = " | ".join(o.answer for o in interrupt.options)
        several = interrupt.selection == "multiple"
        text += f"\n      {'any of' if several else 'one of'}: {choices}"
        text += "" if _fixed(interrupt) else " (or your own answer)"
    if interrupt.reason == "confirmation":
        text += '\n      answer {"approved": true} or {"approved": false, "feedback": "..."}'
    return text


def print_result(console: Console, result: RunResult, store: str | None) -> None:
    """A run after a start or a resume: its text, or how to answer what it waits for."""
    if result.status is RunStatus.PAUSED_WAITING_HUMAN:
        count = len(result.interrupts)
        console.print(
            f"Run {result.run_id} paused, waiting for {count} answer{'s' * (count != 1)}:",
            highlight=False,
        )
        for interrupt in result.interrupts:
            console.print(_describe(interrupt), highlight=False, markup=False)
        console.print("Answer and resume with:", highlight=False)
        for line in resume_hint(result, store):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        return
    if result.text:
        console.print(result.text, highlight=False, markup=False)
    line = f"Run {result.run_id} {result.status.value}."
    console.print(line + (f" {result.error}" if result.error else ""), highlight=False)
    if result.status is RunStatus.FAILED_RESUMABLE:
        console.print(f"Retry it with: {program()} runs retry {result.run_id}{_store_flag(store)}")


def print_runs(console: Console, runs: list[RunRecord]) -> None:
    table = Table("status", "agent", "model", "updated")
    table.columns.insert(0, Column("run", no_wrap=True))
    for run in runs:
        updated = run.updated_at.strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(run.id, run.status.value, run.agent, run.model_name, updated)
    console.print(table)


def interaction_json(record: InteractionRecord) -> dict[str, Any]:
    return record.model_dump(mode="json")
