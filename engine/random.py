"""Random numbers: one generator for the CPU (NumPy's PCG64) and CuPy's per-device generators."""

from __future__ import annotations

import os
import threading

import numpy as np

from . import backend

_lock = threading.Lock()
# as PyTorch's: a fresh 64-bit seed per process until manual_seed(), and initial_seed() says which
_initial_seed = int.from_bytes(os.urandom(8), "little")
_cpu = np.random.Generator(np.random.PCG64(_initial_seed))


def manual_seed(seed: int):
    """Seed the CPU generator and, when CUDA is in use, every CUDA device's generator."""
    global _cpu, _initial_seed
    seed = int(seed)
    if seed < 0:
        raise RuntimeError(f"manual_seed: the seed must be non-negative, got {seed}")
    with _lock:
        _cpu = np.random.Generator(np.random.PCG64(seed))
        _initial_seed = seed
    if backend._cupy is not None:
        seed_cuda_all(seed)
    return _cpu


def initial_seed() -> int:
    """The seed the CPU generator started from: the last ``manual_seed``, or the process's own random seed."""
    return _initial_seed


def cpu_generator() -> np.random.Generator:
    return _cpu


def seed_cuda(seed: int, index: int | None = None) -> None:
    cupy = backend.get_cupy()
    with cupy.cuda.Device(backend.current_cuda_index() if index is None else index):
        cupy.random.seed(seed)


def seed_cuda_all(seed: int) -> None:
    cupy = backend.get_cupy()
    _, _, count = backend.cuda_status()
    for i in range(count):
        with cupy.cuda.Device(i):
            cupy.random.seed(seed)


def _float_dtype(np_dtype):
    return np_dtype if np_dtype in (np.float32, np.float64) else np.float64


def standard_normal(shape, np_dtype, dev):
    if dev.type == "cpu":
        out = _cpu.standard_normal(shape, dtype=_float_dtype(np_dtype))
        return out if out.dtype == np_dtype else out.astype(np_dtype)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        return cupy.random.standard_normal(shape, dtype=_float_dtype(np_dtype)).astype(np_dtype, copy=False)


def uniform(shape, np_dtype, dev, low=0.0, high=1.0):
    if dev.type == "cpu":
        out = _cpu.random(shape, dtype=_float_dtype(np_dtype))
        if low != 0.0 or high != 1.0:
            out = out * (high - low) + low
        return out.astype(np_dtype, copy=False)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        out = cupy.random.random(shape, dtype=_float_dtype(np_dtype))
        if low != 0.0 or high != 1.0:
            out = out * (high - low) + low
        return out.astype(np_dtype, copy=False)


def integers(low, high, shape, np_dtype, dev):
    if dev.type == "cpu":
        return _cpu.integers(low, high, size=shape, dtype=np_dtype)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        return cupy.random.randint(low, high, size=shape).astype(np_dtype, copy=False)


def normal_like(array, mean, std):
    dev = backend.device_of_array(array)
    return standard_normal(array.shape, array.dtype, dev) * std + mean


def uniform_like(array, a, b):
    dev = backend.device_of_array(array)
    return uniform(array.shape, array.dtype, dev, a, b)
