"""Typed, classified failures of the HTTP model providers.

Every failure of a provider call is raised as one :class:`ModelError` (a ``RunError``: a run-time
failure, never a developer's misuse). Callers — the agent loop, the graph engine — route on its
``error_class``; the classes, and what a caller should do next:

``usage_window``
    The account hit a rate or usage window: HTTP 429, a 402, or a quota/rate error body
    (OpenAI ``insufficient_quota`` / ``rate_limit_exceeded``, Anthropic ``rate_limit_error`` /
    ``billing_error``), or a ``Retry-After`` longer than the retry policy's cap. Wait
    (``retry_after`` seconds when known) or switch model/account.
``auth``
    HTTP 401/403, an authentication/permission error body, or no API key configured (the message
    names the environment variable to set). Fix the credentials; retrying will not help.
``unavailable``
    The provider could not be reached or could not serve: 5xx (Anthropic 529 ``overloaded``
    included), 408, connection refused/reset, timeouts, a stream that ended before its end marker
    or with the finish reason of a request the server failed (``error``, ``abort``), a response
    still coming after the provider's ``max_stream_seconds`` (that one not retried).
``transient_exhausted``
    A retryable failure (rate limit, unavailable) persisted through every attempt of the retry
    policy. ``last_error_class`` holds the class of the last failure and ``__cause__`` the last
    :class:`ModelError` itself.
``unclassified``
    Anything else: HTTP 400/404/422, a body or SSE ``data`` that is not the JSON expected, a
    response that is not an event stream (an HTML page: check the base URL), a stream that ended
    holding no answer, or a retryable failure that happened *after* events had
    already been yielded to the caller (``last_error_class`` then says what it was). Retrying the
    same request as is will most likely not help.

Messages quote the provider's own words (its error kind and message, or the body itself when it
has no message), shortened to 500 characters. The text they are built from has already been
scrubbed of every secret at the wire boundary (``_http.post_sse`` with ``_secrets.Secrets``); a
transport failure is scrubbed here and its raw exception is not chained, since it may quote the
URL or a header. Decoding can still re-form a secret the wire text only spelled (a JSON string
escapes each of its characters), so the retry driver scrubs every error again with
:func:`scrub_error`, chain included, before it is logged, retried or raised.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from interactions.errors import RunError
from recipes.models._secrets import Secrets

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ErrorClass",
    "ModelError",
    "error_from_payload",
    "error_from_response",
    "error_from_transport",
    "scrub_error",
]

ErrorClass = Literal["usage_window", "auth", "unavailable", "transient_exhausted", "unclassified"]
ERROR_CLASSES: Final[tuple[str, ...]] = get_args(ErrorClass)

_RETRYABLE_BY_DEFAULT: Final = frozenset({"usage_window", "unavailable"})
_MAX_QUOTED_CHARS: Final = 500


class ModelError(RunError):
    """A model provider call failed; ``error_class`` says how (see the module docstring).

    Fields: ``error_class``, ``provider`` (``"openai"``, ``"anthropic"``), ``status_code`` (the
    HTTP status, ``None`` for transport failures and errors reported inside the stream),
    ``retry_after`` (seconds the provider asked to wait, when it said), ``last_error_class`` (for
    ``transient_exhausted`` and for failures after partial output: the underlying class) and
    ``retryable`` (whether the same request may succeed if sent again later) and ``attempts``
    (how many times the request was sent before this failure was raised, retries included).
    ``reason`` (from :class:`RunError`) equals ``error_class``.
    """

    def __init__(
        self,
        message: str,
        *,
        error_class: ErrorClass,
        provider: str,
        status_code: int | None = None,
        retry_after: float | None = None,
        last_error_class: ErrorClass | None = None,
        retryable: bool | None = None,
        attempts: int = 1,
        run_id: str | None = None,
    ) -> None:
        super().__init__(message, run_id=run_id, reason=error_class)
        self.error_class: ErrorClass = error_class
        self.provider = provider
        self.status_code = status_code
        self.retry_after = retry_after
        self.last_error_class: ErrorClass | None = last_error_class
        self.retryable = error_class in _RETRYABLE_BY_DEFAULT if retryable is None else retryable
        self.attempts = attempts

    def __repr__(self) -> str:
        return (
            f"ModelError({str(self)!r}, error_class={self.error_class!r}, "
            f"provider={self.provider!r}, status_code={self.status_code!r})"
        )


# Provider error kinds (OpenAI ``error.code``/``error.type``, Anthropic ``error.type``) that decide
# the class before the HTTP status does. Values: (class, retryable).
_KINDS: Final[dict[str, tuple[ErrorClass, bool]]] = {
    "insufficient_quota": ("usage_window", False),
    "billing_error": ("usage_window", False),
    "rate_limit_exceeded": ("usage_window", True),
    "rate_limit_error": ("usage_window", True),
    "authentication_error": ("auth", False),
    "permission_error": ("auth", False),
    "invalid_api_key": ("auth", False),
    "overloaded_error": ("unavailable", True),
    "api_error": ("unavailable", True),
    "server_error": ("unavailable", True),
}


def _quote(text: str) -> str:
    """``text`` shortened for a message."""
    return text if len(text) <= _MAX_QUOTED_CHARS else text[:_MAX_QUOTED_CHARS] + "…"


def status_class(status: int) -> tuple[ErrorClass, bool]:
    """The class and retryability of an HTTP status alone (no error body to go on)."""
    if status in (401, 403):
        return "auth", False
    if status in (402, 429):
        return "usage_window", status == 429
    if status == 408 or status >= 500:
        return "unavailable", True
    return "unclassified", False


def _kind_and_message(payload: Any) -> tuple[list[str], str | None]:
    """The error kinds and message of an error payload, in the shapes providers use; a payload
    with no message string is quoted whole (compact JSON), so nothing the provider said is lost."""
    error = payload.get("error", payload) if isinstance(payload, dict) else None
    if isinstance(error, str):  # Ollama: {"error": "..."}
        return [], error
    if not isinstance(error, dict):
        return [], _compact(payload)
    kinds = [str(error[k]) for k in ("code", "type") if isinstance(error.get(k), str)]
    message = error.get("message")
    return kinds, message if isinstance(message, str) else _compact(payload)


def _compact(payload: Any) -> str | None:
    if payload is None:
        return None
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def error_from_payload(
    provider: str,
    status: int | None,
    payload: Any,
    *,
    retry_after: float | None = None,
) -> ModelError:
    """The :class:`ModelError` for a parsed error payload (an HTTP error body or a stream event),
    parsed from text already scrubbed of secrets.

    The provider's error kind wins over the status (a 429 ``insufficient_quota`` is a
    non-retryable ``usage_window``); without a known kind the status decides; without a status
    (an error inside a stream) the failure is ``unclassified``.
    """
    kinds, message = _kind_and_message(payload)
    known = [_KINDS[k] for k in kinds if k in _KINDS]
    if known:
        error_class, retryable = known[0]
    elif status is not None:
        error_class, retryable = status_class(status)
    else:
        error_class, retryable = "unclassified", False
    where = f"HTTP {status}" if status is not None else "error in stream"
    kind = f" {kinds[0]}" if kinds else ""
    text = _quote(message) if message else "(no error message)"
    return ModelError(
        f"{provider}: {where}{kind}: {text}",
        error_class=error_class,
        provider=provider,
        status_code=status,
        retry_after=retry_after,
        retryable=retryable,
    )


def error_from_response(
    provider: str,
    status: int,
    body: str,
    *,
    retry_after: float | None = None,
) -> ModelError:
    """The :class:`ModelError` for an HTTP error response whose ``body`` (text already scrubbed
    of secrets) is JSON, or is quoted as text when it is not."""
    try:
        payload: Any = json.loads(body)
    except ValueError:
        text = body.strip()
        payload = {"error": {"message": text}} if text else None
    return error_from_payload(provider, status, payload, retry_after=retry_after)


def scrub_error(error: BaseException, secrets: Secrets) -> None:
    """Scrub, in place, the texts of ``error`` and of every exception chained to it
    (``__cause__``, ``__context__``): their string ``args`` and notes. A chained exception
    whose text still holds a secret after that (one whose ``str`` is not built from its
    ``args``) is unlinked, so no traceback prints it."""
    chain = _chain(error)
    for current in chain:
        current.args = tuple(secrets.scrub(a) if isinstance(a, str) else a for a in current.args)
        notes = getattr(current, "__notes__", None)
        if isinstance(notes, list):
            current.__notes__ = [secrets.scrub(n) if isinstance(n, str) else n for n in notes]
    for current in chain:
        if current.__cause__ is not None and _tells(current.__cause__, secrets):
            current.__cause__ = None
        if current.__context__ is not None and _tells(current.__context__, secrets):
            current.__context__ = None


def _chain(error: BaseException) -> list[BaseException]:
    seen: dict[int, BaseException] = {}
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen[id(current)] = current
        todo += [current.__cause__, current.__context__]
    return list(seen.values())


def _tells(error: BaseException, secrets: Secrets) -> bool:
    """Whether ``error``'s own text (``str``, ``repr``) still holds something to scrub."""
    try:
        texts = (str(error), repr(error))
    except Exception:  # a text that cannot be read cannot be trusted either
        return True
    return any(secrets.scrub(text) != text for text in texts)


def error_from_transport(provider: str, exc: httpx.HTTPError, *, secrets: Secrets) -> ModelError:
    """The :class:`ModelError` for an httpx failure: timeouts and network errors are
    ``unavailable`` (retryable); anything else (a bad URL, an unsupported scheme) ``unclassified``.

    The message names the exception type and quotes its text scrubbed with ``secrets`` (httpx
    may quote the URL or a refused header). Raise the result outside the ``except`` block that
    caught ``exc`` so that the raw exception is not chained to it.
    """
    name = type(exc).__name__
    text = _quote(secrets.scrub(str(exc)))
    detail = f"{name}: {text}" if text else name
    import httpx  # only a provider's transport failure gets here: httpx is loaded by then

    if isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError):
        return ModelError(
            f"{provider}: the provider could not be reached or stopped answering ({detail})",
            error_class="unavailable",
            provider=provider,
        )
    return ModelError(f"{provider}: {detail}", error_class="unclassified", provider=provider)
