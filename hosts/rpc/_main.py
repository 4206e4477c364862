"""The entry points of the RPC mode: :func:`serve` (a coroutine) and :func:`main` (the command
line ``python -m hosts.rpc RECIPE [--agent A] [--model M]``; ``pi-recipes rpc ...`` hands its
arguments to it)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from functools import partial

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from hosts.rpc._server import RpcServer
from hosts.rpc._stdio import protocol_stdio
from interactions import PiRecipesError, UsageError
from recipes import Recipe, load_recipe
from recipes.models import Model

__all__ = ["build_parser", "main", "serve"]


async def serve(
    recipe: str | Recipe,
    *,
    agent: str | None = None,
    model: Model | str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: ByteReceiveStream | None = None,
    stdout: ByteSendStream | None = None,
) -> None:
    """Serve ``recipe`` (a ``load_recipe`` reference, or a loaded :class:`~recipes.Recipe`) in
    RPC mode until ``stdin`` ends.

    ``stdin``/``stdout`` default to the process's standard input and output; then, while it
    serves, anything else written to standard output goes to standard error (see
    :func:`hosts.rpc._stdio.protocol_stdio`). ``env`` defaults to ``os.environ``; the model is
    chosen as :class:`RpcServer` says.

    Raises ``UsageError`` (``RecipeLoadError`` included) before any record is written when the
    recipe, the agent or the model cannot be had; after that, nothing the client sends raises.
    """
    with ExitStack() as stack:
        if stdin is None or stdout is None:
            std_in, std_out = stack.enter_context(protocol_stdio())
            stdin, stdout = stdin or std_in, stdout or std_out
        loaded = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
        server = RpcServer(loaded, agent=agent, model=model, env=env)
        await server.run(stdin, stdout)


def build_parser(prog: str = "pi-recipes rpc") -> argparse.ArgumentParser:
    """The argument parser of :func:`main`."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve a recipe agent over a JSON-lines protocol on stdin/stdout "
        "(compatible with the pi coding agent's RPC mode).",
    )
    parser.add_argument(
        "recipe", help="a recipe file (path.py[:function]), module:function or entry point name"
    )
    parser.add_argument("--agent", help="the agent to run (default: the recipe's default agent)")
    parser.add_argument(
        "--model",
        help="provider:name (default: the agent's model, else the recipe's demo model)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Serve in RPC mode until standard input ends; return the exit code.

    ``argv`` are the arguments after the command (default: ``sys.argv[1:]``). Returns 0 when
    the input ended, 2 when the recipe, agent or model cannot be had (the reason is written to
    standard error; standard output stays empty), 1 for another failure of the library, 130 on
    Ctrl-C. Bad arguments exit with status 2 through ``argparse``. Logging goes to standard
    error.
    """
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="pi-recipes rpc: %(levelname)s: %(message)s",
    )
    try:
        anyio.run(partial(serve, args.recipe, agent=args.agent, model=args.model))
    except UsageError as exc:
        print(f"pi-recipes rpc: error: {exc}", file=sys.stderr)
        return 2
    except PiRecipesError as exc:
        print(f"pi-recipes rpc: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
