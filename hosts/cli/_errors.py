"""How the command line runs a command and reports its errors: one line on stderr, the exit code
of the error's family (from :data:`interactions.errors.ERROR_CODES`), never a traceback; an
error none of ours (a bug) is one line and its traceback, credentials scrubbed, exit code 1."""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import sys
import traceback
from collections.abc import Callable

import anyio

from hosts.cli._output import literal, program, retry_command, store_flag
from hosts.cli._signals import SignalStop, Stopped, stopped_by
from interactions.errors import (
    PiRecipesError,
    RunError,
    StoreUnavailableError,
    UnknownRunError,
    UsageError,
    error_code,
)
from interactions.secrets import scrub_logs

__all__ = ["DRIVEN_RUN", "report", "report_unexpected", "run_reporting"]

RESUMABLE = frozenset({"usage_window", "unavailable", "transient_exhausted"})


def report(error: PiRecipesError, store: str | None = None) -> int:
    """Print ``error`` as ``pi-recipes: <label>: <message>`` on stderr (and its hint, when it
    has one); return its exit code. A command it quotes for the error's run is made the exact
    one to type: this program as invoked, and ``store`` (the ``--store`` given) repeated."""
    code = error_code(error)
    run_id = getattr(error, "run_id", None)
    scrub = _scrubber()  # a recipe's own failure (its import, say) may quote a credential
    said = scrub(_exact(str(error), run_id, store))
    print(f"pi-recipes: {code.label}: {_safe(said)}", file=sys.stderr)
    hint = getattr(error, "hint", None)
    if isinstance(error, RunError) and not hint and error.run_id and error.reason in RESUMABLE:
        hint = f"retry it later with: pi-recipes runs retry {error.run_id}"
    if hint:
        print(f"pi-recipes: {_safe(scrub(_exact(hint, run_id, store)))}", file=sys.stderr)
    return code.exit_code


def _scrubber() -> Callable[[str], str]:
    """What takes every credential of the environment out of a text before it is printed."""
    from recipes.models import Secrets

    return Secrets.from_env(os.environ).scrub


def _exact(text: str, run_id: str | None, store: str | None) -> str:
    """``text`` with each ``pi-recipes runs VERB RUN`` it quotes for ``run_id`` (as the
    library writes it, knowing neither the program's path nor the store) made exact."""
    if not run_id:
        return text
    quoted = re.compile(  # as written: no path before it, no --store after it (exact already)
        rf"(?<![\w/.-])pi-recipes runs (retry|resume|show) {re.escape(run_id)}"
        r"(?![\w-])(?! --(?:store|engine))"
    )
    return quoted.sub(lambda m: f"{program()} runs {m[1]} {run_id}{store_flag(store)}", text)


def _safe(text: str) -> str:
    """``text`` printable whatever it holds (an argument that was not UTF-8, say), and on a
    terminal with its control characters shown (a provider's message is read, not obeyed)."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return literal(text) if sys.stderr.isatty() else text


def _check_arguments(args: argparse.Namespace) -> None:
    for name, value in vars(args).items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                shown = _safe(value)
                raise UsageError(f"the argument {name} ({shown}) is not valid UTF-8") from None


async def _command(args: argparse.Namespace) -> int:
    if args.command == "run":
        from hosts.cli._run import run_command

        return await run_command(args)
    if args.command == "worker":
        from hosts.cli._worker import worker_command

        return await worker_command(args)
    if args.command == "graph":
        from hosts.cli._graph import graph_command

        return await graph_command(args)
    if args.command == "new":
        from hosts.cli._new import new_command

        return new_command(args)
    if args.command == "users":
        from hosts.cli._users import users_command

        return users_command(args)
    if args.command == "audit":
        from hosts.cli._audit import audit_command

        return await audit_command(args)
    if args.command == "rules":
        from hosts.cli._rules import rules_command

        return await rules_command(args)
    from hosts.cli._runs import runs_command

    return await runs_command(args)


async def _main(args: argparse.Namespace) -> int:
    code: int | None = None
    failure: BaseException | None = None
    with anyio.CancelScope() as scope, SignalStop(scope) as stop:
        try:
            code = await _command(args)
        except anyio.get_cancelled_exc_class():
            raise
        except BaseException as exc:  # re-raised below, once the signals are given back
            if not stopped_by(exc):
                failure = exc
    if failure is not None:
        if isinstance(failure, StoreUnavailableError) and failure.reason != "corrupt":
            failure.hint = failure.hint or await _left_running(args)
        raise failure
    if code is None:  # a signal stopped it: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP
        signum = stop.received or signal.SIGTERM
        await _say_stopped(args, signum)
        return 128 + signum
    return code


DRIVEN_RUN = "driven_run"
"""The attribute of a command's arguments a command sets to the id of the run it drives
(``run``, ``graph run``, ``runs answer|resume|retry``) before it drives it: a signal that
stops the command then says what became of that run."""

_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


async def _say_stopped(args: argparse.Namespace, signum: int) -> None:
    """One line on stderr after a signal stopped a command that drove a run: where the run
    stands now (as the store says: a leg cut short is ``failed_resumable``) and the exact
    command that continues it. A command that drove no run says nothing."""
    run_id: str | None = getattr(args, DRIVEN_RUN, None)
    if not run_id:
        return
    from hosts.cli._store import location_of, where_of
    from interactions.store import RunStatus, open_store

    where = where_of(args)
    show = f"{program()} runs show {run_id}{store_flag(where)}"
    said = f"was being driven; see where it stands with: {show}"  # the store did not answer
    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
        try:
            async with await open_store(location_of(args)) as store:
                status = (await store.get_run(run_id)).status
        except UnknownRunError:
            said = "had not been stored yet: nothing to continue"
        except Exception:  # a store that cannot answer now: the line still says where to look
            pass
        else:
            if status is RunStatus.FAILED_RESUMABLE:
                said = (
                    "was interrupted: it is failed_resumable; continue it with: "
                    f"{retry_command(run_id, where)}"
                )
            elif status is RunStatus.PAUSED_WAITING_HUMAN:
                said = f"is paused, waiting for answers; see them with: {show}"
            elif status is RunStatus.RUNNING:
                said = (
                    "is still running, elsewhere (or its stop could not be recorded: once no "
                    f"process drives it, {program()} runs recover finds it); see it with: {show}"
                )
            else:
                said = f"is {status.value}; see it with: {show}"
    name = _SIGNALS.get(signal.Signals(signum), signal.Signals(signum).name)
    print(f"pi-recipes: stopped by {name}: run {run_id} {_safe(said)}", file=sys.stderr)


STRANDED_BOUND = 60
"""The ``runs recover --older-than`` a stranded run's hint gives: it frees the run this many
seconds after the hint, and no run that made progress within as long."""


async def _left_running(args: argparse.Namespace) -> str | None:
    """After the store went away under a command that drove a run: the line that names the
    run, if it may be left ``running``, with the commands that free and continue it (``None``
    when the command drove no run, or the store says the run is not running)."""
    run_id: str | None = getattr(args, DRIVEN_RUN, None)
    if not run_id:
        return None
    from hosts.cli._store import location_of, where_of
    from interactions.store import RunStatus, open_store

    state = "may be left running: once the store answers again,"  # it cannot say now
    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
        try:
            async with await open_store(location_of(args)) as store:
                status = (await store.get_run(run_id)).status
        except UnknownRunError:
            return None
        except Exception:  # still away
            pass
        else:
            if status is not RunStatus.RUNNING:
                return None
            state = "is left running:"
    where = where_of(args)
    recover = f"{program()} runs recover --older-than {STRANDED_BOUND}{store_flag(where)}"
    return (
        f"run {run_id} {state} free it (from {STRANDED_BOUND} s on) "
        f"with: {recover}; then continue it with: {retry_command(run_id, where)}"
    )


def run_reporting(args: argparse.Namespace) -> int:
    """Run the parsed command; return its exit code (errors reported on one line, Ctrl-C is
    130, SIGTERM 143)."""
    scrub_logs()  # no log line of any command holds a credential of the environment
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="pi-recipes: warning: %(message)s"
    )
    try:
        _check_arguments(args)
        code: int = anyio.run(_main, args)
        return code
    except PiRecipesError as error:
        return report(error, getattr(args, "store_given", None))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except MemoryError:
        return _out_of_memory(args)
    except Exception as error:  # none of ours: a bug in a recipe, a model or pi-recipes
        if isinstance(error, ExceptionGroup) and error.split(MemoryError)[0] is not None:
            return _out_of_memory(args)
        return report_unexpected(error)
    except BaseException as error:  # a tool's own (SystemExit, say), maybe in a task group's
        if isinstance(error, BaseExceptionGroup) and error.split(KeyboardInterrupt)[1] is None:
            return 130
        if isinstance(error, Stopped):  # raised in the loop itself, as it took the signal
            return 128 + error.signum
        return report_unexpected(error)


def _out_of_memory(args: argparse.Namespace) -> int:
    """One line (not a traceback) for a command the process ran out of memory in: the run it
    drove was recorded failed (or, if even that could not be written, ``runs recover`` frees
    it), and the command that shows it. Exit code 1."""
    run_id: str | None = getattr(args, DRIVEN_RUN, None)
    said = "pi-recipes: error: the process ran out of memory (MemoryError)"
    if run_id:
        from hosts.cli._store import where_of

        show = f"{program()} runs show {run_id}{store_flag(where_of(args))}"
        said += f"; run {run_id} stopped with it: see where it stands with: {show}"
    print(said, file=sys.stderr)
    return 1


def report_unexpected(error: BaseException) -> int:
    """Report an error none of pi-recipes' own (exit 1): one line, then its traceback to find
    the bug by, with every credential of the environment scrubbed out of both (an exception's
    text may quote one)."""
    scrub = _scrubber()
    line = scrub(f"{type(error).__name__}: {error}")
    trace = scrub("".join(traceback.format_exception(error)))
    sys.stderr.write(f"pi-recipes: error: {literal(line)}\n{trace}")
    return 1
