"""The votes so far on an approval several people must give, as every surface shows them.

An approval whose interrupt asks for ``required_approvals`` of 2 or more stays open until that
many distinct people approve (:class:`~interactions.store.VoteStore`); until then a surface
says "1 of 2 approvals: ada". :func:`tally_of` reads the votes only for such an approval: any
other interaction costs no read.
"""

from __future__ import annotations

from dataclasses import dataclass

from interactions.people import required_approvals_of
from interactions.store import InteractionRecord, Store, VoteStore

__all__ = ["Tally", "tally_of"]


@dataclass(frozen=True)
class Tally:
    """The approvals an approval has (``approvals``: names, in vote order) of the ``required``
    distinct approvals that settle it."""

    approvals: tuple[str, ...]
    required: int

    def line(self) -> str:
        """What a surface says: ``1 of 2 approvals: ada`` (``0 of 2 approvals`` before any)."""
        said = f"{len(self.approvals)} of {self.required} approvals"
        return f"{said}: {', '.join(self.approvals)}" if self.approvals else said


async def tally_of(store: Store, record: InteractionRecord) -> Tally | None:
    """The tally of ``record``, or ``None`` when one answer settles it (no read then), or when
    this version cannot read it (its ``unreadable``: no one can answer it here). A store that
    keeps no votes (not a :class:`~interactions.store.VoteStore`) shows none yet. Raises what
    the store's ``list_votes`` raises (``StoreUnavailableError``)."""
    if record.unreadable is not None:
        return None
    required = required_approvals_of(record.interrupt.metadata)
    if required < 2:
        return None
    if not isinstance(store, VoteStore):
        return Tally((), required)
    votes = await store.list_votes(record.run_id, record.id)
    return Tally(tuple(v.voter for v in votes if v.approved), required)
