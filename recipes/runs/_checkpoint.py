"""What a run writes down to continue later: plain data, never a live coroutine.

The checkpoint keeps ids, not copies: a paused call names the interrupt it waits on, whose
descriptor is stored once, as the run's interaction.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from recipes.messages import Message, ToolCall

__all__ = [
    "LEG_ENDED",
    "AwaitingRef",
    "Checkpoint",
    "ExpiryPolicy",
    "LegRecord",
    "PausedCalls",
    "message_id",
]

LEG_ENDED = "leg_ended"
"""The store event a leg leaves; its data is a :class:`LegRecord`."""

ExpiryPolicy = Literal["decline", "fail"]
"""What happens when an interrupt expires: ``decline`` answers it as a decline and the run
goes on; ``fail`` fails the run."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_LEFT_OUT: dict[str, Any] = {"expiry_policy": "decline", "retries": 0, "messages": []}
"""Checkpoint fields a dump leaves out at these (default) values."""


class AwaitingRef(BaseModel):
    """A call waiting for a human: the call, and the id of the interrupt it waits on."""

    model_config = _FROZEN

    tool_call_id: str
    tool_name: str
    interrupt_id: str


class PausedCalls(BaseModel):
    """A paused batch as the checkpoint keeps it: ids of what waits, the calls not yet run."""

    model_config = _FROZEN

    awaiting: list[AwaitingRef] = Field(min_length=1)
    pending: list[ToolCall] = Field(default_factory=list)


class Checkpoint(BaseModel):
    """A run's checkpoint: the transcript, the paused calls, and how the run was started.

    ``leg`` counts the run's legs (a start, then each resume or retry): each is one AG-UI run,
    whose id is kept in ``agui_run_id`` so the next one names it as its parent. ``retries``
    counts the retries in a row that failed again, so a failure that repeats says so. Holds no
    credentials: the model is re-created from its name in the resuming process, from that
    process's environment.
    """

    model_config = _FROZEN

    input: str
    messages: list[Message] = Field(default_factory=list)
    paused: PausedCalls | None = None
    expiry_policy: ExpiryPolicy = "decline"
    leg: int = Field(default=0, ge=0)
    agui_run_id: str | None = None
    retries: int = Field(default=0, ge=0)
    """Retries in a row that ended failing again (reset by a leg that does not fail)."""

    def dump(self) -> dict[str, Any]:
        """Compact JSON data for ``Store.update_run(checkpoint=...)`` (defaults left out)."""
        data = self.model_dump(mode="json", exclude_none=True)
        for name, default in _LEFT_OUT.items():
            if data.get(name) == default:
                del data[name]
        return data


class LegRecord(BaseModel):
    """What the store keeps of one leg: with the transcript, enough to rebuild its AG-UI events.

    ``run`` is the leg's AG-UI run id, ``parent`` the leg it continues; ``start``/``end`` the
    transcript indexes of the messages it added; ``outcome`` how it ended (``success``,
    ``interrupt``, ``cancelled`` or ``error``); ``interrupts`` the ids of the interactions it
    paused on; ``error``/``code`` why it failed.
    """

    model_config = _FROZEN

    run: str
    parent: str | None = None
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    outcome: Literal["success", "interrupt", "cancelled", "error"]
    interrupts: list[str] = Field(default_factory=list)
    error: str | None = None
    code: str | None = None

    def dump(self) -> dict[str, Any]:
        """Compact JSON data for the ``leg_ended`` event."""
        return self.model_dump(mode="json", exclude_defaults=True)


def message_id(agui_run_id: str, index: int) -> str:
    """The AG-UI id of the transcript's message at ``index``, as the leg ``agui_run_id`` made it."""
    return f"{agui_run_id}.m{index}"
