"""A recipe whose tool declares its approval, for the approval policy beside it.

``deploy`` asks a person first outside ``dev`` (``requires_approval``, a function of the
arguments); ``policy.toml`` denies ``prod`` (frozen) and allows ``dev`` and ``canary`` without
asking. The scripted demo model deploys where the prompt's last word says, then reports what
the tool said::

    pi-recipes run examples/policy/deploy.py "deploy to staging" \
        --policy examples/policy/policy.toml
"""

from __future__ import annotations

from pydantic import BaseModel

from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel


class Deploy(BaseModel):
    env: str
    version: str = "v1.4.0"


def recipe(api: RecipeAPI) -> None:
    @api.tool(requires_approval=lambda params, ctx: params.env != "dev")
    async def deploy(
        tool_call_id: str, params: Deploy, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Deploy a version to an environment."""
        return f"Deployed {params.version} to {params.env}."  # deploy for real here

    api.register_agent("deployer", "Deploy what you are asked to, then say what happened.")
    api.set_demo_model(ScriptedModel([_deploy, _report], label="deployer-demo"))


def _deploy(request: ModelRequest) -> AssistantMessage:
    prompt = text_of(next(m for m in request.messages if isinstance(m, UserMessage)).content)
    call = ToolCall(id="call_deploy", name="deploy", arguments={"env": prompt.split()[-1]})
    return AssistantMessage(tool_calls=[call])


def _report(request: ModelRequest) -> AssistantMessage:
    result = [m for m in request.messages if isinstance(m, ToolResultMessage)][-1]
    return AssistantMessage(text=text_of(result.content))
