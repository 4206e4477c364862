"""Which store a location names (what ``--store`` takes on every command and host)."""

from __future__ import annotations

import re

__all__ = ["names_postgres"]

_LIBPQ_KEYWORD = re.compile(
    r"\s*(host|hostaddr|port|dbname|user|password|service|sslmode|options|application_name"
    r"|connect_timeout|passfile|target_session_attrs)\s*="
)


def names_postgres(where: str) -> bool:
    """Whether ``where`` names a PostgreSQL database: a ``postgresql://`` URL, or a libpq
    ``key=value`` connection string (``host=db dbname=runs``); anything else is a SQLite file
    (a connection string read as one made a new file named after it, password and all)."""
    return where.startswith(("postgresql://", "postgres://")) or bool(_LIBPQ_KEYWORD.match(where))
