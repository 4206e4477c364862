"""``pi-recipes users add NAME``: a person in the users file, and the token they sign in with.

The token is printed once, on standard output alone (so ``TOKEN=$(pi-recipes users add ada)``
keeps it); the file keeps only its argon2 hash. Adding a name already there gives that person
a new token (the old one stops working) and the groups given now.
"""

from __future__ import annotations

import argparse
import sys

from hosts._kit import add_user

__all__ = ["users_command"]


def users_command(args: argparse.Namespace) -> int:
    """Run ``pi-recipes users add``; return the exit code (errors raise)."""
    token = add_user(args.file, args.name, groups=args.groups, slack=args.slack, email=args.email)
    print(token)
    groups = f" in {', '.join(args.groups)}" if args.groups else ""
    print(f"pi-recipes: added {args.name}{groups} to {args.file}; the token above is shown "
          "once (the file keeps its hash)", file=sys.stderr)  # fmt: skip
    return 0
