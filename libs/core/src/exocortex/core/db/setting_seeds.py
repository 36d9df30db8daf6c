"""Settings rows a migration seeds: insert-if-missing (a key set before keeps its value), and
their removal on downgrade. Migrations pass their own frozen copy of the values."""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa
from alembic import op


def insert_missing(values: Mapping[str, str]) -> None:
    op.get_bind().execute(
        sa.text(
            "INSERT INTO settings (key, value) VALUES (:key, :value) ON CONFLICT (key) DO NOTHING"
        ),
        [{"key": key, "value": value} for key, value in values.items()],
    )


def delete_keys(values: Mapping[str, str]) -> None:
    op.get_bind().execute(
        sa.text("DELETE FROM settings WHERE key = ANY(:keys)"), {"keys": list(values)}
    )
