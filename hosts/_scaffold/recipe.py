"""A recipe whose one tool asks a human before it acts.

Run it (the scripted model in script.json plays the assistant, so no key is needed)::

    pi-recipes run recipe.py "Announce the release"

In a terminal the approval is a dialog; elsewhere the run pauses and prints the command that
answers it. ``--model openai:gpt-4.1-mini`` (with ``OPENAI_API_KEY``) lets a real model drive it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from interactions import ask_user_approval
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.models import ScriptedModel


class Announcement(BaseModel):
    channel: str = Field(description="where to post it, without the #")
    text: str = Field(description="what to post")


def recipe(api: RecipeAPI) -> None:
    # It asks a human, so one call at a time; it acts on the answer, so on resume it runs again
    # from the top and the ask returns the stored answer at once ("replay").
    @api.tool(execution_mode="sequential", resume="replay")
    async def send_announcement(
        tool_call_id: str, params: Announcement, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Post an announcement to a channel, once a person approves it."""
        decision = await ask_user_approval(
            title=f"Post to #{params.channel}?",
            body=params.text,
            tool_call_id=tool_call_id,
            ctx=ctx,
        )
        if decision.outcome.type != "approved":
            return decision  # waiting, declined or changes requested: its text tells the model
        return f"Posted to #{params.channel}."  # post it for real here

    api.register_agent(
        "announcer",
        "You write short announcements. Send each one with send_announcement, then say in one "
        "sentence what happened.",
    )
    api.set_demo_model(ScriptedModel.from_file(Path(__file__).with_name("script.json")))
