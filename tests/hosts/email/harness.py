"""The email host as it runs, in this process: a real store, the users file, a real local SMTP
server (:mod:`tests.hosts.email.mailbox`), the link pages served by uvicorn on a free port, and
a runner that starts the runs whose questions are mailed."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn

from hosts._kit import load_users
from hosts.email import EmailConfig, EmailHost, LinkSigner, SmtpSettings, UsersFile
from interactions.store import RunStatus, Store, utc_now
from recipes.runs import Runner
from tests.hosts.email.mailbox import MailServer

RECIPE = str(Path(__file__).with_name("email_recipe.py")) + ":recipe"
SECRET = "links-secret-" + "k" * 32
SENDER = "pi-recipes@example.com"
PAGE = "http://127.0.0.1:8000/#run={run_id}&interaction={interaction_id}"
FAST: dict[str, Any] = {"backoff": (0.01, 0.05), "renew_every": 0.05}

USERS = """\
[[user]]
name = "ada"
groups = ["release"]
email = "ada@example.com"

[[user]]
name = "bob"
groups = ["release"]
email = "bob@example.com"

[[user]]
name = "cy"
groups = []
email = "cy@example.com"

[[user]]
name = "dee"
groups = ["release"]
"""
"""ada and bob are release managers with addresses; cy is no approver; dee has no address."""


class Clock:
    """Now, or as far ahead as a test moves it."""

    def __init__(self) -> None:
        self.ahead = timedelta()

    def __call__(self) -> datetime:
        return utc_now() + self.ahead


def write_users(folder: Path, text: str = USERS) -> Path:
    path = folder / "users.toml"
    path.write_text(text, encoding="utf-8")
    return path


@dataclass
class Running:
    """A running email host and where its pages are."""

    host: EmailHost
    base_url: str
    store: Store

    async def start(self, prompt: str) -> str:
        """Start a run of the test recipe (as another host would); its id, once paused."""
        done = await Runner(self.store, env={}, host="test").start(RECIPE, prompt)
        assert done.status is RunStatus.PAUSED_WAITING_HUMAN, done
        return done.run_id

    async def settled(self, run_id: str) -> RunStatus:
        """The run's status once the runs this host continues are done (bounded)."""
        with anyio.fail_after(20):
            await self.host.workers.wait_idle()
        return (await self.store.get_run(run_id)).status


@asynccontextmanager
async def email_host(
    store: Store,
    folder: Path,
    mail: MailServer,
    *,
    clock: Callable[[], datetime] = utc_now,
    to: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    serve: bool = True,
    base_url: str | None = None,
    **consumer: Any,
) -> AsyncIterator[Running]:
    """An :class:`EmailHost` on ``store`` mailing through ``mail``, its pages served on a free
    port under ``/email`` (``serve=False``: not served; ``base_url``: the links' base, when
    another host serves the pages)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # connections queue from now on: no wait for uvicorn to accept
    base = base_url or f"http://127.0.0.1:{listener.getsockname()[1]}/email"
    users_file = folder / "users.toml"
    if not users_file.exists():
        write_users(folder)
    host = EmailHost(
        Runner(store, env={}, host="email", cwd=folder),
        EmailConfig(base, PAGE, to),
        UsersFile(load_users(users_file)),
        LinkSigner(SECRET),
        SmtpSettings.of("127.0.0.1", mail.port, "none", SENDER, env or {}),
        clock=clock,
        **(FAST | consumer),
    )
    server = uvicorn.Server(uvicorn.Config(host.app, lifespan="off", log_level="warning"))
    try:
        async with host.running(), anyio.create_task_group() as group:
            if serve:
                group.start_soon(lambda: server.serve(sockets=[listener]))
            yield Running(host, base, store)
            server.should_exit = True
            if not serve:
                group.cancel_scope.cancel()
    finally:
        listener.close()


def client() -> httpx.AsyncClient:
    """The HTTP client that clicks the links (a browser would follow no redirect either)."""
    return httpx.AsyncClient(timeout=10, follow_redirects=False)
