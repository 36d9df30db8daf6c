"""Alembic environment: online migrations only, one transaction, serialised by an advisory lock.

Several services may start at once and all call `upgrade`; the transaction-scoped advisory lock
makes the second one wait, then find the schema already at head.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

# Arbitrary constant shared by every Exocortex process: "exo_migr" as a 64-bit int.
MIGRATION_LOCK_KEY = 0x65786F5F6D696772


def run_migrations_online() -> None:
    url = context.config.attributes.get("sqlalchemy_url") or context.config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise RuntimeError("no database URL given to the migration environment")
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            context.configure(connection=connection, transaction_per_migration=False)
            with context.begin_transaction():
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                )
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) migrations are not supported; pass a database URL")
run_migrations_online()
