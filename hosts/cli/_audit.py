"""``pi-recipes audit export``: every interaction of the store, one row each, on stdout.

Oldest asked first, as JSON lines (``--format jsonl``, the default) or CSV with a header
(``--format csv``), maybe only those asked from ``--since`` (included) until ``--until`` (not
included). The rows stream: the store is read a page at a time
(:func:`interactions.audit.audit_rows`), so an export of any size runs in constant memory.
"""

from __future__ import annotations

import argparse
import csv
import sys
from datetime import datetime
from typing import TextIO

from hosts.cli._store import location_of, no_default_store
from interactions import UsageError
from interactions.audit import AUDIT_COLUMNS, audit_rows, audit_time
from interactions.store import Store, open_store

__all__ = ["audit_command", "export"]


async def audit_command(args: argparse.Namespace) -> int:
    """``pi-recipes audit export`` against the store ``--store`` names (which must exist)."""
    since = None if args.since is None else audit_time(args.since)
    until = None if args.until is None else audit_time(args.until)
    where = location_of(args)
    if await no_default_store(where):
        raise UsageError("no store here (.pi-recipes/state.db): give --store PATH or a URL")
    async with await open_store(where, must_exist=True) as store:
        await export(store, sys.stdout, args.format, since=since, until=until)
    return 0


async def export(
    store: Store,
    out: TextIO,
    form: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
) -> int:
    """Write the rows of ``store`` to ``out`` as ``form`` (``jsonl`` or ``csv``), flushing
    every page; return how many were written."""
    writer = csv.writer(out, lineterminator="\n") if form == "csv" else None
    if writer is not None:
        writer.writerow(AUDIT_COLUMNS)
    written = 0
    async for row in audit_rows(store, since=since, until=until):
        if writer is not None:
            writer.writerow(row.csv_values())
        else:
            out.write(row.json_line() + "\n")
        written += 1
        if written % 500 == 0:
            out.flush()
    out.flush()
    return written
