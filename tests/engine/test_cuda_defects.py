"""The defects a reading of the CUDA paths against CuPy 14.2 found (D6-D10), each pinned by a test: on the CuPy
stand-in where it can show them, on a real GPU (``gpu``) where only one can."""

from __future__ import annotations

import ctypes
import gc
import threading
import time

import numpy as np
import pytest

import engine
from engine import _capture, _cublas, backend

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# ------------------------------------------------------------------ D6: which cuBLAS, and the check's tolerance

def test_cublas_is_the_library_cupys_own_loader_loaded(monkeypatch):
    """D6: not the first libcublas in the memory map, nor a soname guess: the one cuda-pathfinder gave CuPy."""
    pathfinder = pytest.importorskip("cuda.pathfinder")
    asked = []

    class Loaded:
        abs_path = "/opt/cuda-from-pathfinder/libcublas.so.12"
        found_via = "site-packages"

    def load(name):
        asked.append(name)
        return Loaded()

    opened = []
    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", load)
    monkeypatch.setattr(ctypes, "CDLL", lambda path: opened.append(path) or path)
    monkeypatch.setattr(_cublas, "_mapped", lambda prefix: ["/elsewhere/libcublas.so.11"])
    assert _cublas._find_library() == "/opt/cuda-from-pathfinder/libcublas.so.12"
    assert asked == ["cublas"] and opened == ["/opt/cuda-from-pathfinder/libcublas.so.12"]


def test_without_cupys_loader_the_mapped_library_is_used_and_no_soname_is_guessed(monkeypatch):
    pathfinder = pytest.importorskip("cuda.pathfinder")

    def missing(name):
        raise pathfinder.DynamicLibNotFoundError(f"Failure finding {name}")

    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", missing)
    monkeypatch.setattr(_cublas, "_mapped", lambda prefix: [])
    monkeypatch.setattr(ctypes, "CDLL", lambda path: pytest.fail(f"guessed {path}"))
    with pytest.raises(_cublas.CublasError, match="cuda-pathfinder: Failure finding cublas"):
        _cublas._find_library()
    monkeypatch.setattr(_cublas, "_mapped", lambda prefix: ["/usr/local/cuda/lib64/libcublas.so.12"])
    monkeypatch.setattr(ctypes, "CDLL", lambda path: path)
    assert _cublas._find_library() == "/usr/local/cuda/lib64/libcublas.so.12"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_product_check_allows_rounding_and_refuses_a_wrong_product(dtype):
    """D6: two correct GEMMs differ by rounding (split-k, FMA); atol=0 would refuse a good one. The bound is
    2·k·eps·(|a|@|b|): a reordered sum stays inside, a wrong element does not."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 64)).astype(dtype)
    b = rng.standard_normal((64, 4)).astype(dtype)
    bound = _cublas.product_error_bound(a, b)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    reordered = np.zeros((5, 4), dtype)
    for j in reversed(range(64)):  # another summation order, in the working precision
        reordered += (a[:, j:j + 1] * b[j:j + 1, :]).astype(dtype)
    assert np.any(reordered != (a @ b))  # the orders really differ...
    assert np.all(np.abs(reordered - (a @ b)) <= bound)  # ...within the bound
    assert np.all(np.abs((a @ b) - exact) <= bound)
    wrong = (a @ b).copy()
    wrong[2, 1] += 1e-3 * np.abs(exact).max()
    assert not np.all(np.abs(wrong - (a @ b)) <= bound)


# ------------------------------------------------------------------ D7: a cuBLAS handle per thread, released

class _Lib:
    """Counts cublasCreate / cublasDestroy."""

    def __init__(self):
        self.created, self.destroyed = [], []

    def cublasCreate_v2(self, ref):  # noqa: N802 - cuBLAS's names
        handle = ctypes.cast(ref, ctypes.POINTER(ctypes.c_void_p)).contents
        handle.value = 1000 + len(self.created)
        self.created.append(handle.value)
        return 0

    def cublasDestroy_v2(self, handle):  # noqa: N802
        self.destroyed.append(handle.value)
        return 0


def test_each_threads_cublas_handle_is_destroyed_when_the_thread_ends():
    """D7: the app starts a thread per run; each made a handle (and its workspace) that was never destroyed."""
    lib = _Lib()
    live = _cublas.live_handles()

    def run():
        assert _cublas._handle(lib, 0) is _cublas._handle(lib, 0)  # one per thread and device

    for _ in range(5):
        t = threading.Thread(target=run)
        t.start()
        t.join()
    gc.collect()
    assert len(lib.created) == 5 and sorted(lib.destroyed) == sorted(lib.created)
    assert _cublas.live_handles() == live


def test_handles_wait_while_a_capture_goes_on(monkeypatch):
    lib = _Lib()
    monkeypatch.setattr(_capture, "count", 1)
    t = threading.Thread(target=lambda: _cublas._handle(lib, 0))
    t.start()
    t.join()
    gc.collect()
    assert lib.destroyed == []  # cublasDestroy synchronises the device: not during a capture
    monkeypatch.setattr(_capture, "count", 0)
    _cublas.release_pending()
    assert lib.destroyed == lib.created and len(lib.created) == 1


def test_release_thread_resources_destroys_this_threads_handles_now():
    lib = _Lib()
    _cublas._handle(lib, 0)
    _cublas._handle(lib, 1)
    engine.cuda.release_thread_resources()
    assert sorted(lib.destroyed) == sorted(lib.created) and len(lib.created) == 2


# ------------------------------------------------------------------ D8, D10: memory figures per device, a true peak

def test_memory_figures_are_those_of_the_device_asked_for(cuda_device):
    """D8: CuPy's pool answers for the current device; the figures for cuda:i were read after leaving it."""
    if engine.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    engine.cuda.empty_cache()
    before = [engine.cuda.memory_allocated(i) for i in (0, 1)]
    x = engine.zeros(1 << 18, device="cuda:1")  # 1 MiB of float32 on the second device only
    assert engine.cuda.memory_allocated(1) - before[1] >= 1 << 20
    assert engine.cuda.memory_allocated(0) == before[0]
    assert engine.cuda.memory_reserved(1) >= engine.cuda.memory_allocated(1)
    del x


def test_max_memory_allocated_is_the_peak_not_a_sample(cuda_device):
    """D10: a temporary that came and went between two calls is part of the peak."""
    engine.cuda.reset_peak_memory_stats()
    base = engine.cuda.memory_allocated()
    t = engine.ones(1 << 20, device=cuda_device)  # 4 MiB, then gone
    del t
    small = engine.ones(1 << 10, device=cuda_device)
    assert engine.cuda.memory_allocated() < base + (1 << 20)
    assert engine.cuda.max_memory_allocated() >= base + (4 << 20)
    engine.cuda.reset_peak_memory_stats()
    assert engine.cuda.max_memory_allocated() < base + (1 << 20)
    del small


# ------------------------------------------------------------------ D10: syncs and captures in different threads

def test_a_device_synchronisation_waits_for_another_threads_capture(cuda_device):
    """D10: engine.cuda.synchronize() from one thread while another captures would break that capture."""
    x = engine.ones(4, device=cuda_device)
    started, finish = threading.Event(), threading.Event()
    done = {}

    def capture():
        g = engine.cuda.CUDAGraph()
        with engine.cuda.graph(g):
            y = x * 3
            started.set()
            finish.wait(5)
        g.replay()
        done["y"] = backend.to_host(y._data)

    t = threading.Thread(target=capture)
    t.start()
    assert started.wait(5)
    waited = threading.Thread(target=engine.cuda.synchronize)
    waited.start()
    time.sleep(0.05)
    assert waited.is_alive()  # waiting for the capture to end, not breaking it
    finish.set()
    t.join(5)
    waited.join(5)
    assert not waited.is_alive()
    np.testing.assert_array_equal(done["y"], [3.0] * 4)


def test_a_synchronisation_inside_a_capture_is_refused_by_name(cuda_device):
    g = engine.cuda.CUDAGraph()
    with pytest.raises(engine.cuda.GraphCaptureError, match=r"engine.cuda.synchronize\(\) inside a CUDA-graph"):
        with engine.cuda.graph(g):
            engine.cuda.synchronize()
    assert not engine.cuda.is_current_stream_capturing()


@pytest.mark.parametrize("make, words", [
    (lambda d: engine.tensor([1.0, 2.0], device=d), "copies host data to the GPU"),
    (lambda d: engine.ones(2, device=d).cpu(), "reads a value back to the host"),
    (lambda d: engine.ones(1, device=d).item(), "reads a value back to the host"),
])
def test_a_copy_in_a_capture_is_named_by_its_direction(cuda_device, make, words):
    """D10: a host-to-device copy was reported as 'reads a value back'."""
    g = engine.cuda.CUDAGraph()
    with pytest.raises(engine.cuda.GraphCaptureError, match=f"cannot be captured as a CUDA graph: it {words}"):
        with engine.cuda.graph(g):
            make(cuda_device)
    assert not engine.cuda.is_current_stream_capturing()
