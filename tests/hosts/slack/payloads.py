"""Slack's payloads as Slack sends them (shapes from Slack's docs and bolt-python's tests),
built from the cards the fake recorded, and Slack's request signing."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any
from urllib.parse import quote, urlencode

from slack_sdk.signature import SignatureVerifier

from tests.hosts.slack.fake_slack import SIGNING_SECRET, Call

TEAM = {"id": "T1", "domain": "test"}


def _user(user: str) -> dict[str, Any]:
    return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": "T1"}


def actions_block(card: Call) -> dict[str, Any]:
    """The card's actions block (the one with our controls)."""
    (block,) = [b for b in card.args["blocks"] if b["type"] == "actions"]
    return block


def element(card: Call, action_id: str) -> dict[str, Any]:
    (found,) = [e for e in actions_block(card)["elements"] if e["action_id"] == action_id]
    return found


def block_actions(
    card: Call,
    action_id: str,
    *,
    user: str,
    value: str | None = None,
    option: int | None = None,
    checked: list[int] | None = None,
) -> dict[str, Any]:
    """A ``block_actions`` payload: ``user`` clicked ``action_id`` on the posted ``card``.
    ``option`` picks a select's option (by its position); ``checked`` ticks checkboxes."""
    block = actions_block(card)
    control = element(card, action_id)
    action: dict[str, Any] = {
        "type": control["type"],
        "action_id": action_id,
        "block_id": block["block_id"],
        "action_ts": f"{time.time():.6f}",
    }
    if control["type"] == "button":
        action["text"] = control["text"]
        if "value" in control:
            action["value"] = control["value"]
    if option is not None:
        action["selected_option"] = control["options"][option]
    if value is not None:
        action["value"] = value
    channel = card.args["channel"]
    ts = card.result["ts"]
    message: dict[str, Any] = {
        "type": "message",
        "ts": ts,
        "text": card.args.get("text"),
        "blocks": card.args["blocks"],
        "user": "UBOT",
    }
    if card.args.get("thread_ts"):
        message["thread_ts"] = card.args["thread_ts"]
    values: dict[str, Any] = {}
    if checked is not None:
        checks = next(e for e in block["elements"] if e["action_id"] == "pi_checks")
        chosen = [checks["options"][i] for i in checked]
        values = {
            block["block_id"]: {"pi_checks": {"type": checks["type"], "selected_options": chosen}}
        }
    return {
        "type": "block_actions",
        "user": _user(user),
        "api_app_id": "A1",
        "token": "legacy-verification-token",
        "container": {
            "type": "message",
            "message_ts": ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "trigger_id": f"{uuid.uuid4().int % 10**12}.1.{uuid.uuid4().hex}",
        "team": TEAM,
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "releases"},
        "message": message,
        "state": {"values": values},
        "response_url": "https://hooks.slack.invalid/actions/T1/1/x",
        "actions": [action],
    }


def view_submission(opened: Call, text: str, *, user: str) -> dict[str, Any]:
    """A ``view_submission`` payload: ``user`` typed ``text`` in the modal ``views.open``
    opened, and sent it."""
    view = opened.args["view"]
    if isinstance(view, str):
        view = json.loads(view)
    (input_block,) = [b for b in view["blocks"] if b["type"] == "input"]
    values = {
        input_block["block_id"]: {
            input_block["element"]["action_id"]: {"type": "plain_text_input", "value": text}
        }
    }
    return view_state_submission(opened, values, user=user)


def filled_in(opened: Call, **changed: Any) -> dict[str, dict[str, Any]]:
    """The state of the modal ``views.open`` opened, each input as prefilled unless
    ``changed`` names its label: a text or number input's typed text, a select's option value
    (``None``: nothing chosen), a checkbox's tick (a bool)."""
    view = opened.args["view"]
    values: dict[str, dict[str, Any]] = {}
    for block in (b for b in view["blocks"] if b["type"] == "input"):
        element = block["element"]
        label = block["label"]["text"]
        kind = element["type"]
        state: dict[str, Any] = {"type": kind}
        if kind in ("plain_text_input", "number_input"):
            state["value"] = changed.get(label, element.get("initial_value"))
            if state["value"] is not None:
                state["value"] = str(state["value"])
        elif kind == "static_select":
            initial = element.get("initial_option")
            chosen = changed[label] if label in changed else (initial or {}).get("value")
            options = [o for o in element["options"] if o["value"] == chosen]
            state["selected_option"] = options[0] if options else None
        elif kind == "checkboxes":
            ticked = changed.get(label, bool(element.get("initial_options")))
            state["selected_options"] = element["options"] if ticked else []
        values[block["block_id"]] = {element["action_id"]: state}
    return values


def view_state_submission(
    opened: Call, values: dict[str, dict[str, Any]], *, user: str
) -> dict[str, Any]:
    """A ``view_submission`` payload: ``user`` sent the modal ``views.open`` opened, its
    inputs' state being ``values``."""
    view = opened.args["view"]
    if isinstance(view, str):
        view = json.loads(view)
    return {
        "type": "view_submission",
        "team": TEAM,
        "user": _user(user),
        "api_app_id": "A1",
        "token": "legacy-verification-token",
        "trigger_id": f"{uuid.uuid4().int % 10**12}.1.{uuid.uuid4().hex}",
        "view": {
            "id": opened.result["view"]["id"],
            "team_id": "T1",
            "type": "modal",
            "blocks": view["blocks"],
            "private_metadata": view["private_metadata"],
            "callback_id": view["callback_id"],
            "state": {"values": values},
            "hash": "156772938.1827394",
            "title": view["title"],
            "root_view_id": opened.result["view"]["id"],
            "app_id": "A1",
            "bot_id": "B1",
        },
        "response_urls": [],
        "is_enterprise_install": False,
    }


def app_mention(
    text: str,
    *,
    user: str = "UALICE",
    channel: str = "CRELEASE",
    ts: str = "1699999999.000100",
    thread_ts: str | None = None,
    event_id: str | None = None,
) -> dict[str, Any]:
    """An Events API envelope body carrying an ``app_mention``."""
    event: dict[str, Any] = {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return {
        "token": "legacy-verification-token",
        "team_id": "T1",
        "api_app_id": "A1",
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(time.time()),
    }


def slash_command(
    text: str,
    *,
    command: str = "/release",
    user: str = "UALICE",
    channel: str = "CRELEASE",
    response_url: str = "https://hooks.slack.invalid/commands/T1/1/x",
) -> dict[str, str]:
    return {
        "token": "legacy-verification-token",
        "team_id": "T1",
        "channel_id": channel,
        "user_id": user,
        "command": command,
        "text": text,
        "response_url": response_url,
        "trigger_id": f"{uuid.uuid4().int % 10**12}.1.x",
    }


def form_body(payload: dict[str, Any]) -> bytes:
    """An interactivity request body: one form field, ``payload``, holding the JSON."""
    return ("payload=" + quote(json.dumps(payload))).encode()


def command_body(form: dict[str, str]) -> bytes:
    return urlencode(form).encode()


def signed(body: bytes, *, at: float | None = None, secret: str = SIGNING_SECRET) -> dict[str, str]:
    """The headers Slack signs a request with (``at``: the timestamp, default now)."""
    timestamp = str(int(time.time() if at is None else at))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature}
