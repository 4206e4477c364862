"""A real local SMTP server for the email host's tests (aiosmtpd, in a thread of its own):
it keeps every mail it takes, parsed with the standard library, refuses the addresses it is
told to refuse for good (550), can require a login, and can be stopped and started again on
its port (a mail server that is down, then up)."""

from __future__ import annotations

import email
import email.policy
import re
import socket
import threading
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import anyio.to_thread
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

LINK = re.compile(r"https?://\S+/answer/[A-Za-z0-9_.\-]+")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Mail:
    """A mail as it arrived: the envelope's recipients and the parsed message."""

    to: tuple[str, ...]
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    def part(self, subtype: str) -> str:
        """The ``text/plain`` or ``text/html`` part's text."""
        body = self.message.get_body(preferencelist=(subtype,))
        assert body is not None and body.get_content_type() == f"text/{subtype}", subtype
        return str(body.get_content())

    def links(self) -> dict[str, str]:
        """The answer links of the plain text, by label (``  Label: URL`` lines)."""
        found = {}
        for line in self.part("plain").splitlines():
            label, _, url = line.strip().rpartition(": ")
            if LINK.fullmatch(url):
                found[label] = url
        return found


class Mailbox:
    """The server's handler: what arrived, and which recipients it refuses."""

    def __init__(self, refuse: tuple[str, ...] = ()) -> None:
        self.refuse = refuse
        self.mails: list[Mail] = []
        self._arrived = threading.Condition()

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        if address in self.refuse:
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        with self._arrived:
            self.mails.append(Mail(tuple(envelope.rcpt_tos), message))
            self._arrived.notify_all()
        return "250 Message accepted for delivery"

    async def wait(self, count: int, *, within: float = 20.0) -> list[Mail]:
        """The mails, once at least ``count`` arrived (``AssertionError`` after ``within``)."""

        def until() -> bool:
            with self._arrived:
                return self._arrived.wait_for(lambda: len(self.mails) >= count, within)

        assert await anyio.to_thread.run_sync(until), f"{len(self.mails)} of {count} mails came"
        return list(self.mails)

    def to(self, address: str) -> list[Mail]:
        return [m for m in self.mails if address in m.to]


class MailServer:
    """The SMTP server on ``port`` (plain, no TLS: ``--smtp-tls none``); ``login`` makes it
    offer AUTH and take that username and password (:attr:`logins` says who logged in)."""

    def __init__(
        self, *, refuse: tuple[str, ...] = (), login: tuple[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.mailbox = Mailbox(refuse)
        self.login = login
        self.logins: list[str] = []
        """The usernames that logged in, one per connection."""
        self._controller: Controller | None = None

    def _check(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        ok = (
            isinstance(data, LoginPassword)
            and (data.login.decode(), data.password.decode()) == self.login
        )
        if ok:
            self.logins.append(data.login.decode())
        return AuthResult(success=ok)

    def start(self) -> None:
        extra: dict[str, Any] = {}
        if self.login is not None:
            extra = {"authenticator": self._check, "auth_require_tls": False}
        self._controller = Controller(
            self.mailbox, hostname="127.0.0.1", port=self.port, ready_timeout=10, **extra
        )
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
