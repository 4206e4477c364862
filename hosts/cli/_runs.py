"""``pi-recipes runs ...``: list, show, answer, resume and cancel stored runs, from any process."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn

from hosts._store import STORE_ENV
from hosts.cli._errors import DRIVEN_RUN
from hosts.cli._output import (
    AUDITED,
    Console,
    console,
    decision_line,
    describe_interrupt,
    describe_unreadable,
    interaction_json,
    interaction_line,
    print_json,
    print_result,
    print_runs,
    reach_line,
    result_json,
    resume_command,
    resume_hint,
    retry_command,
    tool_result_lines,
)
from hosts.cli._store import location_of, no_default_store, where_of
from interactions import (
    AskUserInterrupt,
    ConflictError,
    InvalidPayloadError,
    UnknownRunError,
    UsageError,
)
from interactions.async_questions import ASYNC_KIND, pending_async, question_of
from interactions.people import Identity
from interactions.reminders import Reached, escalated_ids, reach_of, reached_of
from interactions.resume import check_text, parse_json, parse_resume_entries
from interactions.store import (
    DEFAULT_STORE_PATH,
    EventRecord,
    InteractionRecord,
    MemoryStore,
    RunStatus,
    Store,
    open_store,
    utc_now,
)
from recipes.runs import ENGINE_ENV, RunResult, Runs, runner_for
from recipes.runs.drivers import Checkpoint

__all__ = ["run_runs_command", "runs_command"]


def _payload(args: argparse.Namespace) -> tuple[str, Any]:
    """The answer's status and payload: a JSON object as given; a JSON string or any other
    text as the answer to a question (``{"answer": text}``; an approval refuses it, and
    :func:`_plain_answer` reads it for a choice)."""
    if args.cancel:
        if args.payload is not None:
            raise UsageError("--cancel takes no payload")
        return "cancelled", None
    if args.payload is None:
        raise UsageError('give a payload, e.g. \'{"answer": "beta"}\' or beta, or --cancel')
    text = args.payload
    looks_like_json = text.lstrip()[:1] in ("{", "[", '"')
    try:
        value = parse_json(text) if looks_like_json else text
    except InvalidPayloadError as exc:
        if not text.lstrip().startswith("[") or len(text) > 200:
            raise
        # "[internal] mirror": text meant as the answer itself, not JSON
        quoted = shlex.quote(json.dumps(text, ensure_ascii=False))
        raise InvalidPayloadError(
            f"{exc}; to answer with this text, give it as a JSON string: {quoted}",
            reason=exc.reason,
        ) from None
    if isinstance(value, dict):
        return "resolved", value
    if isinstance(value, str):
        check_text(value, what="answer")
        return "resolved", {"answer": value}
    raise InvalidPayloadError(
        'a payload is a JSON object (\'{"answer": "beta"}\') or the text of an answer',
        reason="invalid_payload",
    )


def _plain_answer(interrupt: AskUserInterrupt, text: str) -> dict[str, Any]:
    """The payload of an answer given as plain text: ``{"answer": text}``, or for a multiple
    choice ``{"answers": [...]}`` read from the text as people write a list (``a.log, b.log``;
    an option whose label holds a comma is read whole). An empty answer to a choice is refused,
    saying that ``--cancel`` declines it."""
    choices = [o.label for o in interrupt.options] + [o.answer for o in interrupt.options]
    several = interrupt.selection == "multiple"
    if not text.strip() and (several or interrupt.options):
        kind = "a multiple choice" if several else "a choice"
        example = ", ".join(o.label for o in interrupt.options[:2])
        raise InvalidPayloadError(
            f"{interrupt.id} is {kind} and the answer is empty: give "
            f"{'one or more options' if several else 'an option'} ({example}), or decline it "
            "with --cancel",
            interaction_id=interrupt.id,
            reason="invalid_payload",
        )
    if not several:
        return {"answer": text}
    known = {c.casefold(): c for c in choices}
    parts = text.split(",")
    answers: list[str] = []
    at = 0
    while at < len(parts):
        for end in range(len(parts), at, -1):  # the longest run of parts that is an option
            joined = ",".join(parts[at:end]).strip()
            if end - at == 1 or joined.casefold() in known:
                if joined:
                    answers.append(known.get(joined.casefold(), joined))
                at = end
                break
    return {"answers": answers}


def _entries(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    return parse_json(data, what=f"entries file {path}")


def _show(args: argparse.Namespace, console: Console, result: RunResult) -> int:
    """Print where ``result``'s run stands; return the exit code it makes (:func:`_ended`)."""
    if args.json:
        print_json(result_json(result, where_of(args)))
    else:
        print_result(console, result, where_of(args))
    return _ended(result.status)


def _ended(status: RunStatus) -> int:
    """The exit code of a command that drove a run on: 1 when the run failed (resumably or
    not: a script must not go on as if it had finished), 0 otherwise, as ``run`` exits."""
    return 1 if status in (RunStatus.FAILED, RunStatus.FAILED_RESUMABLE) else 0


def _show_all(
    args: argparse.Namespace, console: Console, results: list[RunResult], headline: str
) -> None:
    if args.json:
        print_json([result_json(r, where_of(args)) for r in results])
        return
    console.print(headline)
    for result in results:
        print_result(console, result, where_of(args))


async def runs_command(args: argparse.Namespace) -> int:
    """``pi-recipes runs ...`` against the store ``--store`` names. Where no store is (no
    ``--store``, no engine, no ``.pi-recipes/state.db`` here) none is created: every ``runs``
    command acts on runs a store already holds, so it answers as an empty store would (an
    unknown run exits 4) and says on stderr where it looked."""
    where = location_of(args)
    if await no_default_store(where):
        return await _without_store(args)
    async with await open_store(where, must_exist=True) as store:
        return await run_runs_command(args, store, console())


async def _without_store(args: argparse.Namespace) -> int:
    """A ``runs`` command where there is no store: it runs on an empty store of this process's
    memory, so it answers exactly as an empty store would (an empty listing, exit 0; an
    unknown run, exit 4), and says where it looked and how to name another store."""
    missing = (
        f"there is no store at {Path.cwd() / DEFAULT_STORE_PATH} (nothing was created): run "
        "this where 'pi-recipes run' ran, or give --store PATH (a SQLite file or a "
        f"postgresql:// URL; or set {STORE_ENV}) or --engine URL (or set {ENGINE_ENV})"
    )
    try:
        async with MemoryStore() as empty:
            code = await run_runs_command(args, empty, console())
    except UnknownRunError as exc:
        run_id = getattr(args, "run", None) or exc.run_id
        raise UnknownRunError(f"no run '{run_id}': {missing}", run_id=run_id) from exc
    print(f"pi-recipes: note: {missing}", file=sys.stderr)
    return code


async def run_runs_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Run one ``runs`` command against ``store``; return the exit code (errors raise)."""
    runner = runner_for(store, host="cli")
    command = args.runs_command
    if command in ("answer", "resume", "retry"):  # may drive the run on: a signal names it
        setattr(args, DRIVEN_RUN, args.run)
    if command != "recover" and runner.strandable:
        await warn_stranded(store)
    if command == "list":
        status = RunStatus(args.status) if args.status else None
        runs = await store.list_runs(status=status, limit=args.limit)
        if args.json:
            print_json([r.model_dump(mode="json", exclude={"checkpoint"}) for r in runs])
        else:
            print_runs(console, runs)
    elif command == "show":
        await _show_run(args, store, runner, console)
    elif command == "pending":
        records = await _answerable(store, args.run)
        if args.mine:
            from hosts.cli._people import mine, operator  # the users file, when it is asked

            escalated = {
                (record.run_id, record.id)
                for record in records
                if record.id in await escalated_ids(store, [record])
            }
            records = mine(records, operator(args.users, None, os.environ), escalated)
        if args.json:
            print_json([interaction_json(r) for r in records])
        elif not records:
            console.print("Nothing is waiting for an answer.")
        else:
            reached = await _reached(store, records)
            for record in records:
                console.print(f"{record.run_id}", markup=False)
                said = (
                    describe_unreadable(record)
                    if record.unreadable
                    else describe_interrupt(record.interrupt)
                )
                console.print(said, markup=False)
                line = reach_line(reached.get((record.run_id, record.id), Reached()))
                if line:
                    console.print(line, markup=False)
    elif command == "questions":
        records = pending_async(await _answerable(store, args.run))
        if args.json:
            print_json({"interactions": [interaction_json(r) for r in records]})
        elif not records:
            console.print(f"Run {args.run} has no pending async question.", markup=False)
        for record in records if not args.json else ():
            console.print(_question_head(record), markup=False)
            console.print(f"  Q: {question_of(record)}", markup=False)
            options = [] if record.unreadable else [o.label for o in record.interrupt.options]
            if options:
                console.print(f"  options: {', '.join(options)}", markup=False)
    elif command == "answer":
        answerer = _answerer(args)
        answer_status, payload = _payload(args)
        asked = await runner.interaction(args.run, args.interaction)
        plain = args.payload is not None and args.payload.lstrip()[:1] not in ("{", "[", '"')
        if plain and not asked.interrupt.is_approval:
            payload = _plain_answer(asked.interrupt, args.payload)
        if asked.interrupt.is_approval and set(payload or {}) == {"answer"}:
            raise InvalidPayloadError(
                f"{args.interaction} is an approval: answer '{{\"approved\": true}}' or "
                '\'{"approved": false, "feedback": "..."}\', or decline it with --cancel',
                run_id=args.run,
                interaction_id=args.interaction,
                reason="invalid_payload",
            )
        try:
            done = await runner.answer(
                args.run,
                args.interaction,
                payload,
                status=answer_status,
                answered_by=answerer,
                resume=args.resume or asked.kind == ASYNC_KIND,  # an await pause continues
            )
        except UsageError as exc:  # it may be the resume that failed, the answer stored
            stored = await store.get_interaction(args.run, args.interaction)
            if stored.answer is None:
                raise
            _stored_not_continued(args, console, stored, exc, created=asked.answer is None)
        if asked.kind == ASYNC_KIND:
            return _async_answered(args, console, done, done.run_status)
        ended = done.run.status if done.run is not None else None
        # A run that had stopped before this answer will not continue (3); one this answer
        # continued and that then failed (a workflow's ``fail``) exits 1, as ``run`` does.
        stopped = done.run_status in (RunStatus.CANCELLED, RunStatus.FAILED)
        if args.json:
            whole = {"interaction": interaction_json(done.interaction)}
            if done.run is not None:  # with the commands that answer and continue it
                whole["run"] = result_json(done.run, where_of(args))
            print_json(done.model_dump(mode="json") | whole)
            return 3 if stopped else _ended(ended) if ended is not None else 0
        else:
            if not done.settled:  # one vote of an approval that needs several
                counted = "Counted" if done.created else "Already counted"
                console.print(
                    f"{counted}: {len(done.approvals)} of {done.required_approvals} approvals "
                    f"for {args.interaction} of {args.run} ({', '.join(done.approvals)}); it "
                    "stays open until enough approve.",
                    markup=False,
                )
                return 0
            verb = "Declined" if answer_status == "cancelled" else "Answered"
            if not done.created:
                verb = "Already answered identically:"
            console.print(f"{verb} {args.interaction} of {args.run}.", markup=False)
            if stopped:
                kept = "was stored" if done.created else "is stored (it was already)"
                was = done.run_status.value if done.run_status else "stopped"
                console.print(
                    f"The answer {kept}, but run {args.run} is {was}; it will not continue.",
                    markup=False,
                )
                return 3
            if done.run is not None:
                print_result(console, done.run, where_of(args))
                return _ended(done.run.status)
            now = None if done.still_open else done.run_status
            if now is RunStatus.FAILED_RESUMABLE:
                console.print(
                    f"The run is failed_resumable: it continues, with this answer, once "
                    f"retried: {retry_command(args.run, where_of(args))}",
                    markup=False,
                )
            elif args.resume and done.still_open:
                console.print(
                    f"Not resumed: the run still waits for {', '.join(done.still_open)}.",
                    markup=False,
                )
            elif now is RunStatus.PAUSED_WAITING_HUMAN and not args.resume:
                console.print(
                    "It was the last answer the run waited for; continue it with: "
                    f"{resume_command(args.run, where_of(args))}",
                    markup=False,
                )
    elif command == "resume":
        if args.entries is not None:
            answerer = _answerer(args)
            entries = parse_resume_entries(_entries(args.entries))
            result = await runner.resume(args.run, entries, answered_by=answerer)
            if result.status is RunStatus.RUNNING:  # a leg run here ends: not this resume's
                raise ConflictError(
                    f"run {args.run} was not resumed: another process continued it first",
                    run_id=args.run,
                    reason="not_paused",
                )
            return _show(args, console, result)
        return _show(args, console, await _resume_answered(args, store, runner))
    elif command == "retry":
        return _show(args, console, await runner.retry(args.run))
    elif command == "recover":
        marked = await runner.recover(older_than=args.older_than)
        _show_all(
            args, console, marked, f"Marked {len(marked)} stranded run(s) as failed_resumable."
        )
    elif command == "cancel":
        _show(args, console, await runner.cancel(args.run))
    elif command == "expire":
        results = await runner.expire_due()
        _show_all(args, console, results, f"Settled {len(results)} run(s).")
    return 0


def _answerer(args: argparse.Namespace) -> Identity:
    """Who this command answers as: the operator, or ``--as`` (:mod:`hosts.cli._people`)."""
    from hosts.cli._people import operator

    return operator(args.users, args.answered_by, os.environ)


async def _resume_answered(args: argparse.Namespace, store: Store, runner: Runs) -> RunResult:
    """``runs resume RUN``: continue a paused run whose questions are all answered. A finished
    run is shown as it is; a run this cannot continue is refused (exit 3), saying why and what
    would continue it, never shown as if it had been resumed."""
    run = await store.get_run(args.run)
    if run.status is RunStatus.PAUSED_WAITING_HUMAN:
        try:
            result = await runner.resume_answered(args.run)
        except InvalidPayloadError as exc:
            if exc.reason != "incomplete_resume":
                raise
            raise await _still_waiting(args, runner) from None
        if result.status is not RunStatus.RUNNING:  # a leg run here ends, paused or otherwise
            return result
        why = "another process continued it first"
    elif run.status is RunStatus.FINISHED:
        return await runner.status(args.run)
    elif run.status is RunStatus.FAILED_RESUMABLE:
        why = f"it is failed_resumable; continue it with: {retry_command(args.run, where_of(args))}"
    elif run.status is RunStatus.RUNNING:
        why = "it is running, in another process (if that process died: runs recover, then retry)"
    else:
        why = f"it is {run.status.value}"
    raise ConflictError(f"run {args.run} was not resumed: {why}", run_id=args.run,
                        reason="not_paused")  # fmt: skip


async def _still_waiting(args: argparse.Namespace, runner: Runs) -> ConflictError:
    """The refusal of ``runs resume RUN`` while the run still waits for answers (exit 3, as
    any resume of a run it cannot continue): which questions are open, and the exact commands
    that answer them (the last one's ``--resume`` continues the run)."""
    waiting = await runner.status(args.run)
    ids = ", ".join(interrupt.id for interrupt in waiting.interrupts)
    what = "answers" if len(waiting.interrupts) != 1 else "an answer"
    commands = resume_hint(waiting, where_of(args))
    answers_only = all(" runs answer " in line for line in commands)  # none expired
    return ConflictError(
        f"run {args.run} was not resumed: it still waits for {what} to {ids}",
        run_id=args.run,
        reason="incomplete_resume",
        hint="\n".join(["answer and resume with:" if answers_only else "next:", *commands]),
    )


async def _answerable(store: Store, run_id: str | None) -> list[InteractionRecord]:
    """The questions of ``run_id`` (of every run: ``None``) a person can answer, oldest first
    (the host kit's rule, loaded by the commands that list them only)."""
    from hosts._kit import answerable

    return answerable(await store.list_interactions(run_id, pending=True))


def _question_head(record: Any) -> str:
    asked = record.requested_at.astimezone().strftime("%H:%M:%S")
    node = f"node {record.node_id}, " if record.node_id else ""
    return f"{record.id} ({node}asked {asked})"


def _stored_not_continued(
    args: argparse.Namespace, console: Console, stored: Any, exc: UsageError, *, created: bool
) -> NoReturn:
    """A last answer stored while its run cannot continue in this process (its recipe or its
    model's key is missing here): say that it is stored, then why the run did not go on and
    how to continue it once that is fixed (exit 2)."""
    if args.json:
        print_json({"interaction": interaction_json(stored), "created": created, "resumed": False})
    else:
        verb = "Answered" if created else "Already answered identically:"
        console.print(f"{verb} {args.interaction} of {args.run}.", markup=False)
    raise UsageError(
        f"the answer is stored, but run {args.run} cannot continue in this process: {exc}; "
        f"fix that, then continue it: {resume_command(args.run, where_of(args))}"
    )


def _async_answered(
    args: argparse.Namespace, console: Console, done: Any, status: RunStatus | None
) -> int:
    """What answering an async question says: ``{run_id, interaction_id, queued, resumed}``;
    for a run that waits for a retry (``status``), how to continue it."""
    reply = {"run_id": done.run_id, "interaction_id": done.interaction_id,
             "queued": done.queued, "resumed": done.resumed}  # fmt: skip
    if args.json:
        print_json(reply)
        return 0
    verb = "Answered" if done.created else "Already answered identically:"
    console.print(f"{verb} {args.interaction} of {args.run}.", markup=False)
    if done.queued and status is RunStatus.FAILED_RESUMABLE:
        console.print(
            f"Queued: the agent reads it when the run continues. The run is failed_resumable "
            f"({'--resume does not continue it' if args.resume else 'it waits for a retry'}): "
            f"{retry_command(args.run, where_of(args))}",
            markup=False,
        )
    elif done.queued:
        console.print(
            "Queued: the asking agent reads it at its next step, unless an await_answers "
            "that waits for it takes it first.",
            markup=False,
        )
    if done.resumed and done.run is not None:
        console.print("It was the last answer the run waited for: the run went on.", markup=False)
        print_result(console, done.run, args.store_given)
    elif done.still_open:
        console.print(f"The run still waits for {', '.join(done.still_open)}.", markup=False)
    return 0


async def _reached(
    store: Store, records: list[InteractionRecord]
) -> dict[tuple[str, str], Reached]:
    """What the reminders and escalations of ``records`` did (their runs' events read only for
    asks that have them)."""
    events: dict[str, list[EventRecord]] = {}
    found: dict[tuple[str, str], Reached] = {}
    for record in records:
        if not reach_of(record.metadata).any:
            continue
        if record.run_id not in events:
            events[record.run_id] = await store.list_events(record.run_id)
        found[(record.run_id, record.id)] = reached_of(events[record.run_id], record.id)
    return found


async def _show_run(args: argparse.Namespace, store: Store, runner: Runs, console: Console) -> None:
    run = await store.get_run(args.run)
    interactions = await store.list_interactions(args.run)
    shown = runner.view(run)
    audit = [e for e in await store.list_events(args.run) if e.type in AUDITED]
    if args.json:
        data = run.model_dump(mode="json", exclude={"checkpoint"})
        print_json(
            data
            | {"text": shown.text, "warning": shown.warning}
            | {"interactions": [interaction_json(i) for i in interactions]}
            | {"decisions": [{"type": e.type, "at": e.at.isoformat(), **e.data} for e in audit]}
            | {"details": list(shown.details)}
        )
        return
    model = f"  model={run.model_name}" if run.model_name else ""  # a graph's nodes have theirs
    console.print(
        f"{run.id}  {run.status.value}  {run.kind}  agent={run.agent}{model}", markup=False
    )
    console.print(f"ref: {run.ref}", markup=False)
    if interactions:
        console.print("interactions:", markup=False)
    reached = await _reached(store, interactions)
    for record in interactions:
        console.print(interaction_line(record), markup=False)
        line = reach_line(reached.get((record.run_id, record.id), Reached()))
        if line:
            console.print(line, markup=False)
    if run.kind == "recipe":
        lines = tool_result_lines(Checkpoint.of(run).messages)
        if lines:
            console.print("tool results:", markup=False)
        for line in lines:
            console.print(line, markup=False)
    if audit:
        console.print("decisions:", markup=False)
    for event in audit:
        console.print(decision_line(event), markup=False)
    for line in shown.details:  # what the run's driver shows (a graph's node path)
        console.print(line, markup=False)
    unreadable = [r.id for r in interactions if r.pending and r.unreadable]
    if unreadable:  # listed above, marked: no command can answer them here
        console.print(
            f"Run {run.id} is {run.status.value}; it holds interactions this pi-recipes cannot "
            f"read ({', '.join(unreadable)}): they cannot be answered here.",
            markup=False,
        )
    else:
        print_result(console, await runner.status(args.run), where_of(args))


STRANDED_AFTER = 600.0
"""Seconds without progress after which a ``running`` run is said to look stranded."""


async def warn_stranded(store: Store) -> None:
    """Say, on stderr, which runs have been ``running`` with no progress for a long while, and
    the command that finds them if their process is gone."""
    cutoff = utc_now() - timedelta(seconds=STRANDED_AFTER)
    stale = [r for r in await store.list_runs(RunStatus.RUNNING, 100) if r.updated_at < cutoff]
    for run in stale:
        idle = int((utc_now() - run.updated_at).total_seconds() // 60)
        print(
            f"pi-recipes: warning: run {run.id} has been running for {idle} min without "
            "progress; if its process is gone: pi-recipes runs recover --older-than "
            f"{int(STRANDED_AFTER)}",
            file=sys.stderr,
        )
