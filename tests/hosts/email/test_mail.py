"""A question as a mail, pure: one line of subject whatever the question holds (no header
can be added), every text of the HTML escaped."""

from __future__ import annotations

from datetime import UTC, datetime

from hosts.email._mail import Choice, Recipient, compose
from interactions.store import InteractionRecord


def test_a_mail_s_subject_is_one_line_and_its_html_escaped() -> None:
    at = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    record = InteractionRecord(
        run_id="run-1", id="int-a", tool_call_id="a", requested_at=at, expires_at=at,
        descriptor={"reason": "question", "message": "Ship?\r\nBcc: evil@example.com <img src=x>"},
    )  # fmt: skip
    to = Recipient("ada", "ada@example.com")
    mail = compose(record, to, "pi@example.com", [Choice("<b>Yes</b>", "https://x/answer/t")],
                   page=None)  # fmt: skip
    assert mail["Subject"] == "Question: Ship? Bcc: evil@example.com <img src=x>"
    assert mail["Bcc"] is None and mail["To"] == "ada@example.com"
    html = mail.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert "<img" not in html and "&lt;img src=x&gt;" in html and "&lt;b&gt;Yes" in html
    text = mail.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert "  <b>Yes</b>: https://x/answer/t" in text
