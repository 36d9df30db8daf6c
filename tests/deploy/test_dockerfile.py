"""deploy/docker/Dockerfile: hadolint-clean, one file for every Python part, small, unprivileged."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "docker" / "Dockerfile"
ENTRYPOINT = ROOT / "deploy" / "docker" / "entrypoint.sh"
DOCKERIGNORE = ROOT / ".dockerignore"

PACKAGES = {
    "embedding": "services/embedding",
    "ingest": "services/ingest",
    "retrieval": "services/retrieval",
    "enrichment": "services/enrichment",
    "maintenance": "services/maintenance",
    "gateway": "gateway",
    "mcp-adapter": "mcp-adapter",
}


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def test_hadolint_is_clean(tools: Any) -> None:
    result = tools.run([tools.hadolint(), "--no-color", "--failure-threshold", "info", DOCKERFILE])
    assert result.returncode == 0, f"hadolint findings:\n{tools.describe(result)}"


def test_stages() -> None:
    stages = [rest for kw, rest in instructions() if kw == "FROM"]
    names = [s.split(" AS ")[-1].strip() for s in stages]
    assert names == ["builder", "dashboard", "runtime", "gateway", "service"]
    # The default target (last stage) is the plain service image.
    assert stages[-1] == "runtime AS service"


def test_base_images_are_pinned() -> None:
    images = [
        rest.split("=", 1)[1]
        for kw, rest in instructions()
        if kw == "ARG" and re.match(r"[A-Z_]+_IMAGE=", rest)
    ]
    assert len(images) == 2, images
    for image in images:
        assert re.search(r":\d+\.\d+\.\d+-", image), f"base image {image} is not pinned"


def test_torch_is_cpu_only_and_embedding_only() -> None:
    runs = [rest for kw, rest in instructions() if kw == "RUN" and "torch" in rest]
    assert len(runs) == 1, runs
    run = runs[0]
    assert '[ "${PACKAGE}" = "embedding" ]' in run
    assert '--index-url "${TORCH_INDEX_URL}"' in run
    assert "ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in DOCKERFILE.read_text()


def test_install_is_constrained_and_not_editable() -> None:
    installs = [rest for kw, rest in instructions() if kw == "RUN" and "-c constraints.txt" in rest]
    assert installs, "the member install must use -c constraints.txt"
    assert all(" -e " not in rest for rest in installs)


def test_runtime_is_unprivileged_and_has_no_build_tools() -> None:
    body = DOCKERFILE.read_text()
    runtime = body[body.index("AS runtime") :]
    user = [line for line in runtime.splitlines() if line.startswith("USER ")]
    assert user == ["USER 10001:10001"], user
    assert "COPY --from=builder /opt/venv /opt/venv" in runtime
    assert "apt-get" not in runtime
    assert "pip install" not in runtime


@pytest.mark.parametrize(("package", "member"), sorted(PACKAGES.items()))
def test_every_package_is_a_buildable_member(package: str, member: str) -> None:
    assert (ROOT / member / "pyproject.toml").is_file(), f"{member} has no pyproject.toml"
    assert package in DOCKERFILE.read_text()
    assert package in ENTRYPOINT.read_text()


def test_copied_paths_exist_and_are_in_the_build_context() -> None:
    ignored = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#") and not line.startswith("!")
    ]
    for kw, rest in instructions():
        if kw != "COPY" or "--from=" in rest:
            continue
        sources = [part for part in rest.split() if not part.startswith("--")][:-1]
        for source in sources:
            path = source.rstrip("/")
            assert (ROOT / path).exists(), f"COPY {source}: not in the repository"
            assert not any(
                path == pattern.rstrip("/") or path.startswith(pattern) for pattern in ignored
            ), f"COPY {source} is excluded by .dockerignore"


def test_dockerignore_keeps_the_context_small() -> None:
    patterns = set(DOCKERIGNORE.read_text().split())
    for needed in ("**/.git", "**/.venv", "**/node_modules", "**/__pycache__", "**/.env"):
        assert needed in patterns, f".dockerignore must exclude {needed}"


def test_entrypoint_is_valid_shell(tools: Any) -> None:
    result = tools.run(["sh", "-n", ENTRYPOINT])
    assert result.returncode == 0, tools.describe(result)
    text = ENTRYPOINT.read_text()
    assert "python -m exocortex.mcp --transport http" in text
    assert "python -m exocortex.core.db.migrate upgrade" in text
    assert ENTRYPOINT.stat().st_mode & 0o111, "entrypoint.sh must be executable"
