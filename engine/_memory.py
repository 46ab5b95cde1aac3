"""Device memory the engine holds: CuPy's default pool, the CUDA graphs' own pools, and the peak.

Graphs register their private pools here (``register_pool``); a reset graph's pool is retired and kept while
arrays made in its capture still live (a CuPy pool that dies frees the blocks it lent), and ``sweep`` lets go of
the ones nothing uses any more.

The peak (``engine.cuda.max_memory_allocated``) is tracked at each allocation.

CuPy's pools count the bytes in use but keep no peak. Sampling ``used_bytes()`` now and then misses the short
peaks inside a step (the backward's temporaries), so the peak is taken where memory use can only rise: after
each allocation, through an allocator wrapped around the pool (CuPy's ``set_allocator``; a CUDA graph's own pool
gets the same wrapper). The wrapper is a Python call per allocation (a few microseconds), so it is installed only
once a peak is asked for: by ``reset_peak_memory_stats()`` or the first ``max_memory_allocated()``.
"""

from __future__ import annotations

import threading

from . import _capture, backend

_lock = threading.Lock()
_live: dict[int, tuple[int, object]] = {}  # id(pool) -> (device index, pool) of the graphs that hold one
_retired: list = []  # (device index, pool) of reset graphs, kept while arrays made in their capture live
_peaks: dict[int, int] = {}
_tracking = [False]


def tracking() -> bool:
    return _tracking[0]


def register_pool(device_index: int, pool) -> None:
    _live[id(pool)] = (device_index, pool)


def retire_pool(device_index: int, pool) -> None:
    _live.pop(id(pool), None)
    _retired.append((device_index, pool))


def sweep() -> None:
    """Let go of the retired pools that no array uses any more (engine.cuda.empty_cache calls this too). Does
    nothing while a capture goes on: freeing device memory then would break it."""
    if _capture.count:
        return
    keep = []
    for device_index, pool in _retired:
        if pool.used_bytes():
            keep.append((device_index, pool))
        else:
            pool.free_all_blocks()
    _retired[:] = keep


def _pools(device_index: int):
    return [pool for d, pool in list(_live.values()) + _retired if d == device_index]


def pools_used_bytes(device_index: int) -> int:
    """Bytes in use in the graphs' own pools on a device."""
    return sum(int(pool.used_bytes()) for pool in _pools(device_index))


def pools_total_bytes(device_index: int) -> int:
    return sum(int(pool.total_bytes()) for pool in _pools(device_index))


def in_use(device_index: int) -> int:
    """Bytes held by live arrays on a device: CuPy's default pool and the live CUDA graphs' own pools."""
    cupy = backend.get_cupy()
    with cupy.cuda.Device(device_index):
        used = int(cupy.get_default_memory_pool().used_bytes())
    return used + pools_used_bytes(device_index)


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
