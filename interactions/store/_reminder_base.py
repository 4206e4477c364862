"""The :class:`~interactions.store.ReminderStore` as its callers see it, written once for the
stores of this package (the memory store and the SQL stores).

:class:`RemindersBase` checks the arguments before anything is read, scrubs the process's
credentials out of the event, and rings the doorbell of the run a notice was written on. How a
store reads and writes its rows is its hooks', which decide with
:func:`._reminders.plan_notice`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from interactions.store._base import StoreBase
from interactions.store._checks import check_now
from interactions.store._protocol import ReminderStore
from interactions.store._records import EventRecord
from interactions.store._reminders import check_notice
from interactions.store._rules import Event

__all__ = ["RemindersBase"]


class RemindersBase(StoreBase, ReminderStore):
    """The :class:`~interactions.store.ReminderStore` method (see the module docstring)."""

    async def record_reminder(
        self,
        run_id: str,
        interaction_id: str,
        kind: str,
        number: int,
        data: Mapping[str, Any],
        *,
        now: datetime | None = None,
    ) -> EventRecord | None:
        if now is not None:
            check_now(now)
        event = check_notice(kind, number, data)
        if self._secrets:
            event = (event[0], self._secrets.scrub_value(event[1]))
        written = await self._record_reminder(run_id, interaction_id, kind, number, event, now)
        if written is not None:
            self._bell.ring(run_id)
        return written

    # -- what each store says -----------------------------------------------------------------

    @abstractmethod
    async def _record_reminder(
        self,
        run_id: str,
        interaction_id: str,
        kind: str,
        number: int,
        event: Event,
        now: datetime | None,
    ) -> EventRecord | None:
        """Write the notice as :meth:`record_reminder` says, deciding with
        :func:`._reminders.plan_notice` on the run, the interaction and the last notice of its
        kind read under the write's lock."""
