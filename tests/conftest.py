"""Shared fixtures: the device parameter.

Device-parametrized tests run on ``cpu``; on ``cuda`` where a GPU is usable (skipped, visibly, with the reason
where not); and on ``cuda-sim``, the engine's CUDA code paths over a CuPy stand-in (tests/fake_cupy.py) that
checks plumbing (modules, transfers, errors, batching) on any machine. Only ``cuda`` says anything about a
real GPU.
"""

from __future__ import annotations

import pytest

import engine

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu), pytest.param("cuda-sim", marks=pytest.mark.sim)]


def _real_cuda_or_skip():
    if not engine.cuda.is_available():
        pytest.skip(f"no usable CUDA device: {engine.cuda.unavailable_reason()}")


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
