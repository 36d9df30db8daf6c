"""Postgres access: connection pool, schema migrations, the transactional outbox and settings.

Postgres is the single source of truth; every other store is a projection of it.
"""
