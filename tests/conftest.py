"""Shared fixtures: the device parameter.

Device-parametrized tests run on ``cpu``; on ``cuda`` where a GPU is usable (skipped, visibly, with the reason
where not); and on ``cuda-sim``, the engine's CUDA code paths over a CuPy stand-in (tests/fake_cupy.py) that
checks plumbing (modules, transfers, errors, batching) on any machine. Only ``cuda`` says anything about a
real GPU.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess

import pytest

import engine
from engine import backend

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu), pytest.param("cuda-sim", marks=pytest.mark.sim)]


def gpu_listed() -> bool:
    """Whether ``nvidia-smi -L`` lists a GPU on this machine."""
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return any(line.startswith("GPU") for line in out.splitlines())


_GPU_LISTED: list[bool] = []


def pytest_addoption(parser):
    parser.addoption("--timing", action="store_true", help="also run the tests marked timing (make test-timing)")


def pytest_collection_modifyitems(config, items):
    # the torch marker's promise (pyproject.toml): a comparison with PyTorch is skipped where it is not installed
    # (make test on a fresh machine installs no torch; .ci/run does), found without importing it
    if importlib.util.find_spec("torch") is None:
        no_torch = pytest.mark.skip(reason="compares against PyTorch, which is not installed")
        for item in items:
            if item.get_closest_marker("torch") is not None:
                item.add_marker(no_torch)
    if config.getoption("--timing"):
        return
    skip = pytest.mark.skip(reason="asserts a duration: run with --timing (make test-timing) on a quiet machine")
    for item in items:
        if "timing" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    # Probe CUDA once, here, outside the tests' warnings-as-errors filter (the engine's probe keeps CuPy's import
    # warnings rather than failing on them), so that no test can cache a warning as "CUDA is unavailable".
    backend.cuda_status()
    _GPU_LISTED.append(gpu_listed())


def pytest_report_header(config):
    available, reason, count = backend.cuda_status()
    line = f"CUDA: {count} device(s)" if available else f"CUDA: not usable: {reason}"
    if backend.import_warnings:
        line += f" | CuPy warned at import: {'; '.join(backend.import_warnings)}"
    return [line + (" | nvidia-smi lists a GPU" if _GPU_LISTED and _GPU_LISTED[0] else "")]


def _real_cuda_or_skip():
    if engine.cuda.is_available():
        return
    reason = engine.cuda.unavailable_reason()
    if _GPU_LISTED and _GPU_LISTED[0]:
        pytest.fail(f"nvidia-smi lists a GPU but CUDA cannot be used: {reason}", pytrace=False)
    pytest.skip(f"no usable CUDA device: {reason}")


@pytest.fixture
def simulated_gpu():
    from tests import fake_cupy

    if engine.cuda.is_available():
        pytest.skip("a real GPU is here: the stand-in would hide it")
    undo = fake_cupy.install()
    engine.manual_seed(1234)
    yield fake_cupy
    undo()


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu', or 'cuda' (a real GPU, or the stand-in for the cuda-sim parameter)."""
    if request.param == "cuda":
        _real_cuda_or_skip()
    elif request.param == "cuda-sim":
        request.getfixturevalue("simulated_gpu")
        return "cuda"
    return request.param


@pytest.fixture(params=[pytest.param("cuda", marks=pytest.mark.gpu), pytest.param("cuda-sim", marks=pytest.mark.sim)])
def cuda_device(request):
    if request.param == "cuda":
        _real_cuda_or_skip()
    else:
        request.getfixturevalue("simulated_gpu")
    return "cuda"


@pytest.fixture(autouse=True)
def _fresh_seed():
    engine.manual_seed(1234)
    yield
