"""The gRPC library's switches reach every process the stack starts, and the image's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from exocortex.core.rpc.environment import GRPC_ENVIRONMENT, with_grpc_environment
from exocortex.core.runtime.stack import Stack, StackConfig

DOCKERFILE = Path(__file__).resolve().parents[4] / "deploy" / "docker" / "Dockerfile"


def test_the_stack_starts_its_processes_with_the_switches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRPC_EXPERIMENTS", raising=False)
    env = Stack(StackConfig(data_dir=tmp_path)).env()
    assert env["GRPC_EXPERIMENTS"] == GRPC_ENVIRONMENT["GRPC_EXPERIMENTS"]


def test_an_operators_own_value_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRPC_EXPERIMENTS", "-event_engine_dns")
    assert Stack(StackConfig(data_dir=tmp_path)).env()["GRPC_EXPERIMENTS"] == "-event_engine_dns"
    assert with_grpc_environment({"PATH": "/bin"}) == {"PATH": "/bin", **GRPC_ENVIRONMENT}


def test_the_image_sets_the_same_switches() -> None:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    for name, value in GRPC_ENVIRONMENT.items():
        set_there = re.search(rf"\b{name}={re.escape(value)}(\s|$)", text)
        assert set_there, f"{name} is not set in the image"
