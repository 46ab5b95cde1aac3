"""Index checks on a GPU without waiting for it.

On the CPU an index out of range (a class target past the number of classes, an embedding row past the table, a
gather or take past the end) is refused at once: the indices are on the host. On a GPU reading them would make the
host wait for the device at every call, and CuPy does not refuse them: an integer-array index past either end
wraps round, so a wrong label would train silently on the wrong class. PyTorch's CUDA kernels assert on the device
and the error surfaces at the next point the host waits for the device. The engine does the same without a kernel
of its own: each check leaves a flag on the device (one small reduction, no host read), and the first check that
failed since the last read is raised at the next point the host waits for the device anyway: ``item()``,
``bool()``, ``tolist()``, a copy to the CPU, ``cuda.synchronize()``. Inside a CUDA graph capture the checks are
left out (a capture may not allocate what they keep).
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from . import backend as _backend
from .backend import capturing_here, xp_of

_lock = threading.Lock()
_first: dict = {}  # device id -> 0-d int32 device array: the code of the first failed check since the last read
_messages: dict = {}  # code -> (error type, message)
_codes = itertools.count(1)
_MAX_MESSAGES = 4096
_SUFFIX = (" (an index on the GPU, checked there and raised at the next point the host waited for the device, as "
           "PyTorch's device-side assert is)")


def check(bad, error: type, message: str) -> None:
    """Refuse with ``error(message)`` where any element of ``bad`` (a boolean array, True where an index is out
    of range) is True: at once for a NumPy array, at the next host read for a CuPy one."""
    if bad.__class__ is np.ndarray:
        if bad.any():
            raise error(message)
        return
    if capturing_here():
        return
    xp = xp_of(bad)
    failed = bad.any()
    device = bad.device.id
    with _lock:
        code = next(_codes)
        if len(_messages) >= _MAX_MESSAGES:  # (a run that never reads back: keep the memory bounded)
            _messages.clear()
        _messages[code] = (error, message)
        first = _first.get(device)
        with bad.device:
            if first is None:
                first = xp.zeros((), dtype=np.int32)
            _first[device] = xp.where((first == 0) & failed, np.int32(code), first)


def out_of_range(index, low: int, high: int):
    """``index < low | index >= high``: the elements of an index array outside ``[low, high)``."""
    return (index < low) | (index >= high)


def raise_pending() -> None:
    """Raise the first check that failed on a GPU since the last call (called where the host waits anyway)."""
    if not _first:
        return
    with _lock:
        pending = list(_first.values())
        messages = dict(_messages)
        _first.clear()
        _messages.clear()
    for first in pending:
        code = int(first.get())  # (4 bytes, at a point that waits for the device anyway)
        if code:
            error, message = messages.get(code, (RuntimeError, "an index was out of range"))
            raise error(message + _SUFFIX)


def check_index(index, shape) -> None:
    """The integer-array parts of a getitem/setitem index on a GPU, each against the size of the dimension it
    indexes (a bool mask, a slice, an int, None and Ellipsis are left as they are)."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [i for i in items if hasattr(i, "dtype") and i.dtype.kind in "iu" and i.__class__ is not np.ndarray]
    if not arrays:
        return
    used = sum(i.ndim if hasattr(i, "dtype") and i.dtype == np.bool_ else 1 for i in items
               if i is not None and i is not Ellipsis)
    dim = 0
    for i in items:
        if i is Ellipsis:
            dim += len(shape) - used
        elif hasattr(i, "dtype") and i.dtype == np.bool_:
            dim += i.ndim
        elif i is not None:
            if any(i is a for a in arrays) and dim < len(shape):
                size = shape[dim]
                check(out_of_range(i, -size, size), IndexError,
                      f"index out of range: an index tensor has an index outside [-{size}, {size - 1}] for "
                      f"dimension {dim} with size {size}")
            dim += 1


_backend.before_host_read = raise_pending
