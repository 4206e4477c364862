"""``pi-recipes rules ...``: the decisions approvers asked to remember, listed and revoked.

An approver of a tool call may answer "approve always" or "deny always" for the run or its
thread (``{"approved": ..., "remember": {"scope": ..., "args": ...}}``); the decision lives in
the store and is applied before the tool's next call would ask. ``rules list`` shows them (the
active ones, or ``--all``), ``rules revoke ID`` ends one: the next call asks again.
"""

from __future__ import annotations

import argparse
import getpass
import json

from hosts.cli._output import Console, console, print_json
from hosts.cli._store import location_of
from interactions import UsageError
from interactions.store import DecisionRecord, DecisionStore, Store, open_store

__all__ = ["rules_command", "run_rules_command"]


async def rules_command(args: argparse.Namespace) -> int:
    """``pi-recipes rules list|revoke`` against the store ``--store`` names."""
    async with await open_store(location_of(args), must_exist=True) as store:
        return await run_rules_command(args, store, console())


async def run_rules_command(args: argparse.Namespace, store: Store, out: Console) -> int:
    """Run one ``rules`` command against ``store``; return the exit code (errors raise)."""
    if not isinstance(store, DecisionStore):
        raise UsageError(
            "this store keeps no remembered decisions (a Temporal engine's does not): give "
            "--store a SQLite file or a postgresql:// URL"
        )
    if args.rules_command == "revoke":
        by = args.revoked_by or f"cli:{getpass.getuser()}"
        record, revoked = await store.revoke_decision(args.decision, revoked_by=by)
        if args.json:
            print_json(record.model_dump(mode="json") | {"revoked_now": revoked})
        elif revoked:
            out.print(f"Revoked {record.id}: {_rule(record)}", markup=False)
        else:
            out.print(f"{record.id} was already revoked by {record.revoked_by or 'someone'} "
                      f"at {record.revoked_at:%Y-%m-%d %H:%M:%S}.", markup=False)  # fmt: skip
        return 0
    records = await store.list_decisions(
        run_id=args.run, thread_id=args.thread, include_revoked=args.all, limit=args.limit
    )
    if args.json:
        print_json([r.model_dump(mode="json") for r in records])
        return 0
    if not records:
        out.print("No remembered decisions.", markup=False)
    for record in records:
        out.print(f"{record.id}  {_rule(record)}", markup=False)
        who = f" by {record.decided_by}" if record.decided_by else ""
        out.print(f"    decided{who} at {record.created_at:%Y-%m-%d %H:%M:%S} in run "
                  f"{record.run_id} ({record.interaction_id})", markup=False)  # fmt: skip
        if record.revoked_at is not None:
            out.print(f"    revoked by {record.revoked_by or 'someone'} at "
                      f"{record.revoked_at:%Y-%m-%d %H:%M:%S}", markup=False)  # fmt: skip
    return 0


def _rule(record: DecisionRecord) -> str:
    """``allow deploy in thread T (only {"env":"prod"})``: what the decision decides, where."""
    where = f"run {record.run_id}" if record.scope == "run" else f"thread {record.thread_id}"
    only = ""
    if record.args is not None:
        only = f" (only {json.dumps(record.args, separators=(',', ':'), ensure_ascii=False)})"
    return f"{record.action} {record.tool} in {where}{only}"
