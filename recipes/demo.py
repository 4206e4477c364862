"""The demo recipe: a release assistant that asks where to publish, then asks for approval.

Both tools need a human, so they are sequential. The recipe ships a scripted demo model, so it
runs without a network or an API key, from any folder, with pi-recipes installed alone::

    pi-recipes run --demo "Release v1.4.0"

(``examples/release.py`` is the same recipe as a file.) With ``--model openai:gpt-4.1-mini``
(and ``OPENAI_API_KEY``) a real model drives the same tools.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from interactions import ask_user_approval, ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

__all__ = ["recipe"]

CHANNELS = [
    {"label": "Stable", "value": "stable", "description": "every user gets it"},
    {"label": "Beta", "value": "beta", "description": "opted-in testers"},
    {"label": "Nightly", "value": "nightly", "description": "the adventurous"},
]


class ChooseChannel(BaseModel):
    version: str = Field(description="The version being released, e.g. v1.4.0")


class PublishRelease(BaseModel):
    version: str = Field(description="The version being released")
    channel: str = Field(description="The channel chosen by the user")


def recipe(api: RecipeAPI) -> None:
    """The release assistant: its two asking tools, its agent and its scripted demo model."""
    @api.tool(execution_mode="sequential")
    async def choose_channel(
        tool_call_id: str, params: ChooseChannel, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask the user which channel to publish a release to."""
        return await ask_user_question(
            f"Where should {params.version} be published?",
            options=CHANNELS,
            header="Release channel",
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool(execution_mode="sequential")
    async def publish_release(
        tool_call_id: str, params: PublishRelease, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask the user to approve publishing the release; publish only when approved."""
        return await ask_user_approval(
            title=f"Publish {params.version} to {params.channel}?",
            body="The build passed and the changelog is ready.",
            sections=[{"title": "Changelog", "body": "- faster resume\n- clearer errors"}],
            kind="release",
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    api.register_agent(
        "release",
        "You help release software. Ask the user for the channel with choose_channel, then "
        "ask for approval with publish_release. Report what happened in one sentence.",
    )
    api.set_demo_model(ScriptedModel(DEMO_SCRIPT, label="release-demo"))


def _last_result(request: ModelRequest) -> str:
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    return text_of(results[-1].content) if results else ""


def _version(request: ModelRequest) -> str:
    first = request.messages[0]
    words = text_of(first.content).split() if not isinstance(first, AssistantMessage) else []
    return next((w for w in words if w.startswith("v") and w[1:2].isdigit()), "v1.0.0")


def _publish(request: ModelRequest) -> AssistantMessage:
    answer = _last_result(request)
    channel = answer.removeprefix("Answer: ") if answer.startswith("Answer: ") else "stable"
    note = "" if answer.startswith("Answer: ") else "No channel was chosen, so I'll use stable. "
    return AssistantMessage(
        text=f"{note}Asking for approval to publish to {channel}.",
        tool_calls=[
            ToolCall(
                id="call_publish",
                name="publish_release",
                arguments={"version": _version(request), "channel": channel},
            )
        ],
    )


def _report(request: ModelRequest) -> AssistantMessage:
    result = _last_result(request)
    if result.startswith("Approved."):
        return AssistantMessage(text=f"Published {_version(request)}. {result}")
    return AssistantMessage(text=f"Did not publish {_version(request)}: {result}")


DEMO_SCRIPT = [
    lambda request: AssistantMessage(
        text="Let me ask where to publish.",
        tool_calls=[
            ToolCall(
                id="call_channel", name="choose_channel", arguments={"version": _version(request)}
            )
        ],
    ),
    _publish,
    _report,
]
