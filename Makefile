# The README's commands: `make run` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# The cuda extra only where an NVIDIA driver lists a GPU.
EXTRAS := test$(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo ',cuda')

.PHONY: setup run test test-engine bench bench-quick lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

run: setup
	$(PY) main.py $(ARGS)

test: setup
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

test-engine: setup
	$(PY) -m pytest tests/engine $(PYTEST_ARGS)

bench: setup
	$(PY) -m benchmarks $(BENCH_ARGS)

bench-quick: setup
	$(PY) -m benchmarks --quick

lint: setup
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
