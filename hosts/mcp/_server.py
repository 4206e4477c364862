"""The MCP server of a recipe: its tools listed with their JSON Schemas, and called.

Built on the SDK's low-level :class:`mcp.server.Server` (the tools are already described:
each has a name, a description and the JSON Schema of its pydantic parameters, the same schema a
model sees). One server serves any number of connections; each tool call runs as
:func:`~hosts.mcp._calls.run_tool_call` says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from uuid import uuid4

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from hosts.mcp._calls import CallHost, run_tool_call
from hosts.mcp._channel import ElicitationChannel
from hosts.mcp._session import can_elicit, session_elicit, session_progress
from interactions import UsageError
from interactions.asks import interrupt_ttl
from interactions.secrets import Secrets
from recipes import AbortSignal, Recipe, Tool

__all__ = ["build_server", "mcp_tool", "served_tools"]


def mcp_tool(tool: Tool) -> types.Tool:
    """How a recipe tool is listed: its name, label (as the title, when it differs),
    description and the JSON Schema of its parameters."""
    return types.Tool(
        name=tool.name,
        title=tool.label if tool.label != tool.name else None,
        description=tool.description,
        input_schema=tool.spec().parameters,
    )


def served_tools(recipe: Recipe, agent: str | None = None) -> list[Tool]:
    """The tools a server offers: every tool of ``recipe``, or only those of ``agent``.
    Raises :class:`~interactions.UsageError` for an unknown agent or a recipe with no tool."""
    tools = list(recipe.tools.values()) if agent is None else recipe.tools_for(recipe.agent(agent))
    if not tools:
        raise UsageError(f"recipe {recipe.name!r} registers no tool to serve over MCP")
    return tools


def build_server(
    recipe: Recipe,
    *,
    agent: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Server[Any]:
    """An MCP server offering the tools of ``recipe`` (or of its agent ``agent``).

    ``env`` is the session's environment every tool context carries (default: a snapshot of
    ``os.environ`` taken now); ``cwd`` its working directory (default: the current one).
    Raises :class:`~interactions.UsageError` as :func:`served_tools` does, and
    :class:`~interactions.ContractError` for a malformed ``PI_INTERRUPT_TTL_SECONDS`` in ``env``.
    """
    tools = served_tools(recipe, agent)
    by_name = {tool.name: tool for tool in tools}
    listed = [mcp_tool(tool) for tool in tools]
    snapshot = dict(os.environ if env is None else env)
    interrupt_ttl(snapshot)  # a malformed lifetime fails here, not at every asking call
    secrets = Secrets.from_env(snapshot)  # out of all it sends: results, progress, questions
    host = CallHost(
        env=snapshot,
        cwd=cwd or Path.cwd(),
        session_id=f"mcp-{uuid4().hex[:12]}",
        agent=agent or recipe.default_agent,
    )

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool {params.name!r}; tools: {', '.join(by_name)}",
            )
        abort = AbortSignal()
        channel = ElicitationChannel(
            session_elicit(ctx, abort, secrets),
            available=can_elicit(ctx),
            protocol_version=ctx.session.protocol_version,
        )
        result = await run_tool_call(
            tool,
            params.arguments or {},
            host,
            elicitation=channel,
            progress=session_progress(ctx, secrets),
            abort=abort,
        )
        return _scrubbed(result, secrets)

    def input_schema(name: str) -> Mapping[str, Any] | None:
        tool = by_name.get(name)
        return tool.spec().parameters if tool is not None else None

    return Server(
        f"pi-recipes {recipe.name}",
        version=_version(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )


def _scrubbed(result: types.CallToolResult, secrets: Secrets) -> types.CallToolResult:
    """``result`` with every text in it scrubbed of ``secrets`` (a tool that prints its
    environment hands the client no key)."""
    sent = result.model_dump(by_alias=True, exclude_none=True)
    scrubbed = secrets.scrub_value(sent)
    return result if scrubbed is sent else types.CallToolResult.model_validate(scrubbed)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pi-recipes")
    except PackageNotFoundError:
        return "unknown"
