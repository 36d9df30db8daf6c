"""``exo`` driven the way a person types it, against the session's real stack (the gateway on
its free port, given with ``--url``). Each test works in a namespace of its own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from exocortex.cli.main import app


class Exo:
    """Runs ``exo --url <stack> ARGS…``; ``input`` is standard input."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self.runner.invoke(app, ["--url", self.url, *args], input=input)

    def json(self, *args: str, input: str | None = None) -> Any:
        """The command's --json output, insisting it succeeded."""
        result = self(*args, "--json", input=input)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


@pytest.fixture(autouse=True)
def isolated_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No config file, key or data folder of the person running the tests leaks in."""
    monkeypatch.setenv("EXO_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("EXO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("EXO_URL", raising=False)
    monkeypatch.delenv("EXO_API_KEY", raising=False)
    return tmp_path / "config.toml"


@pytest.fixture
def namespace() -> str:
    return f"cli-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def exo(gateway_url: str) -> Exo:
    return Exo(gateway_url)
