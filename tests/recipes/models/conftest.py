"""The providers must not depend on one event loop: run them on asyncio and trio.

On trio, leaving an httpx response stream early (``[DONE]``, an error event) makes trio warn
about httpx's *internal* async generators (``Response.aiter_raw``, ``BoundAsyncStream.__aiter__``),
which httpx does not close (encode/httpx#3686, fix proposed in encode/httpx#3777). Our own
generators are all closed with ``aclosing``; the HTTP test modules ignore exactly that warning
with a module ``pytestmark``.
"""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
