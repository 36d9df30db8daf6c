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
MEMBERS := libs/proto libs/core libs/testing libs/cli services/embedding services/ingest \
	services/retrieval services/enrichment services/maintenance gateway mcp-adapter
STAMP := $(VENV)/.installed

.PHONY: help install run test test-unit test-integration test-e2e lint typecheck proto proto-check \
	bench-locomo bench-search clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

install: $(STAMP) ## create .venv and install every part of Exocortex (idempotent)

$(STAMP): constraints.txt $(foreach m,$(MEMBERS),$(m)/pyproject.toml)
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# A local wheelhouse (PIP_FIND_LINKS) is preferred when it has the CPU build; otherwise the
	# PyTorch CPU index is used.
	$(PY) -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('$(TORCH_VERSION)') and not torch.version.cuda else 1)" 2>/dev/null \
		|| $(PIP) install --no-index "torch==$(TORCH_VERSION)+cpu" 2>/dev/null \
		|| $(PIP) install "torch==$(TORCH_VERSION)" --index-url $(TORCH_CPU_INDEX)
	$(PIP) install --quiet -c constraints.txt $(foreach m,$(MEMBERS),-e $(m)) \
		pytest pytest-asyncio ruff mypy mypy-protobuf grpcio-tools
	touch $(STAMP)

run: install ## start the whole stack on the embedded default (Ctrl-C stops it)
	$(VENV)/bin/exo up

test: install ## lint, type-check, proto check, then every test
	$(MAKE) --no-print-directory lint typecheck proto-check
	$(PY) -m pytest

test-unit: install ## only the unit tests beside each package
	$(PY) -m pytest libs services gateway mcp-adapter

test-integration: install ## tests on real Postgres, NATS, index engines and model
	$(PY) -m pytest tests/integration

test-e2e: install ## start the stack like `exo up` and drive it over REST
	$(PY) -m pytest tests/e2e

lint: install ## ruff
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install ## mypy --strict on hand-written code
	$(VENV)/bin/mypy libs/core/src libs/testing/src libs/cli/src services/*/src gateway/src mcp-adapter/src

proto: install ## regenerate the gRPC stubs from protos/
	$(PY) protos/generate.py

proto-check: install ## fail if the committed stubs are stale
	$(PY) protos/generate.py --check

clean: ## remove the virtualenv and caches (never your data)
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
