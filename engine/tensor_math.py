"""The rest of PyTorch's everyday Tensor math: the elementwise functions past the tutorial's (log1p, rsqrt, atan2,
...), their in-place forms, reductions (prod, amin, logsumexp, median, ...), reordering and indexing (flip, roll,
movedim, index_select, scatter_add, diagonal, ...) and batched products. :class:`engine.Tensor` inherits them;
each calls one Function (engine/functions) or is written from the methods that do, so there is still one door
per op, and ``torch.<name>`` (engine/functional.py) calls the method."""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

import numpy as np

from . import _deferred, backend
from . import dtypes as _dtypes
from . import tensor as _t  # bound while engine.tensor is being made; read when a method runs
from .backend import to_device_array, to_host, xp_of
from .errors import broadcast_error, c_type_name, expanded_shape, product_dtypes_error, raise_broadcast_error

return_types_aminmax = namedtuple("aminmax", ["min", "max"])
return_types_median = namedtuple("median", ["values", "indices"])
return_types_slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
return_types_kthvalue = namedtuple("kthvalue", ["values", "indices"])
return_types_frexp = namedtuple("frexp", ["mantissa", "exponent"])
return_types_cummax = namedtuple("cummax", ["values", "indices"])
return_types_cummin = namedtuple("cummin", ["values", "indices"])
return_types_mode = namedtuple("mode", ["values", "indices"])
return_types_nanmedian = namedtuple("nanmedian", ["values", "indices"])
_CUMULATIVE = {"max": return_types_cummax, "min": return_types_cummin}


def _dims(dim, ndim, fn):
    """``dim`` (an int or a sequence) as a tuple of non-negative dimensions, each checked as PyTorch checks it."""
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = []
    for d in dims:
        if not -builtins.max(ndim, 1) <= d < builtins.max(ndim, 1):
            raise IndexError(f"{fn}(): Dimension out of range (expected to be in range of "
                             f"[{-builtins.max(ndim, 1)}, {builtins.max(ndim, 1) - 1}], but got {d})")
        out.append(int(d) % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise RuntimeError(f"{fn}(): dims cannot contain repeated dimensions, got {list(dims)}")
    return tuple(out)


def _unary(name):
    def method(self):
        return _t._fn.Unary.apply(self._floating(), op=name)

    method.__name__ = name
    method.__doc__ = f"PyTorch's ``Tensor.{name}``, elementwise (integers computed in the default float dtype)."
    return method


def _binary(name):
    def method(self, other):
        """Computed in PyTorch's result dtype of the two (a bool with a float16 is float16), the default float
        dtype where that is an integer or bool one."""
        want = _dtypes.result_type(self._data, other._data if isinstance(other, _t.Tensor) else other)
        if want.kind not in "fc":
            want = np.dtype(_dtypes.get_default_dtype().np)
        a = self if self._data.dtype == want else self.to(_dtypes.from_numpy_dtype(want))
        if isinstance(other, _t.Tensor) and other._data.dtype != want:
            other = other.to(_dtypes.from_numpy_dtype(want))
        return _t._fn.Binary.apply(a, other, op=name)

    method.__name__ = name
    return method


def _floats_only(name):
    """A function of two floating tensors (``igamma``): an integer or bool operand refused, in PyTorch's words."""
    compute = _binary(name)

    def method(self, other):
        want = _dtypes.result_type(self._data, other._data if isinstance(other, _t.Tensor) else other)
        if want.kind != "f":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtypes.scalar_name(want)}\'')
        return compute(self, other)

    method.__name__ = name
    return method


def _in_place(name):
    """``Tensor.<name>_``: ``<name>`` written into the tensor, recorded where autograd needs it (the tensor then
    points at the new node), as PyTorch's in-place forms; a result that needs a wider dtype is refused."""

    def method(self, *args, **kwargs):
        return self._apply_in_place(lambda t: getattr(t, name)(*args, **kwargs),
                                    *[a for a in (*args, *kwargs.values()) if isinstance(a, _t.Tensor)])

    method.__name__ = name + "_"
    return method


def _apply_in_place(self, fn, *others):
    """``fn`` of this tensor written into it (``relu(x, inplace=True)``, ``x.sigmoid_()``): recorded where autograd
    needs it (``others``: the op's tensor operands), as PyTorch's in-place forms; a result that needs a wider dtype
    is refused."""
    if self._records(next((o for o in others if o._rg), None)):  # (any operand that needs a gradient)
        self._check_inplace()
        out = fn(self._before_write())
    else:
        out = fn(self)  # nothing records: no tensor here needs a gradient
    if out._data.dtype != self._data.dtype and not np.can_cast(out._data.dtype, self._data.dtype, "same_kind"):
        raise _dtypes.cast_refusal(out._data.dtype, self._data.dtype)
    if out.grad_fn is not None:
        self._rebind(out)
    else:
        _t._check_overlap(self._data)
        _t._keep_shape(self._data, out._data)
        self._data[...] = out._data
        _t._writes.wrote(self._data)
    return self


def _product(a, b):
    """One product node: ``mm``, ``mv``, ``dot`` or ``bmm`` by the operands' dimensions (MatMul names it)."""
    return _t._fn.MatMul.apply(a, b)


def _dtype_name(arr) -> str:
    """An array's dtype as PyTorch's messages name it (Float, Long, ...)."""
    return _DTYPE_NAMES.get(str(arr.dtype), str(arr.dtype))


def _dtype_names(a, b):
    return _dtype_name(a), _dtype_name(b)


_DTYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                "complex128": "ComplexDouble"}


def _check_mm(s1, s2, a, b):
    """``mm`` of shapes ``s1`` and ``s2`` (of arrays ``a`` and ``b``, for their dtypes): PyTorch's refusals."""
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and {s2[0]}x{s2[1]})")
    if a.dtype != b.dtype:
        raise product_dtypes_error(a, b)  # (never two vectors here: the m1, m2 words)


def _check_mv(s1, s2, mat, vec):
    if s1[1] != s2[0]:
        raise RuntimeError(f"size mismatch, got input ({s1[0]}), mat ({s1[0]}x{s1[1]}), vec ({s2[0]})")
    if mat.dtype != vec.dtype:
        m, v = _dtype_names(mat, vec)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v}, {m}, and {v}")


def _check_bmm(a, b, s1=None, s2=None):
    s1, s2 = s1 or a.shape, s2 or b.shape
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] but "
                           f"got: [{s2[0]}, {s2[1]}].")
    if a.dtype != b.dtype:
        x, y = _dtype_names(a, b)
        raise RuntimeError(f"expected scalar type {x} but found {y}")


def _should_fold(t1, t2) -> bool:
    """ATen's ``should_fold``: whether ``t1 @ t2`` folds the larger operand's batch into rows (one ``mm``/``mv``):
    where the smaller one requires grad, or the fold is a view (not for a matrix on the left)."""
    a, b = t1._data, t2._data
    larger = a.ndim >= b.ndim
    big, small = (a.ndim, b.ndim) if larger else (b.ndim, a.ndim)
    if not (big >= 3 and small <= 2):
        return False
    if (t2 if larger else t1)._rg:
        return True
    if a.ndim == 2:
        return False
    x = a if larger else b.swapaxes(-1, -2)
    if not x.size:
        return True
    # (the batch and the rows are one run of memory, stride by stride, as ATen tests it)
    shape, strides = x.shape, [st // x.itemsize for st in x.strides]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big - 2))


def _matmul_route(t1, t2):
    """How PyTorch's matmul multiplies ``t1`` and ``t2``: ("product", None) for one node; ("vm", None) for a vector
    times a matrix; ("fold", transpose); ("squeeze", which operand loses its batch of one, then multiplied again);
    ("bmm", (batch, n, m1, m2, p)). Refuses as the product it would call."""
    a, b = t1._data, t2._data
    d1, d2 = a.ndim, b.ndim
    if not d1 or not d2:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 <= 2 and d2 <= 2:
        if d1 == 2 and d2 == 1:
            _check_mv(a.shape, b.shape, a, b)
        elif d1 == 1 and d2 == 2:
            _check_mm((1, a.shape[0]), b.shape, a, b)
            return "vm", None
        elif d1 == 2:
            _check_mm(a.shape, b.shape, a, b)
        else:  # two vectors: dot's checks, the dtypes first
            if a.dtype != b.dtype:
                raise product_dtypes_error(a, b)
            if a.shape != b.shape:
                raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
                                   f"to have the same number of elements, but got {a.shape[0]} and {b.shape[0]} "
                                   f"elements respectively")
        return "product", None
    if _should_fold(t1, t2):
        transpose = d2 > d1
        if transpose:
            s1 = b.shape[:-2] + b.shape[:-3:-1]
            s2, x, y = (a.shape[::-1] if d1 == 2 else a.shape), b, a
        else:
            s1, s2, x, y = a.shape, b.shape, a, b
        rows = (math.prod(s1[:-1]), s1[-1])
        (_check_mm if len(s2) == 2 else _check_mv)(rows, s2, x, y)
        return "fold", transpose
    if d1 == 3 and d2 == 3 and a.shape[0] != b.shape[0]:  # a batch of one that requires grad: squeezed first
        if a.shape[0] == 1 and t1._rg:
            return "squeeze", 0
        if b.shape[0] == 1 and t2._rg:
            return "squeeze", 1
    n = a.shape[-2] if d1 > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if d2 > 1 else b.shape[0]
    p = b.shape[-1] if d2 > 1 else 1
    batch1, batch2 = a.shape[:-2], b.shape[:-2]
    error = broadcast_error(_Shape(batch1), _Shape(batch2))
    if error is not None:
        raise error
    batch = tuple(np.broadcast_shapes(batch1, batch2))
    size = math.prod(batch)
    _check_bmm(a, b, (size, n, m1), (size, m2, p))
    return "bmm", (batch, n, m1, m2, p)


class _Shape:
    """A shape where an error helper reads ``.shape``."""

    def __init__(self, shape):
        self.shape = shape


class TensorMath:
    """Mixed into :class:`engine.Tensor` (no state of its own)."""

    __slots__ = ()
    _apply_in_place = _apply_in_place

    # ------------------------------------------------------------------ elementwise
    log1p = _unary("log1p")
    expm1 = _unary("expm1")
    log2 = _unary("log2")
    log10 = _unary("log10")
    exp2 = _unary("exp2")
    rsqrt = _unary("rsqrt")
    reciprocal = _unary("reciprocal")
    tan = _unary("tan")
    sinh = _unary("sinh")
    cosh = _unary("cosh")
    asin = arcsin = _unary("asin")
    acos = arccos = _unary("acos")
    atan = arctan = _unary("atan")
    asinh = arcsinh = _unary("asinh")
    acosh = arccosh = _unary("acosh")
    atanh = arctanh = _unary("atanh")
    frac = _unary("frac")
    lgamma = _unary("lgamma")
    digamma = _unary("digamma")
    erfc = _unary("erfc")
    erfinv = _unary("erfinv")

    def polygamma(self, n):
        """The ``n``-th derivative of digamma (``n = 0``: digamma itself), as PyTorch's."""
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
        if n < 0:
            raise RuntimeError("polygamma(n, x) does not support negative n.")
        return _t._fn.Unary.apply(self._floating(), op=_t._fn.elementwise.polygamma_op(int(n)))

    def mvlgamma(self, p):
        """The log of the multivariate gamma function of dimension ``p``: ``sum(lgamma(x - i / 2) for i < p) +
        p (p - 1) / 4 log(pi)``, each element past ``(p - 1) / 2``, as PyTorch's."""
        if p < 1:
            raise RuntimeError("p has to be greater than or equal to 1")
        x = self._floating()
        if xp_of(x._data) is np and x._data.size and not bool((x._data > (p - 1) / 2).all()):
            raise RuntimeError("All elements must be greater than (p-1)/2")
        out = (x - 0.0).lgamma()
        for i in range(1, p):
            out = out + (x - i / 2).lgamma()
        return out + p * (p - 1) / 4 * math.log(math.pi)

    lgamma_ = _in_place("lgamma")
    digamma_ = _in_place("digamma")
    erfc_ = _in_place("erfc")
    erfinv_ = _in_place("erfinv")
    polygamma_ = _in_place("polygamma")
    mvlgamma_ = _in_place("mvlgamma")
    deg2rad = _unary("deg2rad")
    rad2deg = _unary("rad2deg")
    atan2 = arctan2 = _binary("atan2")
    hypot = _binary("hypot")
    logaddexp = _binary("logaddexp")
    xlogy = _binary("xlogy")
    igamma = _floats_only("igamma")
    igammac = _floats_only("igammac")
    i0 = _unary("i0")
    i0_ = _in_place("i0")
    igamma_ = _in_place("igamma")
    igammac_ = _in_place("igammac")

    def remainder(self, other):
        """Python's ``%``: the remainder has the divisor's sign (``fmod``'s has the dividend's)."""
        _t._no_complex(self, "remainder")
        if not self.is_floating_point() and not (isinstance(other, _t.Tensor) and other.is_floating_point()) \
                and not isinstance(other, float):
            return self % other
        return _t._fn.Binary.apply(self, other, op="remainder")

    def fmod(self, other):
        _t._no_complex(self, "fmod")
        if not self.is_floating_point() and not (isinstance(other, _t.Tensor) and other.is_floating_point()) \
                and not isinstance(other, float):
            a, b = _dtypes.promote(self._data, _t._raw(other))
            _t._check_integer_divisor(a, b)
            return _t._wrap(xp_of(self._data).fmod(a, b))
        return _t._fn.Binary.apply(self, other, op="fmod")

    def floor_divide(self, other):
        return self // other

    # ------------------------------------------------------------------ PyTorch's other names and plain answers
    def clip_(self, min=None, max=None):  # noqa: A002
        return self.clamp_(min, max)

    def divide_(self, other, *, rounding_mode=None):
        return self.div_(other, rounding_mode=rounding_mode)

    def multiply_(self, other):
        return self.mul_(other)

    def subtract_(self, other, alpha=1):
        return self.sub_(other, alpha)

    gcd_ = _in_place("gcd")
    lcm_ = _in_place("lcm")

    def is_neg(self):
        return False  # (no lazy negation bit: the engine's tensors hold their values)

    def is_conj(self):
        return False  # (no lazy conjugate bit either: conj() of a complex tensor is a copy, conj_physical's)

    def resolve_neg(self):
        return self

    def resolve_conj(self):
        return self

    def frexp(self):
        """``(mantissa, exponent)``: ``self = mantissa * 2 ** exponent``, the mantissa in [0.5, 1) in magnitude and
        the exponent int32, as PyTorch's (floats only). The mantissa's gradient is ``g / 2 ** exponent``
        (``FrexpBackward0``); the exponent has none."""
        if not self.is_floating_point():
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        exponent = xp_of(self._data).frexp(self._data)[1]
        if self._records():
            mantissa = _t._fn.Unary.apply(self, op="frexp")
        else:
            mantissa = _t._wrap(xp_of(self._data).frexp(self._data)[0])
        return return_types_frexp(mantissa, _t._wrap(exponent.astype(np.int32)))

    def nextafter(self, other):
        """The next float after each element towards ``other`` (a tensor of the same float dtype)."""
        if not isinstance(other, _t.Tensor):
            raise TypeError(f"nextafter(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        _t._check_same_device(self, other)
        if self._records(other):  # (the gradient passes to self as it is, PyTorch's NextafterBackward0)
            return _t._fn.Binary.apply(self, other, op="nextafter")
        a, b = _dtypes.promote(self._data, other._data)
        return _t._wrap(xp_of(self._data).nextafter(a, b))

    def fix(self):
        return self.trunc()

    def sgn(self):
        """``z / |z|`` (0 at 0) of a complex tensor; ``sign`` of a real one."""
        if self._data.dtype.kind == "c":
            return _t._fn.complex_ops.Sgn.apply(self)
        return _t._named(self.sign(), "SgnBackward0")

    def angle(self):
        """The argument of each element, in radians: of a real number pi below 0, else 0 (a zero gradient, as
        PyTorch's); of a complex one ``atan2(imag, real)``, real."""
        if self._data.dtype.kind == "c":
            return _t._fn.complex_ops.Angle.apply(self)
        return _t._fn.Unary.apply(self._floating(), op="angle")

    def negative(self):
        return -self

    def positive(self):
        return self

    def absolute(self):
        return abs(self)

    def clamp_min(self, min):  # noqa: A002 - PyTorch's name
        return _one_bound(self.clamp(min=min), "ClampMin", isinstance(min, _t.Tensor), 1)

    def clamp_max(self, max):  # noqa: A002 - PyTorch's name
        return _one_bound(self.clamp(max=max), "ClampMax", isinstance(max, _t.Tensor), 2)

    def lerp(self, end, weight):
        """``self + weight * (end - self)``, one ``LerpBackward0/1`` node with PyTorch's formula (exact at the ends:
        past a weight of 0.5 it is ``end - (end - self) * (1 - weight)``)."""
        if not isinstance(end, _t.Tensor):
            return self + weight * (end - self)
        if self._data.dtype.kind not in "fc":
            kernel = "lerp_kernel_tensor" if isinstance(weight, _t.Tensor) else "lerp_kernel_scalar"
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtypes.scalar_name(self._data.dtype)}\'')
        if end._data.dtype != self._data.dtype:
            raise RuntimeError(f"expected dtype {c_type_name(self._data.dtype)} for `end` but got dtype "
                               f"{c_type_name(end._data.dtype)}")
        return _t._fn.Lerp.apply(self, end, weight)

    def float_power(self, exponent):
        """The power in float64 (complex128 where either is complex), as PyTorch's ``float_power``."""
        complex_ = self.is_complex() or (exponent.is_complex() if isinstance(exponent, _t.Tensor)
                                         else isinstance(exponent, complex))
        wide = _dtypes.complex128 if complex_ else _dtypes.float64
        e = exponent.to(wide) if isinstance(exponent, _t.Tensor) else exponent
        return self.to(wide).pow(e)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the dtype's largest
        and lowest finite values); the gradient passes where the element was finite."""
        if not self.is_floating_point():
            return self.clone()
        info = np.finfo(self._data.dtype)
        params = (float(nan), float(info.max if posinf is None else posinf), float(info.min if neginf is None
                                                                                else neginf))
        return _t._fn.Activation.apply(self, op="nan_to_num", params=params)  # one NanToNumBackward0

    # ------------------------------------------------------------------ tests and logic (no gradient)
    def isinf(self):
        x = self._data
        return _t._wrap((x == np.inf) | (x == -np.inf))

    def isposinf(self):
        _t._no_complex(self, "isposinf", "isposinf does not support complex inputs.", RuntimeError)
        return _t._wrap(self._data == np.inf)

    def isneginf(self):
        _t._no_complex(self, "isneginf", "isneginf does not support complex inputs.", RuntimeError)
        return _t._wrap(self._data == -np.inf)

    def isreal(self):
        """Whether each element is real: a complex one whose imaginary part is 0 (every element of a real
        tensor)."""
        data = self._data
        if data.dtype.kind == "c":
            return _t._wrap(data.imag == 0)
        return _t._wrap(xp_of(data).ones(data.shape, dtype=bool))

    def signbit(self):
        _t._no_complex(self, "signbit", "signbit is not implemented for complex tensors.")
        return _t._wrap(xp_of(self._data).signbit(self._data))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """``|self - other| <= atol + rtol * |other|`` elementwise, infinities equal only to themselves, NaN equal
        to NaN only with ``equal_nan``."""
        for name, value in (("rtol", rtol), ("atol", atol)):
            if value < 0:
                raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value}")
        a, b = self._data, _t._raw(other)
        xp = xp_of(a)
        if isinstance(other, _t.Tensor) and b.dtype != a.dtype:  # (PyTorch compares only tensors of one dtype)
            raise RuntimeError(f"{_dtypes.scalar_name(a.dtype)} did not match {_dtypes.scalar_name(b.dtype)}")
        if a.dtype.kind == "b" and getattr(b, "dtype", None) is not None and b.dtype.kind == "b":
            return _t._wrap(a == b)  # (bools: close is equal, as in PyTorch; NumPy cannot subtract them)
        with np.errstate(invalid="ignore", over="ignore"):
            try:
                close = (a == b) | (xp.isfinite(a) & xp.isfinite(b) & (abs(a - b) <= atol + rtol * abs(b)))
            except ValueError as error:
                raise_broadcast_error(a, b, error)
        if equal_nan:
            close = close | (xp.isnan(a) & xp.isnan(b))
        return _t._wrap(close)

    def logical_not(self):
        return _t._wrap(self._data == 0)

    def logical_and(self, other):
        return _t._wrap((self._data != 0) & (_t._raw(other) != 0))

    def logical_or(self, other):
        return _t._wrap((self._data != 0) | (_t._raw(other) != 0))

    def logical_xor(self, other):
        return _t._wrap((self._data != 0) ^ (_t._raw(other) != 0))

    def isin(self, test_elements, *, assume_unique=False, invert=False):
        """Whether each element is among ``test_elements`` (a tensor or a number)."""
        for t in (self, test_elements):  # (PyTorch's isin has no complex form)
            if isinstance(t, _t.Tensor) and t._data.dtype.kind == "c":
                raise RuntimeError(f"Unsupported input type encountered for isin(): "
                                   f"{_dtypes.scalar_name(t._data.dtype)}")
        xp = xp_of(self._data)
        test = _t._raw(test_elements)
        test = xp.asarray(test) if not hasattr(test, "shape") else test
        return _t._wrap(xp.isin(self._data, test, assume_unique=assume_unique, invert=invert))

    def bernoulli(self, p=None, *, generator=None):
        """1 with probability ``p`` (this tensor's values when not given), 0 otherwise, in this tensor's dtype."""
        probs = self if p is None else p
        if isinstance(probs, _t.Tensor) and self._data.size and xp_of(self._data) is np and bool(
                ((probs._data < 0) | (probs._data > 1)).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        np_dtype = self._data.dtype if self._data.dtype.kind == "f" else np.dtype(np.float32)
        u = _t._wrap(_t._random.uniform(tuple(self.shape), np_dtype, self.device, generator=generator))
        return (u < _t._raw(probs) if not isinstance(probs, _t.Tensor) else u < probs.detach()).to(self.dtype)

    # ------------------------------------------------------------------ random fills in place (no gradient)
    def _fill_drawn(self, values):
        """``values``, drawn, written into this tensor: refused for a leaf that requires grad (under ``no_grad`` it
        may, as nn.init's fills do), and recorded for a tensor with a node, whose earlier history then gets no
        gradient (as PyTorch's ``h.normal_()``), through the memory of the tensor it views if any."""
        if self._rg and self._records():
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            return self.copy_(_t._wrap(values))
        self._data[...] = values
        _t._writes.wrote(self._data)
        return self

    def bernoulli_(self, p=0.5, *, generator=None):
        """Each element 1 with probability ``p`` (a number, or a tensor of probabilities), else 0."""
        return self._fill_drawn(self.bernoulli(p, generator=generator)._data)

    def random_(self, *args, generator=None, **kwargs):
        """Integers drawn uniformly: ``random_(to)`` from [0, to), ``random_(from, to)`` from [from, to), and
        ``random_()`` from [0, 2 ** mantissa bits] for a float (the integers it holds exactly) or the dtype's range
        for an integer, as PyTorch's."""
        low, high = (kwargs.pop("from", 0), kwargs.pop("to", None)) if not args else (
            (0, args[0]) if len(args) == 1 else args[:2])
        if kwargs:
            raise TypeError(f"random_() got unexpected keyword arguments {sorted(kwargs)}")
        dt = self._data.dtype
        if high is None:
            high = (2 ** (np.finfo(dt).nmant + 1) + 1 if dt.kind == "f" else
                    2 if dt == np.bool_ else int(np.iinfo(dt).max) + 1)
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        drawn = _t._random.integers(int(low), int(high), tuple(self.shape), np.dtype(np.int64), self.device,
                                    generator)
        return self._fill_drawn(drawn.astype(dt))

    def exponential_(self, lambd=1.0, *, generator=None):
        """Exponential draws of rate ``lambd`` (``-log(1 - u) / lambd``, u uniform in [0, 1))."""
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        u = _t._random.uniform_like(self._data, 0.0, 1.0, generator)
        return self._fill_drawn(-xp_of(u).log1p(-u) / lambd)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        """Cauchy draws: ``median + sigma * tan(pi * (u - 1/2))``, u uniform."""
        u = _t._random.uniform_like(self._data, 0.0, 1.0, generator)
        return self._fill_drawn(median + sigma * xp_of(u).tan(np.pi * (u - 0.5)))

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        """``exp`` of normal draws of ``mean`` and ``std``."""
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        return self._fill_drawn(xp_of(self._data).exp(_t._random.normal_like(self._data, mean, std, generator)))

    def geometric_(self, p, *, generator=None):
        """The number of trials to the first success, each a success with probability ``p``: 1, 2, ..."""
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
        u = _t._random.uniform_like(self._data.astype(np.float64) if self._data.dtype.kind != "f" else self._data,
                                    0.0, 1.0, generator)
        xp = xp_of(u)
        return self._fill_drawn(xp.ceil(xp.log1p(-u) / np.log1p(-p)).clip(1, None))

    # ------------------------------------------------------------------ the rest of PyTorch's plain answers
    @property
    def real(self):
        """The real parts of a complex tensor (a view: writing to it writes the tensor, as in PyTorch); a real tensor
        itself."""
        if self._data.dtype.kind != "c":
            return self
        return _t._named(_t._viewed(self, _t._fn.complex_ops.ViewAsReal.apply(self))[..., 0], "SelectBackward0")

    @real.setter
    def real(self, value):
        self.real.copy_(value)

    @property
    def imag(self):
        """The imaginary parts of a complex tensor (a view)."""
        if self._data.dtype.kind != "c":
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return _t._named(_t._viewed(self, _t._fn.complex_ops.ViewAsReal.apply(self))[..., 1], "SelectBackward0")

    @imag.setter
    def imag(self, value):
        self.imag.copy_(value)

    def conj(self):
        """The complex conjugate (a real tensor itself). PyTorch's is a lazy view with a conjugate bit; the
        engine's is a copy, which reads the same (``is_conj()`` is False)."""
        if self._data.dtype.kind != "c":
            return self
        return _t._fn.complex_ops.Conj.apply(self)

    def conj_physical(self):
        if self._data.dtype.kind != "c":
            return self.clone()
        return _t._fn.complex_ops.Conj.apply(self, physical=True)

    def conj_physical_(self):
        if self._data.dtype.kind == "c":
            self.copy_(self.conj_physical())
        return self

    def is_inference(self):
        return False  # (inference_mode's tensors are plain ones here)

    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        """The tensor itself: host memory is not pinned here (a copy to a GPU waits for it either way)."""
        if not isinstance(self._data, np.ndarray):
            raise RuntimeError("cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned")
        return self

    def share_memory_(self):
        return self  # (one process: there is no other to share it with)

    def is_shared(self):
        return False

    @property
    def is_sparse(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def is_meta(self):
        return False

    @property
    def layout(self):
        return _t._dtypes.strided

    @property
    def output_nr(self):
        return self._out_index

    def new(self, *args, **kwargs):
        """PyTorch's legacy constructor: ``x.new(2, 3)`` an uninitialised tensor of x's dtype and device, ``x.new([1,
        2])`` one of those values, ``x.new(t)`` a tensor of t's memory."""
        if len(args) == 1 and isinstance(args[0], _t.Tensor):
            return _t._wrap(args[0]._data)
        if len(args) == 1 and isinstance(args[0], _t.Size):
            return self.new_empty(*args[0], **kwargs)
        if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):  # (a sequence is data, as PyTorch's)
            data = np.asarray(args[0], dtype=self._data.dtype)
            return _t._wrap(to_device_array(data, self.device))
        return self.new_empty(*(args or (0,)), **kwargs)

    def resize_(self, *sizes, memory_format=None):
        """This tensor given the shape ``sizes`` in place: its elements kept in order as far as they go, the
        new ones zeros (PyTorch's are uninitialised); refused for a tensor that requires grad, as PyTorch's."""
        if self._rg:
            raise RuntimeError("cannot resize variables that require grad")
        shape = _t._alloc.sizes(sizes, "resize_")
        data = self._data
        n = int(np.prod(shape)) if shape else 1
        if n == data.size and data.flags.c_contiguous:
            self._data = data.reshape(shape)
        else:
            flat = xp_of(data).zeros(n, dtype=data.dtype)
            keep = builtins.min(n, data.size)
            flat[:keep] = data.reshape(-1)[:keep]
            self._data = flat.reshape(shape)
        return self

    def resize_as_(self, other, memory_format=None):
        return self.resize_(*other.shape)

    def _map_elements(self, fn, others, name):
        if self._rg:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                               "instead.")
        if self._data.__class__ is not np.ndarray:
            raise TypeError(f"{name} is only implemented on CPU tensors")
        arrays = [np.broadcast_to(o._data if isinstance(o, _t.Tensor) else np.asarray(o), self._data.shape)
                  for o in others]
        flat = self._data.reshape(-1)
        columns = [a.reshape(-1) for a in arrays]
        values = [fn(v, *(c[i].item() for c in columns)) for i, v in enumerate(flat.tolist())]
        self._data[...] = np.asarray(values, dtype=self._data.dtype).reshape(self._data.shape)
        _t._writes.wrote(self._data)
        return self

    def nonzero_static(self, *, size, fill_value=-1):
        """The indices of the non-zero elements, ``(size, ndim)``: cut to ``size`` rows, or padded with
        ``fill_value`` (PyTorch's, for a shape known ahead)."""
        if size < 0:
            raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size: {size}")
        found = self.nonzero()
        n, ndim = found.shape[0], self._data.ndim
        if n >= size:
            return found[:size]
        pad = found.new_full((size - n, ndim), fill_value)
        return _t._fn.Cat.apply(found, pad, dim=0) if n else pad

    def dim_order(self, *, ambiguity_check=False):
        """The dimensions from the outermost in memory to the innermost: by stride, largest first (ties keep their
        order), ``(0, 1, ..., n-1)`` for a contiguous tensor."""
        strides = self.stride()
        return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))

    def is_set_to(self, tensor):
        """Whether both are the same view of the same memory: the same start, sizes and strides."""
        return (self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
                and self.stride() == tensor.stride() and self.device == tensor.device)

    def const_data_ptr(self):
        return self.data_ptr()

    def module_load(self, other, assign=False):
        """What ``load_state_dict`` puts in this parameter's or buffer's place: ``other`` (detached with
        ``assign``), as PyTorch's default."""
        return other.detach() if assign else other

    def apply_(self, callable):  # noqa: A002 - PyTorch's name
        """Each element replaced by ``callable(element)`` (a Python function of numbers), in place, on the CPU."""
        return self._map_elements(callable, (), "apply_")

    def map_(self, tensor, callable):  # noqa: A002
        """Each element replaced by ``callable(element, tensor's element)`` (``tensor`` broadcast), in place."""
        return self._map_elements(callable, (tensor,), "map_")

    def map2_(self, x, y, callable):  # noqa: A002
        return self._map_elements(callable, (x, y), "map2_")

    def bfloat16(self, memory_format=None):
        """``to(bfloat16)``: refused by name (NumPy and CuPy have no bfloat16)."""
        return self.to(_dtypes.bfloat16, memory_format=memory_format)

    def __dlpack__(self, stream=None, **kwargs):
        """The tensor's memory as a DLPack capsule (``torch.from_dlpack(t)``, ``numpy.from_dlpack(t)`` share it)."""
        if self._rg:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if stream is None:
            return self._data.__dlpack__(**kwargs)
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def storage_offset(self):
        """Where this tensor's first element lies in the memory it views, counted in elements (0 for a tensor
        that owns its memory)."""
        return _t._fn.shape.storage_of(self._data)[1]

    def unsafe_chunk(self, chunks, dim=0):
        """``chunk``, whose pieces may be written in place (PyTorch's ``UnsafeSplitBackward0``: what that does to
        the gradient is the caller's to know)."""
        return self._chunk(chunks, dim, "Unsafe")

    def unsafe_split(self, split_size, dim=0):
        """``split`` into pieces of ``split_size``, which may be written in place (see ``unsafe_chunk``)."""
        if not isinstance(split_size, (int, np.integer)) or isinstance(split_size, bool):
            raise TypeError(f"unsafe_split(): argument 'split_size' (position 1) must be int, not "
                            f"{type(split_size).__name__}")
        return self._split(split_size, dim, "Unsafe")

    def unsafe_split_with_sizes(self, split_sizes, dim=0):
        return self._split(list(split_sizes), dim, "Unsafe")

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        return self._apply_in_place(lambda t: t.addmm(mat1, mat2, beta=beta, alpha=alpha), mat1, mat2)

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        return self._apply_in_place(lambda t: t.addmv(mat, vec, beta=beta, alpha=alpha), mat, vec)

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return self._apply_in_place(lambda t: t.baddbmm(batch1, batch2, beta=beta, alpha=alpha), batch1, batch2)

    def count_nonzero(self, dim=None):
        d = None if dim is None else _dims(dim, self._data.ndim, "count_nonzero") or None  # (no dims: all)
        return _t._wrap((self._data != 0).sum(axis=d if self._data.ndim else None).astype(np.int64))

    # ------------------------------------------------------------------ reductions
    def prod(self, dim=None, keepdim=False, dtype=None):
        t = self.to(dtype) if dtype is not None else self
        if dtype is None and t._data.dtype.kind in "biu" and t._data.dtype != np.int64:
            t = t.long()  # PyTorch's product of integers and bools is int64 (unless dtype= asks for another)
        if dim is not None:
            dim = _dims(dim, t._data.ndim, "prod")[0]
        return _t._fn.Prod.apply(t, dim=dim, keepdim=keepdim)

    def amin(self, dim=None, keepdim=False):
        """The minimum over ``dim`` (an int, a tuple, or all); ties share the gradient evenly, as PyTorch's."""
        return _t._fn.AMaxMin.apply(self, dim=dim, keepdim=keepdim, mode="min")

    def aminmax(self, *, dim=None, keepdim=False):
        """``(min, max)`` over ``dim`` (every element by default), two outputs of one ``AminmaxBackward0``, as
        PyTorch's; ties share each gradient evenly."""
        if dim is not None:
            dim = self._dim_of(dim, "aminmax")
        return return_types_aminmax(*_t._fn.AMinMax.apply(self, dim, keepdim))

    def logsumexp(self, dim, keepdim=False):
        """``log(sum(exp(self)))`` over ``dim``, shifted by the maximum so that it neither overflows nor
        underflows; its gradient is the softmax."""
        t = self._floating()
        dims = _dims(dim, t._data.ndim, "logsumexp") or tuple(range(t._data.ndim))  # (no dims: all, as sum's)
        if t._data.ndim == 0:  # (dim 0 or -1 of a 0-d tensor, as PyTorch's: one element along it)
            return t.reshape(1).logsumexp(0) if dims else t.clone()
        return _t._fn.Logsumexp.apply(t, tuple(sorted(set(dims))), keepdim=keepdim)  # one LogsumexpBackward0

    def nansum(self, dim=None, keepdim=False):
        """The sum of the elements that are not NaN: one ``NansumBackward0`` (integers: their sum)."""
        if self.is_complex():
            raise RuntimeError(f"nansum on {'CPU' if self.is_cpu else 'CUDA'} does not support complex inputs")
        if not self.is_floating_point():
            return self.sum(dim, keepdim)
        return _t._fn.Nansum.apply(self, dim, keepdim)

    def nanmean(self, dim=None, keepdim=False):
        if self._data.dtype.kind not in "fc":
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                               f"{_dtypes.scalar_name(self._data.dtype)}")
        kept = (~self.isnan()).sum(dim, keepdim)
        return self.nansum(dim, keepdim) / kept

    def median(self, dim=None, keepdim=False):
        """The lower median (of every element, or along ``dim`` with its indices), NaN where a NaN is among
        them, as PyTorch's; the gradient goes to the element picked."""
        _t._no_complex(self, "median")
        if dim is None:  # (the gradient shared evenly among the elements equal to it, as PyTorch's)
            value = self._empty_median() if not self._data.size else self.detach().reshape(-1).median(0).values._data
            return _t._fn.MaxMin.apply(self, mode="median", value=value)
        d = _dims(dim, self._data.ndim, "median")[0]
        if self._data.ndim == 0:  # (dim 0 or -1 of a 0-d tensor, as PyTorch's: one element along it, itself)
            return return_types_median(_t._fn.TakeAlong.apply(self, None, 0, name="MedianBackward1"),
                                       _t._wrap(xp_of(self._data).zeros((), dtype=np.int64)))
        x = self._data
        xp = xp_of(x)
        n = x.shape[d]
        if n == 0:
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        order = self._sort_order(d, False)
        pick = xp.take(order, [(n - 1) // 2], axis=d)
        if x.dtype.kind == "f":  # a NaN along the dim: its first place (NaN sorts last)
            nans = xp.isnan(x)
            pick = xp.where(nans.any(axis=d, keepdims=True), xp.expand_dims(nans.argmax(axis=d), d), pick)
        return return_types_median(*self._picked(pick, d, keepdim, "MedianBackward1"))

    def _empty_median(self):
        """The median of no elements: NaN, as PyTorch's (which has no NaN for integers to give)."""
        if self._data.dtype.kind != "f":
            raise RuntimeError("median(): the median of an empty integer tensor is undefined (PyTorch returns an "
                               "arbitrary number)")
        return xp_of(self._data).asarray(np.nan, dtype=self._data.dtype)

    def nanmedian(self, dim=None, keepdim=False):
        """:meth:`median` of the values that are not NaN (NaN where all are), as PyTorch's."""
        _t._no_complex(self, "median")
        if dim is None:
            value = self._empty_median() if not self._data.size else self.detach().reshape(-1).nanmedian(0).values._data
            return _t._fn.MaxMin.apply(self, mode="nanmedian", value=value)
        d = _dims(dim, self._data.ndim, "nanmedian")[0]
        if self._data.ndim == 0:
            return return_types_nanmedian(_t._fn.TakeAlong.apply(self, None, 0, name="NanmedianBackward1"),
                                          _t._wrap(xp_of(self._data).zeros((), dtype=np.int64)))
        x = self._data
        xp = xp_of(x)
        if x.shape[d] == 0:
            raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
        order = self._sort_order(d, False)  # (NaN last)
        valid = (~xp.isnan(x)).sum(axis=d, keepdims=True) if x.dtype.kind == "f" else x.shape[d]
        k = xp.maximum(xp.asarray(valid) - 1, 0) // 2
        pick = xp.take_along_axis(order, xp.broadcast_to(k, order.shape[:d] + (1,) + order.shape[d + 1:]), axis=d)
        return return_types_nanmedian(*self._picked(pick, d, keepdim, "NanmedianBackward1"))

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """:meth:`quantile` of the values that are not NaN (NaN where all are), as PyTorch's."""
        return self._quantile(q, dim, keepdim, interpolation, skip_nan=True)

    def mode(self, dim=-1, keepdim=False):
        """The most frequent value along ``dim`` (the smallest of those equally frequent) and the place of its last
        occurrence, as PyTorch's; the gradient goes to that place."""
        _t._no_complex(self, "mode")
        if self._data.ndim == 0:
            return return_types_mode(self.clone(), _t._wrap(xp_of(self._data).asarray(0, dtype=np.int64)))
        d = _dims(dim, self._data.ndim, "mode")[0]
        x = xp_of(self._data).moveaxis(self._data, d, -1)
        xp = xp_of(x)
        n = x.shape[-1]
        if n == 0:
            raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
        rows = x.reshape(-1, n)
        ordered = xp.sort(rows, axis=-1)
        start = xp.ones(ordered.shape, dtype=bool)
        start[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        run = xp.cumsum(start, axis=-1) - 1  # each sorted element's run of equal values
        flat_run = (run + xp.arange(rows.shape[0])[:, None] * n).reshape(-1)
        count = xp.bincount(flat_run, minlength=rows.size)[flat_run].reshape(rows.shape)
        best = xp.argmax(count * (n + 1) - run, axis=-1)  # the longest run, the first (smallest) of the longest
        value = xp.take_along_axis(ordered, best[:, None], axis=-1)
        last = xp.where(rows == value, xp.arange(n), -1).max(axis=-1)
        indices = xp.moveaxis(last.reshape(x.shape[:-1] + (1,)), -1, d).astype(np.int64)
        return return_types_mode(*self._picked(indices, d, keepdim, "ModeBackward0"))

    def _picked(self, pick, d, keepdim, name):
        """``(values, indices)`` of the entries ``pick`` chose along ``d`` (one per row, the dimension kept in
        ``pick``), the values from one node named as PyTorch's (``MedianBackward1``), ``d`` dropped from both unless
        ``keepdim``."""
        squeeze = not keepdim and self._data.ndim > 0
        values = _t._fn.TakeAlong.apply(self, pick, d, name=name, squeeze=squeeze)
        indices = pick.astype(np.int64)
        return values, _t._wrap(indices.squeeze(d) if squeeze else indices)

    # ------------------------------------------------------------------ scatters into a copy
    def select_scatter(self, src, dim, index):
        """A copy of ``self`` with ``src`` written at ``index`` along ``dim`` (``out.select(dim, index)``)."""
        d = _dims(dim, self._data.ndim, "select_scatter")[0]
        return self._scattered(src, (slice(None),) * d + (int(index),), "SelectScatterBackward0")

    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        """A copy of ``self`` with ``src`` written into ``self[start:end:step]`` along ``dim``."""
        d = _dims(dim, self._data.ndim, "slice_scatter")[0]
        return self._scattered(src, (slice(None),) * d + (slice(start, end, step),), "SliceScatterBackward0")

    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        """A copy of ``self`` with ``src`` written on its ``diagonal(offset, dim1, dim2)``."""
        out = self.clone()
        view = out.diagonal(offset, dim1, dim2)
        if tuple(view.shape) != tuple(src.shape):
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                               f"{list(src.shape)}, slice size = {list(view.shape)}")
        view.copy_(src)
        return _t._named(out, "DiagonalScatterBackward0")

    def _scattered(self, src, index, name):
        out = self.clone()
        region = out[index]
        if tuple(region.shape) != tuple(src.shape):
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                               f"{list(src.shape)}, slice size = {list(region.shape)}")
        out[index] = src
        return _t._named(out, name)

    # ------------------------------------------------------------------ order and shape
    def flip(self, *dims, **kwargs):
        if kwargs:  # (torch.flip(input, dims=...): the keyword PyTorch names it by)
            if set(kwargs) != {"dims"} or dims:
                bad = next((k for k in kwargs if k != "dims"), "dims")
                raise TypeError(f"flip() got an unexpected keyword argument '{bad}'")
            dims = (kwargs["dims"],)
        dims = dims[0] if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else dims
        dims = _dims(dims, self._data.ndim, "flip")
        return _t._fn.Flip.apply(self, dims if self._data.ndim else ())

    def fliplr(self):
        if self._data.ndim < 2:
            raise RuntimeError("fliplr(): Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self):
        if self._data.ndim < 1:
            raise RuntimeError("flipud(): Input must be >= 1-d.")
        return self.flip(0)

    def roll(self, shifts, dims=None):
        """Elements shifted along ``dims`` by ``shifts``, those past the end coming round to the front; with no
        ``dims``, over the flattened tensor, its shape kept."""
        shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
        if dims is None:
            if len(shifts) != 1:
                raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
            return _t._fn.Flip.apply(self.reshape(-1), (0,), shift=shifts).view(self.shape)
        dims = _dims(dims, self._data.ndim, "roll")
        if len(shifts) != len(dims):
            raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        return _t._fn.Flip.apply(self, dims, shift=tuple(int(s) for s in shifts))

    def movedim(self, source, destination):
        ndim = self._data.ndim
        src = _dims(source, ndim, "movedim")
        dst = _dims(destination, ndim, "movedim")
        if ndim == 0:  # (dim 0 or -1 of a 0-d tensor, as PyTorch's)
            return self.view(())
        if len(src) != len(dst):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                               f"contain the same number of dims as destination ({list(dst)} dims)")
        order = [d for d in range(ndim) if d not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return self.permute(*order)

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    def broadcast_to(self, size):
        return self.expand(*size)

    def tile(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else dims
        dims = (1,) * (self._data.ndim - len(dims)) + tuple(dims)
        return self.repeat(*dims)

    def narrow(self, dim, start, length):
        if not self._data.ndim:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        d = _dims(dim, self._data.ndim, "narrow")[0]
        size = self._data.shape[d]
        if isinstance(start, _t.Tensor) and (start.dim() or start.dtype.is_floating_point or start.dtype.is_complex
                                             or start.dtype == _dtypes.bool_):
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item() if isinstance(start, _t.Tensor) else start)
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
        if start < 0:
            start += size
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def select(self, dim, index):
        """The slice at ``index`` along ``dim``, without that dimension: ``x.select(1, 0)`` is ``x[:, 0]``, a view."""
        if self._data.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = _dims(dim, self._data.ndim, "select")[0]
        size = self._data.shape[d]
        i = int(index.item() if isinstance(index, _t.Tensor) else index)
        if not -size <= i < size:
            raise IndexError(f"select(): index {i} out of range for tensor of size {list(self._data.shape)} at "
                             f"dimension {d}")
        return self[(slice(None),) * d + (i % size,)]

    def tensor_split(self, indices_or_sections, dim=0):
        """Views along ``dim``: ``n`` pieces as equal as can be (the first ones one longer), or the pieces between
        the listed indices (``[1, 3]``: ``[:1]``, ``[1:3]``, ``[3:]``), as PyTorch's."""
        if self._data.ndim == 0:
            raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
        d = _dims(dim, self._data.ndim, "tensor_split")[0]
        size = self._data.shape[d]
        split = indices_or_sections
        if isinstance(split, _t.Tensor):
            if split._data.ndim > 1 or split._data.dtype.kind not in "iu":
                raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                                   "one-dimensional tensor of dtype long")
            split = split.item() if split._data.ndim == 0 else split.tolist()
        if isinstance(split, (int, np.integer)):
            n = int(split)
            if n <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {n}")
            each, extra = divmod(size, n)
            bounds = [i * each + builtins.min(i, extra) for i in range(n + 1)]
        elif isinstance(split, (list, tuple)) and all(isinstance(i, (int, np.integer)) for i in split):
            bounds = [0] + [int(i) for i in split] + [size]
        else:
            raise TypeError("tensor_split(): argument 'indices_or_sections' must be an int, a tuple of ints or a "
                            f"Tensor, not {type(split).__name__}")
        lead = (slice(None),) * d
        return tuple(self[lead + (slice(a, builtins.max(a, b)),)] for a, b in zip(bounds, bounds[1:]))

    def unfold(self, dimension, size, step):
        """The windows of ``size`` along ``dimension``, ``step`` apart, as a new last dimension (``x.unfold(0, 2,
        1)`` of ``[1, 2, 3]`` is ``[[1, 2], [2, 3]]``): a view, as PyTorch's (a write into a window writes ``x``;
        windows that overlap share their elements)."""
        data = self._data
        nd = data.ndim
        d = _dims(dimension, nd, "unfold")[0] if nd else 0
        n = data.shape[d] if nd else 1
        if size > n:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        count = (n - size) // step + 1
        strides = [s // data.itemsize for s in data.strides]
        along = strides[d] if nd else 1
        shape = list(data.shape)
        if nd:
            shape[d], strides[d] = count, step * along
        out = _t._fn.AsStrided.apply(self, tuple(shape) + (size,), tuple(strides) + (along,),
                                     _t._fn.shape.storage_of(data)[1], name="UnfoldBackward0")
        return _t._strided_viewed(self, out)

    def as_strided(self, size, stride, storage_offset=None):
        """A view of this tensor's memory (its storage: the memory of the tensor it views, if any) with ``size``
        and ``stride`` (in elements), its first element ``storage_offset`` elements into that memory (by default
        where this tensor's first element is): PyTorch's ``as_strided``, with its bounds checks. The gradient adds
        up where the view shows an element twice."""
        if storage_offset is None:
            storage_offset = _t._fn.shape.storage_of(self._data)[1]
        out = _t._fn.AsStrided.apply(self, tuple(size), tuple(stride), storage_offset)
        return _t._strided_viewed(self, out)

    def as_strided_scatter(self, src, size, stride, storage_offset=None):
        """A copy of this tensor with ``src`` written where ``as_strided(size, stride, storage_offset)`` shows."""
        out = self.clone()
        if storage_offset is not None:
            storage_offset = storage_offset - _t._fn.shape.storage_of(self._data)[1]
        out.as_strided(size, stride, storage_offset).copy_(src)
        return out

    def index_put(self, indices, values, accumulate=False):
        """``self`` with ``values`` written (``accumulate``: added, a repeated index adding up) at ``indices``, a
        tuple of index tensors as ``x[indices]`` reads them."""
        index = tuple(i._data if isinstance(i, _t.Tensor) else i for i in indices)
        values = values if isinstance(values, _t.Tensor) else _t._wrap(xp_of(self._data).asarray(values))
        if accumulate:
            return _t._fn.IndexAdd.apply(self, values, index=index, name="IndexPutBackward0")
        return _t._fn.SetItem.apply(self, values, index=index)

    def put(self, index, source, accumulate=False):
        """``source``'s values at the flat positions ``index`` (negative from the end; ``accumulate``: added), one
        ``PutBackward0``, PyTorch's checks in its words."""
        if index._data.dtype != np.int64:
            raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                               f"{_dtype_name(index._data)}")
        if source._data.dtype != self._data.dtype:
            names = [_dtype_name(t._data) for t in (self, source)]
            raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                               f"{names[0]} and source.dtype = {names[1]}")
        if source.numel() != index.numel():
            raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                             f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
        n = self.numel()
        flat = index._data.reshape(-1)
        bad = (flat < -n) | (flat >= n)
        if bool(bad.any()):
            raise IndexError(f"out of range: tried to access index {int(flat[bad][0])} on a tensor of {n} elements.")
        return _t._fn.Put.apply(self, index._data, source, bool(accumulate))

    def put_(self, index, source, accumulate=False):
        return self._apply_in_place(lambda t: t.put(index, source, accumulate), source)

    def ravel(self):
        return self.reshape(-1)

    def stride(self, dim=None):
        """The steps, in elements, between neighbours along each dimension (PyTorch's, of a contiguous tensor
        for one made by the engine; NumPy's for a view)."""
        size = self._data.itemsize
        strides = tuple(s // size for s in self._data.strides)
        return strides if dim is None else strides[_dims(dim, self._data.ndim, "stride")[0]]

    def data_ptr(self):
        return _t._data_ptr(self._data)

    # ------------------------------------------------------------------ indexing
    def index_select(self, dim, index):
        d = _dims(dim, self._data.ndim, "index_select")[0]
        idx = _index_vector(index, "index_select")
        if self._data.ndim == 0:  # (dim 0 or -1 of a 0-d tensor, as PyTorch's: one element along it)
            n = int(np.prod(getattr(idx, "shape", (len(idx),))))
            if n != 1:
                raise IndexError(f"index_select(): Index to scalar can have only 1 value, got {n} value(s)")
            return self.reshape(1)[idx.reshape(-1) if hasattr(idx, "reshape") else idx].reshape(())
        return _t._named(self[(slice(None),) * d + (idx,)], "IndexSelectBackward0")

    def masked_select(self, mask):
        shape = np.broadcast_shapes(tuple(self.shape), tuple(mask.shape))
        x = self.expand(*shape) if tuple(self.shape) != shape else self
        m = mask.expand(*shape) if tuple(mask.shape) != shape else mask
        if m._data.dtype != np.bool_:
            raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {m.dtype}")
        return _t._named(x[m], "MaskedSelectBackward0")

    def take(self, index):
        """The entries of the flattened tensor at ``index`` (a long tensor of any shape; negative from the end),
        in its shape: one ``TakeBackward0``, with PyTorch's refusals."""
        idx = index._data if isinstance(index, _t.Tensor) else xp_of(self._data).asarray(index)
        if idx.dtype.kind not in "iu":
            raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                               f"{_dtypes.scalar_name(idx.dtype)}")
        n = self._data.size
        if idx.__class__ is np.ndarray and idx.size:
            bad = idx[(idx < -n) | (idx >= n)]
            if bad.size:
                raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a tensor of {n} "
                                 f"elements.")
        elif idx.size:
            _deferred.check(_deferred.out_of_range(idx, -n, n), IndexError,
                            f"take(): out of range: an index outside [-{n}, {n - 1}] on a tensor of {n} elements")
        return _t._fn.Take.apply(self, idx % n if n else idx)

    def nonzero(self, *, as_tuple=False):
        found = xp_of(self._data).nonzero(self._data if self._data.ndim else self._data.reshape(1))
        if as_tuple:
            return tuple(_t._wrap(i.astype(np.int64)) for i in found)
        xp = xp_of(self._data)
        if self._data.ndim == 0:  # (PyTorch's: one row per true element, and no column)
            return _t._wrap(xp.zeros((int(found[0].size), 0), dtype=np.int64))
        return _t._wrap(xp.stack(found, axis=1).astype(np.int64) if found else
                        xp.zeros((0, 0), dtype=np.int64))

    def argwhere(self):
        return self.nonzero()

    def _scatter_index(self, dim, index, fn):
        """The full index tuple that puts element ``i`` of ``index`` at ``index[i]`` along ``dim``, ``i``
        elsewhere (``scatter``'s addressing), checked as PyTorch checks it."""
        d = _dims(dim, self._data.ndim, fn)[0]
        idx = index._data if isinstance(index, _t.Tensor) else np.asarray(index)
        if idx.dtype.kind not in "iu":
            raise RuntimeError(f"{fn}(): Expected dtype int64 for index")
        if idx.ndim != self._data.ndim:
            raise RuntimeError(f"{fn}(): Index tensor must have the same number of dimensions as self tensor")
        size = self._data.shape[d]
        if idx.__class__ is np.ndarray and idx.size:  # (PyTorch's range: no index from the end)
            bad = _deferred.out_of_range(idx, 0, size)
            if bad.any():
                raise RuntimeError(f"index {int(idx[bad].reshape(-1)[0])} is out of bounds for dimension {d} with "
                                   f"size {size}")
        elif idx.size:
            _deferred.check(_deferred.out_of_range(idx, 0, size), RuntimeError,
                            f"{fn}(): index out of bounds for dimension {d} with size {size}")
        xp = xp_of(self._data)
        return tuple(idx if a == d else xp.arange(n).reshape((n,) + (1,) * (idx.ndim - a - 1))
                     for a, n in enumerate(idx.shape))

    def _scatter_source(self, src, index):
        if not isinstance(src, _t.Tensor):
            return src
        shape = tuple(index.shape)
        return src if tuple(src.shape) == shape else src[tuple(slice(0, n) for n in shape)]

    @staticmethod
    def _scatter_crop(src, index):
        """The leading part of ``src`` that ``scatter`` reads (None: all of it), as a crop of its own node."""
        shape = tuple(index.shape)
        if not isinstance(src, _t.Tensor) or tuple(src.shape) == shape:
            return None
        return tuple(slice(0, n) for n in shape)

    def _on_a_vector(self, fn, dim, *args, **kwargs):
        """``fn`` of a 0-d tensor, as PyTorch's: of its one element as a vector (dim 0 or -1), each 0-d tensor
        argument a vector too, the answer 0-d again."""
        _dims(dim, 1, fn)
        args = [a.reshape(1) if isinstance(a, _t.Tensor) and a._data.ndim == 0 else a for a in args]
        return getattr(self.reshape(1), fn)(0, *args, **kwargs).reshape(())

    def scatter_add(self, dim, index, src):
        """``self`` with ``src[i]`` added at ``index[i]`` along ``dim`` (a repeated index adds up): one
        ``ScatterAddBackward0`` whose edges are ``self`` and ``src``, as PyTorch's."""
        if isinstance(src, _t.Tensor) and src.dtype != self.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        if self._data.ndim == 0:
            return self._on_a_vector("scatter_add", dim, index, src)
        idx = self._scatter_index(dim, index, "scatter_add")
        return _t._fn.IndexAdd.apply(self, src, index=idx, name="ScatterAddBackward0",
                                     crop=self._scatter_crop(src, index))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """``self`` with ``src[i]`` reduced into the place ``index[i]`` along ``dim`` names, by ``reduce`` ('sum',
        'prod', 'mean', 'amax', 'amin'), self's value taking part unless ``include_self=False`` (a GNN's
        aggregation of messages); the gradient as PyTorch's."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
        if self._data.ndim == 0:
            return self._on_a_vector("scatter_reduce", dim, index, src, reduce, include_self=include_self)
        idx = self._scatter_index(dim, index, "scatter_reduce")
        if not isinstance(src, _t.Tensor):
            raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not {type(src).__name__}")
        if src.dtype != self.dtype:
            raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
        _check_scatter_sizes(self, index, src, dim, "scatter_reduce")
        return _t._fn.ScatterReduce.apply(self, self._scatter_source(src, index), index=idx, reduce=reduce,
                                          include_self=bool(include_self))

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        """``self`` with ``source``'s slices along ``dim`` reduced into the slices ``index`` names, by ``reduce``
        ('prod', 'mean', 'amax', 'amin'), as PyTorch's."""
        if reduce not in ("prod", "mean", "amax", "amin"):
            raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                               f"{reduce}.")
        if self._data.ndim == 0:
            return self._on_a_vector("index_reduce", dim, index, source, reduce, include_self=include_self)
        d = _dims(dim, self._data.ndim, "index_reduce")[0] if self._data.ndim else 0
        if index.dim() > 1:
            raise IndexError("index_reduce_(): Index is supposed to be a vector")
        if source.dim() and source.shape[d] != index.numel():
            raise RuntimeError("index_reduce_(): Number of indices should be equal to source.size(dim)")
        if index.numel() and (int(index.min()) < -self.shape[d] or int(index.max()) >= self.shape[d]):
            raise IndexError("index out of range in self")
        shape = [1] * source.dim()
        shape[d] = -1
        full = (index % self.shape[d]).reshape(shape).expand(*source.shape)
        idx = self._scatter_index(d, full, "index_reduce")
        return _t._fn.ScatterReduce.apply(self, source, index=idx, reduce=reduce, include_self=bool(include_self),
                                          name="IndexReduceBackward0")

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """``self`` with ``src[i]`` (or ``value``) written at ``index[i]`` along ``dim``; ``reduce='add'``
        adds instead."""
        if src is None:
            src = value
        if isinstance(src, _t.Tensor) and src.dtype != self.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        if self._data.ndim == 0:
            return self._on_a_vector("scatter", dim, index, src, reduce=reduce)
        if reduce == "add":
            return self.scatter_add(dim, index, src if isinstance(src, _t.Tensor) else
                                    self.new_full(tuple(index.shape), src))
        if reduce == "multiply":  # (the product of what lands on each place, this tensor's value included)
            full = src if isinstance(src, _t.Tensor) else self.new_full(tuple(index.shape), src)
            out = self.detach().scatter_reduce(dim, index, full.detach(), "prod")._data
            if self._records(full):  # (PyTorch records it without a derivative: its backward refuses)
                return _t._fn.NotImplementedDerivative.apply(self, full, value=out, op="aten::scatter")
            return _t._wrap(out)
        if reduce is not None:
            raise RuntimeError("reduce argument must be either add or multiply.")
        idx = self._scatter_index(dim, index, "scatter")
        tensor_src = isinstance(src, _t.Tensor)  # (ScatterBackward0: self and src; ScatterBackward1: a value)
        return _t._fn.SetItem.apply(self, src, index=idx, name="ScatterBackward0" if tensor_src else
                                    "ScatterBackward1", crop=self._scatter_crop(src, index))

    def index_add(self, dim, index, source, *, alpha=1):
        if self._data.ndim == 0:
            return self._on_a_vector("index_add", dim, index, source, alpha=alpha)
        d = _dims(dim, self._data.ndim, "index_add")[0]
        if isinstance(source, _t.Tensor):  # (ATen's checks, its words)
            if source.dim() != self._data.ndim or any(
                    a != b for i, (a, b) in enumerate(zip(source.shape, self.shape)) if i != d):
                raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified "
                                   f"dimension. Got self.shape = {list(self.shape)} source.shape = "
                                   f"{list(source.shape)}")
            if source.dtype != self.dtype:
                raise RuntimeError(f"index_add_(): self ({_dtypes.scalar_name(self._data.dtype)}) and source "
                                   f"({_dtypes.scalar_name(source._data.dtype)}) must have the same scalar type")
        idx = (slice(None),) * d + (_index_vector(index, "index_add"),)
        return _t._fn.IndexAdd.apply(self, source * alpha if alpha != 1 else source, index=idx)

    def index_copy(self, dim, index, source):
        if self._data.ndim == 0:
            return self._on_a_vector("index_copy", dim, index, source)
        d = _dims(dim, self._data.ndim, "index_copy")[0]
        return _t._fn.SetItem.apply(self, source, index=(slice(None),) * d + (_index_vector(index, "index_copy"),),
                                    name="IndexCopyBackward0")

    def index_fill(self, dim, index, value):
        """``self`` with the slices ``index`` names along ``dim`` set to ``value`` (a number: PyTorch's
        ``IndexFillBackward0``; a 0-d tensor, whose gradient is the sum over those places:
        ``IndexFillBackward1``)."""
        if self._data.ndim == 0:
            return self._on_a_vector("index_fill", dim, index, value)
        d = _dims(dim, self._data.ndim, "index_fill")[0]
        name = "IndexFillBackward1" if isinstance(value, _t.Tensor) else "IndexFillBackward0"
        idx = _index_vector(index, "index_fill")
        if isinstance(value, _t.Tensor) and value.requires_grad:  # (a place named twice is filled once: its
            idx = xp_of(idx).unique(idx % max(self._data.shape[d], 1))  # gradient counted once, as PyTorch's)
        return _t._fn.SetItem.apply(self, value, index=(slice(None),) * d + (idx,), name=name)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """The diagonal of the ``dim1``/``dim2`` planes (``offset`` above it, below where negative), as the
        last dimension: a view, as PyTorch's (``x.diagonal().fill_(1)`` sets ``x``'s diagonal)."""
        d1, d2 = _dims((dim1, dim2), self._data.ndim, "diagonal")
        return _t._viewed(self, _t._fn.Diagonal.apply(self, int(offset), d1, d2))

    def diag(self, diagonal=0):
        """A 1-D tensor's values on a square matrix's ``diagonal``; a matrix's ``diagonal`` as a 1-D tensor."""
        if self._data.ndim == 2:  # a copy, as PyTorch's
            return _t._named(_t._fn.Diagonal.apply(self, int(diagonal), 0, 1, copy=True), "DiagonalBackward0_copy")
        if self._data.ndim != 1:
            raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self._data.ndim}D")
        n = self._data.shape[0]
        size = n + abs(diagonal)
        xp = xp_of(self._data)
        i = xp.arange(n)
        rows, cols = (i, i + diagonal) if diagonal >= 0 else (i - diagonal, i)
        return _t._fn.SetItem.apply(self.new_zeros(size, size), self, index=(rows, cols))

    def trace(self):
        if self._data.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self._data.ndim}")
        return _t._fn.Trace.apply(self)  # one TraceBackward0

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        if n < 0:
            raise RuntimeError(f"order must be non-negative but got {n}")
        d = _dims(dim, self._data.ndim, "diff")[0]
        if n == 0:  # (as PyTorch's: the input itself, whatever is prepended or appended)
            return self
        parts = [p for p in (prepend, self, append) if p is not None]
        if len(parts) > 1:
            parts = [p if isinstance(p, _t.Tensor) else self.new_tensor(p) for p in parts]
            x = _t._fn.Cat.apply(*[p.expand(*[s if i != d else p.shape[d] for i, s in enumerate(self.shape)])
                                   for p in parts], dim=d)
        else:
            x = self
        for _ in range(n):
            size = x._data.shape[d]
            hi = x[(slice(None),) * d + (slice(1, size),)]
            lo = x[(slice(None),) * d + (slice(0, builtins.max(size - 1, 0)),)]
            x = hi.logical_xor(lo) if x._data.dtype == np.bool_ else hi - lo
        return x

    # ------------------------------------------------------------------ products
    def bmm(self, mat2):
        """The product of each matrix of a batch with the one at its place in ``mat2``: one ``BmmBackward0``."""
        if not isinstance(mat2, _t.Tensor):
            raise _t._not_a_tensor("bmm", "mat2", mat2)
        if self._data.ndim != 3 or mat2._data.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor" if self._data.ndim != 3 else
                               "batch2 must be a 3D tensor")
        _check_bmm(self._data, mat2._data)
        return _product(self, mat2)

    def mv(self, vec):
        if not isinstance(vec, _t.Tensor):
            raise _t._not_a_tensor("mv", "vec", vec)
        if self._data.ndim != 2 or vec._data.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self._data.ndim}, {vec._data.ndim}")
        return self @ vec

    def _matmul(self, other):
        """``self @ other``, recorded as PyTorch's matmul records it (ATen's ``_matmul_impl``): a product of two
        matrices, a matrix and a vector or two vectors is one node (``MmBackward0``, ``MvBackward0``,
        ``DotBackward0``); a vector times a matrix unsqueezes it first (``SqueezeBackward4`` last). Past two
        dimensions the larger operand's batch is folded into its rows for one ``mm``/``mv`` where that copies
        nothing or the smaller one requires grad; else both are expanded to the broadcast batch and reshaped to
        three dimensions for one ``bmm``. The result is reshaped back (``UnsafeViewBackward0``). Refusals are
        PyTorch's, in the words of the product that refuses (``mat1 and mat2 shapes cannot be multiplied (8x4 and
        3x5)``: the folded shapes)."""
        route, how = _matmul_route(self, other)
        if route == "product":
            return _product(self, other)
        if route == "vm":  # (k,) @ (k, m): (1, k) @ (k, m), squeezed in place (PyTorch's squeeze_)
            out = _product(self.unsqueeze(0), other)
            return _t._named(_t._fn.Reshape.apply(out, out._data.shape[1:]), "SqueezeBackward4")
        if route == "squeeze":
            return self.squeeze(0)._matmul(other) if how == 0 else self._matmul(other.squeeze(0))
        if route == "fold":
            transpose = how
            t1 = other.transpose(-2, -1) if transpose else self
            t2 = (self.t() if self._data.ndim == 2 else self) if transpose else other
            shape = t1._data.shape[:-1]
            rows = t1.reshape(math.prod(shape), t1._data.shape[-1])
            if t2._data.ndim == 2:
                shape += t2._data.shape[1:]
            out = _t._named(_t._fn.Reshape.apply(_product(rows, t2), shape), "UnsafeViewBackward0")
            return out.transpose(-2, -1).contiguous() if transpose and t2._data.ndim == 2 else out
        batch, n, m1, m2, p = how
        size = math.prod(batch)
        d1, d2 = self._data.ndim, other._data.ndim
        t1 = self.expand(batch + (n, m1)).reshape(size, n, m1)
        if d2 == 1:
            t2 = other.expand(batch + (m2,)).reshape(size, m2).unsqueeze(2)
        else:
            t2 = other.expand(batch + (m2, p)).reshape(size, m2, p)
        out = _product(t1, t2)
        if d2 == 1:
            out = out.squeeze(-1)
        shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
        return _t._named(_t._fn.Reshape.apply(out, shape), "UnsafeViewBackward0")

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """``beta * self + alpha * (mat1 @ mat2)``, one ``AddmmBackward0``; with ``beta=0`` self is not read (its
        NaN do not pass)."""
        beta, alpha = _integral_scales(self, beta, alpha)
        return _t._fn.Addmm.apply(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        """``beta * self + alpha * (mat @ vec)``: one ``AddmvBackward0``, PyTorch's checks in its words."""
        if mat._data.ndim != 2 or vec._data.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got {self._data.ndim}, {mat._data.ndim}, "
                               f"{vec._data.ndim}")
        rows, k = mat._data.shape
        if vec._data.shape[0] != k or self._data.shape not in ((rows,), (1,), ()):
            raise RuntimeError(f"size mismatch, got input ({', '.join(map(str, self._data.shape))}), mat "
                               f"({rows}x{k}), vec ({vec._data.shape[0]})")
        if not self._data.dtype == mat._data.dtype == vec._data.dtype:
            names = ", ".join(_dtype_name(t._data) for t in (self, mat))
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names}, and "
                               f"{_dtype_name(vec._data)}")
        beta, alpha = _integral_scales(self, beta, alpha)
        return _t._fn.AddProduct.apply(self, mat, vec, "mv", beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """``beta * self + alpha * bmm(batch1, batch2)``: one ``BaddbmmBackward0``."""
        if batch1._data.ndim != 3 or batch2._data.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor" if batch1._data.ndim != 3 else "batch2 must be a 3D tensor")
        _check_bmm(batch1._data, batch2._data)
        b, n, _ = batch1._data.shape
        expanded_shape(self._data.shape, (b, n, batch2._data.shape[2]), self.type())
        beta, alpha = _integral_scales(self, beta, alpha)
        return _t._fn.AddProduct.apply(self, batch1, batch2, "baddbmm", beta=beta, alpha=alpha)


    # ------------------------------------------------------------------ counting, searching, order statistics
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
        """The distinct values (rows along ``dim``), sorted; with the place of each input element among them and
        how often each occurs. Not differentiable, as PyTorch's; on a GPU it waits for the device (its size)."""
        if self.is_complex():
            raise _t.complex_refusal("unique", self._data.dtype)
        xp = xp_of(self._data)
        d = None if dim is None else _dims(dim, self._data.ndim, "unique")[0]
        try:  # (each NaN its own value, as PyTorch's: NaN != NaN; NumPy's default merges them)
            values, inverse, counts = xp.unique(self._data, return_inverse=True, return_counts=True, axis=d,
                                                equal_nan=False)
        except TypeError:  # (an array library without equal_nan)
            values, inverse, counts = xp.unique(self._data, return_inverse=True, return_counts=True, axis=d)
        out = [_t._wrap(values)]
        if return_inverse:
            inverse = inverse.reshape(self._data.shape) if d is None else inverse.reshape(-1)
            out.append(_t._wrap(inverse.astype(np.int64)))
        if return_counts:
            out.append(_t._wrap(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    def bincount(self, weights=None, minlength=0):
        """How often each of 0, 1, ... occurs in a 1-D tensor of non-negative integers (or the sum of their
        ``weights``)."""
        data = self._data
        if data.ndim != 1 or data.dtype.kind not in "iub":
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if data.size and int(data.min()) < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        xp = xp_of(data)
        if weights is None:
            return _t._wrap(xp.bincount(data, minlength=minlength).astype(np.int64))
        w = weights._data if isinstance(weights, _t.Tensor) else xp.asarray(weights)
        out_dtype = w.dtype if w.dtype.kind == "f" else np.float64
        return _t._wrap(xp.bincount(data, weights=w, minlength=minlength).astype(out_dtype))

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        """Each element (or slice along ``dim``) repeated ``repeats`` times in place (a number, or one count per
        element); the gradient sums back over the copies."""
        if repeats is None:  # torch.repeat_interleave(counts): the indices, each repeated its count
            counts = self
            return _t.Tensor.repeat_interleave(_t._wrap(xp_of(counts._data).arange(counts._data.shape[0])), counts)
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else _dims(dim, self._data.ndim, "repeat_interleave")[0]
        n = x._data.shape[d]
        xp = xp_of(x._data)
        if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):  # ATen's: no index
            if repeats < 0:
                raise RuntimeError("Repeats must be non-negative")
            wide = x.unsqueeze(d + 1)
            shape = list(wide.shape)
            shape[d + 1] = int(repeats)
            return wide.expand(*shape).clone().flatten(d, d + 1)
        counts = repeats._data if isinstance(repeats, _t.Tensor) else repeats
        if getattr(counts, "ndim", 1) == 0 or getattr(counts, "shape", (0,)) == (1,):  # one count for all
            index = xp.repeat(xp.arange(n), int(counts.reshape(())))
        else:
            if counts.shape[0] != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                                   f"repeats.size(0) = {counts.shape[0]} and input.size({d}) = {n}")
            if xp is not np:  # CuPy takes the counts as a list only (a wait for the device, as PyTorch's)
                counts = to_host(counts).tolist()
            index = xp.repeat(xp.arange(n), counts)
        return x.index_select(d, _t._wrap(index))

    def searchsorted(self, values, *, out_int32=False, right=False, side=None, sorter=None):
        """Where each of ``values`` would go in this sorted tensor (its last dimension), as ``torch.searchsorted``:
        the first place (``right``: the last) that keeps the order."""
        side = side or ("right" if right else "left")
        seq = self._data
        vals = values._data if isinstance(values, _t.Tensor) else xp_of(seq).asarray(values)
        for a in (seq, vals):  # (no order of complex numbers: PyTorch's refusal, NumPy's would be lexicographic)
            if a.dtype.kind == "c":
                name = "searchsorted_out_cpu" if a.__class__ is np.ndarray else "searchsorted_cuda"
                raise _t.complex_refusal(name, a.dtype)
        xp = xp_of(seq)
        if sorter is not None:
            seq = xp.take_along_axis(seq, sorter._data, axis=-1)
        if seq.ndim == 1:
            found = xp.searchsorted(seq, vals, side=side)
        else:
            if seq.shape[:-1] != vals.shape[:-1]:
                raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                                   "dimensions of boundaries tensor and input value tensor must match")
            count = math.prod(seq.shape[:-1])  # (not -1: NumPy cannot infer it where the last dimension is empty)
            rows, points = seq.reshape(count, seq.shape[-1]), vals.reshape(count, vals.shape[-1])
            found = (xp.stack([xp.searchsorted(r, v, side=side) for r, v in zip(rows, points)]) if count else
                     xp.zeros(vals.shape, dtype=np.int64)).reshape(vals.shape)
        return _t._wrap(found.astype(np.int32 if out_int32 else np.int64))

    def kthvalue(self, k, dim=-1, keepdim=False):
        """The ``k``-th smallest along ``dim`` and where it is; the gradient goes to that element."""
        _t._no_complex(self, "kthvalue")
        d = _dims(dim, self._data.ndim, "kthvalue")[0]
        n = self._data.shape[d] if self._data.ndim else 1
        if not n:
            raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
        if not 1 <= k <= n:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
        if not self._data.ndim:  # (a 0-d tensor is its own k-th value, at 0)
            return return_types_kthvalue(_t._fn.TakeAlong.apply(self, None, 0, name="KthvalueBackward0"),
                                         _t._wrap(xp_of(self._data).zeros((), dtype=np.int64)))
        order = self._sort_order(d, False)
        pick = xp_of(order).take(order, [k - 1], axis=d)
        return return_types_kthvalue(*self._picked(pick, d, keepdim, "KthvalueBackward0"))

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The ``q``-quantiles (a number or a 1-D tensor of them, each in [0, 1]) over ``dim`` (all elements by
        default), between the sorted values by ``interpolation`` (linear, lower, higher, nearest, midpoint); NaN
        where a NaN is among them, as PyTorch's. The gradient goes to the one or two values used. On a GPU the
        positions are worked out there (no wait for the device; the range of ``q`` is checked on the CPU only, as
        PyTorch checks it)."""
        return self._quantile(q, dim, keepdim, interpolation, skip_nan=False)

    def _quantile(self, q, dim, keepdim, interpolation, skip_nan):
        """:meth:`quantile` (a NaN along the dimension: NaN) and :meth:`nanquantile` (``skip_nan``: over the values
        that are not NaN, which sort last; NaN where all are)."""
        if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
            raise ValueError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                             f"Got {interpolation}")
        if not self.is_floating_point():
            raise RuntimeError(f"quantile() input tensor must be either float or double dtype, got "
                               f"{_dtypes.scalar_name(self._data.dtype)}")
        xp = xp_of(self._data)
        qs = q._data if isinstance(q, _t.Tensor) else xp.asarray(q, dtype=self._data.dtype)
        if qs.ndim > 1 or (xp is np and ((qs < 0) | (qs > 1)).any()):
            raise RuntimeError("quantile() q must be a scalar or 1D tensor with values in the range [0, 1]")
        if self._data.ndim == 0 and dim is not None:  # (its one element, along dim 0 or -1; 0-d again)
            _dims(dim, 1, "quantile")
            return self.reshape(1)._quantile(q, 0, False, interpolation, skip_nan)
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else _dims(dim, self._data.ndim, "quantile")[0]
        n = x._data.shape[d]
        if n == 0:
            raise RuntimeError("quantile() input tensor must be non-empty")
        ordered = x.sort(d).values.movedim(d, -1)  # (..., n), NaN last
        nan = xp.isnan(ordered._data)
        if skip_nan:
            valid = (~nan).sum(axis=-1, keepdims=True)  # (..., 1)
            empty = valid == 0
        else:
            valid = xp.full(tuple(ordered.shape[:-1]) + (1,), n)
            empty = nan.any(axis=-1, keepdims=True)  # a NaN anywhere along the dim: NaN, as PyTorch's
        pos = qs.reshape(-1).astype(self._data.dtype) * (xp.maximum(valid, 1) - 1).astype(self._data.dtype)
        lo, hi = xp.floor(pos), xp.ceil(pos)  # (..., Q)
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = xp.round(pos)  # half to even, as PyTorch's
        a = ordered.gather(-1, _t._wrap(lo.astype(np.int64)))
        if interpolation == "linear":
            weight = _t._wrap(pos - lo)
            if isinstance(q, _t.Tensor) and q._records():  # (q's gradient: (n - 1) times the step, as PyTorch's)
                scale = _t._wrap((xp.maximum(valid, 1) - 1).astype(self._data.dtype))
                weight = q.reshape(-1).to(self.dtype) * scale - _t._wrap(lo)
            out = a + (ordered.gather(-1, _t._wrap(hi.astype(np.int64))) - a) * weight
        elif interpolation == "midpoint":
            out = a + (ordered.gather(-1, _t._wrap(hi.astype(np.int64))) - a) * 0.5
        else:
            out = a
        out = out.masked_fill(_t._wrap(xp.broadcast_to(empty, out.shape)), float("nan")).movedim(-1, 0)  # (Q, ...)
        if keepdim:
            out = out.unsqueeze(1 + d) if dim is not None else out.reshape((out.shape[0],) + (1,) * self._data.ndim)
        return out.squeeze(0) if qs.ndim == 0 else out

    def cross(self, other, dim=None):
        """The cross product of 3-vectors along ``dim`` (the first of size 3 when None, as ``torch.cross``)."""
        if dim is None:
            sizes = [i for i, n in enumerate(self.shape) if n == 3]
            if not sizes:
                raise RuntimeError(f"no dimension of size 3 in input: {list(self.shape)}")
            dim = sizes[0]
        if self._data.ndim != other._data.ndim:
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        d = _dims(dim, self._data.ndim, "cross")[0]
        if self.shape[d] != 3 or other.shape[d] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {self.shape[d]} and "
                               f"{other.shape[d]}")
        error = broadcast_error(self._data, other._data)
        if error is not None:
            raise error
        return _t._fn.Cross.apply(self, other, d)

    # ------------------------------------------------------------------ the rest of the everyday API
    def addcmul(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 * tensor2`` (the second-moment update of a hand-written Adam), in PyTorch's order
        of operations, one ``AddcmulBackward0``."""
        return _t._fn.AddcOp.apply(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 / tensor2``; integer tensors refused, as PyTorch refuses them."""
        if all(t._data.dtype.kind not in "fc" for t in (tensor1, tensor2) if isinstance(t, _t.Tensor)):
            raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release "
                               "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                               "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                               "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                               "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                               "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
        return _t._fn.AddcOp.apply(self, tensor1, tensor2, value=value, divide=True)  # one AddcdivBackward0

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        """``beta * self + alpha * outer(vec1, vec2)``: one ``AddrBackward0``."""
        if vec1._data.ndim != 1 or vec2._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1._data.ndim}-D"
                               if vec1._data.ndim != 1 else
                               f"addr: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
        expanded_shape(self._data.shape, (vec1._data.shape[0], vec2._data.shape[0]), self.type())
        beta, alpha = _integral_scales(self, beta, alpha, refuse=True)
        return _t._fn.AddProduct.apply(self, vec1, vec2, "r", beta=beta, alpha=alpha)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """``beta * self + alpha * sum_b batch1[b] @ batch2[b]``: one ``AddbmmBackward0``."""
        if batch1._data.ndim != 3 or batch2._data.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor" if batch1._data.ndim != 3 else "batch2 must be a 3D tensor")
        (b1, n, k1), (b2, k2, p) = batch1._data.shape, batch2._data.shape
        expanded_shape(self._data.shape, (n, p), self.type())  # (PyTorch's order of checks)
        if b1 != b2:
            raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b1} and {b2}")
        if k1 != k2:
            raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k1} and {k2}x{p})")
        beta, alpha = _integral_scales(self, beta, alpha)
        return _t._fn.AddProduct.apply(self, batch1, batch2, "addbmm", beta=beta, alpha=alpha)

    def inner(self, other):
        """The sum over the last dimension of both (a dot product of vectors; ``a @ b.T`` of matrices)."""
        if self._data.ndim == 0 or other._data.ndim == 0:
            return self * other
        if self._data.shape[-1] != other._data.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(self._data.shape)} and {list(other._data.shape)}")
        return tensordot(self, other, ([-1], [-1]))  # (ATen's)

    def ger(self, vec2):
        return self.outer(vec2)

    def kron(self, other):
        """The Kronecker product: each element of ``self`` times the whole of ``other``, as blocks."""
        nd = builtins.max(self._data.ndim, other._data.ndim)
        sa = (1,) * (nd - self._data.ndim) + tuple(self._data.shape)
        sb = (1,) * (nd - other._data.ndim) + tuple(other._data.shape)
        # ATen's: each viewed with a 1 beside each of its dimensions, multiplied, viewed to the result's shape
        a = _unsafe_view(self, tuple(n for d in sa for n in (d, 1)))  # (a0, 1, a1, 1, ...)
        b = _unsafe_view(other, tuple(n for d in sb for n in (1, d)))  # (1, b0, 1, b1, ...)
        return _unsafe_view(a * b, tuple(x * y for x, y in zip(sa, sb)))

    def rot90(self, k=1, dims=(0, 1)):
        """Rotated by 90 degrees ``k`` times, from the first of ``dims`` towards the second, as PyTorch's."""
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self._data.ndim < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self._data.ndim}")
        (d0,), (d1,) = _dims(dims[0], self._data.ndim, "rot90"), _dims(dims[1], self._data.ndim, "rot90")
        if d0 == d1:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
        return _t._fn.Rearrange.apply(self, op="rot90", args=(k % 4, d0, d1))  # (one Rot90Backward0, a copy)

    def matrix_power(self, n):
        """``self @ self @ ... `` (``n`` times, by squaring); the identity for 0, the inverse's power below."""
        if self._data.ndim < 2 or self._data.shape[-1] != self._data.shape[-2]:
            raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                               f"{self._data.shape[-2] if self._data.ndim >= 2 else 1} by "
                               f"{self._data.shape[-1] if self._data.ndim else 1} matrices")
        n = int(n)
        base = self.inverse() if n < 0 else self
        n = abs(n)
        if n == 0:  # (the identity; in the graph where self needs a gradient, a zero one, as PyTorch's copy_)
            eye = xp_of(self._data).eye(self._data.shape[-1], dtype=self._data.dtype)
            eye = _t._wrap(xp_of(self._data).broadcast_to(eye, self._data.shape).copy())
            return self.clone().copy_(eye) if self._records() else eye
        result = None
        while n:
            if n & 1:
                result = base if result is None else result @ base
            n >>= 1
            if n:
                base = base @ base
        return result.clone() if result is self else result  # (a new tensor, as PyTorch's: never self's memory)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """The last dimension as the diagonals of new ``dim1``/``dim2`` planes (zeros elsewhere)."""
        d1, d2 = _dims((dim1, dim2), self._data.ndim + 1, "diag_embed")
        return _t._fn.DiagEmbed.apply(self, int(offset), d1, d2)  # (one DiagEmbedBackward0, as PyTorch's)

    def diagflat(self, offset=0):
        """The flattened tensor on the ``offset`` diagonal of a square matrix."""
        return self.reshape(-1).diag_embed(offset)

    def fill_diagonal_(self, fill_value, wrap=False):
        """The main diagonal (of all dimensions, each the same size; of a tall matrix, every ``cols + 1`` rows when
        ``wrap``) set to ``fill_value``, as PyTorch's."""
        shape = self._data.shape
        if self._data.ndim < 2:
            raise RuntimeError("dimensions must larger than 1")
        if self._data.ndim > 2 and len(set(shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        xp = xp_of(self._data)
        if self._data.ndim == 2:
            rows, cols = shape
            n = rows if wrap and rows > cols else builtins.min(rows, cols)
            i = xp.arange(n)
            index = (i, i % cols) if wrap else (i, i)
            if wrap and rows > cols:
                keep = (i % (cols + 1)) < cols  # (a row between the blocks stays as it is)
                r = i[keep]
                index = (r, r - (r // (cols + 1)) * (cols + 1))
        else:
            i = xp.arange(shape[0])
            index = (i,) * self._data.ndim
        self[index] = fill_value
        return self

    def logit(self, eps=None):
        """``log(p / (1 - p))``; with ``eps``, ``p`` clamped to ``[eps, 1 - eps]`` first."""
        p = self._floating()
        if eps is not None:
            p = p.clamp(eps, 1 - eps)
        return _t._fn.Unary.apply(p, op="logit")

    def sinc(self):
        """``sin(pi x) / (pi x)``, 1 at 0 (and a zero gradient there): one ``SincBackward0``."""
        return _t._fn.Unary.apply(self._floating(), op="sinc")

    def heaviside(self, values):
        """0 below 0, 1 above, ``values`` at 0 (no gradient, as PyTorch's)."""
        _t._no_complex(self, "heaviside", "heaviside is not yet implemented for complex tensors.", RuntimeError)
        if self._rg or (isinstance(values, _t.Tensor) and values._rg):
            raise NotImplementedError("the derivative for 'heaviside' is not implemented.")
        x, v = self._data, values._data if isinstance(values, _t.Tensor) else values
        xp = xp_of(x)
        return _t._wrap(xp.where(x == 0, v, (x > 0).astype(x.dtype)).astype(np.result_type(x, v)))

    def logcumsumexp(self, dim):
        """``log(cumsum(exp(self)))`` along ``dim``, without overflow: each step a ``logaddexp`` of the running
        value and the next element (exact however far apart they are)."""
        d = _dims(dim, self._data.ndim, "logcumsumexp")[0]
        x = self if self.dtype.is_floating_point or self.is_complex() else self._floating()
        return _t._fn.LogCumSumExp.apply(x, d)  # (a number: itself, as PyTorch's)

    def vdot(self, other):
        """The dot product of two 1-D tensors (for real ones, ``dot``)."""
        if self.dim() != 1 or other.dim() != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {other.dim()}D tensors")
        a = self.conj() if self.is_complex() else self
        return _t._named(a.dot(other), "VdotBackward0")

    def narrow_copy(self, dim, start, length):
        return self.narrow(dim, start, length).clone()

    def histc(self, bins=100, min=0, max=0):  # noqa: A002
        """A histogram of the elements in ``bins`` equal bins between ``min`` and ``max`` (the data's own when both
        are 0); elements outside are not counted, ``max`` itself falls in the last bin. No gradient, as PyTorch."""
        data = self._data
        if data.dtype.kind not in "f":
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_dtypes.scalar_name(data.dtype)}'")
        xp = xp_of(data)
        lo, hi = float(min), float(max)
        if lo == hi and data.size:
            lo, hi = float(data.min()), float(data.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo > hi:
            raise RuntimeError(f"max must be larger than min, but got min {lo} and max {hi}")
        if not (math.isfinite(lo) and math.isfinite(hi)):  # (a NaN or inf among the data, with no range given)
            raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
        counts, _ = xp.histogram(data, bins=int(bins), range=(lo, hi))
        return _t._wrap(counts.astype(data.dtype))

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """The elements with each run of equal neighbours kept once (of the flattened tensor; with ``dim``, the
        slices along it, a run being equal slices), and optionally which run each element (slice) is in and each
        run's length, as PyTorch's."""
        xp = xp_of(self._data)
        if dim is None:
            data = self._data.reshape(-1)
            rows = data[:, None]
        else:
            d = _dims(dim, self._data.ndim, "unique_consecutive")[0]
            if any(n == 0 for i, n in enumerate(self._data.shape) if i != d):
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                                   "applied")
            data = xp.moveaxis(self._data, d, 0)
            rows = data.reshape(data.shape[0], math.prod(data.shape[1:]))
        n = rows.shape[0]
        if n == 0:
            starts = xp.zeros(0, dtype=bool)
        else:
            starts = xp.concatenate([xp.ones(1, dtype=bool), (rows[1:] != rows[:-1]).any(axis=1)])
        kept = data[starts]
        values = _t._wrap(kept if dim is None else xp.moveaxis(kept, 0, d))
        if not (return_inverse or return_counts):
            return values
        out = [values]
        if return_inverse:
            inverse = (xp.cumsum(starts) - 1).astype(np.int64)
            out.append(_t._wrap(inverse.reshape(self._data.shape) if dim is None else inverse))
        if return_counts:
            edges = xp.concatenate([xp.nonzero(starts)[0], xp.asarray([n])])
            out.append(_t._wrap(xp.diff(edges).astype(np.int64)))
        return tuple(out)

    def gcd(self, other):
        """The greatest common divisor of integers, elementwise."""
        return self._integer_op("gcd", other)

    def lcm(self, other):
        return self._integer_op("lcm", other)

    def _integer_op(self, name, other):
        a, b = _dtypes.promote(self._data, _t._raw(other))
        if getattr(a, "dtype", np.dtype(np.int64)).kind not in "iu" or (hasattr(b, "dtype") and b.dtype.kind not in
                                                                         "iu"):
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Float'")
        return _t._wrap(getattr(xp_of(self._data), name)(a, b))

    def masked_scatter(self, mask, source):
        """This tensor with the elements where ``mask`` (broadcast) is true replaced, in order, by ``source``'s first
        ones: one ``MaskedScatterBackward0``, PyTorch's checks in its words."""
        if mask._data.dtype != np.bool_:
            raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                               f"{_dtype_name(mask._data)}")
        if source._data.dtype != self._data.dtype:
            names = [_dtype_name(t._data) for t in (self, source)]
            raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got{names[0]} and "
                               f"{names[1]}")  # (PyTorch's words, its missing space too)
        error = broadcast_error(self._data, mask._data)
        if error is not None:
            raise error
        if int(xp_of(mask._data).broadcast_to(mask._data, np.broadcast_shapes(self._data.shape, mask._data.shape))
               .sum()) > source.numel():
            raise RuntimeError("Number of elements of source < number of ones in mask")
        return _t._fn.MaskedScatter.apply(self, mask._data, source)

    def masked_scatter_(self, mask, source):
        def write(t):  # (after the in-place checks, as PyTorch's order)
            if np.broadcast_shapes(t._data.shape, mask._data.shape) != t._data.shape:
                raise RuntimeError(f"masked_scatter_: expected mask to be broadcastable to {list(t._data.shape)}")
            return t.masked_scatter(mask, source)

        return self._apply_in_place(write, source)

    def ldexp(self, other):
        """``self * 2 ** other``, in a float dtype (the default one for integers), as PyTorch's."""
        want = _dtypes.result_type(self._data, other._data if isinstance(other, _t.Tensor) else other)
        want = _dtypes.get_default_dtype() if want.kind not in "fc" else _dtypes.from_numpy_dtype(want)
        if isinstance(other, _t.Tensor) and other._data.dtype.kind not in "fc":
            other = other.to(want)  # (an integer exponent: 2 ** e in the result's dtype; a float one: in its own)
        two = 2.0 ** other
        return self.to(want) * (two.to(want) if isinstance(two, _t.Tensor) else two)

    def ldexp_(self, other):
        return self.mul_(2.0 ** other if isinstance(other, _t.Tensor) else 2.0 ** other)

    def copysign(self, other):
        """``|self|`` with the sign of ``other`` (of -0.0 too)."""
        _t._no_complex(self, "copysign")
        want = _dtypes.result_type(self._data, other._data if isinstance(other, _t.Tensor) else other)
        x = self.to(_dtypes.from_numpy_dtype(want)) if want.kind in "fc" else self._floating()
        o = other._data if isinstance(other, _t.Tensor) else np.asarray(other, dtype=x._data.dtype)
        negative = _t._wrap(xp_of(x._data).signbit(o))
        out = x.abs().where(~negative, -x.abs())
        if isinstance(other, _t.Tensor) and other.requires_grad:  # its gradient is 0, as PyTorch's (never NaN)
            out = out.where(_t._wrap(xp_of(out._data).ones(out._data.shape, dtype=bool)), other.to(out.dtype))
        return out

    def fmax(self, other):
        """The elementwise maximum, a NaN taking the other's value (NaN only where both are)."""
        return self._nan_ignoring(other, "max")

    def fmin(self, other):
        """The elementwise minimum, a NaN taking the other's value (NaN only where both are)."""
        return self._nan_ignoring(other, "min")

    def _nan_ignoring(self, other, mode):
        return _t._fn.Binary.apply(self, other, op="f" + mode)  # one FmaxBackward0 (FminBackward0), as PyTorch's

    def logaddexp2(self, other):
        """``log2(2**self + 2**other)``, without the overflow."""
        ln2 = float(np.log(2.0))
        return (self * ln2).logaddexp(other * ln2) / ln2

    def cummax(self, dim):
        """``(values, indices)``: the running maximum along ``dim`` and where it was (the later one where equal;
        a NaN stays), as PyTorch's; the gradient goes to those places."""
        return self._cumulative_extreme(dim, "max")

    def cummin(self, dim):
        """``(values, indices)``: the running minimum along ``dim`` and where it was, as PyTorch's."""
        return self._cumulative_extreme(dim, "min")

    def _cumulative_extreme(self, dim, mode):
        _t._no_complex(self, f"cum{mode}")
        x = self._data
        name = "CummaxBackward0" if mode == "max" else "CumminBackward0"
        if x.ndim == 0:
            if dim not in (0, -1):
                raise IndexError(f"cum{mode}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
            return _CUMULATIVE[mode](_t._fn.TakeAlong.apply(self, None, 0, name=name),
                                     _t._wrap(xp_of(x).zeros((), dtype=np.int64)))
        d = _dims(dim, x.ndim, f"cum{mode}")[0]
        xp = xp_of(x)
        extreme = backend.running("maximum" if mode == "max" else "minimum", x, d)
        here = (x == extreme) | (xp.isnan(x) if x.dtype.kind == "f" else False)
        positions = xp.arange(x.shape[d]).reshape((-1,) + (1,) * (x.ndim - d - 1))
        indices = backend.running("maximum", xp.where(here, positions, -1), d).astype(np.int64)
        return _CUMULATIVE[mode](_t._fn.TakeAlong.apply(self, indices, d, name=name), _t._wrap(indices))

    def sum_to_size(self, *size):
        """Summed down to ``size``, which this tensor's shape must broadcast from (a gradient's unbroadcast)."""
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        shape = self._data.shape
        try:
            if np.broadcast_shapes(tuple(size), shape) != shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.") from None
        if not size:  # (ATen's sum_to: to no dimensions is the whole sum, even of a 0-d tensor: bool to int64)
            return self.sum()
        lead = len(shape) - len(size)
        out = self.sum(tuple(range(lead))) if lead else self
        dims = tuple(i for i, n in enumerate(size) if n == 1 and out._data.shape[i] != 1)
        return out.sum(dims, keepdim=True) if dims else out

    def take_along_dim(self, indices, dim=None):
        """``gather`` with ``indices`` broadcast to this tensor's other dimensions; over the flattened tensor
        without ``dim``. With ``dim``, a negative index counts from the end, as PyTorch's and NumPy's
        ``take_along_axis`` (one past either end is refused, where torch 2.13 wraps it round)."""
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        d = _dims(dim, self._data.ndim, "take_along_dim")[0]
        if indices._data.dtype.kind in "iu" and self._data.ndim:
            size = self._data.shape[d]
            raw = indices._data
            counted = (raw < 0) & (raw >= -size)  # (one past the start stays as it is: gather names it)
            indices = _t._wrap(raw + counted.astype(raw.dtype) * raw.dtype.type(size))
        shape_self = list(self._data.shape)
        shape_idx = list(indices._data.shape)
        shape_self[d] = shape_idx[d] = 1
        common = np.broadcast_shapes(tuple(shape_self), tuple(shape_idx))
        want_self = list(common)
        want_self[d] = self._data.shape[d]
        want_idx = list(common)
        want_idx[d] = indices._data.shape[d]
        return self.expand(*want_self).gather(d, indices.expand(*want_idx))

    def split_with_sizes(self, split_sizes, dim=0):
        return self.split(list(split_sizes), dim)

    def hsplit(self, sections):
        """``tensor_split`` along the second dimension (the first of a vector)."""
        if self._data.ndim == 0:
            raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
                               "dimensions!")
        return self._even_split(sections, 1 if self._data.ndim > 1 else 0, "hsplit")

    def vsplit(self, sections):
        if self._data.ndim < 2:
            raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with "
                               f"{self._data.ndim} dimensions!")
        return self._even_split(sections, 0, "vsplit")

    def dsplit(self, sections):
        if self._data.ndim < 3:
            raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with "
                               f"{self._data.ndim} dimensions!")
        return self._even_split(sections, 2, "dsplit")

    def _even_split(self, sections, dim, name):
        if isinstance(sections, (int, np.integer)) and (int(sections) == 0
                                                        or self._data.shape[dim] % int(sections) != 0):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {self._data.shape[dim]} is not divisible by the split_size "
                               f"{int(sections)}!")
        return self.tensor_split(sections, dim)

    def dist(self, other, p=2):
        """The ``p``-norm of ``self - other`` (broadcast): one ``DistBackward0``; of complex tensors the norm of
        the difference's moduli."""
        error = broadcast_error(self._data, other._data)
        if error is not None:
            raise error
        if self.is_complex() or other.is_complex():
            return (self - other).norm(float(p))
        a, b = self, other
        if a.dtype != b.dtype:
            a, b = a._floating(), b._floating()
        return _t._fn.Dist.apply(a if a.is_floating_point() else a._floating(),
                                 b if b.is_floating_point() else b._floating(), float(p))

    def renorm(self, p, dim, maxnorm):
        """Each slice along ``dim`` whose ``p``-norm is over ``maxnorm`` scaled down to it (PyTorch's factor,
        ``maxnorm / (norm + 1e-7)``)."""
        if self._data.ndim < 2:
            raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self._data.ndim} dimensions")
        if maxnorm < 0:
            raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
        if p <= 0:
            raise RuntimeError("renorm: non-positive-norm not supported")
        nd = self._data.ndim
        if not -nd <= dim < nd:
            _t._dim_error(dim, nd)
        d = dim % nd
        return _t._fn.Renorm.apply(self, float(p), d, float(maxnorm))  # (one RenormBackward0)

    def cov(self, *, correction=1, fweights=None, aweights=None):
        """The covariance of the rows (variables) over the columns (observations), as ``numpy.cov``; ATen's
        formula and nodes (a mean by sum and division, the centred rows' product with their transpose, divided by
        the degrees of freedom, squeezed), its checks in its words; degrees of freedom at or below 0 warn and
        divide by 0, as PyTorch's."""
        if self._data.ndim > 2:
            raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                               f"{self._data.ndim} dimensions")
        if self._data.dtype == np.bool_:
            raise RuntimeError("cov(): bool dtype is not supported for input")
        x = self if self._data.ndim == 2 else self.view(1, -1)
        n = x._data.shape[1]
        w = None
        for name, weights, kind in (("fweights", fweights, "iu"), ("aweights", aweights, "f")):
            if weights is None:
                continue
            if weights.dim() > 1:
                raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                                   f"{weights.dim()} dimensions")
            if weights._data.dtype.kind not in kind:
                raise RuntimeError(f"cov(): expected {name} to have {'integral' if kind == 'iu' else 'floating point'}"
                                   f" dtype but got {name} with {_dtype_name(weights._data)} dtype")
            if weights.numel() != n:
                raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                                   f"input but got {weights.numel()} != {n}")
            if weights.numel() and bool((weights < 0).any()):
                raise RuntimeError(f"cov(): {name} cannot be negative")
            w = weights if w is None else w * weights
        total = w.sum() if w is not None else _t._wrap(xp_of(x._data).asarray(n, dtype=np.int64))
        if w is not None and not bool(total != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        mean = (x * w if w is not None else x).sum(1) / total
        if w is not None and correction == 0:
            norm = total
        elif w is not None and aweights is not None:  # (ATen's: correction * sum / total)
            norm = total - _t._scalar_node((w * aweights).sum() * correction, "MulBackward1") / total
        else:
            norm = total - correction
        if bool(norm <= 0):
            warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                          "observations.", UserWarning, stacklevel=2)
            norm = norm.zero_() if norm.grad_fn is not None else norm * 0  # (ATen's zero_ in place)
        centred = x - mean.unsqueeze(1)
        product = centred.mm((centred * w if w is not None else centred).t().conj())  # (x x^H: complex rows too)
        return (product / norm).squeeze()

    def corrcoef(self):
        """The correlation coefficients of the rows, ``cov / sqrt(diag)`` down and across, clipped to [-1, 1]
        (ATen's)."""
        if self._data.ndim > 2:
            raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                               f"{self._data.ndim} dimensions")
        c = self.cov()
        if c._data.ndim == 0:
            return c / c
        d = c.diagonal().sqrt()
        r = c / d.view(-1, 1) / d.view(1, -1)
        if r.is_complex():  # (ATen's: the real and the imaginary parts each clipped to [-1, 1])
            return _t._fn.Complex.apply(r.real.clip(-1, 1), r.imag.clip(-1, 1))
        return r.clip(-1, 1)

    def is_signed(self) -> bool:
        return self._data.dtype.kind in "if"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_nonzero(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous" if self._data.size
                               else "Boolean value of Tensor with no values is ambiguous")
        return bool(self.item())

    def is_same_size(self, other) -> bool:
        return self._data.shape == other._data.shape

    @property
    def is_cpu(self) -> bool:
        return self._data.__class__ is np.ndarray

    @property
    def itemsize(self) -> int:
        return self._data.dtype.itemsize

    def ndimension(self) -> int:
        return self._data.ndim

    def greater(self, other):
        return self > other

    def greater_equal(self, other):
        return self >= other

    def less(self, other):
        return self < other

    def less_equal(self, other):
        return self <= other

    def not_equal(self, other):
        return self != other

    def true_divide(self, other):
        return self / other

    def byte(self, memory_format=None):
        return self.to(_dtypes.uint8, memory_format=memory_format)

    @property
    def mH(self):  # noqa: N802 - PyTorch's name
        """The conjugate transpose of the last two dimensions (the transpose, for real tensors)."""
        return self.mT.conj()

    @property
    def H(self):  # noqa: N802 - PyTorch's name
        if self._data.ndim > 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self._data.ndim}-D "
                               "tensor.")
        return (self.t() if self._data.ndim == 2 else self).conj()

    def adjoint(self):
        return self.mT.conj()

    def _shape_in_place(self, make):
        """A shape op done in place (``unsqueeze_``, ``t_``, ...): this tensor becomes ``make`` of itself, a view;
        noted as a write, as PyTorch counts it one (a node that saved the tensor then refuses its backward)."""
        if self._records():
            self._check_inplace()
            out = make(self._shallow())
            self._rebound_at = _t._writes.wrote(self._data)
            self._remember(self._data)
        else:
            out = make(self)
            _t._writes.wrote(self._data)
        self._data, self._rg, self.grad_fn, self._out_index = out._data, out._rg, out.grad_fn, out._out_index
        return self

    def unsqueeze_(self, dim):
        return self._shape_in_place(lambda t: t.unsqueeze(dim))

    def squeeze_(self, dim=None):
        return self._shape_in_place(lambda t: t.squeeze(dim))

    def t_(self):
        return self._shape_in_place(lambda t: t.t())

    def transpose_(self, dim0, dim1):
        return self._shape_in_place(lambda t: t.transpose(dim0, dim1))

    swapaxes_ = swapdims_ = transpose_

    # ------------------------------------------------------------------ linear algebra (engine.linalg's doors)
    def inverse(self):
        _t._fn.linalg.check_square(self, "inv")
        return _t._fn.Inverse.apply(self)

    def det(self):
        _t._fn.linalg.check_square(self, "det")
        return _t._fn.Det.apply(self)

    def logdet(self):
        """``log det``: NaN where the determinant is negative, -inf where it is 0, as PyTorch's."""
        sign, logabs = self.slogdet()
        if self.is_complex():  # (log |det| + i arg det: the phase's gradient through the sign, as PyTorch's)
            return logabs + sign.log()
        return _t._fn.Where.apply(sign == -1, float("nan"), logabs)  # (ATen's; a zero determinant: -inf)

    def slogdet(self):
        """``(sign, log |det A|)``: the determinant without its overflow, two outputs of one node; the gradient
        flows through the second, and through a complex sign's phase."""
        _t._fn.linalg.check_square(self, "slogdet")
        return return_types_slogdet(*_t._fn.LogAbsDet.apply(self))


def _one_bound(out, name: str, tensor_bound: bool, position: int):
    """``clamp_min``/``clamp_max``'s node as PyTorch's: ``ClampMinBackward0`` with a number, ``...Backward1`` with
    a tensor bound, whose edges are the input and that bound only."""
    node = out.grad_fn
    if node is not None:
        node.backward_name = name + ("Backward1" if tensor_bound else "Backward0")
        if tensor_bound:
            node._edges = (0, position)
    return out


def tensordot(a, b, dims=2):
    """``torch.tensordot`` (engine.functional calls it): the sum of products over ``dims`` of ``a`` and of ``b``,
    the last ``dims`` of ``a`` with the first of ``b`` (a number), or the two lists' dimensions; ATen's permutes,
    reshapes and one matrix product."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                          [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
    dims_a, dims_b = [d % a.dim() for d in dims_a], [d % b.dim() for d in dims_b]
    for da, db in zip(dims_a, dims_b):  # (a dimension of size 1 broadcasts: the other side summed over it, ATen's)
        if b.shape[db] == 1:
            a = a.sum(da, keepdim=True, dtype=a.dtype)  # (in its own dtype: an int32 sum stays int32, as ATen's)
        elif a.shape[da] == 1:
            b = b.sum(db, keepdim=True, dtype=b.dtype)
        elif a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = 1
    for d in dims_a:
        k *= a.shape[d]
    left = a.permute(*free_a, *dims_a).reshape(-1, k)
    right = b.permute(*dims_b, *free_b).reshape(k, -1)
    return (left @ right).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])


def _unsafe_view(t, shape):
    """ATen's ``_unsafe_view``: ``t`` in ``shape``, its node ``UnsafeViewBackward0``, the result not a view."""
    return _t._named(_t._fn.Reshape.apply(t, shape), "UnsafeViewBackward0")


def _integral_scales(base, beta, alpha, refuse=False):
    """``beta`` and ``alpha`` for an integer (or bool) ``base``, as PyTorch 2.13's: a float cut toward zero (addmm,
    addmv, addbmm, baddbmm), or refused (addr)."""
    if base._data.dtype.kind not in "iub":
        return beta, alpha
    for name, value in (("beta", beta), ("alpha", alpha)):
        if refuse and isinstance(value, (float, np.floating)):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    return tuple(math.trunc(v) if isinstance(v, (float, np.floating)) and math.isfinite(v) else v
                 for v in (beta, alpha))


def _scaled_sum(base, product, beta, alpha):
    """``beta * base + alpha * product``, PyTorch's ``addmm`` family: with ``beta=0`` the base is not read."""
    product = product * alpha if alpha != 1 else product
    if beta == 0:
        return product
    return (base * beta if beta != 1 else base) + product


def _index_vector(index, fn):
    idx = index._data if isinstance(index, _t.Tensor) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector")
    if idx.dtype.kind not in "iu":
        raise IndexError(f"{fn}(): Expected dtype int32/int64 for index")
    return idx.reshape(-1)


def _check_scatter_sizes(self, index, src, dim, fn):
    if isinstance(src, _t.Tensor) and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = _dims(dim, self._data.ndim, fn)[0] if self._data.ndim else 0
    for a, n in enumerate(index.shape):
        if n > src.shape[a] or (a != d and n > self.shape[a]):
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
                               f"apart from dimension {d} and to be no larger size than src {list(src.shape)}")
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= self.shape[d]):
        raise RuntimeError(f"index {int(index.max())} is out of bounds for dimension {d} with size {self.shape[d]}")


_IN_PLACE = (
    "exp", "log", "sqrt", "sigmoid", "tanh", "sin", "cos", "erf", "abs", "neg", "floor", "ceil", "trunc", "round",
    "sign", "square", "frac", "fix", "log1p", "expm1", "log2", "log10", "exp2", "rsqrt", "reciprocal", "tan",
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "deg2rad", "rad2deg", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "absolute", "negative", "sgn", "clamp_min", "clamp_max", "nan_to_num",
    "lerp", "atan2", "arctan2", "hypot", "xlogy", "remainder", "fmod", "floor_divide", "float_power", "logical_not",
    "logical_and", "logical_or", "logical_xor", "scatter", "scatter_add", "index_add", "index_copy", "index_fill",
    "cumsum", "cumprod", "index_put", "put", "addcmul", "addcdiv", "addr", "addbmm", "logit", "sinc", "copysign",
    "heaviside", "logaddexp2", "true_divide", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
    "less_equal", "not_equal", "fmax", "fmin", "renorm", "scatter_reduce", "index_reduce", "nextafter",
)
for _name in _IN_PLACE:
    setattr(TensorMath, _name + "_", _in_place(_name))
del _name
