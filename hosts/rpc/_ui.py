"""The dialog UI of the RPC mode: dialogs become ``extension_ui_request`` records.

Each dialog sends a request with a fresh ``id`` and a ``timeout`` in whole milliseconds, and
waits for the client's ``extension_ui_response`` with that id (read by
:mod:`hosts.rpc._dialogs`). When the dialog times out or the turn is aborted, the UI sends
``{"type": "extension_ui_request", "id": <new id>, "method": "cancel", "targetId": <id>}`` so a
client that knows it can close the dialog (pi front ends ignore methods they do not know, and
close a timed-out dialog by its ``timeout``).

There is no ``multi_select``: pi has none, so the dialog walk asks a multiple choice as a
sequence of ``select`` dialogs (``[x] Label`` rows to toggle, then ``Done``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from hosts.rpc._dialogs import (
    Answer,
    Dialog,
    Dismissed,
    HostRefused,
    Invalid,
    Method,
    read_response,
    select_dialog,
)
from hosts.rpc._notices import ignored_response, invalid_response
from interactions import UsageError

__all__ = ["DEFAULT_TIMEOUT", "HostCallError", "RpcDialogUI", "Send"]

Send = Callable[[dict[str, Any]], Awaitable[None]]

DEFAULT_TIMEOUT = 120.0
"""Seconds an RPC dialog waits when the caller gives no ``timeout``."""

CANCEL_NOTICE_GRACE = 5.0
"""Seconds an aborted dialog may take to queue its cancel notice."""


class HostCallError(Exception):
    """A host call (``ask_user_async``/``await_answers``) was refused by the client, dismissed,
    or not answered in time: the tool's call fails with this message."""


@dataclass
class _Pending:
    dialog: Dialog
    done: anyio.Event = field(default_factory=anyio.Event)
    answer: Answer | Dismissed | HostRefused | None = None


class RpcDialogUI:
    """A :class:`~interactions.DialogUI` speaking the RPC protocol through ``send``.

    ``default_timeout`` (seconds, 120 by default) bounds a dialog whose caller passes
    ``timeout=None``. A dialog returns ``None`` when dismissed or timed out; an abort of the
    turn cancels it (the cancellation propagates). Raises ``UsageError`` for a
    ``default_timeout`` that is not positive and finite, and from a dialog whose ``timeout``
    is not finite (nothing is sent: every RPC dialog has a bound the client is told).
    """

    def __init__(
        self, send: Send, *, id_prefix: str = "ui", default_timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        if not 0 < default_timeout < math.inf:
            raise UsageError(f"default_timeout must be positive seconds, got {default_timeout!r}")
        self._send = send
        self._ids = (f"{id_prefix}-{n}" for n in itertools.count(1))
        self._pending: dict[str, _Pending] = {}
        self.default_timeout = default_timeout

    @property
    def open_dialogs(self) -> list[str]:
        """Ids of the dialogs waiting for an answer."""
        return list(self._pending)

    def deliver(self, frame: dict[str, Any]) -> dict[str, Any] | None:
        """Hand a client's ``extension_ui_response`` to its dialog.

        Returns ``None`` when the dialog took it; else the notice to send the client: it was
        ignored (no open dialog has that id) or invalid (the dialog stays open).
        """
        ident = frame.get("id")
        pending = self._pending.get(ident) if isinstance(ident, str) else None
        if pending is None or pending.done.is_set():
            return ignored_response(frame)
        read = read_response(pending.dialog, frame)
        if isinstance(read, Invalid):
            dialog = pending.dialog
            return invalid_response(str(ident), dialog.method, read.error, dialog.expected)
        pending.answer = read
        pending.done.set()
        return None

    async def call_host(self, method: Method, fields: dict[str, Any], timeout: float) -> str:
        """Hand a call of the async questions' tools to the client (``method``
        ``ask_user_async`` or ``await_answers``) and return the ``value`` it answers. Raises
        :class:`HostCallError` when it refuses (``error``), dismisses it or lets ``timeout``
        seconds pass."""
        pending = await self._exchange(Dialog(method, fields), timeout)
        answer = pending.answer
        if isinstance(answer, HostRefused):
            raise HostCallError(answer.error)
        if isinstance(answer, Answer) and isinstance(answer.value, str):
            return answer.value
        if isinstance(answer, Dismissed):
            raise HostCallError(f"the host dismissed the {method} call")
        raise HostCallError(f"the host did not answer the {method} call (in {timeout:g} s)")

    async def _ask(self, dialog: Dialog, timeout: float | None) -> str | bool | None:
        pending = await self._exchange(dialog, timeout)
        return pending.answer.value if isinstance(pending.answer, Answer) else None

    async def _exchange(self, dialog: Dialog, timeout: float | None) -> _Pending:
        seconds = self.default_timeout if timeout is None else timeout
        if not math.isfinite(seconds):
            raise UsageError(
                f"an RPC dialog needs a finite timeout in seconds, got {seconds!r}: pass a "
                "number, or None for the host's default"
            )
        request_id = next(self._ids)
        record = {
            "type": "extension_ui_request",
            "id": request_id,
            "method": dialog.method,
            **dialog.fields,
            "timeout": max(1, round(seconds * 1000)),
        }
        pending = self._pending[request_id] = _Pending(dialog)
        try:
            await self._send(record)
            with anyio.move_on_after(seconds):
                await pending.done.wait()
            if not pending.done.is_set():
                await self._cancel(request_id)
        except BaseException:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_NOTICE_GRACE):
                await self._cancel(request_id)
            raise
        finally:
            del self._pending[request_id]
        return pending

    async def _cancel(self, target_id: str) -> None:
        await self._send(
            {
                "type": "extension_ui_request",
                "id": next(self._ids),
                "method": "cancel",
                "targetId": target_id,
            }
        )

    async def _ask_text(
        self, method: Method, timeout: float | None, **fields: Any
    ) -> str | None:
        value = await self._ask(Dialog(method, fields), timeout)
        return value if isinstance(value, str) else None

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        """Let the human pick one of ``options`` (shown with their ``descriptions``, when
        given); returns the bare option picked."""
        value = await self._ask(select_dialog(title, options, descriptions), timeout)
        return value if isinstance(value, str) else None

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        """Ask a yes/no question."""
        value = await self._ask(Dialog("confirm", {"title": title, "message": message}), timeout)
        return value if isinstance(value, bool) else None

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        """Ask for one line of text."""
        fields = {"title": title} | ({"placeholder": placeholder} if placeholder else {})
        return await self._ask_text("input", timeout, **fields)

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        """Ask for multi-line text, starting from ``prefill``."""
        return await self._ask_text("editor", timeout, title=title, prefill=prefill)
