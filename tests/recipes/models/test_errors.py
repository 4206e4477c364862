"""Classification of provider failures and scrubbing of secrets."""

from __future__ import annotations

import json

import httpx
import pytest

from interactions._errors import RunError
from recipes.models._errors import (
    ModelError,
    error_from_payload,
    error_from_response,
    error_from_transport,
    scrub,
)


def body(kind: str | None = None, message: str = "msg", *, code: str | None = None) -> bytes:
    error: dict[str, str] = {"message": message}
    if kind:
        error["type"] = kind
    if code:
        error["code"] = code
    return json.dumps({"error": error}).encode()


@pytest.mark.parametrize(
    ("status", "raw", "error_class", "retryable"),
    [
        (429, body("requests", code="rate_limit_exceeded"), "usage_window", True),
        (429, body("insufficient_quota", code="insufficient_quota"), "usage_window", False),
        (429, body("rate_limit_error"), "usage_window", True),
        (429, b"", "usage_window", True),
        (402, body("billing_error"), "usage_window", False),
        (400, body("billing_error"), "usage_window", False),
        (401, body("invalid_request_error", code="invalid_api_key"), "auth", False),
        (401, body("authentication_error"), "auth", False),
        (403, body("permission_error"), "auth", False),
        (403, b"forbidden", "auth", False),
        (500, body("api_error"), "unavailable", True),
        (502, b"<html>bad gateway</html>", "unavailable", True),
        (503, b"", "unavailable", True),
        (529, body("overloaded_error"), "unavailable", True),
        (408, b"", "unavailable", True),
        (400, body("invalid_request_error"), "unclassified", False),
        (404, body("not_found_error"), "unclassified", False),
        (422, b"{not json", "unclassified", False),
        (
            400,
            b'{"object": "error", "message": "vllm says no", "type": "BadRequestError"}',
            "unclassified",
            False,
        ),
        (500, b'{"error": "ollama says no"}', "unavailable", True),
        (400, b"[1, 2]", "unclassified", False),
    ],
)
def test_response_classification(
    status: int, raw: bytes, error_class: str, retryable: bool
) -> None:
    error = error_from_response("p", status, raw, secret=None)
    assert (error.error_class, error.retryable, error.status_code) == (
        error_class,
        retryable,
        status,
    )
    assert error.reason == error_class
    assert isinstance(error, RunError)


@pytest.mark.parametrize(
    ("payload", "error_class"),
    [
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "unavailable",
        ),
        ({"error": {"type": "rate_limit_error", "message": "slow down"}}, "usage_window"),
        ({"error": {"type": "invalid_request_error", "message": "bad"}}, "unclassified"),
        ({"error": None}, "unclassified"),
        ("not an object", "unclassified"),
    ],
)
def test_errors_inside_a_stream(payload: object, error_class: str) -> None:
    error = error_from_payload("p", None, payload, secret=None)
    assert error.error_class == error_class
    assert error.status_code is None


def test_message_quotes_the_provider_message() -> None:
    error = error_from_response(
        "openai", 400, body("invalid_request_error", "tools[0] is bad"), secret=None
    )
    assert str(error) == "openai: HTTP 400 invalid_request_error: tools[0] is bad"


KEY = "sk-test-0123456789abcdef"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"Incorrect API key provided: {KEY}.", KEY),
        (f"key={KEY}", None),
        ("key=local-key-without-prefix", "local-key-without-prefix"),
        (f"sk-ant-api03-{'x' * 40}", None),
    ],
)
def test_scrub_removes_keys(text: str, secret: str | None) -> None:
    cleaned = scrub(text, secret)
    assert (secret or KEY) not in cleaned
    assert "sk-ant-api03" not in cleaned
    assert "***" in cleaned


def test_scrub_shortens_long_messages() -> None:
    assert len(scrub("x" * 10_000, None)) <= 501


def test_echoed_key_is_scrubbed_from_the_error() -> None:
    error = error_from_response(
        "openai", 401, body(code="invalid_api_key", message=f"bad key {KEY}"), secret=KEY
    )
    assert KEY not in str(error)
    assert KEY not in repr(error)


@pytest.mark.parametrize(
    ("exc", "error_class"),
    [
        (httpx.ConnectError("refused"), "unavailable"),
        (httpx.ConnectTimeout("slow"), "unavailable"),
        (httpx.ReadTimeout("slow"), "unavailable"),
        (httpx.ReadError("reset"), "unavailable"),
        (httpx.RemoteProtocolError("peer closed"), "unavailable"),
        (httpx.UnsupportedProtocol("ftp"), "unclassified"),
    ],
)
def test_transport_classification(exc: httpx.HTTPError, error_class: str) -> None:
    error = error_from_transport("p", exc)
    assert error.error_class == error_class
    assert error.retryable is (error_class == "unavailable")


def test_model_error_defaults() -> None:
    error = ModelError("x", error_class="usage_window", provider="p")
    assert (error.retryable, error.retry_after, error.last_error_class) == (True, None, None)
    assert "usage_window" in repr(error)
