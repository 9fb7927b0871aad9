# Entry points: `make run` (dashboard) and `make test` (whole suite). See README.md.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test bench lint venv venv-dev clean

run: $(VENV)/.stamp-run
	$(BIN)/python -m ui.serve --server.address localhost --server.port 8501 --server.headless true

test: $(VENV)/.stamp-dev
	$(BIN)/python -m pytest

bench: $(VENV)/.stamp-dev
	$(BIN)/python -m benchmarks

lint: $(VENV)/.stamp-dev
	$(BIN)/ruff check .

venv: $(VENV)/.stamp-run
venv-dev: $(VENV)/.stamp-dev

# The interpreter is an order-only prerequisite: creating the venv must not force a reinstall,
# only a change of a requirements file does.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.stamp-run: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install -r requirements.txt
	touch $@

# The dev requirements include the runtime ones, so a dev install also satisfies `make run`.
$(VENV)/.stamp-dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install -r requirements-dev.txt
	touch $@ $(VENV)/.stamp-run

clean:
	rm -rf .pytest_cache .ruff_cache .hypothesis reports
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
