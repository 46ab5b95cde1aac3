"""Making tensors: ``tensor``, ``randn``, ``zeros``, ``arange`` ... with ``dtype=``, ``device=``, ``requires_grad=``."""

from __future__ import annotations

import math

import numpy as np

from . import _alloc, _layouts, backend, dtypes, legacy
from . import random as _random
from .backend import resolve
from .tensor import Tensor, _wrap

__all__ = [
    "tensor", "as_tensor", "from_numpy", "randn", "rand", "randint", "randperm", "zeros", "ones", "empty",
    "full", "arange", "linspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "randn_like",
    "rand_like", "stack", "cat", "where",
]


_sizes = _alloc.sizes


def _finish(array, requires_grad):
    t = _wrap(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _np_dtype(dtype, default=None):
    if dtype is None:
        return (default or dtypes.get_default_dtype()).np
    return dtypes.to_dtype(dtype).np


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, a NumPy/CuPy array or a Tensor).

    Python floats become the default dtype (float32), ints int64, bools bool; arrays keep their dtype.
    """
    if isinstance(data, Tensor):
        source = data._data
        src_device = data.device
    else:
        source = data
        src_device = backend.device_of_array(data) if backend.is_cupy_array(data) else backend.target(None)
    dev = resolve(device) if device is not None else src_device
    if dtype is not None:
        np_dtype = dtypes.to_dtype(dtype).np
        if np_dtype.kind in "iu" and not hasattr(source, "dtype"):  # (Python numbers: PyTorch's range check)
            source = dtypes.checked_integers(np.asarray(_host_elements(source) if isinstance(source, (list, tuple))
                                                        else source), np_dtype)
    elif hasattr(source, "dtype"):
        np_dtype = source.dtype
    else:
        np_dtype = _inferred_dtype(source)
        if isinstance(source, (list, tuple)):
            source = _host_elements(source)  # tensors in a list (a GPU run's losses) as their values
        try:
            probe = np.asarray(source)
        except ValueError:  # (NumPy's "inhomogeneous shape": PyTorch's words, naming the dimension)
            _check_rectangular(source)
            raise
        if np_dtype == _INT64 and probe.dtype.kind in "uO":  # (Python ints past int64: NumPy made uint64 or objects)
            if probe.dtype.kind == "O" or probe.size and probe.max() > np.iinfo(np.int64).max:
                raise ValueError("Overflow when unpacking long long")
        if np_dtype is None:
            if probe.dtype.kind == "f" or probe.dtype == object:
                np_dtype = dtypes.get_default_dtype().np
            elif probe.dtype.kind in "iu":
                np_dtype = np.int64
            elif probe.dtype.kind == "b":
                np_dtype = np.bool_
            else:
                raise TypeError(f"tensor(): can't make a tensor from {type(data).__name__} of {probe.dtype}")
        else:
            dtypes.from_numpy_dtype(np_dtype)  # one the engine has, or a TypeError that names it
        source = probe
    array = backend.to_device_array(source, dev, dtype=np_dtype, copy=True)
    return _finish(array, requires_grad)


_BOOL, _INT64 = np.dtype(np.bool_), np.dtype(np.int64)


def _host_elements(data):
    """A nested list with each tensor in it replaced by its one value, on the host (a 0-d NumPy array keeps its
    dtype), as PyTorch reads ``torch.tensor([loss_1, loss_2])``; a tensor of more than one element is refused as
    PyTorch refuses it."""
    if isinstance(data, (list, tuple)):
        return [_host_elements(x) for x in data]
    if isinstance(data, Tensor):
        if data._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return backend.to_host(data._data).reshape(())
    return data


def _check_rectangular(data) -> None:
    """PyTorch's refusal of ragged nested lists: the first dimension where a sequence's length differs from the
    first one's at that depth, or an element where a sequence was expected."""
    level, dim = [data], 0
    while level and all(isinstance(x, (list, tuple)) for x in level):
        want = len(level[0])
        for x in level:
            if len(x) != want:
                raise ValueError(f"expected sequence of length {want} at dim {dim} (got {len(x)})")
        level, dim = [y for x in level for y in x], dim + 1
    if any(isinstance(x, (list, tuple)) for x in level):
        raise TypeError("not a sequence")


def _inferred_dtype(data):
    """PyTorch's dtype for a number or nested sequence (``torch.tensor``'s inference): each element's own, a Python
    float the default dtype, an int int64, a bool bool, a NumPy scalar, array or a tensor its dtype, all promoted
    together (``[np.float64(0.1)]`` is float64, ``[np.int64(1), 1.5]`` float32). None where an element is none of
    these (NumPy then says what it makes of it)."""
    seen = set()
    stack = [data]
    default = dtypes.get_default_dtype().np
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (np.generic, np.ndarray)) or backend.is_cupy_array(x):  # (np.float64 is a float too)
            seen.add(x.dtype)
        elif isinstance(x, bool):
            seen.add(_BOOL)
        elif isinstance(x, int):
            seen.add(_INT64)
        elif isinstance(x, float):
            seen.add(default)
        elif isinstance(x, complex):
            seen.add(dtypes.default_complex().np)
        elif isinstance(x, Tensor):
            seen.add(x._data.dtype)
        elif x is None or isinstance(x, (dict, set, frozenset)):  # (NumPy made None a NaN)
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        elif isinstance(x, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        else:
            return None
    found = None
    for d in seen:
        found = dtypes.promote_types(found, d)
    return found


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    if isinstance(data, np.ndarray) and device is None:
        return _wrap(data if dtype is None else data.astype(dtypes.to_dtype(dtype).np, copy=False))
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy_dtype(array.dtype)
    return _wrap(array)


def _filled(fill, sizes, dtype, device, requires_grad, fn, default=None):
    array = _alloc.filled(fill, _sizes(sizes, fn), _np_dtype(dtype, default), backend.target(device))
    return _finish(array, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(lambda xp, s, d: xp.zeros(s, dtype=d), size, dtype, device, requires_grad, "zeros")


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(lambda xp, s, d: xp.ones(s, dtype=d), size, dtype, device, requires_grad, "ones")


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """Uninitialised memory of ``size``, row-major, or as ``memory_format`` (``channels_last``: a 4-D size) says."""
    if memory_format is None or memory_format is _layouts.contiguous_format:
        return _filled(lambda xp, s, d: xp.empty(s, dtype=d), size, dtype, device, requires_grad, "empty")
    fmt = _layouts.check(memory_format, "empty")
    if fmt is _layouts.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    return _filled(lambda xp, s, d: _layouts.empty_like(xp, None, s, d, fmt), size, dtype, device, requires_grad,
                   "empty")


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = dtypes.int64 if isinstance(fill_value, int) and not isinstance(fill_value, bool) else None
        dtype = dtypes.bool_ if isinstance(fill_value, bool) else dtype
        dtype = dtypes.default_complex() if isinstance(fill_value, complex) else dtype
    elif isinstance(fill_value, (int, float)) and not isinstance(fill_value, bool):
        fill_value = dtypes.checked_integers(fill_value, dtypes.to_dtype(dtype).np, fill=True)
    return _filled(lambda xp, s, d: xp.full(s, fill_value, dtype=d), (size,), dtype, device, requires_grad,
                   "full")


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Samples of the standard normal distribution; of a complex dtype, the real and imaginary parts each of
    variance 1/2 (so that E|z|^2 is 1), as PyTorch's."""
    shape = _sizes(size, "randn")
    dev = backend.target(device)
    np_dtype = _np_dtype(dtype)
    if np.dtype(np_dtype).kind == "c":
        parts = _random.standard_normal(shape + (2,), dtypes.real_of(np_dtype), dev, generator)
        parts *= parts.dtype.type(math.sqrt(0.5))
        return _finish(_complex_from_parts(parts, np_dtype, shape), requires_grad)
    if np.dtype(np_dtype).kind != "f":
        raise RuntimeError(f"randn: dtype must be a floating point type, got {dtypes.from_numpy_dtype(np_dtype)}")
    return _finish(_random.standard_normal(shape, np_dtype, dev, generator), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Samples of the uniform distribution on [0, 1); of a complex dtype, each part so, as PyTorch's."""
    shape = _sizes(size, "rand")
    dev = backend.target(device)
    np_dtype = _np_dtype(dtype)
    if np.dtype(np_dtype).kind == "c":
        parts = _random.uniform(shape + (2,), dtypes.real_of(np_dtype), dev, generator=generator)
        return _finish(_complex_from_parts(parts, np_dtype, shape), requires_grad)
    if np.dtype(np_dtype).kind != "f":
        raise RuntimeError(f"rand: dtype must be a floating point type, got {dtypes.from_numpy_dtype(np_dtype)}")
    return _finish(_random.uniform(shape, np_dtype, dev, generator=generator), requires_grad)


def _complex_from_parts(parts, np_dtype, shape):
    """Complex numbers from the real and imaginary parts paired along the last axis of a new (C-ordered) array,
    without a copy."""
    return parts.view(np_dtype).reshape(shape)


def randint(low, high=None, size=None, dtype=None, device=None, generator=None) -> Tensor:
    """Integers from ``low`` up to (not including) ``high``: ``randint(low, high, size)``, or PyTorch's other
    overload, ``randint(high, size)`` (``torch.randint(len(data) - block_size, (batch_size,))``)."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() needs a size, e.g. randint(0, 10, (3,))")
    shape = _sizes((size,), "randint")
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _wrap(_random.integers(low, high, shape, _np_dtype(dtype, dtypes.int64), backend.target(device),
                                  generator))


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:  # noqa: A002
    """Indices drawn from each row of ``input``: ``Tensor.multinomial`` (``engine.random.multinomial`` says how)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): input must be a Tensor, not {type(input).__name__}")
    return input.multinomial(num_samples, replacement, generator=generator)


def randperm(n, dtype=None, device=None, generator=None) -> Tensor:
    if int(n) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {int(n)}: [{int(n)}]")
    perm = _random.permutation(int(n), generator).astype(_np_dtype(dtype, dtypes.int64))
    return _wrap(backend.to_device_array(perm, backend.target(device)))


def _number(v):
    """A Python number from a number, a NumPy scalar or a one-element tensor (PyTorch's arange takes each)."""
    if isinstance(v, Tensor):
        v = v.item()
    return v.item() if isinstance(v, np.generic) else v


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False, *, out=None) -> Tensor:
    """``out=``: the values written into that tensor (its dtype, as PyTorch's, where ``dtype`` is not given)."""
    if out is not None:
        from ._out import written

        return written(_arange(start, end, step, out.dtype if dtype is None else dtype, device or out.device,
                               requires_grad), out, "arange")
    return _arange(start, end, step, dtype, device, requires_grad)


def _arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``start, start + step, ...`` up to ``end`` (excluded), as PyTorch's: its length is ``ceil((end - start) /
    step)``, and each float value is ``start + i * step`` worked out in float64 and then rounded to the dtype
    (not summed in float32, which drifts: -0.79999995 where PyTorch gives -0.8)."""
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    integral = dtype is not None and dtypes.to_dtype(dtype).np.kind in "iu"
    if integral and dtypes.to_dtype(dtype).np == np.int64:  # (PyTorch 2.13's: each bound cut toward zero first)
        start, end, step = (math.trunc(v) if isinstance(v, float) and math.isfinite(v) else v
                            for v in (start, end, step))
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if dtype is None:
        all_int = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, step))
        dtype = dtypes.int64 if all_int else dtypes.get_default_dtype()
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    np_dtype = dtypes.to_dtype(dtype).np
    if np_dtype == _BOOL or np_dtype.kind == "c":
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtypes.scalar_name(np_dtype)}'")
    if integral and not all(isinstance(v, int) for v in (start, end, step)):
        # (PyTorch 2.13's for the other integer dtypes: the length from the numbers as given, the values from the
        # start and step cut toward zero: arange(0, 5, 0.5, dtype=int32) is ten zeros)
        n = max(0, math.ceil((end - start) / step))
        array = (math.trunc(start) + math.trunc(step) * np.arange(n, dtype=np.int64)).astype(np_dtype)
    elif all(isinstance(v, int) for v in (start, end, step)):
        array = np.arange(start, end, step).astype(np_dtype, copy=False)
    else:
        n = max(0, math.ceil((end - start) / step))
        array = (start + np.arange(n, dtype=np.float64) * step).astype(np_dtype)
    return _finish(backend.to_device_array(array, backend.target(device)), requires_grad)


def _steps(steps) -> int:
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):  # (PyTorch's: an int, not 3.0)
        raise TypeError(f"linspace() received an invalid combination of arguments - got steps of type "
                        f"{type(steps).__name__}, but expected int")
    if int(steps) < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


def _bounds(name, start, end):
    """``start`` and ``end`` as numbers: a tensor (on either device) must be 0-dimensional, as PyTorch's ``linspace``
    and ``logspace`` ask; its value is read back."""
    tensors = [v for v in (start, end) if isinstance(v, Tensor)]
    if any(t.dim() != 0 for t in tensors):
        dims = [v.dim() if isinstance(v, Tensor) else 0 for v in (start, end)]
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got start with {dims[0]} "
                           f"dimension(s) and end with {dims[1]} dimension(s).")
    return _number(start), _number(end)


def _cut(v):
    return math.trunc(v) if isinstance(v, float) and math.isfinite(v) else v


def _two_sum(a, b):
    """``(s, e)``: ``s = a + b`` rounded and ``e`` its rounding error, exactly (Knuth)."""
    s = a + b
    t = s - a
    return s, (a - (s - t)) + (b - t)


def _split(a):
    """Veltkamp's split of float64 ``a`` into two halves of 26 bits each (``a = hi + lo`` exactly)."""
    c = 134217729.0 * a  # (2**27 + 1)
    hi = c - (c - a)
    return hi, a - hi


def _fma(a, b, c, dtype):
    """``a * b + c`` rounded once to ``dtype`` (float32 or float64; arrays of float64 values in), as a fused
    multiply-add rounds it: the product's and the sum's rounding errors found exactly (Dekker, Knuth), float32 taken
    to the nearest from float64 with the residual's sign deciding a value that lands on a midpoint."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        product_error = np.where(np.isfinite(p), ((ah * bh - p) + ah * bl + al * bh) + al * bl, 0.0)
        s, sum_error = _two_sum(p, c)
        e = product_error + np.where(np.isfinite(s), sum_error, 0.0)
        if dtype == np.float64:
            return s + e
        r = s.astype(dtype)  # (ties to even: wrong where s is a midpoint of dtype's and the exact value is not)
        up, down = np.nextafter(r, dtype.type(np.inf)), np.nextafter(r, dtype.type(-np.inf))
        r = np.where((s == (r.astype(np.float64) + up) / 2) & (e > 0), up, r)
        return np.where((s == (r.astype(np.float64) + down) / 2) & (e < 0), down, r)


def _linspace(start, end, steps, np_dtype):
    """PyTorch's linspace, value for value: the step ``(end - start) / (steps - 1)`` in the dtype (in double for an
    integer dtype, whose bounds and values are cut toward zero), the first half ``start + step * i`` and the rest
    ``end - step * (steps - 1 - i)`` each in one fused multiply-add, as its kernels compute them (the CPU's, and the
    GPU's, where nvcc fuses them). NumPy's linspace rounds differently: an ulp off in half the elements."""
    if steps <= 1:
        return np.full(steps, start).astype(np_dtype)
    if np_dtype.kind == "c":  # (each part on its own: the complex kernel's arithmetic is its parts')
        part = np.dtype(np.float64) if np_dtype == np.complex128 else np.dtype(np.float32)
        start, end = complex(start), complex(end)
        return (_linspace(start.real, end.real, steps, part)
                + 1j * _linspace(start.imag, end.imag, steps, part)).astype(np_dtype)
    i = np.arange(steps)
    if np_dtype.kind == "f" and np_dtype.itemsize < 4:  # (half precision: each operation rounded back to it)
        t = np_dtype.type
        s, e = t(start), t(end)
        with np.errstate(all="ignore"):
            step = t(np.float32(t(np.float32(e) - np.float32(s))) / np.float32(steps - 1))
            first = (np.float32(s) + (np.float32(step) * i.astype(np.float32)).astype(np_dtype)).astype(np_dtype)
            second = (np.float32(e) - (np.float32(step) * (steps - 1 - i).astype(np.float32)).astype(np_dtype))
        return np.where(i < steps // 2, first, second.astype(np_dtype))
    work = np.dtype(np.float64) if np_dtype.kind in "iub" or np_dtype == np.float64 else np.dtype(np.float32)
    s, e = work.type(start), work.type(end)
    with np.errstate(all="ignore"):
        step = (e - s) / work.type(steps - 1)
    out = np.where(i < steps // 2, _fma(step, i, s, work), _fma(-step, steps - 1 - i, e, work))
    return out.astype(np_dtype)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    steps = _steps(steps)
    start, end = _bounds("linspace", start, end)
    np_dtype = _np_dtype(dtype)
    if np_dtype.kind in "iub":  # (PyTorch's: the bounds and then the values cut toward zero; NumPy's floors them)
        start, end = _cut(start), _cut(end)
    array = _linspace(start, end, int(steps), np_dtype)
    return _finish(backend.to_device_array(array, backend.target(device)), requires_grad)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``base`` to the powers ``linspace(start, end, steps)``."""
    steps = _steps(steps)
    start, end = _bounds("logspace", start, end)
    if _np_dtype(dtype).kind in "iub":  # (PyTorch's: the powers' bounds cut toward zero first)
        start, end = _cut(start), _cut(end)
    array = np.logspace(start, end, int(steps), base=base).astype(_np_dtype(dtype))
    return _finish(backend.to_device_array(array, backend.target(device)), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,  # noqa: A002
                 generator=None, memory_format=None) -> Tensor:
    """Integers from ``low`` up to ``high`` (or from 0 up to ``low`` given alone), of ``input``'s shape, dtype and
    device (and layout: see :func:`_like`)."""
    if high is None:
        low, high = 0, low
    out = randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                  generator=generator)
    out = _laid_out_like(out, input, memory_format, "randint_like")
    return out.requires_grad_(True) if requires_grad else out


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    for name, size in (("n", n), ("m", m)):
        if size is not None and int(size) < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {int(size)}")
    array = np.eye(int(n), None if m is None else int(m), dtype=_np_dtype(dtype))
    return _finish(backend.to_device_array(array, backend.target(device)), requires_grad)


def _laid_out_like(out: Tensor, t: Tensor, memory_format, op: str) -> Tensor:
    """``out`` (made row-major) laid out as ``memory_format`` says: ``preserve_format`` (the default) keeps a dense
    ``t``'s strides, as PyTorch's ``*_like`` do (``zeros_like(x.t())`` is transposed too)."""
    fmt = _layouts.check(memory_format, op)
    data = out._data
    if fmt is _layouts.contiguous_format or (fmt is _layouts.preserve_format and t._data.flags.c_contiguous):
        return out
    laid = _layouts.empty_like(backend.xp_of(data), t._data, data.shape, data.dtype, fmt)
    if laid.flags.c_contiguous:
        return out
    laid[...] = data
    out._data = laid
    return out


def _like(fn, t: Tensor, dtype, device, requires_grad, *fill, memory_format=None):
    """``fn(t.shape, *fill)`` of ``t``'s dtype and device unless given, laid out as :func:`_laid_out_like` says."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn.__name__}_like(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    out = fn(t.shape, *fill, dtype=dtype or t.dtype, device=device or t.device)
    out = _laid_out_like(out, t, memory_format, f"{fn.__name__}_like")
    return out.requires_grad_(True) if requires_grad else out


def zeros_like(t, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return _like(zeros, t, dtype, device, requires_grad, memory_format=memory_format)


def ones_like(t, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad, memory_format=memory_format)


def empty_like(t, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return _like(empty, t, dtype, device, requires_grad, memory_format=memory_format)


def randn_like(t, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return _like(randn, t, dtype, device, requires_grad, memory_format=memory_format)


def rand_like(t, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return _like(rand, t, dtype, device, requires_grad, memory_format=memory_format)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return _like(full, t, dtype, device, requires_grad, fill_value, memory_format=memory_format)


def stack(tensors, dim=0, *, axis=None) -> Tensor:
    from .functions import Stack

    dim = dim if axis is None else axis  # NumPy's name, which PyTorch takes too
    tensors = _joined_tensors(tensors, "stack")
    return Stack.apply(*tensors, dim=dim)


def cat(tensors, dim=0, *, axis=None, out=None) -> Tensor:
    from ._out import _rank, written
    from .functions import Cat

    dim = dim if axis is None else axis  # NumPy's name, which PyTorch takes too
    tensors = _joined_tensors(tensors, "cat")
    result = Cat.apply(*tensors, dim=dim)
    if isinstance(out, Tensor) and _rank(result._data.dtype) > _rank(out._data.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{dtypes.scalar_name(out._data.dtype)}")
    return written(result, out, "cat", tensors)


def _joined_tensors(tensors, fn):
    """``cat``'s and ``stack``'s list: not empty, Tensors only, on one device (PyTorch's refusals)."""
    from .tensor import _check_same_device

    if isinstance(tensors, Tensor):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:
        if fn == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    _check_same_device(*tensors)
    return tensors


def where(condition, input=None, other=None) -> Tensor:  # noqa: A002
    from .functions import Where

    if input is None and other is None:
        return tuple(_wrap(i) for i in backend.xp_of(condition._data).nonzero(condition._data))
    return Where.apply(condition, input, other)


legacy.bind(Tensor, tensor, empty)
