"""A matrix product that a CUDA graph can capture: cuBLAS's GEMM, called directly.

CuPy refuses every cuBLAS call while a stream captures ("calling cuBLAS API during stream capture is currently
unsupported": its wrappers check before they set the handle's stream), although cuBLAS itself supports capture
(CUDA 12.2 and later allocate its workspace stream-ordered). So while :mod:`engine.cuda_graphs` captures, 2-D
products go through :func:`matmul`: the same libcublas that CuPy loaded, found in this process's memory map and
called through ctypes on a handle of our own, one per device and thread, in the default math mode (no TF32,
as CuPy and PyTorch by default).

Only called on a GPU; ``tests/fake_cupy.py`` stands in for it elsewhere.
"""

from __future__ import annotations

import ctypes
import threading
import weakref

import numpy as np

from . import _capture, backend
from .errors import shapes_error

_OP_N, _OP_T = 0, 1
_lib = None
_lib_lock = threading.Lock()
_handles = threading.local()
_checked: set = set()  # devices on which the product was checked against CuPy's


class CublasError(RuntimeError):
    pass


def _find_library():
    """The libcublas that CuPy uses: CuPy 14 loads it through cuda-pathfinder's ``load_nvidia_dynamic_lib``, which
    caches what it loaded, so asking it again hands back that same library (dlopen of a loaded path adds no
    copy). Where that loader is missing (CuPy built against a system CUDA), the libcublas already in this
    process's memory map, which CuPy's extension linked. Never a guess by soname: another copy of cuBLAS would
    have its own handles and state."""
    errors = []
    try:
        from cuda import pathfinder
    except ImportError as exc:
        errors.append(f"cuda-pathfinder: {exc}")
    else:
        try:
            loaded = pathfinder.load_nvidia_dynamic_lib("cublas")
            if loaded.abs_path:
                return ctypes.CDLL(loaded.abs_path)
            errors.append(f"cuda-pathfinder loaded cuBLAS but gave no path ({loaded.found_via})")
        except Exception as exc:  # DynamicLibNotFoundError and friends
            errors.append(f"cuda-pathfinder: {exc}")
    for path in _mapped("libcublas.so"):
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            errors.append(f"{path}: {exc}")
    raise CublasError("cuBLAS could not be loaded for a captured matrix product (" + "; ".join(errors) + ")")


def _mapped(prefix: str) -> list[str]:
    """Paths of the loaded libraries whose file name starts with ``prefix`` (from /proc/self/maps)."""
    found = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                path = line.rstrip().split(maxsplit=5)[-1]
                if path.rsplit("/", 1)[-1].startswith(prefix) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _library():
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is None:
                lib = _find_library()
                vp, i = ctypes.c_void_p, ctypes.c_int
                lib.cublasCreate_v2.argtypes = [ctypes.POINTER(vp)]
                lib.cublasDestroy_v2.argtypes = [vp]
                lib.cublasDestroy_v2.restype = i
                lib.cublasSetStream_v2.argtypes = [vp, vp]
                for name, scalar in (("cublasSgemm_v2", ctypes.c_float), ("cublasDgemm_v2", ctypes.c_double)):
                    fn = getattr(lib, name)
                    p = ctypes.POINTER(scalar)
                    fn.argtypes = [vp, i, i, i, i, i, p, vp, i, vp, i, p, vp, i]
                    fn.restype = i
                lib.cublasCreate_v2.restype = i
                lib.cublasSetStream_v2.restype = i
                _lib = lib
    return _lib


def _check(status: int, what: str) -> None:
    if status != 0:
        # CUBLAS_STATUS_ALLOC_FAILED (3) is reported as such: the runner counts it as out of memory
        names = {1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH",
                 13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED"}
        raise CublasError(f"{what} failed: CUBLAS_STATUS_{names.get(status, status)}")


class _ThreadHandles:
    """This thread's cuBLAS handles, one per device. When the thread ends, its ``threading.local`` lets go of this
    table and the finalizer queues the handles for destruction; cublasDestroy synchronises the device, so while
    any capture goes on they wait in ``_doomed`` for a later :func:`release_pending`."""

    def __init__(self, lib):
        self.by_device: dict = {}
        self.handles: list = []  # the finalizer holds this list, not the table
        weakref.finalize(self, _destroy_later, lib, self.handles)


def _destroy_later(lib, handles):
    _doomed.extend((lib, h) for h in handles)
    release_pending()


_doomed: list = []  # (lib, handle) waiting to be destroyed
_created = [0]
_destroyed = [0]


def release_pending() -> None:
    """Destroy the handles of threads that have ended, unless a capture goes on (then a later call does it)."""
    if _capture.count or not _doomed:
        return
    while _doomed:
        lib, handle = _doomed.pop()
        lib.cublasDestroy_v2(handle)  # a failure here has nothing to tell: the handle is gone either way
        _destroyed[0] += 1


def _handle(lib, device_id: int):
    table = getattr(_handles, "table", None)
    if table is None:
        table = _handles.table = _ThreadHandles(lib)
    handle = table.by_device.get(device_id)
    if handle is None:
        release_pending()
        handle = ctypes.c_void_p()
        _check(lib.cublasCreate_v2(ctypes.byref(handle)), "cublasCreate")
        _created[0] += 1
        table.by_device[device_id] = handle
        table.handles.append(handle)
    return handle


def release_thread() -> None:
    """Destroy this thread's handles now (a run's thread calls this as it ends)."""
    if getattr(_handles, "table", None) is not None:
        _handles.table = None  # the table's finalizer queues its handles
        release_pending()


def live_handles() -> int:
    """Handles made and not yet destroyed, in all threads."""
    return _created[0] - _destroyed[0]


def _operand(x):
    """(op, leading dimension, array) that gives x^T in cuBLAS's column-major terms."""
    rows, cols = x.shape
    item = x.itemsize
    s0, s1 = x.strides
    if (cols == 1 or s1 == item) and s0 % item == 0 and (rows == 1 or s0 // item >= cols):
        return _OP_N, max(1, s0 // item if rows > 1 else cols), x  # row-major: x^T column-major, as it lies
    if (rows == 1 or s0 == item) and s1 % item == 0 and (cols == 1 or s1 // item >= rows):
        return _OP_T, max(1, s1 // item if cols > 1 else rows), x  # column-major (a transposed view)
    x = backend.get_cupy().ascontiguousarray(x)
    return _OP_N, max(1, cols), x


def matmul(a, b):
    """``a @ b`` for 2-D CuPy arrays of float32 or float64, into a new array, on the current stream."""
    cupy = backend.get_cupy()
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise shapes_error(a, b)
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"a captured matrix product needs float32 or float64 operands, not {dtype}")
    if a.dtype != dtype:
        a = a.astype(dtype)
    if b.dtype != dtype:
        b = b.astype(dtype)
    out = cupy.empty((m, n), dtype=dtype)
    if m == 0 or n == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    lib = _library()
    handle = _handle(lib, a.device.id)
    _check(lib.cublasSetStream_v2(handle, ctypes.c_void_p(cupy.cuda.get_current_stream().ptr)), "cublasSetStream")
    op_a, lda, a = _operand(a)
    op_b, ldb, b = _operand(b)
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    gemm = lib.cublasSgemm_v2 if dtype == np.float32 else lib.cublasDgemm_v2
    one, zero = scalar(1), scalar(0)
    # row-major out (m x n) is column-major out^T (n x m) = b^T (n x k) @ a^T (k x m)
    _check(gemm(handle, op_b, op_a, n, m, k, ctypes.byref(one), ctypes.c_void_p(b.data.ptr), ldb,
                ctypes.c_void_p(a.data.ptr), lda, ctypes.byref(zero), ctypes.c_void_p(out.data.ptr), n),
           "cublasGemm")
    return out


def prepare() -> None:
    """Before a capture (nothing here may be captured): load cuBLAS, make this thread's handle for the current
    device, and once per device check the product against CuPy's on every operand layout, so that a wrong
    product is refused rather than replayed."""
    cupy = backend.get_cupy()
    device_id = cupy.cuda.Device().id
    if _lib is None:
        # one product through CuPy first: CuPy then has its libcublas loaded, and _find_library takes that one
        # from the memory map rather than whichever libcublas the loader would find by name
        one = cupy.ones((1, 1), dtype=cupy.float32)
        one @ one
    _handle(_library(), device_id)
    if device_id in _checked:
        return
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        a_host = rng.standard_normal((5, 64)).astype(dtype)
        b_host = rng.standard_normal((64, 4)).astype(dtype)
        a, b = cupy.asarray(a_host), cupy.asarray(b_host)
        expected = (a @ b).get()
        bound = product_error_bound(a_host, b_host)
        for x in (a, cupy.asfortranarray(a)):
            for y in (b, cupy.asfortranarray(b)):
                got = matmul(x, y).get()
                if got.shape != expected.shape or not np.all(np.abs(got - expected) <= bound):
                    raise CublasError(f"the direct cuBLAS product disagrees with CuPy's ({np.dtype(dtype).name}, "
                                      f"{'C' if x.flags.c_contiguous else 'F'}/"
                                      f"{'C' if y.flags.c_contiguous else 'F'} operands)")
    _checked.add(device_id)


def product_error_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise bound on the difference of two float products of ``a @ b`` summed in different orders:
    2·k·eps·(|a| @ |b|) (each within k·eps·(|a|@|b|) of the exact one, the classic bound for a dot product of
    length k). Two correct GEMM kernels (split-k, blocking, FMA) differ by rounding, never by more."""
    eps = np.finfo(np.result_type(a.dtype, b.dtype)).eps
    k = a.shape[1]
    return 2 * k * eps * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
