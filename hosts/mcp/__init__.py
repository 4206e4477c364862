"""The MCP host: a recipe's tools served over the Model Context Protocol, asking through
elicitation.

``pi-recipes mcp RECIPE`` serves every tool of a recipe to an MCP client (Claude Desktop, an
IDE, any client of the official SDK) on stdin/stdout, or over streamable HTTP with ``--http
HOST:PORT``, where every request needs the web host's bearer token and a browser page's
``Origin`` must be one the server serves or was given (the host kit's ``Gate``). Each tool is
an MCP tool with the JSON Schema of its parameters; a call runs the tool's ``execute``
directly (the client's model is the agent: there is no agent loop here), its text is the
result, a failure is a tool error with the message.

A question or an approval inside a tool goes through the design's chain with one channel added
before the durable interrupt: :class:`ElicitationChannel`, which shows the ask as an
``elicitation/create`` form when the client declared the elicitation capability
(:func:`elicitation_form`, :func:`read_elicitation`). A client without it falls through to the
rest of the chain: ``PI_ASK_USER_AUTO_APPROVE``, ``PI_INTERRUPT_RESUME`` (the call returns the
pause: its text and the interrupt in ``_meta["pi-recipes/interrupt"]``; nothing resumes it),
else ``unavailable``.

Entry points: :func:`main` (the command line), :func:`serve_stdio` / :func:`serve_http` (for a
host running its own event loop), :func:`build_server` (the SDK ``Server``).

Errors: a recipe, agent or address that cannot be had is a ``UsageError`` before anything is
served (``main`` returns 2). Once serving, what a client sends never raises: a tool's failure,
bad arguments and a malformed elicitation reply (an ``InvalidPayloadError`` inside the tool)
end the call as a tool error; an unknown tool is a JSON-RPC error; a client's cancellation
aborts the call, and an ask waiting on it raises ``InteractionAborted``.
"""

from hosts.mcp._calls import INTERRUPT_META, MODE, PROGRESS_BUFFER
from hosts.mcp._channel import (
    Elicit,
    ElicitationChannel,
    ElicitationReply,
    ElicitationTimeout,
    elicitation_timeout,
    mcp_channels,
)
from hosts.mcp._forms import ElicitationForm, elicitation_form, read_elicitation
from hosts.mcp._main import (
    build_parser,
    configure_parser,
    main,
    parse_address,
    run_parsed,
    serve_http,
    serve_stdio,
)
from hosts.mcp._server import build_server, mcp_tool, served_tools

__all__ = [
    "INTERRUPT_META",
    "MODE",
    "PROGRESS_BUFFER",
    "Elicit",
    "ElicitationChannel",
    "ElicitationForm",
    "ElicitationReply",
    "ElicitationTimeout",
    "build_parser",
    "build_server",
    "configure_parser",
    "elicitation_form",
    "elicitation_timeout",
    "main",
    "mcp_channels",
    "mcp_tool",
    "parse_address",
    "read_elicitation",
    "run_parsed",
    "serve_http",
    "serve_stdio",
    "served_tools",
]
