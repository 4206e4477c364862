"""Which questions a person can answer: every question asked of a person that has no answer
yet; never the run's own ``await`` wait, which the runner refuses to take an answer for."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from hosts._kit import Person, answerable, asks_a_person, is_answerable
from interactions import ConflictError, ExpiredError
from interactions.async_questions import ASYNC_KIND, AWAIT_KIND
from interactions.store import MemoryStore, utc_now
from recipes.runs import Runner

pytestmark = pytest.mark.anyio

RECIPES = Path(__file__).with_name("kit_recipes.py")


async def test_a_question_without_an_answer_is_answerable_and_the_await_wait_never() -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="kit")
        paused = await runner.start(f"{RECIPES}:asker", "Name it")
        records = await store.list_interactions(paused.run_id)
        assert [r.kind for r in records] == [ASYNC_KIND, AWAIT_KIND]
        question, wait = records
        assert [r.id for r in answerable(records)] == [question.id]
        assert (asks_a_person(question), asks_a_person(wait)) == (True, False)
        with pytest.raises(ConflictError) as refused:  # what the rule stands for
            await runner.answer(paused.run_id, wait.id, {"answer": "go"})
        assert refused.value.reason == "await"
        await runner.answer(paused.run_id, question.id, {"answer": "Bolt"})
        answered = await store.list_interactions(paused.run_id)
        assert answerable(answered) == []
        assert asks_a_person(answered[0]), "answered, it is still a question for a person"


async def test_the_order_is_kept_across_runs() -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="kit")
        first = await runner.start(f"{RECIPES}:asks", "one")
        second = await runner.start(f"{RECIPES}:asker", "two")
        third = await runner.start(f"{RECIPES}:asks", "three")
        listed = answerable(await store.list_interactions(pending=True))
        assert [r.run_id for r in listed] == [first.run_id, second.run_id, third.run_id]


async def test_a_question_past_its_expiry_is_listed_until_the_sweep_settles_it() -> None:
    """The run still waits on it; an answer is refused as expired meanwhile."""
    long_ago = utc_now() - timedelta(days=30)
    async with MemoryStore() as store:
        asked_then = Runner(store, env={}, host="kit", clock=lambda: long_ago)
        paused = await asked_then.start(f"{RECIPES}:asks", "late")
        [record] = answerable(await store.list_interactions(paused.run_id))
        runner = Runner(store, env={}, host="kit")
        with pytest.raises(ExpiredError):
            await runner.answer(paused.run_id, record.id, {"answer": "Mon"})
        assert answerable(await store.list_interactions(paused.run_id)) == [record]
        await runner.expire_due(resume=False)
        assert answerable(await store.list_interactions(paused.run_id)) == []


async def test_a_person_can_answer_what_anyone_can_today() -> None:
    """Approvers are not named yet: whoever the host established sees every open question."""
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="kit")
        await runner.start(f"{RECIPES}:asker", "Name it")
        await runner.start(f"{RECIPES}:asks", "Pick")
        records = await store.list_interactions()
        alice = Person("alice")
        assert answerable(records, alice) == answerable(records) != []
        assert [is_answerable(r, alice) for r in records] == [is_answerable(r) for r in records]
