"""Slack users as people (``slack --users``): a click answers as the person the users file maps
the Slack user (and their user groups) to, an unmapped one as ``slack:<USER_ID>``; a question
naming approvers refuses anyone else, says so to them alone and stores nothing; an approval two
must give shows its votes on its card."""

from __future__ import annotations

from pathlib import Path

import pytest

from hosts._kit import load_users
from interactions.store import RunStatus
from interactions.testing.store_conformance import store_snapshot
from tests.hosts.cli_helpers import PI_RECIPES, cli_env
from tests.hosts.slack.fake_slack import APP_TOKEN, BOT_TOKEN
from tests.hosts.slack.harness import RECIPES, RELEASE, is_card, wait_event, wait_status, world
from tests.hosts.slack.payloads import block_actions

pytestmark = pytest.mark.anyio

USERS = """\
[[user]]
name = "ada"
slack = ["UADA"]

[[user]]
name = "bob"
groups = ["ops"]
slack = ["UBOB"]

[slack]
usergroups = { S0RELEASE = "release" }
"""


def users_file(tmp_path: Path) -> Path:
    path = tmp_path / "users.toml"
    path.write_text(USERS)
    return path


async def test_a_mapped_user_answers_as_their_name_and_the_card_says_who_may(
    tmp_path: Path,
) -> None:
    users = load_users(users_file(tmp_path))
    async with world(tmp_path, recipe=f"{RECIPES}:gated", users=users) as w:
        await w.mention("<@UBOT> Ship?", ts="1699999999.000100")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert "Only ada, group:release may answer." in card.text

        await w.interact(block_actions(card, "pi_pick.0", user="UADA"))
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        assert answered.data["answered_by"] == "ada"
        closed = await w.fake.wait_for("chat.update")
        assert "Answered by ada via slack" in closed.text


async def test_unmapped_users_are_refused_members_of_a_mapped_user_group_answer(
    tmp_path: Path,
) -> None:
    users = load_users(users_file(tmp_path))
    async with world(tmp_path, recipe=f"{RECIPES}:gated", users=users) as w:
        w.fake.groups["S0RELEASE"] = ["UBOB"]  # bob is in release only through Slack
        await w.mention("<@UBOT> Ship?", ts="1699999999.000100")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before = await store_snapshot(w.store)

        for action in ("pi_pick.1", "pi_other"):  # a button, and the form it would open
            mark = len(w.fake.calls)
            await w.interact(block_actions(card, action, user="UCAROL"))
            refusal = await w.fake.wait_for("chat.postEphemeral", after=mark)
            assert refusal.args["user"] == "UCAROL"
            assert refusal.args["text"] == (
                "Only ada, group:release may answer this: nothing was stored."
            )
        assert await store_snapshot(w.store) == before
        assert w.fake.of("views.open") == [] and w.fake.of("chat.update") == []

        await w.interact(block_actions(card, "pi_pick.1", user="UBOB"))
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        assert answered.data["answered_by"] == "bob"
        [lookup, *_] = w.fake.of("usergroups.users.list")
        assert lookup.args["usergroup"] == "S0RELEASE"


async def test_an_unmapped_user_answers_a_question_without_approvers_as_their_slack_id(
    tmp_path: Path,
) -> None:
    users = load_users(users_file(tmp_path))
    async with world(tmp_path, recipe=f"{RECIPES}:flavours", users=users) as w:
        await w.mention("<@UBOT> Pick one")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert "may answer" not in card.text
        await w.interact(block_actions(card, "pi_select", user="UCAROL", option=2))
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        assert answered.data["answered_by"] == "slack:UCAROL"
        closed = await w.fake.wait_for("chat.update")
        assert "Answered by <@UCAROL>" in closed.text


async def test_a_vote_on_an_approval_two_must_give_updates_its_card(tmp_path: Path) -> None:
    users = load_users(users_file(tmp_path))
    async with world(tmp_path, recipe=f"{RECIPES}:quorum", users=users) as w:
        w.fake.groups["S0RELEASE"] = ["UBOB"]
        await w.mention("<@UBOT> Ship?")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert "0 of 2 approvals" in card.text

        await w.interact(block_actions(card, "pi_approve", user="UADA"))
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["text"].startswith("Your vote is counted: 1 of 2 approvals")
        voted = await w.fake.wait_for("chat.update")
        assert voted.args["ts"] == card.result["ts"]
        assert "1 of 2 approvals: ada" in voted.text and "pi_approve" in voted.text  # still open

        mark = len(w.fake.calls)
        await w.interact(block_actions(card, "pi_approve", user="UBOB"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        closed = await w.fake.wait_for("chat.update", lambda c: "Approved by" in c.text, after=mark)
        assert "Approved by ada, bob via slack" in closed.text
        assert "pi_approve" not in closed.text


async def test_a_user_group_slack_will_not_list_counts_for_no_one(tmp_path: Path) -> None:
    users = load_users(users_file(tmp_path))
    async with world(tmp_path, recipe=f"{RECIPES}:gated", users=users) as w:
        w.fake.groups["S0RELEASE"] = ["UBOB"]
        w.fake.refuse["usergroups.users.list"] = "missing_scope"
        await w.mention("<@UBOT> Ship?")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before = await store_snapshot(w.store)
        await w.interact(block_actions(card, "pi_pick.0", user="UBOB"))
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["text"].startswith(
            "Nothing was stored: Slack would not say who may answer this (missing_scope)."
        )
        assert await store_snapshot(w.store) == before


def test_a_users_file_that_cannot_be_read_stops_the_host_before_slack_is_called(
    tmp_path: Path,
) -> None:
    import subprocess

    env = cli_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN,
                  SLACK_API_URL="http://127.0.0.1:1/api/",
                  PI_RECIPES_USERS="nobody.toml")  # fmt: skip
    done = subprocess.run([PI_RECIPES, "slack", RELEASE], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env=env)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "pi-recipes: usage: cannot read the users file nobody.toml" in done.stderr
