"""What starts a run (mentions, slash commands), the host's options and its secrets, pure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hosts.slack import AllowList, SlackConfig, SlackSecrets
from hosts.slack._events import (
    Mention,
    parse_command,
    parse_event,
    run_id_for,
    thread_id_for,
    thread_of,
)
from hosts.slack._mrkdwn import ELLIPSIS, escape, fit, unescape
from interactions import InvalidPayloadError, UsageError
from tests.hosts.slack.payloads import app_mention, slash_command


def test_a_mention_is_the_text_after_it_as_typed_in_its_thread() -> None:
    body = app_mention("<@UBOT> <@UBOT|pibot>  Release &lt;v1&gt; &amp; more", event_id="Ev1",
                       ts="5.5")  # fmt: skip
    assert parse_event(body) == Mention(
        event_id="Ev1", user="UALICE", channel="CRELEASE", prompt="Release <v1> & more",
        thread_ts="5.5",
    )  # fmt: skip
    in_thread = parse_event(app_mention("<@UBOT> go", ts="6.6", thread_ts="5.5"))
    assert in_thread is not None and in_thread.thread_ts == "5.5"
    assert parse_event(app_mention("<@UBOT>")) is not None  # an empty prompt: told how, later


def test_other_events_and_bots_start_nothing() -> None:
    bot = app_mention("<@UBOT> loop")
    bot["event"]["bot_id"] = "B1"
    edited = app_mention("<@UBOT> edit")
    edited["event"]["subtype"] = "message_changed"
    reaction = app_mention("x")
    reaction["event"]["type"] = "reaction_added"
    for body in (bot, edited, reaction, {"type": "url_verification"}, {"type": "event_callback"}):
        assert parse_event(body) is None


@pytest.mark.parametrize("missing", ["user", "channel", "ts"])
def test_a_mention_missing_a_field_is_refused(missing: str) -> None:
    body = app_mention("<@UBOT> go")
    body["event"].pop(missing)
    with pytest.raises(InvalidPayloadError):
        parse_event(body)


def test_slash_commands_and_thread_ids() -> None:
    command = parse_command(slash_command("Release &lt;v2&gt;"))
    assert (command.command, command.text, command.user, command.channel) == (
        "/release", "Release <v2>", "UALICE", "CRELEASE",
    )  # fmt: skip
    with pytest.raises(InvalidPayloadError):
        parse_command({"text": "x"})
    assert thread_of(thread_id_for("C1", "1700000000.000100")) == ("C1", "1700000000.000100")
    for other in ("thread-abc", "slack:", "slack:C1", "slack:C1:", "slack:C 1:2", "slack:C1:2:3"):
        assert thread_of(other) is None
    assert run_id_for("Ev01ABC") == "run-slack-Ev01ABC"
    with pytest.raises(InvalidPayloadError):
        run_id_for("../../etc")


def test_the_allow_list_reads_users_groups_and_channel_members() -> None:
    allow = AllowList.parse(["UALICE,W0BOB", " S0REL ", "channel", ""])
    assert allow == AllowList(frozenset({"UALICE", "W0BOB"}), frozenset({"S0REL"}), True)
    assert not allow.open and AllowList.parse([]).open
    assert allow.describe() == "UALICE, W0BOB, members of S0REL, members of the card's channel"
    with pytest.raises(UsageError, match="'@alice'"):
        AllowList.parse(["@alice"])


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"channel": "#releases"}, "channel id"),
        ({"command": "release"}, "slash command"),
        ({"expire_every": 0}, "expire-every"),
        ({"full_text_url": "https://x/{run}"}, "placeholders"),
        ({"max_legs": 0}, "max_legs"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], complaint: str) -> None:
    with pytest.raises(UsageError, match=complaint):
        SlackConfig(recipe="r.py", **options)  # type: ignore[arg-type]


SECRET = "xoxb-" + "s3cr3t" * 4


def test_secrets_come_from_the_environment_and_are_never_shown() -> None:
    env = {"SLACK_BOT_TOKEN": SECRET, "SLACK_APP_TOKEN": "xapp-abc", "SLACK_SIGNING_SECRET": "sig"}
    secrets = SlackSecrets.from_env(env, socket_mode=True, http=True)
    assert (secrets.bot_token, secrets.app_token, secrets.signing_secret) == (
        SECRET, "xapp-abc", "sig",
    )  # fmt: skip
    assert SECRET not in repr(secrets) and "sig" not in repr(secrets)
    with pytest.raises(UsageError, match="SLACK_APP_TOKEN") as missing:
        SlackSecrets.from_env({"SLACK_BOT_TOKEN": SECRET}, socket_mode=True, http=False)
    assert SECRET not in str(missing.value)
    with pytest.raises(UsageError, match="SLACK_SIGNING_SECRET"):
        SlackSecrets.from_env({"SLACK_BOT_TOKEN": SECRET}, socket_mode=False, http=True)
    with pytest.raises(UsageError, match="SLACK_BOT_TOKEN must be a token starting") as wrong:
        SlackSecrets.from_env({"SLACK_BOT_TOKEN": "xapp-" + SECRET}, socket_mode=False, http=False)
    assert SECRET not in str(wrong.value)


@given(st.text(), st.integers(min_value=2, max_value=400))
def test_fit_escapes_and_cuts_never_inside_an_entity(text: str, limit: int) -> None:
    shown, cut = fit(text, limit)
    assert len(shown) <= limit
    assert cut == (len(escape(text)) > limit)
    if not cut:
        assert unescape(shown) == text
    else:
        assert shown.endswith(ELLIPSIS)
        body = shown[: -len(ELLIPSIS)]
        assert text.startswith(unescape(body).rstrip()) or not body
        assert "<" not in body and ">" not in body
        assert body.count("&") == body.count("&amp;") + body.count("&lt;") + body.count("&gt;")
