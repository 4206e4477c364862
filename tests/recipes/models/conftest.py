"""The providers must not depend on one event loop: run them on asyncio and trio.

No test module ignores trio's warning about an unclosed async generator: a provider that leaves a
response early (at ``[DONE]``, on an error) ends httpx's own stream generators too (see
``recipes.models._http``), which merely closing ours would not (encode/httpx#3686).
"""

from __future__ import annotations

import pytest

from ._wire import RecordingSleep


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sleep() -> RecordingSleep:
    """The sleep of the retry policies a test builds (``fast_policy``): the waits, recorded."""
    return RecordingSleep()
