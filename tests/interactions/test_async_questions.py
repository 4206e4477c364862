"""The async questions' contract, pure: ids, the texts the model reads, what a pause waits on,
and settling an await."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from interactions import (
    AskUserInterrupt,
    InvalidPayloadError,
    UsageError,
    auto_resolve_interactions,
)
from interactions.async_questions import (
    ALL_ANSWERED_HEADER,
    answer_message,
    answered_at_once,
    async_interaction,
    async_interaction_id,
    await_interrupt,
    collected_text,
    open_for_pause,
    pending_async,
    settle_awaits,
    waited_for,
)
from interactions.store import InteractionAnswer, InteractionRecord, NewInteraction

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def stored(new: NewInteraction, answer: InteractionAnswer | None = None) -> InteractionRecord:
    return InteractionRecord(
        id=new.id, run_id="r", node_id=new.node_id, tool_call_id=new.tool_call_id,
        kind=new.kind, requested_at=NOW, expires_at=new.expires_at, descriptor=new.descriptor,
        answer=answer, answered_at=NOW if answer else None,
    )  # fmt: skip


def asked(n: int, question: str = "Name?", answer: str | None = None) -> InteractionRecord:
    new = async_interaction(f"r_draft_async_{n}", question, node_id="draft",
                            expires_at=NOW + timedelta(days=1))  # fmt: skip
    given = InteractionAnswer(status="resolved", payload={"answer": answer}) if answer else None
    return stored(new, given)


def test_ids_count_on_from_the_highest_of_the_run_and_node() -> None:
    assert async_interaction_id("r", "draft", []) == "r_draft_async_1"
    taken = ["r_draft_async_1", "r_draft_async_7", "r_other_async_9", "q_draft_async_20", "x"]
    assert async_interaction_id("r", "draft", taken) == "r_draft_async_8"


def test_the_texts_the_model_reads() -> None:
    name, tone = asked(1, "Name?", "Pipette"), asked(2, "Tone?", "friendly")
    assert answer_message(name) == '[Answer to question r_draft_async_1] Q: "Name?" — A: Pipette'
    assert collected_text([name, tone]) == (
        f"{ALL_ANSWERED_HEADER}\n- [r_draft_async_1] Q: Name? — A: Pipette\n"
        "- [r_draft_async_2] Q: Tone? — A: friendly"
    )
    declined = stored(async_interaction("r_d_async_1", "Q?", expires_at=NOW),
                      InteractionAnswer(status="cancelled"))  # fmt: skip
    assert answer_message(declined).endswith("— A: (no answer: the operator declined)")


def test_a_question_is_a_question_with_options_fixed_unless_free_text_is_allowed() -> None:
    fixed = async_interaction("i", "Tone?", options=["a", "b"], expires_at=NOW)
    assert fixed.kind == "async" and fixed.descriptor["allowOther"] is False
    free = async_interaction("i", "Tone?", options=["a"], allow_free_text=True, expires_at=NOW)
    assert "allowOther" not in free.descriptor  # the default: anything goes
    with pytest.raises(UsageError):
        async_interaction("i", "  ", expires_at=NOW)


def test_a_question_without_options_that_refuses_free_text_is_refused() -> None:
    with pytest.raises(UsageError, match="allow_free_text=false needs options"):
        async_interaction("i", "Tone?", allow_free_text=False, expires_at=NOW)
    free = async_interaction("i", "Tone?", allow_free_text=None, expires_at=NOW)
    assert "allowOther" not in free.descriptor


def test_a_pause_waits_on_what_its_await_lists_and_is_settled_once_all_are_answered() -> None:
    name, tone = asked(1), asked(2)
    wait = stored(NewInteraction.of(await_interrupt("int-w", "w", [name, tone], NOW), kind="await"))
    records = [name, tone, wait]
    assert [r.id for r in open_for_pause(records)] == [name.id, tone.id]
    assert [r.id for r in pending_async(records)] == [name.id, tone.id]
    one = {name.id: InteractionAnswer(status="resolved", payload={"answer": "Pipette"})}
    with pytest.raises(InvalidPayloadError) as refused:
        settle_awaits(records, one)
    assert refused.value.reason == "incomplete_resume" and tone.id in str(refused.value)
    both = {**one, tone.id: InteractionAnswer(status="resolved", payload={"answer": "formal"})}
    [(wait_id, settled)] = settle_awaits(records, both, via="cli").items()
    assert wait_id == "int-w" and settled.answered_by == "system" and settled.via == "cli"
    assert settled.payload == {"answer": f"{ALL_ANSWERED_HEADER}\n- [r_draft_async_1] Q: Name? "
                               "— A: Pipette\n- [r_draft_async_2] Q: Name? — A: formal"}


def test_where_nobody_is_asked_a_question_is_declined_at_once() -> None:
    assert answered_at_once({}) is None
    assert answered_at_once({"PI_ASK_USER_AUTO_APPROVE": "false"}) is None
    ci = answered_at_once({"PI_ASK_USER_AUTO_APPROVE": "1"})
    assert ci is not None and ci.status == "cancelled" and ci.via == "auto-approve"
    with auto_resolve_interactions():
        scoped = answered_at_once({})
    assert scoped is not None and scoped.via == "auto-resolve"


def test_what_a_pause_waits_for_is_decided_once_for_every_run_kind() -> None:
    """The recipe runner and the graph engine both show a pause's questions through
    waited_for: what was left open before, then the pause's own questions, an await standing
    for the async questions it lists."""
    expires = NOW + timedelta(days=1)
    parked = AskUserInterrupt(id="int-b.1", reason="input_required", message="Which?",
                              expires_at=expires.isoformat())  # fmt: skip
    posted, other = asked(1, "Name?"), asked(2, "City?")
    wait = await_interrupt("int-call_w", "call_w", [posted], expires)
    ask = AskUserInterrupt(id="int-c.1", reason="input_required", message="Go?",
                           expires_at=expires.isoformat())  # fmt: skip
    shown = waited_for([wait, ask], [stored(NewInteraction.of(parked)), posted, other])
    assert [i.id for i in shown] == ["int-b.1", "r_draft_async_1", "int-c.1"]
    assert waited_for([ask], []) == [ask]  # nothing open from before, no wait
