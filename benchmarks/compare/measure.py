"""Shared measuring helpers: statistics, clocks, fresh-process timing, SQLite files on disk.

Standard library only, so a fresh process that imports this pays nothing measurable for it.

How the SQLite numbers are taken, the same way for every side:

- **Bytes on disk**: :func:`sqlite_bytes` opens its own connection to the file, runs
  ``PRAGMA wal_checkpoint(TRUNCATE)`` (every committed page moved into the database file, the
  WAL cut to zero bytes), closes, then adds up the sizes of ``db``, ``db-wal`` and ``db-shm``
  (whichever exist). The side's own connection is closed first.
- **Bytecode**: :func:`compile_sources` compiles pi-recipes' packages and the benchmarks'
  own files before any side starts, as ``pip install`` compiled the anchors, so no side's
  fresh process compiles sources while it imports (an editable install under
  ``PYTHONDONTWRITEBYTECODE`` would otherwise leave pi-recipes doing so, ~60 ms here).
- **Commits**: :func:`reset_wal` truncates the WAL the same way before a measured cycle;
  :func:`wal_commits` then reads the WAL file and counts its commit frames (a frame whose
  "database size after commit" field is non-zero, with the salts of the WAL header, so frames
  left over from an earlier WAL generation are not counted). Every write transaction that
  changes a page appends exactly one commit frame; with ``synchronous=FULL`` (SQLite's default,
  used by every side) each commit is one ``fsync``/``fdatasync`` of the WAL.
"""

from __future__ import annotations

import json
import math
import sqlite3
import statistics
import struct
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

WAL_HEADER = 32
FRAME_HEADER = 24


# ---------------------------------------------------------------- statistics and clocks


def median(samples: Sequence[float]) -> float:
    """The median; raises ``ValueError`` on no samples (a metric that measured nothing)."""
    if not samples:
        raise ValueError("no samples")
    return statistics.median(samples)


def percentile(samples: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (``0 < q <= 100``)."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = min(max(1, math.ceil(q / 100 * len(ordered))), len(ordered))
    return ordered[rank - 1]


def shared_clock() -> float:
    """Seconds on ``CLOCK_MONOTONIC``: one clock for every process on this machine, so a time
    read in one process can be subtracted from a time read in another."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


# ---------------------------------------------------------------- fresh processes


def report_inner(seconds: float, imported: Sequence[str] = ()) -> None:
    """Print what a fresh process measured inside itself, and the modules it first imported
    while measuring (its last stdout line)."""
    print(json.dumps({"inner_s": seconds, "imported": list(imported)}), flush=True)


def time_child(argv: Sequence[str], *, timeout: float = 120.0) -> tuple[float, float, list[str]]:
    """Run ``argv`` to its end; return (whole-process wall seconds, the seconds it reported
    with :func:`report_inner`, the modules it reported). Raises ``RuntimeError`` (with its
    stderr) if it failed."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"{' '.join(argv)} reported nothing:\n{done.stderr}")
    reported = json.loads(lines[-1])
    return wall, float(reported["inner_s"]), list(reported.get("imported", []))


def compile_sources(folders: Iterable[Path]) -> None:
    """Compile the Python files under ``folders`` to bytecode now, as ``pip install`` does for
    an installed package, so no side's fresh process compiles sources as it imports them (an
    editable install, or ``PYTHONDONTWRITEBYTECODE``, would leave one side doing so)."""
    import compileall  # the orchestrator's, not the fresh processes'

    for folder in folders:
        if not compileall.compile_dir(folder, quiet=1, workers=1):
            raise RuntimeError(f"{folder}: some Python file there does not compile")


# ---------------------------------------------------------------- SQLite files


def _checkpoint(db: Path) -> None:
    with sqlite3.connect(db, timeout=10) as conn:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    conn.close()
    if busy:
        raise RuntimeError(f"{db}: the WAL could not be checkpointed (a reader held it)")


def sqlite_bytes(db: Path) -> int:
    """The bytes of ``db`` and its ``-wal`` and ``-shm`` files after a WAL checkpoint."""
    _checkpoint(db)
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    return sum(f.stat().st_size for f in files if f.exists())


def reset_wal(db: Path) -> None:
    """Checkpoint ``db`` and cut its WAL to zero bytes, so :func:`wal_commits` counts from here."""
    _checkpoint(db)


def wal_commits(db: Path) -> int:
    """The commit frames in ``db``'s WAL (see the module docstring)."""
    wal = db.with_name(db.name + "-wal")
    data = wal.read_bytes() if wal.exists() else b""
    if len(data) < WAL_HEADER:
        return 0
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    commits = 0
    for offset in range(WAL_HEADER, len(data) - FRAME_HEADER + 1, FRAME_HEADER + page_size):
        frame = data[offset : offset + FRAME_HEADER]
        if frame[8:16] != salts:
            break  # the rest is left over from an earlier generation of the WAL
        if struct.unpack(">I", frame[4:8])[0]:
            commits += 1
    return commits


def pi_sources() -> list[Path]:
    """pi-recipes' package folders and the benchmarks' own (pip compiled the anchors to
    bytecode when it installed them)."""
    import importlib.util

    folders = [Path(__file__).resolve().parent.parent]
    for package in ("interactions", "recipes", "hosts"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            folders += [Path(folder) for folder in spec.submodule_search_locations]
    return folders
