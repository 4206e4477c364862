"""The records a store keeps, and the inputs that create them. All frozen pydantic models.

Every JSON-carrying field (checkpoint, descriptor, payload, event data) is normalized through
:func:`canonical_json` when a record is built, so an in-memory record and one read back from a
database compare equal, and a value that is not JSON is refused before anything is written.
Every timestamp is a timezone-aware UTC ``datetime``.
"""

from __future__ import annotations

import functools
import json
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from interactions._errors import RunError, UnreadableInteractionError, UsageError
from interactions._models import AskUserInterrupt
from interactions.store._status import RunStatus

M = TypeVar("M", bound="BaseModel")

__all__ = [
    "MAX_JSON_DEPTH",
    "TRUSTED",
    "EventInput",
    "EventRecord",
    "InteractionAnswer",
    "InteractionKind",
    "InteractionRecord",
    "NewInteraction",
    "NewRun",
    "RunRecord",
    "StoreEventType",
    "canonical_json",
    "check_event_inputs",
    "check_text",
    "iso_seconds",
    "nests_deeper",
    "normalize_json",
    "read_row",
    "read_rows",
    "storable_text",
    "trusted",
    "utc_now",
]

logger = logging.getLogger("interactions.store")


def iso_seconds(value: datetime) -> str:
    """``value`` as an interrupt's ``expiresAt`` spells it: ISO 8601 UTC, ``Z``."""
    text = value.astimezone(UTC).isoformat(timespec="seconds" if not value.microsecond else "auto")
    return text.replace("+00:00", "Z")


def utc_now() -> datetime:
    """The current time as an aware UTC ``datetime`` (the stores' default clock)."""
    return datetime.now(UTC)


MAX_JSON_DEPTH = 200
"""How deeply a stored JSON value may nest (a list or an object in another counts one level).
Deeper values are refused, so every backend can write, read back and copy what it stores, on
any thread and whatever the depth of the caller's stack."""


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
"""The one encoder of :func:`canonical_json` (what ``json.dumps`` would build on every call)."""


def canonical_json(value: Any) -> str:
    """Return ``value`` as compact JSON with sorted keys: the one text form every store writes.

    Two values are "the same answer" exactly when their canonical texts are equal, so ``True``
    and ``1`` differ. Raises :class:`~interactions.UsageError` if ``value`` is not JSON
    (a set, an object, ``NaN``...), nests deeper than :data:`MAX_JSON_DEPTH`, or holds text
    that is not valid Unicode (a lone surrogate, which no store can write as UTF-8).
    """
    try:
        text = _CANONICAL.encode(value)
    except RecursionError:
        raise _too_deep() from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"value is not JSON-serializable ({exc}); store only JSON data") from exc
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:  # else it cannot nest that deep
        _check_depth(value)  # after dumps: it refused cycles, so this walk ends
    _check_unicode(text, "value")
    return text


def _too_deep() -> UsageError:
    return UsageError(f"value nests deeper than {MAX_JSON_DEPTH} levels; store flatter JSON data")


def _check_depth(value: Any) -> None:
    """Raise :class:`~interactions.UsageError` if ``value`` nests deeper than
    :data:`MAX_JSON_DEPTH`, walking it one level at a time (no recursion)."""
    if nests_deeper(value, MAX_JSON_DEPTH):
        raise _too_deep()


def nests_deeper(value: Any, levels: int) -> bool:
    """Whether ``value`` (JSON data, no cycles) nests deeper than ``levels`` (a list or an
    object in another counts one level), walking it one level at a time (no recursion)."""
    level = [value] if isinstance(value, dict | list | tuple) else []
    for _ in range(levels):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list | tuple)
        ]
        if not level:
            return False
    return True


def _check_unicode(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"{what} holds text that is not valid Unicode (a lone surrogate, as invalid UTF-8 "
            "decodes to); no store can keep it"
        ) from None


def check_text(value: str, what: str) -> str:
    """Return ``value``, a text a store keeps in a column of its own (an id, a name, an error,
    an event type); raise :class:`~interactions.UsageError` if it holds a NUL character (which
    PostgreSQL cannot store, so no store takes it) or a lone surrogate."""
    if "\x00" in value:
        raise UsageError(f"{what} {value[:60]!r} holds a NUL character (\\x00); no store keeps it")
    _check_unicode(value, what)
    return value


def storable_text(value: str) -> str:
    """``value`` as every store can keep it: a NUL character or a lone surrogate becomes
    U+FFFD. For text that describes a failure (a run's ``error``): recording the failure
    matters more than its exact characters, and refusing it would strand the run."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    return value


def normalize_json(value: Any) -> Any:
    """Return ``value`` as JSON would read it back (tuples become lists, keys strings)."""
    return json.loads(canonical_json(value))


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    normalized: dict[str, Any] = normalize_json(value)
    return normalized


TRUSTED: dict[str, Any] = {"trusted": True}
"""Validation context for values a store read back or built from checked input: their JSON is
already normal, so it is not written out and read back again (the checkpoint's transcript is the
largest value a store holds)."""


def _trusted(info: ValidationInfo) -> bool:
    return isinstance(info.context, dict) and info.context.get("trusted") is True


def _json_field(value: Any, info: ValidationInfo) -> Any:
    return value if _trusted(info) else normalize_json(value)


def _json_object_field(value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    return value if _trusted(info) else _json_object(value)


def trusted(model: type[M], **fields: Any) -> M:
    """``model`` built from a store's own values (see :data:`TRUSTED`)."""
    return model.model_validate(fields, context=TRUSTED)


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _text_field(value: str, info: ValidationInfo) -> str:
    return value if _trusted(info) else check_text(value, info.field_name or "text")


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_to_utc)]
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object_field)]
Json = Annotated[Any, AfterValidator(_json_field)]
Text = Annotated[str, AfterValidator(_text_field)]
"""Text a store keeps in a column of its own: no NUL, no lone surrogate (:func:`check_text`)."""
Id = Annotated[str, Field(min_length=1), AfterValidator(_text_field)]
InteractionKind = Literal["", "async", "await"]
"""``""`` a blocking question (the run pauses), ``"async"`` posted while the run goes on,
``"await"`` a gate waiting on earlier async questions."""

EventInput = tuple[str, Mapping[str, Any]]
"""An event to append: its ``type`` and its JSON ``data``."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class StoreEventType(StrEnum):
    """The event types the store itself appends, so every state change leaves an audit line.

    Their data is small; what they are about is in the rows they point to (the run, the
    interaction and its answer): ``run_created`` ``{}``; ``interaction_requested``
    ``{interaction_id, kind?}``; ``interaction_answered`` ``{interaction_id, status, payload,
    answered_by?, via?}``: the answer itself (events stored before ``payload`` was added lack
    it, as does one whose payload nests as deep as :data:`MAX_JSON_DEPTH` allows, which the
    event's own level would take past it: read the interaction's row for those);
    ``run_status_changed`` ``{from, to, error?}``;
    ``decision_remembered`` ``{id, tool, action, scope, args, decided_by, interaction_id,
    reason}`` and ``decision_revoked`` ``{id, tool, revoked_by}``, on the run whose approval
    made the decision (:class:`~interactions.store.DecisionStore`); ``interaction_voted``
    ``{interaction_id, voter, approved, via, feedback?}``, one person's vote on an approval
    that needs several (:class:`~interactions.store.VoteStore`).
    """

    RUN_CREATED = "run_created"
    RUN_STATUS_CHANGED = "run_status_changed"
    INTERACTION_REQUESTED = "interaction_requested"
    INTERACTION_ANSWERED = "interaction_answered"
    DECISION_REMEMBERED = "decision_remembered"
    DECISION_REVOKED = "decision_revoked"
    INTERACTION_VOTED = "interaction_voted"


class NewRun(BaseModel):
    """What :meth:`Store.create_run` needs. The store adds status, version and timestamps."""

    model_config = _FROZEN

    id: Id = Field(default_factory=lambda: f"run-{uuid.uuid4().hex}")
    """Unique run id; generated when not given. A duplicate is a ``ConflictError``."""
    thread_id: Id
    """The AG-UI thread the run belongs to (a thread may hold many runs)."""
    kind: Id = "recipe"
    """What drives the run (``recipe``, ``graph``...): the runner continues it with the driver
    registered for its kind."""
    ref: Text
    """What the run executes: a recipe reference, a workflow file..."""
    agent: Text = ""
    """The agent that runs (``""`` when the kind has none)."""
    model_name: Text = ""
    """The model the run talks to (``""`` when the kind has none)."""
    parent_run_id: Text | None = None
    """The run this one belongs to (a graph's node runs name their graph run)."""
    node_id: Text | None = None
    """The graph node this run executes, if any."""
    checkpoint: JsonObject = Field(default_factory=dict)
    """The initial checkpoint (opaque to the store)."""


class RunRecord(BaseModel):
    """One run as stored."""

    model_config = _FROZEN

    id: Id
    thread_id: Id
    kind: Id = "recipe"
    ref: Text
    agent: Text = ""
    model_name: Text = ""
    parent_run_id: Text | None = None
    node_id: Text | None = None
    status: RunStatus
    checkpoint: JsonObject
    """What the runner needs to continue: transcript, the paused batch's not-yet-run calls...
    Opaque JSON to the store; replaced whole by :meth:`Store.update_run`."""
    version: int = Field(ge=1)
    """Bumped by every :meth:`Store.update_run`; pass it back as ``expected_version``."""
    created_at: UtcDatetime
    updated_at: UtcDatetime
    error: Text | None = None
    """Why the run failed (set together with a status change), else ``None``."""


class InteractionAnswer(BaseModel):
    """A human's (or a host's) answer to one interaction."""

    model_config = _FROZEN

    status: Literal["resolved", "cancelled", "expired"]
    """``resolved`` carries a payload; ``cancelled`` means the human declined or dismissed;
    ``expired`` means the expiry sweep settled it (the model reads a decline either way)."""
    payload: Json = None
    """The answer as JSON (validated against the descriptor's schema by the caller, not here)."""
    answered_by: Text | None = None
    """Who answered (a user id, an email...), for the audit trail."""
    via: Text | None = None
    """Which host took the answer (``"cli"``, ``"web"``, ``"slack"``...)."""

    def same_answer(self, other: InteractionAnswer) -> bool:
        """Whether ``other`` is an identical replay: same status and same canonical payload.

        Who answered and through which host do not matter: replaying a resume is safe.
        """
        return self.status == other.status and canonical_json(self.payload) == canonical_json(
            other.payload
        )


class NewInteraction(BaseModel):
    """An interaction to insert with :meth:`Store.update_run` (one per open interrupt)."""

    model_config = _FROZEN

    id: Id
    """Unique within the run, e.g. ``"int-<tool_call_id>"``; the resume correlation key."""
    tool_call_id: Text
    node_id: Text = ""
    """The graph node that asked, ``""`` outside a graph."""
    kind: InteractionKind = ""
    expires_at: UtcDatetime
    """Required: nothing waits forever. Answers after it raise ``ExpiredError``."""
    descriptor: JsonObject = Field(default_factory=dict)
    """The interrupt descriptor (message, options, response_schema...), opaque JSON."""
    requested_at: UtcDatetime | None = None
    """When it was asked; ``None`` means the time of the write."""

    @classmethod
    def of(cls, interrupt: AskUserInterrupt, **fields: Any) -> NewInteraction:
        """The interaction storing ``interrupt``: its descriptor without what the row itself
        holds (id, tool call, expiry), which :attr:`InteractionRecord.interrupt` puts back."""
        if not interrupt.expires_at:
            raise ValueError(f"interrupt {interrupt.id} has no expiresAt: nothing waits forever")
        expires_at = datetime.fromisoformat(interrupt.expires_at)
        descriptor = interrupt.stored()
        if descriptor.get("expiresAt") == iso_seconds(expires_at):
            del descriptor["expiresAt"]
        descriptor.pop("id", None)
        descriptor.pop("toolCallId", None)
        return trusted(  # the descriptor is a JSON dump already
            cls,
            id=interrupt.id,
            tool_call_id=interrupt.tool_call_id or "",
            expires_at=expires_at,
            descriptor=descriptor,
            **fields,
        )


class InteractionRecord(BaseModel):
    """One interaction as stored: a question and, once answered, its (only) answer."""

    model_config = _FROZEN

    id: Id
    run_id: Id
    node_id: Text = ""
    tool_call_id: Text
    kind: InteractionKind = ""
    requested_at: UtcDatetime
    expires_at: UtcDatetime
    answered_at: UtcDatetime | None = None
    descriptor: JsonObject
    answer: InteractionAnswer | None = None

    @model_validator(mode="after")
    def _answered_together(self) -> InteractionRecord:
        if (self.answer is None) != (self.answered_at is None):
            raise ValueError("answer and answered_at are set together or not at all")
        return self

    @property
    def pending(self) -> bool:
        """``True`` while no answer is stored."""
        return self.answer is None

    @property
    def blocking(self) -> bool:
        """Whether the run stops for it (a plain question: kind ``""``)."""
        return self.kind == ""

    @property
    def is_open_blocking(self) -> bool:
        """Whether the run is waiting on it now: blocking and not answered yet."""
        return self.kind == "" and self.answer is None

    @property
    def interrupt(self) -> AskUserInterrupt:
        """The stored descriptor as the typed pause record (what the row itself holds, the id,
        the tool call and the expiry, is not repeated in the descriptor).

        Raises :class:`~interactions.UnreadableInteractionError` when this version cannot read
        the descriptor as one (:attr:`unreadable` says why): a store takes any JSON object, so
        one written by another tool, another version or by hand may not be a pause record. A
        host that lists interactions checks :attr:`unreadable` first and shows that instead."""
        read = self._read_descriptor
        if isinstance(read, str):
            raise UnreadableInteractionError(
                f"interaction {self.id} of run {self.run_id} is stored in a form this "
                f"pi-recipes cannot read ({read}), so it cannot be answered here; the run's "
                "other interactions are usable",
                run_id=self.run_id,
                interaction_id=self.id,
                reason="unreadable",
            )
        return read

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The descriptor's ``metadata`` as stored (who may answer, how many must, reminders and
        escalation), read without the whole pause record :attr:`interrupt` validates: what a
        list of many interactions sorts and filters by. ``None`` when it holds none (an
        approval's default names no one), or holds something that is not an object. Its readers
        (``approvers_of``, ``reach_of``) leave out values they cannot read."""
        found = self.descriptor.get("metadata")
        return found if isinstance(found, dict) else None

    @property
    def unreadable(self) -> str | None:
        """Why :attr:`interrupt` cannot be read, in a few words (``reason: Field required``);
        ``None`` when it can (always, for what the runner itself stores)."""
        read = self._read_descriptor
        return read if isinstance(read, str) else None

    @functools.cached_property
    def _read_descriptor(self) -> AskUserInterrupt | str:
        """The pause record, or why this version cannot read the descriptor as one (read once,
        kept): what :attr:`interrupt` and :attr:`unreadable` give."""
        own = {"id": self.id, "expiresAt": iso_seconds(self.expires_at)}
        own |= {"toolCallId": self.tool_call_id} if self.tool_call_id else {}
        try:
            return AskUserInterrupt.from_stored(own | self.descriptor)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            return f"{where + ': ' if where else ''}{first['msg']}{more}"


class EventRecord(BaseModel):
    """One line of a run's audit trail. ``seq`` counts from 1 per run, without gaps; ``cursor``
    orders every event of the store in commit order (``0`` for an event not read back from a
    store), so a watcher of the whole store resumes after the last cursor it saw."""

    model_config = _FROZEN

    run_id: Id
    seq: int = Field(ge=1)
    cursor: int = Field(default=0, ge=0)
    type: Id
    data: JsonObject
    at: UtcDatetime


def check_event_inputs(events: Sequence[EventInput]) -> list[tuple[str, dict[str, Any]]]:
    """Validate events to append: non-empty string types (:func:`check_text`) and JSON-object
    data.

    Returns them normalized; raises :class:`~interactions.UsageError` otherwise.
    """
    checked: list[tuple[str, dict[str, Any]]] = []
    for item in events:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise UsageError(f"an event is a (type, data) pair, got {item!r}")
        type_, data = item
        if not isinstance(type_, str) or not type_:
            raise UsageError(f"an event type is a non-empty string, got {type_!r}")
        check_text(type_, "the event type")
        if not isinstance(data, Mapping):
            raise UsageError(f"event data is a JSON object (a mapping), got {type(data).__name__}")
        checked.append((type_, _json_object(dict(data))))
    return checked


def read_row(parse: Callable[[Any], Any], row: Any, what: str, ident: str) -> Any:
    """``parse(row)``, or a :class:`~interactions.RunError` (reason ``unreadable``) naming the
    row when this version cannot read it (a corrupt or foreign value): that one record fails,
    the rest of the store stays usable."""
    try:
        return parse(row)
    except (ValueError, TypeError, KeyError) as exc:  # pydantic and json errors are ValueErrors
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunError(
            f"{what} {ident} is stored in a form this pi-recipes cannot read ({first}); the rest "
            "of the store is usable",
            run_id=ident if what == "run" else None,
            reason="unreadable",
        ) from None


def read_rows(
    parse: Callable[[Any], Any], rows: Iterable[Any], what: str, ident: Callable[[Any], str]
) -> list[Any]:
    """Every row ``parse`` can read; each one it cannot is skipped with a warning naming it."""
    out = []
    for row in rows:
        try:
            out.append(read_row(parse, row, what, ident(row)))
        except RunError as exc:
            logger.warning("%s", exc)
    return out
