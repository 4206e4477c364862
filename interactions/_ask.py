"""The ask helpers a tool calls: ``ask_user_question``, ``ask_user_approval`` and ``ask_user``.

What a tool author relies on, on every channel:

- The session's environment (``ctx.env``) decides the channel; ``env=`` is an explicit
  override, and the process environment is never read behind the context's back.
- By default a tool asks once and returns what the ask returned. In a durable run the answer
  then *becomes the tool's result*: the tool body is not run again, so code after the ask does
  not run on resume. A tool that must ask several things in turn, or act after the answer,
  declares ``resume="replay"``: on resume its body runs again from the top and each ask,
  matched by its position in the call, returns the stored answer at once (code before an ask
  runs again: keep it idempotent).
- Once an ask came back ``awaiting_user``, the tool must return that result: asking again, or
  returning something else, raises :class:`~interactions.ContractError` and fails the run
  rather than skip a human.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from interactions._asks import ROOT_SCOPE, AskLedger
from interactions._chain import AskCall, Channel, context_now, gather_facts, select_channel
from interactions._channels import DEFAULT_CHANNELS, UnavailableChannel
from interactions._context import ToolContextLike
from interactions._errors import ContractError, UsageError
from interactions._format import format_interaction_outcome
from interactions._models import (
    Answered,
    AnsweredMultiple,
    ApprovalRequest,
    AskUserDetails,
    AskUserDisplay,
    AskUserInterrupt,
    AskUserOption,
    AskUserOutcome,
    AskUserRequest,
    AskUserResult,
    AskUserSection,
    AwaitingUser,
    QuestionRequest,
    Selection,
    TextContent,
)
from interactions._payloads import response_schema_for
from interactions._people import people_metadata
from interactions._reach import check_reach_window, reach_metadata
from interactions.store._records import iso_seconds

__all__ = [
    "DEFAULT_INTERRUPT_TTL",
    "INTERRUPT_TTL_ENV",
    "OptionLike",
    "ask_user",
    "ask_user_approval",
    "ask_user_question",
    "interrupt_ttl",
    "normalize_options",
]

DEFAULT_INTERRUPT_TTL = timedelta(days=7)
"""How long an interrupt waits when the caller gives no ``expires_at``."""
INTERRUPT_TTL_ENV = "PI_INTERRUPT_TTL_SECONDS"
"""Environment variable overriding :data:`DEFAULT_INTERRUPT_TTL` (seconds, > 0)."""

OptionLike = str | AskUserOption | Mapping[str, Any]


def normalize_options(options: Iterable[OptionLike] | None) -> tuple[AskUserOption, ...]:
    """Options as models: strings become labels, labels are trimmed.

    Raises :class:`UsageError` for an empty label, a duplicate label, a blank value, or an
    option of another type.
    """
    if options is None:
        return ()
    if isinstance(options, str | bytes | Mapping):
        raise UsageError("options must be a list of labels or AskUserOption, not a single value")
    normalized: list[AskUserOption] = []
    for index, option in enumerate(options):
        try:
            if isinstance(option, AskUserOption):
                normalized.append(option)  # validated (and trimmed) when it was built
            elif isinstance(option, str):
                normalized.append(AskUserOption(label=option))
            elif isinstance(option, Mapping):
                normalized.append(AskUserOption.model_validate(dict(option)))
            else:
                raise UsageError(f"option {index} is a {type(option).__name__}; expected a str")
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise UsageError(f"option {index}: {message}") from None
    labels = [o.label for o in normalized]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise UsageError(f"option labels must be unique; repeated: {duplicates}")
    for index, option in enumerate(normalized):
        if option.value is not None and not option.value.strip():
            raise UsageError(
                f"option {index} ({option.label!r}): a value must not be blank, as no answer "
                "is (a durable run could not take it); leave it out to answer with the label"
            )
    _check_unambiguous(normalized)
    return tuple(normalized)


def _check_unambiguous(options: Sequence[AskUserOption]) -> None:
    """Raise :class:`UsageError` unless every answer names one option's answer: an answer is
    matched by value, then by label ignoring case (``runs answer``, a web client...), and
    records the option's value (else its label). Options sharing a value are one answer under
    several labels, which is no ambiguity."""
    by_label: dict[str, AskUserOption] = {}
    for option in options:
        other = by_label.setdefault(option.label.casefold(), option)
        if other is not option:
            raise UsageError(
                f"option labels {other.label!r} and {option.label!r} differ only in case; an "
                "answer could mean either: make them differ in their words"
            )
    for option in options:
        named = by_label.get((option.value or "").casefold())
        if option.value is not None and named is not None and named.answer != option.answer:
            raise UsageError(
                f"option {option.label!r} has the value {option.value!r}, which is option "
                f"{named.label!r}'s label; an answer {option.value!r} could mean either: give "
                "it another value"
            )


_MAX_TTL = timedelta(days=3650)
_MIN_TTL = timedelta(milliseconds=1)


def interrupt_ttl(env: Mapping[str, str]) -> timedelta:
    """How long an interrupt waits in a session whose environment is ``env``.

    ``PI_INTERRUPT_TTL_SECONDS`` (a number of seconds written in ASCII digits, from a
    millisecond, less and the pause would expire before anyone could answer, to ten years) or
    :data:`DEFAULT_INTERRUPT_TTL`. Raises :class:`~interactions.ContractError` for any other
    value: a run must fail at its start rather than pause with a lifetime nobody chose.
    """
    given = env.get(INTERRUPT_TTL_ENV)
    raw = "" if given is None else str(given).strip()
    if not raw:
        return DEFAULT_INTERRUPT_TTL
    seconds = float(raw) if _SECONDS.fullmatch(raw) else math.nan
    if not _MIN_TTL.total_seconds() <= seconds <= _MAX_TTL.total_seconds():  # NaN fails too
        raise ContractError(
            f"{INTERRUPT_TTL_ENV}={raw!r} is not a number of seconds between "
            f"{_MIN_TTL.total_seconds():g} and {_MAX_TTL.total_seconds():.0f}; fix or unset it"
        )
    return timedelta(seconds=seconds)


_SECONDS = re.compile(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?")
"""A number as ``PI_INTERRUPT_TTL_SECONDS`` takes it: ASCII digits only (``float()`` also
reads ``'5_000'`` and other scripts' digits)."""


def _expires_at(value: datetime | str | None, env: Mapping[str, str], now: datetime) -> str:
    """The ask's expiry: ``value`` checked against ``now`` (the ask's now on the context's
    clock), or ``now`` plus the session's lifetime."""
    if value is None:
        when = now + interrupt_ttl(env)
    else:
        try:
            when = value if isinstance(value, datetime) else datetime.fromisoformat(value)
        except ValueError:
            raise UsageError(f"expires_at must be an ISO 8601 date-time, got {value!r}") from None
        if when.tzinfo is None:
            raise UsageError("expires_at must carry a time zone (for example +00:00 or Z)")
        try:
            when = when.astimezone(UTC)
        except OverflowError:  # 9999-12-31T23:59:59-05:00 is past the last date there is
            raise UsageError(f"expires_at {value!s} is past the year 9999") from None
        if when <= now:
            raise UsageError(f"expires_at {value!s} is in the past; give a future date-time")
        if when > now + _MAX_TTL:
            raise UsageError(
                f"expires_at {value!s} is more than ten years away; nothing waits that long"
            )
    return iso_seconds(when)  # the instant given: rounding down could expire it at once


def _as_text(value: datetime | str | None) -> str | None:
    """``expires_at`` as the request carries it; :func:`ask_user` validates it."""
    return value.isoformat() if isinstance(value, datetime) else value


async def ask_user(
    request: AskUserRequest,
    *,
    tool_call_id: str | None,
    ctx: ToolContextLike,
    interactive: bool | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    channels: Sequence[Channel] | None = None,
) -> AskUserResult:
    """Resolve ``request`` through the channel chain and return the result for the tool.

    The first channel that claims the ask answers it (see the design: auto-resolving scope,
    auto-approve flag, dialog, interrupt, unavailable). ``channels`` replaces the default
    chain; without it the context's ``interaction_channels`` attribute, if any, does.
    ``timeout`` bounds a dialog (RPC mode defaults to 120 s; the terminal waits).

    The environment is ``env`` when given, else the context's (``ctx.env``, the session's).
    "Now" is the context's clock (``ctx.clock``; the wall clock without one), read once: the
    interrupt expires at the request's ``expires_at`` (which must lie ahead of it) or at now
    plus the session's lifetime (:func:`interrupt_ttl`). When the context carries an ask
    ledger (``ctx.asks``, as the agent loop's does), the interrupt id is the ask's position in
    the ledger's scope and a replayed call gets its stored answer at once; otherwise it is
    ``int-<tool_call_id>``. An ask raised outside any tool call (a graph's human node) passes
    ``tool_call_id=None`` and a ledger naming its scope: its interrupt names no tool call.

    Returns an :class:`AskUserResult`. When its outcome is ``awaiting_user`` the tool must
    return it (the run pauses on ``details.interrupt``). Raises
    :class:`~interactions.InteractionAborted` when the turn is aborted during a dialog,
    :class:`~interactions.ContractError` for a second ask after a pause or a malformed
    ``PI_INTERRUPT_TTL_SECONDS``, and :class:`~interactions.UsageError` for arguments that can
    never work (a hand-built ``request`` is checked as the helpers check theirs).
    """
    _check_request(request)
    ledger: AskLedger | None = getattr(ctx, "asks", None)
    if not tool_call_id and ledger is None:
        raise UsageError("tool_call_id is required: pass the id your tool was called with")
    if timeout is not None and not 0 < timeout < math.inf:  # nan too: nothing waits for ever
        raise UsageError(
            f"timeout must be a positive, finite number of seconds, got {timeout!r} (leave it "
            "out for the channel's own bound)"
        )
    env = _environment(ctx, env)
    now = context_now(ctx)  # read once: the expiry and the channels measure from it
    if ledger is not None:
        interrupt_id, stored = ledger.next_ask()
    else:  # a tool's ask outside the agent loop: the call's first ask in the run's own scope
        assert tool_call_id
        interrupt_id, stored = ROOT_SCOPE.call(tool_call_id).interrupt_id(), None
    if ledger is not None and stored is not None and stored.outcome is not None:
        expires = stored.expires_at or _expires_at(None, env, now)
        result = _result(request, interrupt_id, tool_call_id, expires, stored.outcome)
        ledger.check_replayed(stored, result.details.interrupt)
        ledger.record(result)
        return result
    expires_at = _expires_at(request.expires_at, env, now)
    check_reach_window(request.metadata, now, expires_at)
    facts = gather_facts(ctx, env, interactive, now=now)
    chain = channels if channels is not None else getattr(ctx, "interaction_channels", None)
    channel = select_channel(request, facts, chain or DEFAULT_CHANNELS) or UnavailableChannel()

    def aborted() -> bool:
        return bool(getattr(ctx, "aborted", False))

    call = AskCall(request, interrupt_id, tool_call_id, facts, ctx.ui, timeout, aborted, expires_at)
    outcome = await channel.resolve(call)
    _check_outcome(request, interrupt_id, outcome, channel)
    result = _result(request, interrupt_id, tool_call_id, expires_at, outcome)
    if ledger is not None:
        ledger.record(result)
    return result


_FITS = {
    "approval": ("approved", "revision_requested"),
    "single": ("answered",),
    "multiple": ("answered_multiple",),
}
"""The answers each kind of ask takes (any ask may also be declined, unavailable or awaiting)."""


def _check_outcome(
    request: AskUserRequest, interrupt_id: str, outcome: object, channel: object
) -> None:
    """Refuse what a channel (a host's own, among them) resolved that the ask cannot take: an
    answer of another kind (a question approved), one outside fixed options, or a pause on
    another interrupt. :class:`~interactions.ContractError`: the host's channel is at fault."""
    name = type(channel).__name__
    kind = "approval" if isinstance(request, ApprovalRequest) else request.selection
    said = getattr(outcome, "type", None)
    if said not in (*_FITS[kind], "declined", "unavailable", "awaiting_user"):
        raise ContractError(
            f"channel {name} resolved {'an approval' if kind == 'approval' else 'a question'} "
            f"({kind}) as {said!r}; it takes {', '.join(_FITS[kind])}, declined, unavailable "
            "or awaiting_user"
        )
    if isinstance(outcome, AwaitingUser) and outcome.interrupt_id != interrupt_id:
        raise ContractError(
            f"channel {name} paused on {outcome.interrupt_id!r}, but the ask is {interrupt_id!r}"
        )
    if isinstance(request, QuestionRequest) and request.options and not request.allow_other:
        allowed = {option.answer for option in request.options}
        given: list[str] = []
        if isinstance(outcome, Answered):
            given = [outcome.answer]
        elif isinstance(outcome, AnsweredMultiple):
            given = list(outcome.answers)
        outside = [answer for answer in given if answer not in allowed]
        if outside:
            raise ContractError(
                f"channel {name} answered {outside[0]!r}, which is none of the options' "
                f"answers {sorted(allowed)}, and the question takes no other"
            )


def _check_request(request: AskUserRequest) -> None:
    """Raise :class:`UsageError` for a request no channel could honour.

    The helpers build only requests that pass; :func:`ask_user` checks a hand-built one the
    same way, on every channel (an auto-resolved ask included): a non-empty question with
    unique option labels and no blank value, options whenever the answer must be one of them
    (``selection="multiple"`` or ``allow_other=False``); an approval that says what is to be
    approved, with a non-empty ``kind``.
    """
    if isinstance(request, QuestionRequest | ApprovalRequest):
        _check_kind(request)
    if isinstance(request, ApprovalRequest):
        texts = (request.title, request.body, request.message)
        if not any(text and text.strip() for text in texts):
            raise UsageError(
                "an approval needs a title, a body or a message saying what to approve"
            )
        if not request.kind.strip():
            raise UsageError("kind must be a non-empty string")
        return
    if not isinstance(request, QuestionRequest):
        raise UsageError(
            f"ask_user takes a QuestionRequest or an ApprovalRequest, got "
            f"{type(request).__name__}; or call ask_user_question / ask_user_approval"
        )
    if not request.question.strip():
        raise UsageError("question must be a non-empty string")
    normalize_options(request.options)  # unique labels, no blank value
    if not request.options and request.selection == "multiple":
        raise UsageError("selection='multiple' needs options to choose from")
    if not request.options and not request.allow_other:
        raise UsageError(
            "allow_other=False needs options to choose from: give options, or leave "
            "allow_other on for a typed answer"
        )


def _check_kind(request: QuestionRequest | ApprovalRequest) -> None:
    """The interrupt's ``metadata.kind`` is the ask's ``kind`` (hosts and stores read it there):
    metadata naming another one is refused, not overwritten in silence."""
    said = request.metadata.get("kind", request.kind)
    if said != request.kind:
        raise UsageError(
            f"metadata holds 'kind': {said!r}, but the ask's kind is {request.kind!r} (hosts "
            "read it from metadata.kind); pass kind= instead"
        )


def _environment(ctx: ToolContextLike, env: Mapping[str, str] | None) -> Mapping[str, str]:
    if env is not None:
        return env
    found = getattr(ctx, "env", None)
    if not isinstance(found, Mapping):
        raise UsageError(
            f"the tool context ({type(ctx).__name__}) carries no environment (ctx.env); give "
            "it the session's environment, or pass env= explicitly"
        )
    return found


def _result(
    request: AskUserRequest,
    interrupt_id: str,
    tool_call_id: str | None,
    expires_at: str,
    outcome: AskUserOutcome,
) -> AskUserResult:
    descriptor = _descriptor(request, interrupt_id, tool_call_id, expires_at, outcome)
    return AskUserResult(
        outcome=outcome,
        content=(TextContent(text=format_interaction_outcome(outcome)),),
        details=AskUserDetails(interrupt=descriptor),
    )


def _descriptor(
    request: AskUserRequest,
    interrupt_id: str,
    tool_call_id: str | None,
    expires_at: str,
    outcome: AskUserOutcome,
) -> AskUserInterrupt:
    if isinstance(request, ApprovalRequest):
        reason, message = "confirmation", request.message or request.title or "Approve?"
        options: tuple[AskUserOption, ...] = ()
        selection: Selection = "single"
        allow_other = False
        display: AskUserDisplay | None = AskUserDisplay(
            title=request.title, body=request.body, sections=request.sections
        )
    else:
        reason, message = "input_required", request.question
        options, selection = request.options, request.selection
        allow_other = request.allow_other or not request.options
        display = request.display or (
            AskUserDisplay(header=request.header) if request.header else None
        )
    return AskUserInterrupt(
        id=interrupt_id,
        reason=reason,
        message=message,
        tool_call_id=tool_call_id,
        response_schema=response_schema_for(request) if isinstance(outcome, AwaitingUser) else None,
        expires_at=expires_at,
        metadata={**request.metadata, "kind": request.kind},
        options=options,
        selection=selection,
        allow_other=allow_other,
        display=display,
        outcome=outcome,
    )


async def ask_user_question(
    question: str,
    *,
    options: Iterable[OptionLike] | None = None,
    header: str | None = None,
    selection: Selection = "single",
    allow_other: bool = True,
    metadata: Mapping[str, Any] | None = None,
    display: AskUserDisplay | Mapping[str, Any] | None = None,
    expires_at: datetime | str | None = None,
    approvers: Iterable[str] | None = None,
    remind_after: timedelta | float | None = None,
    escalate_after: timedelta | float | None = None,
    escalate_to: Iterable[str] | None = None,
    tool_call_id: str,
    ctx: ToolContextLike,
    interactive: bool | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> AskUserResult:
    """Ask the human a question: free text, one of ``options``, or several (``"multiple"``).

    ``approvers`` (names and ``group:NAME`` entries) limits who may answer it: every host
    refuses an answer by anyone else (:mod:`interactions.people`). ``remind_after`` (a
    ``timedelta`` or seconds) reminds its approvers every that long until it is answered or
    expires; ``escalate_after`` adds ``escalate_to`` as approvers, and notifies them, that long
    after the ask (:mod:`interactions.reminders`; the hosts' sweeps do both).

    Resolves to ``answered`` (the option's value, else its label, else the typed text),
    ``answered_multiple``, ``declined``, ``awaiting_user`` or ``unavailable`` — never
    ``approved``. Return an ``awaiting_user`` result from the tool: the run pauses, and on
    resume the answer becomes the tool's result (the body does not run again unless the tool
    is declared ``resume="replay"``; see :mod:`interactions`). Raises
    :class:`~interactions.UsageError` for an empty question, blank or repeated option labels,
    or ``selection="multiple"`` or ``allow_other=False`` without options, and for a
    reminder or an escalation that cannot work (a duration not above zero or due after the
    expiry, ``escalate_to`` without ``escalate_after`` or the reverse).
    """
    if not isinstance(question, str) or not question.strip():
        raise UsageError("question must be a non-empty string")
    if selection not in ("single", "multiple"):
        raise UsageError(f"selection must be 'single' or 'multiple', got {selection!r}")
    normalized = normalize_options(options)
    try:
        request = QuestionRequest(
            question=question.strip(),
            options=normalized,
            header=header,
            selection=selection,
            allow_other=allow_other,
            metadata=dict(metadata or {})
            | people_metadata(approvers)
            | reach_metadata(remind_after, escalate_after, escalate_to),
            display=AskUserDisplay.model_validate(display) if display is not None else None,
            expires_at=_as_text(expires_at),
        )
    except ValidationError as exc:
        raise UsageError(f"invalid question: {exc.errors()[0]['msg']}") from None
    return await ask_user(
        request,
        tool_call_id=tool_call_id,
        ctx=ctx,
        interactive=interactive,
        timeout=timeout,
        env=env,
    )


async def ask_user_approval(
    *,
    title: str | None = None,
    body: str | None = None,
    sections: Iterable[AskUserSection | Mapping[str, str]] | None = None,
    message: str | None = None,
    kind: str = "approval",
    metadata: Mapping[str, Any] | None = None,
    expires_at: datetime | str | None = None,
    approvers: Iterable[str] | None = None,
    required_approvals: int | None = None,
    remind_after: timedelta | float | None = None,
    escalate_after: timedelta | float | None = None,
    escalate_to: Iterable[str] | None = None,
    tool_call_id: str,
    ctx: ToolContextLike,
    interactive: bool | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> AskUserResult:
    """Ask the human to approve something, or to request changes with optional feedback.

    ``approvers`` (names and ``group:NAME`` entries) limits who may answer it, and
    ``required_approvals`` how many distinct approvers must approve (:mod:`interactions.people`).
    ``remind_after``, ``escalate_after`` and ``escalate_to`` remind and escalate it as
    :func:`ask_user_question` says.

    Resolves to ``approved``, ``revision_requested``, ``declined``, ``awaiting_user`` or
    ``unavailable``. Return an ``awaiting_user`` result from the tool: the run pauses, and on
    resume the answer becomes the tool's result — code after the ask runs on resume only in a
    tool declared ``resume="replay"``. Raises :class:`~interactions.UsageError` when neither
    ``title``, ``body`` nor ``message`` says what is to be approved.
    """
    if not kind or not isinstance(kind, str):
        raise UsageError("kind must be a non-empty string")
    try:
        request = ApprovalRequest(
            kind=kind.strip(),
            title=title,
            body=body,
            sections=tuple(AskUserSection.model_validate(s) for s in sections or ()),
            message=message,
            metadata=dict(metadata or {})
            | people_metadata(approvers, required_approvals)
            | reach_metadata(remind_after, escalate_after, escalate_to),
            expires_at=_as_text(expires_at),
        )
    except ValidationError as exc:
        raise UsageError(f"invalid approval: {exc.errors()[0]['msg']}") from None
    return await ask_user(
        request,
        tool_call_id=tool_call_id,
        ctx=ctx,
        interactive=interactive,
        timeout=timeout,
        env=env,
    )
