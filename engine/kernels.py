"""Fused GPU kernels for the elementwise chains in the backward passes the tutorial's step runs.

Each replaces a chain of CuPy ufuncs (one kernel launch per operation, and a temporary array each) by one
``cupy.ElementwiseKernel`` doing the same arithmetic in the same order, so results are bit-for-bit those of
the chain: ``gy * (a + a)`` (the backward of ``a ** 2``) and ``where(x >= lo, gy, 0)`` (of ``clamp(min=lo)``,
the ReLU). In a CUDA graph that is two nodes fewer per step. Used only for CuPy arrays of float32 or float64 of one
shape and dtype; anything else, or a CuPy without ``ElementwiseKernel``, keeps the chain.

On the CPU, :func:`pass_where` is the ReLU's and clamp's backward and :func:`zero_where` the tutorial's
``grad_h[h < 0] = 0``, both without a branch per element (in C, ``engine/_ckernels.c``, where it was built; with
NumPy's bitwise ufuncs where it was not: the same bits either way), and :func:`relu` is ``clamp(min=0)`` through
NumPy's vectorised loop.

A masked gradient is PyTorch's ``where(mask, grad, 0)``, not ``grad * mask``: where the mask is false an infinite
or NaN gradient gives 0, as PyTorch's and the tutorial's hand-written ``grad_h[h < 0] = 0`` give it.
"""

from __future__ import annotations

import importlib
import math
import os
from math import copysign

import numpy as np

from . import backend

_ck = None  # engine/_ckernels.c, where it was built and GRADSCOPE_PURE_PYTHON is not set
if os.environ.get("GRADSCOPE_PURE_PYTHON", "").strip() in ("", "0"):
    try:
        _ck = importlib.import_module("._ckernels", __package__)
    except ImportError:  # not built: NumPy's ufuncs, the same bits
        pass


def set_threads(n: int) -> None:
    """The threads of _ckernels' long passes (GELU, layer norm): engine.threads.set_num_threads's count."""
    if _ck is not None:
        _ck.set_threads(int(n))


def threads() -> int:
    return 1 if _ck is None else _ck.get_threads()


# One thread unless torch.set_num_threads says: OpenBLAS's threads spin for a while after each product, and a pass
# that starts threads of its own right after one competes with them for the cores (on the 2-core machine, the GPT
# step's GELU after a Linear took 0.4 ms on one thread and 2-3 ms on two, though alone two take 0.26 against 0.39).
def implementation() -> str:
    """Which masked writes run on the CPU: "compiled" (_ckernels.c) or "python" (not built, or
    GRADSCOPE_PURE_PYTHON=1)."""
    return "python" if _ck is None else "compiled"

_FLOATS = (np.float32, np.float64)
_kernels: dict = {}


def _kernel(name: str):
    k = _kernels.get(name)
    if k is None:
        cupy = backend.get_cupy()
        make = getattr(cupy, "ElementwiseKernel", None)
        if make is None:
            k = False
        elif name == "pow2_backward":
            k = make("T gy, T a", "T ga", "ga = gy * (a + a)", "engine_pow2_backward")
        else:
            k = make("T gy, T x, T lo", "T gx", "gx = x >= lo ? gy : (T)0", "engine_clamp_min_backward")
        _kernels[name] = k
    return k


def _fusable(gy, x) -> bool:
    return (gy.__class__ is x.__class__ and gy.__class__ is not np.ndarray and gy.dtype == x.dtype
            and gy.dtype in _FLOATS and gy.shape == x.shape)


def pow2_backward(gy, a):
    """``gy * (a + a)``."""
    if gy.__class__ is not np.ndarray and _fusable(gy, a):  # NumPy: straight to the expression
        k = _kernel("pow2_backward")
        if k:
            return k(gy, a)
    return gy * (a + a)


def clamp_min(x, lo):
    """``maximum(x, lo)``, the forward of ``clamp(min=lo)``: on the CPU for lo = +0, :func:`relu`."""
    if x.__class__ is np.ndarray:
        return relu(x) if is_plus_zero(lo) else np.maximum(x, lo)
    return backend.xp_of(x).maximum(x, lo)


def clamp_min_backward(gy, x, lo):
    """``where(x >= lo, gy, 0)``: the backward of ``clamp(min=lo)``."""
    if gy.__class__ is np.ndarray:
        return pass_where(gy, x, lo)
    if lo.__class__ in (int, float) and _fusable(gy, x):
        k = _kernel("clamp_min_backward")
        if k:
            return k(gy, x, x.dtype.type(lo))
    return masked(gy, x >= lo)


def masked(gy, keep):
    """``where(keep, gy, 0)`` in ``gy``'s dtype (NumPy or CuPy), for any mask that broadcasts with it."""
    return backend.xp_of(gy).where(keep, gy, gy.dtype.type(0))


_NUMBERS = (int, float)


def pass_where(gy, x, lo, strict=False):
    """``where(x >= lo, gy, 0)``: clamp's backward, a NaN ``x`` giving 0; with ``strict``, ``where(x <= lo, 0, gy)``:
    the ReLU's on its output (PyTorch's threshold_backward), a NaN ``x`` passing ``gy``. For two NumPy
    float32/float64 arrays of one shape and dtype and a number ``lo``, branch-free: in C (_ckernels.c) for
    C-contiguous ones, else each element's bits ANDed with all ones or with 0 by NumPy; the same bits either way.
    Anything else: :func:`masked`."""
    dtype = gy.dtype
    if (gy.__class__ is not np.ndarray or x.__class__ is not np.ndarray or dtype not in _NATIVE_FLOATS
            or x.dtype != dtype or gy.shape != x.shape or lo.__class__ not in _NUMBERS):
        if strict:  # (one comparison and one where: a kernel fewer on a GPU than inverting the mask)
            return backend.xp_of(gy).where(x <= lo, gy.dtype.type(0), gy)
        return masked(gy, x >= lo)
    if _ck is not None and gy.flags.c_contiguous and x.flags.c_contiguous:
        out = np.empty(gy.shape, dtype)
        _ck.pass_where(out, gy, x, lo, strict)
        return out
    against = _zeros_of(x) if is_plus_zero(lo) else None  # vectorised against an array (see relu)
    if against is None:
        against = lo
    bits = _BITS[dtype.itemsize]
    if strict:  # zero where x <= lo
        out = np.subtract(np.less_equal(x, against), 1, dtype=bits)  # true -> 0, false -> -1 (all ones)
    else:
        out = np.negative(np.greater_equal(x, against), dtype=bits)  # true -> -1 (all ones), false -> 0
    np.bitwise_and(out, gy.view(bits), out=out)
    return out.view(dtype)


# The most elements an array that these kernels keep, or make on the side, holds (256 KiB of float32): larger
# arrays are worked through in slices of this many, so the kernels add no memory in proportion to a net's size.
CHUNK = 1 << 16

# float itemsize -> the integer type of the same size whose bits a mask ANDs
_BITS = {2: np.int16, 4: np.int32, 8: np.int64}
_bool = np.dtype(bool)
# From this many elements zero_where ANDs bits; below, NumPy's masked assignment is as fast or faster (2-core
# machine, 2026-11-23: 1024 float32 elements 5.6 us against 4.9, 2048: 10.6 against 5.3, 6400: 34 against 8).
ZERO_WHERE_FROM = 2048


def zero_where(arr, mask) -> bool:
    """``arr[mask] = 0`` for a float NumPy array and a boolean mask of its shape, done as an AND of its bits with
    0 (where the mask is true) or all ones: the same result bit for bit (+0.0 where masked, every other element
    untouched, NaNs included). NumPy's masked assignment takes a branch per element, and a ReLU's mask (true at
    random for about half the elements) mispredicts half of them: 64 x 100 float32 elements take it 34 us, the AND
    8 us with NumPy, ~2 us in C (_ckernels.c, for C-contiguous float32/float64). Returns False, having done nothing,
    where this does not apply (the caller assigns as NumPy does)."""
    if (arr.__class__ is not np.ndarray or mask.__class__ is not np.ndarray or mask.dtype is not _bool
            or arr.dtype.kind != "f" or mask.shape != arr.shape or not arr.flags.writeable):
        return False
    if (_ck is not None and arr.dtype in _NATIVE_FLOATS and arr.flags.c_contiguous and mask.flags.c_contiguous):
        _ck.zero_where(arr, mask)
        return True
    if arr.size < ZERO_WHERE_FROM:
        return False
    bits = _BITS.get(arr.dtype.itemsize)
    if bits is None:  # long double: no integer of its size
        return False
    view = arr.view(bits)
    n = arr.size
    if n <= CHUNK:
        np.bitwise_and(view, np.subtract(mask, 1, dtype=bits), out=view)  # true -> 0, false -> -1 (all bits set)
        return True
    if not (arr.flags.c_contiguous and mask.flags.c_contiguous):
        return False
    flat, flat_mask = view.reshape(-1), mask.reshape(-1)
    keep = np.empty(CHUNK, dtype=bits)
    for i in range(0, n, CHUNK):
        j = min(i + CHUNK, n)
        k = keep[: j - i]
        np.subtract(flat_mask[i:j], 1, out=k, dtype=bits)
        np.bitwise_and(flat[i:j], k, out=flat[i:j])
    return True


def is_plus_zero(value) -> bool:
    """Whether ``value`` is the Python number 0 or +0.0 (what zero_where writes and relu compares with)."""
    return (value.__class__ is int or value.__class__ is float and copysign(1.0, value) > 0) and value == 0


_NATIVE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# relu: read-only arrays of zeros, one flat buffer per float dtype (at most CHUNK elements), a view of it per
# shape asked for
_zero_buffers: dict = {}
_zero_views: dict = {}


def relu(x):
    """``np.maximum(x, 0)`` for a float32/float64 NumPy array, bit for bit (NaNs and the sign of zero included),
    in a fifth to three quarters of its time. NumPy vectorises ``maximum`` of two arrays but not of an array
    and a number: on the 2-core machine 64 x 100 float32 elements take ~9 us against a number and ~3.5 us
    against an array of zeros, 1000 x 100 ~110 against ~24 us (the ReLU table in
    benchmarks/results/cpu-threads.txt). The zeros are a read-only buffer kept per dtype; an array larger than
    it goes through in slices (a C-contiguous one; any other keeps NumPy's own loop), as does any other dtype."""
    zeros = _zeros_of(x)
    if zeros is not None:
        return np.maximum(x, zeros)
    if x.dtype not in _NATIVE_FLOATS or not x.flags.c_contiguous:
        return np.maximum(x, 0)
    zeros = _zero_buffer(x.dtype, CHUNK)
    out = np.empty(x.shape, dtype=x.dtype)
    flat, flat_out, n = x.reshape(-1), out.reshape(-1), x.size
    for i in range(0, n, CHUNK):
        j = min(i + CHUNK, n)
        np.maximum(flat[i:j], zeros[: j - i], out=flat_out[i:j])
    return out


def _zero_buffer(dtype, n):
    buffer = _zero_buffers.get(dtype)
    if buffer is None or buffer.size < n:
        size = n if buffer is None else min(max(n, 2 * buffer.size), CHUNK)  # grown by doubling, up to CHUNK
        buffer = np.zeros(size, dtype=dtype)
        buffer.flags.writeable = False
        _zero_buffers[dtype] = buffer
        _zero_views.clear()  # views of the old buffer let it go
    return buffer


def _zeros_of(x):
    """A read-only array of zeros of ``x``'s shape and dtype, a view of the kept buffer; None for an array of
    another dtype or of more than CHUNK elements."""
    dtype = x.dtype
    zeros = _zero_views.get((dtype, x.shape))
    if zeros is not None:
        return zeros
    n = x.size
    if dtype not in _NATIVE_FLOATS or n > CHUNK:
        return None
    buffer = _zero_buffer(dtype, n)
    if len(_zero_views) >= 64:
        _zero_views.clear()
    zeros = _zero_views[(dtype, x.shape)] = buffer[:n].reshape(x.shape)
    return zeros


# ----------------------------------------------------------------------------- erf and GELU
# erf from Cephes (S. L. Moshier, public domain; ndtr.c): x * T(x^2) / U(x^2) for |x| < 1 and
# 1 - exp(-x^2) * P(|x|) / Q(|x|) above, with the sign of x. U and Q are monic (their leading 1 left out).
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3, 7.00332514112805075473e3,
          5.55923013010394962768e4)
_ERF_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3, 2.26290000613890934246e4,
          4.92673942608635921086e4)
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0, 4.86371970985681366614e1,
           1.96520832956077098242e2, 5.26445194995477358631e2, 9.34528527171957607540e2, 1.02755188689515710272e3,
           5.57535335369399327526e2)
_ERFC_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2, 9.75708501743205489753e2,
           1.82390916687909736289e3, 2.24633760818710981792e3, 1.65666309194161350182e3, 5.57535340817727675546e2)
_ERF_ONE_FROM = 6.0  # erfc(6) = 2.2e-17: 1 - erfc rounds to 1 in float64 from here on, so |x| is clamped to it
TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_HALF = 0.7071067811865476
_PDF_BETA = 0.3989422804014327  # 1 / sqrt(2 pi)
_TANH_BETA = 0.7978845608028654  # sqrt(2 / pi)
_KAPPA = 0.044715
_GELU_KIND = {"none": 1, "tanh": 2}


def _poly(x, coefficients, monic=False):
    """Horner's rule, highest power first; ``monic``: a leading coefficient of 1 that the tuple leaves out."""
    out = x + coefficients[0] if monic else x * 0 + coefficients[0]
    for c in coefficients[1:]:
        out = out * x + c
    return out


def _erf_chain(x):
    """erf with NumPy's (CuPy's) ufuncs, in ``x``'s dtype: Cephes' rational fits, within a few units in the last
    place of float64 (checked against ``math.erf``); +-1 at +-inf, NaN at NaN. Each branch reads its own clamped
    copy of ``x``, so neither overflows."""
    xp = backend.xp_of(x)
    inner = xp.clip(x, -1.0, 1.0)
    z = inner * inner
    near = inner * _poly(z, _ERF_T) / _poly(z, _ERF_U, monic=True)
    a = xp.clip(abs(x), 1.0, _ERF_ONE_FROM)
    far = xp.sign(x) * (1 - xp.exp(-a * a) * _poly(a, _ERFC_P) / _poly(a, _ERFC_Q, monic=True))
    return xp.where(abs(x) < 1, near, far)


# CUDA's erf, exp and tanh are overloaded for float and double: T's own precision, as PyTorch's CUDA kernels
_GELU_SOURCES = {
    "erf": ("T x", "T y", "y = erf(x)"),
    "gelu": ("T x", "T y", "y = x * (T)0.5 * ((T)1 + erf(x * (T)0.70710678118654752440))"),
    "gelu_tanh": ("T x", "T y", "y = (T)0.5 * x * ((T)1 + tanh((T)0.79788456080286535588 * (x + (T)0.044715 * (x * x * "
                  "x))))"),
    "gelu_backward": ("T gy, T x", "T gx", "gx = gy * ((T)0.5 * ((T)1 + erf(x * (T)0.70710678118654752440)) + x * "
                      "((T)0.39894228040143267794 * exp(-(x * x) * (T)0.5)))"),
    "gelu_tanh_backward": ("T gy, T x", "T gx", "gx = gy * ((T)0.5 * ((T)1 + tanh((T)0.79788456080286535588 * (x + "
                           "(T)0.044715 * (x * x * x)))) + (T)0.5 * x * ((T)1 - tanh((T)0.79788456080286535588 * (x + "
                           "(T)0.044715 * (x * x * x))) * tanh((T)0.79788456080286535588 * (x + (T)0.044715 * (x * x "
                           "* x)))) * ((T)0.79788456080286535588 * ((T)1 + (T)3 * (T)0.044715 * (x * x))))"),
}


def _gpu_kernel(name: str):
    k = _kernels.get(name)
    if k is None:
        make = getattr(backend.get_cupy(), "ElementwiseKernel", None)
        k = False if make is None else make(*_GELU_SOURCES[name], f"engine_{name}")
        _kernels[name] = k
    return k


def _one_pass(x) -> bool:
    """Whether ``x`` goes to a kernel of its own: a float32/float64 array, C-contiguous NumPy with _ckernels built,
    or CuPy's."""
    if x.dtype not in _NATIVE_FLOATS:
        return False
    if x.__class__ is np.ndarray:
        return _ck is not None and x.flags.c_contiguous
    return not isinstance(x, np.generic)  # (a NumPy scalar, a ufunc's answer for a 0-d array: not CuPy's)


def _in_float32(fn):
    """``fn`` of a float16 array worked out in float32 and rounded back once, as PyTorch's half kernels compute
    (their "opmath"): the rational fits' coefficients and their intermediates overflow float16 (erf was NaN past
    3.5)."""
    def wrapped(x, *args):
        if x.dtype == np.float16:
            return fn(x.astype(np.float32), *args).astype(np.float16)
        return fn(x, *args)

    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


@_in_float32
def erf(x):
    """The error function of a float array, elementwise, in its own dtype (NumPy has none): libm's (C) or CUDA's
    in one pass, else :func:`_erf_chain`."""
    if _one_pass(x):
        if x.__class__ is np.ndarray:
            out = np.empty(x.shape, x.dtype)
            _ck.gelu(out, x, 0)
            return out
        k = _gpu_kernel("erf")
        if k:
            return k(x)
    return _erf_chain(x)


@_in_float32
def gelu(x, approximate="none"):
    """PyTorch's GELU: ``x * 0.5 * (1 + erf(x / sqrt(2)))``, or with ``approximate='tanh'``
    ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))``; one pass where :func:`_one_pass` says."""
    if _one_pass(x):
        if x.__class__ is np.ndarray:
            out = np.empty(x.shape, x.dtype)
            _ck.gelu(out, x, _GELU_KIND[approximate])
            return out
        k = _gpu_kernel("gelu" if approximate == "none" else "gelu_tanh")
        if k:
            return k(x)
    xp = backend.xp_of(x)
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(_TANH_BETA * (x + _KAPPA * (x * x * x))))
    return x * 0.5 * (1 + _erf_chain(x * _SQRT_HALF))


def gelu_backward(gy, x, approximate="none"):
    """``gy`` times GELU's derivative at ``x``: ``Phi(x) + x phi(x)``, or the tanh approximation's (of float16,
    in float32 and rounded back once)."""
    if x.dtype == np.float16:
        return _gelu_backward(gy.astype(np.float32), x.astype(np.float32), approximate).astype(np.float16)
    return _gelu_backward(gy, x, approximate)


def _gelu_backward(gy, x, approximate="none"):
    if _one_pass(x) and gy.__class__ is x.__class__ and gy.dtype == x.dtype and gy.shape == x.shape:
        if x.__class__ is np.ndarray:
            if gy.flags.c_contiguous:
                out = np.empty(x.shape, x.dtype)
                _ck.gelu_backward(out, gy, x, _GELU_KIND[approximate])
                return out
        else:
            k = _gpu_kernel("gelu_backward" if approximate == "none" else "gelu_tanh_backward")
            if k:
                return k(gy, x)
    xp = backend.xp_of(x)
    if approximate == "tanh":
        x_sq = x * x
        t = xp.tanh(_TANH_BETA * (x + _KAPPA * (x_sq * x)))
        left_derivative = 0.5 * (1 + t)
        right_derivative = 0.5 * x * (1 - t * t) * (_TANH_BETA * (1 + 3 * _KAPPA * x_sq))
        return gy * (left_derivative + right_derivative)
    cdf = 0.5 * (1 + _erf_chain(x * _SQRT_HALF))
    pdf = _PDF_BETA * xp.exp(x * x * -0.5)
    return gy * (cdf + x * pdf)


def max_pool2d(x, out, kernel, stride, pads, dilation):
    """``(maxima, offsets)`` of 2-D max pooling over ``x``'s last two dimensions (``pads``: the (low, high) padding
    of each), by ``engine/_ckernels.c`` where it was built and ``x`` is a NumPy float32 or float64 array: the picks
    of :func:`engine.functions.conv._max_pool`'s NumPy spelling, in one pass instead of a pass of several array ops
    per kernel offset. None elsewhere (that spelling runs)."""
    if _ck is None or x.__class__ is not np.ndarray or x.dtype.type not in _FLOATS:
        return None
    x = np.ascontiguousarray(x)
    lead = x.shape[:-2]
    best = np.empty(lead + tuple(out), dtype=x.dtype)
    arg = np.empty(lead + tuple(out), dtype=np.int32)
    _ck.max_pool2d(best, arg, x, x.shape[-2], x.shape[-1], out[0], out[1], kernel[0], kernel[1], stride[0],
                   stride[1], pads[0][0], pads[1][0], dilation[0], dilation[1])
    return best, arg


def max_pool2d_backward(gy, arg, shape, kernel, stride, pads, dilation):
    """The input's gradient of :func:`max_pool2d` (each output's added at its pick), in C: ``shape`` the input's."""
    gy = np.ascontiguousarray(gy)
    gx = np.zeros(shape, dtype=gy.dtype)
    if _ck is None:  # (the C forward picked, and the C part was switched off since: the same adds in NumPy)
        oh, ow = gy.shape[-2:]
        picks = arg.reshape(-1, oh, ow)
        iy = np.arange(oh)[:, None] * stride[0] + (picks // kernel[1]) * dilation[0] - pads[0][0]
        ix = np.arange(ow)[None, :] * stride[1] + (picks % kernel[1]) * dilation[1] - pads[1][0]
        plane = np.broadcast_to(np.arange(picks.shape[0])[:, None, None], picks.shape)
        inside = (iy >= 0) & (iy < shape[-2]) & (ix >= 0) & (ix < shape[-1])  # (else the padding's: dropped)
        np.add.at(gx.reshape(-1, shape[-2], shape[-1]), (plane[inside], iy[inside], ix[inside]),
                  gy.reshape(picks.shape)[inside])
        return gx
    _ck.max_pool2d_backward(gx, gy, arg, shape[-2], shape[-1], gy.shape[-2], gy.shape[-1], kernel[0], kernel[1],
                            stride[0], stride[1], pads[0][0], pads[1][0], dilation[0], dilation[1])
    return gx


def _plane_geometry(shape, pads, kernel, dilation, stride, out):
    """``(N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw)`` of a 2-D convolution over ``shape`` ``(N, C, H, W)``,
    a 1-D one's ``(N, C, W)`` as a plane of one row."""
    if len(kernel) == 1:
        return (*shape[:2], 1, shape[2], 1, out[0], 1, kernel[0], 1, stride[0], 0, pads[0][0], 1, dilation[0])
    return (*shape, *out, *kernel, *stride, pads[0][0], pads[1][0], *dilation)


def _plane_columns(arr, kernel) -> bool:
    return (_ck is not None and arr.__class__ is np.ndarray and arr.dtype.type in _FLOATS and len(kernel) in (1, 2)
            and hasattr(_ck, "im2col2d"))


def im2col(x, pads, kernel, dilation, stride, out):
    """A 1-D or 2-D convolution's columns ``(C, *K, N, *out)`` of ``x`` ``(N, C, *S)``, the padding (``pads``: the
    (low, high) of each spatial dimension) read as zeros, by engine/_ckernels.c in one pass across its threads: the
    values of :func:`engine.functions.conv._columns` over the padded input, without padding a copy. None where it
    does not apply (a GPU array, another dtype, 3-D, not built): that spelling runs."""
    if not _plane_columns(x, kernel):
        return None
    x = np.ascontiguousarray(x)
    cols = np.empty((x.shape[1],) + tuple(kernel) + (x.shape[0],) + tuple(out), dtype=x.dtype)
    _ck.im2col2d(cols, x, *_plane_geometry(x.shape, pads, kernel, dilation, stride, out))
    return cols


def col2im(cols, shape, pads, kernel, dilation, stride, out):
    """:func:`im2col` undone, the gradient of its input (of ``shape``): each column added back where it was taken
    from, what fell in the padding dropped; the bits of :func:`engine.functions.conv._add_columns`'s NumPy sums.
    None where :func:`im2col` does not apply."""
    if not _plane_columns(cols, kernel):
        return None
    gx = np.empty(shape, dtype=cols.dtype)
    _ck.col2im2d(gx, np.ascontiguousarray(cols), *_plane_geometry(shape, pads, kernel, dilation, stride, out))
    return gx


def _norm_operand(t, x, cols):
    """Whether ``t`` (a weight or bias, or None) can go with ``x`` to _ckernels' layer norm."""
    return t is None or (t.__class__ is np.ndarray and t.dtype == x.dtype and t.size == cols
                         and t.flags.c_contiguous)


def layer_norm(x, weight, bias, cols, eps):
    """``(out, xhat, rstd)`` of layer norm over each row of ``cols`` trailing elements of a NumPy float32/float64
    array (rstd of shape ``x.shape[:-k] + (1,) * k``, k the normalised dimensions: the caller reshapes), in one
    pass by engine/_ckernels.c; None where it was not built or the arrays are not its (NumPy then runs the same
    steps)."""
    if (_ck is None or x.__class__ is not np.ndarray or x.dtype.type not in _FLOATS or not x.flags.c_contiguous
            or cols <= 0 or x.size == 0 or not _norm_operand(weight, x, cols) or not _norm_operand(bias, x, cols)):
        return None
    out, xhat = np.empty_like(x), np.empty_like(x)
    rstd = np.empty(x.size // cols, x.dtype)
    _ck.layer_norm(out, xhat, rstd, x, weight, bias, cols, float(eps))
    return out, xhat, rstd


def layer_norm_backward(gy, xhat, rstd, weight, cols, need_x=True, need_w=False, need_b=False):
    """``(gx, gw, gb)`` of :func:`layer_norm` (each None where not needed): ``rstd * (g - mean(g) - xhat * mean(g *
    xhat))`` with ``g = gy * weight``, and gy * xhat and gy summed over the rows (in double), by
    engine/_ckernels.c; None where it does not apply."""
    if (_ck is None or gy.__class__ is not np.ndarray or gy.dtype != xhat.dtype or not gy.flags.c_contiguous
            or gy.shape != xhat.shape or xhat.__class__ is not np.ndarray or not xhat.flags.c_contiguous
            or rstd.__class__ is not np.ndarray or not rstd.flags.c_contiguous or rstd.dtype != xhat.dtype
            or rstd.size * cols != xhat.size or xhat.size == 0 or not _norm_operand(weight, xhat, cols)):
        return None
    gx = np.empty_like(gy) if need_x else None
    gw = np.empty(cols, gy.dtype) if need_w else None
    gb = np.empty(cols, gy.dtype) if need_b else None
    _ck.layer_norm_backward(gx, gw, gb, gy, xhat, rstd, weight, cols)
    return gx, gw, gb


def attention_softmax(s, scale: float, causal_rows: int) -> bool:
    """Attention's softmax of ``scale * s`` over the last axis of a NumPy float32/float64 C-contiguous array, in
    place, by engine/_ckernels.c (``causal_rows`` > 0: the keys after each of that many queries' position hidden;
    a row that sees no key: zeros). False where it does not apply (the caller computes it with NumPy)."""
    if _ck is None or s.__class__ is not np.ndarray or s.dtype.type not in _FLOATS or not s.flags.c_contiguous \
            or s.size == 0:
        return False
    _ck.attention_softmax(s, s.shape[-1], float(scale), causal_rows if causal_rows > 0 else -1)
    return True


def attention_softmax_backward(d, p, scale: float) -> bool:
    """``d = scale * p * (d - rowsum(d * p))`` in place over the last axis (the scores' gradient from the weights'),
    by engine/_ckernels.c; False where it does not apply."""
    if (_ck is None or d.__class__ is not np.ndarray or p.__class__ is not np.ndarray or d.dtype != p.dtype
            or d.dtype.type not in _FLOATS or d.shape != p.shape or not d.flags.c_contiguous
            or not p.flags.c_contiguous or d.size == 0):
        return False
    _ck.attention_softmax_backward(d, p, d.shape[-1], float(scale))
    return True


def batch_norm_backward(gy, x, mean, invstd, weight, training: bool, need_x: bool):
    """``(gx, sum_gy, dotp)`` of batch norm's backward over ``(N, C, ...)`` NumPy float32/float64 C-contiguous
    arrays (gx None where not needed; the sums per channel, float64), by engine/_ckernels.c: one pass for the sums,
    one for gx. None where it does not apply (the caller's NumPy runs the same formulas)."""
    if (_ck is None or gy.__class__ is not np.ndarray or x.__class__ is not np.ndarray or gy.dtype != x.dtype
            or x.dtype.type not in _FLOATS or gy.shape != x.shape or x.ndim < 2 or x.size == 0
            or not gy.flags.c_contiguous or not x.flags.c_contiguous):
        return None
    channels = x.shape[1]
    mean64 = np.ascontiguousarray(mean, dtype=np.float64).reshape(channels)
    invstd64 = np.ascontiguousarray(invstd, dtype=np.float64).reshape(channels)
    scale = invstd64 if weight is None else invstd64 * np.asarray(weight, dtype=np.float64).reshape(channels)
    sum_gy, dotp = np.empty(channels), np.empty(channels)
    gx = np.empty_like(gy) if need_x else None
    _ck.batch_norm_backward(gx, sum_gy, dotp, gy, x, mean64, invstd64, np.ascontiguousarray(scale), x.shape[0],
                            channels, bool(training))
    return gx, sum_gy, dotp


def add_rows(out, index, src) -> bool:
    """``np.add.at(out, index, src)`` for rows (``out`` (R, ...), ``index`` 1-D integers, ``src`` (len(index), ...)),
    bit for bit, by engine/_ckernels.c in one pass (add.at dispatches per element: 40 times slower on a GPT's token
    gradient). False where it does not apply (the caller's add.at runs)."""
    if (_ck is None or out.__class__ is not np.ndarray or src.__class__ is not np.ndarray or out.dtype != src.dtype
            or out.dtype.type not in _FLOATS or index.__class__ is not np.ndarray or index.ndim != 1
            or index.dtype.kind not in "iu" or out.ndim < 1 or src.shape != index.shape + out.shape[1:]
            or not out.flags.c_contiguous):
        return False
    cols = math.prod(out.shape[1:])
    _ck.add_rows(out.reshape(out.shape[0], cols), index.astype(np.int64, copy=False).reshape(-1),
                 np.ascontiguousarray(src).reshape(index.shape[0], cols))
    return True


def adaptive_max_pool(x, out):
    """``(maxima, flat places)`` of adaptive max pooling over a NumPy float32/float64 array's last one, two or three
    dimensions (``out``: the output's sizes, one per dimension), by engine/_ckernels.c in one pass over the planes
    (or volumes): the picks of :class:`engine.functions.conv.AdaptiveMaxPool`'s NumPy spelling (the first maximum,
    the first NaN). None where it does not apply."""
    nd = len(out)
    if (_ck is None or x.__class__ is not np.ndarray or x.dtype.type not in _FLOATS or x.ndim < nd or x.size == 0
            or min(out) <= 0 or nd not in (1, 2, 3) or (nd == 3 and not hasattr(_ck, "adaptive_max_pool3d"))):
        return None
    x = np.ascontiguousarray(x)
    lead = x.shape[:-nd]
    best = np.empty(lead + tuple(out), dtype=x.dtype)
    where = np.empty(lead + tuple(out), dtype=np.int64)
    if nd == 3:
        _ck.adaptive_max_pool3d(best, where, x, *x.shape[-3:], *out)
    elif nd == 2:
        _ck.adaptive_max_pool2d(best, where, x, x.shape[-2], x.shape[-1], out[0], out[1])
    else:  # (a row: a plane of one row, whose flat places are the columns)
        _ck.adaptive_max_pool2d(best, where, x, 1, x.shape[-1], 1, out[0])
    return best.reshape(lead + (-1,)), where.reshape(lead + (-1,))
