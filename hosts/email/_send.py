"""The mails of the store's questions, sent from the store's own event log: the outbox is the
log and this service's cursor in it (:class:`~hosts._kit.LeasedConsumer`: leased to one
server at a time, so several email hosts on one store send each mail once).

Which events send what (:meth:`Outbox.handle`): ``interaction_requested``, a mail to each
approver (names and groups resolved through the users file; a question naming none goes to
``--to``, else to nobody); ``interaction_reminded``, again to the approvers the event names
(else the question's); ``interaction_escalated``, to the people it ``added``. Nothing is sent
for a question answered or expired meanwhile, nor to a person who already voted on it.

Delivery (:meth:`Outbox.send`): one mail per person over one SMTP connection (aiosmtplib).
A recipient the server refuses for good (a 5xx to its address or its mail) is logged and
skipped; any other failure (the server down, refusing for now, a login refused) is tried again
after a delay that doubles up to a bound, without sending again what was sent, until the
question is no longer open (answered or expired: the rest is dropped, so every retry ends by
the question's expiry): the cursor does not move past the event until then. A
server that dies after sending and before its cursor moved sends those mails again (at least
once). The log names people, never the password.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage

import aiosmtplib
import anyio

from hosts._kit import asks_a_person
from hosts.email._config import EmailConfig, SmtpSettings, UsersFile
from hosts.email._links import Link, LinkSigner, choice_label, choices_of
from hosts.email._mail import Because, Choice, Recipient, compose
from interactions import UnknownInteractionError, UnknownRunError
from interactions.people import approvers_of
from interactions.store import EventRecord, InteractionRecord, Store, StoreEventType, VoteStore

__all__ = ["BACKOFF", "EVENTS", "SENT_KEPT", "Mailer", "Outbox", "Sent"]

logger = logging.getLogger("hosts.email")

BACKOFF = (1.0, 300.0)
"""Seconds before a failed send is tried again: the first delay, then doubled up to this."""

SENT_KEPT = 1000
"""How many of the mails it sent an :class:`Outbox` remembers (:attr:`Outbox.sent`)."""

EVENTS: dict[str, Because] = {
    StoreEventType.INTERACTION_REQUESTED: "opened",
    "interaction_reminded": "reminded",
    "interaction_escalated": "escalated",
}
"""The events that send mail, and why."""


class Mailer:
    """Sends mail through the SMTP server of ``settings``, one connection at a time."""

    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[aiosmtplib.SMTP]:
        """A connection, logged in when the settings have a login; closed after the block."""
        s = self.settings
        smtp = aiosmtplib.SMTP(
            hostname=s.host, port=s.port, username=s.username, password=s.password,
            use_tls=s.tls == "tls", start_tls=s.tls == "starttls", timeout=s.timeout,
        )  # fmt: skip
        await smtp.connect()
        try:
            yield smtp
        finally:
            if smtp.is_connected:
                try:
                    await smtp.quit()
                except aiosmtplib.SMTPException:
                    smtp.close()


@dataclass(frozen=True)
class Sent:
    """A mail the server took (or refused for good: ``refused``)."""

    to: Recipient
    run_id: str
    interaction_id: str
    because: Because
    refused: bool = False


def _permanent(exc: Exception) -> bool:
    """Whether ``exc`` refuses this one recipient (or this one mail) for good."""
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused):
        return bool(exc.recipients) and all(r.code >= 500 for r in exc.recipients)
    if isinstance(exc, aiosmtplib.SMTPRecipientRefused | aiosmtplib.SMTPDataError):
        return exc.code >= 500
    return False


class Outbox:
    """Turns the store's events into mails and sends them (see the module docstring): hand
    :meth:`handle` to a :class:`~hosts._kit.LeasedConsumer`. ``clock`` is "now" for the
    questions' expiry; ``backoff`` the first delay after a failed send and its bound."""

    def __init__(
        self,
        store: Store,
        config: EmailConfig,
        users: UsersFile,
        signer: LinkSigner,
        mailer: Mailer,
        *,
        clock: Callable[[], datetime],
        backoff: tuple[float, float] = BACKOFF,
    ) -> None:
        self.store = store
        self.config = config
        self.users = users
        self.signer = signer
        self.mailer = mailer
        self.clock = clock
        self.backoff = backoff
        self.sent: deque[Sent] = deque(maxlen=SENT_KEPT)
        """The latest mails sent (or refused for good) by this outbox, in order."""

    async def handle(self, event: EventRecord) -> bool:
        """Send the mails ``event`` calls for; ``True`` when it called for any."""
        because = EVENTS.get(event.type)
        interaction_id = event.data.get("interaction_id")
        if because is None or not isinstance(interaction_id, str):
            return False
        record = await self._pending(event.run_id, interaction_id)
        if record is None:
            return False
        entries = self._entries(because, event, record)
        if not entries:
            logger.info("nobody to mail for %s/%s: it names no approvers (and no --to is given)",
                        record.run_id, record.id)  # fmt: skip
            return False
        people = self.users.recipients(entries)
        voted = await self._voted(record)
        mails = [(to, self.mail(record, to, because)) for to in people if to.name not in voted]
        if not mails:
            return False
        await self.send(mails, record, because)
        return True

    def _entries(
        self, because: Because, event: EventRecord, record: InteractionRecord
    ) -> list[str]:
        named = event.data.get("added" if because == "escalated" else "approvers")
        if isinstance(named, list) and named:
            return [e for e in named if isinstance(e, str)]
        if because == "escalated":
            return []
        return list(approvers_of(record.interrupt.metadata) or self.config.to)

    async def _pending(self, run_id: str, interaction_id: str) -> InteractionRecord | None:
        """The question, when a person can still answer it (and this version can read it)."""
        try:
            record = await self.store.get_interaction(run_id, interaction_id)
        except (UnknownRunError, UnknownInteractionError):
            return None
        if not record.pending or not asks_a_person(record) or record.expires_at <= self.clock():
            return None
        if record.unreadable is not None:  # no mail can ask it: skipped, not tried again
            logger.warning("no mail for %s/%s: it is stored in a form this pi-recipes cannot "
                           "read (%s)", record.run_id, record.id, record.unreadable)  # fmt: skip
            return None
        return record

    async def _voted(self, record: InteractionRecord) -> set[str]:
        if not isinstance(self.store, VoteStore):
            return set()
        return {v.voter for v in await self.store.list_votes(record.run_id, record.id)}

    def mail(self, record: InteractionRecord, to: Recipient, because: Because) -> EmailMessage:
        """The mail asking ``to`` the question of ``record``, its links signed for them."""
        interrupt = record.interrupt
        choices = []
        for choice in choices_of(interrupt):
            link = Link(record.run_id, record.id, choice, to.name, to.address, record.expires_at)
            url = f"{self.config.base_url}/answer/{self.signer.token(link)}"
            choices.append(Choice(choice_label(interrupt, choice), url))
        page = self.config.page(record.run_id, record.id)
        return compose(record, to, self.mailer.settings.sender, choices, page=page,
                       because=because)  # fmt: skip

    async def send(
        self,
        mails: list[tuple[Recipient, EmailMessage]],
        record: InteractionRecord,
        because: Because,
    ) -> None:
        """Send ``mails`` until each is sent or refused for good, or the question is no longer
        open (answered or expired meanwhile: what is left is not sent)."""
        left = list(mails)
        delay = self.backoff[0]
        what = f"{because} {record.run_id}/{record.id}"
        while left:
            try:
                async with self.mailer.connected() as smtp:
                    while left:
                        to, message = left[0]
                        refused = False
                        try:
                            await smtp.send_message(message)
                        except aiosmtplib.SMTPException as exc:
                            if not _permanent(exc):
                                raise
                            logger.warning("mail to %s (%s) refused for good, skipped: %s",
                                           to.name, what, _why(exc))  # fmt: skip
                            refused = True
                        left.pop(0)
                        self.sent.append(Sent(to, record.run_id, record.id, because, refused))
            except (aiosmtplib.SMTPException, OSError) as exc:
                logger.warning("mail (%s) not sent to %s (%s); trying again in %g s",
                               what, ", ".join(t.name for t, _ in left), _why(exc),
                               delay)  # fmt: skip
                await anyio.sleep(delay)
                delay = min(delay * 2, self.backoff[1])
                if await self._pending(record.run_id, record.id) is None:
                    logger.info("mail (%s) not sent to %s: the question is no longer open",
                                what, ", ".join(t.name for t, _ in left))  # fmt: skip
                    return


def _why(exc: Exception) -> str:
    """What the server said (its code and message), or the failure: never a login (neither
    aiosmtplib's errors nor the socket's carry one)."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, int) and isinstance(message, str):
        return f"{code} {message[:200]}"
    said = str(exc)[:200]
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__
