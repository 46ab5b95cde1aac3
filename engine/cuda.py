"""``engine.cuda``: PyTorch's ``torch.cuda`` helpers over CuPy.

Without CuPy, without a driver or without a device, ``is_available()`` is False and ``device_count()`` is
0; the calls that need a device raise one :class:`~engine.backend.CudaUnavailableError` naming what is
missing (``unavailable_reason()`` gives the same text).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from . import _capture, _memory, backend
from . import random as _random
from .backend import CudaUnavailableError
from .cuda_graphs import CUDAGraph, GraphCaptureError, graph, is_current_stream_capturing
from .legacy import CUDA_TYPES

__all__ = [
    "is_available", "unavailable_reason", "device_count", "current_device", "set_device", "device",
    "get_device_capability", "get_device_name", "get_device_properties", "synchronize", "empty_cache",
    "memory_allocated", "memory_reserved", "max_memory_allocated", "reset_peak_memory_stats", "mem_get_info",
    "manual_seed", "manual_seed_all", "runtime_versions", "CudaUnavailableError", "CUDAGraph", "graph",
    "GraphCaptureError", "is_current_stream_capturing", "release_thread_resources",
    "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
    "BoolTensor", "is_bf16_supported", "amp", "OutOfMemoryError",
]

# ``except torch.cuda.OutOfMemoryError:`` in one's own script: the engine's out-of-memory errors are MemoryErrors
# (CuPy's OutOfMemoryError is one, and NumPy's), so this name catches them all; PyTorch's class is its own (a
# RuntimeError), which the engine does not raise.
OutOfMemoryError = MemoryError

FloatTensor = CUDA_TYPES["FloatTensor"]
DoubleTensor = CUDA_TYPES["DoubleTensor"]
HalfTensor = CUDA_TYPES["HalfTensor"]
LongTensor = CUDA_TYPES["LongTensor"]
IntTensor = CUDA_TYPES["IntTensor"]
ShortTensor = CUDA_TYPES["ShortTensor"]
CharTensor = CUDA_TYPES["CharTensor"]
ByteTensor = CUDA_TYPES["ByteTensor"]
BoolTensor = CUDA_TYPES["BoolTensor"]


def is_available() -> bool:
    return backend.cuda_status()[0]


def unavailable_reason() -> str:
    """Why CUDA cannot be used here ('' when it can)."""
    return backend.cuda_status()[1]


def device_count() -> int:
    available, _, count = backend.cuda_status()
    return count if available else 0


def _index(dev) -> int:
    if dev is None:
        backend.get_cupy()
        return backend.current_cuda_index()
    if isinstance(dev, int):
        resolved = backend.resolve(f"cuda:{dev}")
    else:
        resolved = backend.resolve(dev if not isinstance(dev, str) or dev.startswith("cuda") else dev)
    if resolved.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {resolved}")
    return resolved.index


def current_device() -> int:
    backend.get_cupy()
    return backend.current_cuda_index()


def set_device(dev) -> None:
    """Select the current CUDA device of this thread."""
    index = _index(dev)
    backend.set_current_cuda_index(index)
    backend.get_cupy().cuda.Device(index).use()


class device:
    """Context manager that selects a CUDA device for its block, in this thread."""

    def __init__(self, dev):
        self.index = _index(dev)

    def __enter__(self):
        self.prev = backend.current_cuda_index()
        set_device(self.index)
        return self

    def __exit__(self, *exc):
        set_device(self.prev)
        return False


@dataclass(frozen=True)
class DeviceProperties:
    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int
    index: int

    def __repr__(self):
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, multi_processor_count="
            f"{self.multi_processor_count})"
        )


def get_device_properties(dev=None) -> DeviceProperties:
    index = _index(dev)
    props = backend.get_cupy().cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    return DeviceProperties(
        name=name,
        major=int(props["major"]),
        minor=int(props["minor"]),
        total_memory=int(props["totalGlobalMem"]),
        multi_processor_count=int(props["multiProcessorCount"]),
        index=index,
    )


def get_device_name(dev=None) -> str:
    return get_device_properties(dev).name


def get_device_capability(dev=None) -> tuple[int, int]:
    p = get_device_properties(dev)
    return p.major, p.minor


def synchronize(dev=None) -> None:
    """Wait for the device's work to finish. While another thread captures a CUDA graph this waits for that
    capture to end first (a device synchronisation would break it); inside a capture it raises."""
    cupy = backend.get_cupy()
    index = _index(dev)
    _capture.wait_until_idle("engine.cuda.synchronize()")
    with cupy.cuda.Device(index):
        cupy.cuda.runtime.deviceSynchronize()
    from . import _deferred

    _deferred.raise_pending()  # (an index check that failed on the device)


def memory_allocated(dev=None) -> int:
    """Bytes held by live arrays on this device: CuPy's default pool and the live CUDA graphs' own pools."""
    return _memory.in_use(_index(dev))


def memory_reserved(dev=None) -> int:
    """Bytes the pools hold from the driver, in use or cached."""
    index = _index(dev)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(index):  # CuPy's pool answers for the current device: ask while this one is current
        total = int(cupy.get_default_memory_pool().total_bytes())
    return total + _memory.pools_total_bytes(index)


def max_memory_allocated(dev=None) -> int:
    """The most bytes in use on the device since the last :func:`reset_peak_memory_stats` (noted at every
    allocation). Tracking starts with the first call of either: before that, the peak is today's use."""
    return _memory.peak(_index(dev))


def reset_peak_memory_stats(dev=None) -> None:
    """Start the peak of :func:`max_memory_allocated` again from the bytes in use now."""
    _memory.reset_peak(_index(dev))


def empty_cache() -> None:
    """Give the pool's cached, unused blocks back to the driver (a no-op without CUDA, as in PyTorch). A live
    CUDA graph's pool keeps its blocks: its replays write to them (``CUDAGraph.reset()`` frees them). While a
    graph is being captured (in any thread) it does nothing: freeing device memory would break the capture."""
    if not is_available() or _capture.count:
        return
    cupy = backend.get_cupy()
    _memory.sweep()
    for i in range(device_count()):
        with cupy.cuda.Device(i):
            cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()


def release_thread_resources() -> None:
    """Give back what this thread holds on the GPU: its cuBLAS handles (and their workspaces) for the capturable
    product. A thread that ends gives them back by itself; a run calls this as it finishes."""
    from . import _cublas

    _cublas.release_thread()


def mem_get_info(dev=None) -> tuple[int, int]:
    """(free, total) bytes of the device, as the driver sees them."""
    cupy = backend.get_cupy()
    with cupy.cuda.Device(_index(dev)):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


def runtime_versions() -> dict:
    """Driver and runtime versions as 'major.minor' strings."""
    cupy = backend.get_cupy()

    def text(v):
        return f"{v // 1000}.{(v % 1000) // 10}"

    return {
        "driver": text(cupy.cuda.runtime.driverGetVersion()),
        "runtime": text(cupy.cuda.runtime.runtimeGetVersion()),
        "cupy": cupy.__version__,
    }


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator (silently ignored without CUDA, as in PyTorch)."""
    if is_available():
        _random.seed_cuda(int(seed))


def manual_seed_all(seed: int) -> None:
    if is_available():
        _random.seed_cuda_all(int(seed))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, whatever the GPU can do: the engine has no bfloat16 (NumPy and CuPy have none). A script that
    picks its dtype by asking (nanoGPT: bfloat16 if supported, else float16) so picks one the engine has."""
    return False


class _GradScaler:
    """``torch.cuda.amp.GradScaler(...)``: ``engine.amp.GradScaler('cuda', ...)``."""

    def __new__(cls, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        from .amp import GradScaler

        return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def _autocast(enabled=True, dtype=None, cache_enabled=True):
    """``torch.cuda.amp.autocast(...)``: ``engine.amp.autocast('cuda', ...)``."""
    from .amp import autocast

    return autocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


amp = SimpleNamespace(GradScaler=_GradScaler, autocast=_autocast)  # the older spelling, torch.cuda.amp.*
