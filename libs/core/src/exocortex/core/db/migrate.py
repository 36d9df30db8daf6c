"""Schema migrations, run programmatically with Alembic.

The migration scripts ship inside this package (`migrations/`), so no alembic.ini or working
directory is needed: services call `upgrade(dsn)` at start-up and operators use
`python -m exocortex.core.db.migrate upgrade|downgrade|current [--dsn URL]`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from exocortex.core.db.pool import to_sqlalchemy_url

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
DSN_ENV = "EXO_DATABASE_URL"


def alembic_config(dsn: str) -> Config:
    """An Alembic config pointing at the packaged migrations and the given database.

    The URL travels in `attributes`, not the ini options, because ini values undergo `%`
    interpolation and a URL-encoded password would be mangled.
    """
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["sqlalchemy_url"] = to_sqlalchemy_url(dsn)
    return cfg


def upgrade(dsn: str, revision: str = "head") -> None:
    """Bring the schema up to `revision` (idempotent; concurrent callers serialise on a lock)."""
    command.upgrade(alembic_config(dsn), revision)


def downgrade(dsn: str, revision: str) -> None:
    """Roll the schema back to `revision` (`base` drops every table)."""
    command.downgrade(alembic_config(dsn), revision)


def current(dsn: str) -> str | None:
    """The revision the database is at, or None when it has never been migrated."""
    engine = create_engine(to_sqlalchemy_url(dsn), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m exocortex.core.db.migrate", description="Exocortex schema migrations."
    )
    parser.add_argument(
        "--dsn",
        default=os.environ.get(DSN_ENV),
        help=f"postgresql://user:pass@host:port/db (default: ${DSN_ENV})",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    up = sub.add_parser("upgrade", help="migrate up (default: to head)")
    up.add_argument("revision", nargs="?", default="head")
    down = sub.add_parser("downgrade", help="migrate down to a revision ('base' drops everything)")
    down.add_argument("revision")
    sub.add_parser("current", help="print the current revision")
    args = parser.parse_args(argv)
    if not args.dsn:
        parser.error(f"no database given: pass --dsn or set {DSN_ENV}")
    if args.action == "upgrade":
        upgrade(args.dsn, args.revision)
    elif args.action == "downgrade":
        downgrade(args.dsn, args.revision)
    else:
        print(current(args.dsn) or "(none)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
