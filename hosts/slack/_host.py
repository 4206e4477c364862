"""The Slack host: what happens when Slack calls, whichever way it calls (Socket Mode or HTTP).

:meth:`SlackHost.on_interaction`, :meth:`~SlackHost.on_event` and :meth:`~SlackHost.on_command`
only read the payload and schedule the work, so the transport acknowledges within Slack's 3 s;
the work runs on the host's task group (:meth:`SlackHost.running`). A click is checked against
the allow-list, its Slack user made a person (:mod:`hosts.slack._people`: the users file's
mapping, or the bare Slack user id without one) and checked against the interrupt's approvers,
turned into an answer (:func:`~hosts.slack._actions.answer_of`) and handed to the worker: one
runner call stores it (that identity as ``answered_by``, host ``slack``) and,
when it was the run's last open interaction, claims the run, which the worker continues; the
feed follower redraws the card. A refusal is shown to the clicking person only; the modal of a
tool call's edited arguments is checked before it is acknowledged, so arguments that do not fit
the tool's parameters are said under their inputs (``response_action: errors``) and nothing is
stored. A redelivered
payload changes nothing: an identical answer is a replay, a redelivered mention finds its run taken.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup

from hosts._kit import Busy
from hosts.slack._access import Access, MembersUnknown
from hosts.slack._actions import Click, Submission, answer_of, args_errors, parse_interaction
from hosts.slack._cards import closed_why, only_these
from hosts.slack._client import SlackOut
from hosts.slack._config import SlackConfig
from hosts.slack._events import parse_command, parse_event, run_id_for
from hosts.slack._feed import Follower
from hosts.slack._modals import answer_modal, args_modal, feedback_modal
from hosts.slack._mrkdwn import escape, person
from hosts.slack._people import SlackPeople
from hosts.slack._refs import ActionId, CardRef, ModalId, ModalMeta, digest_of
from hosts.slack._worker import Worker
from interactions import (
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    NotAllowedError,
    UnknownInteractionError,
    UnknownRunError,
)
from interactions.people import Identity, may_answer, who
from interactions.reminders import current_approvers
from interactions.store import InteractionRecord
from recipes.runs import Runs

__all__ = ["BUSY", "EXPIRED", "MODAL_NOT_OPENED", "NOT_ALLOWED", "STOPPING", "SlackHost"]

logger = logging.getLogger("hosts.slack")

NOT_ALLOWED = "You are not allowed to answer this."
EXPIRED = "This question has expired: it no longer takes answers."
MODAL_NOT_OPENED = (
    "The form did not open (Slack refused it, or the click came too late): click again."
)
STOPPING = "Nothing was started: this app is stopping. Ask again once it is back."
BUSY = "Not sent: every worker of this app is busy. Click again in a moment."
"""Said in the thread of a mention or slash command that came while the host stopped."""
SHOW_GRACE = 5.0
"""Seconds the follower gets, once the legs are over, to show how they ended."""
_SEEN = 1000  # event ids remembered against redelivery


def _members_unknown(exc: MembersUnknown) -> str:
    """What a person is told when the allow-list could not be checked for them."""
    return (
        f"Nothing was stored: Slack would not say who may answer this ({escape(exc.error)}). "
        "Try again later, or tell whoever runs this Slack app."
    )


def _not_an_approver(approvers: tuple[str, ...] | list[str]) -> str:
    """What a person the interrupt does not name is told (the card stays open)."""
    return f"{only_these(approvers)} this: nothing was stored."


def _not_started(command: str) -> str:
    """What the person is told when the thread of their slash command could not be posted."""
    return (
        "Nothing was started: Slack would not let this app post here. Invite the app to this "
        f"channel, or use {command} in a channel it is in."
    )


def _already(record: InteractionRecord) -> str:
    answer = record.answer
    if answer is None or answer.status == "expired":
        return "This question has expired: it no longer takes answers."
    closed = closed_why(answer)
    if closed:
        return f"This question is closed: {closed}."
    return f"Already answered by {person(answer.answered_by, answer.via)}."


class SlackHost:
    """One Slack app serving one recipe over one store. Build it, enter :meth:`running`, and
    hand Slack's payloads to the ``on_*`` methods (the Socket Mode client and the HTTP
    endpoints do)."""

    def __init__(
        self, config: SlackConfig, runner: Runs, out: SlackOut, *, access: Access | None = None
    ) -> None:
        self.config = config
        self.runner = runner
        self.store = runner.store
        self.out = out
        self.access = access or Access(config.allow, out.client)
        self.people = SlackPeople(config.users, self.access)
        self.follower = Follower(
            self.store, out, config, view=runner.view, lane_capacity=config.lane_capacity
        )
        self.worker = Worker(runner, config, out)
        self._services: TaskGroup | None = None
        self._seen: OrderedDict[str, None] = OrderedDict()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[SlackHost]:
        """Catch up with what happened while no host ran (:meth:`Follower.catch_up`, and the
        runs an answer given here left paused), then follow the store, sweep expiries and
        drive runs until the block ends. Then the legs in flight get ``stop_grace`` seconds to
        finish before they are cancelled (their runs left to retry), and the follower up to
        :data:`SHOW_GRACE` more to say in their threads how they ended (its runs' lanes
        drained: what is left unshown then is logged)."""
        async with anyio.create_task_group() as services:
            self._services = services
            try:
                self.follower.attach(services)
                cursor = await self.follower.catch_up()
                await services.start(self.follower.follow, cursor)
                services.start_soon(self.follower.repost_forever)
                await services.start(self.worker.run)
                services.start_soon(self.worker.sweep_forever)
                await self.worker.resume_left_paused()
                try:
                    yield self
                finally:
                    await self.worker.stop()
                await self.follower.settle(within=SHOW_GRACE)
                self.follower.stop()
            finally:
                self._services = None
                services.cancel_scope.cancel()

    def _spawn(self, work: Callable[[], Awaitable[object]], what: str) -> None:
        if self._services is None:
            raise RuntimeError("the Slack host is not running: enter SlackHost.running() first")

        async def guarded() -> None:
            try:
                await work()
            except Exception:
                logger.exception("%s failed", what)

        self._services.start_soon(guarded)

    # ------------------------------------------------------------------ what Slack sends

    async def on_interaction(self, payload: Mapping[str, Any]) -> dict[str, Any] | None:
        """A click or a modal sent: schedule its work; return the acknowledgement's body
        (``None``: an empty one, which also closes a modal). Raises ``InvalidPayloadError``
        for a payload of ours that cannot be read."""
        action = parse_interaction(payload)
        if isinstance(action, Submission) and action.modal == ModalId.ARGS:
            errors = await self._args_errors(action)
            if errors:  # the modal stays open, saying what is wrong; nothing is stored
                return {"response_action": "errors", "errors": errors}
        if action is not None:
            self._spawn(lambda: self._act(action), f"{type(action).__name__} by {action.user}")
        return None

    async def _args_errors(self, action: Submission) -> dict[str, str]:
        """What is wrong with the arguments a modal sent, checked before it is acknowledged
        (so Slack shows it under the inputs); empty when they fit, or when the question is
        gone or closed (then the work says so, as for any answer)."""
        record = await self._find(action.ref)
        if record is None or record.answer is not None:
            return {}
        return args_errors(action, record.interrupt)

    async def on_event(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """An Events API envelope: answers Slack's URL check, starts a run for a mention
        (once per event id, however often Slack delivers it)."""
        if body.get("type") == "url_verification":
            return {"challenge": str(body.get("challenge", ""))}
        mention = parse_event(body)
        if mention is None or self._redelivered(mention.event_id):
            return None
        if not mention.prompt:
            self._spawn(
                lambda: self.out.reply(
                    mention.channel, mention.thread_ts, "Mention me with what to do."
                ),
                "usage reply",
            )
            return None
        if not self.worker.start(
            mention.prompt,
            channel=mention.channel,
            thread_ts=mention.thread_ts,
            run_id=run_id_for(mention.event_id),
        ):
            self._spawn(
                lambda: self.out.reply(mention.channel, mention.thread_ts, STOPPING),
                "the stopping reply",
            )
        return None

    async def on_command(self, form: Mapping[str, Any]) -> dict[str, Any] | None:
        """A slash command: the configured one starts a run in a new thread; the reply (to the
        person only) says so, or how to use it."""
        command = parse_command(form)
        if command.command != self.config.command:
            return {"response_type": "ephemeral", "text": f"I do not handle {command.command}."}
        if not command.text:
            return {"response_type": "ephemeral", "text": f"Usage: {command.command} what to do"}

        async def start() -> None:
            opening = f"<@{command.user}> asked: {escape(command.text)}"
            ts = await self.out.reply_md(command.channel, None, opening)
            if ts is None:  # not in the channel (or a DM it is not part of): say so, start nothing
                if command.response_url:
                    await self.out.respond(command.response_url, _not_started(command.command))
                return
            run_id = run_id_for(f"cmd-{command.channel}-{ts}")
            channel = command.channel
            if not self.worker.start(command.text, channel=channel, thread_ts=ts, run_id=run_id):
                await self.out.reply(channel, ts, STOPPING)

        self._spawn(start, f"{command.command} by {command.user}")
        return {"response_type": "ephemeral", "text": "Starting: follow the thread."}

    def _redelivered(self, event_id: str) -> bool:
        if event_id in self._seen:
            return True
        self._seen[event_id] = None
        while len(self._seen) > _SEEN:
            self._seen.popitem(last=False)
        return False

    # ------------------------------------------------------------------ a click, a modal

    async def _find(self, ref: CardRef) -> InteractionRecord | None:
        if ref.resolved:
            try:
                return await self.store.get_interaction(ref.run_id, ref.interaction_id)
            except (UnknownRunError, UnknownInteractionError):
                return None
        for record in await self.store.list_interactions(pending=True):
            if digest_of(record.run_id, record.id) == ref.digest:
                return record
        known = self.follower.card_of(ref.digest)  # answered since: the cards this host knows
        if known is not None:
            with contextlib.suppress(UnknownRunError, UnknownInteractionError):
                return await self.store.get_interaction(*known)
        return None

    async def _act(self, action: Click | Submission) -> None:
        where = action.where

        async def tell(text_md: str) -> None:
            await self.out.ephemeral(where.channel, action.user, text_md, where.thread_ts)

        record = await self._find(action.ref)
        if record is None:
            await tell("This question is no longer open here.")
            return
        try:
            allowed = await self.access.may_answer(action.user, where.channel)
        except MembersUnknown as exc:
            await tell(_members_unknown(exc))
            return
        if not allowed:
            await tell(NOT_ALLOWED)
            return
        answerer, unknown = await self.people.identity(action.user)
        name, groups = who(answerer)
        opens_modal = isinstance(action, Click) and action.opens_modal
        if record.answer is not None and (opens_modal or record.answer.answered_by != name):
            await tell(_already(record))
            return
        approvers = await current_approvers(self.follower.store, record)
        if record.answer is None and not may_answer(approvers, name, groups):
            await tell(_members_unknown(unknown) if unknown else _not_an_approver(approvers))
            return  # no form opened, nothing stored: the card stays open for who may
        if record.answer is None and record.expires_at < self.follower.clock():
            await tell(EXPIRED)  # past its expiry, not yet swept: no form to fill in for nothing
            await self.follower.refresh(record.run_id, record.id)
            return
        if isinstance(action, Click) and opens_modal:
            meta = ModalMeta(CardRef(record.run_id, record.id), where.channel, where.thread_ts,
                             action.picked)  # fmt: skip
            interrupt = record.interrupt
            if action.action == ActionId.CHANGES:
                view = feedback_modal(interrupt, meta)
            elif action.action == ActionId.EDIT:
                view = args_modal(interrupt, meta)
            else:
                view = answer_modal(interrupt, meta)
            if not await self.out.open_modal(action.trigger_id, view):
                await tell(MODAL_NOT_OPENED)
            return
        await self._answer(action, record, answerer, tell)

    async def _answer(
        self,
        action: Click | Submission,
        record: InteractionRecord,
        answerer: str | Identity,
        tell: Callable[[str], Awaitable[None]],
    ) -> None:
        try:
            status, payload = answer_of(action, record.interrupt)
            done = await self.worker.answer(
                record.run_id, record.id, payload, status=status, user=answerer
            )
        except NotAllowedError as exc:  # the runner's own check: nothing was stored
            await tell(_not_an_approver(exc.approvers))
            return
        except Busy:
            await tell(BUSY)
            return
        except ConflictError:
            await tell(_already(await self.store.get_interaction(record.run_id, record.id)))
            return
        except ExpiredError:
            await tell(EXPIRED)
            await self.follower.refresh(record.run_id, record.id)
            return
        except InvalidPayloadError as exc:
            await tell(f"Not sent: {escape(str(exc))}")
            return
        if done is not None and not done.settled:  # one vote of several
            counted = "counted" if done.created else "already counted"
            await tell(f"Your vote is {counted}: {len(done.approvals)} of "
                       f"{done.required_approvals} approvals so far.")  # fmt: skip
            return
        if done is None or done.created:
            return  # stored (and the run continued here when it was the last answer)
        stored = (await self.store.get_interaction(record.run_id, record.id)).answer
        if stored is not None and stored.answered_by != who(answerer)[0]:
            await tell(f"Already answered by {person(stored.answered_by, stored.via)}.")
