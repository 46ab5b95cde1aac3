"""Shared fixtures: the device parameter (cpu, and cuda where a GPU is usable)."""

from __future__ import annotations

import pytest

import engine


def _cuda_reason() -> str:
    return engine.cuda.unavailable_reason() or ""


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.fixture(params=DEVICES)
def device(request):
    """Run the test once per device; CUDA is skipped, visibly, with the reason, where none is usable."""
    if request.param == "cuda" and not engine.cuda.is_available():
        pytest.skip(f"no usable CUDA device: {_cuda_reason()}")
    return request.param


@pytest.fixture
def cuda_device():
    if not engine.cuda.is_available():
        pytest.skip(f"no usable CUDA device: {_cuda_reason()}")
    return "cuda"


@pytest.fixture(autouse=True)
def _fresh_seed():
    engine.manual_seed(1234)
    yield
