"""The page of two people in Chromium (see ``test_page``): each signs in with their own token
from a users file and sees who they are; a card only ada and the group release may answer is
read-only for eve, saying who may; ada answers it, and both see it answered by ada. An
approval two must give shows its votes on every card ("1 of 2 approvals: ada")."""

from __future__ import annotations

from pathlib import Path

import pytest

from hosts._kit import add_user
from tests.hosts.web.server import serving, wait_for_status
from tests.hosts.web.test_page import ARGS, CHROMIUM, card, shot
from tests.hosts.web.test_people import RECIPE

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Chromium is not installed (.ci/run: apt-get install -y chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Page, expect, sync_playwright


def test_a_card_for_others_is_read_only_and_its_approver_answers(tmp_path: Path) -> None:
    users = tmp_path / "users.toml"
    tokens = {name: add_user(users, name) for name in ("ada", "eve")}
    with (
        serving(tmp_path, recipe=RECIPE, args=("--users", str(users))) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        pages: dict[str, Page] = {}
        errors: list[str] = []
        for name, token in tokens.items():
            opened = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            opened.on("pageerror", lambda error: errors.append(str(error)))
            opened.goto(f"{server.url}#token={token}")
            expect(opened.locator("#connection")).to_have_text("Connected")
            expect(opened.locator("#signed-in")).to_have_text(f"Signed in as {name}")
            expect(opened.get_by_label("Answer as")).to_have_count(0)  # the server knows who
            pages[name] = opened
        run_id = server.start_run("gate: Ship 5.0")

        theirs = card(pages["eve"], run_id)
        expect(theirs).to_have_attribute("data-readonly", "true")
        expect(theirs.locator(".card-only")).to_have_text(
            "Only ada, group:release may answer this"
        )
        expect(theirs.get_by_role("button", name="Approve", exact=True)).to_be_disabled()
        shot(pages["eve"], "people-read-only")

        mine = card(pages["ada"], run_id)
        expect(mine.locator(".card-only")).to_have_count(0)
        mine.get_by_role("button", name="Approve", exact=True).click()
        for page in pages.values():
            expect(card(page, run_id).locator(".card-status")).to_have_text(
                "Approved by ada via web."
            )
        with server.client() as http:
            done = wait_for_status(http, run_id, {"finished"})
        assert done["interactions"][0]["answer"]["answered_by"] == "ada"
        browser.close()
        assert errors == [], "the pages raised errors"


def test_an_approval_two_must_give_shows_its_votes_on_every_card(tmp_path: Path) -> None:
    """ada approves: every card says "1 of 2 approvals: ada" (ada's stays closed to her, also
    after a reload); bob approves the same card, and the run finishes."""
    users = tmp_path / "users.toml"
    tokens = {"ada": add_user(users, "ada"), "bob": add_user(users, "bob", groups=["release"])}
    with (
        serving(tmp_path, recipe=RECIPE, args=("--users", str(users))) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        pages: dict[str, Page] = {}
        errors: list[str] = []
        for name, token in tokens.items():
            opened = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            opened.on("pageerror", lambda error: errors.append(str(error)))
            opened.goto(f"{server.url}#token={token}")
            expect(opened.locator("#signed-in")).to_have_text(f"Signed in as {name}")
            pages[name] = opened
        run_id = server.start_run("two: Ship 6.0")
        for page in pages.values():
            expect(card(page, run_id).locator(".card-votes")).to_have_text("0 of 2 approvals")

        approve = card(pages["ada"], run_id).get_by_role("button", name="Approve", exact=True)
        approve.click()
        for page in pages.values():
            expect(card(page, run_id).locator(".card-votes")).to_have_text(
                "1 of 2 approvals: ada"
            )
        expect(pages["bob"].locator("#announcer")).to_have_text("Ship 6.0: 1 of 2 approvals: ada")
        expect(approve).to_be_disabled()
        pages["ada"].reload()  # read again from REST: she approved, so it stays closed to her
        mine = card(pages["ada"], run_id)
        expect(mine.locator(".card-votes")).to_have_text("1 of 2 approvals: ada")
        expect(mine.locator(".card-status")).to_have_text(
            "You have approved this: waiting for the others."
        )
        expect(mine.get_by_role("button", name="Approve", exact=True)).to_be_disabled()
        shot(pages["bob"], "people-one-of-two")

        theirs = card(pages["bob"], run_id)
        theirs.get_by_role("button", name="Approve", exact=True).click()
        for page in pages.values():
            expect(card(page, run_id).locator(".card-status")).to_have_text(
                "Approved by ada, bob via web."
            )
        with server.client() as http:
            done = wait_for_status(http, run_id, {"finished"})
        assert done["interactions"][0]["answer"]["answered_by"] == "ada, bob"
        browser.close()
        assert errors == [], "the pages raised errors"
