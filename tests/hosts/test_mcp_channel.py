"""The elicitation channel in the chain: where it sits, when it claims, how long it waits, and
an abort told from a tool's own cancellation. The client is played by a fake ``elicit``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest

from hosts.mcp import (
    ElicitationChannel,
    ElicitationReply,
    ElicitationTimeout,
    elicitation_timeout,
    mcp_channels,
)
from interactions import (
    DECLINED_TEXT,
    UNAVAILABLE_TEXT,
    Declined,
    InteractionAborted,
    ask_user_approval,
    ask_user_question,
)
from interactions.channels import Channel

pytestmark = pytest.mark.anyio

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@dataclass
class FakeClient:
    """Replies from a script; ``None`` hangs until cancelled; ``"timeout"`` times out."""

    replies: list[ElicitationReply | str | None]
    sent: list[tuple[str, dict[str, Any], float]] = field(default_factory=list)
    waiting: anyio.Event = field(default_factory=anyio.Event)

    async def elicit(
        self, message: str, schema: dict[str, Any], timeout: float
    ) -> ElicitationReply:
        self.sent.append((message, schema, timeout))
        reply = self.replies.pop(0)
        if reply == "timeout":
            raise ElicitationTimeout("no reply")
        if reply is None:
            self.waiting.set()
            await anyio.sleep_forever()
        assert isinstance(reply, ElicitationReply)
        return reply


@dataclass
class Ctx:
    """A host's tool context: no UI, its own chain, an abort flag."""

    interaction_channels: tuple[Channel, ...]
    env: dict[str, str] = field(default_factory=dict)
    aborted: bool = False
    has_ui: bool = False
    mode: str = "mcp"
    ui: None = None


def context(client: FakeClient, *, available: bool = True, **env: str) -> Ctx:
    return Ctx(mcp_channels(ElicitationChannel(client.elicit, available)), env=dict(env))


def test_the_channel_sits_before_the_interrupt() -> None:
    chain = mcp_channels(ElicitationChannel(FakeClient([]).elicit, True))
    assert [c.name for c in chain] == [
        "auto_resolve_scope",
        "auto_approve_flag",
        "dialog",
        "mcp_elicitation",
        "interrupt",
        "unavailable",
    ]


@pytest.mark.parametrize(
    ("timeout", "expires_at", "expected"),
    [
        (None, "2030-01-01T00:00:10Z", 10.0),
        (3.0, "2030-01-01T00:00:10Z", 3.0),
        (30.0, "2030-01-01T00:00:10+00:00", 10.0),
        (None, "2029-12-31T23:59:59Z", 0.001),
        (2.5, None, 2.5),
        (None, None, math.inf),
    ],
)
def test_an_elicitation_waits_until_the_ask_expires(
    timeout: float | None, expires_at: str | None, expected: float
) -> None:
    assert elicitation_timeout(timeout, expires_at, now=NOW) == expected


async def test_the_form_goes_out_with_the_expiry_as_its_timeout() -> None:
    client = FakeClient([ElicitationReply("accept", {"answer": "Blue"})])
    expires = datetime.now(UTC) + timedelta(minutes=5)
    result = await ask_user_question(
        "Colour?",
        options=["Red", "Blue"],
        expires_at=expires,
        tool_call_id="t1",
        ctx=context(client),
    )
    assert result.text == "Answer: Blue"
    ((message, schema, timeout),) = client.sent
    assert message == "Colour?"
    assert schema["properties"]["answer"]["oneOf"][1] == {"const": "Blue", "title": "Blue"}
    assert 290 < timeout <= 300


async def test_a_caller_timeout_shortens_the_wait() -> None:
    client = FakeClient([ElicitationReply("decline")])
    await ask_user_question("Colour?", timeout=4, tool_call_id="t1", ctx=context(client))
    assert client.sent[0][2] == 4


async def test_a_timeout_is_a_decline() -> None:
    result = await ask_user_approval(
        title="Go?", tool_call_id="t1", ctx=context(FakeClient(["timeout"]))
    )
    assert (result.outcome, result.text) == (Declined(reason="timeout"), DECLINED_TEXT)


async def test_without_the_capability_the_ask_falls_through() -> None:
    client = FakeClient([])
    ctx = context(client, available=False)
    result = await ask_user_question("Colour?", tool_call_id="t1", ctx=ctx)
    assert result.text == UNAVAILABLE_TEXT
    paused = await ask_user_question(
        "Colour?", tool_call_id="t2", ctx=context(client, available=False, PI_INTERRUPT_RESUME="1")
    )
    assert paused.outcome.type == "awaiting_user"
    assert client.sent == []


async def test_the_auto_approve_flag_answers_first() -> None:
    client = FakeClient([])
    ctx = context(client, PI_ASK_USER_AUTO_APPROVE="1")
    result = await ask_user_approval(title="Go?", tool_call_id="t1", ctx=ctx)
    assert result.text == "Approved."
    assert client.sent == []


async def test_a_cancellation_of_the_aborted_call_raises_interaction_aborted() -> None:
    client = FakeClient([None])
    ctx = context(client)
    caught: list[BaseException] = []

    async def ask() -> None:
        try:
            await ask_user_question("Colour?", tool_call_id="t1", ctx=ctx)
        except InteractionAborted as exc:
            caught.append(exc)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ask)
        with anyio.fail_after(5):
            await client.waiting.wait()
        ctx.aborted = True
        tasks.cancel_scope.cancel()
    (error,) = caught
    assert isinstance(error, InteractionAborted)
    assert error.tool_call_id == "t1"


async def test_a_tools_own_timeout_around_the_ask_stays_a_cancellation() -> None:
    client = FakeClient([None])
    with anyio.move_on_after(0.05) as scope:
        await ask_user_question("Colour?", tool_call_id="t1", ctx=context(client))
    assert scope.cancelled_caught
