"""The Temporal engine on a real dev server: runs pause, are answered and finish; refusals are
the other engines' typed errors and change nothing; the timer settles expiry; cancels race
answers; failure classes end where the other engines end them."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions import (
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    RunError,
    UnknownInteractionError,
    UnknownRunError,
    UsageError,
)
from interactions.errors import StoreUnavailableError
from interactions.store import RunStatus, open_sqlite_store, utc_now
from recipes.models import ModelError
from recipes.runs import Runner, Surface
from tests.hosts.fake_openai import fake_openai
from tests.recipes.runs.conftest import CUT_SHORT
from tests.recipes.temporal.conftest import (
    RECIPES,
    RELEASE,
    Engine,
    Worker,
    entries,
    open_engine,
)
from tests.recipes.temporal.recipes_for_temporal import LOG_ENV, RELEASE_ENV

pytestmark = pytest.mark.anyio


async def settled(engine: Engine, run_id: str, status: RunStatus, bound: float = 30.0) -> Any:
    """The run once it is in ``status`` (its events are waited on, bounded)."""
    with anyio.fail_after(bound):
        seen = 0
        while True:
            result = await engine.runner.status(run_id)
            if result.status is status:
                return result
            events = await engine.store.wait_for_events(run_id, after_seq=seen, timeout=bound)
            seen = events[-1].seq if events else seen


async def test_a_run_pauses_is_answered_and_finishes(engine: Engine) -> None:
    shown: list[Any] = []
    started = await engine.runner.start(
        RELEASE, "Release v2.0.0", surface=Surface(on_event=shown.append)
    )
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN
    assert [i.id for i in started.interrupts] == ["int-call_channel"]
    assert shown[0].type.value == "RUN_STARTED"
    assert shown[-1].type.value == "RUN_FINISHED"  # the leg's events reached the live sink

    (listed,) = await engine.store.list_runs()
    assert (listed.id, listed.status) == (started.run_id, RunStatus.PAUSED_WAITING_HUMAN)
    same = await engine.store.list_runs(kind="recipe", ref=listed.ref)  # the filters of a list
    assert [r.id for r in same] == [started.run_id]
    assert await engine.store.list_runs(kind="graph") == []
    pending = await engine.store.list_interactions(pending=True)
    assert [(r.run_id, r.id) for r in pending] == [(started.run_id, "int-call_channel")]

    done = await engine.runner.answer(
        started.run_id, "int-call_channel", {"answer": "beta"}, answered_by="ada", resume=True
    )
    assert done.created and done.run is not None
    answered = await engine.store.list_runs(answered_by="ada")
    assert [r.id for r in answered] == [started.run_id]
    assert await engine.store.list_runs(answered_by="bob") == []
    assert [i.id for i in done.run.interrupts] == ["int-call_publish"]
    replay = await engine.runner.answer(started.run_id, "int-call_channel", {"answer": "Beta"})
    assert not replay.created  # the label repeats the stored value

    final = await engine.runner.answer(
        started.run_id, "int-call_publish", {"approved": True}, resume=True
    )
    assert final.run is not None and final.run.status is RunStatus.FINISHED
    assert final.run.text == "Published v2.0.0. Approved."
    types = [e.type for e in await engine.store.list_events(started.run_id)]
    assert types.count("leg_ended") == 3 and types[0] == "run_created"
    record = await engine.store.get_interaction(started.run_id, "int-call_channel")
    assert record.answer is not None and record.answer.via == "test"


async def test_a_run_is_read_with_its_interactions_from_one_query(engine: Engine) -> None:
    started = await engine.runner.start(RELEASE, "Release v2.1.0")
    done = await engine.runner.answer(
        started.run_id, "int-call_channel", {"answer": "beta"}, resume=True
    )
    assert done.run is not None and done.run.status is RunStatus.PAUSED_WAITING_HUMAN
    run, interactions = await engine.store.get_run_with_interactions(started.run_id)
    snapshot = await engine.store.snapshot(started.run_id)  # the workflow's one query
    assert (run, interactions) == (snapshot.run, snapshot.interactions)
    assert run.status is RunStatus.PAUSED_WAITING_HUMAN
    assert [(r.id, r.pending) for r in interactions] == [
        ("int-call_channel", False),
        ("int-call_publish", True),
    ]  # in the order they were asked
    assert interactions[0].answer is not None and interactions[0].answer.payload == {
        "answer": "beta"
    }
    with pytest.raises(UnknownRunError) as unknown:
        await engine.store.get_run_with_interactions("run-nobody")
    assert unknown.value.run_id == "run-nobody"


async def test_64_concurrent_different_answers_one_is_accepted(engine: Engine) -> None:
    run = await engine.runner.start(RELEASE, "Release v3.0.0")
    outcomes: list[str] = []

    async def answer(n: int) -> None:
        try:
            await engine.runner.answer(run.run_id, "int-call_channel", {"answer": f"channel-{n}"})
            outcomes.append(f"channel-{n}")
        except ConflictError as refused:
            assert refused.reason == "already_answered"
            outcomes.append("refused")

    async with anyio.create_task_group() as answers:
        for n in range(64):
            answers.start_soon(answer, n)
    accepted = [o for o in outcomes if o != "refused"]
    assert len(outcomes) == 64 and len(accepted) == 1
    record = await engine.store.get_interaction(run.run_id, "int-call_channel")
    assert record.answer is not None and record.answer.payload == {"answer": accepted[0]}
    answered = [
        e for e in await engine.store.list_events(run.run_id) if e.type == "interaction_answered"
    ]
    assert len(answered) == 1


@pytest.mark.parametrize(
    ("interaction", "payload", "error", "reason"),
    [
        ("int-nope", {"answer": "beta"}, UnknownInteractionError, "unknown_interaction"),
        ("int-call_channel", {"approved": True}, InvalidPayloadError, None),
        ("int-call_channel", {"answer": 7}, InvalidPayloadError, None),
    ],
)
async def test_refused_answers_are_typed_and_change_nothing(
    engine: Engine, interaction: str, payload: Any, error: type[Exception], reason: str | None
) -> None:
    run = await engine.runner.start(RELEASE, "Release v4.0.0")
    before = await engine.store.list_events(run.run_id)
    with pytest.raises(error) as refused:
        await engine.runner.answer(run.run_id, interaction, payload, resume=True)
    assert reason is None or getattr(refused.value, "reason", None) == reason
    assert getattr(refused.value, "run_id", run.run_id) == run.run_id
    assert await engine.store.list_events(run.run_id) == before
    assert (await engine.runner.status(run.run_id)).status is RunStatus.PAUSED_WAITING_HUMAN


async def test_other_refusals_are_the_runners(engine: Engine) -> None:
    run = await engine.runner.start(RELEASE, "Release v5.0.0")
    with pytest.raises(ConflictError) as not_resumable:
        await engine.runner.retry(run.run_id)
    assert not_resumable.value.reason == "not_resumable"
    with pytest.raises(InvalidPayloadError) as open_left:
        await engine.runner.resume_answered(run.run_id)
    assert open_left.value.reason == "incomplete_resume"
    with pytest.raises(UnknownRunError):
        await engine.runner.answer("run-nobody", "int-call_channel", {"answer": "beta"})
    with pytest.raises(UnknownRunError):
        await engine.store.get_run("run-nobody")
    with pytest.raises(UsageError):
        await engine.store.update_run(run.run_id, expected_version=1)


async def test_a_refused_start_writes_no_run(engine: Engine) -> None:
    with pytest.raises(UsageError, match="no agent 'nobody'"):
        await engine.runner.start(RELEASE, "Release", agent="nobody", run_id="run-refused")
    with pytest.raises(UsageError, match="serves the recipe"):
        await engine.runner.start(f"{RECIPES}:slow", "Deploy", run_id="run-elsewhere")
    with pytest.raises(UsageError, match="must not be empty"):
        await engine.runner.start(RELEASE, "  ", run_id="run-empty")
    assert await engine.store.list_runs() == []
    with pytest.raises(UnknownRunError):
        await engine.store.get_run("run-refused")


async def test_expiry_fires_from_the_timer_and_records_expired(
    address: Any, worker: Worker
) -> None:
    async with worker(RELEASE), open_engine(address, {"PI_INTERRUPT_TTL_SECONDS": "1"}) as engine:
        run = await engine.runner.start(RELEASE, "Release v6.0.0")
        assert run.status is RunStatus.PAUSED_WAITING_HUMAN
        final = await settled(engine, run.run_id, RunStatus.FINISHED)
        assert final.text.startswith("Did not publish v6.0.0")
        records = await engine.store.list_interactions(run.run_id)
        settled_as = [(r.id, r.answer.status, r.answer.via) for r in records if r.answer]
        assert settled_as == [
            ("int-call_channel", "expired", "expiry"),
            ("int-call_publish", "expired", "expiry"),
        ]
        with pytest.raises((ExpiredError, ConflictError)):
            await engine.runner.answer(run.run_id, "int-call_publish", {"approved": True})


async def test_a_run_waiting_on_await_answers_shows_what_it_waits_for_and_when_it_expires(
    address: Any, worker: Worker
) -> None:
    author = f"{RECIPES}:async_author"
    async with worker(author), open_engine(address) as engine:
        run = await engine.runner.start(author, "Write it.")
        asked = f"{run.run_id}_author_async_1"
        assert run.status is RunStatus.PAUSED_WAITING_HUMAN
        assert [i.id for i in run.interrupts] == [asked]
        # read back (`runs show`, the web API): the question the await waits for, as on start
        assert [i.id for i in (await engine.runner.status(run.run_id)).interrupts] == [asked]
        # the run's timer is set at that question's expiry (PiNextExpiry, what listings read)
        record = await engine.store.get_interaction(run.run_id, asked)
        described = await engine.store.client.get_workflow_handle(run.run_id).describe()
        assert described.search_attributes.get("PiNextExpiry") == [record.expires_at]


async def test_an_async_question_of_a_running_run_is_listed_as_pending(
    address: Any, worker: Worker, tmp_path: Path
) -> None:
    """What ``runs pending``, the web page and Slack list: every open question, as on the
    other engines, not only those of paused runs."""
    recipe, release = f"{RECIPES}:async_then_work", tmp_path / "release"
    async with (
        worker(recipe, env={RELEASE_ENV: str(release)}),
        open_engine(address) as engine,
        anyio.create_task_group() as tg,
    ):
        started: list[Any] = []

        async def start() -> None:
            started.append(await engine.runner.start(recipe, "Write it."))

        tg.start_soon(start)
        with anyio.fail_after(20):
            for _ in range(200):
                if pending := await engine.store.list_interactions(pending=True):
                    break
                await anyio.sleep(0.1)
        (asked,) = pending
        assert asked.id.endswith("_author_async_1") and asked.kind == "async"
        assert (await engine.runner.status(asked.run_id)).status is RunStatus.RUNNING
        described = await engine.store.client.get_workflow_handle(asked.run_id).describe()
        assert described.search_attributes.get("PiOpenInteractions") == [asked.id]
        release.touch()
    (done,) = started
    assert done.status is RunStatus.FINISHED  # its question closed with it
    assert await engine.store.list_interactions(pending=True) == []
    described = await engine.store.client.get_workflow_handle(done.run_id).describe()
    assert "PiOpenInteractions" not in described.search_attributes


async def test_a_paused_run_answered_earlier_is_replayed_by_a_new_worker_after_expiry(
    address: Any, worker: Worker
) -> None:
    env = {"PI_INTERRUPT_TTL_SECONDS": "2"}
    async with worker(RELEASE), open_engine(address, env) as engine:
        run = await engine.runner.start(RELEASE, "Release v6.1.0")
        done = await engine.runner.answer(
            run.run_id, "int-call_channel", {"answer": "beta"}, resume=True
        )
        assert done.run is not None and done.run.status is RunStatus.PAUSED_WAITING_HUMAN
        asked = await engine.store.get_interaction(run.run_id, "int-call_publish")
    # the worker is gone while both questions' times pass
    await anyio.sleep((asked.expires_at - utc_now()).total_seconds() + 0.5)
    async with worker(RELEASE), open_engine(address, env) as engine:
        final = await settled(engine, run.run_id, RunStatus.FINISHED, bound=15.0)
        assert final.text.startswith("Did not publish v6.1.0")


async def test_cancel_racing_an_answer_one_wins(engine: Engine) -> None:
    for attempt in range(4):
        run = await engine.runner.start(RELEASE, f"Release v7.{attempt}.0")
        answered: list[BaseException | str] = []

        async def answer(run_id: str, answered: list[BaseException | str]) -> None:
            try:
                await engine.runner.answer(
                    run_id, "int-call_channel", {"answer": "beta"}, resume=True
                )
                answered.append("stored")
            except ConflictError as refused:
                answered.append(refused)

        async with anyio.create_task_group() as race:
            race.start_soon(answer, run.run_id, answered)
            race.start_soon(engine.runner.cancel, run.run_id)
        final = await engine.runner.status(run.run_id)
        assert final.status is RunStatus.CANCELLED
        record = await engine.store.get_interaction(run.run_id, "int-call_channel")
        assert record.answer is not None
        if record.answer.status == "cancelled":  # the cancel won: the answer was refused
            assert isinstance(answered[0], ConflictError)
            assert answered[0].reason in ("run_cancelled", "already_answered")
        else:  # the answer won; the cancel came after (or cut its leg short)
            assert record.answer.payload == {"answer": "beta"}


async def test_a_tool_that_raises_is_a_result_the_model_reads(address: Any, worker: Worker) -> None:
    async with worker(f"{RECIPES}:failing"), open_engine(address) as engine:
        run = await engine.runner.start(f"{RECIPES}:failing", "Try")
        assert [i.id for i in run.interrupts] == ["int-call_ask"]
        done = await engine.runner.answer(
            run.run_id, "int-call_ask", {"answer": "red"}, resume=True
        )
        assert done.run is not None and done.run.status is RunStatus.FINISHED
        assert done.run.text == "Done: x is on fire | Answer: red"


async def test_a_finished_run_read_back_says_its_answer_was_cut_short(
    address: Any, worker: Worker
) -> None:
    async with worker(CUT_SHORT), open_engine(address) as engine:
        paused = await engine.runner.start(CUT_SHORT, "Write the report")
        assert paused.status is RunStatus.PAUSED_WAITING_HUMAN and paused.warning is None
        done = await engine.runner.answer(paused.run_id, "int-w1", {"approved": True}, resume=True)
        assert done.run is not None and done.run.status is RunStatus.FINISHED
        assert done.run.warning is not None and "output limit (max_tokens)" in done.run.warning
        # what `runs show`, the web API's run detail and a replayed resume read, any process
        assert (await engine.runner.status(paused.run_id)).warning == done.run.warning
        replay = await engine.runner.resume_answered(paused.run_id)  # the workflow has ended
        assert replay.warning == done.run.warning


async def test_auth_failures_are_not_retried(address: Any, worker: Worker, tmp_path: Any) -> None:
    with fake_openai([401, 401, 401]) as fake:
        env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test-not-real"}
        async with worker(f"{RECIPES}:openai", env=env), open_engine(address) as engine:
            with pytest.raises(ModelError) as failed:
                await engine.runner.start(f"{RECIPES}:openai", "Hello", run_id="run-auth")
            assert failed.value.error_class == "auth"
            assert len(fake.requests) == 1
            assert (await engine.runner.status("run-auth")).status is RunStatus.FAILED


async def test_outages_are_retried_then_failed_resumable_then_retried(
    address: Any, worker: Worker
) -> None:
    from datetime import timedelta

    from temporalio.common import RetryPolicy

    quick = RetryPolicy(initial_interval=timedelta(milliseconds=100), maximum_attempts=2)
    with fake_openai([503] * 6 + ["Back again."]) as fake:
        env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test-not-real"}
        async with (
            worker(f"{RECIPES}:openai", env=env, model_retry=quick),
            open_engine(address) as engine,
        ):
            with pytest.raises(ModelError) as failed:
                await engine.runner.start(f"{RECIPES}:openai", "Hello", run_id="run-outage")
            assert failed.value.error_class == "transient_exhausted"
            assert failed.value.hint == "retry it with: pi-recipes runs retry run-outage"
            assert len(fake.requests) == 6  # 2 activity attempts of 3 provider tries each
            status = await engine.runner.status("run-outage")
            assert status.status is RunStatus.FAILED_RESUMABLE
            retried = await engine.runner.retry("run-outage")
            assert (retried.status, retried.text) == (RunStatus.FINISHED, "Back again.")


@pytest.mark.parametrize(
    ("recipe", "calls"),
    [("short_script", ["model-1"]), ("broken_model", ["model-call"])],
)
async def test_a_model_failure_of_no_provider_fails_the_run_at_once_as_on_sqlite(
    address: Any,
    worker: Worker,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    recipe: str,
    calls: list[str],
) -> None:
    """A scripted model out of turns (``ScriptExhausted``, a ``RunError``), a custom model's
    plain exception: not retried (they were, for about 14 s, then came back as a ``RunError``
    reason ``engine`` saying 'the model call failed on the workers'); the run records them as
    the SQLite engine does."""
    ref = f"{RECIPES}:{recipe}"
    async with await open_sqlite_store(tmp_path / "state.db") as sqlite:
        with pytest.raises(Exception) as on_sqlite:
            await Runner(sqlite, env={}).start(ref, "Deploy prod", run_id="run-sqlite")
        expected = await sqlite.get_run("run-sqlite")
        expected_codes = [e.data["code"] for e in await sqlite.list_events("run-sqlite")
                          if e.type == "leg_ended"]  # fmt: skip
    log = tmp_path / "calls.log"
    monkeypatch.setenv(LOG_ENV, str(log))  # the models note their calls (in this process)
    run_id = f"run-model-{recipe}"
    async with worker(ref), open_engine(address) as engine:
        began = time.monotonic()
        with pytest.raises(RunError) as on_temporal:
            await engine.runner.start(ref, "Deploy prod", run_id=run_id)
        took = time.monotonic() - began
        run = await engine.store.get_run(run_id)
        codes = [e.data["code"] for e in await engine.store.list_events(run_id)
                 if e.type == "leg_ended"]  # fmt: skip
    failure = on_sqlite.value
    assert took < 5, f"the failing call was retried for {took:.1f} s"
    assert (run.status, run.error) == (expected.status, expected.error)
    assert run.error == f"{type(failure).__name__}: {failure}"  # 'KeyError: 'choices''
    assert codes == expected_codes == [getattr(failure, "reason", None) or type(failure).__name__]
    if isinstance(failure, RunError):  # ScriptExhausted: the same error, class and fields
        assert type(on_temporal.value) is type(failure)
        assert (str(on_temporal.value), on_temporal.value.reason) == (str(failure), failure.reason)
    else:  # a class only the worker knows: a RunError naming it
        assert str(on_temporal.value) == run.error
    assert [what for what, _ in entries(log)] == calls  # broken_model's call: once, no retry


async def test_no_worker_is_a_clear_unavailable_error(address: Any, worker: Worker) -> None:
    async with worker(RELEASE), open_engine(address) as engine:
        run = await engine.runner.start(RELEASE, "Release v8.0.0")
    async with open_engine(address, query_timeout=1.0, accept_timeout=1.0) as engine:
        with pytest.raises(StoreUnavailableError, match="start one: pi-recipes worker"):
            await engine.runner.status(run.run_id)
        with pytest.raises(StoreUnavailableError, match="no worker answered"):
            await engine.runner.answer(run.run_id, "int-call_channel", {"answer": "beta"})


async def test_a_caller_cancelled_while_no_worker_answers_is_cancelled(
    address: Any, worker: Worker
) -> None:
    """Before, the cancelled RPC came back as 'no worker answered' (``StoreUnavailableError``)
    out of the caller's cancelled scope: the cancellation was swallowed."""
    async with worker(RELEASE), open_engine(address) as engine:
        run = await engine.runner.start(RELEASE, "Release v8.0.1")
    async with open_engine(address, query_timeout=30, accept_timeout=30) as engine:  # no worker
        began = time.monotonic()
        with anyio.move_on_after(1) as scope:
            await engine.runner.answer(run.run_id, "int-call_channel", {"answer": "beta"})
        assert scope.cancelled_caught
        assert time.monotonic() - began < 10


async def test_the_store_wide_feed_follows_every_run(engine: Engine) -> None:
    cursor = await engine.store.latest_cursor()
    seen: list[tuple[str, int, str]] = []
    async with engine.store.watch(after=cursor) as feed:
        first = await engine.runner.start(RELEASE, "Release v9.0.0")
        second = await engine.runner.start(RELEASE, "Release v9.1.0")
        await engine.runner.answer(first.run_id, "int-call_channel", {"answer": "beta"})
        wanted = {(first.run_id, "interaction_answered"), (second.run_id, "leg_ended")}
        with anyio.fail_after(30):
            async for event in feed:
                assert event.cursor > cursor
                seen.append((event.run_id, event.seq, event.type))
                if wanted <= {(run_id, kind) for run_id, _, kind in seen}:
                    break
    for run in (first.run_id, second.run_id):
        mine = [(seq, kind) for run_id, seq, kind in seen if run_id == run]
        assert [seq for seq, _ in mine] == list(range(1, len(mine) + 1))  # never twice, no gap
        assert [kind for _, kind in mine][:3] == [
            "run_created",
            "interaction_requested",
            "leg_ended",
        ]


_CHANGING = '''
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ScriptedModel


def recipe(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def TOOL(tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Do it."""
        return "done"

    api.register_agent("changing", "Do it.")
    call = ToolCall(id="call_1", name="TOOL")
    api.set_demo_model(ScriptedModel([AssistantMessage(tool_calls=[call]), "Done."], label="c"))
'''


async def test_a_run_its_worker_cannot_replay_is_left_out_of_listings(
    address: Any, worker: Worker, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    recipe = tmp_path / "changing.py"
    recipe.write_text(_CHANGING.replace("TOOL", "step"))
    async with worker(str(recipe)), open_engine(address) as engine:
        first = await engine.runner.start(str(recipe), "Do it", run_id="run-old")
        assert first.status is RunStatus.FINISHED
    recipe.write_text(_CHANGING.replace("TOOL", "renamed"))  # the recipe changed under it
    async with worker(str(recipe)), open_engine(address) as engine:
        second = await engine.runner.start(str(recipe), "Do it", run_id="run-new")
    async with worker(str(recipe), max_cached_workflows=0), open_engine(address) as engine:
        with pytest.raises(RunError, match="query failed on the worker"):
            await engine.store.get_run("run-old")  # reading it still says why it cannot
        with caplog.at_level(logging.WARNING, logger="recipes.temporal"):
            listed = [run.id for run in await engine.store.list_runs()]
            followed: set[str] = set()
            with anyio.fail_after(20):  # the feed a host follows goes on past it too
                async with engine.store.watch(after=0) as feed:
                    async for event in feed:
                        followed.add(event.run_id)
                        if event.type == "leg_ended":
                            break
    assert followed == {"run-new"}
    assert second.status is RunStatus.FINISHED
    assert listed == ["run-new"], "one run that cannot be read does not hide the others"
    assert "run run-old is left out" in caplog.text
