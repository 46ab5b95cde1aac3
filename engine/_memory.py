"""Peak device memory, tracked at each allocation (``engine.cuda.max_memory_allocated``).

CuPy's pools count the bytes in use but keep no peak. Sampling ``used_bytes()`` now and then misses the short
peaks inside a step (the backward's temporaries), so the peak is taken where memory use can only rise: after
each allocation, through an allocator wrapped around the pool (CuPy's ``set_allocator``; a CUDA graph's own pool
gets the same wrapper). The wrapper is a Python call per allocation (a few microseconds), so it is installed only
once a peak is asked for: by ``reset_peak_memory_stats()`` or the first ``max_memory_allocated()``.
"""

from __future__ import annotations

import threading

from . import backend

_lock = threading.Lock()
_peaks: dict[int, int] = {}
_tracking = [False]


def tracking() -> bool:
    return _tracking[0]


def in_use(device_index: int) -> int:
    """Bytes held by live arrays on a device: CuPy's default pool and the live CUDA graphs' own pools."""
    from . import graphs

    cupy = backend.get_cupy()
    with cupy.cuda.Device(device_index):
        used = int(cupy.get_default_memory_pool().used_bytes())
    return used + graphs.pools_used_bytes(device_index)


def _note(device_index: int) -> None:
    used = in_use(device_index)
    if used > _peaks.get(device_index, 0):
        with _lock:
            if used > _peaks.get(device_index, 0):
                _peaks[device_index] = used


def allocator_of(pool):
    """``pool.malloc``, or (while peaks are tracked) a malloc that notes the device's peak after allocating."""
    if not _tracking[0]:
        return pool.malloc

    def malloc(size):
        mem = pool.malloc(size)
        _note(mem.device_id)
        return mem

    return malloc


def start_tracking() -> None:
    """Wrap the default pool's allocator (once per process)."""
    if _tracking[0]:
        return
    cupy = backend.get_cupy()
    with _lock:
        if _tracking[0]:
            return
        _tracking[0] = True
    cupy.cuda.set_allocator(allocator_of(cupy.get_default_memory_pool()))


def peak(device_index: int) -> int:
    start_tracking()
    _note(device_index)
    return _peaks[device_index]


def reset_peak(device_index: int) -> None:
    start_tracking()
    with _lock:
        _peaks[device_index] = in_use(device_index)
