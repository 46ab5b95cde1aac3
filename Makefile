# The README's commands: `make run` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Where an NVIDIA driver lists a GPU, the CuPy wheel for the driver's CUDA major version (12 or 13, with its CUDA
# libraries); elsewhere the plain CuPy wheel, which imports without a GPU, so the tests hold their CuPy stand-in
# to the real API.
CUDA_MAJOR := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9]*\).*/\1/p' | head -1)
CUDA_EXTRA := $(if $(filter 12,$(CUDA_MAJOR)),cuda12,$(if $(filter 13 14 15,$(CUDA_MAJOR)),cuda13,cupy-api))
EXTRAS := test,$(CUDA_EXTRA)
# make gpu-check runs on a bare GPU machine too (no network, no PySide6): the venv's Python where there is one
GPU_PY := $(if $(wildcard $(PY)),$(PY),$(PYTHON))

.PHONY: setup run test test-timing test-engine bench bench-quick lint clean gpu-check

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py engine/autograd/_cgraph.c engine/_ckernels.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

run: setup
	$(PY) main.py $(ARGS)

test: setup
	QT_QPA_PLATFORM=offscreen PYTEST_QT_API=pyside6 $(PY) -m pytest $(PYTEST_ARGS)

# the tests that assert durations (marked timing), on a quiet machine
test-timing: setup
	QT_QPA_PLATFORM=offscreen PYTEST_QT_API=pyside6 $(PY) -m pytest -m timing --timing $(PYTEST_ARGS)

test-engine: setup
	$(PY) -m pytest tests/engine $(PYTEST_ARGS)

bench: setup
	$(PY) -m benchmarks $(BENCH_ARGS)

bench-quick: setup
	$(PY) -m benchmarks --quick

# Everything that needs a real GPU, in one command (no setup: a GPU machine may have no network); a report in
# gpu-check/. Without a GPU it says so in one line; GPU_CHECK_ARGS=--dry-run runs it on the CuPy stand-in.
gpu-check:
	@# the graph's compiled paths, built in place where setuptools and a C compiler are (else the Python ones run)
	-@$(GPU_PY) setup.py -q build_ext --inplace >/dev/null 2>&1
	PYTHONPATH=.$${PYTHONPATH:+:$$PYTHONPATH} $(GPU_PY) -m benchmarks.gpu_check --out gpu-check $(GPU_CHECK_ARGS)

lint: setup
	$(PY) -m ruff check .
	PYTHONPATH=. $(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
