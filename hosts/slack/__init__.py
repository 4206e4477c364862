"""The Slack host: recipe runs asked about and answered in Slack.

- ``pi-recipes slack RECIPE`` (:func:`main`) serves a recipe as a Slack app, in Socket Mode
  (``SLACK_APP_TOKEN``) or as HTTP endpoints (``--http HOST:PORT``, ``SLACK_SIGNING_SECRET``);
  ``SLACK_BOT_TOKEN`` always. A mention of the app (or its slash command) starts a run in a
  thread, where the assistant's replies go.
- Every open interaction of every run in the store, however the run was started, becomes a
  Block Kit card (in the run's thread, or the ``--channel`` of runs started elsewhere); a
  click answers it with the store's compare-and-set, and the card shows who answered what,
  wherever the answer came from, or that it expired.
- :class:`SlackHost` is the host itself, whatever the transport; :func:`slack_asgi_app` /
  :func:`slack_routes` its HTTP endpoints for a web server to mount (the host must be
  running: :meth:`SlackHost.running`); :func:`socket_mode` its Socket Mode connection.

Errors: a token Slack refuses, a recipe that does not load, a bad option: ``UsageError``
before serving. Once serving, nothing Slack sends raises out of the host: a payload that cannot
be read is refused (HTTP 400) or logged (Socket Mode), a refused answer is shown to the person
who clicked. Tokens and the signing secret are read from the environment and never stored,
printed or logged.
"""

from hosts.slack._client import SlackOut, web_client
from hosts.slack._config import AllowList, SlackConfig, SlackSecrets
from hosts.slack._host import SlackHost
from hosts.slack._http import slack_asgi_app, slack_routes
from hosts.slack._main import build_parser, main, serve
from hosts.slack._socket import socket_mode

__all__ = [
    "AllowList",
    "SlackConfig",
    "SlackHost",
    "SlackOut",
    "SlackSecrets",
    "build_parser",
    "main",
    "serve",
    "slack_asgi_app",
    "slack_routes",
    "socket_mode",
    "web_client",
]
