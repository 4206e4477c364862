"""The Origin rule every HTTP host applies, as pure functions: the origins configured and
those of the address served, never the request's own ``Host``."""

from __future__ import annotations

import pytest

from hosts._kit import Origins

SERVED = ("127.0.0.1", 8000)


@pytest.mark.parametrize(
    ("origin", "scheme", "served", "origins", "ok"),
    [
        (None, "ws", SERVED, Origins(), True),
        ("http://127.0.0.1:8000", "ws", SERVED, Origins(), True),
        ("http://localhost:8000", "http", SERVED, Origins(), True),
        ("http://[::1]:8000", "http", SERVED, Origins(), True),
        ("https://127.0.0.1:8000", "ws", SERVED, Origins(), False),
        ("http://127.0.0.1:8001", "ws", SERVED, Origins(), False),
        ("http://evil.example:8000", "http", SERVED, Origins(), False),
        ("http://evil.example:8000", "http", ("192.0.2.7", 8000), Origins(host="0.0.0.0"), False),
        ("http://192.0.2.7:8000", "http", ("192.0.2.7", 8000), Origins(host="0.0.0.0"), True),
        ("http://localhost:8000", "http", ("192.0.2.7", 8000), Origins(host="0.0.0.0"), False),
        ("http://box.lan:8000", "http", ("192.0.2.7", 8000), Origins(host="box.lan"), True),
        ("https://h.example", "wss", ("192.0.2.7", 443), Origins(host="h.example"), True),
        ("http://[2001:db8::1]:80", "http", ("2001:db8::1", 80), Origins(), True),
        ("http://[2001:db8::1]", "http", ("2001:db8::1", 80), Origins(), True),
        ("https://app.example", "ws", SERVED, Origins(("https://app.example",)), True),
        ("null", "ws", SERVED, Origins(), False),
        ("http://127.0.0.1:8000", "http", None, Origins(), False),
    ],
)
def test_origins_are_those_configured_and_of_the_address_served(
    origin: str | None,
    scheme: str,
    served: tuple[str, int] | None,
    origins: Origins,
    ok: bool,
) -> None:
    """Never the request's own Host: a DNS-rebinding page names itself there."""
    assert origins.allow(origin, scheme, served) is ok


@pytest.mark.parametrize(
    ("host", "served", "ok"),
    [
        ("127.0.0.1:8000", SERVED, True),
        ("localhost:8000", SERVED, True),
        ("[::1]:8000", ("::1", 8000), True),
        ("LOCALHOST", SERVED, True),
        ("evil.example:8000", SERVED, False),
        ("evil.example", SERVED, False),
        (None, SERVED, False),
        ("evil.example:8000", ("192.0.2.7", 8000), True),  # not loopback: any name
    ],
)
def test_a_loopback_server_answers_only_local_names(
    host: str | None, served: tuple[str, int], ok: bool
) -> None:
    assert Origins().local_host(host, served) is ok
