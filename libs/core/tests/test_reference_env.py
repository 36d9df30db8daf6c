"""The reference product's environment variable names are read as aliases of this project's:
its name is used when ours is not set, ours wins when both are, and the use is reported."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field
from pydantic_settings import BaseSettings

from exocortex.core.reference_env import aliases_in_use, env, reference_database


class _Settings(BaseSettings):
    host: str = Field(default="127.0.0.1", validation_alias=env("EXO_GATEWAY_HOST"))
    agent: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_AGENT"))


def test_a_reference_name_sets_the_value_and_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXO_GATEWAY_HOST", raising=False)
    monkeypatch.delenv("EXO_DEFAULT_AGENT", raising=False)
    monkeypatch.setenv("EXOCORTEX_HOST", "0.0.0.0")
    settings = _Settings()
    assert settings.host == "0.0.0.0"
    assert aliases_in_use(settings) == [("EXOCORTEX_HOST", "EXO_GATEWAY_HOST")]


def test_this_projects_name_wins_and_nothing_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXOCORTEX_DEFAULT_AGENT", "reference-agent")
    monkeypatch.setenv("EXO_DEFAULT_AGENT", "our-agent")
    monkeypatch.delenv("EXOCORTEX_HOST", raising=False)
    settings = _Settings()
    assert settings.agent == "our-agent"
    assert aliases_in_use(settings) == []


def test_the_reference_database_is_exocortex_db_path_else_its_default() -> None:
    assert reference_database({"EXOCORTEX_DB_PATH": "/data/x.db"}) == Path("/data/x.db")
    assert reference_database({}) == Path("~/.exocortex/exocortex.db").expanduser()
