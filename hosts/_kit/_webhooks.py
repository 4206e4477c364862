"""Webhooks, what they say: which stored events a webhook posts, the JSON message each
becomes, and its signature, the Standard Webhooks way (https://www.standardwebhooks.com/).

Pure: nothing here reads the store or the network (:mod:`hosts._kit._deliver` does).

- A message is one interaction event of a run: ``interaction.opened`` (a question for a person
  was asked; its ``data.question`` is the stored question), ``interaction.voted``,
  ``interaction.answered``, ``interaction.expired``, ``interaction.cancelled`` (declined, or
  closed with its run), and ``interaction.reminded`` / ``interaction.escalated`` when a run
  records them. The run's own ``await`` wait is no question for a person: it is not posted.
- Its ``id`` is ``evt_<cursor>``: the event's place in the store-wide feed, the same on
  every retry and from every server, so a receiver drops a message it already has.
- It is signed with the secret (``whsec_`` and base64 of 24 to 64 random bytes): headers
  ``webhook-id``, ``webhook-timestamp`` (Unix seconds of the attempt) and
  ``webhook-signature``: ``v1,`` and base64 of HMAC-SHA256 over ``{id}.{timestamp}.{body}``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from hosts._kit._answerable import asks_a_person
from interactions import UsageError
from interactions.store import EventRecord, InteractionRecord, StoreEventType

__all__ = [
    "SECRET_PREFIX",
    "WebhookMessage",
    "WebhookSecret",
    "WebhookType",
    "consumer_name",
    "message_for",
    "webhook_type",
]

SECRET_PREFIX = "whsec_"

WebhookType = Literal[
    "interaction.opened",
    "interaction.voted",
    "interaction.answered",
    "interaction.expired",
    "interaction.cancelled",
    "interaction.reminded",
    "interaction.escalated",
]

_BY_EVENT: dict[str, WebhookType] = {
    StoreEventType.INTERACTION_REQUESTED: "interaction.opened",
    StoreEventType.INTERACTION_VOTED: "interaction.voted",
    "interaction_reminded": "interaction.reminded",
    "interaction_escalated": "interaction.escalated",
}
_BY_STATUS: dict[str, WebhookType] = {
    "expired": "interaction.expired",
    "cancelled": "interaction.cancelled",
}


class WebhookSecret:
    """A webhook signing secret: ``whsec_`` and base64 of 24 to 64 bytes (a ``UsageError``
    otherwise, which never quotes it). Its ``repr`` and ``str`` hide it."""

    def __init__(self, text: str) -> None:
        text = text.strip()
        if not text.startswith(SECRET_PREFIX):
            raise UsageError(
                f"a webhook secret starts with {SECRET_PREFIX} (then base64 of 24 to 64 random "
                'bytes); make one with: python -c "import base64, os; '
                "print('whsec_' + base64.b64encode(os.urandom(32)).decode())\""
            )
        try:
            key = base64.b64decode(text.removeprefix(SECRET_PREFIX), validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if not 24 <= len(key) <= 64:
            raise UsageError("a webhook secret is whsec_ and base64 of 24 to 64 bytes")
        self._key = key

    @classmethod
    def generate(cls) -> WebhookSecret:
        """A new random secret (32 bytes)."""
        return cls(SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode())

    def sign(self, message_id: str, timestamp: int, body: bytes) -> str:
        """The ``webhook-signature`` header of ``body`` sent as ``message_id`` at
        ``timestamp``: ``v1,`` and base64 of HMAC-SHA256 over ``{id}.{timestamp}.{body}``."""
        signed = f"{message_id}.{timestamp}.".encode() + body
        digest = hmac.new(self._key, signed, hashlib.sha256).digest()
        return "v1," + base64.b64encode(digest).decode()

    def headers(self, message_id: str, at: datetime, body: bytes) -> dict[str, str]:
        """The headers of ``body`` posted as ``message_id`` at ``at``."""
        timestamp = int(at.timestamp())
        return {
            "content-type": "application/json",
            "webhook-id": message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": self.sign(message_id, timestamp, body),
        }

    def __repr__(self) -> str:
        return "WebhookSecret(***)"

    __str__ = __repr__


class WebhookMessage(BaseModel):
    """What a webhook posts for one interaction event (the JSON body)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: WebhookType
    """What happened to the interaction."""
    id: str
    """``evt_<cursor>``: unique in the store, the same on every retry (the ``webhook-id``)."""
    run_id: str
    interaction_id: str
    at: datetime
    """When the event was stored."""
    data: dict[str, Any]
    """The stored event's data (``interaction.opened`` adds ``question``: the question as
    stored)."""

    def body(self) -> bytes:
        """The JSON text posted (compact, keys sorted)."""
        return json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()


def webhook_type(event: EventRecord) -> WebhookType | None:
    """The webhook type ``event`` is posted as, or ``None`` when it is not posted."""
    if event.type == StoreEventType.INTERACTION_ANSWERED:
        return _BY_STATUS.get(str(event.data.get("status")), "interaction.answered")
    return _BY_EVENT.get(event.type)


def message_for(event: EventRecord, record: InteractionRecord | None) -> WebhookMessage | None:
    """The message ``event`` is posted as, given the interaction it names as stored
    (``None``: not found), or ``None`` when it is not posted (not an interaction event, or
    one of the run's own ``await`` wait)."""
    kind = webhook_type(event)
    interaction_id = event.data.get("interaction_id")
    if kind is None or not isinstance(interaction_id, str):
        return None
    if record is not None and not asks_a_person(record):
        return None
    data = dict(event.data)
    if kind == "interaction.opened" and record is not None:
        data["question"] = record.descriptor
    return WebhookMessage(
        type=kind,
        id=f"evt_{event.cursor}",
        run_id=event.run_id,
        interaction_id=interaction_id,
        at=event.at,
        data=data,
    )


def consumer_name(url: str) -> str:
    """The store's name of the consumer posting to ``url``: ``webhook:HOST:`` and a hash of
    the whole URL (the same URL, the same consumer, whichever server runs it; no credential
    a URL may carry is stored). ``UsageError`` for a URL that is not http(s)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"a webhook URL is http:// or https://, got {_shown(url)}")
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    return f"webhook:{parts.hostname}:{digest}"


def _shown(url: str) -> str:
    """``url`` without what could be a credential (user info, query)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else repr(url[:40])
