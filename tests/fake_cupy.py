"""A stand-in for CuPy, for exercising the engine's CUDA code paths on a machine without a GPU.

Its arrays wrap NumPy arrays but are a type of their own, as CuPy's are: they carry ``.device``, copy to the
host with ``.get()``, and refuse to mix with NumPy arrays in one operation (CuPy raises TypeError there,
which the engine turns into its "same device" error). ``cuda.runtime``, the memory pools, ``random`` and
``cupyx.scatter_add`` are there as far as the engine uses them. It checks plumbing: which module an op runs
on, transfers, errors, batching. It says nothing about speed or real-GPU numerics (tests marked ``gpu``).
"""

from __future__ import annotations

import sys
import types

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

DEVICE_COUNT = 2
_current = [0]
_allocated = {"bytes": 0}


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

    # what makes it CuPy-like
    @property
    def device(self):
        return Device(self._device_id)

    def get(self):
        return self._a.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
                        "a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        ids = {x._device_id for x in inputs if isinstance(x, ndarray)}
        args = [_unwrap(x) for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(_unwrap(o) for o in kwargs["out"])
        result = getattr(ufunc, method)(*args, **kwargs)
        if method == "at":
            return None
        return _wrap(result, next(iter(ids)) if ids else None)

    # the ndarray surface the engine uses
    def __getattr__(self, name):
        attr = getattr(self._a, name)
        if callable(attr):
            def method(*args, **kwargs):
                return _wrap(attr(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}), self._device_id)
            return method
        return _wrap(attr, self._device_id) if isinstance(attr, np.ndarray) and name != "base" else attr

    @property
    def base(self):
        return self._a.base

    @property
    def T(self):  # noqa: N802
        return ndarray(self._a.T, self._device_id)

    def __getitem__(self, index):
        return _wrap(self._a[_unwrap(index)], self._device_id)

    def __setitem__(self, index, value):
        self._a[_unwrap(index)] = _unwrap(value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(v, self._device_id) for v in self._a)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __repr__(self):
        return f"fake_cupy.{self._a!r}"


# ----------------------------------------------------------------------------- the module

def _make_module():
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "0.0-fake"
    cupy.ndarray = ndarray

    def _fn(name):
        np_fn = getattr(np, name)

        def call(*args, **kwargs):
            return _wrap(np_fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
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
        if isinstance(a, ndarray):
            if a._device_id != _current[0]:
                return a  # CuPy hands back the array where it is
            return a if dtype is None else a.astype(dtype)
        return ndarray(np.array(a, dtype=dtype, copy=True))

    def array(a, dtype=None, copy=True):
        src = a._a if isinstance(a, ndarray) else a
        return ndarray(np.array(src, dtype=dtype, copy=True))

    cupy.asarray = asarray
    cupy.array = array

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
    runtime.deviceSynchronize = lambda: None
    runtime.driverGetVersion = lambda: 12080
    runtime.runtimeGetVersion = lambda: 12060
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device
    cuda.runtime = runtime
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

    def undo():
        for k, v in saved_modules.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        backend._reset_cuda_status(*saved_status)
        backend.set_current_cuda_index(0)

    return undo
