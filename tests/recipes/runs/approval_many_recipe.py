"""A recipe that deploys once per word of its prompt after ``deploy``, one call at a time
(``deploy prod prod canary``: three calls), each asking a person first when the environment is
``prod``; each deploy is noted in ``deploys.log`` in the run's folder, and the last reply lists
what every call said, so a test sees which ran and which were refused without asking."""

from __future__ import annotations

from pydantic import BaseModel

from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel


class Deploy(BaseModel):
    env: str


def recipe(api: RecipeAPI) -> None:
    @api.tool(requires_approval=lambda params, ctx: params.env == "prod")
    async def deploy(
        tool_call_id: str, params: Deploy, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Deploy the current build to an environment."""
        with (ctx.cwd / "deploys.log").open("a", encoding="utf-8") as log:
            log.write(f"{params.env}\n")
        return f"Deployed to {params.env}."

    api.register_agent("deployer", "Deploy what you are asked to.")
    api.set_demo_model(ScriptedModel([_next] * 10, label="deployer-demo"))


def _next(request: ModelRequest) -> AssistantMessage:
    prompt = text_of(next(m for m in request.messages if isinstance(m, UserMessage)).content)
    envs = prompt.split()[1:]
    said = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    if len(said) < len(envs):
        call = ToolCall(id=f"call_{len(said)}", name="deploy", arguments={"env": envs[len(said)]})
        return AssistantMessage(tool_calls=[call])
    return AssistantMessage(text=" | ".join(said))
