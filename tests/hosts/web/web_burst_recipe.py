"""A recipe for the web host's tests whose model answers in one burst of many small deltas, as
a buffering proxy delivers a stream: the prompt is the number of deltas, each ``w00042 ``
(7 characters), all yielded without the model waiting on anything in between."""

from __future__ import annotations

from collections.abc import AsyncIterator

from recipes import RecipeAPI
from recipes.messages import AssistantMessage, UserMessage, text_of
from recipes.models import Completed, ModelEvent, ModelRequest, TextDelta


def burst(count: int) -> list[str]:
    """The deltas of a burst of ``count``."""
    return [f"w{n:05d} " for n in range(count)]


class BurstModel:
    """A model whose whole reply arrives at once, delta after delta."""

    name = "burst:test"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        prompt = next(text_of(m.content) for m in request.messages if isinstance(m, UserMessage))
        deltas = burst(int(prompt))
        for delta in deltas:
            yield TextDelta(delta=delta)
        message = AssistantMessage(text="".join(deltas), model=self.name, stop_reason="stop")
        yield Completed(message=message)


def recipe(api: RecipeAPI) -> None:
    api.register_agent("burst", "Answer.")
    api.set_demo_model(BurstModel())
