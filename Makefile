PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/rollwise simulate examples/rolling-update.yaml
	$(BIN)/rollwise demo --out rollwise-demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/strategies.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/explore.py --faults 0 --user-actions 0

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .ruff_cache .hypothesis
