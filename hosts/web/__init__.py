"""The web host: one ASGI application (FastAPI under uvicorn) holding the page, a WebSocket,
Iterion-style REST and an AG-UI endpoint, on the same store as the command line.

- ``POST /agui``: AG-UI 1.0 over server-sent events; a conversation is its ``thread_id``; a
  ``resume`` continues the paused run as a new AG-UI run whose ``parentRunId`` is the paused one.
- ``/ws``: typed frames (:mod:`hosts.web._frames`): subscribe to a run or to all; answers and
  declines acknowledged or refused with the typed error; every answer given anywhere (the CLI,
  REST, another page, another server) reaches connected clients through the store-wide feed.
- ``/api/runs...``: REST with Iterion's shapes; ``/docs``: OpenAPI.
- ``/``: the page (plain HTML, CSS and JavaScript in ``hosts/web/static``).

Entry points: :func:`main` (``argv`` → exit code) is ``pi-recipes serve``, which parses its
arguments with :func:`configure_parser` and runs :func:`run_parsed`;
:func:`hosts.web.app.create_app` builds the application over an open store for a host of
your own. Importing this package imports neither FastAPI nor uvicorn (``pip install
'pi-recipes[web]'``); without them ``serve`` is a usage error saying so.

Errors: a refused request gets an HTTP status from :data:`interactions.errors.ERROR_CODES`
(409 conflict, 404 unknown, 410 expired, 422 payload off the schema, 400 usage; 401 no
token, 403 foreign Origin, 413 too large, 503 busy) and the typed body ``{error, message,
reason, run_id, interaction_id, complaints}``; so does a failure no route planned for (500,
the generic message ``internal error``; the exception is logged, never sent).
"""

from hosts.web._main import build_parser, configure_parser, main, run_parsed

__all__ = ["build_parser", "configure_parser", "main", "run_parsed"]
