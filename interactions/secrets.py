"""The credentials a process holds, and the one seam that keeps them out of every output.

:class:`Secrets` knows a process's credentials (its environment's ``*_KEY``, ``*_TOKEN``,
``*_SECRET``... and URL passwords, and a model's own key) and replaces them in any text with
``***``; :func:`credential_names` names the variables that hold one. What leaves a process
passes one of these, whatever wrote it:

- a log record: :func:`scrub_logs`, installed by every host's entry point, scrubs each record's
  message, arguments, traceback and stack as the record is made, whichever logger or handler
  (uvicorn's, Slack's SDK's, the library's own) emits it;
- a store write: the stores of ``interactions.store`` scrub every string of a run, its
  checkpoint, error, events, interactions and answers as they are written;
- a streamed text: :class:`TextScrubber` scrubs the text as it grows, so that a secret split
  across deltas is replaced whole, before any delta is shown;
- a host's send path: each host scrubs what it sends (a WebSocket frame, a Slack message, an
  MCP tool result, an RPC line) with :meth:`Secrets.scrub_value`.

Nothing here raises on any text.
"""

from interactions._log_scrub import scrub_logs
from interactions._secrets import (
    MIN_SECRET_CHARS,
    REDACTED,
    Secrets,
    TextScrubber,
    credential_names,
)

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "Secrets",
    "TextScrubber",
    "credential_names",
    "scrub_logs",
]
