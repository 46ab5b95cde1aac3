"""Devices, the array module (``xp``) of each, and the guarded CuPy import.

CuPy is imported lazily, the first time anything asks about CUDA, and never by ``import engine``.
When a CUDA device is asked for and cannot be had, one error says which part is missing: the
CuPy package, the NVIDIA driver, or a device.
"""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np

from . import _capture
from .dtypes import real_part_for

__all__ = [
    "CudaUnavailableError",
    "device",
    "cuda_status",
    "get_cupy",
    "xp_of",
    "is_cupy_array",
    "device_of_array",
    "array_module",
    "to_device_array",
    "to_host",
    "fill",
]


class CudaUnavailableError(RuntimeError):
    """A CUDA device was asked for and this machine cannot give one; the message says why."""


class CaptureTransferError(RuntimeError):
    """A copy between host and device inside a CUDA-graph capture (which cannot hold one); says which way."""


# Whether this thread captures a CUDA graph: copies to or from the host then refuse with a message that says
# which way, rather than CUDA's "operation not permitted when stream is capturing".
capturing_here = _capture.here


# --------------------------------------------------------------------------- the guarded CuPy import

# re-entrant: importing CuPy runs other modules' code, and one of them may ask again (see cuda_status)
_status_lock = threading.RLock()
_status: tuple[bool, str, int] | None = None  # (available, reason when not, device count)
_probing = False  # the probe is under way (in the thread that holds _status_lock)
_REENTERED = ("the engine was asked for CUDA while it was importing CuPy to find out: a module imported on the "
              "way called it (a file of your own named like one CuPy imports, such as cuda.py, in the script's "
              "folder, is found first)")
_cupy = None


_INSTALL_HINT = ("install the project's CUDA extra for this driver: pip install -e '.[cuda12]' or '.[cuda13]' "
                 "(`make setup` picks the one that matches nvidia-smi's CUDA version)")
import_warnings: list[str] = []  # what CuPy warned at import (kept, not raised: a warning is not a failure)


def _probe() -> tuple[bool, str, int]:
    global _cupy
    if os.environ.get("ENGINE_DISABLE_CUDA"):
        return False, "CUDA is disabled by the ENGINE_DISABLE_CUDA environment variable", 0
    # outside any warnings filter: under `-W error` a warning at import (two CuPy wheels installed, a missing
    # CUDA path) would otherwise make the import fail and every later question answer "no CUDA" silently
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import cupy
        except ImportError as exc:
            if getattr(exc, "name", None) == "cupy" or "No module named 'cupy'" in str(exc):
                if not _driver_present():  # no GPU to use: installing CuPy would not help
                    return False, "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded), so no GPU to use", 0
                return False, f"CuPy is not installed ({_INSTALL_HINT})", 0
            return False, f"CuPy is installed but failed to import: {exc}", 0
        except Exception as exc:  # a broken CuPy install raises all sorts of things at import
            return False, f"CuPy is installed but failed to import: {type(exc).__name__}: {exc}", 0
    import_warnings[:] = [f"{w.category.__name__}: {w.message}" for w in caught]
    if not _driver_present():
        return False, "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)", 0
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        text = str(exc)
        if "NoDevice" in text or "no CUDA-capable device" in text:
            return False, "no CUDA device found (the NVIDIA driver reports none)", 0
        if "InsufficientDriver" in text:
            return False, (f"the NVIDIA driver is older than the CUDA runtime CuPy {cupy.__version__} was built for "
                           f"({text.strip()}): update the driver or install the CuPy wheel for its CUDA version"), 0
        return False, f"no usable NVIDIA driver ({text.strip() or type(exc).__name__})", 0
    if count == 0:
        return False, "no CUDA device found (the NVIDIA driver reports none)", 0
    problem = check_device_works(cupy)
    if problem:
        return False, problem, 0
    _cupy = cupy
    return True, "", count


def _driver_present() -> bool:
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def check_device_works(cupy) -> str:
    """'' when device 0 runs a kernel and a matrix product with the right results; else what failed, by name (a
    CuPy wheel whose CUDA libraries are missing fails here, at start, not at the first training step)."""
    try:
        with cupy.cuda.Device(0):
            a = cupy.arange(4, dtype=cupy.float32)
            total = float((a * 2 + 1).sum())  # an elementwise kernel (compiled by NVRTC) and a reduction
    except Exception as exc:
        return f"the GPU cannot run a CuPy kernel (CUDA runtime or NVRTC): {type(exc).__name__}: {exc}"
    if total != 16.0:
        return f"the GPU ran a CuPy kernel with a wrong result ({total} instead of 16.0)"
    try:
        with cupy.cuda.Device(0):
            p = cupy.ones((2, 3), dtype=cupy.float32) @ cupy.full((3, 2), 2, dtype=cupy.float32)
            got = p.get()
    except Exception as exc:
        return f"the GPU cannot run a matrix product (cuBLAS): {type(exc).__name__}: {exc}"
    if not np.array_equal(got, np.full((2, 2), 6, np.float32)):
        return "the GPU ran a matrix product (cuBLAS) with a wrong result"
    return ""


def cuda_status() -> tuple[bool, str, int]:
    """``(available, reason, device_count)``; probed once per process."""
    global _status, _probing
    if _status is None:
        with _status_lock:
            if _status is None:
                if _probing:  # asked again from inside the probe, in its own thread: waiting would never end
                    return False, _REENTERED, 0
                _probing = True
                try:
                    _status = _probe()
                finally:
                    _probing = False
    return _status


def _reset_cuda_status(status: tuple[bool, str, int] | None = None, cupy_module=None) -> None:
    """Forget (or replace) the probe's answer. For tests that simulate machines."""
    global _status, _cupy
    _status = status
    _cupy = cupy_module


def get_cupy():
    """The cupy module, or :class:`CudaUnavailableError` naming what is missing."""
    available, reason, _ = cuda_status()
    if not available:
        raise CudaUnavailableError(f"CUDA is not available: {reason}")
    return _cupy


# --------------------------------------------------------------------------- devices


class device:
    """A place where tensors live: ``device('cpu')``, ``device('cuda')``, ``device('cuda:1')``,
    ``device('cuda', 1)``. Like PyTorch, ``cuda`` without an index means the current CUDA device."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's parameter name
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'cuda:0', got {type!r}")
        text = type.strip()
        kind, sep, number = text.partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type!r}"
            )
        if sep:
            if index is not None:
                raise RuntimeError(f"device string {type!r} already has an index; do not pass index={index}")
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: {type!r} (the index must be a whole number)")
            index = int(number)
        if index is not None:
            if not isinstance(index, int) or index < 0:
                raise RuntimeError(f"Device index must not be negative, got {index!r}")
            if kind == "cpu" and index != 0:
                raise RuntimeError(f"There is one CPU device; index {index} is not valid")
        self.type = kind
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")
_cuda_devices: dict[int, device] = {}

# The current CUDA device is per thread, as in PyTorch (the app's worker selects its own).
_thread = threading.local()


def current_cuda_index() -> int:
    return getattr(_thread, "cuda_index", 0)


def set_current_cuda_index(index: int) -> None:
    _thread.cuda_index = index


def cuda_device(index: int) -> device:
    dev = _cuda_devices.get(index)
    if dev is None:
        dev = _cuda_devices[index] = device("cuda", index)
    return dev


def resolve(dev) -> device:
    """A concrete device (CUDA with its index) for a device-like value; checks that it exists."""
    if dev is None:
        return CPU
    if not isinstance(dev, device):
        dev = device(dev)
    if dev.type == "cpu":
        return CPU
    _, _, count = cuda_status()
    get_cupy()
    index = current_cuda_index() if dev.index is None else dev.index
    if index >= count:
        plural = "device" if count == 1 else "devices"
        have = ", ".join(f"cuda:{i}" for i in range(count))
        raise CudaUnavailableError(
            f"CUDA device cuda:{index} is not there: this machine has {count} CUDA {plural} ({have})"
        )
    return cuda_device(index)


def set_default_device(dev) -> None:
    """Where factory functions (``tensor`` of host data, ``zeros``, ``randn``, ``linspace``, ``nn.Linear``'s
    parameters, ...) put a tensor when no ``device=`` is given, in this thread (as PyTorch's, which is a
    per-thread function mode); None goes back to the CPU. A CUDA device that is not usable is refused now."""
    _thread.default_device = None if dev is None else resolve(dev)


def get_default_device() -> device:
    return getattr(_thread, "default_device", None) or CPU


def target(dev) -> device:
    """The device a factory function makes its tensor on: ``dev``, else the default device."""
    if dev is None:
        return getattr(_thread, "default_device", None) or CPU
    return resolve(dev)


# --------------------------------------------------------------------------- arrays and their modules


def is_cupy_array(array) -> bool:
    return _cupy is not None and isinstance(array, _cupy.ndarray)


def xp_of(array):
    """numpy or cupy, whichever owns ``array`` (the ``xp`` idiom)."""
    if isinstance(array, np.ndarray) or _cupy is None:
        return np
    return _cupy if isinstance(array, _cupy.ndarray) else np


def device_of_array(array) -> device:
    if isinstance(array, np.ndarray) or _cupy is None or not isinstance(array, _cupy.ndarray):
        return CPU
    return cuda_device(array.device.id)


def array_module(dev: device):
    return np if dev.type == "cpu" else get_cupy()


def to_device_array(array, dev: device, dtype=None, copy: bool = False):
    """``array`` (NumPy, CuPy or anything array-like) on device ``dev``, optionally cast (a complex one to a real
    dtype by its real part, with PyTorch's warning)."""
    if dtype is not None and getattr(array, "dtype", None) is not None:
        array = real_part_for(array, dtype)
    if dev.type == "cpu":
        if _cupy is not None and isinstance(array, _cupy.ndarray):
            array = to_host(array)
            copy = False
        if copy:
            return np.array(array, dtype=dtype, copy=True)
        return np.asarray(array, dtype=dtype)
    cupy = get_cupy()
    if not isinstance(array, cupy.ndarray) and capturing_here():
        raise CaptureTransferError(f"it copies host data to the GPU (a {type(array).__name__} made into a CUDA "
                                   "array): make such tensors before the capture")
    if isinstance(array, cupy.ndarray) and array.device.id != dev.index:
        copy = True  # asarray would hand back the array on its old device
    with cupy.cuda.Device(dev.index):
        if copy:
            return cupy.array(array, dtype=dtype, copy=True)
        return cupy.asarray(array, dtype=dtype)


before_host_read = None  # set by engine/_deferred.py: called before a value is read back from a GPU


def to_host(array) -> np.ndarray:
    """A NumPy array with ``array``'s values (copied off the GPU when it lives there)."""
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        if capturing_here():
            raise CaptureTransferError("it reads a value back to the host (a copy from the GPU)")
        if before_host_read is not None:
            before_host_read()  # (engine/_deferred.py: an index check that failed on the device since the last read)
        return array.get()
    return np.asarray(array)


# the dtypes CuPy 14.2's add.at adds by atomicAdd where its index has an integer array; it refuses the others
# ("cupy.add.at only supports int32, int64, float16, float32, float64, uint32, uint64 as data type":
# cupy/_core/_routines_indexing.pyx, _scatter_op_single), complex among them
_CUPY_ATOMIC_ADD = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.float16, np.float32, np.float64, np.uint32,
                                                    np.uint64))


def add_at(out, where, values) -> None:
    """``out[where] += values``, a place named twice taking both (NumPy's ``add.at``), on either device. CuPy's
    ``add.at`` with an integer-array index adds by atomicAdd, which only some dtypes have: a complex array's real
    and imaginary parts are added as the real array of its parts (a view of it), and a bool or a small integer
    array (int8, int16, uint8, uint16) through an int64 copy (wrapping as the additions would; bool as "or")."""
    if out.__class__ is np.ndarray:
        np.add.at(out, where, values)
        return
    cupy = xp_of(out)
    if out.dtype in _CUPY_ATOMIC_ADD:
        cupy.add.at(out, where, values)
        return
    if out.dtype.kind == "c":
        shape = out[where].shape
        values = cupy.ascontiguousarray(cupy.broadcast_to(cupy.asarray(values, dtype=out.dtype), shape))
        values = values.reshape(shape)  # (CuPy's ascontiguousarray gives a 0-dimensional array a dimension)
        if isinstance(where, tuple) and any(w is Ellipsis for w in where):
            where = where + (slice(None),)  # (the parts' own dimension, after the ones the index names)
        cupy.add.at(complex_parts(out), where, complex_parts(values))
        return
    wide = out.astype(np.int64)
    cupy.add.at(wide, where, cupy.asarray(values).astype(np.int64))
    out[...] = (wide != 0) if out.dtype == np.bool_ else wide.astype(out.dtype)


def running(op: str, x, axis: int):
    """The running maximum or minimum of ``x`` along ``axis`` (NumPy's ``maximum.accumulate``; ``op`` "maximum"
    or "minimum"), a NaN carried on as there, on either device. CuPy 14.2's ufuncs accumulate for add and multiply
    only (``cupy.maximum.accumulate`` raises NotImplementedError: cupy/_core/_kernel.pyx): on a GPU it is a scan of
    doubling steps (Hillis and Steele), each a whole-array ``maximum`` of the array and itself shifted along
    ``axis``: ceil(log2 n) kernels, the same numbers, since a maximum is exact whatever the order."""
    if x.__class__ is np.ndarray:
        return getattr(np, op).accumulate(x, axis=axis)
    cupy = xp_of(x)
    ufunc = getattr(cupy, op)
    out = x.copy()
    n = x.shape[axis]
    step = 1
    while step < n:
        later = (slice(None),) * axis + (slice(step, None),)
        earlier = (slice(None),) * axis + (slice(None, n - step),)
        out[later] = ufunc(out[later], out[earlier])  # (the right side is a new array before it is written)
        step *= 2
    return out


def unravel(places, shape):
    """The coordinates of flat ``places`` in an array of ``shape``, one array per dimension (NumPy's
    ``unravel_index``), on either device. CuPy's ``unravel_index`` checks the places on the host first (two reads
    back, cupy/_indexing/generate.py); places made from the array's own positions need no check."""
    if places.__class__ is np.ndarray:
        return np.unravel_index(places, shape)
    coords = []
    for n in reversed(shape):
        coords.append(places % n if n else places)
        places = places // n if n else places
    return tuple(reversed(coords))


def complex_parts(x):
    """A complex array's real and imaginary parts as a real array of one more dimension, of size 2 (a view of its
    memory; strided where the array is strided along its last dimension)."""
    real = np.dtype(x.dtype.char.lower())
    if x.ndim == 0:
        return x.reshape(1).view(real)
    if x.strides[-1] == x.itemsize or x.shape[-1] <= 1:
        return x.view(real).reshape(x.shape + (2,))
    parts = x.real  # (strided along its last dimension: the same memory, the parts' own strides)
    return xp_of(x).lib.stride_tricks.as_strided(parts, shape=x.shape + (2,),
                                                 strides=parts.strides + (x.itemsize // 2,))


def fill(out, value):
    """``out`` with every element set to ``value`` (a number, or a 0-d array on ``out``'s device); returns ``out``.

    For a 0-d CuPy array this is ``cupy.copyto``: CuPy's ``fill`` (14.1 and later) compares the value with 0 on the
    host first, a synchronisation on every call that a CUDA-graph capture refuses."""
    if out.__class__ is np.ndarray or not is_cupy_array(value):
        out.fill(value)
    else:
        _cupy.copyto(out, value)
    return out
