"""What ``pi-recipes email`` is told: the mail server, the sender, where its link pages are,
who gets questions naming no approvers, the users file, and the links' signing secret, read
once at the boundary (:func:`settings_from`).

Secrets come from the environment or a file only: the SMTP password
(``$PI_RECIPES_SMTP_PASSWORD``) and the links' signing secret (``--secret-file FILE`` or
``$PI_RECIPES_EMAIL_SECRET``). Neither is printed, logged or stored; :class:`SmtpSettings`
hides the password from its ``repr``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from hosts._kit import Users, load_users, secret_text
from hosts.email._links import LinkSigner
from hosts.email._mail import Recipient
from interactions import UsageError
from interactions.people import GROUP_PREFIX, check_approvers

__all__ = [
    "PASSWORD_ENV",
    "SECRET_ENV",
    "TLS_MODES",
    "USERNAME_ENV",
    "EmailConfig",
    "SmtpSettings",
    "UsersFile",
    "read_secret",
]

logger = logging.getLogger("hosts.email")

USERNAME_ENV = "PI_RECIPES_SMTP_USERNAME"
PASSWORD_ENV = "PI_RECIPES_SMTP_PASSWORD"
SECRET_ENV = "PI_RECIPES_EMAIL_SECRET"
TLS_MODES = ("starttls", "tls", "none")
Tls = Literal["starttls", "tls", "none"]
_PORTS = {"starttls": 587, "tls": 465, "none": 25}


@dataclass(frozen=True)
class SmtpSettings:
    """How mail is sent: the server, its TLS (``starttls``: upgrade a plain connection, and
    refuse a server that cannot; ``tls``: TLS from the start; ``none``: a local test server
    only), the login (from the environment; none when no username), the sender's address."""

    host: str
    port: int
    tls: Tls
    sender: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout: float = 30.0

    @classmethod
    def of(
        cls,
        host: str,
        port: int | None,
        tls: str,
        sender: str | None,
        env: Mapping[str, str],
        timeout: float = 30.0,
    ) -> SmtpSettings:
        """The settings the flags give, with the login from ``env``. ``UsageError`` for a TLS
        mode not in :data:`TLS_MODES`, a port out of range, a sender that is no address, a
        username without a password."""
        if tls not in TLS_MODES:
            raise UsageError(f"--smtp-tls is one of {', '.join(TLS_MODES)}, got {tls!r}")
        if port is not None and not 0 < port < 65536:
            raise UsageError(f"--smtp-port is 1 to 65535, got {port}")
        if not sender or "@" not in sender or any(c in sender for c in "\r\n"):
            raise UsageError("--from needs the address mails are sent from, e.g. "
                             "pi-recipes@example.com")  # fmt: skip
        username = env.get(USERNAME_ENV, "").strip() or None
        password = env.get(PASSWORD_ENV) or None
        if username is not None and password is None:
            raise UsageError(f"${USERNAME_ENV} is set without ${PASSWORD_ENV}")
        mode: Tls = tls  # type: ignore[assignment]
        return cls(host, port or _PORTS[mode], mode, sender, username, password, timeout)


@dataclass(frozen=True)
class EmailConfig:
    """Where the link pages are (``base_url``, as recipients reach it), the card on the web
    page (``page_url``, a template that may hold ``{run_id}`` and ``{interaction_id}``), and
    who gets the questions that name no approvers (``to``: names and ``group:NAME``)."""

    base_url: str
    page_url: str | None = None
    to: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
            raise UsageError(
                f"--base-url is the http(s) address recipients reach the link pages at, e.g. "
                f"https://pi.example/email, got {self.base_url!r}"
            )
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if self.page_url is not None and urlsplit(self.page_url).scheme not in ("http", "https"):
            raise UsageError(f"--page-url is an http(s) address, got {self.page_url!r}")
        check_approvers(self.to)

    @property
    def consumer(self) -> str:
        """The name of this service's cursor in the store: ``email:`` and a hash of the base
        URL (every host serving the same links shares it, so each mail is sent once)."""
        return "email:" + hashlib.sha256(self.base_url.encode()).hexdigest()[:16]

    def page(self, run_id: str, interaction_id: str) -> str | None:
        """The link to the card on the web page, when one is configured."""
        if self.page_url is None:
            return None
        return self.page_url.replace("{run_id}", run_id).replace("{interaction_id}", interaction_id)


def read_secret(secret_file: str | None, env: Mapping[str, str]) -> LinkSigner:
    """The links' signer, with the secret of ``secret_file`` or ``env``'s
    ``PI_RECIPES_EMAIL_SECRET``; ``UsageError`` when there is none, it is too short or the file
    does not read (never quoting the secret)."""
    text = secret_text(
        "--secret-file", secret_file, env, SECRET_ENV,
        f"the email links are signed: give --secret-file FILE or ${SECRET_ENV} (at least 32 "
        "random characters)",
    )  # fmt: skip
    return LinkSigner(text)


class UsersFile:
    """The users file, read again when it changes (so a person removed, or moved out of a
    group, can no longer answer with a link they were sent). A file that changed into a bad
    one is logged and the last good one kept."""

    def __init__(self, users: Users) -> None:
        if users.path is None:
            raise UsageError("pi-recipes email needs a users file (--users or $PI_RECIPES_USERS)")
        self.path = users.path
        self._users = users
        self._stamp = self._stat()

    def _stat(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def current(self) -> Users:
        """The people as the file says now."""
        stamp = self._stat()
        if stamp != self._stamp and stamp is not None:
            try:
                self._users = load_users(self.path)
            except UsageError as exc:
                logger.warning("the users file changed but does not read; kept the last one: %s",
                               exc)  # fmt: skip
            self._stamp = stamp
        return self._users

    def recipients(self, entries: Sequence[str]) -> list[Recipient]:
        """The people ``entries`` (names and ``group:NAME``) name who have an address, each
        once, in order; the others are logged (they get no mail)."""
        users = self.current()
        names: dict[str, None] = {}
        for entry in entries:
            if entry.startswith(GROUP_PREFIX):
                names |= dict.fromkeys(users.members(entry.removeprefix(GROUP_PREFIX)))
            else:
                names[entry] = None
        found: list[Recipient] = []
        for name in names:
            user = users.users.get(name)
            if user is None or not user.email:
                logger.info("no mail for %s: the users file has no address for them", name)
                continue
            found.append(Recipient(name, user.email))
        return found
