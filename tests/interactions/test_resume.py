"""Resume validation: a pure decision over stored interactions and resume entries."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ag_ui.core import ResumeEntry
from hypothesis import given, settings
from hypothesis import strategies as st

from interactions import (
    AskUserInterrupt,
    AskUserOption,
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    UnknownInteractionError,
)
from interactions.asks import ApprovalRequest, QuestionRequest
from interactions.resume import (
    new_answer,
    parse_resume_entries,
    plan_resume,
    response_schema_for,
    validate_answer,
)
from interactions.store import InteractionAnswer, InteractionRecord

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
QUESTION_SCHEMA = response_schema_for(
    QuestionRequest(
        question="Colour?",
        options=(AskUserOption(label="Red"), AskUserOption(label="Blue")),
        allow_other=False,
    )
)
APPROVAL_SCHEMA = response_schema_for(ApprovalRequest(title="Go?"))


def _record(
    id: str,
    schema: dict[str, Any],
    *,
    answer: InteractionAnswer | None = None,
    expires: timedelta = timedelta(days=1),
) -> InteractionRecord:
    return InteractionRecord(
        id=id,
        run_id="run-1",
        tool_call_id=id.removeprefix("int-"),
        requested_at=NOW - timedelta(minutes=5),
        expires_at=NOW + expires,
        answered_at=NOW if answer else None,
        descriptor=_descriptor(id, schema),
        answer=answer,
    )


def _descriptor(id: str, schema: dict[str, Any]) -> dict[str, Any]:
    approval = schema is APPROVAL_SCHEMA
    interrupt = AskUserInterrupt(
        id=id,
        reason="confirmation" if approval else "input_required",
        response_schema=schema,
        options=() if approval else (AskUserOption(label="Red"), AskUserOption(label="Blue")),
        allow_other=approval,
    )
    return interrupt.model_dump(mode="json", exclude_none=True)


def _entry(id: str, payload: Any = None, status: str = "resolved") -> ResumeEntry:
    return ResumeEntry(interrupt_id=id, status=status, payload=payload)  # type: ignore[arg-type]


PAUSE = [_record("int-a", QUESTION_SCHEMA), _record("int-b", APPROVAL_SCHEMA)]


def test_accepts_a_resume_covering_every_open_interrupt() -> None:
    plan = plan_resume(
        PAUSE,
        [
            _entry("int-a", {"answer": "Blue"}),
            _entry("int-b", {"approved": False, "feedback": "x"}),
        ],
        now=NOW,
        answered_by="ada",
        via="cli",
    )
    assert not plan.replay
    assert plan.outcomes["int-a"].type == "answered"
    assert plan.outcomes["int-b"].type == "revision_requested"
    assert plan.new_answers["int-a"].answered_by == "ada"


def test_cancelled_entry_declines() -> None:
    plan = plan_resume(
        PAUSE, [_entry("int-a", status="cancelled"), _entry("int-b", status="cancelled")], now=NOW
    )
    assert {o.type for o in plan.outcomes.values()} == {"declined"}


def test_partial_resume_is_refused() -> None:
    with pytest.raises(InvalidPayloadError, match="int-b") as info:
        plan_resume(PAUSE, [_entry("int-a", {"answer": "Red"})], now=NOW)
    assert info.value.reason == "incomplete_resume"


def test_interactions_answered_earlier_count_as_covered() -> None:
    answered = _record(
        "int-b",
        APPROVAL_SCHEMA,
        answer=InteractionAnswer(status="resolved", payload={"approved": True}),
    )
    plan = plan_resume([PAUSE[0], answered], [_entry("int-a", {"answer": "Red"})], now=NOW)
    assert plan.outcomes["int-b"].type == "approved"
    assert list(plan.new_answers) == ["int-a"]


@pytest.mark.parametrize(
    ("entries", "error"),
    [
        ([_entry("int-zzz", {"answer": "Red"})], UnknownInteractionError),
        (
            [_entry("int-a", {"answer": "Red"}), _entry("int-a", {"answer": "Red"})],
            InvalidPayloadError,  # a duplicate entry is bad input, not an unknown id
        ),
        (
            [_entry("int-a", {"answer": "Green"}), _entry("int-b", {"approved": True})],
            InvalidPayloadError,
        ),
        (
            [_entry("int-a", {"answer": "Red"}), _entry("int-b", {"approved": "yes"})],
            InvalidPayloadError,
        ),
        (
            [_entry("int-a", {"answers": ["Red"]}), _entry("int-b", {"approved": True})],
            InvalidPayloadError,
        ),
        ([_entry("int-a"), _entry("int-b", {"approved": True})], InvalidPayloadError),
    ],
)
def test_refusals_are_typed(entries: list[ResumeEntry], error: type[Exception]) -> None:
    with pytest.raises(error):
        plan_resume(PAUSE, entries, now=NOW)


def test_expired_interrupt_is_refused() -> None:
    expired = [_record("int-a", QUESTION_SCHEMA, expires=timedelta(seconds=-1))]
    with pytest.raises(ExpiredError) as info:
        plan_resume(expired, [_entry("int-a", {"answer": "Red"})], now=NOW)
    assert info.value.interaction_id == "int-a"


def test_identical_replay_is_a_replay_and_a_different_one_a_conflict() -> None:
    stored = [
        _record(
            "int-a",
            QUESTION_SCHEMA,
            answer=InteractionAnswer(status="resolved", payload={"answer": "Red"}),
        ),
    ]
    plan = plan_resume(stored, [_entry("int-a", {"answer": "Red"})], now=NOW + timedelta(days=9))
    assert plan.replay and not plan.new_answers
    with pytest.raises(ConflictError):
        plan_resume(stored, [_entry("int-a", {"answer": "Blue"})], now=NOW)


@pytest.mark.parametrize(
    "raw",
    [None, [], {}, "x", [{"interruptId": "a"}], [{"interruptId": "a", "status": "done"}], [3]],
)
def test_parse_resume_entries_refuses_bad_json(raw: Any) -> None:
    with pytest.raises(InvalidPayloadError):
        parse_resume_entries(raw)


def test_parse_resume_entries_reads_camel_case() -> None:
    (entry,) = parse_resume_entries(
        [{"interruptId": "int-a", "status": "resolved", "payload": {"answer": "Red"}}]
    )
    assert entry.interrupt_id == "int-a" and entry.payload == {"answer": "Red"}


def test_the_written_out_payload_schemas_are_pydantics() -> None:
    from interactions._schemas import _SCHEMAS, generated_schema

    for model, schema in _SCHEMAS.items():
        assert schema == generated_schema(model), model.__name__


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_status = st.sampled_from(["resolved", "resolved", "resolved", "cancelled"])


def _entry_for(interrupt_id: str, payload: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {"interruptId": st.just(interrupt_id), "status": _status}, optional={"payload": payload}
    )


_answer = st.fixed_dictionaries(
    {"answer": st.sampled_from(["Red", "Blue", "red", "Green", " ", ""]) | _json},
    optional={"extra": _json},
)
_approval = st.fixed_dictionaries(
    {"approved": st.booleans() | _json},
    optional={"feedback": st.text(max_size=8) | _json, "extra": _json},
)
_raw_resume = st.one_of(  # mostly near what a host sends, with values of any JSON type
    st.tuples(
        _entry_for("int-a", _answer),
        _entry_for("int-b", _approval),
        st.lists(_entry_for("int-x", _json) | _json, max_size=1),
    ).flatmap(lambda found: st.permutations([found[0], found[1], *found[2]])),
    st.lists(_entry_for("int-a", _json) | _entry_for("int-b", _json) | _json, max_size=3),
    _json,
)


@settings(max_examples=300)
@given(_raw_resume)
def test_any_resume_is_planned_or_refused_with_a_typed_error(raw: Any) -> None:
    """Whatever JSON a host passes on: a plan whose answers a store can hold, or one of the
    documented errors (an ``InvalidPayloadError``, ``ConflictError``, ``ExpiredError``,
    ``UnknownInteractionError``); never another exception."""
    try:
        plan = plan_resume(PAUSE, parse_resume_entries(raw), now=NOW)
    except (InvalidPayloadError, ConflictError, ExpiredError, UnknownInteractionError):
        return
    assert set(plan.new_answers) == {"int-a", "int-b"}  # both open: a plan answers both
    for answer in plan.new_answers.values():
        json.dumps(answer.model_dump(mode="json"), allow_nan=False)


def _asked(interrupt_id: str, request: ApprovalRequest | QuestionRequest) -> InteractionRecord:
    """The stored interaction of ``request``, as a pause stores it."""
    interrupt = AskUserInterrupt(
        id=interrupt_id,
        reason="confirmation" if isinstance(request, ApprovalRequest) else "input_required",
        response_schema=response_schema_for(request),
        options=() if isinstance(request, ApprovalRequest) else request.options,
        selection="single" if isinstance(request, ApprovalRequest) else request.selection,
        allow_other=not isinstance(request, ApprovalRequest) and request.allow_other,
    )
    return InteractionRecord(
        id=interrupt_id, run_id="run-1", tool_call_id=interrupt_id, requested_at=NOW,
        expires_at=NOW + timedelta(days=1),
        descriptor=interrupt.model_dump(mode="json", exclude_none=True),
    )  # fmt: skip


_COLOURS = (AskUserOption(label="Red", value="#f00"), AskUserOption(label="Blue"))
ASKED = [
    _asked("int-free", QuestionRequest(question="Name?")),
    _asked("int-fixed", QuestionRequest(question="Colour?", options=_COLOURS, allow_other=False)),
    _asked("int-open", QuestionRequest(question="Colour?", options=_COLOURS)),
    _asked(
        "int-many", QuestionRequest(question="Colours?", options=_COLOURS, selection="multiple")
    ),
    _asked("int-go", ApprovalRequest(title="Go?")),
]
_pick = st.sampled_from(["Red", "#f00", "Blue", "Green", " ", ""]) | _json
_one_answer = st.one_of(  # mostly one of the three shapes, with values of any JSON type
    st.none() | _json | st.text(max_size=8),
    st.fixed_dictionaries({"answer": _pick}, optional={"extra": _json}),
    st.fixed_dictionaries({"answer": st.sampled_from(["Red", "#f00", "Blue", "Green"])}),
    st.fixed_dictionaries({"answers": st.lists(_pick, max_size=3) | _json}),
    st.fixed_dictionaries({"answers": st.lists(st.sampled_from(["Red", "#f00", "Blue"]))}),
    st.fixed_dictionaries({"approved": st.booleans() | _json}, optional={"feedback": _json}),
    st.fixed_dictionaries({"approved": st.booleans()}, optional={"feedback": st.text()}),
)


@settings(max_examples=300)
@given(
    st.sampled_from(ASKED),
    st.sampled_from(["resolved", "resolved", "resolved", "cancelled", "expired", "done", 1]),
    _one_answer,
    st.sampled_from([None, "Ada", "", "\x00", 3]),
)
def test_any_single_answer_is_recorded_or_refused_with_a_typed_error(
    record: InteractionRecord, status: Any, payload: Any, answered_by: Any
) -> None:
    """What ``runs answer`` and the hosts' answer endpoints check: any status, payload and
    name give an answer a store can hold as JSON, or an ``InvalidPayloadError``."""
    try:
        answer = new_answer(record, status, payload, answered_by=answered_by, via="test")
        _, recorded = validate_answer(record, answer, now=NOW)
    except InvalidPayloadError:
        return
    json.dumps(recorded.model_dump(mode="json"), allow_nan=False)


def _gate(args_schema: dict[str, Any] | None) -> AskUserInterrupt:
    from interactions.asks import ARGS_SCHEMA

    metadata = {"kind": "tool_call"} | ({ARGS_SCHEMA: args_schema} if args_schema else {})
    request = ApprovalRequest(title="Run deploy?", metadata=metadata)
    return AskUserInterrupt(
        id="int-1", reason="confirmation", response_schema=response_schema_for(request),
        metadata=metadata,
    )  # fmt: skip


def test_a_tool_calls_approval_may_be_remembered_and_its_schema_says_how() -> None:
    from interactions import Approved, Remember, RevisionRequested
    from interactions.resume import resolve_answer

    gate = _gate({"properties": {"env": {"type": "string"}}, "type": "object"})
    schema = gate.response_schema
    assert schema is not None
    assert schema["properties"]["remember"]["anyOf"][0]["properties"]["scope"]["enum"] == [
        "run",
        "thread",
    ]
    always = {"approved": True, "remember": {"scope": "thread", "args": True}}
    outcome, payload = resolve_answer(gate, "resolved", always)
    assert outcome == Approved(remember=Remember(scope="thread", args=True))
    assert payload == always
    never = {"approved": False, "remember": {"scope": "run"}}
    outcome, _ = resolve_answer(gate, "resolved", never)
    assert outcome == RevisionRequested(remember=Remember(scope="run"))
    with pytest.raises(InvalidPayloadError, match="remember"):
        resolve_answer(gate, "resolved", {"approved": True, "remember": {"scope": "forever"}})


def test_an_approval_of_no_tool_call_cannot_be_remembered() -> None:
    from interactions.resume import resolve_answer

    plain = _gate(None)
    schema = plain.response_schema
    assert schema is not None and "remember" not in schema["properties"]
    with pytest.raises(InvalidPayloadError, match="only the approval of a tool call"):
        resolve_answer(plain, "resolved", {"approved": True, "remember": {"scope": "run"}})
