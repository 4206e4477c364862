"""An ask as an elicitation form and a client's reply as its outcome: the pure mapping, read
as the dialog walk reads the same choices; hostile replies get the documented error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition
from pydantic import TypeAdapter

from hosts.mcp import elicitation_form, read_elicitation
from interactions import (
    Answered,
    AnsweredMultiple,
    Approved,
    AskUserOutcome,
    Declined,
    InvalidPayloadError,
    RevisionRequested,
)
from interactions.asks import (
    ApprovalRequest,
    AskUserRequest,
    QuestionRequest,
    normalize_options,
)

OPTIONS = normalize_options(
    [
        {"label": "Stable", "value": "stable", "description": "every user gets it"},
        {"label": "Beta", "value": "beta"},
        "Nightly",
    ]
)
FREE = QuestionRequest(question="Codename?")
SINGLE = QuestionRequest(question="Channel?", options=OPTIONS, header="Release")
FIXED = QuestionRequest(question="Channel?", options=OPTIONS, allow_other=False)
MULTIPLE = QuestionRequest(question="Channels?", options=OPTIONS, selection="multiple")
MULTIPLE_FIXED = MULTIPLE.model_copy(update={"allow_other": False})
APPROVAL = ApprovalRequest(title="Publish?", body="Build passed.", message="Publish v1?")
REQUESTS = [FREE, SINGLE, FIXED, MULTIPLE, MULTIPLE_FIXED, APPROVAL]

PRIMITIVE = TypeAdapter[Any](PrimitiveSchemaDefinition)


@pytest.mark.parametrize("request_", REQUESTS)
def test_every_form_is_the_flat_schema_mcp_allows(request_: AskUserRequest) -> None:
    schema = elicitation_form(request_).requested_schema
    assert schema["type"] == "object"
    for prop in schema["properties"].values():
        PRIMITIVE.validate_python(prop)  # the SDK's own model of a form field
    assert set(schema.get("required", [])) <= set(schema["properties"])


def test_a_question_with_options_is_a_titled_enum_plus_other() -> None:
    form = elicitation_form(SINGLE)
    assert form.message == "Release\n\nChannel?"
    assert form.requested_schema == {
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "title": "Answer",
                "oneOf": [
                    {"const": "stable", "title": "Stable"},
                    {"const": "beta", "title": "Beta"},
                    {"const": "Nightly", "title": "Nightly"},
                ],
                "description": "Stable: every user gets it",
            },
            "other": {
                "type": "string",
                "title": "Other",
                "description": "Or type your own answer; when given, it is used instead of a "
                "choice above.",
            },
        },
    }


def test_fixed_options_require_an_answer_and_offer_no_other() -> None:
    schema = elicitation_form(FIXED).requested_schema
    assert list(schema["properties"]) == ["answer"]
    assert schema["required"] == ["answer"]


def test_an_approval_is_a_boolean_and_optional_feedback() -> None:
    form = elicitation_form(APPROVAL)
    assert form.message == "Publish?\n\nBuild passed.\n\nPublish v1?"
    assert form.requested_schema["required"] == ["approved"]
    assert form.requested_schema["properties"]["approved"]["default"] is False


@pytest.mark.parametrize(
    ("request_", "action", "content", "outcome"),
    [
        (FREE, "accept", {"answer": "  Falcon "}, Answered(answer="Falcon")),
        (FREE, "accept", {"answer": "   "}, Declined()),
        (SINGLE, "accept", {"answer": "beta"}, Answered(answer="beta")),
        (SINGLE, "accept", {"answer": "Nightly"}, Answered(answer="Nightly")),
        (SINGLE, "accept", {"other": "canary"}, Answered(answer="canary")),
        (SINGLE, "accept", {"answer": "beta", "other": "canary"}, Answered(answer="canary")),
        (SINGLE, "accept", {"other": " stable"}, Answered(answer="stable")),
        (SINGLE, "accept", {"other": "BETA"}, Answered(answer="beta")),  # a typed label
        (SINGLE, "accept", {"answer": "beta", "other": "  "}, Answered(answer="beta")),
        (SINGLE, "accept", {}, Declined()),
        (SINGLE, "accept", {"answer": None, "other": "lts"}, Answered(answer="lts")),
        (FIXED, "accept", {"answer": "stable"}, Answered(answer="stable")),
        (
            MULTIPLE,
            "accept",
            {"answers": ["Nightly", "stable"], "other": "lts"},
            AnsweredMultiple(answers=("stable", "Nightly", "lts")),
        ),
        (
            MULTIPLE,
            "accept",
            {"answers": ["beta"], "other": "Beta"},
            AnsweredMultiple(answers=("beta",)),
        ),
        (MULTIPLE, "accept", {"answers": []}, Declined()),
        (MULTIPLE_FIXED, "accept", {}, Declined()),
        (APPROVAL, "accept", {"approved": True}, Approved()),
        (APPROVAL, "accept", {"approved": True, "feedback": " ok "}, Approved(feedback="ok")),
        (APPROVAL, "accept", {"approved": False}, RevisionRequested()),
        (APPROVAL, "accept", {"feedback": "x"}, RevisionRequested(feedback="x")),  # default
        (APPROVAL, "accept", {"approved": None}, RevisionRequested()),
        (
            APPROVAL,
            "accept",
            {"approved": False, "feedback": "smaller"},
            RevisionRequested(feedback="smaller"),
        ),
        (APPROVAL, "accept", {"approved": False, "feedback": " "}, RevisionRequested()),
        (APPROVAL, "decline", None, Declined()),
        (APPROVAL, "cancel", None, Declined()),
        (SINGLE, "decline", {"answer": "beta"}, Declined()),
    ],
)
def test_replies_read_as_the_dialog_walk_reads_them(
    request_: AskUserRequest, action: str, content: dict[str, Any] | None, outcome: AskUserOutcome
) -> None:
    assert read_elicitation(request_, action, content) == outcome


@pytest.mark.parametrize(
    ("request_", "action", "content", "detail"),
    [
        (FREE, "accept", None, "an accepted form carries no content"),
        (FREE, "accept", {}, "'answer' is a required property"),
        (FREE, "accept", {"answer": 3}, "3 is not of type 'string'"),
        (FREE, "accept", {"answer": "x", "extra": 1}, "'extra' was unexpected"),
        (FIXED, "accept", {"answer": "Stable"}, "'Stable' is not one of"),
        (SINGLE, "accept", {"answer": ""}, "'' is not one of"),
        (FIXED, "accept", {"other": "x", "answer": "beta"}, "'other' was unexpected"),
        (FIXED, "accept", {"answer": None}, "'answer' is a required property"),
        (MULTIPLE, "accept", {"answers": ["gamma"]}, "'gamma' is not one of"),
        (MULTIPLE, "accept", {"answers": "beta"}, "'beta' is not of type 'array'"),
        (APPROVAL, "accept", {"approved": "true"}, "'true' is not of type 'boolean'"),
        (APPROVAL, "accept", {"approved": 1}, "1 is not of type 'boolean'"),
        (APPROVAL, "maybe", None, "unknown action 'maybe'"),
    ],
)
def test_malformed_replies_are_refused_with_what_was_wrong(
    request_: AskUserRequest, action: str, content: dict[str, Any] | None, detail: str
) -> None:
    with pytest.raises(InvalidPayloadError) as refused:
        read_elicitation(request_, action, content, interaction_id="int-1")
    assert detail in str(refused.value)
    assert (refused.value.interaction_id, refused.value.reason) == ("int-1", "invalid_elicitation")


CHOICES = st.sampled_from(["stable", "beta", "Nightly", "Beta", " "])
WIRE_VALUES = st.one_of(
    CHOICES,
    st.lists(CHOICES, max_size=4),
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.lists(st.text(max_size=8), max_size=3),
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(REQUESTS),
    st.sampled_from(["accept", "decline", "cancel", "", "ACCEPT"]),
    st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(
                ["answer", "answers", "other", "approved", "feedback", "option_1", "x"]
            ),
            WIRE_VALUES,
            max_size=4,
        ),
    ),
    st.sampled_from([None, "2025-06-18"]),
)
def test_any_reply_is_an_outcome_or_the_documented_error(
    request_: AskUserRequest, action: str, content: dict[str, Any] | None, version: str | None
) -> None:
    try:
        outcome = read_elicitation(request_, action, content, protocol_version=version)
    except InvalidPayloadError:
        return
    if isinstance(request_, ApprovalRequest):
        assert isinstance(outcome, Approved | RevisionRequested | Declined)
    else:
        assert isinstance(outcome, Answered | AnsweredMultiple | Declined)
        if isinstance(outcome, Answered) and not request_.allow_other:
            assert outcome.answer in [o.answer for o in request_.options]


OLD = "2025-06-18"
"""The first MCP version with elicitation: no titled enums, no arrays in a form."""


@pytest.mark.parametrize("request_", REQUESTS)
@pytest.mark.parametrize("version", [OLD, "2025-11-25", "2026-07-28", None])
def test_every_form_is_flat_on_every_version(request_: AskUserRequest, version: str) -> None:
    schema = elicitation_form(request_, protocol_version=version).requested_schema
    for prop in schema["properties"].values():
        PRIMITIVE.validate_python(prop)
        if version == OLD:  # what 2025-06-18 knows: strings, enums with enumNames, booleans
            assert "oneOf" not in prop and "anyOf" not in prop and prop["type"] != "array"


def test_an_old_client_gets_one_of_the_options_as_an_enum_with_enum_names() -> None:
    schema = elicitation_form(FIXED, protocol_version=OLD).requested_schema
    assert schema == {
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "title": "Answer",
                "enum": ["stable", "beta", "Nightly"],
                "enumNames": ["Stable", "Beta", "Nightly"],
                "description": "Stable: every user gets it",
            }
        },
        "required": ["answer"],
    }
    assert read_elicitation(FIXED, "accept", {"answer": "beta"}, protocol_version=OLD) == (
        Answered(answer="beta")
    )


def test_an_old_client_gets_several_of_the_options_as_one_checkbox_each() -> None:
    schema = elicitation_form(MULTIPLE, protocol_version=OLD).requested_schema
    assert schema == {
        "type": "object",
        "properties": {
            "option_1": {
                "type": "boolean",
                "title": "Stable",
                "default": False,
                "description": "every user gets it",
            },
            "option_2": {"type": "boolean", "title": "Beta", "default": False},
            "option_3": {"type": "boolean", "title": "Nightly", "default": False},
            "other": {
                "type": "string",
                "title": "Other",
                "description": "Or type your own answer; when given, it is used instead of a "
                "choice above.",
            },
        },
    }


@pytest.mark.parametrize(
    ("content", "outcome"),
    [
        ({"option_3": True, "option_1": True}, AnsweredMultiple(answers=("stable", "Nightly"))),
        ({"option_2": True, "other": " beta "}, AnsweredMultiple(answers=("beta",))),
        ({"option_2": False, "other": "Canary"}, AnsweredMultiple(answers=("Canary",))),
        ({"option_1": False}, Declined()),
        ({}, Declined()),
    ],
    ids=str,
)
def test_an_old_clients_checkboxes_read_as_the_options_checked(
    content: dict[str, Any], outcome: AskUserOutcome
) -> None:
    assert read_elicitation(MULTIPLE, "accept", content, protocol_version=OLD) == outcome


@pytest.mark.parametrize(
    "content",
    [
        {"answers": ["stable"]},  # the newer form's field: not in the form this client got
        {"option_1": "yes"},
        {"option_4": True},
    ],
    ids=str,
)
def test_an_old_clients_reply_that_does_not_match_its_form_is_refused(
    content: dict[str, Any],
) -> None:
    with pytest.raises(InvalidPayloadError, match="does not match the form"):
        read_elicitation(MULTIPLE, "accept", content, protocol_version=OLD)


def test_options_sharing_a_value_are_one_enum_entry_for_an_old_client() -> None:
    shared = QuestionRequest(
        question="Region?",
        options=normalize_options(
            [{"label": "EU (Paris)", "value": "eu"}, {"label": "EU", "value": "eu"}]
        ),
        allow_other=False,
    )
    answer = elicitation_form(shared, protocol_version=OLD).requested_schema["properties"]["answer"]
    assert (answer["enum"], answer["enumNames"]) == (["eu"], ["EU (Paris)"])


_GATE = ApprovalRequest(
    kind="tool_call",
    title="Run deploy?",
    metadata={
        "tool": "deploy",
        "arguments": {"env": "prod", "replicas": 3},
        "args_schema": {
            "type": "object",
            "properties": {
                "env": {"type": "string", "enum": ["prod", "staging", "canary"]},
                "replicas": {"type": "integer"},
            },
            "required": ["env", "replicas"],
        },
    },
)


def test_a_tool_s_declared_approval_lets_its_flat_arguments_be_edited_in_the_form() -> None:
    form = elicitation_form(_GATE)
    props = form.requested_schema["properties"]
    assert props["arg_env"] == {
        "type": "string", "title": "env", "enum": ["prod", "staging", "canary"], "default": "prod"
    }  # fmt: skip
    assert props["arg_replicas"] == {"type": "integer", "title": "replicas", "default": 3}
    for field in props.values():  # every field is one MCP's flat forms allow
        TypeAdapter(PrimitiveSchemaDefinition).validate_python(field)
    kept = read_elicitation(_GATE, "accept", {"approved": True})
    assert kept == Approved(), "the defaults are the call's own arguments: nothing edited"
    edited = read_elicitation(_GATE, "accept", {"approved": True, "arg_env": "canary"})
    assert edited == Approved(args={"env": "canary", "replicas": 3})
    with pytest.raises(InvalidPayloadError, match="arg_replicas"):
        read_elicitation(_GATE, "accept", {"approved": True, "arg_replicas": "many"})
    assert read_elicitation(_GATE, "accept", {"approved": False, "arg_env": "canary"}) == (
        RevisionRequested()
    ), "an edit goes with an approval only"


def test_arguments_that_are_not_flat_are_approved_or_not_but_not_edited_in_the_form() -> None:
    nested = _GATE.model_copy(update={"metadata": {
        **_GATE.metadata,
        "args_schema": {"type": "object", "properties": {"hosts": {"type": "array"}}},
    }})  # fmt: skip
    assert sorted(elicitation_form(nested).requested_schema["properties"]) == [
        "approved", "feedback"
    ]  # fmt: skip
