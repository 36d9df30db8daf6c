"""The server fixtures start the images compose.yaml pins, and say why when they cannot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
