"""What a stored event means for a person: the kit's reader turns a run's real events into
typed news (a run created, a question opened, voted on or closed, a status changed, a leg's
text), and nothing for what a person is not shown (the run's own await wait, a host's own
events)."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import (
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallStartEvent,
)

from hosts._kit import (
    LegEnded,
    News,
    QuestionClosed,
    QuestionOpened,
    QuestionVoted,
    Reader,
    RunCreated,
    StatusChanged,
    Tally,
    tally_of,
)
from interactions.errors import StoreUnavailableError
from interactions.people import Identity
from interactions.store import (
    EventRecord,
    InteractionRecord,
    MemoryStore,
    RunRecord,
    RunStatus,
    Store,
    open_sqlite_store,
    utc_now,
)
from interactions.testing.store_conformance import new_run
from recipes.runs import Claim, Runner, RunResult, RunView, Surface
from recipes.runs.agui import LEG_ENDED
from recipes.runs.drivers import register_driver

pytestmark = pytest.mark.anyio

RECIPES = Path(__file__).with_name("kit_recipes.py")
QUORUM = str(Path(__file__).parents[2] / "recipes" / "runs" / "quorum_recipe.py")


async def _read_all(reader: Reader, store: Store, run_id: str, after: int = 0) -> list[Any]:
    """What each event of ``run_id`` after ``after`` means, as (event type, news) pairs."""
    return [(e.type, await reader.read(e)) for e in await store.list_events(run_id, after)]


def _shape(news: News | None) -> tuple[Any, ...] | None:
    """The part of ``news`` a test compares (ids, statuses, texts)."""
    match news:
        case None:
            return None
        case RunCreated(run=run):
            return ("created", run.id, run.kind)
        case QuestionOpened(record=record):
            return ("opened", record.id, record.answer is None)
        case QuestionClosed(record=record):
            assert record.answer is not None
            return ("closed", record.id, record.answer.status, record.answer.payload)
        case StatusChanged():
            return ("status", news.kind, news.from_, news.to, news.error, news.warning)
        case LegEnded():
            return ("leg", tuple(news.texts()))
        case QuestionVoted(record=record):
            return ("voted", record.id, news.voter, news.tally.approvals)


async def test_a_runs_events_read_as_what_a_person_is_shown() -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="kit")
        paused = await runner.start(f"{RECIPES}:asker", "Name it")
        run_id = paused.run_id
        question = f"{run_id}_asker_async_1"
        reader = Reader(store, runner.view)
        read = await _read_all(reader, store, run_id)
        assert [(kind, _shape(news)) for kind, news in read] == [
            ("run_created", ("created", run_id, "recipe")),
            ("interaction_requested", ("opened", question, True)),
            ("human_input_requested", None),
            ("interaction_requested", None),  # the run's own await wait: no one answers it
            ("leg_ended", ("leg", ("Asking while I work.",))),
            ("run_status_changed", ("status", "recipe", RunStatus.RUNNING,
                                    RunStatus.PAUSED_WAITING_HUMAN, None, None)),
        ]  # fmt: skip
        assert all(news is None or news.run_id == run_id for _, news in read)
        seen = len(read)
        await runner.answer(run_id, question, {"answer": "Bolt"}, answered_by="ann", resume=True)
        later = await _read_all(reader, store, run_id, after=seen)
        shapes = [_shape(news) for _, news in later if news is not None]
        answers = f"All posted questions are answered:\n- [{question}] Q: Which name? — A: Bolt"
        assert shapes == [
            ("closed", question, "resolved", {"answer": "Bolt"}),  # the await's close: nothing
            ("status", "recipe", RunStatus.PAUSED_WAITING_HUMAN, RunStatus.RUNNING, None, None),
            ("leg", (f"The tool said: {answers}",)),
            ("status", "recipe", RunStatus.RUNNING, RunStatus.FINISHED, None, None),
        ]
        [closed] = [news for _, news in later if isinstance(news, QuestionClosed)]
        assert closed.record.answer is not None and closed.record.answer.answered_by == "ann"


async def test_a_question_answered_before_its_event_is_read_opens_answered() -> None:
    """The surface shows it closed at once (a page's card, a Slack card drawn answered)."""
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="kit")
        paused = await runner.start(f"{RECIPES}:asks", "Pick")
        await runner.answer(paused.run_id, "int-c1", {"answer": "Tue"})
        reader = Reader(store)
        opened = [n for _, n in await _read_all(reader, store, paused.run_id)
                  if isinstance(n, QuestionOpened)]  # fmt: skip
        assert [_shape(n) for n in opened] == [("opened", "int-c1", False)]


async def test_a_finished_runs_warning_is_read_with_the_drivers_view() -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="kit")
        done = await runner.start(f"{RECIPES}:cut_short", "Write the report")
        assert done.status is RunStatus.FINISHED
        [event] = [e for e in await store.list_events(done.run_id)
                   if e.type == "run_status_changed"]  # fmt: skip
        with_view = await Reader(store, runner.view).read(event)
        assert isinstance(with_view, StatusChanged) and with_view.warning is not None
        assert with_view.warning.startswith("The model's last answer stopped at the model's output")
        without = await Reader(store).read(event)
        assert isinstance(without, StatusChanged) and without.warning is None


def test_a_legs_texts_are_its_messages_whole_in_order() -> None:
    ended = EventRecord(run_id="run-1", seq=3, type=LEG_ENDED, data={}, at=utc_now())
    events = (
        TextMessageStartEvent(message_id="m1", role="assistant"),
        TextMessageContentEvent(message_id="m1", delta="Hello, "),
        ToolCallStartEvent(tool_call_id="t1", tool_call_name="look"),
        TextMessageContentEvent(message_id="m1", delta="world."),
        TextMessageEndEvent(message_id="m1"),
        TextMessageStartEvent(message_id="m2", role="assistant"),
        TextMessageEndEvent(message_id="m2"),
        TextMessageStartEvent(message_id="m3", role="assistant"),
        TextMessageContentEvent(message_id="m3", delta="Bye."),
        TextMessageEndEvent(message_id="m3"),
    )
    leg = LegEnded(ended, events)
    assert leg.texts() == ["Hello, world.", "", "Bye."]
    assert leg.run_id == "run-1"


class _Unshowable:
    """A run driver (the public extension point) whose leg record reader has a bug."""

    async def prepare(self, runner: Runner, run: RunRecord) -> None:
        return None

    async def proceed(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        raise NotImplementedError

    async def retry(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        raise NotImplementedError

    def view(self, run: RunRecord) -> RunView:
        return RunView()

    def leg_events(
        self, run: RunRecord, leg: EventRecord, interactions: dict[str, InteractionRecord]
    ) -> list[Any]:
        raise TypeError("this driver's leg record reader has a bug")


async def test_an_event_that_cannot_be_read_is_nothing_to_show_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    register_driver("kit-unshowable", _Unshowable())
    async with MemoryStore() as store:
        bad = await store.create_run(new_run(kind="kit-unshowable"))
        [leg] = await store.append_events(bad.id, [(LEG_ENDED, {"run": "leg-1"})])
        [gone] = await store.append_events(bad.id, [("interaction_requested",
                                                     {"interaction_id": "int-none"})])  # fmt: skip
        reader = Reader(store)
        assert await reader.read(leg) is None
        assert await reader.read(gone) is None
    skipped = [r for r in caplog.records if r.getMessage().startswith("skipped store event")]
    assert [(r.levelno, r.getMessage().split(":")[0]) for r in skipped] == [
        (logging.ERROR, f"skipped store event leg_ended of {bad.id}"),  # a bug: with its trace
        (logging.WARNING, f"skipped store event interaction_requested of {bad.id}"),
    ]


async def test_a_store_away_is_raised_so_the_event_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with await open_sqlite_store(path) as store:
        runner = Runner(store, env={}, host="kit")
        paused = await runner.start(f"{RECIPES}:asks", "Pick")
        [asked] = [e for e in await store.list_events(paused.run_id)
                   if e.type == "interaction_requested"]  # fmt: skip
        reader = Reader(store)
        with closing(sqlite3.connect(path)) as other, other:
            other.execute("ALTER TABLE interactions RENAME TO interactions_away")
        with pytest.raises(StoreUnavailableError):
            await reader.read(asked)
        with closing(sqlite3.connect(path)) as other, other:
            other.execute("ALTER TABLE interactions_away RENAME TO interactions")
        assert _shape(await reader.read(asked)) == ("opened", "int-c1", True)


async def test_a_vote_reads_as_the_tally_so_far_and_the_settling_vote_then_closes(
    tmp_path: Path,
) -> None:
    """An approval two must give: each ``interaction_voted`` reads as :class:`QuestionVoted`
    (who voted, the approvals so far of two); the second vote's is followed by its close. A
    question one answer settles has no tally (no votes read)."""
    async with MemoryStore() as store:
        runner = Runner(store, cwd=tmp_path, env={}, host="kit")
        paused = await runner.start(QUORUM, "release it")
        run_id, (gate,) = paused.run_id, paused.interrupts
        reader = Reader(store)
        seen = len(await store.list_events(run_id))
        for name in ("ada", "grace"):
            voter = Identity(name, frozenset({"release"}))
            await runner.answer(run_id, gate.id, {"approved": True}, answered_by=voter)
        read = [n for _, n in await _read_all(reader, store, run_id, after=seen) if n is not None]
        voted = [(n.voter, n.approved, n.tally) for n in read if isinstance(n, QuestionVoted)]
        both = Tally(("ada", "grace"), 2)  # each vote read as the store stands when read
        assert voted == [("ada", True, both), ("grace", True, both)]
        assert Tally(("ada",), 2).line() == "1 of 2 approvals: ada"
        assert Tally((), 2).line() == "0 of 2 approvals"
        [closed] = [n for n in read if isinstance(n, QuestionClosed)]
        assert closed.record.answer is not None and closed.record.answer.answered_by == "ada, grace"
        assert read.index(closed) > max(read.index(n) for n in read if isinstance(n, QuestionVoted))

        single = await runner.start(f"{RECIPES}:asks", "Pick")
        [record] = await store.list_interactions(single.run_id)
        assert await tally_of(store, record) is None
