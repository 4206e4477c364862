"""Log records with the process's credentials scrubbed out, whoever logs them."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from interactions._secrets import Secrets

__all__ = ["SecretsFilter", "scrub_logs"]

_PLAIN = (int, float, bool, type(None))


class SecretsFilter(logging.Filter):
    """Scrubs a record in place and lets it through: its message, each argument (one that is
    not a number formats as its text scrubbed, ``%s`` or ``%r``), its traceback
    (formatted once, scrubbed, kept as ``exc_text``) and its stack."""

    def __init__(self, secrets: Secrets) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        scrub = self.secrets.scrub
        if isinstance(record.msg, str):
            record.msg = scrub(record.msg)
        elif record.msg is not None and (text := str(record.msg)) != scrub(text):
            record.msg = scrub(text)
        if isinstance(record.args, Mapping):
            record.args = {key: _arg(value, scrub) for key, value in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_arg(value, scrub) for value in record.args)
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None  # a handler formats exc_text, never the raw exception
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


def _arg(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, _PLAIN):
        return value
    shown = _Shown(value, scrub)
    try:
        clean = str(value) == str(shown) and repr(value) == repr(shown)
    except Exception:  # a broken __str__ is the formatter's to report
        return value
    return value if clean else shown


class _Shown:
    """An argument whose text holds a secret: it formats (``%s``, ``%r``) scrubbed."""

    def __init__(self, value: Any, scrub: Callable[[str], str]) -> None:
        self._value, self._scrub = value, scrub

    def __str__(self) -> str:
        return self._scrub(str(self._value))

    def __repr__(self) -> str:
        return self._scrub(repr(self._value))


_installed: dict[str, Any] = {}


def scrub_logs(env: Mapping[str, str] | None = None) -> SecretsFilter:
    """Scrub every log record this process makes of the credentials of ``env`` (default: the
    process's environment, read now), whichever logger makes it and whichever handler writes
    it: the record factory runs a :class:`SecretsFilter` on each record as it is made. Every
    host's entry point calls it first. Calling it again replaces the secrets (not stacked).
    Returns the filter (to add to a handler of one's own as well)."""
    found = SecretsFilter(Secrets.from_env(os.environ if env is None else env))
    base = _installed.get("base") or logging.getLogRecordFactory()
    _installed["base"] = base

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record: logging.LogRecord = base(*args, **kwargs)
        found.filter(record)
        return record

    logging.setLogRecordFactory(make)
    return found
