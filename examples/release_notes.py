"""The writer of the release-notes workflow (``examples/release_notes.iter``).

Its one tool asks the user which change should lead the notes. The recipe ships a scripted
demo model, so the workflow runs without a network or an API key; it asks first, then answers
with the JSON the workflow's ``draft`` node wants (``{"draft": "..."}``), revising when the
reviewer's feedback comes back as the node's input.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, Field

from interactions import ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

CHANGES = [
    {"label": "Faster resume", "value": "resume", "description": "paused runs continue 3x faster"},
    {"label": "Clearer errors", "value": "errors", "description": "every refusal says what to do"},
]
LEADS = {
    "resume": "Paused runs now resume three times faster.",
    "errors": "Every refusal now says what to do next.",
}


class ChooseHighlight(BaseModel):
    version: str = Field(description="The version the notes are for, e.g. v1.4.0")


def recipe(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def choose_highlight(
        tool_call_id: str, params: ChooseHighlight, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask the user which change should lead the release notes."""
        return await ask_user_question(
            f"Which change should lead the notes of {params.version}?",
            options=CHANGES,
            header="Release notes",
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    api.register_agent(
        "writer",
        "You write short release notes. Ask which change leads with choose_highlight, then "
        "write the notes.",
    )
    api.set_demo_model(ScriptedModel(DEMO_SCRIPT, label="release-notes-demo"))


def _prompt(request: ModelRequest) -> str:
    first = next(m for m in request.messages if isinstance(m, UserMessage))
    return text_of(first.content)


def _version(request: ModelRequest) -> str:
    found = re.search(r"\bv\d+(\.\d+)*", _prompt(request))
    return found.group(0) if found else "the release"


def _ask(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(
        tool_calls=[
            ToolCall(
                id="call_highlight",
                name="choose_highlight",
                arguments={"version": _version(request)},
            )
        ]
    )


def _draft(request: ModelRequest) -> AssistantMessage:
    result = [m for m in request.messages if isinstance(m, ToolResultMessage)][-1]
    answer = text_of(result.content).removeprefix("Answer: ")
    lead = LEADS.get(answer, answer if not text_of(result.content).startswith("User") else "")
    lead = lead or "Many small fixes."
    draft = f"{_version(request)}: {lead} Also: quieter logs."
    feedback = re.search(r'"feedback": "([^"]*)"', _prompt(request))
    if feedback and feedback.group(1):
        draft += f" (Revised: {feedback.group(1)}.)"
    return AssistantMessage(text=json.dumps({"draft": draft}))


DEMO_SCRIPT = [_ask, _draft]
