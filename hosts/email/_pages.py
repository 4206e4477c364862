"""The pages a mail's links open: ``GET /answer/{token}`` shows what would be answered, as
whom, and a button; only the button's ``POST`` answers. Mail scanners open every link in a
mail: a ``GET`` never answers anything.

A ``POST`` answers through the host kit's :class:`~hosts._kit.Desk` as the person the link
was signed for (their groups from the users file as it is now, ``via`` ``email``), so the
question's approvers, votes and required approvals are checked as on every host. A link that
is forged (400), expired (410), for a question already answered or one this person already
voted on (409), or for someone who may not answer it (any more) (403) is refused with a page
that says why, and nothing is stored.

CSRF: no cookie or session is involved; the form's only secret is the signed token in its
URL, which only the mail's recipient has, so a page elsewhere cannot make a browser post a
valid one. A ``POST`` whose ``Origin`` names another site is refused all the same (under the
pages' ``no-referrer`` policy a browser says ``null``: let through, the token decides). Pages
are plain HTML (every text escaped) under a Content-Security-Policy that allows no script,
style or frame, and ``Referrer-Policy: no-referrer`` keeps the token out of other sites' logs.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from hosts._kit import Busy, CannotContinue, Desk, asks_a_person
from hosts.email._config import EmailConfig, UsersFile
from hosts.email._links import BadLink, Link, LinkSigner, answer_for, choice_label, needs_text
from hosts.email._mail import question_texts
from interactions import (
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    NotAllowedError,
    UnknownInteractionError,
    UnknownRunError,
    UsageError,
)
from interactions.people import Identity, may_answer
from interactions.reminders import current_approvers
from interactions.store import InteractionRecord, Store, VoteStore

__all__ = ["CSP", "MAX_FORM", "email_app"]

logger = logging.getLogger("hosts.email")

CSP = "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
MAX_FORM = 64 * 1024
"""The largest form a confirmation posts (bytes)."""

_HEADERS = {
    "Content-Security-Policy": CSP,
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


def _page(title: str, *paragraphs: str, status: int = 200, form: str = "") -> HTMLResponse:
    """A page: ``title`` and ``paragraphs`` (already escaped HTML), and a ``form``."""
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    text = (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>\n<body>\n<h1>{html.escape(title)}</h1>\n"
        f"{body}\n{form}</body></html>\n"
    )
    return HTMLResponse(text, status_code=status, headers=_HEADERS)


def _refused(title: str, why: str, status: int) -> HTMLResponse:
    return _page(title, html.escape(why), "Nothing was sent.", status=status)


@dataclass(frozen=True)
class _Checked:
    link: Link
    record: InteractionRecord
    who: Identity


def _already(record: InteractionRecord) -> str:
    answer = record.answer
    assert answer is not None
    if answer.status == "expired":
        return "This question expired before it was answered."
    by = f" by {answer.answered_by}" if answer.answered_by else ""
    via = f" (via {answer.via})" if answer.via else ""
    if answer.status == "cancelled":
        return f"This question was declined or closed{by}{via}."
    return f"This question was already answered{by}{via}."


def email_app(
    store: Store,
    desk: Desk,
    config: EmailConfig,
    users: UsersFile,
    signer: LinkSigner,
    *,
    clock: Callable[[], datetime],
) -> Starlette:
    """The link pages' ASGI application (see the module docstring)."""

    async def check(token: str) -> _Checked | HTMLResponse:
        """The link ``token`` is, and its question, when it may still be used; else the page
        that says why not."""
        try:
            link = signer.read(token)
        except BadLink:
            return _refused("Not a valid link", "This link is not one we sent (it was changed "
                            "or cut short): open the link of the mail itself.", 400)  # fmt: skip
        if link.expired(clock()):
            return _refused("This link has expired", "The question it answers expired at "
                            f"{link.expires:%Y-%m-%d %H:%M} UTC.", 410)  # fmt: skip
        user = users.current().users.get(link.name)
        if user is None or user.email != link.address:
            return _refused("This link is no longer valid", f"It was sent to {link.address}, "
                            f"which is no longer {link.name}'s address here.", 403)  # fmt: skip
        try:
            record = await store.get_interaction(link.run_id, link.interaction_id)
        except (UnknownRunError, UnknownInteractionError):
            return _refused("Unknown question", "This question is not in the store.", 404)
        if not asks_a_person(record):
            return _refused("Unknown question", "This question is not for a person.", 404)
        if record.answer is not None:
            return _refused("Already answered", _already(record), 409)
        if isinstance(store, VoteStore) and any(
            v.voter == link.name for v in await store.list_votes(record.run_id, record.id)
        ):
            return _refused("Already voted", "You already voted on this approval.", 409)
        who = user.identity("email")
        approvers = await current_approvers(store, record)
        if not may_answer(approvers, who.name, who.groups):
            return _refused("Not yours to answer", f"Only {', '.join(approvers)} may answer "
                            f"this; you are {link.name}.", 403)  # fmt: skip
        try:
            choice_label(record.interrupt, link.choice)
        except UsageError:
            return _refused("Not a valid link", "This choice is not one of the question's.", 400)
        return _Checked(link, record, who)

    def question(record: InteractionRecord) -> list[str]:
        header, title, paragraphs = question_texts(record.interrupt)
        shown = [f"<strong>{html.escape(header)}: {html.escape(title)}</strong>"]
        for heading, text in paragraphs:
            lead = f"<strong>{html.escape(heading)}</strong><br>" if heading else ""
            shown.append(lead + html.escape(text).replace("\n", "<br>"))
        return shown

    async def confirm(request: Request) -> Response:
        checked = await check(request.path_params["token"])
        if isinstance(checked, Response):
            return checked
        link, record = checked.link, checked.record
        label = choice_label(record.interrupt, link.choice)
        field = ""
        if needs_text(link.choice):
            what = "What should change?" if link.choice == "changes" else "Your answer"
            field = (f'<p><label for="text">{what}</label><br>'
                     '<textarea id="text" name="text" rows="6" cols="60" required>'
                     "</textarea></p>\n")  # fmt: skip
        if link.choice == "choose":
            field = _checkboxes(record)
            if record.interrupt.allow_other:
                field += ('<p><label for="text">Another answer (optional)</label><br>'
                          '<input id="text" name="text" size="60"></p>\n')  # fmt: skip
        form = (
            f'<form method="post">\n{field}<p><button type="submit">Confirm: '
            f"{html.escape(label)}</button></p>\n</form>\n"
        )
        return _page(
            "Confirm your answer",
            *question(record),
            f"You answer <strong>{html.escape(label)}</strong> as "
            f"<strong>{html.escape(link.name)}</strong> ({html.escape(link.address)}).",
            "Nothing is sent until you confirm.",
            form=form,
        )

    async def answer(request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin not in (None, "null", _origin(config.base_url)):  # "null": no-referrer's
            return _refused("Refused", "This form was sent from another site.", 403)
        body = await request.body()
        if len(body) > MAX_FORM:
            return _refused("Refused", "The form is too large.", 413)
        checked = await check(request.path_params["token"])
        if isinstance(checked, Response):
            return checked
        link, record, who = checked.link, checked.record, checked.who
        form = parse_qs(body.decode("utf-8", "replace"))
        text = form.get("text", [""])[0]
        try:
            status, payload = answer_for(record.interrupt, link.choice, text, form.get("pick", []))
            done = await desk.answer(
                link.run_id, link.interaction_id, payload, status=status, answered_by=who
            )
        except NotAllowedError as exc:
            return _refused("Not yours to answer",
                            f"Only {', '.join(exc.approvers)} may answer this.", 403)  # fmt: skip
        except ExpiredError:
            return _refused("This link has expired", "The question expired.", 410)
        except ConflictError:
            fresh = await store.get_interaction(link.run_id, link.interaction_id)
            why = _already(fresh) if fresh.answer is not None else "You already voted."
            return _refused("Already answered", why, 409)
        except InvalidPayloadError as exc:
            return _refused("Not sent", str(exc), 400)
        except Busy:
            return _refused("Busy", "Every worker is busy: go back and confirm again in a "
                            "moment.", 503)  # fmt: skip
        except CannotContinue as exc:
            logger.warning("%s", exc)
            return _page("Answer recorded", "Your answer is stored, but the run cannot continue "
                         "on this server; it will continue where it can.")  # fmt: skip
        label = html.escape(choice_label(record.interrupt, link.choice))
        if not done.created:
            return _refused("Already answered", "This answer was already given.", 409)
        if not done.settled:
            return _page("Vote counted", f"Your vote, <strong>{label}</strong>, is counted: "
                         f"{len(done.approvals)} of {done.required_approvals} approvals so "
                         "far.")  # fmt: skip
        return _page("Answer sent", f"You answered <strong>{label}</strong>. Thank you.")

    routes = [
        Route("/answer/{token}", confirm, methods=["GET"]),
        Route("/answer/{token}", answer, methods=["POST"]),
    ]
    prefix = urlsplit(config.base_url).path.rstrip("/")
    if prefix:  # served behind a proxy that keeps the path, or as is
        routes += [Route(f"{prefix}/answer/{{token}}", confirm, methods=["GET"]),
                   Route(f"{prefix}/answer/{{token}}", answer, methods=["POST"])]  # fmt: skip
    return Starlette(routes=routes)


def _checkboxes(record: InteractionRecord) -> str:
    """The options of a question of several answers, to tick (labels escaped)."""
    boxes = []
    for index, option in enumerate(record.interrupt.options):
        boxes.append(f'<label><input type="checkbox" name="pick" value="{index}"> '
                     f"{html.escape(option.label)}</label><br>")  # fmt: skip
    return "<fieldset><legend>Tick your answers</legend>\n" + "\n".join(boxes) + "\n</fieldset>\n"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
