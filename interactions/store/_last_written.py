"""What a store last wrote (or read whole) of its recent runs, to decide the next update
without reading first.

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
READS_KEPT = 4
"""Runs read whole that wait for a read of their interactions, and runs read with all their
interactions, at most of each (counted apart from the runs written, whose checkpoints are
measured): the run that answers reads the two one after the other, then writes."""
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
    size: int | None
    """The length of the run's checkpoint as canonical JSON (``None``: a run read, not written,
    whose checkpoint this store did not serialize)."""

    def in_request_order(self) -> list[InteractionRecord]:
        """The interactions as the store lists them: by ``requested_at``, then insertion."""
        return sorted(self.interactions.values(), key=lambda record: record.requested_at)


class LastWritten:
    """A bounded memory of the runs a store wrote: for each, its row and all its interactions.

    A run whose interactions this store did not read in full is not remembered (its next
    write reads them). A terminal run is forgotten: nothing updates it any more.

    A run this store read whole (:meth:`read_run`), then all of whose interactions it read
    (:meth:`read_interactions`), is remembered as if written, as is one read with all its
    interactions at once (:meth:`read_together`): the run that answers and resumes reads both
    first, so the write that follows need not read them again. The interactions
    are read after the run, so they may be newer than it, but only in ways the guards see: an
    interaction inserted since came with a new version of the run, and an answer given since is
    never taken back (a write answering it again fails its guard). Reading costs nothing more:
    such a run's checkpoint is measured only if this store writes the run.
    """

    def __init__(
        self,
        runs: int = RUNS_KEPT,
        checkpoint_bytes: int = CHECKPOINT_BYTES_KEPT,
        reads: int = READS_KEPT,
    ) -> None:
        self._most_runs = runs
        self._most_reads = reads
        self._most_bytes = checkpoint_bytes
        self._bytes = 0
        self._runs: OrderedDict[str, Written] = OrderedDict()
        self._read: OrderedDict[str, RunRecord] = OrderedDict()
        """Runs read whole, waiting for a read of all their interactions (least recently read
        first out)."""
        self._read_whole: OrderedDict[str, Written] = OrderedDict()
        """Runs read with all their interactions (least recently read first out)."""

    def at(self, run_id: str, version: int) -> Written | None:
        """The run as last written or read whole, if that was at ``version``."""
        written = self._runs.get(run_id) or self._read_whole.get(run_id)
        return written if written is not None and written.run.version == version else None

    def keep(
        self, run: RunRecord, interactions: Iterable[InteractionRecord], size: int | None
    ) -> None:
        """Remember ``run`` with all its ``interactions``, unless what is kept is newer.
        ``size``: the length of its checkpoint's canonical JSON (``None``: measured here)."""
        if not self._replace(run):
            return
        size = len(canonical_json(run.checkpoint)) if size is None else size
        if size > self._most_bytes:
            return
        self._runs[run.id] = Written(run, {r.id: r for r in interactions}, size)
        self._bytes += size
        while len(self._runs) > self._most_runs or self._bytes > self._most_bytes:
            self._bytes -= self._runs.popitem(last=False)[1].size or 0

    def _replace(self, run: RunRecord) -> bool:
        """Forget what is remembered of ``run`` unless it is a later version (a later write
        finished first: that one stays); whether ``run`` is then to be remembered (an ended
        run is not)."""
        kept = self._runs.get(run.id) or self._read_whole.get(run.id)
        if kept is not None and kept.run.version > run.version:
            return False
        self.forget(run.id)
        return not is_terminal(run.status)

    def read_run(self, run: RunRecord) -> None:
        """Note a run read whole (its checkpoint included)."""
        self._read.pop(run.id, None)
        self._read[run.id] = run
        if len(self._read) > self._most_reads:
            self._read.popitem(last=False)

    def read_interactions(self, run_id: str, interactions: list[InteractionRecord]) -> None:
        """Note all of a run's interactions, read after the run itself: remember the two,
        unless this store remembers that run at the same version or a later one already."""
        run = self._read.pop(run_id, None)
        if run is None or self.at(run_id, run.version) is not None:
            return  # not read whole, or remembered at that version already
        self.keep_unmeasured(run, interactions)

    def read_together(self, run: RunRecord, interactions: Iterable[InteractionRecord]) -> None:
        """Note a run read whole with all its interactions at one moment: remember the two, as
        :meth:`read_interactions` does, unless this store remembers that run at the same
        version or a later one already."""
        self._read.pop(run.id, None)
        if self.at(run.id, run.version) is None:
            self.keep_unmeasured(run, interactions)

    def keep_unmeasured(self, run: RunRecord, interactions: Iterable[InteractionRecord]) -> None:
        """Remember a run read (or written since, with the checkpoint it was read with) as
        :meth:`keep` does, without serializing its checkpoint to measure it: among the runs
        read, which are bounded by number."""
        if not self._replace(run):
            return
        self._read_whole[run.id] = Written(run, {r.id: r for r in interactions}, None)
        if len(self._read_whole) > self._most_reads:
            self._read_whole.popitem(last=False)

    def answered(self, record: InteractionRecord) -> None:
        """Note the answer this store gave one of a remembered run's interactions."""
        kept = self._runs.get(record.run_id) or self._read_whole.get(record.run_id)
        if kept is not None and record.id in kept.interactions:
            kept.interactions[record.id] = record

    def forget(self, run_id: str) -> None:
        self._read_whole.pop(run_id, None)
        forgotten = self._runs.pop(run_id, None)
        if forgotten is not None and forgotten.size is not None:
            self._bytes -= forgotten.size
