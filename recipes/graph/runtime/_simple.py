"""``compute``, ``tool`` and ``condition`` router nodes: no model, no human.

A compute node evaluates its bounded expressions and types the result by its schema. A tool
node runs its ``command:`` with ``bash -c`` in the run's directory, within its timeout; each
reference reaches it as an environment variable, never as shell text (``{{!…}}``, raw, is
written into the command), and the engine's credentials stay out of its environment unless
its ``env:`` names them. Its stdout is its output (a JSON object, or ``{"result": text}``); a
non-zero exit fails the node, resumably, and a reference with no value fails it before it
runs. A router passes its input on.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Mapping
from typing import Any

import anyio

from recipes.graph import ir
from recipes.graph.language import (
    MISSING,
    VALUE_DEPTH,
    ExpressionError,
    as_text,
    bind_command,
    compile_expr,
    nests_deeper,
    read_json,
    references,
)
from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome, failed, finished
from recipes.graph.runtime._process import node_process
from recipes.graph.runtime._schemas import conform
from recipes.graph.runtime._state import NodeRun
from recipes.models._secrets import credential_names

__all__ = ["MAX_OUTPUT", "run_compute", "run_router", "run_tool"]

MAX_OUTPUT = 1_000_000
"""The most bytes of a tool's stdout (more fails the node) and of its stderr (the rest is
dropped) kept, and of a compute node's output written as JSON."""


def _command_env(env: Mapping[str, str], asked: tuple[str, ...]) -> dict[str, str]:
    """The engine's environment without its credentials (but those ``asked`` by name) and
    without any ``PI_VAR_*`` of its own (the command's references are set afresh)."""
    kept = credential_names(env).difference(asked)
    return {name: value for name, value in env.items()
            if name not in kept and not name.startswith("PI_VAR_")}  # fmt: skip


def _typed(ctx: NodeContext, node: ir.Node, value: dict[str, Any]) -> NodeOutcome:
    schema = ctx.graph.schema(node.output)
    if schema is None:
        return finished(value)
    output, errors = conform(schema, value)
    if errors:
        return failed(
            f"the output does not fit schema {schema.name}: {'; '.join(errors)}", "SCHEMA_MISMATCH"
        )
    return finished(output)


async def run_compute(
    ctx: NodeContext, node: ir.ComputeNode, run: NodeRun, mode: Mode
) -> NodeOutcome:
    """Evaluate each expression in order; a failure is ``EXPRESSION_FAILED``, a value past the
    language's bounds ``VALUE_TOO_LARGE``, the process out of memory ``OUT_OF_MEMORY``, and
    an output of more than :data:`MAX_OUTPUT` bytes (as JSON) ``OUTPUT_TOO_LARGE``, as a tool's
    stdout is bounded."""
    out: dict[str, Any] = {}
    for key, text in node.expr:
        try:
            out[key] = compile_expr(text).evaluate(ctx.scope.namespaces)
        except ExpressionError as exc:
            return failed(f"{key}: {exc}", exc.code)
        except MemoryError:  # what it built is gone with the evaluation's frames
            return failed(f"{key}: the process ran out of memory evaluating it", "OUT_OF_MEMORY")
    if nests_deeper(out):
        return failed(f"its output nests deeper than {VALUE_DEPTH} levels; make it flatter",
                      "OUTPUT_TOO_DEEP")  # fmt: skip
    written = len(json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode())
    if written > MAX_OUTPUT:
        return failed(
            f"its output is {written:,} bytes as JSON, more than the {MAX_OUTPUT:,} a node's "
            "output may be; compute less, or keep the large value in a file a tool writes",
            "OUTPUT_TOO_LARGE",
        )
    return _typed(ctx, node, out)


async def run_router(
    ctx: NodeContext, node: ir.RouterNode, run: NodeRun, mode: Mode
) -> NodeOutcome:
    """A router's output is its input."""
    return finished(dict(ctx.scope.namespaces.get("input") or {}))


async def run_tool(ctx: NodeContext, node: ir.ToolNode, run: NodeRun, mode: Mode) -> NodeOutcome:
    """Run the command; its stdout is the output. A reference with no value fails the node
    before anything runs (``MISSING_REFERENCE``): the placeholder would be a literal word."""
    unset = [r.text for r in references(node.command or "")
             if r.namespace in ctx.scope.namespaces
             and ctx.scope.lookup(r.path) in (MISSING, None)]  # fmt: skip
    if unset:
        return failed(
            f"the command reads {', '.join(dict.fromkeys(unset))}, which has no value: it was "
            "not run (give the value, or read it only where a node has set it)",
            "MISSING_REFERENCE",
        )
    try:
        bound = bind_command(node.command or "")
    except ValueError as exc:  # the compiler's P014 refuses it first
        return failed(f"the command was not run: {exc}", "UNSAFE_REFERENCE")
    command = ctx.scope.render(bound.text)  # its raw references
    env = _command_env(ctx.runner.env, node.env)
    for name, ref in bound.variables:
        value = ctx.scope.lookup(ref.path)
        env[name] = ref.text if value is MISSING or value is None else as_text(value)
        if "\0" in env[name]:
            return failed(
                f"the value of {ref.text} holds a NUL character, which a command cannot be "
                "given: it was not run",
                "TOOL_FAILED",
            )
    chunks: dict[str, bytearray] = {"out": bytearray(), "err": bytearray()}
    overflow: set[str] = set()

    async def drain(stream: Any, name: str) -> None:
        into = chunks[name]
        async for data in stream:
            if len(into) + len(data) > MAX_OUTPUT:
                overflow.add(name)
            if len(into) < MAX_OUTPUT:
                into.extend(data[: MAX_OUTPUT - len(into)])

    try:
        async with node_process(
            ["bash", "-c", command], ctx, stdin=subprocess.DEVNULL, env=env
        ) as process:
            with anyio.fail_after(ctx.deadline) if ctx.deadline else contextlib.nullcontext():
                async with anyio.create_task_group() as tg:
                    tg.start_soon(drain, process.stdout, "out")
                    tg.start_soon(drain, process.stderr, "err")
                code = await process.wait()
    except TimeoutError:  # the process and its group were killed on the way out
        return failed(
            f"the command ran past its time bound ({ctx.deadline:g}s)", "TIMEOUT", resumable=True
        )
    except OSError as exc:  # it could not start: a value too long for one argument, say
        return failed(f"the command could not start: {exc.strerror or exc}", "TOOL_FAILED")
    stdout = chunks["out"].decode("utf-8", "replace")
    if code != 0:
        stderr = chunks["err"].decode("utf-8", "replace").strip()[-2000:]
        return failed(f"the command exited with {code}: {stderr}", "TOOL_FAILED", resumable=True)
    if "out" in overflow:  # cut, it would be another output: JSON read as text, say
        return failed(
            f"the command wrote more than {MAX_OUTPUT:,} bytes on standard output; write "
            "less, or write it to a file and output the file's path",
            "OUTPUT_TOO_LARGE",
        )
    try:
        value = read_json(stdout)
    except json.JSONDecodeError:
        value = None
    except ValueError as exc:  # JSON, but deeper than any run could keep
        return failed(f"the command's output: {exc}", "OUTPUT_TOO_DEEP")
    return _typed(ctx, node, value if isinstance(value, dict) else {"result": stdout.strip()})
