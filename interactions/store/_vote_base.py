"""The :class:`~interactions.store.VoteStore` as its callers see it, written once for the
stores of this package (the memory store and the SQL stores).

:class:`VotesBase` checks the arguments before anything is read (a bad value is refused the
same way by every store), scrubs the process's credentials out of what a vote keeps (its
feedback, as every other write is scrubbed), and rings the doorbell of the run a vote was
audited on. How a store reads and writes the rows is its hooks'.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import datetime

from interactions.store._base import StoreBase
from interactions.store._checks import check_now
from interactions.store._protocol import VoteStore
from interactions.store._records import InteractionRecord
from interactions.store._votes import (
    NewVote,
    VoteOutcome,
    VoteRecord,
    check_required,
    check_vote,
)

__all__ = ["VotesBase"]


class VotesBase(StoreBase, VoteStore):
    """The :class:`~interactions.store.VoteStore` methods (see the module docstring)."""

    async def cast_vote(
        self,
        run_id: str,
        interaction_id: str,
        vote: NewVote,
        *,
        required: int,
        now: datetime | None = None,
    ) -> tuple[InteractionRecord, VoteOutcome]:
        if now is not None:
            check_now(now)
        check_required(required)
        if self._secrets:
            scrubbed = self._secrets.scrub_value(vote.payload)
            if scrubbed is not vote.payload:
                vote = vote.model_copy(update={"payload": scrubbed})
        checked = check_vote(vote)
        record, outcome = await self._cast_vote(run_id, interaction_id, checked, required, now)
        if outcome.counted:
            self._bell.ring(run_id)
        return record, outcome

    async def list_votes(self, run_id: str, interaction_id: str) -> list[VoteRecord]:
        return await self._list_votes(run_id, interaction_id)

    # -- what each store says -----------------------------------------------------------------

    @abstractmethod
    async def _cast_vote(
        self,
        run_id: str,
        interaction_id: str,
        vote: NewVote,
        required: int,
        now: datetime | None,
    ) -> tuple[InteractionRecord, VoteOutcome]:
        """Store ``vote`` (checked) as :meth:`cast_vote` says, deciding with
        :func:`._votes.plan_vote` on the run, the interaction and its votes read under the
        write's lock."""

    @abstractmethod
    async def _list_votes(self, run_id: str, interaction_id: str) -> list[VoteRecord]:
        """The interaction's votes in the order they were cast."""
