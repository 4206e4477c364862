"""The RPC mode host: a recipe agent driven over JSON lines on stdin/stdout.

Speaks the RPC protocol of the pi coding agent 1.6 for the commands it implements (``prompt``,
``steer``, ``follow_up``, ``abort``, ``get_state``, ``get_messages``), its session events
(``agent_end`` then ``agent_settled``, ``queue_update``, pi-shaped messages) and its dialogs
(``extension_ui_request`` / ``extension_ui_response``), so a pi front end, pi's own
``RpcClient`` included, can drive a Python recipe. ``docs/hosts/rpc.md`` lists the records.

Entry points:

- :func:`main` (``argv`` → exit code) is the command line: ``python -m hosts.rpc RECIPE
  [--agent A] [--model provider:name] [--auto-approve]``; ``pi-recipes rpc`` parses the same
  arguments (:func:`configure_parser`) and calls :func:`run_parsed`.
- :func:`serve` is the same as a coroutine, for a host that runs its own event loop or serves
  other streams than the process's stdio.
- :class:`RpcServer` is one session served over a pair of byte streams; :class:`RpcDialogUI`
  its dialogs.

Errors: a recipe, agent or model that cannot be had raises ``UsageError`` from :func:`serve`
(``main`` returns 2) before anything is written; once serving, nothing the client sends
raises — bad input gets an error record. SIGTERM/SIGHUP stop it gracefully (exit 143/129, as
pi 1.6); a client that closes the host's output ends the session, exit 1 (:data:`OUTPUT_LOST`).
A model failure ends the run with an ``agent_end`` of status ``failed``; the server keeps
serving.
"""

from hosts.rpc._main import (
    EXIT_ON_SIGNAL,
    OUTPUT_LOST,
    build_parser,
    configure_parser,
    main,
    run_parsed,
    serve,
)
from hosts.rpc._server import ABORT_GRACE, DRAIN_GRACE, RpcServer
from hosts.rpc._ui import DEFAULT_TIMEOUT, RpcDialogUI

__all__ = [
    "ABORT_GRACE",
    "DEFAULT_TIMEOUT",
    "DRAIN_GRACE",
    "EXIT_ON_SIGNAL",
    "OUTPUT_LOST",
    "RpcDialogUI",
    "RpcServer",
    "build_parser",
    "configure_parser",
    "main",
    "run_parsed",
    "serve",
]
