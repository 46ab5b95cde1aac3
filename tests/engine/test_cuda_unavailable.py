"""Without CuPy, a driver or a device: is_available() is False, device_count() is 0, and asking for a CUDA
tensor raises one clear error saying which of the three is missing."""

from __future__ import annotations

import pytest

import engine
from engine import backend


@pytest.fixture
def simulate():
    saved = (backend._status, backend._cupy)

    def apply(status):
        backend._reset_cuda_status(status, None)

    yield apply
    backend._reset_cuda_status(*saved)


@pytest.mark.parametrize("reason, word", [
    ("CuPy is not installed (install the project's `cuda` extra)", "CuPy"),
    ("no usable NVIDIA driver (cudaErrorInsufficientDriver)", "driver"),
    ("no CUDA device found (the NVIDIA driver reports none)", "device"),
])
def test_each_missing_part_is_named(simulate, reason, word):
    simulate((False, reason, 0))
    assert engine.cuda.is_available() is False
    assert engine.cuda.device_count() == 0
    assert word in engine.cuda.unavailable_reason()
    for make in (lambda: engine.zeros(2, device="cuda"), lambda: engine.randn(2, 2, device="cuda:0"),
                 lambda: engine.ones(2).cuda(), lambda: engine.ones(2).to("cuda"),
                 lambda: engine.randn(2).type(engine.cuda.FloatTensor), engine.cuda.current_device,
                 engine.cuda.get_device_name, engine.cuda.mem_get_info):
        with pytest.raises(engine.CudaUnavailableError, match=word):
            make()
    engine.cuda.empty_cache()  # no-ops, as in PyTorch
    engine.cuda.manual_seed(1)
    engine.cuda.manual_seed_all(1)


def test_probe_reports_missing_cupy(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    monkeypatch.delenv("ENGINE_DISABLE_CUDA", raising=False)
    available, reason, count = backend._probe()
    assert (available, count) == (False, 0)
    assert "CuPy is not installed" in reason


def test_disable_switch(monkeypatch):
    monkeypatch.setenv("ENGINE_DISABLE_CUDA", "1")
    assert backend._probe()[0] is False


def test_device_objects():
    d = engine.device("cuda:1")
    assert (d.type, d.index, str(d)) == ("cuda", 1, "cuda:1")
    assert engine.device("cpu") == "cpu" and engine.device("cuda", 0) == engine.device("cuda:0")
    assert repr(engine.device("cuda")) == "device(type='cuda')"
    with pytest.raises(RuntimeError, match="index"):
        engine.device("cuda:x")


def test_missing_device_index_is_named(simulate):
    simulate((True, "", 1))
    backend._cupy = object()  # any module-like object: resolve() only checks the count
    with pytest.raises(engine.CudaUnavailableError, match=r"cuda:3 is not there: this machine has 1 CUDA device"):
        backend.resolve("cuda:3")
