"""The Helm chart (deploy/helm/exocortex), checked offline: it renders for every profile, every
rendered manifest validates against the Kubernetes schemas, the policy scan passes, and the
manifests carry what a cluster install needs (probes, replicas, budgets, network fences,
secrets by reference, the workstation's alerts and dashboards).

Tools (installed by .ci/static-checks.sh, pinned there): the Helm SDK from PyPI
(helm-python-sdk, Helm's own Go library behind ctypes), kubernetes-validate, and checkov in its
own virtualenv (its dependencies conflict with the project's pins). A check whose tool cannot
be installed is skipped with the reason, except under CI (CI=true), where it fails.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from exocortex.core.bus import subjects
from exocortex.core.bus.dead_letter import DLQ_MAX_AGE_SECONDS
from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "exocortex"
ENGINES = ROOT / "deploy" / "helm" / "engines"
RULES = ROOT / "deploy" / "prometheus" / "rules" / "exocortex.yml"
DASHBOARDS = sorted((ROOT / "deploy" / "grafana" / "dashboards").glob("*.json"))
RELEASE, NAMESPACE = "exo", "memory"
FULLNAME = f"{RELEASE}-exocortex"

# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion; gRPC probes are GA in 1.27,
# validated at 1.29, the oldest schema set we test) and the newest schema set shipped.
KUBERNETES_VERSIONS = ("1.29.0", "1.37.0")

# Custom resources of operators the chart works with: no built-in schema, so each is checked
# for its group/version here and for its fields by the tests below.
CUSTOM_KINDS = {
    "Cluster": "postgresql.cnpg.io/v1",
    "ScheduledBackup": "postgresql.cnpg.io/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
    "PrometheusRule": "monitoring.coreos.com/v1",
    "ExternalSecret": "external-secrets.io/v1",
}

# checkov findings accepted, each with its reason (docs/scaling.md repeats them).
CHECKOV_SKIPS = {
    # Images are built by the operator from deploy/docker/Dockerfile and tagged with the
    # release; services.<part>.image.digest pins a digest when the registry provides one.
    "CKV_K8S_43": "image digest is optional (services.<part>.image.digest)",
    # With immutable release tags or digests, IfNotPresent is correct; Always adds a registry
    # round trip to every pod start and makes restarts depend on the registry being up.
    "CKV_K8S_15": "IfNotPresent with immutable tags; Always ties restarts to the registry",
    # Every part reads its settings from EXO_* variables (pydantic-settings); the values come
    # from a Secret by reference (secretKeyRef), never from the chart's values.
    "CKV_K8S_35": "settings are read from EXO_* env; values come from Secrets by reference",
}

CREDENTIALS_IN_URL = re.compile(r"://[^/@\s]+:[^/@\s]+@")

PARTS = {
    # component name -> (port, gRPC?)
    "gateway": (3210, False),
    "mcp-adapter": (3211, False),
    "embedding": (DEFAULT_GRPC_PORTS["embedding"], True),
    "ingest": (DEFAULT_GRPC_PORTS["ingest"], True),
    "retrieval": (DEFAULT_GRPC_PORTS["retrieval"], True),
    "enrichment": (DEFAULT_GRPC_PORTS["enrichment"], True),
    "maintenance": (DEFAULT_GRPC_PORTS["maintenance"], True),
}
SECRET = {"secrets": {"existingSecret": "exocortex"}}
BACKUP = {
    "postgres": {
        "cnpg": {
            "backup": {
                "destinationPath": "s3://backups/exocortex",
                "credentialsSecret": "exocortex-backup",
            }
        }
    }
}
# Every optional part switched on: CloudNativePG with backup, external-secrets, the operator's
# monitoring resources.
EVERYTHING = {
    "secrets": {"existingSecret": ""},
    "externalSecrets": {"enabled": True, "secretStoreRef": {"name": "vault"}},
    "postgres": {
        "cnpg": {
            "enabled": True,
            "instances": 3,
            "backup": {
                "enabled": True,
                "destinationPath": "s3://backups/exocortex",
                "credentialsSecret": "exocortex-backup",
            },
        }
    },
    "metrics": {"serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": True}},
}


def _missing(tool: str, why: str) -> None:
    message = f"{tool} unavailable ({why}); run .ci/static-checks.sh --install-only"
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(message)
    pytest.skip(message)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """What `helm -f a.yaml -f b.yaml` does with two values files: maps merge, the rest wins."""
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _profile_values(name: str) -> dict[str, Any]:
    layers: dict[str, list[dict[str, Any]]] = {
        "default": [SECRET],
        "small": [yaml.safe_load((CHART / "values-small.yaml").read_text()), SECRET],
        "large": [yaml.safe_load((CHART / "values-large.yaml").read_text()), SECRET, BACKUP],
        "everything": [EVERYTHING],
    }
    values: dict[str, Any] = {}
    for layer in layers[name]:
        values = _merge(values, layer)
    return values


PROFILES = ("default", "small", "large", "everything")


def _helm() -> Any:
    try:
        import helm_python  # type: ignore[import-not-found, unused-ignore]
    except ImportError as error:
        _missing("the Helm SDK (helm-python-sdk)", str(error))
    return helm_python


def render_templates(values: dict[str, Any]) -> dict[str, str]:
    helm = _helm()
    with helm.Chart.load(str(CHART)) as chart:
        rendered: dict[str, str] = chart.render(values, name=RELEASE, namespace=NAMESPACE)
    return rendered


@cache
def _rendered(profile: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(render_templates(_profile_values(profile)).items()))


def manifests(profile: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path, text in _rendered(profile):
        if path.endswith(".yaml"):
            docs.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return docs


def of_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def containers(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"]
    yield from spec.get("initContainers", [])
    yield from spec["containers"]


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in container.get("env", [])}


# ------------------------------------------------------------------ render, lint, validate


@pytest.mark.parametrize("profile", PROFILES)
def test_chart_lints_without_errors_or_warnings(profile: str) -> None:
    report = _helm().lint(str(CHART), _profile_values(profile), strict=True)
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert not report["errors"], report
    assert not problems, report


def test_chart_refuses_to_render_without_a_secret_reference() -> None:
    helm = _helm()
    with pytest.raises(helm.HelmRenderError, match=r"secrets\.existingSecret"):
        render_templates({})


@pytest.mark.parametrize("profile", PROFILES)
def test_every_manifest_validates_against_the_kubernetes_schemas(profile: str) -> None:
    try:
        import kubernetes_validate  # type: ignore[import-untyped, unused-ignore]
    except ImportError as error:
        _missing("kubernetes-validate", str(error))
    docs = manifests(profile)
    assert len(docs) > 20
    custom = []
    for doc in docs:
        if doc["kind"] in CUSTOM_KINDS:
            assert doc["apiVersion"] == CUSTOM_KINDS[doc["kind"]], doc["metadata"]
            custom.append(doc["kind"])
            continue
        for version in KUBERNETES_VERSIONS:
            # strict: an unknown field (a typo, a field from a newer API) is an error.
            kubernetes_validate.validate(doc, version, strict=True)
    if profile == "everything":
        assert set(custom) == set(CUSTOM_KINDS)


def _checkov() -> Path:
    beside = Path(sys.prefix) / "tools" / "checkov" / "bin" / "checkov"
    found = beside if beside.is_file() else shutil.which("checkov")
    if found is None:
        _missing("checkov", f"not at {beside} nor on PATH")
    return Path(str(found))


@pytest.fixture(scope="module")
def policy_findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[str], int]]:
    """One checkov run over every profile's manifests (its start-up costs more than a scan):
    per profile, the failed checks and how many passed."""
    checkov = _checkov()
    out = tmp_path_factory.mktemp("rendered")
    for profile in PROFILES:
        (out / profile).mkdir()
        for path, text in _rendered(profile):
            if path.endswith(".yaml") and text.strip():
                (out / profile / Path(path).name).write_text(text)
    result = subprocess.run(
        [
            str(checkov),
            "--directory",
            str(out),
            "--framework",
            "kubernetes",
            "--skip-check",
            ",".join(CHECKOV_SKIPS),
            # Offline: no guideline download.
            "--skip-download",
            # Not --quiet: the passed checks are counted too.
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.stdout.strip(), result.stderr
    report = json.loads(result.stdout)
    findings: dict[str, tuple[list[str], int]] = {}
    for profile in PROFILES:
        failed, passed = [], 0
        for one in report if isinstance(report, list) else [report]:
            results = one.get("results", {})
            for check in results.get("failed_checks", []):
                if check["file_path"].startswith(f"/{profile}/"):
                    failed.append(f"{check['check_id']} {check['resource']}: {check['check_name']}")
            passed += sum(
                1
                for check in results.get("passed_checks", [])
                if check["file_path"].startswith(f"/{profile}/")
            )
        findings[profile] = (failed, passed)
    return findings


@pytest.mark.parametrize("profile", PROFILES)
def test_policy_scan_passes_with_only_the_documented_skips(
    profile: str, policy_findings: dict[str, tuple[list[str], int]]
) -> None:
    failed, passed = policy_findings[profile]
    assert not failed, "\n".join(failed)
    # The scan really looked at this profile's workloads.
    assert passed > 100, passed


# ------------------------------------------------------------------ what the manifests carry


def test_a_deployment_per_part_probed_on_its_own_port() -> None:
    deployments = of_kind(manifests("default"), "Deployment")
    assert set(deployments) == {f"{FULLNAME}-{part}" for part in PARTS}
    for part, (port, grpc) in PARTS.items():
        main = deployments[f"{FULLNAME}-{part}"]["spec"]["template"]["spec"]["containers"][0]
        assert main["ports"][0]["containerPort"] == port
        probes = [main[p] for p in ("startupProbe", "readinessProbe", "livenessProbe")]
        if grpc:
            # The gRPC health service answers NOT_SERVING until the part is ready.
            assert all(probe["grpc"]["port"] == port for probe in probes), part
            env = env_of(main)
            upper = part.upper()
            assert env[f"EXO_{upper}_LISTEN"]["value"] == f"0.0.0.0:{port}"
            assert env[f"EXO_{upper}_METRICS_PORT"]["value"] == str(DEFAULT_METRICS_PORTS[part])
        elif part == "gateway":
            assert main["startupProbe"]["httpGet"]["path"] == "/health"
            assert main["readinessProbe"]["httpGet"]["port"] == "http"
        else:
            assert all("tcpSocket" in probe for probe in probes)


def test_every_part_finds_the_others_on_their_headless_services() -> None:
    docs = manifests("default")
    services = of_kind(docs, "Service")
    for deployment in of_kind(docs, "Deployment").values():
        env = env_of(deployment["spec"]["template"]["spec"]["containers"][0])
        for part, (port, grpc) in PARTS.items():
            if not grpc:
                continue
            address = env[f"EXO_{part.upper()}_ADDR"]["value"]
            match = re.fullmatch(rf"dns:///([a-z0-9-]+)\.{NAMESPACE}\.svc:(\d+)", address)
            assert match, address
            service = services[match.group(1)]
            assert service["spec"]["clusterIP"] == "None"
            assert [p["port"] for p in service["spec"]["ports"]] == [int(match.group(2))] == [port]


@pytest.mark.parametrize("profile", PROFILES)
def test_pods_run_unprivileged_on_a_read_only_root(profile: str) -> None:
    docs = manifests(profile)
    workloads = [d for d in docs if d["kind"] in {"Deployment", "Job"}]
    assert workloads
    for doc in workloads:
        pod = doc["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
        assert pod["automountServiceAccountToken"] is False
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert "emptyDir" in volumes["tmp"]
        for container in containers(doc):
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]
            assert context["runAsUser"] >= 10000
            assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
            assert container["resources"]["limits"]["memory"]


@pytest.mark.parametrize("profile", PROFILES)
def test_secrets_are_only_referenced_never_rendered(profile: str) -> None:
    docs = manifests(profile)
    assert not of_kind(docs, "Secret")
    secret_settings = {"EXO_DATABASE_URL", "EXO_NATS_URL", "EXO_API_KEYS", "NATS_URL"}
    secret_settings |= {"EXO_QDRANT_API_KEY", "EXO_MEILI_MASTER_KEY"}
    seen = set()
    for doc in docs:
        if doc["kind"] not in {"Deployment", "Job"}:
            continue
        for container in containers(doc):
            for name, item in env_of(container).items():
                if name in secret_settings:
                    assert "value" not in item, name
                    assert "secretKeyRef" in item["valueFrom"], name
                    seen.add(name)
                else:
                    value = str(item.get("value", ""))
                    assert not CREDENTIALS_IN_URL.search(value), f"{name} carries credentials"
    assert {"EXO_DATABASE_URL", "EXO_NATS_URL", "EXO_API_KEYS"} <= seen


def test_cloudnativepg_supplies_the_database_url() -> None:
    docs = manifests("everything")
    cluster = of_kind(docs, "Cluster")[f"{FULLNAME}-pg"]
    assert cluster["spec"]["instances"] == 3
    assert cluster["spec"]["backup"]["barmanObjectStore"]["destinationPath"].startswith("s3://")
    assert of_kind(docs, "ScheduledBackup")
    refs = [
        env["EXO_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
        for deployment in of_kind(docs, "Deployment").values()
        for env in map(env_of, containers(deployment))
        if "EXO_DATABASE_URL" in env
    ]
    assert refs, "no Deployment takes EXO_DATABASE_URL"
    assert all(ref == {"name": f"{FULLNAME}-pg-app", "key": "uri"} for ref in refs), refs
    external = of_kind(docs, "ExternalSecret")[f"{FULLNAME}-secrets"]
    assert external["spec"]["target"]["name"] == f"{FULLNAME}-secrets"
    assert {item["secretKey"] for item in external["spec"]["data"]} >= {"nats-url", "api-keys"}


def _policy_for(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return of_kind(docs, "NetworkPolicy")[name]


def test_only_the_gateway_and_mcp_adapter_take_traffic_from_outside() -> None:
    docs = manifests("default")
    selector = {"app.kubernetes.io/name": "exocortex", "app.kubernetes.io/instance": RELEASE}
    deny = _policy_for(docs, f"{FULLNAME}-default-deny")
    assert deny["spec"]["podSelector"]["matchLabels"] == selector
    assert "ingress" not in deny["spec"]
    assert deny["spec"]["policyTypes"] == ["Ingress"]
    metrics_ports = set(DEFAULT_METRICS_PORTS.values())
    for part, (port, grpc) in PARTS.items():
        rules = _policy_for(docs, f"{FULLNAME}-{part}")["spec"]["ingress"]
        for rule in rules:
            ports = {p["port"] for p in rule["ports"]}
            peers = rule.get("from")
            if ports <= metrics_ports and ports != {port}:
                # Metrics: from the monitoring namespace only.
                assert peers
                assert all("namespaceSelector" in peer for peer in peers)
            elif grpc:
                assert ports == {port}
                assert peers == [{"podSelector": {"matchLabels": selector}}], part
            else:
                assert ports == {port}
                assert part in {"gateway", "mcp-adapter"}
    nats = _policy_for(docs, f"{FULLNAME}-nats")["spec"]["ingress"]
    clients = next(rule for rule in nats if rule["ports"] == [{"port": 4222, "protocol": "TCP"}])
    assert clients["from"] == [{"podSelector": {"matchLabels": selector}}]
    for engine in ("qdrant", "meilisearch"):
        first = _policy_for(docs, f"{FULLNAME}-{engine}")["spec"]["ingress"][0]
        assert first["from"] == [{"podSelector": {"matchLabels": selector}}]


def test_alerts_are_the_workstation_rules() -> None:
    rule = of_kind(manifests("large"), "PrometheusRule")[FULLNAME]
    assert rule["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]
    monitor = of_kind(manifests("large"), "ServiceMonitor")[FULLNAME]
    # The job label is the part's name, which the rules and dashboards select on.
    assert monitor["spec"]["jobLabel"] == "app.kubernetes.io/component"
    scraped = {
        doc["metadata"]["labels"]["app.kubernetes.io/component"]
        for doc in of_kind(manifests("large"), "Service").values()
        if doc["metadata"]["labels"].get("exocortex.io/metrics") == "true"
    }
    assert scraped == set(DEFAULT_METRICS_PORTS) | {"gateway"}


def test_dashboards_are_the_workstation_json() -> None:
    maps = of_kind(manifests("default"), "ConfigMap")
    shipped = {}
    for config_map in maps.values():
        assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
        shipped.update(config_map["data"])
    assert set(shipped) == {path.name for path in DASHBOARDS}
    for path in DASHBOARDS:
        assert json.loads(shipped[path.name]) == json.loads(path.read_text())


def _replicas(docs: list[dict[str, Any]], part: str) -> int:
    hpa = of_kind(docs, "HorizontalPodAutoscaler").get(f"{FULLNAME}-{part}")
    if hpa is not None:
        return int(hpa["spec"]["minReplicas"])
    return int(of_kind(docs, "Deployment")[f"{FULLNAME}-{part}"]["spec"]["replicas"])


def test_large_profile_runs_every_part_in_replicas_with_budgets() -> None:
    docs = manifests("large")
    budgets = of_kind(docs, "PodDisruptionBudget")
    deployments = of_kind(docs, "Deployment")
    autoscalers = of_kind(docs, "HorizontalPodAutoscaler")
    for part in PARTS:
        name = f"{FULLNAME}-{part}"
        assert _replicas(docs, part) >= 2, part
        selector = deployments[name]["spec"]["selector"]["matchLabels"]
        assert budgets[name]["spec"]["selector"]["matchLabels"] == selector
        spread = deployments[name]["spec"]["template"]["spec"]["topologySpreadConstraints"]
        assert spread[0]["topologyKey"] == "kubernetes.io/hostname"
        if part != "maintenance":
            target = autoscalers[name]["spec"]["scaleTargetRef"]
            assert target == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
            assert "replicas" not in deployments[name]["spec"], "the HPA owns replicas"
    # Maintenance jobs run once whichever replica holds the lock: more is availability only.
    assert f"{FULLNAME}-maintenance" not in autoscalers
    assert of_kind(docs, "Cluster")[f"{FULLNAME}-pg"]["spec"]["instances"] == 3
    retrieval = env_of(
        deployments[f"{FULLNAME}-retrieval"]["spec"]["template"]["spec"]["containers"][0]
    )
    assert retrieval["EXO_QDRANT_URL"]["value"].startswith("http://")
    assert retrieval["EXO_MEILI_URL"]["value"].startswith("http://")


def test_small_profile_fits_one_node() -> None:
    docs = manifests("small")
    assert not of_kind(docs, "HorizontalPodAutoscaler")
    assert not of_kind(docs, "PodDisruptionBudget")
    for part in PARTS:
        assert _replicas(docs, part) == 1, part
    retrieval = of_kind(docs, "Deployment")[f"{FULLNAME}-retrieval"]
    # The embedded engines are opened by one process: no overlap during a rollout.
    assert retrieval["spec"]["strategy"] == {"type": "Recreate"}
    volumes = {v["name"]: v for v in retrieval["spec"]["template"]["spec"]["volumes"]}
    claim = volumes["data"]["persistentVolumeClaim"]["claimName"]
    assert claim in of_kind(docs, "PersistentVolumeClaim")
    env = env_of(retrieval["spec"]["template"]["spec"]["containers"][0])
    assert "EXO_QDRANT_URL" not in env
    assert "EXO_MEILI_URL" not in env


def _seconds(duration: str) -> float:
    units = {"m": 60, "h": 3600, "d": 86400}
    return float(duration[:-1]) * units[duration[-1]]


@pytest.mark.parametrize(("profile", "replicas"), [("large", "3"), ("small", "1")])
def test_stream_job_declares_the_streams_the_services_use(profile: str, replicas: str) -> None:
    job = of_kind(manifests(profile), "Job")[f"{FULLNAME}-nats-stream"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert env_of(container)["REPLICAS"]["value"] == replicas
    script = container["args"][0]
    declared = {
        name: (subject, _seconds(age))
        for name, subject, age in re.findall(r"^declare (\S+) '([^']+)' (\S+)", script, re.M)
    }
    assert declared == {
        subjects.STREAM: (subjects.STREAM_SUBJECTS[0], 14 * 86400.0),
        subjects.DLQ_STREAM: (subjects.DLQ_SUBJECTS[0], DLQ_MAX_AGE_SECONDS),
    }
    assert len(subjects.STREAM_SUBJECTS) == len(subjects.DLQ_SUBJECTS) == 1


def test_engine_values_ask_for_replicated_clusters() -> None:
    nats = yaml.safe_load((ENGINES / "nats-values.yaml").read_text())
    assert nats["config"]["cluster"]["enabled"] is True
    assert nats["config"]["cluster"]["replicas"] >= 3
    assert nats["config"]["jetstream"]["enabled"] is True
    assert nats["config"]["jetstream"]["fileStore"]["pvc"]["enabled"] is True
    large = _profile_values("large")
    assert large["nats"]["stream"]["replicas"] <= nats["config"]["cluster"]["replicas"]

    qdrant = yaml.safe_load((ENGINES / "qdrant-values.yaml").read_text())
    assert qdrant["config"]["cluster"]["enabled"] is True
    factor = qdrant["config"]["storage"]["collection"]["replication_factor"]
    assert 2 <= factor <= qdrant["replicaCount"]

    meili = yaml.safe_load((ENGINES / "meilisearch-values.yaml").read_text())
    assert meili["environment"]["MEILI_ENV"] == "production"
    assert meili["persistence"]["enabled"] is True
