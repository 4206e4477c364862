"""Who is signed in, and what they may answer: ``GET /api/me`` and ``GET /api/me/inbox``.

The inbox lists the open questions the signed-in person may answer (the one rule of
:func:`interactions.people.may_answer`): first those whose approvers name them or one of
their groups (``assigned``), then those open to anyone; each part newest first. It pages:
``limit`` items, and ``next``, the ``after`` that reads on from the last one (a cursor that
holds even when an item was answered meanwhile).
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from hosts._kit import answerable
from hosts.web._errors import ErrorBody, refusal
from hosts.web._host import Authorized, Me
from hosts.web._views import InteractionView, interaction_views
from interactions import InvalidPayloadError, PiRecipesError
from interactions.people import may_answer
from interactions.reminders import current_approvers
from interactions.store import InteractionRecord

__all__ = ["Inbox", "InboxItem", "MeView", "router"]

router = APIRouter(
    prefix="/api/me",
    tags=["people"],
    responses={code: {"model": ErrorBody} for code in (401, 422, 500)},
)

_Key = tuple[int, int, str, str]


class MeView(BaseModel):
    """Who signed in: the name answers record, their groups, and how the server knows them
    (``users-file``, ``proxy``, ``jwt``, ``token``)."""

    name: str
    groups: list[str]
    via: str | None


class InboxItem(InteractionView):
    """An open question the signed-in person may answer; ``assigned``: its approvers name
    them or one of their groups (else it is open to anyone)."""

    assigned: bool


class Inbox(BaseModel):
    interactions: list[InboxItem]
    next: str | None = Field(default=None, description="pass as `after` to read on")


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
) -> Inbox:
    """The open questions the signed-in person may answer: assigned to them (or their
    groups) first, then open to anyone, newest first; ``limit`` of them after ``after``."""
    try:
        start = _decoded(after) if after is not None else None
        records = answerable(await host.store.list_interactions(pending=True))
        mine: list[tuple[_Key, InteractionRecord, bool]] = []
        for record in records:
            approvers = await current_approvers(host.store, record)
            if may_answer(approvers, me.name, me.groups):
                mine.append((_key(record, bool(approvers)), record, bool(approvers)))
    except PiRecipesError as exc:
        raise refusal(exc) from None
    mine.sort(key=lambda found: found[0])
    page = [found for found in mine if start is None or found[0] > start][:limit]
    try:
        views = await interaction_views(host.store, [record for _, record, _ in page])
    except PiRecipesError as exc:
        raise refusal(exc) from None
    items = [
        InboxItem(**view.model_dump(), assigned=assigned)
        for view, (_, _, assigned) in zip(views, page, strict=True)
    ]
    more = len(page) == limit and page[-1] is not mine[-1]
    return Inbox(interactions=items, next=_encoded(page[-1][0]) if more else None)


def _key(record: InteractionRecord, assigned: bool) -> _Key:
    """Where ``record`` sorts: assigned first, then newest first, then by ids."""
    at = record.requested_at
    micros = int(at.timestamp()) * 1_000_000 + at.microsecond
    return (0 if assigned else 1, -micros, record.run_id, record.id)


def _encoded(key: _Key) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode().rstrip("=")


def _decoded(cursor: str) -> _Key:
    """The sort key an ``after`` cursor names; ``InvalidPayloadError`` for one this server
    did not give."""
    try:
        raw: Any = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        group, micros, run_id, interaction_id = raw
        if not (
            isinstance(group, int) and isinstance(micros, int)
            and isinstance(run_id, str) and isinstance(interaction_id, str)
        ):  # fmt: skip
            raise ValueError(cursor)
    except (ValueError, TypeError, UnicodeDecodeError):
        raise InvalidPayloadError(
            "`after` is the `next` an earlier page of the inbox gave", reason="invalid_cursor"
        ) from None
    return (group, micros, run_id, interaction_id)
