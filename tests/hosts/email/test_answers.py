"""The email host as it runs (SQLite store, a real local SMTP server, its pages on a real port,
clicked with httpx): a question reaches each approver with an address as a multipart mail
holding a link per choice; a link's GET only shows what would be answered and answers nothing;
its POST answers as the recipient and the run continues; a second use, a forged, expired or
no-longer-valid link is refused with a page saying why, nothing stored."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from interactions.reminders import remind_due
from interactions.store import RunStatus, SQLiteStore
from tests.hosts.email.harness import PAGE, SENDER, Clock, Running, client, email_host, write_users
from tests.hosts.email.mailbox import MailServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def mail() -> Iterator[MailServer]:
    server = MailServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(tmp_path / "state.db", poll_interval=0.02) as opened:
        yield opened


async def _pending(running: Running, run_id: str, interaction_id: str = "int-c1") -> bool:
    return (await running.store.get_interaction(run_id, interaction_id)).pending


async def test_an_approval_is_mailed_and_a_confirmed_click_answers_it(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    async with email_host(store, tmp_path, mail) as running:
        run_id = await running.start("gate: Ship <b>v2</b>?")
        mails = await mail.mailbox.wait(2)
        assert sorted(m.to for m in mails) == [("ada@example.com",), ("bob@example.com",)], (
            "the release group's members with an address; cy is no approver, dee has no address"
        )
        [ada] = mail.mailbox.to("ada@example.com")
        assert ada.subject == "Approval needed: Ship <b>v2</b>?"
        assert ada.message["From"] == SENDER and ada.message.get_content_type() == (
            "multipart/alternative"
        )
        assert "Ship <b>v2</b>?" in ada.part("plain")
        html = ada.part("html")
        assert "Ship &lt;b&gt;v2&lt;/b&gt;?" in html and "<b>v2</b>" not in html
        links = ada.links()
        assert list(links) == ["Approve", "Request changes", "Decline"]
        card = PAGE.format(run_id=run_id, interaction_id="int-c1")
        assert f"Open it on the page: {card}" in ada.part("plain")
        async with client() as http:
            shown = await http.get(links["Approve"])  # what a mail scanner does
            assert shown.status_code == 200
            assert "You answer <strong>Approve</strong> as <strong>ada</strong>" in shown.text
            assert "Ship &lt;b&gt;v2&lt;/b&gt;?" in shown.text
            assert "default-src 'none'" in shown.headers["content-security-policy"]
            assert shown.headers["referrer-policy"] == "no-referrer"
            assert (await http.head(links["Approve"])).status_code == 200
            assert await _pending(running, run_id), "a GET (or HEAD) answers nothing"
            sent = await http.post(links["Approve"])
            assert sent.status_code == 200, sent.text
            assert "You answered <strong>Approve</strong>" in sent.text
            assert await running.settled(run_id) is RunStatus.FINISHED, "the run continued"
            answer = (await store.get_interaction(run_id, "int-c1")).answer
            assert answer is not None
            assert (answer.answered_by, answer.via, answer.payload) == (
                "ada", "email", {"approved": True}
            )  # fmt: skip
            again = await http.post(links["Approve"])
            assert again.status_code == 409
            assert "already answered by ada (via email)" in again.text
            assert "Nothing was sent" in again.text
            [bob] = mail.mailbox.to("bob@example.com")
            late = await http.get(bob.links()["Decline"])
            assert late.status_code == 409 and "already answered by ada" in late.text


async def test_request_changes_asks_for_the_feedback_it_sends(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    async with email_host(store, tmp_path, mail) as running:
        run_id = await running.start("gate: Drop the table?")
        await mail.mailbox.wait(2)
        changes = mail.mailbox.to("bob@example.com")[0].links()["Request changes"]
        async with client() as http:
            shown = await http.get(changes)
            assert '<textarea id="text" name="text"' in shown.text
            empty = await http.post(changes, data={"text": "  "})
            assert empty.status_code == 400 and "write what should change" in empty.text
            assert await _pending(running, run_id)
            sent = await http.post(changes, data={"text": "Back it up <first>"})
            assert sent.status_code == 200, sent.text
        assert await running.settled(run_id) is RunStatus.FINISHED
        answer = (await store.get_interaction(run_id, "int-c1")).answer
        assert answer is not None and answer.answered_by == "bob"
        assert answer.payload == {"approved": False, "feedback": "Back it up <first>"}


async def test_a_question_has_a_link_per_option_and_one_for_another_answer(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    async with email_host(store, tmp_path, mail) as running:
        run_id = await running.start("pick: Which day?")
        await mail.mailbox.wait(2)
        [ada] = mail.mailbox.to("ada@example.com")
        assert ada.subject == "Question: Which day?"
        links = ada.links()
        assert list(links) == ["Mon", "Tue", "Another answer…"]
        async with client() as http:
            sent = await http.post(links["Tue"])
            assert sent.status_code == 200, sent.text
        assert await running.settled(run_id) is RunStatus.FINISHED
        answer = (await store.get_interaction(run_id, "int-c1")).answer
        assert answer is not None and answer.payload == {"answer": "Tue"}


async def test_a_question_of_several_answers_is_ticked_on_the_confirmation(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    async with email_host(store, tmp_path, mail) as running:
        run_id = await running.start("many: Which days?")
        await mail.mailbox.wait(2)
        [choose] = mail.mailbox.to("bob@example.com")[0].links().values()
        async with client() as http:
            shown = await http.get(choose)
            assert shown.text.count('type="checkbox" name="pick"') == 3
            nothing = await http.post(choose, data={"text": ""})
            assert nothing.status_code == 400 and "tick at least one option" in nothing.text
            sent = await http.post(choose, data={"pick": ["0", "2"], "text": "Fri"})
            assert sent.status_code == 200, sent.text
        assert await running.settled(run_id) is RunStatus.FINISHED
        answer = (await store.get_interaction(run_id, "int-c1")).answer
        assert answer is not None and answer.payload == {"answers": ["Mon", "Wed", "Fri"]}


async def test_an_approval_two_must_give_counts_each_vote_once(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    async with email_host(store, tmp_path, mail) as running:
        run_id = await running.start("two: Deploy?")
        await mail.mailbox.wait(2)
        ada = mail.mailbox.to("ada@example.com")[0].links()
        bob = mail.mailbox.to("bob@example.com")[0].links()
        async with client() as http:
            first = await http.post(ada["Approve"])
            assert first.status_code == 200 and "1 of 2 approvals" in first.text
            again = await http.get(ada["Decline"])
            assert again.status_code == 409 and "You already voted" in again.text
            assert (await http.post(ada["Approve"])).status_code == 409
            assert await _pending(running, run_id)
            second = await http.post(bob["Approve"])
            assert second.status_code == 200 and "You answered" in second.text, second.text
        assert await running.settled(run_id) is RunStatus.FINISHED


def _forged(url: str) -> str:
    head, _, token = url.rpartition("/")
    payload, _, signature = token.rpartition(".")
    return f"{head}/{payload}.{'A' if signature[0] != 'A' else 'B'}{signature[1:]}"


async def test_forged_expired_and_no_longer_valid_links_are_refused(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    clock = Clock()
    async with email_host(store, tmp_path, mail, clock=clock) as running:
        run_id = await running.start("gate: Ship it?")
        await mail.mailbox.wait(2)
        ada = mail.mailbox.to("ada@example.com")[0].links()
        bob = mail.mailbox.to("bob@example.com")[0].links()
        async with client() as http:
            forged = await http.post(_forged(ada["Approve"]))
            assert forged.status_code == 400 and "not one we sent" in forged.text
            token = ada["Approve"].rpartition("/")[2]
            other = await http.get(f"{running.base_url}/answer/{token[:-3]}")
            assert other.status_code == 400
            # bob leaves the release group: his link no longer answers
            write_users(tmp_path, (tmp_path / "users.toml").read_text().replace(
                'name = "bob"\ngroups = ["release"]', 'name = "bob"\ngroups = []'))  # fmt: skip
            gone = await http.post(bob["Approve"])
            assert gone.status_code == 403 and "Only ada, group:release may answer" in gone.text
            # ada's address changes: the links sent to the old one no longer answer
            write_users(tmp_path, (tmp_path / "users.toml").read_text().replace(
                "ada@example.com", "ada@elsewhere.example"))  # fmt: skip
            moved = await http.post(ada["Approve"])
            assert moved.status_code == 403 and "no longer ada&#x27;s address" in moved.text
            write_users(tmp_path)
            clock.ahead = timedelta(days=400)  # past the question's expiry
            late = await http.post(ada["Approve"])
            assert late.status_code == 410 and "expired" in late.text
            clock.ahead = timedelta()
            huge = await http.post(ada["Approve"], content=b"text=" + b"x" * 70_000)
            assert huge.status_code == 413
            cross = await http.post(ada["Approve"], headers={"origin": "https://evil.example"})
            assert cross.status_code == 403
            assert await _pending(running, run_id), "nothing was stored"
            ok = await http.post(ada["Approve"], headers={"origin": running.base_url[:-6]})
            assert ok.status_code == 200, ok.text
        assert await running.settled(run_id) is RunStatus.FINISHED


async def test_a_question_naming_no_approvers_goes_to_the_to_list(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    async with email_host(store, tmp_path, mail, to=("cy",)) as running:
        run_id = await running.start("open: Any <i>notes</i>?")
        [cy] = await mail.mailbox.wait(1)
        assert cy.to == ("cy@example.com",)
        links = cy.links()
        assert list(links) == ["Answer"]
        async with client() as http:
            sent = await http.post(links["Answer"], data={"text": "Ship on Friday"})
            assert sent.status_code == 200, sent.text
        assert await running.settled(run_id) is RunStatus.FINISHED
        answer = (await store.get_interaction(run_id, "int-c1")).answer
        assert answer is not None and answer.payload == {"answer": "Ship on Friday"}


async def test_reminders_and_escalations_mail_again(
    mail: MailServer, store: SQLiteStore, tmp_path: Path
) -> None:
    async with email_host(store, tmp_path, mail) as running:
        run_id = await running.start("urgent: Rotate the keys?")
        await mail.mailbox.wait(2)
        asked = (await store.get_interaction(run_id, "int-c1")).requested_at
        # what the hosts' reminder sweep writes, an hour on and four hours on
        await remind_due(store, now=asked + timedelta(hours=1, seconds=1))
        mails = await mail.mailbox.wait(4)
        reminders = [m for m in mails if m.subject.startswith("Reminder: ")]
        assert sorted(m.to for m in reminders) == [("ada@example.com",), ("bob@example.com",)]
        assert "A reminder: this still waits for an answer." in reminders[0].part("plain")
        await remind_due(store, now=asked + timedelta(hours=4, seconds=1))
        # the fourth hour: cy is told of the escalation, and all three are reminded again
        mails = await mail.mailbox.wait(8)
        escalated = [m for m in mails if "This was escalated to you" in m.part("plain")]
        assert [m.to for m in escalated] == [("cy@example.com",)]
        again = sorted(m.to for m in mails[4:] if m.subject.startswith("Reminder: "))
        assert again == [("ada@example.com",), ("bob@example.com",), ("cy@example.com",)]
        async with client() as http:  # cy may answer now: the confirmation shows
            shown = await http.get(escalated[0].links()["Approve"])
            assert shown.status_code == 200 and "as <strong>cy</strong>" in shown.text
        async with client() as http:  # a mail after the answer: no reminder for a closed one
            assert (await http.post(mails[0].links()["Approve"])).status_code == 200
        assert await running.settled(run_id) is RunStatus.FINISHED
        assert await remind_due(store, now=asked + timedelta(hours=6, seconds=1)) == []
        latest = await store.latest_cursor()
        assert await running.host.consumer.reached(latest, within=10)
        assert len(mail.mailbox.mails) == 8
