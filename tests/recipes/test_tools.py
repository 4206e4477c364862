"""What a tool may return, and the JSON Schema the model sees of its parameters."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from interactions import (
    AWAITING_TEXT,
    AskUserInterrupt,
    AwaitingUser,
    UsageError,
    ask_user_question,
)
from interactions.testing.dialogs import StaticToolContext
from recipes._schema import tool_json_schema
from recipes._tools import ToolResult, to_tool_result
from recipes.messages import ImagePart, TextPart


class Plain:
    def __init__(self, content: Any, details: Any) -> None:
        self.content = content
        self.details = details


INTERRUPT = AskUserInterrupt(
    id="int-1", reason="input_required", message="Colour?", expires_at="2099-01-01T00:00:00Z"
)


def test_a_str_is_one_text_part() -> None:
    assert to_tool_result("hi") == ToolResult(content=[TextPart(text="hi")])


def test_a_tool_result_is_kept() -> None:
    result = ToolResult.of_text("x", {"a": 1}, terminate=True)
    assert to_tool_result(result) is result

AWAITING = INTERRUPT.model_copy(update={"outcome": AwaitingUser(interrupt_id="int-1")})


@pytest.mark.anyio
@pytest.mark.parametrize(("env", "pause"), [({}, False), ({"PI_INTERRUPT_RESUME": "1"}, True)])
async def test_an_ask_user_result_carries_its_interrupt_typed(
    env: dict[str, str], pause: bool
) -> None:
    ask = await ask_user_question("Colour?", tool_call_id="c1", ctx=StaticToolContext(env=env))
    result = to_tool_result(ask)
    assert result.text == ask.text and result.pause is pause
    assert result.interrupt == ask.details.interrupt
    assert result.details["interrupt"]["toolCallId"] == "c1"  # AG-UI's casing on the wire


@pytest.mark.parametrize(
    ("details", "pause"),
    [
        ({"interrupt": AWAITING.model_dump()}, True),
        ({"interrupt": INTERRUPT.model_dump(), "outcome": {"type": "awaiting_user"}}, True),
        ({"outcome": {"type": "declined"}}, False),
        (None, False),
    ],
)  # fmt: skip
def test_plain_objects_with_content_and_details(details: Any, pause: bool) -> None:
    parts = [
        {"type": "text", "text": "t"},
        {"type": "image", "data": "AA==", "mime_type": "image/png"},
    ]
    result = to_tool_result(Plain(parts, details))
    assert result.content == [TextPart(text="t"), ImagePart(data="AA==", mime_type="image/png")]
    assert result.pause is pause and result.details == (details or {})
    assert (result.interrupt is not None) is pause


def test_a_plain_object_that_pauses_without_an_interrupt_is_refused() -> None:
    with pytest.raises(UsageError, match="must carry the interrupt"):
        to_tool_result(Plain([], {"outcome": "awaiting_user"}))


def test_the_awaiting_helper() -> None:
    result = ToolResult.awaiting(INTERRUPT)
    assert result.pause and result.text == AWAITING_TEXT and result.interrupt == INTERRUPT


class Address(BaseModel):
    """A postal address."""

    city: str
    zip: str | None = None


class Node(BaseModel):
    label: str
    children: list[Node] = Field(default_factory=list)


class Params(BaseModel):
    title: str = Field(description="The title field, not a schema title.")
    home: Address
    tree: Node | None = None
    options: dict[str, Any] = Field(default={"title": "kept as data"})


def test_the_schema_is_clean_and_inlined() -> None:
    schema = tool_json_schema(Params)
    assert "title" not in schema and schema["type"] == "object"
    assert schema["required"] == ["title", "home"]
    props = schema["properties"]
    assert props["title"] == {
        "description": "The title field, not a schema title.",
        "type": "string",
    }
    assert props["home"] == {
        "description": "A postal address.",
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "zip": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
    }
    assert props["options"]["default"] == {"title": "kept as data"}
    # the recursive model keeps its definition, reachable from the inlined copy
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert props["tree"]["anyOf"][0]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
