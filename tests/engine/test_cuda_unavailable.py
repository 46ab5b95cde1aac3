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
    ("CuPy is not installed (install the project's CUDA extra)", "CuPy"),
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
    monkeypatch.setattr(backend, "_driver_present", lambda: True)  # a GPU machine without CuPy: install the extra
    available, reason, count = backend._probe()
    assert (available, count) == (False, 0)
    assert reason.startswith("CuPy is not installed (install the project's CUDA extra for this driver")
    monkeypatch.setattr(backend, "_driver_present", lambda: False)  # no driver: no advice to install CuPy
    assert backend._probe() == (False, "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded), so no GPU "
                                       "to use", 0)


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


def test_probe_keeps_cupys_import_warnings_instead_of_failing(monkeypatch):
    """D4: under `-W error` a warning at CuPy's import must not turn into 'CuPy failed to import'."""
    import sys
    import types
    import warnings

    fake = types.ModuleType("cupy")
    fake.__version__ = "14.2.0"

    class Runtime:
        @staticmethod
        def getDeviceCount():  # noqa: N802 - CuPy's name
            return 0

    fake.cuda = types.SimpleNamespace(runtime=Runtime)
    monkeypatch.delenv("ENGINE_DISABLE_CUDA", raising=False)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(backend, "_driver_present", lambda: True)
    import builtins

    real_import = builtins.__import__

    def warn_on_import(name, *args, **kwargs):
        if name == "cupy":
            warnings.warn("CuPy may not function correctly because multiple CuPy packages are installed",
                          UserWarning, stacklevel=2)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", warn_on_import)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        available, reason, _ = backend._probe()
    assert (available, reason) == (False, "no CUDA device found (the NVIDIA driver reports none)")
    assert backend.import_warnings == [
        "UserWarning: CuPy may not function correctly because multiple CuPy packages are installed"]


def test_probe_names_a_missing_driver(monkeypatch):
    monkeypatch.delenv("ENGINE_DISABLE_CUDA", raising=False)
    pytest.importorskip("cupy")
    monkeypatch.setattr(backend, "_driver_present", lambda: False)
    assert backend._probe() == (False, "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)", 0)


@pytest.mark.sim
@pytest.mark.parametrize("broken, words", [
    ("kernel", "cannot run a CuPy kernel (CUDA runtime or NVRTC): RuntimeError: libnvrtc.so.12: cannot open"),
    ("product", "cannot run a matrix product (cuBLAS): RuntimeError: libcublas.so.12: cannot open"),
    ("wrong", "ran a matrix product (cuBLAS) with a wrong result"),
])
def test_a_device_that_cannot_compute_is_reported_at_start_by_name(simulated_gpu, monkeypatch, broken, words):
    """D5: is_available() proves the device works: one kernel and one product."""
    cupy = backend.get_cupy()
    assert backend.check_device_works(cupy) == ""
    if broken == "kernel":
        monkeypatch.setattr(simulated_gpu.ndarray, "__mul__", _raises("libnvrtc.so.12: cannot open shared object"))
    elif broken == "product":
        monkeypatch.setattr(simulated_gpu.ndarray, "__matmul__", _raises("libcublas.so.12: cannot open shared object"))
    else:
        monkeypatch.setattr(simulated_gpu.ndarray, "__matmul__", lambda a, b: cupy.zeros((2, 2), dtype=a.dtype))
    assert words in backend.check_device_works(cupy)


def _raises(text):
    def fail(*args, **kwargs):
        raise RuntimeError(text)

    return fail


def test_gpu_tests_fail_rather_than_skip_where_nvidia_smi_lists_a_gpu(simulate, monkeypatch):
    """D4: a GPU that is there but unusable (a broken CuPy, a warning taken for an import failure) must not let
    every gpu test skip green."""
    from tests import conftest

    simulate((False, "CuPy is installed but failed to import: two CuPy wheels", 0))
    monkeypatch.setattr(conftest, "_GPU_LISTED", [False])
    with pytest.raises(pytest.skip.Exception, match="no usable CUDA device: CuPy is installed but failed"):
        conftest._real_cuda_or_skip()
    monkeypatch.setattr(conftest, "_GPU_LISTED", [True])
    with pytest.raises(pytest.fail.Exception, match="nvidia-smi lists a GPU but CUDA cannot be used: CuPy is"):
        conftest._real_cuda_or_skip()


def test_a_question_asked_from_inside_the_probe_is_answered_not_waited_on(simulate, monkeypatch):
    """Importing CuPy runs other modules; a script's own cuda.py beside it is one of them, and it asked the engine
    for CUDA again from inside the probe, in the probe's thread: the lock waited on itself for ever."""
    import threading

    simulate(None)  # not probed yet
    inner = []

    def probe():
        inner.append(backend.cuda_status())  # what a module imported during the probe is told
        return False, "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)", 0

    monkeypatch.setattr(backend, "_probe", probe)
    outer = []
    asker = threading.Thread(target=lambda: outer.append(backend.cuda_status()), daemon=True)
    asker.start()
    asker.join(10)
    assert not asker.is_alive(), "the probe waited on itself"
    assert inner == [(False, backend._REENTERED, 0)]
    assert "such as cuda.py, in the script's folder" in inner[0][1]
    # the probe's own answer is the one kept, not the inner question's
    assert outer == [(False, "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)", 0)]
    assert backend.cuda_status() == outer[0] and not backend._probing


def test_a_script_beside_a_file_named_cuda_py_runs_and_is_told_why_there_is_no_cuda(tmp_path):
    """End to end: the script's folder comes first on sys.path, as with `python script.py`, so CuPy's `import cuda`
    finds the learner's cuda.py (which asks for a CUDA tensor); the script gets an answer, not a hang."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "cuda.py").write_text("import engine\nengine.randn(3, device='cuda')\n")
    (tmp_path / "train.py").write_text("import engine\nprint(engine.cuda.is_available())\n")
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, str(tmp_path / "train.py")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
