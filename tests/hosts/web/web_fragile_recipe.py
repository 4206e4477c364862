"""A recipe for the web host's tests whose model fails in a way no one planned for: its
credentials check (the optional ``credentials_problem`` a provider's model has) raises a plain
``RuntimeError`` whose text holds a secret, once a file named ``vault-sealed`` exists in the
server's working directory. Until then it asks a word (the run pauses) and then says done."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from interactions import ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ModelRequest, ScriptedModel

SEALED = "vault-sealed"
SECRET = "sk-fragile-0123456789"
FAILURE = f"the vault refused the key {SECRET}"


class Word(BaseModel):
    text: str


class FragileModel(ScriptedModel):
    """A scripted model whose credentials check raises once the vault is sealed."""

    def credentials_problem(self) -> str | None:
        if Path(SEALED).exists():
            raise RuntimeError(FAILURE)
        return None


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def ask(tool_call_id: str, params: Word, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for a word."""
        return await ask_user_question(params.text, tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("fragile", "Ask a word, then say done.")
    api.set_demo_model(FragileModel([_ask, _done], label="fragile-test"))


def _ask(request: ModelRequest) -> AssistantMessage:
    call = ToolCall(id="c1", name="ask", arguments={"text": "Which word?"})
    return AssistantMessage(text="", tool_calls=[call])


def _done(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(text="Done.")
