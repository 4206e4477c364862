"""A recipe whose tool declares its approval: ``deploy`` asks a person first when the
environment is ``prod`` (``requires_approval`` as a function of the arguments), and its body
notes each deploy in ``deploys.log`` in the run's folder, so a test can count how often it ran."""

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
    api.set_demo_model(ScriptedModel([_call, _report], label="deployer-demo"))


def _call(request: ModelRequest) -> AssistantMessage:
    prompt = text_of(next(m for m in request.messages if isinstance(m, UserMessage)).content)
    env = prompt.split()[-1]
    return AssistantMessage(
        tool_calls=[ToolCall(id="call_deploy", name="deploy", arguments={"env": env})]
    )


def _report(request: ModelRequest) -> AssistantMessage:
    result = [m for m in request.messages if isinstance(m, ToolResultMessage)][-1]
    return AssistantMessage(text=f"Tool said: {text_of(result.content)}")
