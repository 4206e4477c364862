"""The scripted model: streaming a script, function turns, exhaustion, script files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interactions import RunError, UsageError
from recipes.messages import AssistantMessage, ToolCall, UserMessage
from recipes.models._base import (
    Completed,
    Model,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
)
from recipes.models.scripted import ScriptedModel, ScriptExhausted, ScriptFileError

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(instructions="Be brief.", messages=[UserMessage.of_text("hi")])


async def play(model: ScriptedModel, request: ModelRequest = REQUEST) -> list[ModelEvent]:
    return [event async for event in model.stream(request)]


async def converse(model: ScriptedModel, turns: int) -> list[AssistantMessage]:
    """Play ``turns`` turns, each request carrying the transcript so far (as the loop does)."""
    request, played = REQUEST, []
    for _ in range(turns):
        last = (await play(model, request))[-1]
        assert isinstance(last, Completed)
        played.append(last.message)
        request = request.model_copy(update={"messages": [*request.messages, last.message]})
    return played


async def test_the_turn_played_follows_the_transcript() -> None:
    model = ScriptedModel(["first", "second"])
    assert [m.text for m in await converse(model, 2)] == ["first", "second"]
    # A fresh copy given the same transcript continues where it was: what a resume needs.
    resumed = model.replay()
    transcript = [UserMessage.of_text("hi"), AssistantMessage(text="first")]
    last = (await play(resumed, ModelRequest(messages=transcript)))[-1]
    assert isinstance(last, Completed) and last.message.text == "second"
    assert resumed.remaining == 0


async def test_the_request_log_keeps_the_last_requests_only() -> None:
    """A host serving a demo model for weeks: the log stays bounded (``keep_requests``)."""
    model = ScriptedModel(["only"], keep_requests=3)
    requests = [REQUEST.model_copy(update={"instructions": f"n{i}"}) for i in range(5)]
    for request in requests:
        await play(model, request)
    assert [r.instructions for r in model.requests] == ["n2", "n3", "n4"]
    assert len(ScriptedModel(["only"]).requests) == 0
    silent = ScriptedModel(["only"], keep_requests=0)
    await play(silent)
    assert len(silent.requests) == 0
    assert silent.replay().requests.maxlen == 0
    for bad in (-1, 2.5, True):
        with pytest.raises(UsageError, match="keep_requests"):
            ScriptedModel(["only"], keep_requests=bad)  # type: ignore[arg-type]


async def test_text_and_tool_calls_stream_then_complete() -> None:
    message = AssistantMessage(
        text="Looking it up now.",
        tool_calls=[ToolCall(id="c1", name="search", arguments={"q": "anyio", "n": 3})],
    )
    model = ScriptedModel([message], label="demo")
    assert isinstance(model, Model) and model.name == "scripted:demo"
    events = await play(model)
    texts = [e.delta for e in events if isinstance(e, TextDelta)]
    assert 1 < len(texts) <= 3 and "".join(texts) == "Looking it up now."
    pieces = [e for e in events if isinstance(e, ToolCallDelta)]
    assert pieces[0].name == "search" and {p.id for p in pieces} == {"c1"}
    assert json.loads("".join(p.arguments_delta for p in pieces)) == {"q": "anyio", "n": 3}
    last = events[-1]
    assert isinstance(last, Completed) and [e for e in events if isinstance(e, Completed)] == [last]
    assert last.message.tool_calls == message.tool_calls
    assert (last.message.model, last.message.stop_reason) == ("scripted:demo", "tool_use")


async def test_function_turns_see_the_request() -> None:
    def sync_turn(request: ModelRequest) -> AssistantMessage:
        return AssistantMessage(text=f"{len(request.messages)} message(s)")

    async def async_turn(request: ModelRequest) -> AssistantMessage:
        return AssistantMessage(text=request.instructions)

    model = ScriptedModel([sync_turn, async_turn, "plain"])
    finals = [m.text for m in await converse(model, 3)]
    assert finals == ["1 message(s)", "Be brief.", "plain"]
    assert len(model.requests) == 3 and model.requests[0] == REQUEST and model.remaining == 0


async def test_running_past_the_script_is_a_clear_error() -> None:
    model = ScriptedModel(["only one"], label="short")
    await converse(model, 1)
    with pytest.raises(ScriptExhausted, match="asked for turn 2 but its script has only 1 turns"):
        await converse(model, 2)
    assert issubclass(ScriptExhausted, RunError)
    assert [e.type for e in await play(model.replay())][-1] == "completed"


async def test_a_function_turn_must_return_a_message() -> None:
    model = ScriptedModel([lambda request: "oops"])  # type: ignore[list-item,return-value]
    with pytest.raises(UsageError, match="must return an AssistantMessage, got str"):
        await play(model)


async def test_a_script_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "text": "Checking.",
                        "tool_calls": [{"name": "look", "arguments": {"at": "x"}}],
                    },
                    {"tool_calls": [{"id": "mine", "name": "look"}]},
                    {"text": "Done."},
                ]
            }
        )
    )
    model = ScriptedModel.from_file(path)
    assert model.name == f"scripted:{path}" and model.remaining == 3
    messages = await converse(model, 3)
    assert messages[0].tool_calls == [ToolCall(id="call_0_0", name="look", arguments={"at": "x"})]
    assert messages[1].tool_calls == [ToolCall(id="mine", name="look")]
    assert messages[2].text == "Done." and messages[2].tool_calls == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # the trailing comma: Python 3.13's decoder names its line, earlier ones the next
        ('{"turns": [\n  {"text": "a"},\n]}', r"line [23]: not valid JSON"),
        ('{"turns": []}', r"not a script \(turns: List should have at least 1 item"),
        ('{"turns": [{"txt": "a"}]}', r"turns\.0\.txt: Extra inputs are not permitted"),
        (
            '{"turns": [{"tool_calls": [{"arguments": {}}]}]}',
            r"turns\.0\.tool_calls\.0\.name: Field required",
        ),
        ("[1, 2]", r"expected \{\"turns\""),
    ],
)
def test_a_bad_script_file_names_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ScriptFileError, match=message) as caught:
        ScriptedModel.from_file(path)
    assert str(caught.value).startswith(f"{path}: ") and caught.value.path == str(path)


def test_a_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptFileError, match="cannot read the script"):
        ScriptedModel.from_file(tmp_path / "none.json")
