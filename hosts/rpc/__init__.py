"""The RPC mode host: a recipe agent driven over JSON lines on stdin/stdout.

Compatible with the pi coding agent's RPC mode for prompts, steering, aborts, state, the
transcript, the session's events and dialogs (``extension_ui_request`` /
``extension_ui_response``), so an existing pi front end can drive a Python recipe.

Entry points:

- :func:`main` (``argv`` → exit code) is the command line: ``python -m hosts.rpc RECIPE
  [--agent A] [--model provider:name]``, and what ``pi-recipes rpc`` calls.
- :func:`serve` is the same as a coroutine, for a host that runs its own event loop or serves
  other streams than the process's stdio.
- :class:`RpcServer` is one session served over a pair of byte streams.

Errors: a recipe, agent or model that cannot be had raises ``UsageError`` from :func:`serve`
(``main`` returns 2) before anything is written; once serving, nothing the client sends
raises — bad input gets an error response. A model failure ends the run with an ``agent_end``
of status ``failed``; the server keeps serving.
"""

from hosts.rpc._main import build_parser, main, serve
from hosts.rpc._server import ABORT_GRACE, RpcServer

__all__ = ["ABORT_GRACE", "RpcServer", "build_parser", "main", "serve"]
