"""``pi-recipes graph validate FILE``, ``graph draw FILE`` and ``graph run FILE``: the commands'
own code.

The command line (``hosts.cli``) adds them with :func:`add_graph_commands` and runs them with
the store and the dialog surface it opens; this module prints diagnostics like a compiler and
starts runs. ``validate`` exits 1 when any diagnostic is an error; ``draw`` writes the
workflow's picture (:mod:`recipes.graph.picture`), refusing a file that does not validate.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # the engine loads when a command runs, not when the parser is built
    from interactions.store import Store
    from recipes.graph.language import Diagnostic
    from recipes.runs import Runner, RunResult, Surface

__all__ = [
    "diagnostics_of",
    "draw_command",
    "follow_retries",
    "run_graph",
    "validate_command",
]


def diagnostics_of(path: Path) -> list[Diagnostic]:
    """Every diagnostic of the file at ``path`` (recipes loaded and checked)."""
    from recipes.graph.compiler import GraphError, diagnose, read_source

    try:
        text = read_source(path)
    except GraphError as exc:  # not UTF-8
        return exc.diagnostics
    return diagnose(text, file=str(path), base=path.resolve().parent)[1]


def validate_command(args: argparse.Namespace, out: TextIO) -> int:
    """Print the file's diagnostics, then a summary; 1 when any is an error."""
    found = diagnostics_of(args.file)
    errors = sum(d.is_error for d in found)
    if args.json:
        data = [
            {"code": d.code, "severity": d.severity, "message": d.message, "fix": d.fix,
             "file": d.pos.file if d.pos else None, "line": d.pos.line if d.pos else None,
             "col": d.pos.col if d.pos else None}
            for d in found
        ]  # fmt: skip
        print(json.dumps({"diagnostics": data, "errors": errors}, indent=2), file=out)
        return 1 if errors else 0
    for diagnostic in found:
        print(diagnostic.format(), file=out)
    warnings = len(found) - errors
    verdict = "does not validate" if errors else "is valid"
    print(f"{args.file} {verdict}: {errors} error(s), {warnings} warning(s)", file=out)
    return 1 if errors else 0


def draw_command(args: argparse.Namespace, out: TextIO) -> int:
    """Write the picture of ``args.file`` in ``args.format`` to ``args.output`` (or ``out``).
    Raises ``UsageError`` (exit 2) for a file that cannot be read or does not validate, or
    when the layout library (the ``draw`` extra) is missing; nothing is written then."""
    from interactions import UsageError
    from recipes.graph.picture import draw_file

    text = draw_file(args.file, args.format)
    if args.output is None:
        out.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    return 0


async def run_graph(
    args: argparse.Namespace,
    store: Store,
    env: Mapping[str, str],
    surface: Surface,
    notify: Callable[[str], None] | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Start a durable run of ``args.file`` with ``args.var`` on ``store`` (as ``run_id``, when
    given); with ``--auto-resume N``, retry it here when its retries fall due
    (:func:`follow_retries`)."""
    from recipes.graph.runtime import parse_assignments, start_graph
    from recipes.runs import Runner

    runner = Runner(store, env=env, host="cli", cwd=Path.cwd(), mode=surface.mode or "print")
    values: dict[str, Any] = parse_assignments(args.var)
    auto = getattr(args, "auto_resume", None)
    result = await start_graph(
        runner, args.file, vars=values, run_id=run_id, surface=surface, auto_resume=auto
    )
    if auto:
        result = await follow_retries(runner, result, surface, notify or (lambda _: None))
    return result


async def follow_retries(
    runner: Runner, result: RunResult, surface: Surface, notify: Callable[[str], None]
) -> RunResult:
    """While the run is ``failed_resumable`` with a retry planned, wait until it is due and
    retry it; return the run once it finishes, pauses, fails for good, runs out of retries, or
    is retried by another process (a web host's sweeper) first. Each wait is bounded by the
    run's schedule (``max_delay``)."""
    import anyio

    from interactions import ConflictError
    from interactions.store import RunStatus, utc_now
    from recipes.runs.drivers import retry_schedule_of

    while result.status is RunStatus.FAILED_RESUMABLE:
        run = await runner.store.get_run(result.run_id)
        schedule = retry_schedule_of(run.checkpoint)
        if schedule is None or schedule.due_at is None:
            return result
        wait = min(max(0.0, (schedule.due_at - utc_now()).total_seconds()), schedule.max_delay)
        notify(f"Run {result.run_id} failed_resumable ({result.error}); retry "
               f"{schedule.attempts} of {schedule.max} in {wait:.0f}s")  # fmt: skip
        await anyio.sleep(wait)
        try:
            result = await runner.retry(result.run_id, surface=surface)
        except ConflictError:
            return await runner.status(result.run_id)  # another process retried it
    return result
