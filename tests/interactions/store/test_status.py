"""The run status table, walked pair by pair against the transitions written out here."""

from __future__ import annotations

import pytest

from interactions import IllegalTransitionError
from interactions.store import (
    TERMINAL_STATUSES,
    TRANSITIONS,
    RunStatus,
    check_transition,
    is_terminal,
)

R, P, FIN, F, FR, C = (
    RunStatus.RUNNING,
    RunStatus.PAUSED_WAITING_HUMAN,
    RunStatus.FINISHED,
    RunStatus.FAILED,
    RunStatus.FAILED_RESUMABLE,
    RunStatus.CANCELLED,
)
LEGAL = {(R, P), (R, FIN), (R, F), (R, FR), (R, C), (P, R), (P, C), (P, F), (FR, R), (FR, C)}


def test_status_values_are_the_stored_strings() -> None:
    assert [s.value for s in RunStatus] == [
        "running",
        "paused_waiting_human",
        "finished",
        "failed",
        "failed_resumable",
        "cancelled",
    ]


@pytest.mark.parametrize("old", list(RunStatus), ids=str)
@pytest.mark.parametrize("new", list(RunStatus), ids=str)
def test_every_pair(old: RunStatus, new: RunStatus) -> None:
    if (old, new) in LEGAL:
        check_transition(old, new)
        assert new in TRANSITIONS[old]
        return
    assert new not in TRANSITIONS[old]
    with pytest.raises(IllegalTransitionError) as caught:
        check_transition(old, new, run_id="run-1")
    error = caught.value
    assert (error.run_id, error.reason) == ("run-1", f"{old.value}->{new.value}")
    assert repr(old.value) in str(error) and repr(new.value) in str(error)


def test_terminal_statuses_have_no_way_out() -> None:
    assert {FIN, F, C} == TERMINAL_STATUSES
    assert [s for s in RunStatus if is_terminal(s)] == [FIN, F, C]


def test_the_table_cannot_be_changed_at_run_time() -> None:
    with pytest.raises(TypeError):
        TRANSITIONS[FIN] = frozenset({R})  # type: ignore[index]
