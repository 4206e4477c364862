"""What a webhook says: the Standard Webhooks signature (the spec's own example), the secret's
form (a bad one is refused without being quoted), which events post what, the consumer's name,
and the command line's webhook settings."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from hosts._kit import WEBHOOK_SECRET_ENV, WebhookSecret, webhooks_from
from hosts._kit._webhooks import consumer_name, message_for, webhook_type
from interactions import UsageError
from interactions.store import EventRecord, InteractionRecord
from tests.hosts.kit.webhook_receiver import verify

SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_the_signature_is_the_specs_example() -> None:
    secret = WebhookSecret(SPEC_SECRET)
    body = b'{"test": 2432232314}'
    signature = secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    headers = secret.headers("msg_1", AT, body)
    assert headers["webhook-timestamp"] == str(int(AT.timestamp()))
    assert verify(SPEC_SECRET, headers, body)
    assert not verify(SPEC_SECRET, headers, body + b" ")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",  # no prefix
        "whsec_",
        "whsec_not base64!",
        "whsec_c2hvcnQ=",  # 5 bytes
        "whsec_" + "A" * 120,  # 90 bytes
    ],
)
def test_a_bad_secret_is_refused_without_quoting_it(text: str) -> None:
    with pytest.raises(UsageError) as refused:
        WebhookSecret(text)
    if text.removeprefix("whsec_"):
        assert text.removeprefix("whsec_") not in str(refused.value)


def test_a_secret_hides_itself_and_a_new_one_is_random() -> None:
    secret = WebhookSecret(f"  {SPEC_SECRET}\n")  # as a file holds it
    assert "MfKQ" not in repr(secret) and "MfKQ" not in str(secret)
    assert WebhookSecret.generate().sign("a", 1, b"") != WebhookSecret.generate().sign("a", 1, b"")


def _event(type_: str, **data: object) -> EventRecord:
    return EventRecord(run_id="run-1", seq=3, cursor=42, type=type_, data=data, at=AT)


def _record(kind: str = "") -> InteractionRecord:
    return InteractionRecord(
        run_id="run-1", id="int-a", node_id="", tool_call_id="a", kind=kind,
        requested_at=AT, expires_at=AT, descriptor={"message": "Deploy?"},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (_event("interaction_requested", interaction_id="int-a"), "interaction.opened"),
        (_event("interaction_voted", interaction_id="int-a", voter="ada"), "interaction.voted"),
        (_event("interaction_answered", interaction_id="int-a", status="resolved"),
         "interaction.answered"),
        (_event("interaction_answered", interaction_id="int-a", status="expired"),
         "interaction.expired"),
        (_event("interaction_answered", interaction_id="int-a", status="cancelled"),
         "interaction.cancelled"),
        (_event("interaction_reminded", interaction_id="int-a"), "interaction.reminded"),
        (_event("interaction_escalated", interaction_id="int-a"), "interaction.escalated"),
        (_event("run_created"), None),
        (_event("run_status_changed", to="finished"), None),
        (_event("leg_ended"), None),
    ],
)  # fmt: skip
def test_which_events_post_what(event: EventRecord, expected: str | None) -> None:
    assert webhook_type(event) == expected
    message = message_for(event, _record())
    assert (message and message.type) == expected


def test_a_message_is_the_event_with_a_stable_id_and_the_question_when_opened() -> None:
    opened = message_for(_event("interaction_requested", interaction_id="int-a"), _record())
    assert opened is not None
    assert (opened.id, opened.run_id, opened.interaction_id, opened.at) == (
        "evt_42", "run-1", "int-a", AT,
    )  # fmt: skip
    assert opened.data == {"interaction_id": "int-a", "question": {"message": "Deploy?"}}
    assert (
        opened.body()
        == message_for(_event("interaction_requested", interaction_id="int-a"), _record()).body()
    )  # type: ignore[union-attr]
    await_wait = _event("interaction_answered", interaction_id="int-a", status="resolved")
    assert message_for(await_wait, _record(kind="await")) is None, "the run's own wait"
    assert message_for(_event("interaction_answered", status="resolved"), None) is None


def test_a_consumer_is_named_by_its_host_and_a_hash_of_the_url() -> None:
    name = consumer_name("https://user:pw@hooks.example/in?token=abc")
    assert name.startswith("webhook:hooks.example:") and "pw" not in name and "abc" not in name
    assert name == consumer_name("https://user:pw@hooks.example/in?token=abc")
    assert name != consumer_name("https://user:pw@hooks.example/in?token=abd")
    for bad in ("ftp://hooks.example/", "hooks.example/in", "https:///nohost"):
        with pytest.raises(UsageError):
            consumer_name(bad)


def test_webhook_settings_need_a_secret(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/hook"
    assert webhooks_from([], None, {}) == []
    with pytest.raises(UsageError, match=WEBHOOK_SECRET_ENV):
        webhooks_from([url], None, {})
    [hook] = webhooks_from([url, url], None, {WEBHOOK_SECRET_ENV: SPEC_SECRET})
    assert hook.url == url and "MfKQ" not in repr(hook)
    kept = tmp_path / "secret"
    kept.write_text(SPEC_SECRET + "\n")
    assert len(webhooks_from([url, url + "2"], str(kept), {})) == 2
    with pytest.raises(UsageError, match="cannot read"):
        webhooks_from([url], str(tmp_path / "missing"), {})
    with pytest.raises(UsageError):
        webhooks_from(["mailto:ops@example"], str(kept), {})
