"""The :class:`~interactions.store.AuditStore` as its callers see it, written once for the
stores of this package (the memory store and the SQL stores): the arguments checked before
anything is read, so every store refuses a bad value the same way; the read itself is the
store's hook."""

from __future__ import annotations

from abc import abstractmethod
from datetime import datetime

from interactions._errors import UsageError
from interactions.store._base import StoreBase
from interactions.store._checks import check_limit
from interactions.store._protocol import AuditStore
from interactions.store._queries import InteractionsQuery
from interactions.store._records import InteractionRecord

__all__ = ["AuditBase"]


def _aware(name: str, value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise UsageError(f"{name} must be a datetime or None, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise UsageError(f"{name} must be a timezone-aware datetime, got naive {value.isoformat()}")
    return value


class AuditBase(StoreBase, AuditStore):
    """The :class:`~interactions.store.AuditStore` method (see the module docstring)."""

    async def page_interactions(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 500,
    ) -> list[InteractionRecord]:
        check_limit(limit)
        if after is not None and not (
            isinstance(after, tuple) and len(after) == 2 and all(isinstance(a, str) for a in after)
        ):
            raise UsageError(f"after must be a (run_id, interaction_id) pair, got {after!r}")
        query = InteractionsQuery(_aware("since", since), _aware("until", until), after, limit)
        return await self._page_interactions(query)

    # -- what each store says -----------------------------------------------------------------

    @abstractmethod
    async def _page_interactions(self, query: InteractionsQuery) -> list[InteractionRecord]:
        """The page ``query`` (checked) asks for, as :meth:`page_interactions` says."""
