"""A stand-in for CuPy, for exercising the engine's CUDA code paths on a machine without a GPU.

Its arrays wrap NumPy arrays but are a type of their own, as CuPy's are: they carry ``.device``, copy to the
host with ``.get()``, and refuse to mix with NumPy arrays in one operation (CuPy raises TypeError there,
which the engine turns into its "same device" error). ``cuda.runtime``, the memory pools, ``random`` and
``cupyx.scatter_add`` are there as far as the engine uses them. It checks plumbing: which module an op runs
on, transfers, errors, batching. It says nothing about speed or real-GPU numerics (tests marked ``gpu``).

Stream capture is simulated with a real graph's semantics: while a stream captures, an operation is recorded,
not run. An in-place one (``out=``, ``fill``, ``x[i] = v``) leaves its target as it was; a new array comes
back with NaN in it (on a GPU its memory holds whatever was there), and the graph's replay computes it into
that same buffer from the buffers' contents at replay time. A host read (``.get()``, ``float()``, a boolean
mask, a synchronisation) raises and invalidates the capture, as CUDA does, and a product raises CuPy's
"cuBLAS during stream capture" error; :func:`capture_matmul` stands for the engine's own capturable product.
"""

from __future__ import annotations

import contextlib
import sys
import types
import weakref

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

DEVICE_COUNT = 2
_current = [0]
_allocated = {"bytes": 0}
# while a stream captures: "ops" is the list of recorded operations (None otherwise)
_capture = {"ops": None, "invalid": None, "stream": None}
_allocators: list = []  # the using_allocator stack


class CUDARuntimeError(RuntimeError):
    pass


def capturing() -> bool:
    return _capture["ops"] is not None


def _refuse(what: str):
    """A host synchronisation while capturing: CUDA invalidates the capture and the call fails."""
    _capture["invalid"] = what
    raise CUDARuntimeError(f"cudaErrorStreamCaptureUnsupported: {what}: operation not permitted when stream is "
                           "capturing")


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


class Device:
    def __init__(self, device=None):
        self.id = _current[0] if device is None else int(device)

    def use(self):
        _current[0] = self.id

    def __enter__(self):
        self._prev = _current[0]
        _current[0] = self.id
        return self

    def __exit__(self, *exc):
        _current[0] = self._prev
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)


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


class ndarray(NDArrayOperatorsMixin):  # noqa: N801 - CuPy's name
    __array_priority__ = 100

    def __init__(self, array, device_id=None):
        self._a = array
        self._device_id = _current[0] if device_id is None else device_id
        if _allocators and array.base is None:  # a fresh buffer, under cupy.cuda.using_allocator
            owner = getattr(_allocators[-1], "__self__", None)
            if isinstance(owner, MemoryPool):
                owner._note(array)

    # what makes it CuPy-like
    @property
    def device(self):
        return Device(self._device_id)

    def get(self):
        if capturing():
            _refuse("ndarray.get()")
        return self._a.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
                        "a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        ids = {x._device_id for x in inputs if isinstance(x, ndarray)}
        args = [_unwrap(x) for x in inputs]
        outs = kwargs.get("out")
        if outs is not None:
            kwargs["out"] = tuple(_unwrap(o) for o in outs)
        if "where" in kwargs:
            kwargs["where"] = _unwrap(kwargs["where"])
        if capturing():
            if ufunc is np.matmul:
                _refuse_cublas()
            call = getattr(ufunc, method)
            if outs is not None:  # in place: recorded, not run
                _record(lambda: call(*args, **kwargs))
                return outs[0] if len(outs) == 1 else outs
            wrapped = _wrap(call(*args, **kwargs), next(iter(ids)) if ids else None)
            _record_new(wrapped._a, lambda: call(*args, **kwargs))
            return wrapped
        result = getattr(ufunc, method)(*args, **kwargs)
        if method == "at":
            return None
        return _wrap(result, next(iter(ids)) if ids else None)

    # the ndarray surface the engine uses
    def __getattr__(self, name):
        attr = getattr(self._a, name)
        if callable(attr):
            def method(*args, **kwargs):
                args, kwargs = _unwrap(args), {k: _unwrap(v) for k, v in kwargs.items()}
                if capturing():
                    return self._captured_call(name, attr, args, kwargs)
                return _wrap(attr(*args, **kwargs), self._device_id)
            return method
        return _wrap(attr, self._device_id) if isinstance(attr, np.ndarray) and name != "base" else attr

    def _captured_call(self, name, attr, args, kwargs):
        if name == "dot":
            _refuse_cublas()
        if name in ("item", "tolist", "tobytes"):
            _refuse(f"ndarray.{name}()")
        if name == "fill":  # in place: recorded, not run
            _record(lambda: attr(*args, **kwargs))
            return None
        result = attr(*args, **kwargs)
        if not isinstance(result, (np.ndarray, np.generic)):
            return result
        wrapped = _wrap(result, self._device_id)
        if not _is_view(wrapped._a, self._a):
            _record_new(wrapped._a, lambda: attr(*args, **kwargs))
        return wrapped

    @property
    def base(self):
        return self._a.base

    @property
    def T(self):  # noqa: N802
        return ndarray(self._a.T, self._device_id)

    def __getitem__(self, index):
        index = _unwrap(index)
        if capturing():
            if _has_mask(index):
                _refuse("boolean-mask indexing")  # CuPy counts the mask's True values on the host
            wrapped = _wrap(self._a[index], self._device_id)
            if not _is_view(wrapped._a, self._a):
                _record_new(wrapped._a, lambda: self._a[index])
            return wrapped
        return _wrap(self._a[index], self._device_id)

    def __setitem__(self, index, value):
        index, value = _unwrap(index), _unwrap(value)
        if capturing():
            if _has_mask(index):
                _refuse("boolean-mask assignment")
            _record(lambda: self._a.__setitem__(index, value))
            return
        self._a[index] = value

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(v, self._device_id) for v in self._a)

    def __bool__(self):
        if capturing():
            _refuse("bool(ndarray)")
        return bool(self._a)

    def __float__(self):
        if capturing():
            _refuse("float(ndarray)")
        return float(self._a)

    def __int__(self):
        if capturing():
            _refuse("int(ndarray)")
        return int(self._a)

    def __repr__(self):
        return f"fake_cupy.{self._a!r}"


# ----------------------------------------------------------------------------- streams, graphs, pools

def _device_synchronize():
    if capturing():
        _refuse("cudaDeviceSynchronize")


_streams: list = []  # the `with stream:` stack


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


class Stream:
    null = None

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.ptr = 0 if null else id(self)
        self.non_blocking = non_blocking

    def __enter__(self):
        _streams.append(self)
        return self

    def __exit__(self, *exc):
        _streams.pop()
        return False

    def synchronize(self):
        if capturing():
            _refuse("cudaStreamSynchronize")

    def begin_capture(self, mode=None):
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if capturing():
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


class MemoryPool:
    """A private pool: counts the live buffers made while it was the allocator."""

    def __init__(self):
        self._arrays = []
        self.freed = 0

    def malloc(self, size):
        raise NotImplementedError("the stand-in's arrays are NumPy's; this pool only counts them")

    def _note(self, array):
        self._arrays.append(weakref.ref(array))

    def used_bytes(self):
        return sum(a().nbytes for a in self._arrays if a() is not None)

    def total_bytes(self):
        return self.used_bytes()

    def free_all_blocks(self):
        self.freed += 1


@contextlib.contextmanager
def using_allocator(allocator=None):
    _allocators.append(allocator)
    try:
        yield
    finally:
        _allocators.pop()


def active() -> bool:
    """Whether the engine's CuPy is this stand-in (and not a real GPU's)."""
    from engine import backend

    return backend.get_cupy().__version__ == "0.0-fake"


def assert_same_numbers(got, expected, rtol=1e-12):
    """Captured against uncaptured: equal on the stand-in (the same NumPy calls), within ``rtol`` on a GPU
    (float64's bar for other cuBLAS kernels)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if active():
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)


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

def _make_module():
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "0.0-fake"
    cupy.ndarray = ndarray

    def _fn(name):
        np_fn = getattr(np, name)

        def call(*args, **kwargs):
            raw_args, raw_kwargs = _unwrap(args), {k: _unwrap(v) for k, v in kwargs.items()}
            if not capturing():
                return _wrap(np_fn(*raw_args, **raw_kwargs))
            if name in ("matmul",):
                _refuse_cublas()
            if name in ("allclose", "nonzero"):
                _refuse(f"cupy.{name}")
            if "out" in kwargs:
                _record(lambda: np_fn(*raw_args, **raw_kwargs))
                return kwargs["out"]
            result = _wrap(np_fn(*raw_args, **raw_kwargs))
            if isinstance(result, ndarray) and name not in ("empty", "empty_like") and not _is_view(
                    result._a, *[a for a in raw_args if isinstance(a, np.ndarray)]):
                _record_new(result._a, lambda: np_fn(*raw_args, **raw_kwargs))
            return result
        call.__name__ = name
        return call

    for name in ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange",
                 "stack", "concatenate", "split", "where", "maximum", "minimum", "clip", "exp", "log", "sqrt",
                 "tanh", "sign", "abs", "isnan", "isfinite", "allclose", "broadcast_to", "expand_dims", "swapaxes",
                 "take_along_axis", "moveaxis", "nonzero", "eye", "linspace", "add", "subtract", "multiply",
                 "true_divide", "power", "sum", "mean", "argmax", "argmin", "square", "matmul"):
        setattr(cupy, name, _fn(name))
    for name in ("float16", "float32", "float64", "int32", "int64", "uint8", "bool_", "dtype", "newaxis"):
        setattr(cupy, name, getattr(np, name))

    def asarray(a, dtype=None):
        if capturing() and not isinstance(a, ndarray):
            _refuse("a host-to-device copy")
        if isinstance(a, ndarray):
            if a._device_id != _current[0]:
                return a  # CuPy hands back the array where it is
            return a if dtype is None else a.astype(dtype)
        return ndarray(np.array(a, dtype=dtype, copy=True))

    def array(a, dtype=None, copy=True):
        if capturing() and not isinstance(a, ndarray):
            _refuse("a host-to-device copy")
        src = a._a if isinstance(a, ndarray) else a
        return ndarray(np.array(src, dtype=dtype, copy=True))

    cupy.asarray = asarray
    cupy.array = array

    def copyto(dst, src, casting="same_kind", where=None):
        args = (dst._a, _unwrap(src, strict=False))
        kwargs = {"casting": casting, "where": True if where is None else _unwrap(where)}
        if capturing():
            _record(lambda: np.copyto(*args, **kwargs))
            return
        np.copyto(*args, **kwargs)

    cupy.copyto = copyto

    class Pool:
        def used_bytes(self):
            return _allocated["bytes"]

        def total_bytes(self):
            return _allocated["bytes"] + 4096

        def free_all_blocks(self):
            pass

    pool = Pool()
    cupy.get_default_memory_pool = lambda: pool
    cupy.get_default_pinned_memory_pool = lambda: pool

    random = types.ModuleType("cupy.random")
    gens = {}

    def gen():
        if capturing():
            raise NotImplementedError("calling cuRAND API during stream capture is currently unsupported")
        return gens.setdefault(_current[0], np.random.default_rng(0))

    random.seed = lambda s=None: gens.__setitem__(_current[0], np.random.default_rng(s))
    random.standard_normal = lambda size=None, dtype=np.float64: ndarray(gen().standard_normal(size).astype(dtype))
    random.random = lambda size=None, dtype=np.float64: ndarray(gen().random(size).astype(dtype))
    random.randint = lambda low, high=None, size=None: ndarray(gen().integers(low, high, size))
    cupy.random = random

    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.getDeviceCount = lambda: DEVICE_COUNT
    runtime.getDeviceProperties = lambda i: {"name": f"Fake GPU {i}".encode(), "major": 9, "minor": 0,
                                             "totalGlobalMem": 80 * 2**30, "multiProcessorCount": 132}
    runtime.memGetInfo = lambda: (70 * 2**30, 80 * 2**30)
    runtime.deviceSynchronize = _device_synchronize
    runtime.CUDARuntimeError = CUDARuntimeError
    runtime.driverGetVersion = lambda: 12080
    runtime.runtimeGetVersion = lambda: 12060
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device
    cuda.runtime = runtime
    cuda.Stream = Stream
    cuda.MemoryPool = MemoryPool
    cuda.get_current_stream = lambda: _streams[-1] if _streams else Stream.null
    cuda.using_allocator = using_allocator
    cuda.graph = types.SimpleNamespace(Graph=Graph)
    cupy.cuda = cuda

    cupyx = types.ModuleType("cupyx")

    def scatter_add(a, index, values):
        np.add.at(a._a, _unwrap(index), _unwrap(values))

    cupyx.scatter_add = scatter_add
    return cupy, cupyx


def install():
    """Make the engine see this stand-in as CuPy with DEVICE_COUNT devices. Returns an undo function."""
    from engine import backend

    cupy, cupyx = _make_module()
    saved_modules = {k: sys.modules.get(k) for k in ("cupy", "cupyx")}
    saved_status = (backend._status, backend._cupy)
    sys.modules["cupy"], sys.modules["cupyx"] = cupy, cupyx
    backend._reset_cuda_status((True, "", DEVICE_COUNT), cupy)
    _current[0] = 0
    backend.set_current_cuda_index(0)
    _capture.update(ops=None, invalid=None, stream=None)
    _streams.clear()
    _allocators.clear()
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

    return undo
