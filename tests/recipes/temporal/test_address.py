"""Engine URLs: what parses, what is refused with a usage error, and the round trip."""

from __future__ import annotations

import pytest

from interactions import UsageError
from recipes.temporal import EngineAddress


@pytest.mark.parametrize(
    ("url", "target", "namespace", "queue"),
    [
        ("temporal://127.0.0.1:7233/default", "127.0.0.1:7233", "default", "pi-recipes"),
        ("temporal://127.0.0.1:7233", "127.0.0.1:7233", "default", "pi-recipes"),
        ("temporal://h.example:1/ns?task_queue=q-1", "h.example:1", "ns", "q-1"),
        ("temporal://[::1]:7233/x", "[::1]:7233", "x", "pi-recipes"),
    ],
)
def test_engine_urls(url: str, target: str, namespace: str, queue: str) -> None:
    address = EngineAddress.parse(url)
    assert (address.target, address.namespace, address.task_queue) == (target, namespace, queue)
    assert EngineAddress.parse(address.url()) == address


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:7233",
        "temporal://127.0.0.1",
        "temporal://:7233",
        "temporal://127.0.0.1:99999",
        "temporal://h:1/a/b",
        "temporal://h:1/ns?queue=x",
        "temporal://h:1/ns?task_queue=",
        "temporal://h:1/ns?task_queue=a&task_queue=b",
        "temporal://h:1/ns?task_queue=it's",
        "temporal://h:1/n%20s",
        "",
    ],
)
def test_bad_engine_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(UsageError):
        EngineAddress.parse(url)


def test_a_workers_flags_make_an_address() -> None:
    address = EngineAddress.of("127.0.0.1:7233", "team", "releases")
    assert address.url() == "temporal://127.0.0.1:7233/team?task_queue=releases"
    assert EngineAddress.of("h:1", None, None) == EngineAddress("h:1")
