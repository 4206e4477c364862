"""A store that counts the calls made through it: what one action costs in round trips.

Wrap any store and hand the wrapper to a runner or a host; every call goes through to the store
and is counted by method. A test of a host then says what a person's action costs (the web
host's answer that continues a run: one read, two writes until it finishes)::

    counted = CountingStore(MemoryStore())
    runner = Runner(counted)
    ...
    counted.reset()
    await runner.answer(run_id, interaction_id, payload, resume=True)
    assert (counted.reads, counted.writes) == (1, 2)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from interactions.store import Store

__all__ = ["READS", "WRITES", "CountingStore"]

READS = frozenset({
    "get_run", "get_run_with_interactions", "list_runs", "get_interaction",
    "list_interactions", "list_events", "wait_for_events", "latest_cursor",
    "decisions_for", "list_decisions", "list_votes",
})  # fmt: skip
"""The store calls that read."""
WRITES = frozenset({
    "create_run", "update_run", "answer_interaction", "append_events",
    "remember_decision", "revoke_decision", "cast_vote", "record_reminder",
})  # fmt: skip
"""The store calls that write."""


class CountingStore:
    """``store``, with every call through it counted by method name (:attr:`calls`)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.store, name)
        if name not in READS | WRITES:
            return found
        return self._counted(name, found)

    def _counted(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return await call(*args, **kwargs)

        return counted

    @property
    def reads(self) -> int:
        """The reads made since the last :meth:`reset`."""
        return sum(n for name, n in self.calls.items() if name in READS)

    @property
    def writes(self) -> int:
        """The writes made since the last :meth:`reset`."""
        return sum(n for name, n in self.calls.items() if name in WRITES)

    def reset(self) -> None:
        """Count from zero again."""
        self.calls.clear()

    async def __aenter__(self) -> CountingStore:
        await self.store.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.store.__aexit__(*exc)  # type: ignore[arg-type]


def _forwarded(name: str) -> Callable[..., Any]:
    async def method(self: CountingStore, *args: Any, **kwargs: Any) -> Any:
        return await self.__getattr__(name)(*args, **kwargs)

    method.__name__ = name
    return method


# Python 3.12+ checks a runtime protocol's members on the class (``inspect.getattr_static``),
# never through ``__getattr__``: the store protocols' methods are written on the class, so a
# counted store is the DecisionStore, VoteStore, ConsumerStore, ReminderStore and AuditStore
# it wraps.
for _name in (
    "remember_decision", "decisions_for", "list_decisions", "revoke_decision",
    "cast_vote", "list_votes", "lease_consumer", "advance_consumer", "page_interactions",
    "record_reminder",
):  # fmt: skip
    setattr(CountingStore, _name, _forwarded(_name))
