# Entry points: `make run` (dashboard) and `make test` (whole suite). See README.md.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# axe-core, the accessibility engine of the browser tests, from the npm registry (pinned in
# tests/browser/package-lock.json).
AXE    := tests/browser/node_modules/axe-core/axe.min.js

.PHONY: run test bench lint venv venv-dev clean reproduce opacus screenshots

run: $(VENV)/.stamp-run
	$(BIN)/python -m ui.serve --server.address localhost --server.port 8501 --server.headless true

# --dist worksteal: each worker starts with one contiguous half of the suite and, once idle,
# takes the second half of the other's queue, so a module's tests mostly share one worker (its
# module-scoped fixtures and cached adversarial searches are built once) and the run ends on
# stolen short tests; `--dist load` hands out ever smaller chunks in collection order and ends
# on whatever comes last (tests/ui/logic's slow export and preset tests).
test: $(VENV)/.stamp-dev $(AXE)
	$(BIN)/python -m pytest -n 2 --dist worksteal --durations=40

bench: $(VENV)/.stamp-dev
	$(BIN)/python -m benchmarks

# The browser tests write their screenshots to build/screenshots/ (never into the work tree);
# this copies them over the README's in assets/screenshots/, to be reviewed and committed.
screenshots:
	@test -d build/screenshots || { echo "no build/screenshots: run the browser tests first (make test, or pytest -m browser)"; exit 1; }
	cp build/screenshots/*.png assets/screenshots/

lint: $(VENV)/.stamp-dev
	$(BIN)/ruff check .

# Regenerate the papers' figures into reports/index.html (CSVs beside it); QUICK=1 runs the small
# configuration that CI uses. Needs the dev environment (diffprivlib for the Wine comparison).
reproduce: $(VENV)/.stamp-dev
	$(BIN)/python -m dpcore.experiments.report $(if $(filter-out 0 no false,$(QUICK)),--quick) --out reports

# Optional extra of the reproduction: PyTorch and Opacus for the Wine table's DP-SGD row (about
# 4 GB: PyPI's torch wheel brings its CUDA libraries; everything runs on the CPU). The runtime
# pins are constraints, so numpy and scipy stay as pinned.
opacus: $(VENV)/.stamp-dev
	$(BIN)/python -m pip install -r requirements-opacus.txt -c requirements.txt

venv: $(VENV)/.stamp-run
venv-dev: $(VENV)/.stamp-dev

# The interpreter is an order-only prerequisite: creating the venv must not force a reinstall,
# only a change of a requirements file does.
# --upgrade-deps: the pip and setuptools bundled with the interpreter are old (setuptools 65.5
# has known vulnerabilities, found by the dependency audit), so take the current ones.
$(BIN)/python:
	$(PYTHON) -m venv --upgrade-deps $(VENV)

# The pins and the project itself, in one resolver run: dpcore is installed editable with its
# `dashboard` extra, so scripts and notebooks run from anywhere with .venv/bin/python import
# the checkout's dpcore (editable: `make run` and the tests see every edit without a
# reinstall), and a pin outside pyproject.toml's ranges fails here. docs/install.md.
# After the install, `python -m dpcore.release.warm` compiles the numba kernels into numba's
# on-disk cache (about 25 CPU s, once), so no later process (the dashboard's first release of a
# chain, a test worker) compiles them again.
$(VENV)/.stamp-run: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -r requirements.txt -e ".[dashboard]"
	$(BIN)/python -m dpcore.release.warm
	touch $@

# The dev requirements include the runtime ones, so a dev install also satisfies `make run`.
$(VENV)/.stamp-dev: requirements.txt requirements-dev.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -r requirements-dev.txt -e ".[dashboard]"
	$(BIN)/python -m dpcore.release.warm
	touch $@ $(VENV)/.stamp-run

$(AXE): tests/browser/package.json tests/browser/package-lock.json
	npm ci --prefix tests/browser --ignore-scripts --no-audit --no-fund
	touch $@

clean:
	rm -rf .pytest_cache .ruff_cache .hypothesis reports
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
