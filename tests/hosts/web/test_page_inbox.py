"""The inbox, the page's first view, in Chromium (see ``test_page``), for two people signed in
from a users file (ada, and eve who is in no group): each sees what waits for them under "For
you", what anyone may answer under "Open to anyone", and what only others may answer read-only
under "For others"; counts in the headings. Answered by keyboard (j/k, a, r with feedback, d),
announced; an answered card moves to History live on every page, with the chosen option's
label, who answered and when (and again after a reload, read from ``/api/me/history``); the
search box filters the cards. axe-core finds no serious violation; screenshots ``inbox.png``
and ``inbox-phone.png`` (420 px)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from hosts._kit import add_user
from tests.hosts.web.a11y import assert_accessible
from tests.hosts.web.server import Server, serving, wait_for_status
from tests.hosts.web.test_page import ARGS, CHROMIUM, card, shot

RECIPE = str(Path(__file__).with_name("web_inbox_recipe.py"))

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Chromium is not installed (.ci/run: apt-get install -y chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, Page, expect, sync_playwright
else:  # pragma: no cover - the module skips
    Browser = Page = object  # type: ignore[assignment,misc]


@dataclass
class People:
    server: Server
    tokens: dict[str, str]

    def client(self, who: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        return httpx.Client(base_url=self.server.url, headers=headers, timeout=20)

    def start(self, prompt: str) -> str:
        """A run of ``prompt`` paused on its questions (started by ada)."""
        with self.client("ada") as http:
            reply = http.post("/api/runs", json={"prompt": prompt})
            assert reply.status_code == 202, reply.text
            run_id: str = reply.json()["run_id"]
            wait_for_status(http, run_id, {"paused_waiting_human"})
        return run_id

    def close_all(self) -> None:
        """Decline (as ada, who may answer all of them) every question still open, so that
        each test starts with an empty inbox."""
        with self.client("ada") as http:
            for item in http.get("/api/me/inbox", params={"others": True}).json()["interactions"]:
                reply = http.post(
                    f"/api/runs/{item['run_id']}/interactions/{item['id']}/answer",
                    json={"status": "cancelled"},
                )
                assert reply.status_code in (200, 409), reply.text


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory) -> Iterator[People]:
    cwd = tmp_path_factory.mktemp("inbox")
    users = cwd / "users.toml"
    tokens = {"ada": add_user(users, "ada"), "eve": add_user(users, "eve")}
    with serving(cwd, recipe=RECIPE, args=("--users", str(users))) as server:
        yield People(server, tokens)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def pages(browser: Browser, people: People) -> Iterator[dict[str, Page]]:
    """ada's and eve's pages, each signed in with their own token."""
    people.close_all()
    contexts, opened, errors = [], {}, []
    for name, token in people.tokens.items():
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{people.server.url}#token={token}")
        expect(page.locator("#connection")).to_have_text("Connected")
        expect(page.locator("#signed-in")).to_have_text(f"Signed in as {name}")
        contexts.append(context)
        opened[name] = page
    yield opened
    for context in contexts:
        context.close()
    people.close_all()
    assert errors == [], "the pages raised errors"


def heading(page: Page, name: str):  # type: ignore[no-untyped-def]
    return page.get_by_role("heading", name=name, exact=True)


def test_two_people_see_what_waits_for_each_of_them(pages: dict[str, Page], people: People) -> None:
    ada, eve = pages["ada"], pages["eve"]
    run_id = people.start("gate: Ship 7.0\nopen: Notes for the 7.0 release?")
    expect(heading(ada, "For you (1)")).to_be_visible()
    expect(heading(ada, "Open to anyone (1)")).to_be_visible()
    expect(heading(ada, "For others (0)")).to_be_hidden()
    mine = ada.locator("#for-you-cards").locator(card(ada, run_id))
    expect(mine.get_by_role("heading", name="Ship 7.0")).to_be_visible()
    expect(mine.locator(".card-run-title")).to_have_text(
        "gate: Ship 7.0 open: Notes for the 7.0 release?"
    )
    expect(mine.locator(".card-recipe")).to_have_text("web_inbox_recipe")
    expect(mine.locator(".kind")).to_have_text("recipe")
    expect(mine.locator(".age")).to_have_text("just now")
    expect(mine.locator(".expiry")).to_have_text(re.compile(r"^expires in \d"))
    expect(mine.locator(".card-who")).to_have_text("Also for: group:release")
    expect(mine.get_by_role("button", name="Approve", exact=True)).to_be_enabled()
    anyone = ada.locator("#anyone-cards").locator(card(ada, run_id, "int-c2"))
    expect(anyone.locator(".card-who")).to_have_text("Open to anyone")

    expect(heading(eve, "For you (0)")).to_be_visible()
    expect(eve.get_by_text("Nothing waits for you.")).to_be_visible()
    expect(heading(eve, "Open to anyone (1)")).to_be_visible()
    expect(heading(eve, "For others (1)")).to_be_visible()
    theirs = eve.locator("#others-cards").locator(card(eve, run_id))
    expect(theirs).to_have_attribute("data-readonly", "true")
    expect(theirs.locator(".card-only")).to_have_text("Only ada, group:release may answer this")
    expect(theirs.get_by_role("button", name="Approve", exact=True)).to_be_disabled()
    expect(eve.locator("#anyone-cards").locator(card(eve, run_id, "int-c2"))).to_be_visible()

    # eve answers the open question: it moves to History on both pages, live
    eve.locator("#anyone-cards").get_by_label("Your answer").fill("all good")
    eve.get_by_role("button", name="Send", exact=True).click()
    for page in (ada, eve):
        closed = page.locator("#history-cards").locator(card(page, run_id, "int-c2"))
        expect(closed.locator(".card-status")).to_have_text("Answered by eve via web: all good")
        expect(closed.locator(".card-when time")).to_have_attribute("datetime", re.compile(r"^20"))
        expect(heading(page, "Open to anyone (0)")).to_be_visible()
    expect(eve.locator("#announcer")).to_have_text(
        "Notes for the 7.0 release?: Answered by eve via web: all good"
    )

    # the page with content in every part: no serious accessibility violation; screenshots
    people.start("pick: Which letter for 7.1?")
    expect(heading(eve, "Open to anyone (1)")).to_be_visible()
    assert_accessible(eve, "the inbox, with cards for others and a History")
    assert_accessible(ada, "the inbox, with a card for ada")
    shot(eve, "inbox")
    eve.set_viewport_size({"width": 420, "height": 900})
    expect(eve.locator("#inbox-search")).to_be_visible()
    shot(eve, "inbox-phone")


SAID = """
window.said = [];
new MutationObserver(() => {
  const text = document.getElementById("announcer").textContent;
  if (text) window.said.push(text);
}).observe(document.getElementById("announcer"), {
  childList: true, characterData: true, subtree: true,
});
"""
"""Every text the page's live region says from now on, in ``window.said``."""


def test_answering_by_keyboard_reaches_the_run(pages: dict[str, Page], people: People) -> None:
    """j moves to a card (focused, highlighted, announced), a approves, r opens the feedback
    field (the letters typed in it are text, not keys), d declines."""
    ada = pages["ada"]
    run_id = people.start("gate: First\ngate: Second\ngate: Third")
    expect(heading(ada, "For you (3)")).to_be_visible()
    first = card(ada, run_id, "int-c1")
    # its run's title is read once the card is in (the frame that opened it names no run)
    expect(first.locator(".card-run-title")).to_have_text("gate: First gate: Second gate: Third")
    ada.locator("body").press("j")
    expect(first).to_be_focused()
    expect(first).to_have_class(re.compile(r"\bcurrent\b"))
    expect(ada.locator("#announcer")).to_have_text(
        "1 of 3, For you: First (run: gate: First gate: Second gate: Third)"
    )
    ada.keyboard.press("j")
    expect(card(ada, run_id, "int-c2")).to_be_focused()
    shot(ada, "inbox-keyboard")  # the current card highlighted
    ada.keyboard.press("k")
    expect(first).to_be_focused()
    ada.keyboard.press("k")
    expect(ada.locator("#announcer")).to_have_text("This is the first question.")
    ada.keyboard.press("a")
    expect(first.locator(".card-status")).to_have_text("Approved by ada via web.")
    expect(ada.locator("#history-cards").locator(first)).to_be_visible()
    expect(heading(ada, "For you (2)")).to_be_visible()

    ada.keyboard.press("j")  # the first open card is now the second question
    second = card(ada, run_id, "int-c2")
    expect(second).to_be_focused()
    ada.keyboard.press("r")
    feedback = second.get_by_label("What should change?")
    expect(feedback).to_be_focused()
    ada.keyboard.type("rework: add a dry-run, keep jobs")  # a, d, r, j, k typed as text
    expect(feedback).to_have_value("rework: add a dry-run, keep jobs")
    expect(second).to_have_attribute("data-state", "open")
    ada.keyboard.press("Tab")
    expect(second.get_by_role("button", name="Send the request")).to_be_focused()
    ada.keyboard.press("Enter")
    expect(second.locator(".card-status")).to_have_text(
        "Changes requested by ada via web: rework: add a dry-run, keep jobs"
    )

    ada.keyboard.press("j")
    third = card(ada, run_id, "int-c3")
    expect(third).to_be_focused()
    ada.keyboard.press("d")
    expect(third.locator(".card-status")).to_have_text("Declined by ada via web.")
    expect(heading(ada, "For you (0)")).to_be_visible()
    with people.client("ada") as http:
        done = wait_for_status(http, run_id, {"finished"})
    # what the live region says from here on (the run's end is said too, in whichever order)
    ada.evaluate(SAID)
    ada.keyboard.press("j")
    ada.wait_for_function("() => window.said.includes('No question is open.')", timeout=5_000)
    answers = {i["id"]: i["answer"] for i in done["interactions"]}
    assert answers["int-c1"]["payload"] == {"approved": True}
    assert answers["int-c2"]["payload"] == {
        "approved": False, "feedback": "rework: add a dry-run, keep jobs",
    }  # fmt: skip
    assert answers["int-c3"]["status"] == "cancelled"
    assert {a["answered_by"] for a in answers.values()} == {"ada"}


def test_keys_that_cannot_act_say_why(pages: dict[str, Page], people: People) -> None:
    """a on a card only others may answer says who may; on a question, how to answer it;
    ? says the keys."""
    eve = pages["eve"]
    run_id = people.start("gate: Not eve's\npick: Eve's letter")
    expect(heading(eve, "For others (1)")).to_be_visible()
    eve.locator("body").press("a")
    expect(eve.locator("#announcer")).to_have_text("Choose a question first: j or k moves to one.")
    eve.keyboard.press("j")
    expect(card(eve, run_id, "int-c2")).to_be_focused()  # Open to anyone comes first
    eve.keyboard.press("a")
    expect(eve.locator("#announcer")).to_have_text(
        "Eve's letter is a question: choose an answer, or d to decline."
    )
    eve.keyboard.press("j")
    expect(card(eve, run_id)).to_be_focused()
    eve.keyboard.press("a")
    expect(eve.locator("#announcer")).to_have_text("Only ada, group:release may answer this")
    expect(card(eve, run_id)).to_have_attribute("data-state", "open")
    eve.keyboard.press("?")
    expect(eve.locator("#announcer")).to_contain_text("j and k, next and previous question")


def test_an_answered_card_moves_to_history_with_the_label_of_the_choice(
    pages: dict[str, Page], people: People
) -> None:
    ada, eve = pages["ada"], pages["eve"]
    run_id = people.start("pick: Which letter for 8.0?")
    mine = card(ada, run_id)
    mine.get_by_role("button", name="Beta", exact=True).click()
    for page in (ada, eve):
        closed = page.locator("#history-cards").locator(card(page, run_id))
        expect(closed.locator(".card-status")).to_have_text("Answered by ada via web: Beta")
        expect(closed.get_by_role("button")).to_have_count(0)
    eve.reload()  # read from /api/me/history this time
    expect(eve.locator("#connection")).to_have_text("Connected")
    closed = eve.locator("#history-cards").locator(card(eve, run_id))
    expect(closed.locator(".card-status")).to_have_text("Answered by ada via web: Beta")
    expect(closed.locator(".card-run-title")).to_have_text("pick: Which letter for 8.0?")
    expect(closed.locator(".card-when")).to_have_text(re.compile(r"^at \S"))
    first = eve.locator("#history-cards article.card").first
    expect(first).to_have_attribute("data-run", run_id)  # newest first


def test_search_filters_the_inbox(pages: dict[str, Page], people: People) -> None:
    """The search looks through each card's question and its run's title and recipe."""
    ada = pages["ada"]
    docs = people.start("open: Deploy the docs?")
    keys = people.start("open: Rotate the keys?\ngate: Rotate for real")
    expect(heading(ada, "Open to anyone (2)")).to_be_visible()
    ada.locator("body").press("/")
    search = ada.get_by_role("searchbox", name="Search the inbox")
    expect(search).to_be_focused()
    search.press_sequentially("rotate")  # typed in the box: not keys for the cards
    expect(card(ada, docs)).to_be_hidden()
    expect(card(ada, keys)).to_be_visible()
    expect(heading(ada, "Open to anyone (1 of 2)")).to_be_visible()
    expect(heading(ada, "For you (1)")).to_be_visible()
    expect(ada.locator("#announcer")).to_have_text("2 open questions match.")
    search.fill("deploy the")  # a question's words
    expect(heading(ada, "Open to anyone (1 of 2)")).to_be_visible()
    expect(heading(ada, "For you (0 of 1)")).to_be_visible()
    expect(card(ada, docs)).to_be_visible()
    search.fill("web_inbox_recipe")  # the recipe's name matches every card
    expect(heading(ada, "Open to anyone (2)")).to_be_visible()
    search.fill("no such words")
    expect(heading(ada, "Open to anyone (0 of 2)")).to_be_visible()
    expect(ada.get_by_text("Nothing is open to anyone.")).to_be_visible()
    search.press("Escape")
    ada.keyboard.press("j")
    expect(ada.locator("#announcer")).to_have_text("No open question matches the search.")
    search.fill("")
    expect(heading(ada, "Open to anyone (2)")).to_be_visible()
    expect(heading(ada, "For you (1)")).to_be_visible()
