"""What a run writes down to continue later: plain data, never a live coroutine."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from recipes._events import PausedBatch
from recipes.messages import Message

__all__ = ["Checkpoint", "ExpiryPolicy"]

ExpiryPolicy = Literal["decline", "fail"]


class Checkpoint(BaseModel):
    """A run's checkpoint: the transcript, the paused batch, and how the run was started.

    Holds no credentials: the model is re-created from its name in the resuming process, from
    that process's environment.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: str
    messages: list[Message] = Field(default_factory=list)
    paused: PausedBatch | None = None
    expiry_policy: ExpiryPolicy = "decline"

    def dump(self) -> dict[str, Any]:
        """JSON data for ``Store.update_run(checkpoint=...)``."""
        return self.model_dump(mode="json")
