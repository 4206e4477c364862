"""What a tool may return, and the JSON Schema the model sees of its parameters."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from interactions import AWAITING_TEXT, UsageError
from recipes._schema import tool_json_schema
from recipes._tools import ToolResult, to_tool_result
from recipes.messages import ImagePart, TextPart


class Part(BaseModel):
    type: Literal["text"] = "text"
    text: str


class Outcome(BaseModel):
    type: str


class AskLike(BaseModel):
    content: list[Part]
    details: dict[str, Any]
    outcome: Outcome


class Plain:
    def __init__(self, content: Any, details: Any) -> None:
        self.content = content
        self.details = details


def test_a_str_is_one_text_part() -> None:
    assert to_tool_result("hi") == ToolResult(content=[TextPart(text="hi")])


def test_a_tool_result_is_kept() -> None:
    result = ToolResult.of_text("x", {"a": 1}, terminate=True)
    assert to_tool_result(result) is result


@pytest.mark.parametrize(("outcome", "pause"), [("answered", False), ("awaiting_user", True)])
def test_an_ask_user_result_is_read_duck_typed(outcome: str, pause: bool) -> None:
    ask = AskLike(
        content=[Part(text="Answer: blue")], details={"q": 1}, outcome=Outcome(type=outcome)
    )
    result = to_tool_result(ask)
    assert result.content == [TextPart(text="Answer: blue")]
    assert result.details == {"q": 1} and result.pause is pause


@pytest.mark.parametrize(
    ("details", "pause"),
    [
        ({"outcome": {"type": "awaiting_user"}}, True),
        ({"outcome": "awaiting_user"}, True),
        ({"outcome": {"type": "declined"}}, False),
        (None, False),
    ],
)
def test_plain_objects_with_content_and_details(details: Any, pause: bool) -> None:
    parts = [
        {"type": "text", "text": "t"},
        {"type": "image", "data": "AA==", "mime_type": "image/png"},
    ]
    result = to_tool_result(Plain(parts, details))
    assert result.content == [TextPart(text="t"), ImagePart(data="AA==", mime_type="image/png")]
    assert result.pause is pause and result.details == (details or {})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "a tool returned NoneType; expected a ToolResult, a str"),
        (Plain([{"type": "video"}], {}), "content must be text/image parts"),
        (Plain([], ["not", "a", "dict"]), "details must be a dict"),
    ],
)
def test_anything_else_is_a_usage_error(value: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        to_tool_result(value)


def test_the_awaiting_helper() -> None:
    result = ToolResult.awaiting({"interrupt": {"id": "i"}})
    assert result.pause and result.text == AWAITING_TEXT


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
