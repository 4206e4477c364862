"""Retry-After parsing: the wait a response asks for."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recipes.models._retry_after import parse_reset, parse_retry_after, retry_after_from_headers

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0.0),
        ("2", 2.0),
        (" 1.5 ", 1.5),
        ("-0", 0.0),
        ("-3", None),  # a negative wait gives no wait to go by: the backoff applies
        ("Tue, 14 Nov 2023 22:13:50 GMT", 30.0),
        ("Tue, 14 Nov 2023 22:13:20 GMT", 0.0),
        ("Tue, 14 Nov 2023 22:00:00 GMT", None),  # past: likewise
        ("", None),
        ("soon", None),
        ("nan", None),
        ("inf", None),
        ("1e999", None),
        ("Tue, 14 Nov 2023 22:13:50", None),  # no zone
        ("Tue, 99 Nov 2023 22:13:50 GMT", None),
    ],
)
def test_parse_retry_after(value: str, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


@given(st.text(max_size=60))
def test_parse_retry_after_any_text(value: str) -> None:
    seconds = parse_retry_after(value, now=NOW)
    assert seconds is None or (math.isfinite(seconds) and seconds >= 0)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "x", "retry-after": "9"}, 9.0),
        ({"retry-after": "9"}, 9.0),
        ({}, None),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 360.0),
        ({"x-ratelimit-reset-tokens": "250ms"}, 0.25),
        ({"retry-after": "9", "x-ratelimit-reset-tokens": "6m0s"}, 9.0),
        ({"retry-after": "soon", "x-ratelimit-reset-requests": "2s"}, 2.0),
        ({"anthropic-ratelimit-requests-reset": "2023-11-14T22:14:20Z"}, 60.0),
        (
            {
                "anthropic-ratelimit-tokens-reset": "2023-11-14T22:13:50+00:00",
                "anthropic-ratelimit-input-tokens-reset": "2023-11-14T22:13:30Z",
            },
            30.0,
        ),
        ({"x-ratelimit-reset-requests": "whenever"}, None),
        ({"retry-after-ms": "-250", "retry-after": "9"}, 9.0),
        ({"retry-after-ms": "Tue, 14 Nov 2023 22:13:50 GMT", "retry-after": "9"}, 9.0),
        ({"retry-after": "-9", "x-ratelimit-reset-requests": "2s"}, 2.0),
        ({"anthropic-ratelimit-requests-reset": "2023-11-14T22:12:00Z"}, None),
        (
            {
                "anthropic-ratelimit-requests-reset": "2023-11-14T22:12:00Z",
                "anthropic-ratelimit-tokens-reset": "2023-11-14T22:13:30Z",
            },
            10.0,
        ),
    ],
)
def test_retry_after_from_headers(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_from_headers(headers, now=NOW) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1s", 1.0), ("6m0s", 360.0), ("1h2m3.5s", 3723.5), ("20ms", 0.02), ("7", 7.0),
        ("2023-11-14T22:13:20Z", 0.0), ("2023-11-14T22:12:00Z", None),
        ("2023-11-14T23:13:20+01:00", 0.0), ("2023-11-14T22:13:21.5Z", 1.5),
        ("2023-11-14T22:13:20", None), ("", None), ("soon", None), ("1 s", None),
        ("T", None), ("-1s", None),
    ],
)  # fmt: skip
def test_parse_reset(value: str, expected: float | None) -> None:
    assert parse_reset(value, now=NOW) == expected


@given(st.text(max_size=60))
def test_parse_reset_any_text(value: str) -> None:
    seconds = parse_reset(value, now=NOW)
    assert seconds is None or (math.isfinite(seconds) and seconds >= 0)
