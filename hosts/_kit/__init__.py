"""The host kit: what every host shares below its surface, so no host copies another.

- :class:`Workers` and :class:`Ticket`: bounded concurrency for the legs a host drives;
  :func:`sweep_expired`, :func:`sweep_retries`: the sweeps that continue runs on them;
  :func:`sweep_reminders`: the sweep that reminds and escalates open questions.
- :class:`Desk`: a person's answer as one runner call, the run it claims handed to a worker
  (:class:`Answered`; :class:`Busy`, :class:`CannotContinue` when it cannot be).
- :class:`StoreFeed`: the store's feed followed from a cursor, through the store's failures;
  :class:`Reader`: what each event means for a person (:data:`News`: a run created, a question
  opened, voted on or closed, a status changed, a leg ended with its texts), for the host to
  render; :func:`tally_of` (:class:`Tally`): the approvals so far of an approval several
  people must give ("1 of 2 approvals: ada").
- :func:`load_token`, :func:`check_token`, :class:`Origins`, :class:`Gate`: who may talk to
  a host over HTTP (the bearer token every HTTP host shares, the origins a browser page may
  have), checked before the application reads a request.
- :class:`Users` (:func:`load_users`, :func:`add_user`): the users file: people, their
  groups, their hashed tokens, who they are in Slack, whether the command line may speak for
  another.
- :class:`WebhookDeliverer` (:func:`delivering`, :class:`Webhook`, :class:`WebhookSecret`,
  :class:`WebhookMessage`; :func:`webhooks_from`: the command line's settings): interaction
  events posted signed to webhooks, from the store's own log (a leased cursor per target);
  :class:`LeasedConsumer`: that loop of a lease and a cursor, which the email host runs too.
- :func:`flat_parameters`, :func:`call_arguments`: a tool call's arguments as its approver
  edits them (one field per flat parameter, else one JSON text), the rule every host's form
  follows.
- :func:`answerable` (:func:`is_answerable`, :func:`asks_a_person`, :class:`Person`): which
  questions a person can answer, the one rule behind every host's lists and cards.

Private to ``hosts``: a host imports it; nothing outside ``hosts`` does.
"""

from hosts._kit._access import (
    IDENTITY,
    TOKEN_FILE,
    Gate,
    Origins,
    bearer_token,
    check_origins,
    check_token,
    load_token,
    secret_text,
    token_folder,
)
from hosts._kit._answerable import Person, answerable, asks_a_person, is_answerable
from hosts._kit._arguments import FLAT_TYPES, call_arguments, flat_parameters
from hosts._kit._consumer import LeasedConsumer
from hosts._kit._deliver import Webhook, WebhookDeliverer, delivering
from hosts._kit._desk import Answered, CannotContinue, Desk
from hosts._kit._follow import StoreFeed
from hosts._kit._news import (
    LegEnded,
    News,
    QuestionClosed,
    QuestionOpened,
    QuestionReminded,
    QuestionVoted,
    Reader,
    RunCreated,
    StatusChanged,
)
from hosts._kit._tally import Tally, tally_of
from hosts._kit._users import USERS_ENV, User, Users, add_user, find_users, load_users
from hosts._kit._webhook_config import WEBHOOK_SECRET_ENV, webhooks_from
from hosts._kit._webhooks import WebhookMessage, WebhookSecret
from hosts._kit._workers import (
    Busy,
    Job,
    Ticket,
    Workers,
    sweep_expired,
    sweep_reminders,
    sweep_retries,
)

__all__ = [
    "FLAT_TYPES",
    "IDENTITY",
    "TOKEN_FILE",
    "USERS_ENV",
    "WEBHOOK_SECRET_ENV",
    "Answered",
    "Busy",
    "CannotContinue",
    "Desk",
    "Gate",
    "Job",
    "LeasedConsumer",
    "LegEnded",
    "News",
    "Origins",
    "Person",
    "QuestionClosed",
    "QuestionOpened",
    "QuestionReminded",
    "QuestionVoted",
    "Reader",
    "RunCreated",
    "StatusChanged",
    "StoreFeed",
    "Tally",
    "Ticket",
    "User",
    "Users",
    "Webhook",
    "WebhookDeliverer",
    "WebhookMessage",
    "WebhookSecret",
    "Workers",
    "add_user",
    "answerable",
    "asks_a_person",
    "bearer_token",
    "call_arguments",
    "check_origins",
    "check_token",
    "delivering",
    "find_users",
    "flat_parameters",
    "is_answerable",
    "load_token",
    "load_users",
    "secret_text",
    "sweep_expired",
    "sweep_reminders",
    "sweep_retries",
    "tally_of",
    "token_folder",
    "webhooks_from",
]
