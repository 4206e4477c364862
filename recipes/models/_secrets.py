"""The credentials a provider holds: the process's (``interactions.secrets``, re-exported here),
and those a base URL carries, which stay out of the URL and of every header that cannot hold
them."""

from __future__ import annotations

import base64
import re
from typing import Final
from urllib.parse import unquote

from interactions.errors import UsageError
from interactions.secrets import MIN_SECRET_CHARS, REDACTED, Secrets, credential_names

_URL_USERINFO: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#@]*)@")

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "Secrets",
    "credential_names",
    "header_value_problem",
    "split_base_url",
]


def header_value_problem(value: str) -> str | None:
    """What keeps ``value`` (a credential) out of an HTTP header, without quoting it: ``None``
    when every character is visible ASCII, else e.g. ``"a line break at position 52"``."""
    for position, char in enumerate(value, start=1):
        if "!" <= char <= "~":
            continue
        if char in "\r\n":
            what = "a line break"
        elif char.isspace():
            what = "a space"
        elif char.isascii():
            what = "a control character"
        else:
            what = "a non-ASCII character"
        return f"{what} at position {position}"
    return None


def split_base_url(url: str, source: str) -> tuple[str, str | None, list[str]]:
    """A provider's base URL without the ``user:password@`` it may carry, the ``Authorization``
    value (``Basic ...``) those credentials make, as httpx would have sent them, and the secrets
    they hold (the password, the header's token): ``(url, None, [])`` when there are none. Kept
    out of the URL, the password shows in no ``repr`` and no httpx log line (httpx logs every
    request's URL as is, query included).

    Raises ``UsageError`` naming ``source`` (``OPENAI_BASE_URL``, ``base_url``), without quoting
    the URL, when it has a query or a fragment: the request path would be appended inside it,
    and a credential there would be logged with every request.
    """
    if "?" in url or "#" in url:
        raise UsageError(
            f"{source}: a base URL cannot carry a query string or a fragment (the request path "
            "is appended to it, and httpx logs every request's URL); give the URL up to its "
            "path, and a key through the provider's API key setting"
        )
    match = _URL_USERINFO.match(url)
    if match is None:
        return url, None, []
    user, _, password = match.group(2).partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    secrets = [password, unquote(password), token]
    return match.group(1) + url[match.end() :], f"Basic {token}", secrets
