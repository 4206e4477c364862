"""Who is signed in, and what waits for them: ``GET /api/me``, ``GET /api/me/inbox`` and
``GET /api/me/history``.

The inbox lists the open questions the signed-in person may answer (the one rule of
:func:`interactions.people.may_answer`): first those whose approvers name them or one of
their groups (``assigned``), then those open to anyone; each part newest first (``run_id``:
of one run only). With ``others=true`` it also lists, last, the open questions only others
may answer (shown read-only). It pages: ``limit`` items, and ``next``, the ``after`` that
reads on from the last one (a cursor that holds even when an item was answered meanwhile);
``counts`` says how many each part holds in all.

The history lists the questions already closed (answered, declined, expired), newest answer
first, ``limit`` at a time before the cursor ``before`` (the ``next`` of the page before).

Each item carries its run in brief (:class:`RunBrief`): its title (the run's prompt,
shortened) and the name of its recipe or workflow, read from the stored run.

The store protocol has no query that filters by approver or sorts by answer time, so both are
sorted here: the inbox from the store's open questions, read whole (a short list); the history
from every interaction, read a page at a time from a store that pages them
(:class:`~interactions.store.AuditStore`), keeping only the page asked for.
"""

from __future__ import annotations

import base64
import heapq
import json
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from hosts._kit import answerable, asks_a_person
from hosts.web._errors import ErrorBody, refusal
from hosts.web._host import Authorized, Me, WebHost
from hosts.web._views import InteractionView, interaction_views
from interactions import InvalidPayloadError, PiRecipesError
from interactions.people import may_answer
from interactions.reminders import current_approvers
from interactions.store import AuditStore, InteractionRecord, RunRecord, Store

__all__ = [
    "History",
    "HistoryItem",
    "Inbox",
    "InboxCounts",
    "InboxItem",
    "MeView",
    "RunBrief",
    "router",
]

router = APIRouter(
    prefix="/api/me",
    tags=["people"],
    responses={code: {"model": ErrorBody} for code in (401, 422, 500)},
)

TITLE_LENGTH = 120
"""How much of a run's prompt its title keeps (then ``…``)."""

_Key = tuple[int, int, str, str]
_AUDIT_PAGE = 500


class MeView(BaseModel):
    """Who signed in: the name answers record, their groups, and how the server knows them
    (``users-file``, ``proxy``, ``jwt``, ``token``)."""

    name: str
    groups: list[str]
    via: str | None


class RunBrief(BaseModel):
    """The run a question belongs to, as a card shows it."""

    id: str
    kind: str = Field(description="what drives the run: recipe, graph...")
    name: str = Field(description="the recipe's or workflow's name (its file's, without suffix)")
    title: str = Field(description=f"the run's prompt on one line, at most {TITLE_LENGTH} chars")
    agent: str
    status: str


class InboxItem(InteractionView):
    """An open question: ``assigned``, its approvers name the signed-in person or one of
    their groups; ``may_answer``, they may answer it (false only with ``others=true``)."""

    assigned: bool
    may_answer: bool = True
    run: RunBrief


class InboxCounts(BaseModel):
    """How many open questions each part of the inbox holds in all (not only on this page)."""

    for_you: int = Field(description="assigned to the signed-in person or their groups")
    anyone: int = Field(description="open to anyone")
    others: int = Field(description="only others may answer (counted with `others=true`)")


class Inbox(BaseModel):
    interactions: list[InboxItem]
    next: str | None = Field(default=None, description="pass as `after` to read on")
    counts: InboxCounts


class HistoryItem(InteractionView):
    """A closed question (its ``answer`` says how), with its run in brief."""

    run: RunBrief


class History(BaseModel):
    interactions: list[HistoryItem]
    next: str | None = Field(default=None, description="pass as `before` to read older ones")


@router.get("", response_model=MeView)
async def me(host: Authorized, me: Me) -> MeView:
    """Who the request signed in as."""
    return MeView(name=me.name, groups=sorted(me.groups), via=me.via)


@router.get("/inbox", response_model=Inbox)
async def inbox(
    host: Authorized,
    me: Me,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    after: Annotated[str | None, Query(max_length=2000)] = None,
    others: bool = False,
    run_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> Inbox:
    """The open questions the signed-in person may answer: assigned to them (or their
    groups) first, then open to anyone, then (``others=true``) those only others may answer;
    each part newest first; ``limit`` of them after ``after``; maybe only those of the run
    ``run_id`` (404 for a run the store does not hold)."""
    try:
        start = _decoded(after, "after", "inbox") if after is not None else None
        records = answerable(await host.store.list_interactions(run_id, pending=True))
        # sorted by their stored metadata: only the page's records are read whole (its views)
        approvers_each = [await current_approvers(host.store, record) for record in records]
    except PiRecipesError as exc:
        raise refusal(exc) from None
    found: list[tuple[_Key, InteractionRecord, bool, bool]] = []
    counts = [0, 0, 0]
    for record, approvers in zip(records, approvers_each, strict=True):
        allowed = may_answer(approvers, me.name, me.groups)
        part = (0 if approvers else 1) if allowed else 2
        if part == 2 and not others:
            continue
        counts[part] += 1
        found.append(
            (_key(part, record.requested_at, record), record, bool(approvers) and allowed, allowed)
        )
    found.sort(key=lambda item: item[0])
    page = [item for item in found if start is None or item[0] > start][:limit]
    try:
        views = await interaction_views(host.store, [record for _, record, _, _ in page])
        runs = await _briefs(host, [record.run_id for _, record, _, _ in page])
    except PiRecipesError as exc:
        raise refusal(exc) from None
    items = [
        InboxItem(**view.model_dump(), assigned=assigned, may_answer=allowed, run=runs[view.run_id])
        for view, (_, _, assigned, allowed) in zip(views, page, strict=True)
    ]
    more = len(page) == limit and page[-1] is not found[-1]
    return Inbox(
        interactions=items,
        next=_encoded(page[-1][0]) if more else None,
        counts=InboxCounts(for_you=counts[0], anyone=counts[1], others=counts[2]),
    )


@router.get("/history", response_model=History)
async def history(
    host: Authorized,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
    before: Annotated[str | None, Query(max_length=2000)] = None,
) -> History:
    """The questions already closed (answered, declined, expired), newest answer first;
    ``limit`` of them after the cursor ``before``."""
    try:
        start = _decoded(before, "before", "history") if before is not None else None
        found = await _closed(host.store, start, limit + 1)
        page = found[:limit]
        views = await interaction_views(host.store, [record for _, record in page])
        runs = await _briefs(host, [record.run_id for _, record in page])
    except PiRecipesError as exc:
        raise refusal(exc) from None
    items = [HistoryItem(**view.model_dump(), run=runs[view.run_id]) for view in views]
    more = len(found) > limit
    return History(interactions=items, next=_encoded(page[-1][0]) if more else None)


async def _closed(
    store: Store, start: _Key | None, limit: int
) -> list[tuple[_Key, InteractionRecord]]:
    """The first ``limit`` closed questions (newest answer first) that sort after ``start``.

    A store that pages every interaction (:class:`~interactions.store.AuditStore`) is read a
    page at a time, keeping only the best ``limit`` so far: memory stays bounded however many
    questions it holds. Any other store's closed questions are read whole."""

    def keyed(records: Iterable[InteractionRecord]) -> Iterator[tuple[_Key, InteractionRecord]]:
        for record in records:
            if record.pending or not asks_a_person(record):
                continue
            key = _key(0, record.answered_at or record.requested_at, record)
            if start is None or key > start:
                yield key, record

    first = itemgetter(0)
    if not isinstance(store, AuditStore):
        return heapq.nsmallest(limit, keyed(await store.list_interactions(pending=False)), first)
    best: list[tuple[_Key, InteractionRecord]] = []
    after: tuple[str, str] | None = None
    while True:
        read = await store.page_interactions(after=after, limit=_AUDIT_PAGE)
        best = heapq.nsmallest(limit, [*best, *keyed(read)], first)
        if len(read) < _AUDIT_PAGE:
            return best
        after = (read[-1].run_id, read[-1].id)


async def _briefs(host: WebHost, run_ids: Iterable[str]) -> dict[str, RunBrief]:
    """The runs ``run_ids`` name, in brief (each read once)."""
    briefs: dict[str, RunBrief] = {}
    for run_id in run_ids:
        if run_id not in briefs:
            briefs[run_id] = run_brief(await host.store.get_run(run_id))
    return briefs


def run_brief(run: RunRecord) -> RunBrief:
    """``run`` as a card names it: its title and its recipe's or workflow's name."""
    return RunBrief(
        id=run.id, kind=run.kind, name=_name(run.ref), title=run_title(run),
        agent=run.agent, status=run.status.value,
    )  # fmt: skip


def run_title(run: RunRecord) -> str:
    """The run's prompt (a recipe run's input; a graph run's vars, ``name=value``) on one
    line, shortened to :data:`TITLE_LENGTH` characters; the run id when it has none."""
    checkpoint = run.checkpoint
    text = checkpoint.get("input")
    if not isinstance(text, str) or not text.strip():
        text = _first_user_text(checkpoint.get("messages"))
    if not text.strip() and isinstance(checkpoint.get("vars"), dict):
        text = ", ".join(f"{name}={_plain(value)}" for name, value in checkpoint["vars"].items())
    line = " ".join(text.split()) or run.id
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


def _first_user_text(messages: Any) -> str:
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], dict):
        return ""
    first = messages[0]
    if first.get("role") != "user":
        return ""
    content = first.get("content")
    if isinstance(content, str):
        return content
    parts: Sequence[Any] = content if isinstance(content, list) else ()
    return " ".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _name(ref: str) -> str:
    """A recipe's or workflow's name from its durable ref: a file's name without its suffix
    (``/x/release.py`` → ``release``), else the ref as it is (``package.module:recipe``)."""
    if ":" in ref.replace("\\", "/").split("/")[-1]:
        return ref
    return PurePath(ref).stem or ref


def _key(part: int, at: Any, record: InteractionRecord) -> _Key:
    """Where ``record`` sorts: by ``part``, then ``at`` newest first, then by ids."""
    micros = int(at.timestamp()) * 1_000_000 + at.microsecond
    return (part, -micros, record.run_id, record.id)


def _encoded(key: _Key) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode().rstrip("=")


def _decoded(cursor: str, name: str, listing: str) -> _Key:
    """The sort key a cursor names; ``InvalidPayloadError`` for one this server did not give."""
    try:
        raw: Any = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        part, micros, run_id, interaction_id = raw
        if not (
            isinstance(part, int) and isinstance(micros, int)
            and isinstance(run_id, str) and isinstance(interaction_id, str)
        ):  # fmt: skip
            raise ValueError(cursor)
    except (ValueError, TypeError, UnicodeDecodeError):
        raise InvalidPayloadError(
            f"`{name}` is the `next` an earlier page of the {listing} gave", reason="invalid_cursor"
        ) from None
    return (part, micros, run_id, interaction_id)
