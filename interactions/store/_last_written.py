"""What a store last wrote of its recent runs, to decide the next update without reading first.

A hint, never the truth: another process may have moved the run since. A write decided on it
goes out with guards that fail its transaction (the run's version, each answer's absence), so a
stale hint costs one refused transaction and a decision on what the store holds, never a lost
update. See ``ThreadedStore.update_run``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from interactions.store._records import InteractionRecord, RunRecord, canonical_json
from interactions.store._status import is_terminal

__all__ = ["LastWritten", "Written"]

RUNS_KEPT = 32
"""Runs remembered at most, least recently written first out. What it saves is the read at the
start of a run's next write, which mostly follows within a leg (start → pause, answer →
finish)."""
CHECKPOINT_BYTES_KEPT = 4 * 1024 * 1024
"""The checkpoints remembered at most, all runs together, counted as characters of their
canonical JSON (the Python objects take a few times that): a run whose checkpoint alone is
larger is not remembered."""


@dataclass(frozen=True)
class Written:
    """A run as this store last wrote it, with every interaction it had then."""

    run: RunRecord
    interactions: dict[str, InteractionRecord]
    """All of the run's interactions by id, in the order they were inserted."""
    size: int
    """The length of the run's checkpoint as canonical JSON."""

    def in_request_order(self) -> list[InteractionRecord]:
        """The interactions as the store lists them: by ``requested_at``, then insertion."""
        return sorted(self.interactions.values(), key=lambda record: record.requested_at)


class LastWritten:
    """A bounded memory of the runs a store wrote: for each, its row and all its interactions.

    A run whose interactions this store did not read in full is not remembered (its next
    write reads them). A terminal run is forgotten: nothing updates it any more.
    """

    def __init__(
        self, runs: int = RUNS_KEPT, checkpoint_bytes: int = CHECKPOINT_BYTES_KEPT
    ) -> None:
        self._most_runs = runs
        self._most_bytes = checkpoint_bytes
        self._bytes = 0
        self._runs: OrderedDict[str, Written] = OrderedDict()

    def at(self, run_id: str, version: int) -> Written | None:
        """The run as last written, if that was at ``version``."""
        written = self._runs.get(run_id)
        return written if written is not None and written.run.version == version else None

    def keep(
        self, run: RunRecord, interactions: Iterable[InteractionRecord], size: int | None
    ) -> None:
        """Remember ``run`` with all its ``interactions``, unless what is kept is newer.
        ``size``: the length of its checkpoint's canonical JSON (``None``: measured here)."""
        kept = self._runs.get(run.id)
        if kept is not None and kept.run.version > run.version:
            return  # a later write finished first: keep that one
        self.forget(run.id)
        if is_terminal(run.status):
            return
        size = len(canonical_json(run.checkpoint)) if size is None else size
        if size > self._most_bytes:
            return
        self._runs[run.id] = Written(run, {r.id: r for r in interactions}, size)
        self._bytes += size
        while len(self._runs) > self._most_runs or self._bytes > self._most_bytes:
            self._bytes -= self._runs.popitem(last=False)[1].size

    def answered(self, record: InteractionRecord) -> None:
        """Note the answer this store gave one of a remembered run's interactions."""
        kept = self._runs.get(record.run_id)
        if kept is not None and record.id in kept.interactions:
            kept.interactions[record.id] = record

    def forget(self, run_id: str) -> None:
        forgotten = self._runs.pop(run_id, None)
        if forgotten is not None:
            self._bytes -= forgotten.size
