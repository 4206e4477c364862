"""A README writer that asks while it works: the agents of ``async_questions.iter``.

``drafter`` posts its two questions (the project's name, the tone) with ``ask_user_async``
first, then drafts everything else with placeholders; ``finalizer`` fills the placeholders from
the answers the ``gate`` collected. Both ship scripted models, so the workflow runs on the
embedded default without a provider (give ``--model`` or a node ``model:`` for a real one).
"""

from __future__ import annotations

import json

from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

DRAFT = "# <NAME>\n\nA <TONE> README: install it, use it, test it."


def _ask_first(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(
        text="Two things only you can decide; I am drafting the rest meanwhile.",
        tool_calls=[
            ToolCall(id="ask_name", name="ask_user_async",
                     arguments={"question": "What is the project called?"}),
            ToolCall(id="ask_tone", name="ask_user_async",
                     arguments={"question": "Which tone?", "options": ["friendly", "formal"]}),
        ],
    )  # fmt: skip


def _finalize(request: ModelRequest) -> AssistantMessage:
    prompt = text_of([m for m in request.messages if isinstance(m, UserMessage)][-1].content)
    answers = json.JSONDecoder().raw_decode(prompt.split("Operator answers:")[1].strip())[0]
    readme = DRAFT
    for placeholder, answer in zip(("<NAME>", "<TONE>"), answers, strict=False):
        if not answer["answer"].startswith("(no answer"):
            readme = readme.replace(placeholder, answer["answer"])
    return AssistantMessage(text=json.dumps({"readme": readme}))


def recipe(api: RecipeAPI) -> None:
    api.register_agent(
        "drafter",
        "You draft READMEs.",
        model=ScriptedModel([_ask_first, json.dumps({"draft": DRAFT})], label="drafter"),
    )
    api.register_agent(
        "finalizer",
        "You finalize READMEs.",
        model=ScriptedModel([_finalize], label="finalizer"),
    )
