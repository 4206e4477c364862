"""The WebSocket ``/ws``: typed frames both ways (see :mod:`hosts.web._frames`).

The handshake is refused before it completes for a foreign ``Origin`` (HTTP 403) or when no
one signs in (HTTP 401: no token, a wrong one; see :mod:`hosts.web._signin`). Who signed in
at the handshake answers every answer and decline of the connection (a frame's
``answered_by`` is ignored); an interaction whose approvers do not name them is refused with
an ``error`` frame (``not allowed``), nothing stored. Once open, the client subscribes to a
run or to all, and answers or declines interactions; each answer is acknowledged (``ack``)
or refused (``error``, with the typed error and the schema's complaints). A frame over the
size limit closes the connection (1009); a client that does not read is dropped (4008). The
server pings every ``ping_interval`` seconds; a client that does not answer is closed.
"""

from __future__ import annotations

import logging
from typing import Literal

import anyio
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from hosts.web._answers import explain_answer
from hosts.web._errors import Refusal, refusal
from hosts.web._frames import (
    PROTOCOL,
    AckFrame,
    AnswerFrame,
    DeclineFrame,
    ErrorFrame,
    HelloFrame,
    PingFrame,
    PongFrame,
    SubscribedFrame,
    SubscribeFrame,
    parse_client_frame,
)
from hosts.web._host import WebHost, host_of, signed_in
from hosts.web._hub import ALL_RUNS, Client, pump
from interactions import PiRecipesError
from interactions.people import Identity

__all__ = ["CLOSE_TIMEOUT", "router"]

logger = logging.getLogger("hosts.web")

CLOSE_TIMEOUT = 10.0
"""Seconds a dropped client gets to read its close frame."""

router = APIRouter()


@router.websocket("/ws")
async def websocket(ws: WebSocket) -> None:
    host = host_of(ws)
    try:
        me = await signed_in(ws)
    except Refusal as refused:
        body = refused.body.model_dump(mode="json")
        await ws.send_denial_response(JSONResponse(body, status_code=refused.status))
        return
    offered = ws.scope.get("subprotocols", ())
    await ws.accept(subprotocol=PROTOCOL if PROTOCOL in offered else None)
    client = Client(host.config.client_buffer, grace=host.config.send_timeout)
    host.hub.join(client)
    try:
        client.send(HelloFrame())
        async with anyio.create_task_group() as tasks:
            client.scope = tasks.cancel_scope
            tasks.start_soon(_send_all, ws, client, host.config.send_timeout)
            await _receive_all(ws, client, host, me)
            tasks.cancel_scope.cancel()
    finally:
        host.hub.leave(client)
    if client.dropped is not None:
        code, reason = client.dropped
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
            await ws.close(code, reason)


async def _send_all(ws: WebSocket, client: Client, send_timeout: float) -> None:
    try:
        await pump(client, ws.send_text, send_timeout=send_timeout)
    except (WebSocketDisconnect, OSError):  # the client went away (a reset): no one to tell
        if client.scope is not None:
            client.scope.cancel()  # its reading ends too


async def _receive_all(ws: WebSocket, client: Client, host: WebHost, me: Identity) -> None:
    """Handle the client's frames until it goes away."""
    while True:
        try:
            message = await ws.receive()
        except WebSocketDisconnect:
            return
        if message["type"] == "websocket.disconnect":
            return
        data: str | bytes | None = message.get("text")
        if data is None:  # a binary frame: UTF-8 JSON too, never decoded leniently
            data = message.get("bytes") or b""
        await _handle(data, client, host, me)


async def _handle(data: str | bytes, client: Client, host: WebHost, me: Identity) -> None:
    frame_id: str | None = None
    try:
        frame = parse_client_frame(data)
        frame_id = getattr(frame, "id", None)
        if isinstance(frame, SubscribeFrame):
            if frame.run_id is not None:
                try:
                    await host.store.get_run(frame.run_id)
                except PiRecipesError as exc:  # the subscription stays as it was
                    raise refusal(exc) from None
            client.subscription = frame.run_id or ALL_RUNS
            client.send(SubscribedFrame(run_id=frame.run_id, id=frame.id))
        elif isinstance(frame, PingFrame):
            client.send(PongFrame(id=frame.id))
        elif isinstance(frame, AnswerFrame | DeclineFrame):
            payload = frame.payload if isinstance(frame, AnswerFrame) else None
            status: Literal["resolved", "cancelled"] = (
                "resolved" if isinstance(frame, AnswerFrame) else "cancelled"
            )
            try:
                done = await host.desk.answer(
                    frame.run_id,
                    frame.interaction_id,
                    payload,
                    status=status,
                    answered_by=me,
                )
            except PiRecipesError as exc:
                raise await explain_answer(
                    host.store, frame.run_id, frame.interaction_id, payload, exc
                ) from None
            client.send(
                AckFrame(
                    id=frame.id,
                    run_id=done.run_id,
                    interaction_id=done.interaction_id,
                    created=done.created,
                    queued=done.queued,
                    resumed=done.resumed,
                    settled=done.settled,
                    approvals=list(done.approvals),
                    required_approvals=done.required_approvals,
                )
            )
    except Refusal as refused:
        client.send(ErrorFrame.of(refused, frame_id))
    except Exception:  # the store failed under us: say so, keep the connection
        logger.exception("a WebSocket frame failed")
        client.send(ErrorFrame(id=frame_id, error="error", message="internal error"))
