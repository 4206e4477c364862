"""Small builders shared by the recipes tests (scripted turns, event capture)."""

from __future__ import annotations

from typing import Any

from recipes import build_recipe
from recipes._api import RecipeFunction
from recipes._events import AgentEvent
from recipes.messages import AssistantMessage, ToolCall
from recipes.models.scripted import ScriptedModel, ScriptTurn
from recipes.session import AgentSession, create_agent_session


def call(call_id: str, name: str, /, **arguments: Any) -> ToolCall:
    """A tool call with JSON-object arguments."""
    return ToolCall(id=call_id, name=name, arguments=arguments)


def calls(*tool_calls: ToolCall, text: str = "") -> AssistantMessage:
    """An assistant turn asking for ``tool_calls``."""
    return AssistantMessage(text=text, tool_calls=list(tool_calls))


class Recorder:
    """Collects a session's events."""

    def __init__(self, session: AgentSession) -> None:
        self.events: list[AgentEvent] = []
        session.on_event(self.events.append)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def tool_trace(self) -> list[str]:
        """``start:<id>`` / ``end:<id>`` for every tool execution event, in order."""
        out = []
        for e in self.events:
            if e.type == "tool_execution_start":
                out.append(f"start:{e.tool_call_id}")
            elif e.type == "tool_execution_end":
                out.append(f"end:{e.tool_call_id}")
        return out


def session_for(
    fn: RecipeFunction, turns: list[ScriptTurn], **kwargs: Any
) -> tuple[AgentSession, ScriptedModel, Recorder]:
    """A session of the recipe ``fn`` on a scripted model, with an event recorder."""
    model = ScriptedModel(turns, label="test")
    session = create_agent_session(build_recipe(fn, name="test"), model=model, **kwargs)
    return session, model, Recorder(session)
