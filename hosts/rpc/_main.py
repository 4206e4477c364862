"""The entry points of the RPC mode: :func:`serve` (a coroutine) and :func:`main` (the command
line ``python -m hosts.rpc RECIPE [--agent A] [--model M] [--auto-approve]``; ``pi-recipes rpc``
parses the same arguments (:func:`configure_parser`) and hands them to :func:`run_parsed`)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from functools import partial
from typing import NoReturn

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from hosts._command import apply_policy, log_to_stderr, policy_argument, stdio_host_parser
from hosts._stdio import protocol_stdio
from hosts.rpc._server import ABORT_GRACE, DRAIN_GRACE, RpcServer
from interactions import AUTO_APPROVE_ENV, PiRecipesError, UsageError
from interactions.secrets import scrub_logs
from recipes import Recipe, load_recipe
from recipes.models import Model

__all__ = [
    "EXIT_ON_SIGNAL",
    "OUTPUT_LOST",
    "STOP_BOUND",
    "build_parser",
    "configure_parser",
    "main",
    "run_parsed",
    "serve",
]


EXIT_ON_SIGNAL = {signal.SIGTERM: 143, signal.SIGHUP: 129}
"""The exit code after a graceful stop on each signal (128 + its number, as pi 1.6 exits)."""

OUTPUT_LOST = 1
"""The exit code when writing to standard output failed (the client closed its end): the
session ended without its records reaching anyone, which is no clean end."""

STOP_BOUND = ABORT_GRACE + DRAIN_GRACE + 5.0
"""The most seconds a graceful stop on a signal may take (the abort's grace, then the drain's,
and some slack). Past it (a tool that ignores its abort, a blocking call in a thread), or on a
second signal, the process exits at once with the same code, saying so on standard error."""

DESCRIPTION = """\
Serve a recipe agent over JSON lines on stdin/stdout, speaking the RPC protocol of the pi
coding agent 1.6: commands (prompt, steer, follow_up, abort, get_state, get_messages) get a
response record; the session's events, agent_settled, queue_update and dialogs
(extension_ui_request / extension_ui_response) are records too. See docs/hosts/rpc.md."""

EPILOG = """\
Dialogs time out after 120 s unless the tool gives a timeout; a timeout or a dismissal is a
decline, an abort is an error of the tool.

exit status: 0 when standard input ended (the running prompt is aborted first); 143 after
SIGTERM and 129 after SIGHUP (the prompt is aborted, open dialogs get cancel notices, queued
records are written; a second signal, or a stop taking over 20 s, exits at once); 2 when the
recipe, agent or model cannot be had (nothing is written to standard output); 1 when
standard output broke (the client closed it) or for another failure; 130 on Ctrl-C."""


async def serve(
    recipe: str | Recipe,
    *,
    agent: str | None = None,
    model: Model | str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: ByteReceiveStream | None = None,
    stdout: ByteSendStream | None = None,
    handle_signals: bool = False,
    append_system_prompt: str | None = None,
    tools: Sequence[str] | None = None,
    async_questions: bool = False,
) -> int:
    """Serve ``recipe`` (a ``load_recipe`` reference, or a loaded :class:`~recipes.Recipe`) in
    RPC mode until ``stdin`` ends; return the exit code: 0, or :data:`OUTPUT_LOST` when
    ``stdout`` broke (the client is gone; its records reached no one).

    ``stdin``/``stdout`` default to the process's standard input and output; then, while it
    serves, anything else written to standard output goes to standard error (see
    :func:`hosts._stdio.protocol_stdio`). ``env`` defaults to ``os.environ``; the model is
    chosen as :class:`RpcServer` says. With ``handle_signals`` (the main thread only), SIGTERM
    and SIGHUP stop the server gracefully (:meth:`RpcServer.stop`) and the code returned is
    :data:`EXIT_ON_SIGNAL`'s; a second signal, or a stop that takes longer than
    :data:`STOP_BOUND` (after a signal or the input's end), ends the process at once with
    that code. ``append_system_prompt``,
    ``tools`` and ``async_questions`` are :class:`RpcServer`'s.

    Raises ``UsageError`` (``RecipeLoadError`` included) before any record is written when the
    recipe, the agent or the model cannot be had; after that, nothing the client sends raises.
    """
    with ExitStack() as stack:
        if stdin is None or stdout is None:
            std_in, std_out = stack.enter_context(protocol_stdio())
            stdin, stdout = stdin or std_in, stdout or std_out
        loaded = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
        server = RpcServer(
            loaded, agent=agent, model=model, env=env, append_system_prompt=append_system_prompt,
            tools=tools, async_questions=async_questions,
        )  # fmt: skip
        if not handle_signals:
            await server.run(stdin, stdout)
            return OUTPUT_LOST if server.output_lost else 0
        code = 0
        async with anyio.create_task_group() as tasks:

            async def stop_on_signals() -> None:
                nonlocal code
                with anyio.open_signal_receiver(*EXIT_ON_SIGNAL) as signals:
                    async for signum in signals:
                        if code:
                            _exit_now(code, "a second signal came")
                        code = EXIT_ON_SIGNAL[signal.Signals(signum)]
                        server.stop(f"the host got {signal.Signals(signum).name}")
                        tasks.start_soon(exit_past_the_bound, code)

            async def exit_past_the_bound(code: int, since: str = "the signal") -> None:
                await anyio.sleep(STOP_BOUND)
                _exit_now(code, f"the run did not stop within {STOP_BOUND:g} s of {since}")

            async def exit_past_the_bound_of_the_input() -> None:
                # a tool deaf to the abort would hold the process (its thread) for ever
                await server.stopping.wait()
                await exit_past_the_bound(code, "the end of the input")

            tasks.start_soon(stop_on_signals)
            tasks.start_soon(exit_past_the_bound_of_the_input)
            await server.run(stdin, stdout)
            tasks.cancel_scope.cancel()
        return code or (OUTPUT_LOST if server.output_lost else 0)


def _exit_now(code: int, why: str) -> NoReturn:
    """Leave the process now, whatever still runs in it (a signal's last resort: cancelling
    cannot stop a tool that ignores it)."""
    sys.stderr.write(f"pi-recipes rpc: exiting at once: {why}\n")
    sys.stderr.flush()
    os._exit(code)


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` the arguments, description and epilog of :func:`main` (``pi-recipes
    rpc`` configures its subcommand with it); returns ``parser``."""
    stdio_host_parser(parser, DESCRIPTION, EPILOG)
    policy_argument(parser)
    parser.add_argument("--agent", help="the agent to run (default: the recipe's default agent)")
    parser.add_argument(
        "--model",
        metavar="PROVIDER:NAME",
        help="the model (default: the agent's model, else the recipe's demo model)",
    )
    parser.add_argument(
        "--append-system-prompt",
        metavar="TEXT",
        help="text added at the end of the agent's instructions (as pi's flag)",
    )
    parser.add_argument(
        "--tools",
        metavar="NAMES",
        help="comma-separated tools the agent may use (default: all of its tools)",
    )
    parser.add_argument(
        "--async-questions",
        action="store_true",
        help="give the agent ask_user_async and await_answers, handed to the client as "
        "extension_ui_request calls (a graph engine's pi backend answers them)",
    )
    parser.add_argument(
        "--auto-approve",
        action="store_true",
        help="resolve every question and approval without a dialog, as CI does "
        "(PI_ASK_USER_AUTO_APPROVE=1 for this session only)",
    )
    return parser


def build_parser(prog: str = "pi-recipes rpc") -> argparse.ArgumentParser:
    """The argument parser of :func:`main`."""
    return configure_parser(argparse.ArgumentParser(prog=prog))


def main(argv: Sequence[str] | None = None) -> int:
    """Serve in RPC mode until standard input ends; return the exit code.

    ``argv`` are the arguments after the command (default: ``sys.argv[1:]``); bad arguments
    exit with status 2 through ``argparse``. See :func:`run_parsed`.
    """
    scrub_logs()
    return run_parsed(build_parser().parse_args(argv))


def run_parsed(args: argparse.Namespace) -> int:
    """Serve with the arguments a :func:`configure_parser` parser read; return the exit code:
    0 when the input ended, 143/129 after SIGTERM/SIGHUP, 2 when the recipe, agent or model
    cannot be had (the reason is written to standard error; standard output stays empty), 1
    when standard output broke or for another failure of the library, 130 on Ctrl-C. Logging
    goes to standard error.
    """
    log_to_stderr("pi-recipes rpc")
    env = {**os.environ, AUTO_APPROVE_ENV: "1"} if args.auto_approve else None
    try:
        apply_policy(args.policy, os.environ if env is None else env)
        code: int = anyio.run(
            partial(
                serve,
                args.recipe,
                agent=args.agent,
                model=args.model,
                env=env,
                handle_signals=True,
                append_system_prompt=args.append_system_prompt,
                tools=[t.strip() for t in args.tools.split(",") if t.strip()]
                if args.tools is not None
                else None,
                async_questions=args.async_questions,
            )
        )
    except UsageError as exc:
        print(f"pi-recipes rpc: error: {exc}", file=sys.stderr)
        return 2
    except PiRecipesError as exc:
        print(f"pi-recipes rpc: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return code
