"""The :class:`~interactions.store.ConsumerStore` as its callers see it, written once for the
stores of this package (the memory store and the SQL stores).

:class:`ConsumersBase` checks the arguments before anything is read (a bad value is refused the
same way by every store); how a store reads and writes its consumer rows is its hooks', which
decide with :func:`._consumers.plan_lease` and :func:`._consumers.plan_advance`.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import datetime

from interactions.store._base import StoreBase
from interactions.store._checks import check_now
from interactions.store._consumers import check_consumer, check_cursor, check_lease
from interactions.store._protocol import ConsumerStore

__all__ = ["ConsumersBase"]


class ConsumersBase(StoreBase, ConsumerStore):
    """The :class:`~interactions.store.ConsumerStore` methods (see the module docstring)."""

    async def lease_consumer(
        self,
        name: str,
        owner: str,
        *,
        lease: float,
        start: int = 0,
        now: datetime | None = None,
    ) -> int | None:
        check_consumer(name, owner)
        check_lease(lease)
        check_cursor(start)
        if now is not None:
            check_now(now)
        return await self._lease_consumer(name, owner, float(lease), start, now)

    async def advance_consumer(
        self, name: str, owner: str, cursor: int, *, now: datetime | None = None
    ) -> None:
        check_consumer(name, owner)
        check_cursor(cursor)
        if now is not None:
            check_now(now)
        await self._advance_consumer(name, owner, cursor, now)

    # -- what each store says -----------------------------------------------------------------

    @abstractmethod
    async def _lease_consumer(
        self, name: str, owner: str, lease: float, start: int, now: datetime | None
    ) -> int | None:
        """Lease the consumer as :meth:`lease_consumer` says, deciding with
        :func:`._consumers.plan_lease` on its row read under the write's lock."""

    @abstractmethod
    async def _advance_consumer(
        self, name: str, owner: str, cursor: int, now: datetime | None
    ) -> None:
        """Move the cursor as :meth:`advance_consumer` says, deciding with
        :func:`._consumers.plan_advance` on its row read under the write's lock."""
