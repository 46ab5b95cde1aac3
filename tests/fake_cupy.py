"""A stand-in for CuPy 14.2, for exercising the engine's CUDA code paths on a machine without a GPU.

It serves only what real CuPy serves: every module function, ``ndarray`` attribute and ``cuda`` name here exists
in CuPy 14.2 (``tests/engine/test_fake_cupy_contract.py`` checks this against the installed CuPy wheel, which
imports on a machine without a GPU), keyword arguments are checked against CuPy's signatures, and anything else
raises AttributeError or TypeError as CuPy would. There is no pass-through to NumPy.

Its arrays wrap NumPy arrays but are a type of their own: they carry ``.device``, copy to the host with
``.get()``, refuse to mix with NumPy arrays in one operation (CuPy's TypeError) and refuse implicit conversion.
What CuPy does and NumPy does not, where it changes what the engine does, is modelled:

* **Host synchronisations are counted** (:data:`syncs`): ``get``, ``item``, ``tolist``, ``tobytes``, ``nonzero``,
  ``bool``/``float``/``int`` of a device array, boolean-mask indexing and assignment (CuPy counts the mask on the
  host), device and stream synchronisation, and ``fill`` with a 0-d device array (CuPy 14.1+ evaluates
  ``value == 0`` on the host: the code below is CuPy's own). ``cupyx.allow_synchronize(False)`` makes them raise
  ``cupyx.DeviceSynchronized`` in that thread, as CuPy does for the ones it detects.
* **Stream capture** has a real graph's semantics: while the current stream captures, an operation is recorded,
  not run. An in-place one (``out=``, ``fill``, ``x[i] = v``) leaves its target as it was; a new array comes back
  with NaN in it (on a GPU its memory holds whatever was there), and the graph's replay computes it into that same
  buffer. A host synchronisation or a host-to-device copy in the capturing thread invalidates the capture, as CUDA
  does; a device synchronisation from any thread does too; cuBLAS and cuRAND calls raise CuPy's refusal.
  :func:`capture_matmul` stands for the engine's own capturable product.
* **The current device and the current stream are per thread**, as in CuPy.
* **Memory** comes from pools: each new buffer is taken from the thread's allocator (``using_allocator``, else
  ``set_allocator``'s, else the default pool), rounded up to 512 bytes, and given back when the last array on it
  dies. ``MemoryPool.used_bytes()`` reads the current device's figure, as CuPy's does.
* ``ElementwiseKernel`` runs its C expression with NumPy, so the engine's fused kernels run here too.

It says nothing about speed or real-GPU numerics: only the ``gpu``-marked tests and ``make gpu-check`` do.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math
import re
import sys
import threading
import types
import warnings
import weakref

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

VERSION = "14.2.0"
DEVICE_COUNT = 2
_ROUND = 512  # CuPy's pools hand out blocks in multiples of 512 bytes

_local = threading.local()  # per thread: device, stream stack, allocator stack, allow_synchronize
# the one capture going on in the process (CUDA allows more; the engine makes one at a time)
_capture = {"ops": None, "invalid": None, "stream": None}
syncs: list[str] = []  # every host synchronisation, in order (tests read and clear it)
h2d_copies: list[str] = []  # host-to-device copies
_global_allocator: list = [None]


class CUDARuntimeError(RuntimeError):
    pass


class DeviceSynchronized(RuntimeError):
    def __init__(self, message=None):
        super().__init__(message or "Device synchronization was detected while disallowed.")


# ----------------------------------------------------------------------------- per-thread state

def _current_device() -> int:
    return getattr(_local, "device", 0)


def _set_device(index: int) -> None:
    _local.device = index


def _stream_stack() -> list:
    stack = getattr(_local, "streams", None)
    if stack is None:
        stack = _local.streams = []
    return stack


def _current_stream():
    stack = _stream_stack()
    return stack[-1] if stack else Stream.null


def capturing() -> bool:
    """Whether this thread's current stream is capturing."""
    return _capture["ops"] is not None and _capture["stream"] is _current_stream()


def _refuse(what: str):
    """An operation a capture cannot hold: CUDA invalidates the capture and the call fails."""
    _capture["invalid"] = what
    raise CUDARuntimeError(f"cudaErrorStreamCaptureUnsupported: {what}: operation not permitted when stream is "
                           "capturing")


def _sync(what: str) -> None:
    """A host synchronisation: refused while capturing, refused under allow_synchronize(False), else counted."""
    if capturing():
        _refuse(what)
    if not getattr(_local, "allow_sync", True):
        raise DeviceSynchronized()
    syncs.append(what)


def _refuse_cublas():
    raise NotImplementedError("calling cuBLAS API during stream capture is currently unsupported")


def _record(thunk):
    _capture["ops"].append(thunk)


def _record_new(result: np.ndarray, recompute):
    """A new array made while capturing: not computed yet (NaN here); replays compute it into this buffer."""
    if result.dtype.kind in "fc" and result.flags.writeable:
        result[...] = np.nan
    _record(lambda: np.copyto(result, recompute(), casting="unsafe"))


def _is_view(result, *sources) -> bool:
    return any(isinstance(s, np.ndarray) and np.shares_memory(result, s) for s in sources)


def _has_mask(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, np.ndarray) and i.dtype == bool for i in items)


def _cupy_index(index, shape):
    """``index`` as CuPy reads it: an integer array past either end of its dimension wraps round (CuPy's documented
    difference from NumPy, which raises IndexError); a plain int past the end is still refused (on the host)."""
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(np.asarray(i) if isinstance(i, list) else i for i in items)
    if not any(isinstance(i, np.ndarray) and i.dtype.kind in "iu" for i in items):
        return index
    used = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1 for i in items
               if i is not None and i is not Ellipsis)
    out, dim = [], 0
    for i in items:
        if i is Ellipsis:
            dim += len(shape) - used
        elif isinstance(i, np.ndarray) and i.dtype == bool:
            dim += i.ndim
        elif i is not None:
            if isinstance(i, np.ndarray) and i.dtype.kind in "iu" and dim < len(shape) and shape[dim] > 0:
                i = i % shape[dim]
            dim += 1
        out.append(i)
    return tuple(out) if isinstance(index, tuple) else out[0]


# ----------------------------------------------------------------------------- memory

class MemoryPointer:
    """A block of a pool (CuPy's ``cupy.cuda.MemoryPointer``: ``ptr``, ``device_id``, ``size``)."""

    _next = itertools.count(0x7F0000000000, _ROUND)

    def __init__(self, pool, device_id, size):
        self.pool, self.device_id, self.size = pool, device_id, size
        self.ptr = next(MemoryPointer._next) if size else 0


class MemoryPool:
    """Counts bytes in use and cached per device; ``used_bytes()`` and friends read the current device's."""

    def __init__(self, allocator=None):
        self._used: dict[int, int] = {}
        self._cached: dict[int, int] = {}
        self._lock = threading.Lock()
        self.frees = 0

    def malloc(self, size):
        size = -(-int(size) // _ROUND) * _ROUND
        device = _current_device()
        with self._lock:
            reuse = min(self._cached.get(device, 0), size)
            self._cached[device] = self._cached.get(device, 0) - reuse
            self._used[device] = self._used.get(device, 0) + size
        return MemoryPointer(self, device, size)

    def _free(self, device, size):
        with self._lock:
            self._used[device] -= size
            self._cached[device] = self._cached.get(device, 0) + size

    def used_bytes(self):
        return self._used.get(_current_device(), 0)

    def free_bytes(self):
        return self._cached.get(_current_device(), 0)

    def total_bytes(self):
        return self.used_bytes() + self.free_bytes()

    def free_all_blocks(self, stream=None):
        if _capture["ops"] is not None:
            _refuse("cudaFree")  # freeing device memory breaks a capture in any thread
        with self._lock:
            self._cached[_current_device()] = 0
        self.frees += 1

    def n_free_blocks(self):
        return 1 if self.free_bytes() else 0


_default_pool = MemoryPool()
_pinned_pool = MemoryPool()
_owners: dict[int, weakref.ref] = {}  # id(root numpy buffer) -> ref, for the buffers given memory


def _allocator():
    stack = getattr(_local, "allocators", None)
    if stack:
        return stack[-1]
    return _global_allocator[0] or _default_pool.malloc


def _give_memory(array: np.ndarray):
    """Take memory for a new buffer from the thread's allocator; give it back when the buffer dies."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    key = id(root)
    ref = _owners.get(key)
    if ref is not None and ref() is root:
        return _mems.get(key)
    mem = _allocator()(max(root.nbytes, 1))
    _owners[key] = weakref.ref(root)
    _mems[key] = mem

    def release(key=key, mem=mem):
        _owners.pop(key, None)
        _mems.pop(key, None)
        if isinstance(mem.pool, MemoryPool):
            mem.pool._free(mem.device_id, mem.size)

    weakref.finalize(root, release)
    return mem


_mems: dict[int, MemoryPointer] = {}
_root_arrays: dict[int, weakref.ref] = {}  # id(root numpy buffer) -> the fake ndarray that owns it, while it lives


def _base_of(wrapper, array: np.ndarray):
    """What ``wrapper.base`` is (see ndarray.base): None where ``array`` owns its buffer (the wrapper is then the
    buffer's owner), else the owner, made if it has died meanwhile."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    key = id(root)
    if root is array:
        ref = _root_arrays[key] = weakref.ref(wrapper, lambda ref, key=key: _root_arrays.get(key) is ref
                                              and _root_arrays.pop(key))
        return None
    ref = _root_arrays.get(key)
    owner = ref() if ref is not None else None
    if owner is None or owner._a is not root:
        owner = ndarray(root, wrapper._device_id)
    return owner


class Flags:
    """CuPy's ``ndarray.flags``: these three and nothing else (no ``writeable``: CuPy has no read-only arrays)."""

    def __init__(self, array: np.ndarray):
        self.c_contiguous = bool(array.flags.c_contiguous)
        self.f_contiguous = bool(array.flags.f_contiguous)
        self.owndata = array.base is None

    @property
    def fnc(self):
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self):
        return self.f_contiguous or self.c_contiguous

    def __getitem__(self, name):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous, "OWNDATA": self.owndata}[name]


# ----------------------------------------------------------------------------- devices

class Device:
    def __init__(self, device=None):
        self.id = _current_device() if device is None else int(device)

    def use(self):
        _set_device(self.id)
        return self

    def synchronize(self):
        _device_synchronize()

    @property
    def compute_capability(self):
        return "90"

    def __enter__(self):
        prev = getattr(self, "_prev", [])
        prev.append(_current_device())
        self._prev = prev
        _set_device(self.id)
        return self

    def __exit__(self, *exc):
        _set_device(self._prev.pop())
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


def _unwrap(value, strict=True):
    if isinstance(value, ndarray):
        return value._a
    if strict and isinstance(value, np.ndarray) and value.ndim > 0:
        raise TypeError(f"Unsupported type {type(value)}")  # CuPy's words for a NumPy operand
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, strict) for v in value)
    return value


def _wrap(value, device_id=None):
    if isinstance(value, np.ndarray):
        return ndarray(value, device_id)
    if isinstance(value, np.generic):
        return ndarray(np.asarray(value), device_id)
    if isinstance(value, tuple):
        return tuple(_wrap(v, device_id) for v in value)
    if isinstance(value, list):
        return [_wrap(v, device_id) for v in value]
    return value


# ndarray methods served, each present in CuPy 14.2's cupy.ndarray (checked by the contract test), that compute
# without a host synchronisation; the ones that synchronise are written out below
_METHODS = ("all", "any", "argmax", "argmin", "clip", "copy", "cumprod", "cumsum", "diagonal", "dot", "flatten",
            "max", "mean", "min", "prod", "ravel", "repeat", "reshape", "round", "squeeze", "std", "sum", "swapaxes",
            "take", "trace", "transpose", "var", "view", "conj", "conjugate")
_PROPERTIES = ("shape", "dtype", "ndim", "size", "nbytes", "itemsize", "strides")


class ndarray(NDArrayOperatorsMixin):  # noqa: N801 - CuPy's name
    __array_priority__ = 100

    def __init__(self, array, device_id=None):
        self._a = array
        self._device_id = _current_device() if device_id is None else device_id
        self._mem = _give_memory(array)
        self._base = _base_of(self, array)

    # what makes it CuPy-like
    @property
    def device(self):
        return Device(self._device_id)

    @property
    def flags(self):
        return Flags(self._a)

    @property
    def base(self):
        """CuPy's: None for an array that owns its memory; for a view (of a view), the one array object that owns
        it, the same object each time and for every view of it, which the view keeps alive (CuPy's ``_view`` sets
        ``v.base = self.base if self.base is not None else self``)."""
        return self._base

    @property
    def data(self):
        mem = self._mem
        offset = 0
        if self._a.size:
            root = self._a
            while isinstance(root.base, np.ndarray):
                root = root.base
            offset = self._a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return types.SimpleNamespace(ptr=(mem.ptr if mem else 0) + offset, mem=mem, device_id=self._device_id)

    @property
    def T(self):  # noqa: N802
        return ndarray(self._a.T, self._device_id)

    @property
    def mT(self):  # noqa: N802
        return ndarray(np.swapaxes(self._a, -1, -2), self._device_id)

    # CuPy's real and imag: views of a complex array's parts (a real array's real is the array), writable
    @property
    def real(self):
        return ndarray(self._a.real, self._device_id)

    @real.setter
    def real(self, value):
        raw = _unwrap(value)
        self._in_place(lambda: setattr(self._a, "real", raw))

    @property
    def imag(self):
        if self._a.dtype.kind != "c":  # (CuPy's is a new array of zeros, not a view)
            return ndarray(np.zeros_like(self._a), self._device_id)
        return ndarray(self._a.imag, self._device_id)

    @imag.setter
    def imag(self, value):
        if self._a.dtype.kind != "c":
            raise TypeError("cupy.ndarray does not have imaginary part to set")
        raw = _unwrap(value)
        self._in_place(lambda: setattr(self._a, "imag", raw))

    def get(self, stream=None, order="C", out=None, blocking=True):
        _sync("ndarray.get()")
        return self._a.copy()

    def item(self):
        _sync("ndarray.item()")
        return self._a.item()

    def tolist(self):
        _sync("ndarray.tolist()")
        return self._a.tolist()

    def tobytes(self, order="C"):
        _sync("ndarray.tobytes()")
        return self._a.tobytes(order)

    def nonzero(self):
        _sync("ndarray.nonzero()")  # CuPy counts the non-zeros on the host to size the result
        return _wrap(self._a.nonzero(), self._device_id)

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if capturing():
            return self._captured_call("astype", self._a.astype, (dtype,), {"copy": copy})
        return _wrap(self._a.astype(dtype, copy=copy), self._device_id)

    def fill(self, value):
        """CuPy 14.2's ``ndarray.fill``, line for line: a device scalar is compared with 0 on the host."""
        if isinstance(value, ndarray):
            if value.shape != ():
                raise ValueError("non-scalar cupy.ndarray cannot be used for fill")
            value = value.astype(self.dtype, copy=False)
        else:
            value = np.asarray(value, dtype=self.dtype)
            if value.shape != ():
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            value = value[()]
        if value == 0 and self.flags.c_contiguous:  # bool() of a device array: a host synchronisation
            self._in_place(lambda: self._a.fill(0))
        else:
            raw = _unwrap(value)
            self._in_place(lambda: self._a.fill(raw))

    def _in_place(self, thunk):
        if capturing():
            _record(thunk)
        else:
            thunk()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
                        "a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or set(kwargs) - {"out", "dtype", "casting"}:
            raise TypeError(f"cupy ufunc {ufunc.__name__}: method {method!r} or arguments {sorted(kwargs)} are "
                            "not supported by CuPy")
        ids = {x._device_id for x in inputs if isinstance(x, ndarray)}
        args = [_unwrap(x) for x in inputs]
        outs = kwargs.get("out")
        if outs is not None:
            kwargs["out"] = tuple(_unwrap(o) for o in outs)
        if capturing():
            if ufunc is np.matmul:
                _refuse_cublas()
            if outs is not None:  # in place: recorded, not run
                _record(lambda: _quiet(ufunc, *args, **kwargs))
                return outs[0] if len(outs) == 1 else outs
            wrapped = _wrap(_quiet(ufunc, *args, **kwargs), next(iter(ids)) if ids else None)
            _record_new(wrapped._a, lambda: _quiet(ufunc, *args, **kwargs))
            return wrapped
        result = _quiet(ufunc, *args, **kwargs)
        if outs is not None:
            return outs[0] if len(outs) == 1 else outs
        return _wrap(result, next(iter(ids)) if ids else None)

    def __getattr__(self, name):
        if name in _PROPERTIES:
            return getattr(self._a, name)
        if name in _METHODS:
            attr = getattr(self._a, name)

            def method(*args, **kwargs):
                args, kwargs = _unwrap(args), {k: _unwrap(v) for k, v in kwargs.items()}
                if capturing():
                    return self._captured_call(name, attr, args, kwargs)
                result = attr(*args, **kwargs)
                if name == "diagonal" and self._a.flags.writeable:
                    result.flags.writeable = True  # CuPy's diagonal is a view that can be written; NumPy's is not
                return _wrap(result, self._device_id)

            method.__name__ = name
            return method
        raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")

    def _captured_call(self, name, attr, args, kwargs):
        if name == "dot":
            _refuse_cublas()
        result = attr(*args, **kwargs)
        if not isinstance(result, (np.ndarray, np.generic)):
            return result
        wrapped = _wrap(result, self._device_id)
        if not _is_view(wrapped._a, self._a):
            _record_new(wrapped._a, lambda: attr(*args, **kwargs))
        return wrapped

    def __getitem__(self, index):
        index = _cupy_index(_unwrap(index), self._a.shape)
        if _has_mask(index):
            _sync("boolean-mask indexing")  # CuPy counts the mask's True values on the host
        if capturing():
            wrapped = _wrap(self._a[index], self._device_id)
            if not _is_view(wrapped._a, self._a):
                _record_new(wrapped._a, lambda: self._a[index])
            return wrapped
        return _wrap(self._a[index], self._device_id)

    def __setitem__(self, index, value):
        index, value = _cupy_index(_unwrap(index), self._a.shape), _unwrap(value)
        if _has_mask(index):
            _sync("boolean-mask assignment")
        self._in_place(lambda: self._a.__setitem__(index, value))

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(v, self._device_id) for v in self._a)

    def __bool__(self):
        _sync("bool(ndarray)")
        return bool(self._a)

    def __float__(self):
        _sync("float(ndarray)")
        return float(self._a)

    def __int__(self):
        _sync("int(ndarray)")
        return int(self._a)

    def __index__(self):
        _sync("operator.index(ndarray)")
        return self._a.__index__()

    def __repr__(self):
        _sync("repr(ndarray)")
        return repr(self._a)


# ----------------------------------------------------------------------------- streams, graphs

def _device_synchronize():
    if _capture["ops"] is not None:  # waits for every stream of the device, a capturing one too
        _refuse("cudaDeviceSynchronize")
    if not getattr(_local, "allow_sync", True):
        raise DeviceSynchronized()
    syncs.append("cudaDeviceSynchronize")


class Graph:
    """What a capture recorded; ``launch`` runs it again, in order, on the same buffers."""

    def __init__(self, ops):
        self._ops = ops
        self.launches = 0

    def launch(self, stream=None):
        if capturing():
            _refuse("a graph launch")
        for op in self._ops:
            op()
        self.launches += 1

    def upload(self, stream=None):
        pass

    def __len__(self):
        return len(self._ops)


class Event:
    """cupy.cuda.Event: ``record`` notes where the stream is; here it notes the host clock (the stand-in runs each
    op when it is called, so the host time between two records is the time the ops between them took).
    ``synchronize`` is a host synchronisation, counted as one."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.disable_timing = disable_timing
        self._t = None

    def record(self, stream=None):
        import time

        self._t = time.perf_counter()

    def synchronize(self):
        if not getattr(_local, "allow_sync", True):
            raise DeviceSynchronized()
        syncs.append("cudaEventSynchronize")

    @property
    def done(self):
        return self._t is not None


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events (CuPy raises when either was never recorded or cannot time)."""
    if start_event._t is None or end_event._t is None:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    if start_event.disable_timing or end_event.disable_timing:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    return (end_event._t - start_event._t) * 1e3


class Stream:
    null = None

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=0):
        self.ptr = 0 if null else id(self)
        self.non_blocking = non_blocking

    def __enter__(self):
        _stream_stack().append(self)
        return self

    def __exit__(self, *exc):
        _stream_stack().pop()
        return False

    def use(self):
        stack = _stream_stack()
        stack[:] = [self]
        return self

    def synchronize(self):
        if _capture["stream"] is self or capturing():
            _refuse("cudaStreamSynchronize")
        if not getattr(_local, "allow_sync", True):
            raise DeviceSynchronized()
        syncs.append("cudaStreamSynchronize")

    def begin_capture(self, mode=None):
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if _capture["ops"] is not None:
            raise CUDARuntimeError("cudaErrorIllegalState: a stream is capturing already")
        _capture.update(ops=[], invalid=None, stream=self)

    def end_capture(self):
        if _capture["stream"] is not self:
            raise CUDARuntimeError("cudaErrorIllegalState: this stream is not capturing")
        ops, invalid = _capture["ops"], _capture["invalid"]
        _capture.update(ops=None, invalid=None, stream=None)
        if invalid:
            raise CUDARuntimeError(f"cudaErrorStreamCaptureInvalidated: the capture was invalidated by {invalid}")
        return Graph(ops)

    def is_capturing(self):
        return _capture["stream"] is self


Stream.null = Stream(null=True)


@contextlib.contextmanager
def using_allocator(allocator=None):
    stack = getattr(_local, "allocators", None)
    if stack is None:
        stack = _local.allocators = []
    stack.append(allocator)
    try:
        yield
    finally:
        stack.pop()


def set_allocator(allocator=None):
    _global_allocator[0] = allocator


def get_allocator():
    return _global_allocator[0] or _default_pool.malloc


@contextlib.contextmanager
def allow_synchronize(allow):
    old = getattr(_local, "allow_sync", True)
    _local.allow_sync = allow
    try:
        yield
    finally:
        _local.allow_sync = old


# ----------------------------------------------------------------------------- ElementwiseKernel

_TYPE_RE = re.compile(r"\(\s*([A-Za-z_]\w*)\s*\)\s*\(")
_CAST_LITERAL_RE = re.compile(r"\(\s*([A-Za-z_]\w*)\s*\)\s*([0-9][0-9.eE+-]*)")


def _python_expression(expr: str) -> str:
    """A kernel body's C expression as Python: casts as calls, and a top-level ``c ? a : b`` as a where."""
    expr = _CAST_LITERAL_RE.sub(r"_cast_\1(\2)", expr)
    expr = _TYPE_RE.sub(r"_cast_\1(", expr)
    depth, question = 0, None
    for i, ch in enumerate(expr):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "?" and depth == 0:
            if question is not None:
                raise NotImplementedError(f"the stand-in's ElementwiseKernel runs one conditional, not {expr!r}")
            question = i
    if question is None:
        return expr
    condition, _, sides = expr[:question], None, expr[question + 1:]
    depth, colon = 0, None
    for i, ch in enumerate(sides):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ":" and depth == 0:
            colon = i
            break
    if colon is None:
        raise NotImplementedError(f"a conditional without its ':' in {expr!r}")
    return f"_where({condition.strip()}, {sides[:colon].strip()}, {sides[colon + 1:].strip()})"


class ElementwiseKernel:
    """CuPy's ``ElementwiseKernel`` for one-statement bodies: ``"T a, T b", "T out", "out = a * (T)(b >= 0)"``.
    The C expression runs with NumPy arrays of the parameters' dtype; ``(T)(x)`` casts to T (``(T)0``, a literal,
    too), and one C conditional ``c ? a : b`` at the top of the expression picks elementwise, as NumPy's where
    (C evaluates one side per element; both sides here are plain values, so the result is the same)."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, loop_prep="", after_loop="", options=()):
        def params(text):
            out = []
            for p in filter(None, (s.strip() for s in text.split(","))):
                kind, pname = p.split()
                out.append((kind, pname))
            return out

        self.in_params, self.out_params = params(in_params), params(out_params)
        if len(self.out_params) != 1:
            raise NotImplementedError("the stand-in's ElementwiseKernel takes one output")
        target, _, expr = operation.strip().rstrip(";").partition("=")
        if target.strip() != self.out_params[0][1] or ";" in expr:
            raise NotImplementedError(f"the stand-in's ElementwiseKernel runs one assignment, not {operation!r}")
        self.name = name
        self._code = compile(_python_expression(expr.strip()), f"<kernel {name}>", "eval")

    def __call__(self, *args):
        if len(args) != len(self.in_params):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        types_ = {}
        env = {}
        device_ids = {a._device_id for a in args if isinstance(a, ndarray)}
        if not device_ids:
            raise TypeError("ElementwiseKernel: no cupy.ndarray argument")
        for (kind, pname), arg in zip(self.in_params, args):
            if isinstance(arg, np.ndarray):
                raise TypeError(f"Unsupported type {type(arg)}")
            value = arg._a if isinstance(arg, ndarray) else arg
            if kind in types_ and isinstance(arg, ndarray) and types_[kind] != arg.dtype:
                raise TypeError(f"Type is mismatched. {pname} {arg.dtype} {types_[kind]}")
            if isinstance(arg, ndarray):
                types_.setdefault(kind, arg.dtype)
            env[pname] = value
        for kind, dtype in types_.items():
            env[f"_cast_{kind}"] = (lambda d: lambda x: np.asarray(x).astype(d))(dtype)
        env["_where"] = np.where
        # CUDA's math functions, overloaded for float and double: here NumPy's, and libm's erf (NumPy has none)
        env.update(exp=np.exp, tanh=np.tanh, erf=np.vectorize(math.erf, otypes=[np.float64]))
        out_kind = self.out_params[0][0]
        out_dtype = types_.get(out_kind, np.dtype(out_kind) if out_kind in np.sctypeDict else None)
        code = self._code

        def compute():
            with np.errstate(all="ignore"):
                return np.asarray(eval(code, {"__builtins__": {}}, dict(env))).astype(out_dtype)  # noqa: S307

        result = ndarray(compute(), device_ids.pop())
        if capturing():
            _record_new(result._a, compute)
        return result


# ----------------------------------------------------------------------------- helpers for tests

def active() -> bool:
    """Whether the engine's CuPy is this stand-in (and not a real GPU's)."""
    from engine import backend

    return getattr(backend.get_cupy(), "_is_fake", False)


def assert_same_numbers(got, expected, rtol=1e-12):
    """Captured against uncaptured: equal on the stand-in (the same NumPy calls), within ``rtol`` on a GPU
    (float64's bar for other cuBLAS kernels)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if active():
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)


@contextlib.contextmanager
def count_syncs():
    """``with count_syncs() as seen:`` gives the list of host synchronisations made in the block."""
    start = len(syncs)
    seen: list[str] = []
    try:
        yield seen
    finally:
        seen.extend(syncs[start:])


def capture_matmul(a, b):
    """Stands for the engine's capturable cuBLAS product (engine/_cublas.py): ``out = a @ b`` into a new array,
    recorded while capturing."""
    out = ndarray(np.empty((a.shape[0], b.shape[1]), dtype=np.result_type(a._a.dtype, b._a.dtype)), a._device_id)
    A, B, O = a._a, b._a, out._a  # noqa: N806
    if capturing():
        O[...] = np.nan
        _record(lambda: np.dot(A, B, out=O))
    else:
        np.dot(A, B, out=O)
    return out


# ----------------------------------------------------------------------------- the module

# Keyword arguments of CuPy 14.2's functions (the contract test compares this table with the installed CuPy);
# None: a ufunc, which takes out=, dtype= and casting=.
SIGNATURES = {
    "zeros": ("shape", "dtype", "order"), "ones": ("shape", "dtype", "order"), "empty": ("shape", "dtype", "order"),
    "full": ("shape", "fill_value", "dtype", "order"),
    "zeros_like": ("a", "dtype", "order", "subok", "shape"), "ones_like": ("a", "dtype", "order", "subok", "shape"),
    "empty_like": ("prototype", "dtype", "order", "subok", "shape"),
    "full_like": ("a", "fill_value", "dtype", "order", "subok", "shape"),
    "arange": ("start", "stop", "step", "dtype"),
    "linspace": ("start", "stop", "num", "endpoint", "retstep", "dtype", "axis"),
    "eye": ("N", "M", "k", "dtype", "order"),
    "stack": ("tup", "axis", "out", "dtype", "casting"),
    "concatenate": ("tup", "axis", "out", "dtype", "casting"),
    "split": ("ary", "indices_or_sections", "axis"),
    "where": ("condition", "x", "y"),
    "clip": ("a", "a_min", "a_max", "out"),
    "broadcast_to": ("array", "shape"), "broadcast_arrays": ("args",),
    "expand_dims": ("a", "axis"),
    "swapaxes": ("a", "axis1", "axis2"),
    "moveaxis": ("a", "source", "destination"),
    "take_along_axis": ("a", "indices", "axis"),
    "argsort": ("a", "axis", "kind"),
    "allclose": ("a", "b", "rtol", "atol", "equal_nan"),
    "sum": ("a", "axis", "dtype", "out", "keepdims"),
    "mean": ("a", "axis", "dtype", "out", "keepdims"),
    "argmax": ("a", "axis", "dtype", "out", "keepdims"),
    "argmin": ("a", "axis", "dtype", "out", "keepdims"),
    "ascontiguousarray": ("a", "dtype"), "asfortranarray": ("a", "dtype"),
    "asarray": ("a", "dtype", "order", "copy", "blocking"),
    "array": ("obj", "dtype", "copy", "order", "subok", "ndmin", "blocking"),
    "copyto": ("dst", "src", "casting", "where"),
    "nonzero": ("a",),
    "maximum": None, "minimum": None, "exp": None, "log": None, "sqrt": None, "tanh": None, "sign": None,
    "abs": None, "isnan": None, "isfinite": None, "add": None, "subtract": None, "multiply": None,
    "true_divide": None, "power": None, "square": None, "sin": None, "cos": None, "negative": None,
    "greater_equal": None, "less": None, "floor": None, "ceil": None, "trunc": None,
    "round": ("a", "decimals", "out"),
    "prod": ("a", "axis", "dtype", "out", "keepdims"), "cumprod": ("a", "axis", "dtype", "out"),
    "flip": ("a", "axis"), "roll": ("a", "shift", "axis"), "take": ("a", "indices", "axis", "out"),
    "log1p": None, "expm1": None, "log2": None, "log10": None, "exp2": None, "tan": None, "sinh": None, "cosh": None,
    "arcsin": None, "arccos": None, "arctan": None, "arcsinh": None, "arccosh": None, "arctanh": None,
    "arctan2": None, "hypot": None, "logaddexp": None, "remainder": None, "fmod": None, "signbit": None,
    "fmax": None, "fmin": None, "conj": None, "conjugate": None, "angle": ("z", "deg"), "real": ("val",),
    "imag": ("val",),
    "gcd": None, "lcm": None, "ldexp": None, "frexp": None, "nextafter": None, "isinf": None, "isposinf": ("x", "out"),
    "isneginf": ("x", "out"),
    "unique": ("ar", "return_index", "return_inverse", "return_counts", "axis", "equal_nan"),
    "bincount": ("x", "weights", "minlength"), "repeat": ("a", "repeats", "axis"), "tile": ("A", "reps"),
    "searchsorted": ("a", "v", "side", "sorter"),
    "isin": ("element", "test_elements", "assume_unique", "invert"),
    "sort": ("a", "axis", "kind"), "cumsum": ("a", "axis", "dtype", "out"),
    "diff": ("a", "n", "axis", "prepend", "append"),
    "histogram": ("x", "bins", "range", "density", "weights"),
    "unravel_index": ("indices", "dims", "order"), "broadcast_shapes": ("args",),
    "matmul": ("args", "axes", "axis", "keepdims", "casting", "dtype", "signature", "order", "out"),
    "floor_divide": None, "copysign": None,
}
# what CuPy reads back to the host to size its output: a synchronisation each call
_SIZED_ON_THE_HOST = {"nonzero", "unique", "bincount"}
# what checks its input on the host first: unravel_index reads (indices < 0).any() and (indices > 0).any() back
# (cupy/_indexing/generate.py)
_CHECKED_ON_THE_HOST = {"unravel_index"}
# CuPy's sort and argsort know one kind (cupy/_core/core.pyx, _check_kind_sort)
_SORTS = {"sort", "argsort"}
# may hand back views of an input
_VIEWS = {"broadcast_to", "broadcast_arrays", "expand_dims", "swapaxes", "moveaxis", "split", "flip"}
_UFUNC_KWARGS = {"out", "dtype", "casting"}


# the dtypes whose atomicAdd CuPy 14.2 has: cupy.add.at with an integer-array index refuses the others
# (cupy/_core/_routines_indexing.pyx, _scatter_op_single: complex, int8, int16, uint8, uint16 and bool among them)
_ADD_AT_DTYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.float16, np.float32, np.float64, np.uint32,
                                                  np.uint64))


def _add_at(a, indices, b=None):
    """cupy.add.at (CuPy's ufunc.at): atomic adds on the device, no host sync; recorded while capturing. As CuPy
    14.2's: an index with an integer array adds by atomicAdd, which a few dtypes have (the values are cast to the
    array's dtype first, so it is the array's that counts); a mask or plain slices add elementwise, any dtype."""
    index = _unwrap(indices)
    items = index if isinstance(index, tuple) else (index,)
    advanced = any(isinstance(i, list) or (isinstance(i, np.ndarray) and i.dtype.kind in "iu") for i in items)
    if advanced and a._a.dtype not in _ADD_AT_DTYPES:
        raise TypeError("cupy.add.at only supports int32, int64, float16, float32, float64, uint32, uint64 as data "
                        "type")
    raw = (a._a, _cupy_index(index, a._a.shape), _unwrap(b, strict=False))
    if capturing():
        _record(lambda: np.add.at(*raw))
    else:
        np.add.at(*raw)


def _add_reduceat(array, indices, axis=0, dtype=None, out=None):
    """cupy.add.reduceat (CuPy's ufunc.reduceat, its parameters): the sums of the runs starting at ``indices``."""
    raw = (array._a, _unwrap(indices))

    def compute():
        return np.add.reduceat(*raw, axis=axis, dtype=dtype)

    result = ndarray(compute(), array._device_id)
    if capturing():
        _record_new(result._a, compute)
    if out is not None:
        out._a[...] = result._a
        return out
    return result


class ufunc:  # noqa: N801 - CuPy's name
    """A CuPy ufunc: called as NumPy's (the stand-in's ``call``), with CuPy 14.2's methods and their limits
    (cupy/_core/_kernel.pyx): ``reduce`` and ``accumulate`` for add and multiply only (the sum and product
    kernels), ``reduceat`` for add only, ``at`` for the ufuncs with a scatter kernel, ``outer`` for all. NumPy's
    ``np.maximum.accumulate`` has no CuPy counterpart: ``cupy.maximum.accumulate`` raises NotImplementedError."""

    # the ufuncs whose ``at`` has a scatter kernel in CuPy 14.2 (_routines_indexing.pyx, _scatter_op_single)
    _SCATTER = {"add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor"}

    _ALIASES = {"abs": "absolute", "conj": "conjugate"}  # (CuPy's own names: cupy.abs is cupy_absolute)

    def __init__(self, name, call):
        np_ufunc = getattr(np, name)
        self.name = f"cupy_{self._ALIASES.get(name, name)}"
        self.nin, self.nout, self.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs
        self._call = call
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __repr__(self):
        return f"<ufunc '{self.name}'>"

    def _refuse(self, method):
        raise NotImplementedError(f"`{self.name}.{method}` is not supported yet")

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        if self.name == "cupy_add":
            return array.sum(axis, dtype, out, keepdims)
        if self.name == "cupy_multiply":
            return array.prod(axis, dtype, out, keepdims)
        self._refuse("reduce")

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if self.name == "cupy_add":
            return array.cumsum(axis, dtype, out)
        if self.name == "cupy_multiply":
            return array.cumprod(axis, dtype, out)
        self._refuse("accumulate")

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        if self.name == "cupy_add":
            return _add_reduceat(array, indices, axis, dtype, out)
        self._refuse("reduceat")

    def at(self, a, indices, b=None):
        if self.name == "cupy_add":
            return _add_at(a, indices, b)
        if self.__name__ in self._SCATTER:  # (CuPy has these; the engine does not call them, nor models them)
            raise NotImplementedError(f"the CuPy stand-in does not model {self.name}.at")
        self._refuse("at")

    def outer(self, A, B, **kwargs):  # noqa: N803 - CuPy's names
        A = A if isinstance(A, ndarray) else ndarray(np.array(A))  # (core.array: a copy to the device)
        B = B if isinstance(B, ndarray) else ndarray(np.array(B))
        return self(A.reshape(A.shape + (1,) * B.ndim), B.reshape((1,) * A.ndim + B.shape), **kwargs)


def _histogram(x, bins=10, range=None, density=False, weights=None):  # noqa: A002 - CuPy's name
    """cupy.histogram (cupy/_statistics/histogram.py at v14.2.0): NumPy's bins and counts, CuPy's refusals,
    dtypes and host reads: no complex data, x and weights CuPy arrays, a bool x as uint8 (with CuPy's warning);
    the counts int64, weighted sums complex128, int64 or float64 whatever the weights' width; bin edges given as
    an array checked for order on the host, and a range taken from the data read back to the host."""
    if x.dtype.kind == "c":
        raise NotImplementedError("complex number is not supported")
    if not isinstance(x, ndarray):
        raise ValueError("x must be a cupy.ndarray")
    data = x._a
    if data.dtype == np.bool_:
        warnings.warn(f"Converting input from {data.dtype} to {np.dtype(np.uint8)} for compatibility.",
                      RuntimeWarning, stacklevel=2)
        data = data.astype(np.uint8)
    if weights is not None:
        if not isinstance(weights, ndarray):
            raise ValueError("weights must be a cupy.ndarray")
        if weights.shape != x.shape:
            raise ValueError("weights should have the same shape as a.")
    if isinstance(bins, str):
        raise NotImplementedError("only integer and array bins are implemented")
    if isinstance(bins, ndarray) or np.ndim(bins) == 1:
        _sync("cupy.histogram (bins must increase monotonically)")
    elif range is None and data.size:
        _sync("cupy.histogram (the range from the data)")
    if capturing():
        _refuse("cupy.histogram")
    w = None if weights is None else weights._a
    hist, edges = _quiet(np.histogram, data.ravel(), bins=_unwrap(bins), range=range, density=density,
                         weights=None if w is None else w.ravel())
    if not density:
        kind = "i" if w is None else w.dtype.kind
        hist = hist.astype(np.complex128 if kind == "c" else np.int64 if kind in "bui" else np.float64)
    return ndarray(hist, x._device_id), ndarray(edges, x._device_id)


def _check_kwargs(name, params, args, kwargs):
    allowed = _UFUNC_KWARGS if params is None else set(params)
    bad = set(kwargs) - allowed
    if bad:
        raise TypeError(f"cupy.{name}() got an unexpected keyword argument {sorted(bad)[0]!r}")
    if params is not None and params != ("args",) and len(args) > len(params):  # (("args",): *args)
        raise TypeError(f"cupy.{name}() takes at most {len(params)} positional arguments")


def _quiet(fn, *args, **kwargs):
    """``fn`` with NumPy's floating-point warnings off: CuPy's kernels raise none (log(0) is -inf, 0/0 NaN, without
    a word), so code that runs clean on a GPU runs clean here too."""
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


def _make_module():
    cupy = types.ModuleType("cupy")
    cupy.__version__ = VERSION
    cupy._is_fake = True
    cupy.ndarray = ndarray

    def _fn(name):
        np_fn = getattr(np, name)
        params = SIGNATURES[name]
        np_kwargs = {"a_min": "min", "a_max": "max"} if name == "clip" and np.__version__ >= "2.1" else {}

        def call(*args, **kwargs):
            _check_kwargs(name, params, args, kwargs)
            raw_args = _unwrap(args)
            raw_kwargs = {np_kwargs.get(k, k): _unwrap(v) for k, v in kwargs.items()}
            if name == "take":  # (CuPy's take has no mode: an index past either end wraps round)
                raw_kwargs["mode"] = "wrap"
            elif name == "take_along_axis":  # (CuPy's is a[fancy index]: it wraps too)
                a, idx = raw_args[0], raw_args[1] if len(raw_args) > 1 else raw_kwargs.pop("indices")
                axis = raw_args[2] if len(raw_args) > 2 else raw_kwargs.pop("axis", None)
                size = a.size if axis is None else a.shape[axis]
                raw_args = (a, idx % size if size else idx, axis)
            if name in _SIZED_ON_THE_HOST or name in _CHECKED_ON_THE_HOST:
                _sync(f"cupy.{name}")
            if name in _SORTS:
                kind = args[2] if len(args) > 2 else kwargs.get("kind")
                if kind is not None and kind != "stable":
                    raise ValueError("kind can only be None or 'stable'")
                if raw_args and getattr(raw_args[0], "ndim", 1) == 0 and name == "sort":
                    raise np.exceptions.AxisError("Sorting arrays with the rank of zero is not supported")
            if name == "repeat" and isinstance((args[1:2] or [kwargs.get("repeats")])[0], ndarray):
                raise ValueError("cupy.ndarray cannot be specified as `repeats` argument.")  # CuPy's refusal
            if not capturing():
                result = _quiet(np_fn, *raw_args, **raw_kwargs)
                return kwargs["out"] if "out" in kwargs else _wrap(result)
            if "out" in kwargs:
                _record(lambda: _quiet(np_fn, *raw_args, **raw_kwargs))
                return kwargs["out"]
            result = _wrap(_quiet(np_fn, *raw_args, **raw_kwargs))
            sources = [a for a in raw_args if isinstance(a, np.ndarray)]
            if isinstance(result, ndarray) and name not in ("empty", "empty_like") and not (
                    name in _VIEWS and _is_view(result._a, *sources)):
                _record_new(result._a, lambda: _quiet(np_fn, *raw_args, **raw_kwargs))
            return result

        call.__name__ = name
        return ufunc(name, call) if params is None else call

    for name in SIGNATURES:
        if name not in ("asarray", "array", "copyto", "ascontiguousarray", "asfortranarray", "histogram"):
            setattr(cupy, name, _fn(name))
    cupy.ufunc = ufunc
    cupy.histogram = _histogram
    for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_", "complex64",
                 "complex128", "dtype", "newaxis", "inf", "nan", "pi", "result_type", "can_cast"):
        setattr(cupy, name, getattr(np, name))

    def asarray(a, dtype=None, order=None, *, copy=None, blocking=False):
        if isinstance(a, ndarray):
            if a._device_id != _current_device():
                return a  # CuPy hands back the array where it is
            return a if dtype is None or a.dtype == dtype else a.astype(dtype)
        return array(a, dtype=dtype)

    def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
        if isinstance(obj, ndarray):
            if capturing():
                return obj._captured_call("astype", obj._a.astype, (dtype or obj.dtype,), {"copy": True})
            return ndarray(np.array(obj._a, dtype=dtype, copy=True))
        if capturing():
            _refuse("a host-to-device copy (cudaMemcpy)")
        h2d_copies.append(type(obj).__name__)
        return ndarray(np.array(obj, dtype=dtype, copy=True, order="C" if order == "K" else order))

    # CuPy's (cupy/_core/core.pyx), as NumPy's: a 0-dimensional array comes back with one dimension, of size 1
    def ascontiguousarray(a, dtype=None):
        if a.flags.c_contiguous and (dtype is None or a.dtype == dtype):
            return a.reshape(1) if a.ndim == 0 else a
        return _copy_layout(a, "C", dtype)

    def asfortranarray(a, dtype=None):
        if a.flags.f_contiguous and (dtype is None or a.dtype == dtype):
            return a.reshape(1) if a.ndim == 0 else a
        return _copy_layout(a, "F", dtype)

    def _copy_layout(a, order, dtype):
        def compute():
            return np.array(a._a.reshape(1) if a.ndim == 0 else a._a, dtype=dtype, order=order, copy=True)

        result = ndarray(compute(), a._device_id)
        if capturing():
            _record_new(result._a, lambda: compute())
        return result

    def copyto(dst, src, casting="same_kind", where=None):
        if isinstance(src, np.ndarray) and src.size != 1:
            raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
        args = (dst._a, _unwrap(src, strict=False))
        kwargs = {"casting": casting, "where": True if where is None else _unwrap(where)}
        if capturing():
            _record(lambda: np.copyto(*args, **kwargs))
            return
        np.copyto(*args, **kwargs)

    def einsum(*operands, **kwargs):
        # CuPy's signature: einsum(subscripts, *operands, dtype=None, optimize=False) read from *operands, **kwargs
        unknown = set(kwargs) - {"dtype", "optimize"}
        if unknown:
            raise TypeError(f"einsum() got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
        equation, arrays = operands[0], [_unwrap(a) for a in operands[1:]]

        def compute():
            return np.einsum(equation, *arrays, dtype=kwargs.get("dtype"))

        devices = {a._device_id for a in operands[1:] if isinstance(a, ndarray)}
        result = ndarray(np.asarray(compute()), devices.pop() if devices else _current_device())
        if capturing():
            _record_new(result._a, compute)
        return result

    for f in (asarray, array, ascontiguousarray, asfortranarray, copyto, einsum):
        setattr(cupy, f.__name__, f)
    cupy.ElementwiseKernel = ElementwiseKernel
    cupy.get_default_memory_pool = lambda: _default_pool
    cupy.get_default_pinned_memory_pool = lambda: _pinned_pool

    random = types.ModuleType("cupy.random")
    gens: dict = {}

    def gen():
        if capturing():
            raise NotImplementedError("calling cuRAND API during stream capture is currently unsupported")
        return gens.setdefault(_current_device(), np.random.default_rng(0))

    def seed(seed=None):
        gens[_current_device()] = np.random.default_rng(seed)

    def standard_normal(size=None, dtype=float):
        return ndarray(gen().standard_normal(size).astype(dtype))

    def random_(size=None, dtype=float):
        return ndarray(gen().random(size).astype(dtype))

    def randint(low, high=None, size=None, dtype="l"):
        return ndarray(gen().integers(low, high, size).astype(dtype))

    random_.__name__ = "random"
    for f in (seed, standard_normal, random_, randint):
        setattr(random, f.__name__, f)
    cupy.random = random

    linalg = types.ModuleType("cupy.linalg")

    def _solver(fn, *arrays):
        """CuPy's cuSOLVER calls: run on the device without a host check of their info (CuPy raises no LinAlgError
        unless asked to), so a singular matrix gives NaN or inf, not an exception."""
        if capturing():
            raise RuntimeError("cuSOLVER calls are not capturable by the stand-in")
        raw = [_unwrap(a) for a in arrays]
        try:
            out = _quiet(fn, *raw)
        except np.linalg.LinAlgError:  # inv and solve of a singular matrix: their output's shape, all NaN
            out = np.full(raw[-1].shape, np.nan, dtype=raw[-1].dtype)
        if isinstance(out, tuple):
            return tuple(_wrap(np.asarray(o)) for o in out)
        return _wrap(np.asarray(out))

    def inv(a):
        return _solver(np.linalg.inv, a)

    def det(a):
        return _solver(np.linalg.det, a)

    def slogdet(a):
        return _solver(np.linalg.slogdet, a)

    def eig(a):
        """cuSOLVER's geev (CuPy 13+): complex eigenvalues and eigenvectors of a general matrix (NumPy's numbers;
        CuPy promises no order, nor the same as NumPy's)."""
        return _solver(np.linalg.eig, a)

    def eigvals(a):
        return _solver(np.linalg.eigvals, a)

    def solve(a, b):
        """CuPy's checks first (cupy/linalg/_solve.py): no broadcasting of the batch dimensions, as NumPy has."""
        ra, rb = _unwrap(a), _unwrap(b)
        if ra.ndim < 2:
            raise np.linalg.LinAlgError(f"{ra.ndim}-dimensional array given. Array must be at least two-dimensional")
        if ra.shape[-1] != ra.shape[-2]:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
        if rb.ndim == 0:
            raise ValueError("b must have at least one dimension")
        if rb.ndim == 1:
            if ra.shape[-1] != rb.size:
                raise ValueError("a must have (..., M, M) shape and b must have (M,) for one-dimensional b")
        elif ra.shape[:-1] != rb.shape[:-1]:
            raise ValueError("a must have (..., M, M) shape and b must have (..., M, K) for multidimensional b")
        return _solver(np.linalg.solve, a, b)

    def svd(a, full_matrices=True, compute_uv=True):
        return _solver(lambda x: np.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv), a)

    def cholesky(a):  # (a matrix that is not positive-definite: no exception, the factor NaN, as _solver says)
        return _solver(np.linalg.cholesky, a)

    def eigh(a, UPLO="L"):  # noqa: N803 - CuPy's name
        return _solver(lambda x: np.linalg.eigh(x, UPLO=UPLO), a)

    def qr(a, mode="reduced"):
        return _solver(lambda x: np.linalg.qr(x, mode=mode), a)

    for f in (inv, det, slogdet, solve, svd, cholesky, eigh, qr, eig, eigvals):
        setattr(linalg, f.__name__, f)
    cupy.linalg = linalg

    # cupy.fft: cuFFT's transforms, NumPy's numbers (pocketfft), CuPy's parameters (no out=, as NumPy 2 has)
    fft_module = types.ModuleType("cupy.fft")

    def _transform(name, params):
        np_fn = getattr(np.fft, name)

        def call(*args, **kwargs):
            _check_kwargs(f"fft.{name}", params, args, kwargs)
            if capturing():
                raise RuntimeError("cuFFT calls are not capturable by the stand-in")
            return _wrap(_quiet(np_fn, *_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

        call.__name__ = name
        call.__signature__ = inspect.Signature(  # (CuPy's parameters, by name, for the contract test)
            [inspect.Parameter(params[0], inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            + [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None) for p in params[1:]])
        return call

    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        setattr(fft_module, name, _transform(name, ("a", "n", "axis", "norm")))
    for name in ("fftn", "ifftn", "rfftn", "irfftn"):
        setattr(fft_module, name, _transform(name, ("a", "s", "axes", "norm")))
    for name in ("fft2", "ifft2", "rfft2", "irfft2"):
        setattr(fft_module, name, _transform(name, ("a", "s", "axes", "norm")))
    for name in ("fftshift", "ifftshift"):
        setattr(fft_module, name, _transform(name, ("x", "axes")))
    cupy.fft = fft_module

    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.getDeviceCount = lambda: DEVICE_COUNT
    runtime.getDevice = _current_device
    runtime.getDeviceProperties = lambda i: {"name": f"Fake GPU {i}".encode(), "major": 9, "minor": 0,
                                             "totalGlobalMem": 80 * 2**30, "multiProcessorCount": 132}
    runtime.memGetInfo = lambda: (70 * 2**30 - _default_pool._used.get(_current_device(), 0), 80 * 2**30)
    runtime.deviceSynchronize = _device_synchronize
    runtime.CUDARuntimeError = CUDARuntimeError
    runtime.driverGetVersion = lambda: 12080
    runtime.runtimeGetVersion = lambda: 12060
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device
    cuda.runtime = runtime
    cuda.Stream = Stream
    cuda.Event = Event
    cuda.get_elapsed_time = get_elapsed_time
    cuda.MemoryPool = MemoryPool
    cuda.MemoryPointer = MemoryPointer
    cuda.get_current_stream = _current_stream
    cuda.using_allocator = using_allocator
    cuda.set_allocator = set_allocator
    cuda.get_allocator = get_allocator
    cuda.is_available = lambda: True
    cuda.graph = types.SimpleNamespace(Graph=Graph)
    cupy.cuda = cuda

    lib = types.ModuleType("cupy.lib")
    stride_tricks = types.ModuleType("cupy.lib.stride_tricks")

    def as_strided(x, shape=None, strides=None):
        """CuPy 14.2's, line for line in effect: ``ndarray(shape=shape, dtype=x.dtype, memptr=x.data,
        strides=strides)``, a new header on x's memory, which, unlike a view, has no ``base`` (nor does CuPy check
        the bounds)."""
        shape = x.shape if shape is None else tuple(shape)
        strides = x.strides if strides is None else tuple(strides)
        a = x._a
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if root.flags.c_contiguous:
            offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            header = np.ndarray(shape, a.dtype, buffer=root, offset=offset, strides=strides)
        else:  # (memory NumPy laid out in another order, as an elementwise result of a strided input can be: no
            # buffer to hand np.ndarray; NumPy's own as_strided reads the same memory from x's first element)
            header = np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)
        out = ndarray(header, x._device_id)
        out._base = None
        return out

    stride_tricks.as_strided = as_strided
    lib.stride_tricks = stride_tricks
    cupy.lib = lib

    cupyx = types.ModuleType("cupyx")

    def scatter_add(a, slices, value):
        # CuPy 14.2 warns that ndarray.scatter_add (what cupyx.scatter_add calls) is deprecated: seen on an
        # H100 by make gpu-check, where pytest's filterwarnings=error turned it into three failures
        warnings.warn("`ndarray.scatter_add` is deprecated; use cupy.add.at (stand-in for CuPy 14.2's warning)",
                      DeprecationWarning, stacklevel=2)
        _add_at(a, slices, value)

    cupyx.scatter_add = scatter_add
    cupyx.allow_synchronize = allow_synchronize
    cupyx.DeviceSynchronized = DeviceSynchronized
    return cupy, cupyx


def _reset_state():
    from engine import _memory

    _memory._tracking[0] = False  # the engine's peak tracker wraps the (stand-in's) allocator anew
    _memory._peaks.clear()
    _capture.update(ops=None, invalid=None, stream=None)
    for name in ("device", "streams", "allocators", "allow_sync"):
        if hasattr(_local, name):
            delattr(_local, name)
    _global_allocator[0] = None
    syncs.clear()
    h2d_copies.clear()


def install():
    """Make the engine see this stand-in as CuPy with DEVICE_COUNT devices. Returns an undo function."""
    from engine import backend

    cupy, cupyx = _make_module()
    saved_modules = {k: sys.modules.get(k) for k in ("cupy", "cupyx")}
    saved_status = (backend._status, backend._cupy)
    sys.modules["cupy"], sys.modules["cupyx"] = cupy, cupyx
    _reset_state()
    backend._reset_cuda_status((True, "", DEVICE_COUNT), cupy)
    backend.set_current_cuda_index(0)
    from engine import _cublas

    saved = _cublas.matmul, _cublas.prepare
    _cublas.matmul, _cublas.prepare = capture_matmul, lambda: None

    def undo():
        _cublas.matmul, _cublas.prepare = saved
        for k, v in saved_modules.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        backend._reset_cuda_status(*saved_status)
        backend.set_current_cuda_index(0)
        _reset_state()

    return undo
