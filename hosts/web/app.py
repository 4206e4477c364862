"""The web host as one ASGI application: the page, the WebSocket, REST and the AG-UI endpoint.

:func:`create_app` builds it over an open store; ``pi-recipes serve`` runs it with uvicorn.
While it serves (its lifespan), it follows the store-wide feed for its WebSocket clients,
drives legs on its bounded workers, sweeps expired interactions and retries the runs whose
automatic retry is due.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from hosts._kit import (
    Desk,
    Gate,
    Origins,
    Workers,
    sweep_expired,
    sweep_reminders,
    sweep_retries,
)
from hosts.web import _agui, _me, _picture, _rest, _starts, _static, _ws
from hosts.web._auth import refusal_body
from hosts.web._config import WebConfig
from hosts.web._errors import Refusal, framework_refusal, validation_refusal
from hosts.web._feed import Feed
from hosts.web._host import WebHost
from hosts.web._hub import Hub
from hosts.web._limits import BodyLimit
from hosts.web._scrub import Scrubbed
from hosts.web._signin import SignIn, check_networks
from hosts.web._threads import Threads
from hosts.web._unexpected import Unexpected
from interactions.people import Identity
from interactions.secrets import Secrets
from interactions.store import Store, utc_now
from recipes import tracing
from recipes.runs import Runs, runner_for

__all__ = ["WebConfig", "WebHost", "create_app"]

logger = logging.getLogger("hosts.web")


def _clock_of(runner: Runs) -> Callable[[], datetime]:
    """The runner's "now" (a ``Runner``'s injected clock), else the wall clock."""
    clock = getattr(runner, "clock", None)
    return clock if callable(clock) else utc_now


def create_app(store: Store, config: WebConfig, *, runner: Runs | None = None) -> FastAPI:
    """The server's application over ``store`` (open; the caller closes it after serving).

    ``runner`` defaults to the runner of ``store``'s runs (``runner_for``: a ``Runner``, or an
    engine's own) with ``host="web"`` in the current directory and the
    process's environment. Run it under uvicorn (the lifespan must run: it starts the feed, the
    workers and the expiry sweep).
    """
    runner = runner or runner_for(store, env=dict(os.environ), host="web", cwd=Path.cwd())
    hub = Hub()
    feed = Feed(store, hub, runner.view)
    workers = Workers(limit=config.workers, queue=config.queue)
    desk = Desk(runner, workers, feed.live)
    sign_in = SignIn(config.token, config.users, check_networks(config.trust_proxy), config.jwt)
    host = WebHost(config, store, runner, hub, feed, workers, desk, Threads(store), sign_in)

    async def gate_sign_in(scope: Scope) -> Identity | None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        return await sign_in.identify(headers, client[0] if client else None)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            await tasks.start(feed.run)
            await tasks.start(functools.partial(workers.run, grace=config.shutdown_grace))
            tasks.start_soon(sweep_expired, runner, config.expire_every, desk.continue_answered)
            tasks.start_soon(sweep_retries, runner, config.retry_every, desk.continue_retry)
            tasks.start_soon(sweep_reminders, store, config.expire_every, _clock_of(runner))
            yield
            await workers.stop()  # the legs in flight get their grace; then the rest stops
            feed.follower.stop()
            tasks.cancel_scope.cancel()

    app = FastAPI(
        title="pi-recipes web host",
        summary="Runs that ask a human: a page, a WebSocket, Iterion-style REST and AG-UI.",
        version="1",
        lifespan=lifespan,
    )
    app.state.web = host
    app.include_router(_static.router)
    app.include_router(_rest.router)
    app.include_router(_picture.router)
    app.include_router(_starts.router)
    app.include_router(_me.router)
    app.include_router(_agui.router)
    app.include_router(_ws.router)
    _static.mount_static(app)

    @app.exception_handler(Refusal)
    async def refused(_: Request, exc: Refusal) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        if exc.status == 503:
            headers["Retry-After"] = "1"
        return JSONResponse(exc.body.model_dump(mode="json"), exc.status, headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def framework(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        bad = framework_refusal(exc.status_code, exc.detail)
        return JSONResponse(bad.body.model_dump(mode="json"), bad.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        bad = validation_refusal(exc, "the request is not the expected shape")
        return JSONResponse(bad.body.model_dump(mode="json"), bad.status)

    app.add_middleware(Unexpected)  # innermost: its 500 gets CORS's and BodyLimit's headers
    app.add_middleware(  # the Origin and, under /api/, the token: before a body is read
        Gate,
        token=config.token,
        origins=Origins(config.allowed_origins, config.host),
        guarded=_guarded,
        body=refusal_body,
        sign_in=gate_sign_in,
    )
    if config.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.allowed_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Accept", "Last-Event-ID"],
        )
    app.add_middleware(BodyLimit, limit=config.max_body)
    app.add_middleware(Scrubbed, secrets=Secrets.from_env(os.environ))  # outermost: all it sends
    _instrument(app)
    return app


def _instrument(app: FastAPI) -> None:
    """With tracing on, the requests' spans (OpenTelemetry's FastAPI instrumentation): a run
    a request starts is a child of its span; a leg a request continues links to it."""
    provider = tracing.tracer_provider()
    if provider is None:
        return
    try:
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    except ImportError:
        logger.warning(
            "tracing is on but opentelemetry-instrumentation-fastapi is not installed: "
            "pip install 'pi-recipes[otel]'; requests are not traced"
        )
        return
    FastAPIInstrumentor.instrument_app(app, tracer_provider=provider)


def _guarded(path: str) -> bool:
    """Whether a request to ``path`` needs someone signed in before the application reads its
    body: every API call (FastAPI reads a route's body before its dependencies run, so a
    malformed body was a 422 before the token was looked at). The WebSocket and AG-UI sign
    in through the same dependency (:func:`hosts.web._host.signed_in`)."""
    return path.startswith("/api/")
