"""The dialog UI of the RPC mode: dialogs become ``extension_ui_request`` records.

Each dialog sends a request with a fresh ``id`` and waits for the client's
``extension_ui_response`` with that id. When the dialog times out or the turn is aborted, the
UI sends ``{"type": "extension_ui_request", "method": "cancel", "targetId": <id>}`` so the
client closes it. A late or unknown response is not an error: :meth:`RpcDialogUI.deliver`
returns ``False`` and the host reports it as an event.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["RpcDialogUI", "Send"]

Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class _Pending:
    method: str
    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None


class RpcDialogUI:
    """A :class:`~interactions.DialogUI` speaking the RPC protocol through ``send``.

    ``timeout`` travels in milliseconds, as the RPC protocol counts time.
    """

    def __init__(self, send: Send, *, id_prefix: str = "ui") -> None:
        self._send = send
        self._ids = (f"{id_prefix}-{n}" for n in itertools.count(1))
        self._pending: dict[str, _Pending] = {}

    @property
    def open_dialogs(self) -> list[str]:
        """Ids of the dialogs waiting for an answer."""
        return list(self._pending)

    def deliver(self, frame: dict[str, Any]) -> bool:
        """Hand a client's ``extension_ui_response`` to its dialog; ``False`` if none waits."""
        pending = self._pending.get(str(frame.get("id")))
        if pending is None or pending.done.is_set():
            return False
        pending.response = frame
        pending.done.set()
        return True

    async def _ask(
        self, method: str, timeout: float | None, **fields: Any
    ) -> dict[str, Any] | None:
        request_id = next(self._ids)
        pending = self._pending[request_id] = _Pending(method)
        record = {"type": "extension_ui_request", "id": request_id, "method": method, **fields}
        if timeout is not None:
            record["timeout"] = max(1, round(timeout * 1000))
        try:
            await self._send(record)
            with anyio.move_on_after(timeout):
                await pending.done.wait()
            if not pending.done.is_set():
                await self._cancel(request_id)
                return None
        except BaseException:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self._cancel(request_id)
            raise
        finally:
            del self._pending[request_id]
        response = pending.response or {}
        return None if response.get("cancelled") is True else response

    async def _cancel(self, target_id: str) -> None:
        await self._send(
            {
                "type": "extension_ui_request",
                "id": next(self._ids),
                "method": "cancel",
                "targetId": target_id,
            }
        )

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        response = await self._ask("select", timeout, title=title, options=list(options))
        value = response.get("value") if response else None
        return value if isinstance(value, str) else None

    async def multi_select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> list[str] | None:
        response = await self._ask("multi_select", timeout, title=title, options=list(options))
        values = response.get("values", response.get("value")) if response else None
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            return values
        return None

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        response = await self._ask("confirm", timeout, title=title, message=message)
        confirmed = response.get("confirmed") if response else None
        return confirmed if isinstance(confirmed, bool) else None

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        fields = {"title": title} | ({"placeholder": placeholder} if placeholder else {})
        response = await self._ask("input", timeout, **fields)
        value = response.get("value") if response else None
        return value if isinstance(value, str) else None

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        response = await self._ask("editor", timeout, title=title, prefill=prefill)
        value = response.get("value") if response else None
        return value if isinstance(value, str) else None
