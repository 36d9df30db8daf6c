"""The server fixtures start the images compose.yaml pins, and say why when they cannot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from exocortex.testing import containers

OFFICIAL = {
    "qdrant": "qdrant/qdrant",
    "meilisearch": "getmeili/meilisearch",
    "postgres": "pgvector/pgvector",
}


@pytest.mark.parametrize("service", sorted(OFFICIAL))
def test_the_image_is_compose_yamls_pinned_official_one(service: str) -> None:
    repository, _, tag = containers.compose_image(service).partition(":")
    assert repository == OFFICIAL[service]
    # A version, never a moving tag such as "latest".
    assert any(c.isdigit() for c in tag), tag


def test_a_tag_changed_in_compose_yaml_is_the_tag_started(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  qdrant:\n    image: qdrant/qdrant:v9.9.9\n")
    assert containers.compose_image("qdrant", compose) == "qdrant/qdrant:v9.9.9"


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    host = f"unix://{tmp_path}/docker.sock"
    monkeypatch.setenv("DOCKER_HOST", host)
    containers.docker_unreachable.cache_clear()
    try:
        yield host
    finally:
        containers.docker_unreachable.cache_clear()


def test_without_an_engine_the_skip_names_the_variable_and_the_engine(no_engine: str) -> None:
    assert containers.skip_reason("EXO_TEST_QDRANT_URL", "Qdrant server") == (
        f"EXO_TEST_QDRANT_URL is not set and no Docker engine reachable at {no_engine} "
        "(DockerException): no Qdrant server to test against"
    )


class FakeContainer:
    """Stands in for testcontainers' DockerContainer: records what it was asked to run."""

    started: ClassVar[list[FakeContainer]] = []

    def __init__(self, image: str, env: dict[str, str]) -> None:
        self.image, self.env, self.ports = image, env, [0]

    def with_exposed_ports(self, *ports: int) -> FakeContainer:
        self.ports = list(ports)
        return self

    def start(self) -> FakeContainer:
        FakeContainer.started.append(self)
        return self

    def get_container_host_ip(self) -> str:
        return "127.0.0.1"

    def get_exposed_port(self, port: int) -> str:
        return str(40000 + port)


def test_a_container_runs_the_image_with_its_settings_and_answers_on_the_mapped_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from testcontainers.core import container as tc

    monkeypatch.setattr(tc, "DockerContainer", FakeContainer)
    started, host, port = containers._start("qdrant/qdrant:v1.19.1", 6333, {"K": "v"})
    assert started is FakeContainer.started[-1]
    assert (started.image, started.env, started.ports) == (
        "qdrant/qdrant:v1.19.1",
        {"K": "v"},
        [6333],
    )
    assert (host, port) == ("127.0.0.1", 46333)
