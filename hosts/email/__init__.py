"""The email host: each question of the store's runs mailed to its approvers, answered from
the mail's links.

- ``pi-recipes email`` (:func:`main`) follows the store's feed from a durable, leased cursor
  (several email hosts on one store send each mail once) and mails each question for a person
  to its approvers, their addresses from the users file (a question naming none goes to
  ``--to``, else nobody), again on a reminder and to the people an escalation adds. A mail
  holds the question, a link per choice (an option each, or Choose… for several; Approve,
  Request changes, Decline for an approval) and a link to the card on the web page.
- A link is signed for its recipient, its question and its choice, and expires with the
  question. Its ``GET`` only shows a confirmation page; the page's button ``POST`` s the answer,
  recorded as the recipient (``via`` ``email``) with every rule of the question's approvers
  and votes applied. A link used twice, by someone no longer allowed, forged or expired is
  refused with a page that says why.
- :class:`EmailHost` is the host for a program of its own (its :attr:`EmailHost.app` is the
  pages' ASGI application); :class:`EmailConfig`, :class:`SmtpSettings`, :class:`UsersFile`,
  :class:`LinkSigner` are its settings.

Errors: a bad option, a missing users file or signing secret: ``UsageError`` (exit 2) before
anything starts. Once running, a mail server that is down or refuses is tried again with
backoff, never skipping a question; nothing a link carries raises out of the pages. The SMTP
password and the signing secret are read from the environment (or a file) and never stored,
printed or logged.
"""

from hosts.email._config import EmailConfig, SmtpSettings, UsersFile
from hosts.email._host import EmailHost
from hosts.email._links import LinkSigner
from hosts.email._main import build_parser, main, serve

__all__ = [
    "EmailConfig",
    "EmailHost",
    "LinkSigner",
    "SmtpSettings",
    "UsersFile",
    "build_parser",
    "main",
    "serve",
]
