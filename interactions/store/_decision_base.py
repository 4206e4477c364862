"""The :class:`~interactions.store.DecisionStore` as its callers see it, written once for the
stores of this package (the memory store and the SQL stores).

:class:`DecisionsBase` checks the arguments before anything is read (a bad value is refused
the same way by every store), scrubs the process's credentials out of what a decision keeps
(its arguments and the approver's reason, as every other write is scrubbed: a decision whose
arguments held a key then covers no call, and the human is asked), and rings the doorbell of
the run an audit event was appended to. How a store reads and writes the rows is its hooks'.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import datetime

from interactions.store._base import StoreBase
from interactions.store._checks import check_limit, check_now
from interactions.store._decisions import (
    DecisionRecord,
    DecisionsQuery,
    NewDecision,
    check_decision,
    check_revoker,
)
from interactions.store._protocol import DecisionStore

__all__ = ["DecisionsBase"]


class DecisionsBase(StoreBase, DecisionStore):
    """The :class:`~interactions.store.DecisionStore` methods (see the module docstring)."""

    async def remember_decision(
        self, new: NewDecision, *, now: datetime | None = None
    ) -> tuple[DecisionRecord, bool]:
        if now is not None:
            check_now(now)
        if self._secrets:
            scrub = self._secrets.scrub_value
            scrubbed = {"args": scrub(new.args), "reason": scrub(new.reason)}
            if any(scrubbed[name] is not getattr(new, name) for name in scrubbed):
                new = new.model_copy(update=scrubbed)
        args_json = check_decision(new)
        record, stored = await self._remember_decision(new, args_json, now)
        if stored:
            self._bell.ring(record.run_id)
        return record, stored

    async def decisions_for(self, run_id: str, thread_id: str) -> list[DecisionRecord]:
        return await self._decisions_for(run_id, thread_id)

    async def list_decisions(
        self,
        *,
        run_id: str | None = None,
        thread_id: str | None = None,
        include_revoked: bool = False,
        limit: int = 100,
    ) -> list[DecisionRecord]:
        check_limit(limit)
        query = DecisionsQuery(run_id, thread_id, bool(include_revoked), limit)
        return await self._list_decisions(query)

    async def revoke_decision(
        self, decision_id: str, *, revoked_by: str | None = None, now: datetime | None = None
    ) -> tuple[DecisionRecord, bool]:
        if now is not None:
            check_now(now)
        check_revoker(revoked_by)
        record, revoked = await self._revoke_decision(decision_id, revoked_by, now)
        if revoked:
            self._bell.ring(record.run_id)
        return record, revoked

    # -- what each store says -----------------------------------------------------------------

    @abstractmethod
    async def _remember_decision(
        self, new: NewDecision, args_json: str | None, now: datetime | None
    ) -> tuple[DecisionRecord, bool]:
        """Store ``new`` (checked; ``args_json``: its args' canonical text) as
        :meth:`remember_decision` says, deciding with :func:`._decisions.plan_remember`."""

    @abstractmethod
    async def _decisions_for(self, run_id: str, thread_id: str) -> list[DecisionRecord]:
        """The active decisions applying in that run and thread, oldest first."""

    @abstractmethod
    async def _list_decisions(self, query: DecisionsQuery) -> list[DecisionRecord]:
        """The decisions ``query`` asks for (its limit checked), newest first."""

    @abstractmethod
    async def _revoke_decision(
        self, decision_id: str, revoked_by: str | None, now: datetime | None
    ) -> tuple[DecisionRecord, bool]:
        """Revoke as :meth:`revoke_decision` says, deciding with :func:`._decisions.plan_revoke`."""
