"""What a run writes down to continue later: plain data, never a live coroutine.

The checkpoint keeps ids, not copies: a paused call names the interrupt it waits on, whose
descriptor is stored once, as the run's interaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from interactions.asks import ROOT_SCOPE
from interactions.store import RunRecord
from recipes.messages import Message, TextPart, ToolCall, UserMessage
from recipes.runs._envelope import ExpiryPolicy, RunEnvelope, default_agui_run_id

__all__ = [
    "LEG_ENDED",
    "AwaitingRef",
    "Checkpoint",
    "ExpiryPolicy",
    "LegRecord",
    "PausedCalls",
    "default_agui_run_id",
    "message_id",
]

LEG_ENDED = "leg_ended"
"""The store event a leg leaves; its data is a :class:`LegRecord`."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_LEFT_OUT: dict[str, Any] = {"expiry_policy": "decline", "retries": 0, "messages": []}
"""Checkpoint fields a dump leaves out at these (default) values."""


class AwaitingRef(BaseModel):
    """A call waiting for a human: the call, and the id of the interrupt it waits on (stored
    only when it is not the call's first ask in the run's own scope: ``int-<tool_call_id>``)."""

    model_config = _FROZEN

    tool_call_id: str
    tool_name: str
    interrupt_id: str

    @model_validator(mode="before")
    @classmethod
    def _default_interrupt_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and "interrupt_id" not in data and "tool_call_id" in data:
            return {**data, "interrupt_id": _first_ask(data["tool_call_id"])}
        return data


class PausedCalls(BaseModel):
    """A paused batch as the checkpoint keeps it: ids of what waits, the calls not yet run."""

    model_config = _FROZEN

    awaiting: list[AwaitingRef] = Field(min_length=1)
    pending: list[ToolCall] = Field(default_factory=list)


class Checkpoint(RunEnvelope):
    """A recipe run's checkpoint: the envelope every run kind keeps (its legs, expiry policy,
    retries: :class:`RunEnvelope`), the transcript, the paused calls, and the input. Holds no
    credentials: the model is re-created from its name in the resuming process, from that
    process's environment.
    """

    model_config = _FROZEN

    input: str
    messages: list[Message] = Field(default_factory=list)
    paused: PausedCalls | None = None

    def dump(self, run_id: str = "", model_name: str = "") -> dict[str, Any]:
        """Compact JSON data for ``Store.update_run(checkpoint=...)``: defaults left out, and
        what :meth:`of` derives again from the run (``run_id``, ``model_name``): the leg's
        default AG-UI run id, the input when it is the first message's text, the assistant
        messages' model when it is the run's, the default interrupt ids."""
        data = self.model_dump(mode="json", exclude_none=True)
        for name, default in _LEFT_OUT.items():
            if data.get(name) == default:
                del data[name]
        if run_id and data.get("agui_run_id") == default_agui_run_id(run_id, self.leg):
            del data["agui_run_id"]
        if self.messages and _text_of_user(self.messages[0]) == self.input:
            del data["input"]
        for message in data.get("messages", ()):
            if message["role"] != "assistant":
                continue
            for name, default in (
                ("text", ""),
                ("tool_calls", []),
                ("thinking", []),
                ("model", model_name),
            ):
                if message.get(name) == default:
                    del message[name]
        paused = data.get("paused") or {}
        if paused.get("pending") == []:
            del paused["pending"]
        for ref in paused.get("awaiting", ()):
            if ref["interrupt_id"] == _first_ask(ref["tool_call_id"]):
                del ref["interrupt_id"]
        return data

    @classmethod
    def of(cls, run: RunRecord) -> Checkpoint:
        """The checkpoint of a recipe run, with what :meth:`dump` left out derived again."""
        data = dict(run.checkpoint)
        messages = data.get("messages") or []
        if "input" not in data:
            first = messages[0] if messages else {}
            texts = [p.get("text", "") for p in first.get("content", ()) if isinstance(p, dict)]
            data["input"] = texts[0] if first.get("role") == "user" and len(texts) == 1 else ""
        if run.model_name and any(
            m.get("role") == "assistant" and "model" not in m for m in messages
        ):
            data["messages"] = [
                {"model": run.model_name, **m} if m.get("role") == "assistant" else m
                for m in messages
            ]
        leg = data.get("leg", 0)
        if "agui_run_id" not in data and leg >= 1:
            data["agui_run_id"] = default_agui_run_id(run.id, leg)
        return cls.model_validate(data)


def _first_ask(tool_call_id: str) -> str:
    """The id of a call's first ask in the run's own scope (what a ref leaves out)."""
    return ROOT_SCOPE.call(tool_call_id).interrupt_id()


def new_run_id() -> str:
    """A fresh run id, ``run-`` and 16 hex digits: what a run started without one gets, and
    what a host that must name the run before it starts (a signal may stop it) chooses."""
    return f"run-{uuid.uuid4().hex[:16]}"


def _text_of_user(message: Message) -> str | None:
    """The text of a user message made of one text part (``None`` for anything else)."""
    if isinstance(message, UserMessage) and len(message.content) == 1:
        part = message.content[0]
        return part.text if isinstance(part, TextPart) else None
    return None


class LegRecord(BaseModel):
    """What the store keeps of one leg: with the transcript, enough to rebuild its AG-UI events.

    ``run`` is the leg's AG-UI run id, ``parent`` the leg it continues; ``start``/``end`` the
    transcript indexes of the messages it added; ``outcome`` how it ended (``success``,
    ``interrupt``, ``cancelled`` or ``error``); ``interrupts`` the ids of the interactions it
    paused on; ``error``/``code`` why it failed.
    """

    model_config = _FROZEN

    run: str = ""
    """``""`` in what is stored when it is the run's own id (a first leg's default)."""
    parent: str | None = None
    start: int = Field(default=0, ge=0)
    end: int = Field(ge=0)
    outcome: Literal["success", "interrupt", "cancelled", "error"]
    interrupts: list[str] = Field(default_factory=list)
    error: str | None = None
    code: str | None = None

    def dump(self, run_id: str = "") -> dict[str, Any]:
        """Compact JSON data for the ``leg_ended`` event (``run`` left out when it is
        ``run_id``: read it back with :meth:`of`)."""
        data = self.model_dump(mode="json", exclude_defaults=True)
        if data.get("run") == run_id:
            del data["run"]
        return data

    @classmethod
    def of(cls, data: Mapping[str, Any], run_id: str) -> LegRecord:
        """The record a ``leg_ended`` event of the run ``run_id`` keeps."""
        record = cls.model_validate(data)
        return record if record.run else record.model_copy(update={"run": run_id})


def message_id(agui_run_id: str, index: int) -> str:
    """The AG-UI id of the transcript's message at ``index``, as the leg ``agui_run_id`` made it."""
    return f"{agui_run_id}.m{index}"
