"""Tools: what a recipe registers, what a tool returns, and how a return value is read.

A tool fails by raising; whatever it returns is read by :func:`to_tool_result`:

- a :class:`ToolResult`;
- a plain ``str`` (a convenience: one text part, no details);
- an :class:`~interactions.AskUserResult`: its text, its interrupt (typed, on
  :attr:`ToolResult.interrupt`), and, when its outcome is ``awaiting_user``, a *pause*;
- any other object with ``content`` and ``details`` attributes (read the same way, the
  interrupt from ``details["interrupt"]``).

A tool's ``resume`` mode says what a durable run does with a paused call when the answer comes:
``"answer"`` (the default) makes the answer the call's result without running the tool again;
``"replay"`` runs the tool again, its asks returning the stored answers in order.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from interactions import AWAITING_TEXT, AskUserInterrupt, AskUserResult, UsageError, is_awaiting
from recipes._schema import tool_json_schema
from recipes.messages import ContentPart, TextPart
from recipes.models._base import ToolSpec

if TYPE_CHECKING:
    from recipes._context import ToolContext

__all__ = [
    "ApprovalRule",
    "ExecutionMode",
    "OnUpdate",
    "ResumeMode",
    "Tool",
    "ToolExecute",
    "ToolResult",
    "to_tool_result",
]

ExecutionMode = Literal["sequential", "parallel"]
ResumeMode = Literal["answer", "replay"]
"""What a durable run does with a call paused on an ask once the answer comes: ``answer`` makes
the answer the call's result (the tool does not run again); ``replay`` runs the tool again and
its asks return the stored answers, in order."""

_Content = TypeAdapter(list[ContentPart])


class ToolResult(BaseModel):
    """What a tool call produced.

    ``content`` is what the model reads; ``details`` is structured data for hosts and logs (the
    model does not see it). ``terminate`` asks the loop to stop after this batch (it stops only
    when *every* result of the batch sets it). ``pause`` asks the run to pause on
    ``interrupt`` (required with it): the model is not called again until the session is
    resumed with the answer.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: list[ContentPart]
    details: dict[str, Any] = Field(default_factory=dict)
    terminate: bool = False
    pause: bool = False
    interrupt: AskUserInterrupt | None = None

    @model_validator(mode="after")
    def _pause_has_interrupt(self) -> ToolResult:
        if self.pause and self.interrupt is None:
            raise ValueError(
                "a result that pauses the run must carry the interrupt it waits on; return "
                "the result of ask_user_question/ask_user_approval"
            )
        return self

    @classmethod
    def of_text(
        cls, text: str, details: Mapping[str, Any] | None = None, *, terminate: bool = False
    ) -> ToolResult:
        """A result with one text part."""
        return cls(content=[TextPart(text=text)], details=dict(details or {}), terminate=terminate)

    @classmethod
    def awaiting(cls, interrupt: AskUserInterrupt, text: str = AWAITING_TEXT) -> ToolResult:
        """A result that pauses the run on ``interrupt`` until a human answers it."""
        return cls(content=[TextPart(text=text)], pause=True, interrupt=interrupt)

    @property
    def text(self) -> str:
        """The text parts joined by newlines."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))


OnUpdate = Callable[[ToolResult | str], None]
"""Called by a running tool to report progress; each call becomes a ``tool_execution_update``."""

ToolExecute = Callable[[str, Any, "ToolContext", OnUpdate], Awaitable[object]]
"""``async execute(tool_call_id, params, ctx, on_update)``; returns a value read by
:func:`to_tool_result`, and fails by raising."""

ApprovalRule = bool | Callable[[Any, "ToolContext"], bool | Awaitable[bool]]
"""A tool's ``requires_approval``: always (``True``), never (``False``), or a function of the
parsed arguments and the tool's context (plain or ``async``) saying whether a call needs one."""


@dataclass(frozen=True, eq=False)
class Tool:
    """A registered tool. Build it with ``RecipeAPI.register_tool`` or ``@api.tool``.

    ``parameters`` is a pydantic model class: the model sees its JSON Schema (:meth:`spec`) and
    the arguments are validated with it before ``execute`` is called. A batch containing one
    ``sequential`` tool runs one call at a time; otherwise calls run concurrently.
    """

    name: str
    label: str
    description: str
    parameters: type[BaseModel]
    execute: ToolExecute
    execution_mode: ExecutionMode = "parallel"
    resume: ResumeMode = "answer"
    requires_approval: ApprovalRule = False
    """Whether a person approves a call before ``execute`` runs its body (``execute`` is then
    the body behind the approval gate: see :mod:`recipes._approval`)."""

    def spec(self) -> ToolSpec:
        """What the model is told about this tool (built once: a tool does not change)."""
        return self._spec

    def parse_arguments(self, arguments: Mapping[str, Any]) -> BaseModel:
        """A call's ``arguments`` as ``parameters``, or pydantic's ``ValidationError`` saying
        what does not fit. An argument the parameters do not take is refused
        (``extra_forbidden``), unless their model says what to do with extras
        (``model_config["extra"]``): a misspelled optional argument would otherwise be dropped,
        and the tool run with its default as if the caller had asked for it."""
        names = self._argument_names
        errors: list[Any] = [
            {"type": "extra_forbidden", "loc": (key,), "input": value}
            for key, value in arguments.items()
            if names is not None and key not in names
        ]
        try:
            parsed = self.parameters.model_validate(arguments)
        except ValidationError as exc:
            if not errors:
                raise
            errors += [
                {k: v for k, v in error.items() if k in ("type", "loc", "input", "ctx")}
                for error in exc.errors(include_url=False)
            ]
        if errors:
            raise ValidationError.from_exception_data(self.parameters.__name__, errors)
        return parsed

    @functools.cached_property
    def _argument_names(self) -> frozenset[str] | None:
        """The argument names the parameters take (fields and their aliases), or ``None`` when
        extras are the model's own business (its ``extra`` set, or aliases that are paths)."""
        model = self.parameters
        if model.model_config.get("extra") is not None:
            return None
        names: set[str] = set()
        for name, field in model.model_fields.items():
            aliases = (field.alias, field.validation_alias)
            if any(a is not None and not isinstance(a, str) for a in aliases):
                return None  # AliasChoices, AliasPath: pydantic decides
            names.update(a for a in (name, *aliases) if isinstance(a, str))
        return frozenset(names)

    @functools.cached_property
    def _spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters=tool_json_schema(self.parameters),
        )


def to_tool_result(value: object) -> ToolResult:
    """Read what a tool returned (see the module docstring for what is accepted).

    Raises :class:`UsageError` naming what was expected when ``value`` is none of those.
    """
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.of_text(value)
    if isinstance(value, AskUserResult):
        asked = value.details.interrupt
        return ToolResult(
            content=[TextPart(text=value.text)],
            details={"interrupt": asked.model_dump(mode="json", exclude_none=True)},
            pause=is_awaiting(value.outcome),
            interrupt=asked,
        )
    if hasattr(value, "content") and hasattr(value, "details"):
        details = _plain(getattr(value, "details", None)) or {}
        if isinstance(details, Mapping):
            details = dict(details)
        else:
            raise UsageError(
                f"a tool result's details must be a dict, got {type(details).__name__}"
            )
        try:
            content = _Content.validate_python(_plain(value.content))
        except ValidationError as exc:
            raise UsageError(f"a tool result's content must be text/image parts: {exc}") from exc
        outcome = getattr(value, "outcome", None) or details.get("outcome")
        raw = details.get("interrupt")
        try:
            interrupt = AskUserInterrupt.model_validate(raw) if raw is not None else None
        except ValidationError as exc:
            raise UsageError(
                f"a tool result's details['interrupt'] is not an interrupt: {exc}"
            ) from None
        pause = _outcome_type(outcome) == "awaiting_user" or bool(getattr(value, "pause", False))
        if interrupt is not None and is_awaiting(interrupt.outcome):
            pause = True
        try:
            return ToolResult(
                content=content,
                details=details,
                terminate=bool(getattr(value, "terminate", False)),
                pause=pause,
                interrupt=interrupt,
            )
        except ValidationError as exc:
            raise UsageError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
    raise UsageError(
        f"a tool returned {type(value).__name__}; expected a ToolResult, a str, or an object "
        "with `content` and `details` (such as AskUserResult)"
    )


def _plain(value: object) -> Any:
    """Pydantic models (and lists of them) as plain JSON-ready data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _outcome_type(outcome: object) -> object:
    if isinstance(outcome, Mapping):
        return outcome.get("type")
    if isinstance(outcome, str):
        return outcome
    return getattr(outcome, "type", None)
