"""Pure helpers of exocortex.core.db (no server needed)."""

from __future__ import annotations

import json

import pytest

from exocortex.core.db.migrate import MIGRATIONS_DIR, alembic_config
from exocortex.core.db.pool import to_sqlalchemy_url
from exocortex.core.db.settings_store import DEFAULT_SETTINGS


@pytest.mark.parametrize(
    ("dsn", "expected"),
    [
        ("postgresql://u:p@h:5432/db", "postgresql+psycopg://u:p@h:5432/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        (
            "postgresql://u:p%40ss@h/db?sslmode=disable",
            "postgresql+psycopg://u:p%40ss@h/db?sslmode=disable",
        ),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
    ],
)
def test_to_sqlalchemy_url(dsn: str, expected: str) -> None:
    assert to_sqlalchemy_url(dsn) == expected


def test_to_sqlalchemy_url_rejects_other_schemes() -> None:
    with pytest.raises(ValueError, match="PostgreSQL"):
        to_sqlalchemy_url("mysql://u@h/db")


def test_migrations_ship_inside_the_package() -> None:
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert (MIGRATIONS_DIR / "script.py.mako").is_file()
    assert list((MIGRATIONS_DIR / "versions").glob("*.py"))


def test_alembic_config_keeps_percent_signs_in_the_url() -> None:
    cfg = alembic_config("postgresql://u:p%25w@h/db")
    assert cfg.attributes["sqlalchemy_url"] == "postgresql+psycopg://u:p%25w@h/db"


def test_default_settings_are_strings_and_json_values_parse() -> None:
    assert all(isinstance(v, str) for v in DEFAULT_SETTINGS.values())
    assert DEFAULT_SETTINGS["dedup.similarity_threshold"] == "0.85"
    assert DEFAULT_SETTINGS["scoring.fts_weight"] == "0.50"
    assert "scoring.keyword_weight" not in DEFAULT_SETTINGS
    assert json.loads(DEFAULT_SETTINGS["tags.alias_map"])["reactjs"] == "react"
    assert json.loads(DEFAULT_SETTINGS["dedup.exempt_tags"]) == []
