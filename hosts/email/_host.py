"""The email host: the outbox that mails each question to its approvers, and the link pages
that answer it, over one store, whatever serves the pages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import anyio
from starlette.applications import Starlette

from hosts._kit import Desk, LeasedConsumer, Workers
from hosts.email._config import EmailConfig, SmtpSettings, UsersFile
from hosts.email._links import LinkSigner
from hosts.email._pages import email_app
from hosts.email._send import BACKOFF, Mailer, Outbox
from interactions.store import utc_now
from recipes.runs import Runs

__all__ = ["EmailHost"]


class EmailHost:
    """Mails ``runner``'s questions (those of every run in its store, however started) through
    ``smtp`` and answers them from the links' pages (:attr:`app`), as ``config`` says.

    ``workers`` bounds the runs this host continues at once (a link's answer that was the
    last a run waited for continues it here). ``backoff`` is the first delay after a failed
    send and its bound; ``consumer`` takes :class:`~hosts._kit.LeasedConsumer`'s keywords
    (``owner``, ``lease``, ``renew_every``). ``clock`` is "now" for the questions' expiry
    and the leases (give the runner's, when it has one of its own). Raises
    ``UsageError`` for a store that keeps no cursors (an engine's).
    """

    def __init__(
        self,
        runner: Runs,
        config: EmailConfig,
        users: UsersFile,
        signer: LinkSigner,
        smtp: SmtpSettings,
        *,
        workers: int = 4,
        backoff: tuple[float, float] = BACKOFF,
        clock: Callable[[], datetime] = utc_now,
        **consumer: Any,
    ) -> None:
        self.runner = runner
        self.store = runner.store
        self.config = config
        self.workers = Workers(limit=workers, queue=workers * 4)
        self.desk = Desk(runner, self.workers)
        self.outbox = Outbox(
            self.store, config, users, signer, Mailer(smtp), clock=clock, backoff=backoff
        )
        self.consumer = LeasedConsumer(
            self.store,
            config.consumer,
            self.outbox.handle,
            backoff=backoff,
            clock=clock,
            **consumer,
        )
        self.app: Starlette = email_app(self.store, self.desk, config, users, signer, clock=clock)
        """The link pages (an ASGI application; the host must be :meth:`running`)."""

    @asynccontextmanager
    async def running(self) -> AsyncIterator[EmailHost]:
        """Send mail and continue answered runs until the block ends; then the runs in
        flight get the workers' grace to finish (left to retry if they do not)."""
        async with anyio.create_task_group() as group:
            await group.start(self.workers.run)
            await group.start(self.consumer.run)
            try:
                yield self
            finally:
                await self.workers.stop()
                group.cancel_scope.cancel()
