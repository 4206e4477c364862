"""Several approvers: an approval that needs two release managers (``required_approvals=2``)
stays open until two distinct allowed people approve; one decline or revision request
settles it at once; each vote is stored once per person; the model reads one result naming
the approvers. Through the runner's answer and resume, on every store."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from ag_ui.core import ResumeEntry

from interactions import ConflictError, InvalidPayloadError, NotAllowedError
from interactions.people import REQUIRED_APPROVALS, Identity
from interactions.store import RunStatus, Store, VoteStore
from interactions.testing.store_conformance import store_snapshot
from recipes.runs import Runner

QUORUM = str(Path(__file__).with_name("quorum_recipe.py"))
SINGLE = str(Path(__file__).with_name("approvers_recipe.py"))
DEPLOY = str(Path(__file__).with_name("approval_many_recipe.py"))
PAIR = str(Path(__file__).with_name("quorum_pair_recipe.py"))

ADA = Identity("ada", frozenset({"release"}), via="users-file")
GRACE = Identity("grace", frozenset({"release"}), via="slack")
BO = Identity("bo", frozenset({"release"}))
APPROVE = {"approved": True}

pytestmark = pytest.mark.anyio


async def _paused(store: Store, tmp_path: Path) -> tuple[Runner, str, str]:
    runner = Runner(store, cwd=tmp_path, env={}, host="web")
    started = await runner.start(QUORUM, "release it")
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN
    (gate,) = started.interrupts
    assert gate.metadata is not None and gate.metadata[REQUIRED_APPROVALS] == 2
    return runner, started.run_id, gate.id


def _votes(store: Store) -> VoteStore:
    assert isinstance(store, VoteStore)
    return store


async def test_two_approvals_reach_the_quorum_and_the_model_reads_both_names(
    store: Store, tmp_path: Path
) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    first = await runner.answer(run_id, gate, APPROVE, answered_by=ADA, resume=True)
    assert (first.created, first.settled, first.resumed, first.run) == (True, False, False, None)
    assert (first.approvals, first.required_approvals) == (["ada"], 2), "1 of 2 approvals"
    assert first.interaction.answer is None
    assert (await store.get_run(run_id)).status is RunStatus.PAUSED_WAITING_HUMAN
    assert [i.id for i in (await runner.status(run_id)).interrupts] == [gate], "still open"

    second = await runner.answer(
        run_id, gate, {"approved": True, "feedback": "ship it"}, answered_by=GRACE, resume=True
    )
    assert (second.created, second.settled, second.resumed) == (True, True, True)
    assert second.approvals == ["ada", "grace"]
    assert second.run is not None and second.run.status is RunStatus.FINISHED
    assert second.run.text == "Tool said: Approved by ada, grace. Feedback: grace: ship it"
    stored = (await store.get_interaction(run_id, gate)).answer
    assert stored is not None and (stored.answered_by, stored.via) == ("ada, grace", "web")
    votes = await _votes(store).list_votes(run_id, gate)
    assert [(v.voter, v.approved, v.via) for v in votes] == [("ada", True, "web")] * 1 + [
        ("grace", True, "web")
    ]
    kinds = [e.type for e in await store.list_events(run_id)]
    assert kinds.count("interaction_voted") == 2 and kinds.count("interaction_answered") == 1


async def test_a_decline_settles_it_at_once(store: Store, tmp_path: Path) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    await runner.answer(run_id, gate, APPROVE, answered_by=ADA)
    done = await runner.answer(run_id, gate, status="cancelled", answered_by=BO, resume=True)
    assert (done.created, done.settled, done.approvals) == (True, True, ["ada"])
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert done.run.text.startswith("Tool said: User declined to answer.")
    stored = (await store.get_interaction(run_id, gate)).answer
    assert stored is not None and (stored.status, stored.answered_by) == ("cancelled", "bo")
    with pytest.raises(ConflictError) as late:
        await runner.answer(run_id, gate, APPROVE, answered_by=GRACE)
    assert late.value.reason == "already_answered"


async def test_a_revision_request_settles_it_and_claims_the_run(
    store: Store, tmp_path: Path
) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    no = {"approved": False, "feedback": "wait for the fix"}
    done = await runner.answer(run_id, gate, no, answered_by=GRACE, claim=True)
    assert done.settled and done.claim is not None
    finished = await runner.proceed(done.claim)
    assert finished.text == "Tool said: Revision requested. Feedback: wait for the fix"


async def test_the_same_person_voting_twice_counts_once(store: Store, tmp_path: Path) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    await runner.answer(run_id, gate, APPROVE, answered_by=ADA)
    again = await runner.answer(run_id, gate, APPROVE, answered_by=ADA, resume=True)
    assert (again.created, again.settled, again.approvals) == (False, False, ["ada"])
    with pytest.raises(ConflictError) as other:
        await runner.answer(run_id, gate, {"approved": False}, answered_by=ADA)
    assert other.value.reason == "already_voted"
    assert len(await _votes(store).list_votes(run_id, gate)) == 1
    assert (await store.get_run(run_id)).status is RunStatus.PAUSED_WAITING_HUMAN


async def test_someone_not_allowed_is_refused_and_nothing_is_stored(
    store: Store, tmp_path: Path
) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    before = await store_snapshot(store)
    for stranger in (Identity("eve", frozenset({"dev"})), "eve", None):
        with pytest.raises(NotAllowedError):
            await runner.answer(run_id, gate, APPROVE, answered_by=stranger)
    entry = ResumeEntry(interrupt_id=gate, status="resolved", payload=APPROVE)
    with pytest.raises(NotAllowedError):
        await runner.resume(run_id, [entry], answered_by="eve")
    assert await store_snapshot(store) == before


async def test_a_policy_rule_needing_two_approvals_takes_no_edits_nor_remember(
    store: Store, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\naction = "ask"\napprovers = ["group:release"]\n'
        "required_approvals = 2\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    runner = Runner(store, cwd=tmp_path, env=env | {"PI_RECIPES_POLICY": str(policy)})
    started = await runner.start(DEPLOY, "deploy canary")
    (gate,) = started.interrupts
    assert gate.metadata is not None and gate.metadata[REQUIRED_APPROVALS] == 2
    before = await store_snapshot(store)
    for payload in (
        {"approved": True, "args": {"env": "staging"}},
        {"approved": True, "remember": {"scope": "run"}},
    ):
        with pytest.raises(InvalidPayloadError, match="is one vote") as refused:
            await runner.answer(started.run_id, gate.id, payload, answered_by=ADA)
        assert refused.value.reason == "not_a_vote"
    assert await store_snapshot(store) == before
    await runner.answer(started.run_id, gate.id, APPROVE, answered_by=ADA)
    done = await runner.answer(started.run_id, gate.id, APPROVE, answered_by=BO, resume=True)
    assert done.run is not None and done.run.text == "Deployed to canary."


async def test_one_resume_is_one_vote(store: Store, tmp_path: Path) -> None:
    runner, run_id, gate = await _paused(store, tmp_path)
    entry = ResumeEntry(interrupt_id=gate, status="resolved", payload=APPROVE)
    waiting = await runner.resume(run_id, [entry], answered_by=ADA)
    assert waiting.status is RunStatus.PAUSED_WAITING_HUMAN
    assert [i.id for i in waiting.interrupts] == [gate]
    replayed = await runner.resume(run_id, [entry], answered_by=ADA)
    assert replayed.status is RunStatus.PAUSED_WAITING_HUMAN, "ada's vote counts once"
    said = ResumeEntry(
        interrupt_id=gate, status="resolved", payload={"approved": True, "feedback": "go"}
    )
    done = await runner.resume(run_id, [said], answered_by=GRACE)
    assert done.status is RunStatus.FINISHED
    assert done.text == "Tool said: Approved by ada, grace. Feedback: grace: go"
    before = await store_snapshot(store)
    again = await runner.resume(run_id, [said], answered_by=GRACE)  # a client's retry
    assert again == done and await store_snapshot(store) == before
    no = ResumeEntry(interrupt_id=gate, status="resolved", payload={"approved": False})
    with pytest.raises(ConflictError):
        await runner.resume(run_id, [no], answered_by=GRACE)


async def test_an_approval_without_required_approvals_is_answered_as_before(
    store: Store, tmp_path: Path
) -> None:
    runner = Runner(store, cwd=tmp_path, env={})
    started = await runner.start(SINGLE, "release it")
    (gate,) = started.interrupts
    assert REQUIRED_APPROVALS not in (gate.metadata or {})
    done = await runner.answer(started.run_id, gate.id, APPROVE, answered_by=ADA, resume=True)
    assert (done.settled, done.approvals, done.required_approvals) == (True, [], 1)
    assert done.run is not None and done.run.text == "Tool said: Approved."
    assert await _votes(store).list_votes(started.run_id, gate.id) == []
    kinds = [e.type for e in await store.list_events(started.run_id)]
    assert "interaction_voted" not in kinds


class _Gated:
    """``store``, but its first write of the answer to ``int-call_name`` waits until the
    settling vote's next read of the run has returned: the window in which that answer was
    decided on the run as it stood before the vote (the boundary faked, not the runner)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.waiting = anyio.Event()  # the answer's write is held
        self.reread = anyio.Event()  # the vote's read after its write has returned
        self._voted = False

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def update_run(self, run_id: str, **kw: object) -> object:
        if "int-call_name" in (kw.get("answers") or {}) and not self.reread.is_set():
            self.waiting.set()
            await self.reread.wait()
        return await self.store.update_run(run_id, **kw)  # type: ignore[arg-type]

    async def list_votes(self, *args: object, **kw: object) -> object:
        return await _votes(self.store).list_votes(*args, **kw)  # type: ignore[arg-type]

    async def cast_vote(self, *args: object, **kw: object) -> object:
        done = await _votes(self.store).cast_vote(*args, **kw)  # type: ignore[arg-type]
        self._voted = self.waiting.is_set()  # a vote cast while the answer's write is held
        return done

    async def get_run_with_interactions(self, run_id: str) -> object:
        found = await self.store.get_run_with_interactions(run_id)
        if self._voted:
            self.reread.set()
        return found


async def test_a_settling_vote_and_the_run_s_other_answer_claim_the_run_once(
    store: Store, tmp_path: Path
) -> None:
    """The answer to the run's other question is decided while the approval is open (not
    the last), and written only after the settling vote looked for a claim (finding that
    question open): the vote's write moved the run's version, so the answer's write is
    refused, decided again, and claims the run. Exactly one claim, never none."""
    gated = _Gated(store)
    runner = Runner(gated, cwd=tmp_path, env={})  # type: ignore[arg-type]
    started = await runner.start(PAIR, "release and name it")
    assert sorted(i.id for i in started.interrupts) == ["int-call_name", "int-call_release"]
    await runner.answer(started.run_id, "int-call_release", APPROVE, answered_by=ADA)
    results = {}

    async def name() -> None:
        results["name"] = await runner.answer(
            started.run_id, "int-call_name", {"answer": "v2"}, answered_by="bo", claim=True
        )

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(name)
            await gated.waiting.wait()
            results["vote"] = await runner.answer(
                started.run_id, "int-call_release", APPROVE, answered_by=GRACE, claim=True
            )
    assert results["vote"].settled and results["vote"].claim is None, "its question was open"
    claim = results["name"].claim
    assert claim is not None, "the last answer claims the run"
    finished = await runner.proceed(claim)
    assert finished.text == "Approved by ada, grace. | Answer: v2"
