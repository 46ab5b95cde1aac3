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


class Generator:
    """A random-number generator of its own (NumPy's PCG64), as ``torch.Generator``: ``generator=`` of ``randn``,
    ``rand``, ``randint``, ``randperm``, ``normal``, ``random_split`` and ``DataLoader`` draws from it and leaves the
    global generator (``manual_seed``) alone, so one stream (a dataset's split) does not move another (the
    weights' start). CPU only: a CUDA tensor's draws come from its device's generator (``engine.cuda.manual_seed``)."""

    def __init__(self, device="cpu"):
        dev = device if isinstance(device, backend.device) else backend.device(device)
        if dev.type != "cpu":
            raise RuntimeError("engine.Generator makes CPU generators only; a CUDA device's generator is seeded with "
                               "engine.cuda.manual_seed")
        self.device = dev
        self.manual_seed(int.from_bytes(os.urandom(8), "little"))

    def manual_seed(self, seed) -> Generator:
        seed = int(seed)
        if seed < 0:
            raise RuntimeError(f"manual_seed: the seed must be non-negative, got {seed}")
        self._seed = seed
        self._np = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        """Seeds it from the operating system's randomness; returns the seed."""
        seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def __repr__(self):
        return f"<engine.Generator object at {id(self):#x}>"


def _cpu_source(generator, dev):
    """The NumPy generator to draw from on ``dev``: the given Generator's, the global one, or None (a GPU's)."""
    if generator is None:
        return _cpu if dev.type == "cpu" else None
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an engine.Generator, not {type(generator).__name__}")
    if dev.type != "cpu":
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found 'cpu'")
    return generator._np


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


def standard_normal(shape, np_dtype, dev, generator=None):
    source = _cpu_source(generator, dev)
    if source is not None:
        out = source.standard_normal(shape, dtype=_float_dtype(np_dtype))
        return out if out.dtype == np_dtype else out.astype(np_dtype)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        return cupy.random.standard_normal(shape, dtype=_float_dtype(np_dtype)).astype(np_dtype, copy=False)


def uniform(shape, np_dtype, dev, low=0.0, high=1.0, generator=None):
    source = _cpu_source(generator, dev)
    if source is not None:
        out = source.random(shape, dtype=_float_dtype(np_dtype))
        if low != 0.0 or high != 1.0:
            out = out * (high - low) + low
        return out.astype(np_dtype, copy=False)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        out = cupy.random.random(shape, dtype=_float_dtype(np_dtype))
        if low != 0.0 or high != 1.0:
            out = out * (high - low) + low
        return out.astype(np_dtype, copy=False)


def integers(low, high, shape, np_dtype, dev, generator=None):
    source = _cpu_source(generator, dev)
    if source is not None:
        return source.integers(low, high, size=shape, dtype=np_dtype)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        return cupy.random.randint(low, high, size=shape).astype(np_dtype, copy=False)


def permutation(n: int, generator=None) -> np.ndarray:
    """A random order of ``range(n)`` on the host, from ``generator`` or the global CPU generator."""
    return _cpu_source(generator, backend.CPU).permutation(n)


def normal_like(array, mean, std, generator=None):
    dev = backend.device_of_array(array)
    return standard_normal(array.shape, array.dtype, dev, generator) * std + mean


def uniform_like(array, a, b, generator=None):
    dev = backend.device_of_array(array)
    return uniform(array.shape, array.dtype, dev, a, b, generator)
