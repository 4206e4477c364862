"""The channel chain: order, flag parsing, and the whole matrix of facts."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from interactions import (
    DECLINED_TEXT,
    UNAVAILABLE_TEXT,
    Answered,
    AnsweredMultiple,
    Approved,
    AskUserOutcome,
    AwaitingUser,
    ContractError,
    Declined,
    UsageError,
    ask_user,
    ask_user_approval,
    ask_user_question,
    auto_resolve_interactions,
)
from interactions.asks import AskUserRequest, QuestionRequest
from interactions.async_questions import answered_at_once
from interactions.channels import DEFAULT_CHANNELS, AskCall, ChannelFacts, flag_on
from interactions.testing.dialogs import ScriptedDialogUI, StaticToolContext

pytestmark = pytest.mark.anyio

FLAG_VALUES = [
    (None, False),
    ("", False),
    ("   ", False),
    ("0", False),
    (" 0 ", False),
    ("false", False),
    ("FALSE", False),
    (" False\t", False),
    ("1", True),
    ("true", True),
    ("yes", True),
    ("on", True),
    ("no", True),  # anything but the off-values is on
    ("00", True),
    ("f", True),
]


@pytest.mark.parametrize(("value", "expected"), FLAG_VALUES)
def test_flag_parsing(value: str | None, expected: bool) -> None:
    assert flag_on(value) is expected


@pytest.mark.parametrize("flag", ["PI_ASK_USER_AUTO_APPROVE", "PI_INTERRUPT_RESUME"])
@pytest.mark.parametrize("value", [True, False, 1, 0, 0.0])
async def test_a_flag_that_is_not_text_is_refused_not_guessed(flag: str, value: object) -> None:
    env: Any = {flag: value}  # create_agent_session(env={"PI_INTERRUPT_RESUME": True}), say
    ui = ScriptedDialogUI(["Approve"])
    with pytest.raises(ContractError, match=f"{flag}={value!r} .* give '1' \\(on\\) or '0'"):
        await ask_user_approval(
            title="Go?", tool_call_id="t1", ctx=StaticToolContext(ui=ui, env=env)
        )
    assert ui.calls == []
    if flag == "PI_ASK_USER_AUTO_APPROVE":
        with pytest.raises(ContractError, match=flag):
            answered_at_once(env)


async def test_a_ttl_given_as_a_number_is_read_as_its_text() -> None:
    env: Any = {"PI_INTERRUPT_RESUME": "1", "PI_INTERRUPT_TTL_SECONDS": 3600}
    result = await ask_user_approval(title="Go?", tool_call_id="t1", ctx=StaticToolContext(env=env))
    assert result.outcome.type == "awaiting_user"
    for bad in (True, 0):
        with pytest.raises(ContractError, match="PI_INTERRUPT_TTL_SECONDS"):
            await ask_user_approval(
                title="Go?",
                tool_call_id="t1",
                ctx=StaticToolContext(env={**env, "PI_INTERRUPT_TTL_SECONDS": bad}),
            )


def _env(auto_approve: bool, interrupt: bool) -> dict[str, str]:
    env: dict[str, str] = {}
    if auto_approve:
        env["PI_ASK_USER_AUTO_APPROVE"] = "1"
    if interrupt:
        env["PI_INTERRUPT_RESUME"] = "true"
    return env


def _expected(kind: str, scope: bool, auto_approve: bool, has_ui: bool, interrupt: bool) -> str:
    if scope or auto_approve:
        return "approved" if kind == "approval" else "declined"
    if has_ui:
        return "approved" if kind == "approval" else "answered"
    return "awaiting_user" if interrupt else "unavailable"


@pytest.mark.parametrize("kind", ["question", "approval"])
@pytest.mark.parametrize(
    ("scope", "auto_approve", "has_ui", "interrupt"),
    list(itertools.product([False, True], repeat=4)),
)
async def test_channel_matrix(
    kind: str, scope: bool, auto_approve: bool, has_ui: bool, interrupt: bool
) -> None:
    ui = ScriptedDialogUI(["Approve"] if kind == "approval" else ["blue"])
    ctx = StaticToolContext(ui=ui if has_ui else None, mode="tui")
    env = _env(auto_approve, interrupt)

    async def ask() -> AskUserOutcome:
        if kind == "approval":
            result = await ask_user_approval(title="Ship it?", tool_call_id="t1", ctx=ctx, env=env)
        else:
            result = await ask_user_question("Colour?", tool_call_id="t1", ctx=ctx, env=env)
        return result.outcome

    if scope:
        with auto_resolve_interactions():
            outcome = await ask()
    else:
        outcome = await ask()

    assert outcome.type == _expected(kind, scope, auto_approve, has_ui, interrupt)
    shown = has_ui and not (scope or auto_approve)
    assert bool(ui.calls) is shown, "a dialog is shown only when the dialog channel answers"


async def test_auto_resolved_question_is_a_decline_not_an_error() -> None:
    result = await ask_user_question(
        "Colour?", tool_call_id="t1", ctx=StaticToolContext(), env={"PI_ASK_USER_AUTO_APPROVE": "1"}
    )
    assert result.text == DECLINED_TEXT
    assert isinstance(result.outcome, Declined)
    assert result.outcome.reason == "auto"


async def test_the_context_environment_decides_not_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PI_ASK_USER_AUTO_APPROVE", "yes")  # the process says approve...
    result = await ask_user_approval(title="Go?", tool_call_id="t1", ctx=StaticToolContext())
    assert result.text == UNAVAILABLE_TEXT  # ...the session's environment (empty) does not
    paused = await ask_user_approval(
        title="Go?",
        tool_call_id="t2",
        ctx=StaticToolContext(env={"PI_INTERRUPT_RESUME": "1"}),
    )
    assert paused.outcome.type == "awaiting_user"


async def test_explicit_env_wins_over_the_context() -> None:
    ctx = StaticToolContext(env={"PI_ASK_USER_AUTO_APPROVE": "yes"})
    result = await ask_user_approval(title="Go?", tool_call_id="t1", ctx=ctx, env={})
    assert result.text == UNAVAILABLE_TEXT


async def test_a_host_that_can_pause_pauses_without_the_flag() -> None:
    result = await ask_user_approval(
        title="Go?", tool_call_id="t1", ctx=StaticToolContext(can_pause=True)
    )
    assert result.outcome.type == "awaiting_user"


@dataclass(frozen=True)
class _NoEnvContext:
    has_ui: bool = False
    mode: str = "print"
    ui: None = None


async def test_a_context_without_environment_is_refused_loudly() -> None:
    with pytest.raises(UsageError, match="carries no environment"):
        await ask_user_approval(title="Go?", tool_call_id="t1", ctx=_NoEnvContext())  # type: ignore[arg-type]


async def test_auto_resolve_scope_is_inherited_by_child_tasks_and_ends_with_the_block() -> None:
    ctx = StaticToolContext()
    outcomes: list[str] = []

    async def child() -> None:
        result = await ask_user_approval(title="Go?", tool_call_id="c1", ctx=ctx, env={})
        outcomes.append(result.outcome.type)

    with auto_resolve_interactions():
        async with anyio.create_task_group() as tg:
            tg.start_soon(child)
    after = await ask_user_approval(title="Go?", tool_call_id="c2", ctx=ctx, env={})
    assert outcomes == ["approved"]
    assert after.outcome.type == "unavailable"


async def test_auto_resolve_as_a_decorator_of_a_coroutine_function_scopes_its_whole_run() -> None:
    ctx = StaticToolContext()

    @auto_resolve_interactions()
    async def child_agent(call_id: str) -> str:
        await anyio.lowlevel.checkpoint()  # the scope lasts past the first await
        result = await ask_user_approval(title="Go?", tool_call_id=call_id, ctx=ctx, env={})
        return result.outcome.type

    assert await child_agent("c1") == "approved"
    assert child_agent.__name__ == "child_agent"
    after = await ask_user_approval(title="Go?", tool_call_id="c2", ctx=ctx, env={})
    assert after.outcome.type == "unavailable"


async def test_interactive_false_keeps_the_dialog_out() -> None:
    ui = ScriptedDialogUI()
    result = await ask_user_question(
        "Colour?",
        tool_call_id="t1",
        ctx=StaticToolContext(ui=ui),
        interactive=False,
        env={"PI_INTERRUPT_RESUME": "1"},
    )
    assert result.outcome.type == "awaiting_user"
    assert ui.calls == []


async def test_context_without_ui_now_is_not_asked() -> None:
    ui = ScriptedDialogUI()
    ctx = StaticToolContext(ui=ui, ui_available=False)
    result = await ask_user_question("Colour?", tool_call_id="t1", ctx=ctx, env={})
    assert result.outcome.type == "unavailable"
    assert ui.calls == []


@dataclass(frozen=True)
class _SlackChannel:
    """A host channel answering every question with a fixed answer."""

    name: str = "slack"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return isinstance(request, QuestionRequest) and not facts.auto_approve

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        return Declined(reason="dismissed")


async def test_host_channel_inserted_before_the_defaults() -> None:
    channels = (*DEFAULT_CHANNELS[:2], _SlackChannel(), *DEFAULT_CHANNELS[2:])
    request = QuestionRequest(question="Colour?")
    result = await ask_user(
        request,
        tool_call_id="t1",
        ctx=StaticToolContext(),
        env={"PI_INTERRUPT_RESUME": "1"},
        channels=channels,
    )
    assert result.outcome == Declined(reason="dismissed")
    # Approvals are not claimed by the host channel and fall through to the interrupt.
    approval = await ask_user_approval(
        title="Go?", tool_call_id="t2", ctx=StaticToolContext(), env={"PI_INTERRUPT_RESUME": "1"}
    )
    assert approval.outcome.type == "awaiting_user"


@dataclass(frozen=True)
class _HostContext:
    """A host's tool context that brings its own channel chain."""

    interaction_channels: tuple[object, ...]
    has_ui: bool = False
    mode: str = "json"
    ui: None = None
    env: dict[str, str] = field(default_factory=dict)


async def test_context_channels_replace_the_default_chain() -> None:
    ctx = _HostContext(interaction_channels=(_SlackChannel(), *DEFAULT_CHANNELS))
    result = await ask_user_question("Colour?", tool_call_id="t1", ctx=ctx, env={})
    assert result.outcome == Declined(reason="dismissed")
    default = await ask_user_question("Colour?", tool_call_id="t1", ctx=StaticToolContext(), env={})
    assert default.outcome.type == "unavailable"


@dataclass
class _RecordingChannel:
    """A host channel that notes the calls it resolves."""

    calls: list[AskCall] = field(default_factory=list)
    name: str = "recording"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return True

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        self.calls.append(call)
        return Declined(reason="dismissed")


@dataclass
class _SayingChannel:
    """A host channel that resolves every ask with ``outcome``, whatever it asks."""

    outcome: Any
    name: str = "saying"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return True

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        return self.outcome  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("outcome", "said"),
    [
        (Approved(), "resolved a question (single) as 'approved'"),
        (AnsweredMultiple(answers=("Red",)), "as 'answered_multiple'"),
        (AwaitingUser(interrupt_id="int-OTHER"), "paused on 'int-OTHER', but the ask is 'int-t1'"),
        (Answered(answer="Mauve"), "answered 'Mauve', which is none of the options' answers"),
    ],
)
async def test_what_a_host_channel_resolves_is_checked_against_the_ask(
    outcome: Any, said: str
) -> None:
    """Each was taken: a question read "Approved.", a pause pointed at another interrupt."""
    ctx = _HostContext(interaction_channels=(_SayingChannel(outcome),))
    with pytest.raises(ContractError, match=re.escape(said)):
        await ask_user_question(
            "Colour?", options=["Red", "Blue"], allow_other=False, tool_call_id="t1", ctx=ctx
        )
    fine = _HostContext(interaction_channels=(_SayingChannel(Answered(answer="Red")),))
    picked = await ask_user_question(
        "Colour?", options=["Red", "Blue"], allow_other=False, tool_call_id="t1", ctx=fine
    )
    assert picked.outcome == Answered(answer="Red")


async def test_a_channel_sees_the_expiry_of_the_ask() -> None:
    channel = _RecordingChannel()
    ctx = _HostContext(interaction_channels=(channel,))
    at = (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0)
    expires_at = at.isoformat().replace("+00:00", "Z")
    given = await ask_user_question("Colour?", expires_at=expires_at, tool_call_id="t1", ctx=ctx)
    defaulted = await ask_user_question("Colour?", tool_call_id="t2", ctx=ctx)
    assert [c.expires_at for c in channel.calls] == [
        given.details.interrupt.expires_at,
        defaulted.details.interrupt.expires_at,
    ]
    assert channel.calls[0].expires_at == expires_at
    assert channel.calls[1].expires_at is not None
