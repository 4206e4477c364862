"""The wire shapes of an interaction: requests, options, outcomes, the interrupt descriptor.

One pydantic model per shape, serving both as the advertised schema and as the validator.
Outcomes are a union discriminated on the literal ``type``. Every shape speaks AG-UI's casing on
the wire (camelCase: ``responseSchema``, ``interruptId``, ``allowOther``): ``model_dump`` gives
it by default, and both spellings are read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from interactions._schemas import (
    ARGS_SCHEMA,
    OWN_REASONS,
    approval_schema,
    question_schema,
)

__all__ = [
    "Answered",
    "AnsweredMultiple",
    "ApprovalRequest",
    "Approved",
    "AskUserDetails",
    "AskUserDisplay",
    "AskUserInterrupt",
    "AskUserOption",
    "AskUserOutcome",
    "AskUserRequest",
    "AskUserResult",
    "AskUserSection",
    "AwaitingUser",
    "Declined",
    "QuestionRequest",
    "Remember",
    "RevisionRequested",
    "Selection",
    "TextContent",
    "Unavailable",
    "is_awaiting",
]

Selection = Literal["single", "multiple"]

_WIRE = ConfigDict(
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", **_WIRE)


class AskUserOption(_Model):
    """One choice offered to the human.

    ``label`` is what is shown (trimmed, never empty); ``value`` is what the answer carries
    (defaults to the label); ``description`` is optional help text.
    """

    label: str
    value: str | None = None
    description: str | None = None

    @field_validator("label")
    @classmethod
    def _label_not_blank(cls, label: str) -> str:
        label = label.strip()
        if not label:
            raise ValueError("an option label must not be empty")
        return label

    @property
    def answer(self) -> str:
        """What choosing this option answers: its value, else its label."""
        return self.value if self.value is not None else self.label


class AskUserSection(_Model):
    """A titled block of an approval's display (a diff, a plan step, a summary)."""

    title: str
    body: str


class AskUserDisplay(_Model):
    """How a host may render the interaction beyond its plain message."""

    header: str | None = None
    title: str | None = None
    body: str | None = None
    sections: tuple[AskUserSection, ...] = ()


class QuestionRequest(_Model):
    """A question: free text, one of ``options`` (``selection="single"``) or several of them.

    ``allow_other`` (default true) lets the human type an answer that is not an option; with it
    false the options are fixed and the resume schema lists them as an ``enum``.
    """

    kind: Literal["question"] = "question"
    question: str
    options: tuple[AskUserOption, ...] = ()
    header: str | None = None
    selection: Selection = "single"
    allow_other: bool = True
    metadata: dict[str, Any] = Field(default_factory=dict)
    display: AskUserDisplay | None = None
    expires_at: str | None = None


class ApprovalRequest(_Model):
    """An approval: the human approves, or requests changes with optional feedback.

    ``kind`` names the flavour of approval (``approval``, ``plan``, ``command``...) and is copied
    into the descriptor's metadata.
    """

    kind: str = "approval"
    title: str | None = None
    body: str | None = None
    sections: tuple[AskUserSection, ...] = ()
    message: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    expires_at: str | None = None


AskUserRequest = QuestionRequest | ApprovalRequest


class Answered(_Model):
    """The human answered a question with one answer."""

    type: Literal["answered"] = "answered"
    answer: str


class AnsweredMultiple(_Model):
    """The human picked several answers (in the order of the options, then own answers)."""

    type: Literal["answered_multiple"] = "answered_multiple"
    answers: tuple[str, ...]


class Remember(_Model):
    """A decision on a tool call that holds for the tool's later calls: in the run
    (``scope="run"``) or in the run's thread, its conversation (``"thread"``); with ``args``
    only for calls with the same arguments."""

    scope: Literal["run", "thread"]
    args: bool = False


class Approved(_Model):
    """The human approved, maybe with feedback; ``args``: the arguments they approved instead
    of the ones asked about (an approval of a tool call whose arguments they edited);
    ``remember``: approve the tool's later calls too, without asking; ``approved_by``: the
    people whose approvals it took, in the order they approved (an approval that needed
    several, ``required_approvals``; ``None`` otherwise)."""

    type: Literal["approved"] = "approved"
    feedback: str | None = None
    args: dict[str, Any] | None = None
    remember: Remember | None = None
    approved_by: tuple[str, ...] | None = None


class RevisionRequested(_Model):
    """The human did not approve and asked for changes, maybe with feedback; ``remember``:
    refuse the tool's later calls too, without asking (deny always)."""

    type: Literal["revision_requested"] = "revision_requested"
    feedback: str | None = None
    remember: Remember | None = None


class Declined(_Model):
    """No answer: dismissed, timed out, auto-declined, or the interrupt was cancelled."""

    type: Literal["declined"] = "declined"
    reason: Literal["dismissed", "timeout", "auto", "cancelled", "expired"] = "dismissed"


class AwaitingUser(_Model):
    """Nothing was answered yet: the run must pause on ``interrupt_id`` and resume later."""

    type: Literal["awaiting_user"] = "awaiting_user"
    interrupt_id: str


class Unavailable(_Model):
    """No channel could reach a human; nothing was shown."""

    type: Literal["unavailable"] = "unavailable"


AskUserOutcome = Annotated[
    Answered
    | AnsweredMultiple
    | Approved
    | RevisionRequested
    | Declined
    | AwaitingUser
    | Unavailable,
    Field(discriminator="type"),
]
_OUTCOMES: tuple[type, ...] = get_args(get_args(AskUserOutcome)[0])
"""The outcome types (what :func:`is_awaiting` reads without looking for an ``outcome``)."""


_APPROVAL_METADATA = {"kind": "approval"}
"""An approval's metadata unless the tool gave its own."""


class AskUserInterrupt(BaseModel):
    """The pause record: AG-UI's ``Interrupt`` plus what a host needs to render and check it.

    One typed value from the ask to the store and back. Its first eight fields are AG-UI 1.0's
    ``Interrupt``, spelled alike (``model_dump(exclude_none=True)`` is the AG-UI wire form,
    camelCase); the others travel as the extra keys AG-UI allows on an interrupt, so
    ``ag_ui.core.Interrupt.model_validate(record.model_dump())`` reads it and
    :meth:`to_agui` gives that model. (It does not subclass ag-ui's class so that a process
    that only answers a question need not load ag-ui's event models.) ``id`` is the correlation
    key of the resume; ``response_schema`` is set while the outcome is ``awaiting_user``;
    ``expires_at`` is always set; ``allow_other`` says whether an answer outside ``options`` is
    accepted.
    """

    model_config = ConfigDict(frozen=True, extra="allow", **_WIRE)

    subagent_run_id: str | None = None
    id: str
    reason: str
    message: str | None = None
    tool_call_id: str | None = None
    response_schema: dict[str, Any] | None = None
    expires_at: str | None = None
    metadata: dict[str, Any] | None = None
    options: tuple[AskUserOption, ...] = ()
    selection: Selection = "single"
    allow_other: bool = True
    display: AskUserDisplay | None = None
    outcome: AskUserOutcome | None = None

    @property
    def is_approval(self) -> bool:
        """Whether this asks for an approval (its resume payload is ``{approved, feedback}``)."""
        return self.reason == "confirmation"

    def stored(self) -> dict[str, Any]:
        """The compact JSON a store keeps: defaults left out, and what :meth:`from_stored`
        derives again (an ``awaiting_user`` outcome; the ``response_schema`` of a question or
        an approval, which their options, selection and ``allow_other`` determine)."""
        data = self.model_dump(mode="json", exclude_defaults=True)
        if isinstance(self.outcome, AwaitingUser):
            data.pop("outcome", None)
        if self.reason in OWN_REASONS:
            data.pop("responseSchema", None)
        if self.is_approval:  # an approval's defaults: no "other", its title as the message
            data.pop("allowOther", None)
            if data.get("metadata") == _APPROVAL_METADATA:
                del data["metadata"]
            if self.display is not None and self.message == self.display.title:
                data.pop("message", None)
        return data

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> AskUserInterrupt:
        """The pause record from what :meth:`stored` kept (or from a full wire form). Raises
        ``pydantic.ValidationError`` for data that is not one (whatever its JSON holds)."""
        if data.get("reason") == "confirmation":
            display = data.get("display")
            title = display.get("title") if isinstance(display, dict) else None
            defaults = {"allowOther": False, "metadata": _APPROVAL_METADATA, "message": title}
            data = {**{k: v for k, v in defaults.items() if v is not None}, **data}
        interrupt = cls.model_validate(data)
        missing: dict[str, Any] = {}
        if interrupt.outcome is None:
            missing["outcome"] = AwaitingUser(interrupt_id=interrupt.id)
        if interrupt.response_schema is None and interrupt.reason in OWN_REASONS:
            missing["response_schema"] = interrupt.derived_response_schema()
        return interrupt.model_copy(update=missing) if missing else interrupt

    def derived_response_schema(self) -> dict[str, Any]:
        """The response schema of a question or an approval, from this record alone (its
        options, selection and ``allow_other``): what :meth:`stored` leaves out."""
        if self.is_approval:
            return approval_schema((self.metadata or {}).get(ARGS_SCHEMA))
        return question_schema(
            [o.answer for o in self.options],
            multiple=self.selection == "multiple",
            allow_other=self.allow_other,
        )

    def to_agui(self) -> Any:
        """This record as ag-ui-protocol's ``Interrupt`` model (our fields as its extras)."""
        from ag_ui.core import Interrupt  # loaded by whoever builds AG-UI events

        return Interrupt.model_validate(self.model_dump(mode="json", exclude_none=True))


def is_awaiting(outcome: object) -> bool:
    """Whether ``outcome`` (an outcome, or a result or interrupt carrying one) waits for a human:
    the run must pause on it."""
    if not isinstance(outcome, _OUTCOMES):  # a result or an interrupt, not an outcome
        outcome = getattr(outcome, "outcome", outcome)
    return isinstance(outcome, AwaitingUser)


class TextContent(_Model):
    """A text part of a tool result."""

    type: Literal["text"] = "text"
    text: str


class AskUserDetails(_Model):
    """Structured details of an ask result: the interrupt descriptor."""

    interrupt: AskUserInterrupt


class AskUserResult(_Model):
    """What an ask helper returns, shaped as a tool result.

    ``content`` holds exactly one text part: the outcome's exact text (see the design's table);
    ``details.interrupt`` the descriptor. A tool returns it as is.
    """

    outcome: AskUserOutcome
    content: tuple[TextContent, ...]
    details: AskUserDetails

    @property
    def text(self) -> str:
        """The outcome text the model reads."""
        return self.content[0].text
