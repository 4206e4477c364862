"""What a store remembers of the runs it wrote, to decide their next update without reading
first (see ``test_postgres_last_written`` for the store that uses it): the latest version of
each, within bounds on runs and on checkpoint size, and nothing of an ended run."""

from __future__ import annotations

from interactions.store import NewRun, RunRecord, RunStatus, canonical_json
from interactions.store._last_written import LastWritten
from interactions.store._records import utc_now
from interactions.store._rules import new_run_record


def _run(run_id: str, version: int = 1, **fields: object) -> RunRecord:
    new = NewRun(id=run_id, thread_id="t", ref="r", checkpoint={"note": "x" * 10})
    run, _ = new_run_record(new, utc_now())
    return run.model_copy(update={"version": version, **fields})


def test_the_latest_version_of_a_run_is_kept() -> None:
    kept = LastWritten()
    kept.keep(_run("a", 3), [], size=None)
    kept.keep(_run("a", 2), [], size=None)  # a write that finished later but was older
    assert kept.at("a", 2) is None
    written = kept.at("a", 3)
    assert written is not None and written.size == len(canonical_json({"note": "x" * 10}))


def test_an_ended_run_is_forgotten() -> None:
    kept = LastWritten()
    kept.keep(_run("a", 1), [], size=None)
    kept.keep(_run("a", 2, status=RunStatus.FINISHED), [], size=None)
    assert kept.at("a", 1) is None and kept.at("a", 2) is None


def test_the_least_recently_written_runs_go_first() -> None:
    kept = LastWritten(runs=2)
    for run_id in ("a", "b", "c"):
        kept.keep(_run(run_id), [], size=None)
    assert [kept.at(r, 1) is not None for r in ("a", "b", "c")] == [False, True, True]


def test_checkpoints_are_kept_within_their_bound() -> None:
    kept = LastWritten(checkpoint_bytes=100)
    kept.keep(_run("a"), [], size=60)
    kept.keep(_run("b"), [], size=30)
    kept.keep(_run("c"), [], size=30)  # 120 in all: the oldest goes
    assert [kept.at(r, 1) is not None for r in ("a", "b", "c")] == [False, True, True]
    kept.keep(_run("huge"), [], size=101)  # larger than the bound alone: never kept
    assert kept.at("huge", 1) is None
    assert [kept.at(r, 1) is not None for r in ("b", "c")] == [True, True]
    kept.keep(_run("b", 2), [], size=40)  # b's new checkpoint replaces its old one's count
    kept.keep(_run("d"), [], size=30)
    assert [kept.at(r, v) is not None for r, v in (("b", 2), ("c", 1), ("d", 1))] == [
        True,
        True,
        True,
    ]
