"""The ask helpers: the descriptor every result carries, the resume schema, argument errors."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from ag_ui.core import Interrupt
from hypothesis import given
from hypothesis import strategies as st

from interactions import (
    Approved,
    AskUserOption,
    AskUserResult,
    ContractError,
    InvalidPayloadError,
    UsageError,
    ask_user,
    ask_user_approval,
    ask_user_question,
)
from interactions.asks import (
    ROOT_SCOPE,
    ApprovalRequest,
    AskLedger,
    AskUserRequest,
    QuestionRequest,
    normalize_options,
)
from interactions.resume import check_payload_against_schema
from interactions.testing.dialogs import ScriptedDialogUI, StaticToolContext

pytestmark = pytest.mark.anyio

PAUSE = {"PI_INTERRUPT_RESUME": "1"}
HEADLESS = StaticToolContext()


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def _ask_question(env: dict[str, str] | None = None, **kwargs: Any) -> AskUserResult:
    kwargs.setdefault("ctx", HEADLESS)
    return await ask_user_question(
        kwargs.pop("question", "Which colour?"), tool_call_id="call_7", env=env or PAUSE, **kwargs
    )


async def test_awaiting_question_descriptor() -> None:
    result = await _ask_question(
        options=[" Red ", AskUserOption(label="Blue", value="#00f", description="sky")],
        header="Palette",
        metadata={"step": 2},
    )
    interrupt = result.details.interrupt
    assert result.outcome.type == "awaiting_user"
    assert result.text == "Awaiting user response."
    assert interrupt.id == "int-call_7"
    assert result.outcome.interrupt_id == interrupt.id  # type: ignore[union-attr]
    assert interrupt.reason == "input_required"
    assert interrupt.message == "Which colour?"
    assert interrupt.tool_call_id == "call_7"
    assert [o.label for o in interrupt.options] == ["Red", "Blue"]
    assert interrupt.options[1].value == "#00f"
    assert interrupt.selection == "single"
    assert interrupt.metadata == {"step": 2, "kind": "question"}
    assert interrupt.display is not None and interrupt.display.header == "Palette"
    assert interrupt.outcome == result.outcome
    assert interrupt.response_schema is not None
    assert interrupt.response_schema["required"] == ["answer"]


async def test_descriptor_is_an_ag_ui_interrupt_on_the_wire() -> None:
    result = await _ask_question(options=["Red"])
    wire = result.details.interrupt.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert {"id", "reason", "message", "toolCallId", "responseSchema", "expiresAt"} <= set(wire)
    parsed = Interrupt.model_validate(wire)
    assert parsed.tool_call_id == "call_7"
    assert parsed.response_schema == result.details.interrupt.response_schema


async def test_answered_results_carry_the_descriptor_without_a_schema() -> None:
    ui = ScriptedDialogUI(["Red"])
    result = await _ask_question(options=["Red"], ctx=StaticToolContext(ui=ui), env={})
    interrupt = result.details.interrupt
    assert interrupt.outcome is not None and interrupt.outcome.type == "answered"
    assert interrupt.response_schema is None
    assert interrupt.expires_at


async def test_approval_descriptor() -> None:
    result = await ask_user_approval(
        title="Deploy?",
        body="All regions",
        sections=[{"title": "Diff", "body": "+1 -1"}],
        kind="deploy",
        metadata={"env": "prod"},
        tool_call_id="call_8",
        ctx=HEADLESS,
        env=PAUSE,
    )
    interrupt = result.details.interrupt
    assert interrupt.reason == "confirmation"
    assert interrupt.message == "Deploy?"
    assert interrupt.metadata == {"env": "prod", "kind": "deploy"}
    assert interrupt.display is not None
    assert interrupt.display.sections[0].title == "Diff"
    schema = interrupt.response_schema
    assert schema is not None
    check_payload_against_schema({"approved": False, "feedback": "no"}, schema)
    for bad in ({"approved": "yes"}, {}, {"approved": True, "x": 1}):
        with pytest.raises(InvalidPayloadError):
            check_payload_against_schema(bad, schema)


async def test_approval_message_is_the_descriptor_message() -> None:
    result = await ask_user_approval(
        message="OK to run rm?", tool_call_id="c", ctx=HEADLESS, env=PAUSE
    )
    assert result.details.interrupt.message == "OK to run rm?"


async def test_schema_of_fixed_options_is_an_enum() -> None:
    result = await _ask_question(
        options=[{"label": "Red", "value": "r"}, "Blue"], allow_other=False
    )
    schema = result.details.interrupt.response_schema
    assert schema is not None
    assert schema["properties"]["answer"]["enum"] == ["r", "Blue"]
    check_payload_against_schema({"answer": "r"}, schema)
    with pytest.raises(InvalidPayloadError):
        check_payload_against_schema({"answer": "Red"}, schema)


async def test_schema_with_other_allowed_accepts_own_answers() -> None:
    result = await _ask_question(options=["Red", "Blue"])
    schema = result.details.interrupt.response_schema
    assert schema is not None
    assert "enum" not in schema["properties"]["answer"]
    assert schema["properties"]["answer"]["examples"] == ["Red", "Blue"]
    check_payload_against_schema({"answer": "Teal"}, schema)
    with pytest.raises(InvalidPayloadError):
        check_payload_against_schema({"answer": ""}, schema)


async def test_schema_of_multiple_selection() -> None:
    result = await _ask_question(options=["a", "b"], selection="multiple", allow_other=False)
    assert result.details.interrupt.selection == "multiple"
    schema = result.details.interrupt.response_schema
    assert schema is not None
    check_payload_against_schema({"answers": ["b", "a"]}, schema)
    for bad in ({"answers": []}, {"answers": ["c"]}, {"answers": ["a", "a"]}, {"answer": "a"}):
        with pytest.raises(InvalidPayloadError):
            check_payload_against_schema(bad, schema)


async def test_expires_at_defaults_to_a_bound() -> None:
    before = datetime.now(UTC)
    result = await _ask_question()
    expires = _parse_time(result.details.interrupt.expires_at or "")
    assert (
        timedelta(days=7) - timedelta(seconds=5) < expires - before <= timedelta(days=7, seconds=5)
    )


async def test_expires_at_default_is_configurable() -> None:
    before = datetime.now(UTC)
    result = await _ask_question(env={**PAUSE, "PI_INTERRUPT_TTL_SECONDS": "3600"})
    expires = _parse_time(result.details.interrupt.expires_at or "")
    assert timedelta(minutes=59) < expires - before <= timedelta(minutes=61)


async def test_expires_at_given_is_kept_in_utc() -> None:
    when = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    local = when.astimezone(datetime.now().astimezone().tzinfo).isoformat()
    result = await _ask_question(expires_at=local)
    assert result.details.interrupt.expires_at == when.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize("ttl", ["1", "0.5"])
async def test_an_interrupt_is_open_at_least_as_long_as_asked(ttl: str) -> None:
    """``expiresAt`` is the instant the lifetime ends, never rounded down to a whole second
    (a one-second question could then expire the moment it was asked)."""
    before = datetime.now(UTC)
    result = await _ask_question(env={**PAUSE, "PI_INTERRUPT_TTL_SECONDS": ttl})
    expires = _parse_time(result.details.interrupt.expires_at or "")
    assert before + timedelta(seconds=float(ttl)) <= expires < before + timedelta(seconds=2)
    exact = before + timedelta(hours=1, microseconds=500_000)
    given = await _ask_question(expires_at=exact.isoformat())
    assert _parse_time(given.details.interrupt.expires_at or "") >= exact


FIXED = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)


async def test_expires_at_is_the_contexts_now_plus_the_lifetime() -> None:
    ctx = StaticToolContext(clock=lambda: FIXED)
    result = await _ask_question(ctx=ctx, env={**PAUSE, "PI_INTERRUPT_TTL_SECONDS": "3600"})
    assert result.details.interrupt.expires_at == "2031-05-06T08:08:09Z"
    with pytest.raises(UsageError, match="past"):  # a given expiry lies ahead of that now
        await _ask_question(ctx=ctx, expires_at="2031-05-06T07:08:08Z")
    given = await _ask_question(ctx=ctx, expires_at="2031-05-06T07:08:10Z")
    assert given.details.interrupt.expires_at == "2031-05-06T07:08:10Z"


async def test_a_dialog_is_bounded_by_the_expiry_on_the_contexts_clock() -> None:
    """A clock years behind the wall's: the dialog still has the ask's whole lifetime."""
    ui = _TakingTurnsUI(["Red"])
    ctx = StaticToolContext(ui=ui, clock=lambda: datetime(2020, 1, 1, tzinfo=UTC))
    result = await _ask_question(options=["Red"], ctx=ctx, env={})
    assert result.text == "Answer: Red"


async def test_a_clock_without_a_time_zone_is_refused() -> None:
    ctx = StaticToolContext(clock=lambda: datetime(2031, 5, 6))
    with pytest.raises(UsageError, match="aware"):
        await _ask_question(ctx=ctx)


BAD_QUESTIONS: list[tuple[dict[str, Any], str]] = [
    ({"question": ""}, "question"),
    ({"question": "   "}, "question"),
    ({"options": ["a", " "]}, "option 1"),
    ({"options": ["a", "a"]}, "unique"),
    ({"options": [" a", "a "]}, "unique"),
    ({"options": "abc"}, "list"),
    ({"options": [3]}, "option 0"),
    ({"options": [{"value": "x"}]}, "option 0"),
    ({"options": ["a", {"label": "None", "value": ""}]}, "option 1 .'None'.: a value must not"),
    ({"options": [{"label": "Space", "value": " "}]}, "a value must not be blank"),
    ({"selection": "multiple"}, "needs options"),
    ({"allow_other": False}, "allow_other=False needs options"),
    ({"selection": "many", "options": ["a"]}, "selection"),
    ({"expires_at": "tomorrow"}, "ISO 8601"),
    ({"expires_at": "2030-01-01T00:00:00"}, "time zone"),
    ({"expires_at": "2000-01-01T00:00:00Z"}, "past"),
    ({"expires_at": "2999-01-01T00:00:00Z"}, "more than ten years away"),  # was taken
    ({"expires_at": "9999-12-31T23:59:59-05:00"}, "past the year 9999"),  # was OverflowError
    ({"timeout": 0}, "timeout"),
    ({"timeout": -1}, "timeout"),
    ({"timeout": float("inf")}, "positive, finite"),
    ({"timeout": float("nan")}, "positive, finite"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_QUESTIONS)
async def test_bad_questions_are_usage_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        await _ask_question(**kwargs)


HAND_BUILT: list[tuple[AskUserRequest, str]] = [
    (QuestionRequest(question="  "), "question must be a non-empty string"),
    (QuestionRequest(question="Q?", selection="multiple"), "needs options"),
    (QuestionRequest(question="Q?", allow_other=False), "allow_other=False needs options"),
    (
        QuestionRequest(question="Q?", options=(AskUserOption(label="a", value=" "),)),
        "a value must not be blank",
    ),
    (
        QuestionRequest(
            question="Q?", options=(AskUserOption(label="a"), AskUserOption(label="a"))
        ),
        "unique",
    ),
    (ApprovalRequest(), "saying what to approve"),
    (ApprovalRequest(title="   ", body=""), "saying what to approve"),
    (ApprovalRequest(title="Go?", kind=" "), "kind"),
]
CHANNELS = {
    "pause": PAUSE,
    "ci": {"PI_ASK_USER_AUTO_APPROVE": "1"},
    "dialog": {},
}


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize(("request_", "message"), HAND_BUILT)
async def test_a_hand_built_request_is_checked_like_the_helpers_check_theirs(
    request_: AskUserRequest, message: str, channel: str
) -> None:
    ui = ScriptedDialogUI(["Approve"])
    ctx = StaticToolContext(ui=ui if channel == "dialog" else None)
    with pytest.raises(UsageError, match=message):
        await ask_user(request_, tool_call_id="c", ctx=ctx, env=CHANNELS[channel])
    assert ui.calls == []  # refused before anything is shown


async def test_only_a_request_model_is_asked() -> None:
    with pytest.raises(UsageError, match="QuestionRequest or an ApprovalRequest"):
        await ask_user({"question": "Q?"}, tool_call_id="c", ctx=HEADLESS, env=PAUSE)  # type: ignore[arg-type]


class _TakingTurnsUI(ScriptedDialogUI):
    """A UI whose dialogs let other tasks run while they are open, as a real one does."""

    async def select(self, *args: Any, **kwargs: Any) -> str | None:
        await anyio.lowlevel.checkpoint()
        return await super().select(*args, **kwargs)


async def test_asks_of_one_call_running_at_once_get_ids_of_their_own() -> None:
    ui = _TakingTurnsUI(["Approve", "Red"])
    ctx = StaticToolContext(ui=ui, asks=AskLedger(ROOT_SCOPE.call("c1")))
    results: list[AskUserResult] = []

    async def approval() -> None:
        results.append(await ask_user_approval(title="Go?", tool_call_id="c1", ctx=ctx))

    async def question() -> None:
        results.append(
            await ask_user_question("Colour?", options=["Red"], tool_call_id="c1", ctx=ctx)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(approval)
        tg.start_soon(question)
    ids = sorted(r.details.interrupt.id for r in results)
    assert ids == ["int-c1", "int-c1.2"]


@pytest.mark.parametrize(
    ("tool_call_id", "first", "second"),
    [
        ("a", "int-a", "int-a.2"),
        ("a.2", "int-a%2E2", "int-a%2E2.2"),
        ("a@2", "int-a%402", "int-a%402.2"),
        ("50%", "int-50%25", "int-50%25.2"),
    ],
)
def test_a_call_ids_own_separators_are_escaped_in_its_asks_ids(
    tool_call_id: str, first: str, second: str
) -> None:
    """Else call ``a.2``'s first ask and call ``a``'s second were both ``int-a.2``."""
    ledger = AskLedger(ROOT_SCOPE.call(tool_call_id))
    assert [ledger.next_ask()[0], ledger.next_ask()[0]] == [first, second]


async def test_a_replayed_ask_never_takes_an_answer_stored_for_another_call() -> None:
    other = await ask_user_approval(title="Go?", tool_call_id="b", ctx=HEADLESS, env=PAUSE)
    stored = other.details.interrupt.model_copy(update={"id": "int-a"})  # as if ids had met
    approved = stored.model_copy(update={"outcome": Approved()})
    ctx = StaticToolContext(
        asks=AskLedger(ROOT_SCOPE.call("a"), replay=True, answers={"int-a": approved})
    )
    with pytest.raises(ContractError, match="finds the answer stored for tool call 'b'"):
        await ask_user_approval(title="Go?", tool_call_id="a", ctx=ctx, env=PAUSE)


async def test_metadata_naming_another_kind_is_refused_not_overwritten() -> None:
    with pytest.raises(UsageError, match="metadata holds 'kind': 'deploy'"):
        await ask_user_question(
            "Q?", tool_call_id="c", ctx=HEADLESS, env=PAUSE, metadata={"kind": "deploy"}
        )
    asked = await ask_user_question(
        "Q?", tool_call_id="c", ctx=HEADLESS, env=PAUSE, metadata={"kind": "question", "x": 1}
    )
    assert asked.details.interrupt.metadata == {"kind": "question", "x": 1}


async def test_bad_ttl_setting_is_a_usage_error() -> None:
    # below a millisecond the pause expired (or rounded to 0 s) before anyone could answer;
    # float() read '5_000' and digits of other scripts
    for value in ("soon", "0", "-5", "0.0000001", "\u0665", "5_000"):
        with pytest.raises(UsageError, match="PI_INTERRUPT_TTL_SECONDS"):
            await _ask_question(env={**PAUSE, "PI_INTERRUPT_TTL_SECONDS": value})


async def test_approval_needs_something_to_approve() -> None:
    with pytest.raises(UsageError, match="approve"):
        await ask_user_approval(tool_call_id="c", ctx=HEADLESS, env=PAUSE)
    with pytest.raises(UsageError, match="kind"):
        await ask_user_approval(title="x", kind=" ", tool_call_id="c", ctx=HEADLESS, env=PAUSE)


async def test_tool_call_id_is_required() -> None:
    with pytest.raises(UsageError, match="tool_call_id"):
        await ask_user_question("Q?", tool_call_id="", ctx=HEADLESS, env=PAUSE)


option_like = st.one_of(
    st.text(max_size=12),
    st.builds(
        lambda label, value: {"label": label, "value": value},
        st.text(max_size=8),
        st.none() | st.text(max_size=8),
    ),
    st.integers(),
    st.none(),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)


@given(st.lists(option_like, max_size=6))
def test_option_normalization_gives_options_or_a_usage_error(options: list[Any]) -> None:
    try:
        normalized = normalize_options(options)
    except UsageError:
        return
    labels = [o.label for o in normalized]
    assert all(label and label == label.strip() for label in labels)
    assert all(o.answer.strip() for o in normalized)  # every option answers something
    assert len(set(labels)) == len(labels)
    assert len(normalized) == len(options)
    # every answer, a value or a label in any case, names one option's answer
    assert len({label.casefold() for label in labels}) == len(labels)
    for option in normalized:
        for other in normalized:
            if option.value is not None and option.value.casefold() == other.label.casefold():
                assert option.answer == other.answer


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (  # "Green" (the label) recorded "g" from a dialog, "Green" (Blue's value) from the CLI
            [{"label": "Blue", "value": "Green"}, {"label": "Green", "value": "g"}],
            "option 'Blue' has the value 'Green', which is option 'Green''s label",
        ),
        (["Red", "red"], "option labels 'Red' and 'red' differ only in case"),  # "RED": Red
    ],
)
async def test_options_an_answer_could_not_tell_apart_are_refused(
    options: list[Any], said: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(said)):
        await ask_user_question(
            "Which?", options=options, tool_call_id="c", ctx=HEADLESS, env=PAUSE
        )


def test_an_ask_scope_is_the_one_place_an_interrupt_id_comes_from() -> None:
    node = ROOT_SCOPE.enter("draft", 1)
    call = node.call("call_pick")
    assert [call.interrupt_id(), call.interrupt_id(2)] == [
        "int-draft.1.call_pick",
        "int-draft.1.call_pick.2",
    ]
    assert [call.position_of(i) for i in ("int-draft.1.call_pick", "int-draft.1.call_pick.3")] == [
        1,
        3,
    ]
    assert call.position_of("int-draft.1.call_pick.1") is None  # a first ask has no suffix
    assert call.position_of("int-draft.2.call_pick") is None  # another visit's
    field = ROOT_SCOPE.enter("review", 1, "approved")
    assert field.interrupt_id(2) == "int-review.1.approved.2"
    assert ROOT_SCOPE.enter("a.b", 1).interrupt_id() == "int-a%2Eb.1"  # names keep their dots
    # a checkpoint written before scopes kept a graph agent's ids without the node's path
    assert node.adopt("int-call_pick.2") == "int-draft.1.call_pick.2"
    assert node.adopt("int-draft.1.call_pick") == "int-draft.1.call_pick"
    assert ROOT_SCOPE.adopt("int-call_pick") == "int-call_pick"
