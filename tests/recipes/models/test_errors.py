"""Classification of provider failures and the messages that quote them."""

from __future__ import annotations

import json

import httpx
import pytest

from interactions.errors import RunError
from recipes.models._errors import (
    ModelError,
    error_from_payload,
    error_from_response,
    error_from_transport,
)
from recipes.models._secrets import Secrets


def body(kind: str | None = None, message: str = "msg", *, code: str | None = None) -> str:
    error: dict[str, str] = {"message": message}
    if kind:
        error["type"] = kind
    if code:
        error["code"] = code
    return json.dumps({"error": error})


@pytest.mark.parametrize(
    ("status", "raw", "error_class", "retryable"),
    [
        (429, body("requests", code="rate_limit_exceeded"), "usage_window", True),
        (429, body("insufficient_quota", code="insufficient_quota"), "usage_window", False),
        (429, body("rate_limit_error"), "usage_window", True),
        (429, "", "usage_window", True),
        (402, body("billing_error"), "usage_window", False),
        (400, body("billing_error"), "usage_window", False),
        (401, body("invalid_request_error", code="invalid_api_key"), "auth", False),
        (401, body("authentication_error"), "auth", False),
        (403, body("permission_error"), "auth", False),
        (403, "forbidden", "auth", False),
        (500, body("api_error"), "unavailable", True),
        (502, "<html>bad gateway</html>", "unavailable", True),
        (503, "", "unavailable", True),
        (529, body("overloaded_error"), "unavailable", True),
        (408, "", "unavailable", True),
        (400, body("invalid_request_error"), "unclassified", False),
        (404, body("not_found_error"), "unclassified", False),
        (422, "{not json", "unclassified", False),
        (
            400,
            '{"object": "error", "message": "vllm says no", "type": "BadRequestError"}',
            "unclassified",
            False,
        ),
        (500, '{"error": "ollama says no"}', "unavailable", True),
        (400, "[1, 2]", "unclassified", False),
    ],
)
def test_response_classification(status: int, raw: str, error_class: str, retryable: bool) -> None:
    error = error_from_response("p", status, raw)
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
    error = error_from_payload("p", None, payload)
    assert error.error_class == error_class
    assert error.status_code is None


def test_message_quotes_the_provider_message() -> None:
    error = error_from_response("openai", 400, body("invalid_request_error", "tools[0] is bad"))
    assert str(error) == "openai: HTTP 400 invalid_request_error: tools[0] is bad"


@pytest.mark.parametrize(
    ("raw", "quoted"),
    [
        (
            '{"detail": [{"msg": "field required"}]}',
            'HTTP 422: {"detail":[{"msg":"field required"}]}',
        ),
        (
            '{"error": {"code": "bad_thing", "param": "x"}}',
            'bad_thing: {"error":{"code":"bad_thing","param":"x"}}',
        ),
        ("[1, 2]", "HTTP 422: [1,2]"),
        ("<html>oops</html>", "HTTP 422: <html>oops</html>"),
        ("", "HTTP 422: (no error message)"),
    ],
)
def test_a_body_without_a_message_is_quoted_whole(raw: str, quoted: str) -> None:
    assert str(error_from_response("p", 422, raw)).endswith(quoted)


def test_long_messages_are_shortened() -> None:
    assert len(str(error_from_response("p", 400, "x" * 10_000))) < 600


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
    error = error_from_transport("p", exc, secrets=Secrets())
    assert error.error_class == error_class
    assert error.retryable is (error_class == "unavailable")
    assert str(exc) in str(error)


def test_transport_messages_are_scrubbed() -> None:
    key = "local-key-0123456789"
    exc = httpx.ConnectError(f"cannot reach http://u:{key}@host/v1")
    error = error_from_transport("p", exc, secrets=Secrets([key]))
    assert str(error) == (
        "p: the provider could not be reached or stopped answering "
        "(ConnectError: cannot reach http://u:***@host/v1)"
    )


def test_model_error_defaults() -> None:
    error = ModelError("x", error_class="usage_window", provider="p")
    assert (error.retryable, error.retry_after, error.last_error_class) == (True, None, None)
    assert "usage_window" in repr(error)
