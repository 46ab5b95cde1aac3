"""``out=``: a result written into the tensor (or tuple of tensors) a caller gives, with PyTorch's checks: a Tensor
(a tuple for an op of several outputs), no graph to record, no element of ``out`` written twice (an expanded
tensor), no memory shared with an input, and a dtype the result can be cast to (the same dtype, where PyTorch asks
for it: ``gather``, ``aminmax``, ``kthvalue``, ``amax``)."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dtypes
from .tensor import Tensor

# ATen's names of the scalar types in its "Expected out tensor to have dtype ..." message
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _rank(np_dtype) -> int:
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[np.dtype(np_dtype).kind]


def written(result, out, name, inputs=(), exact=False):
    """``result``, or with ``out`` given, written into it (resized to the result's shape where it differs) and
    ``out`` returned, as PyTorch's; ``inputs``: the op's tensors, which ``out`` must not overlap."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        if len(out) != len(result):
            raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
        parts = [written(r, o, name, inputs, exact) for r, o in zip(result, out)]
        return type(result)(*parts) if hasattr(result, "_fields") else tuple(parts)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    data = out._data
    if any(stride == 0 and n > 1 for stride, n in zip(data.strides, data.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    for t in inputs:
        if isinstance(t, Tensor) and data.__class__ is np.ndarray and t._data.__class__ is np.ndarray and \
                np.shares_memory(data, t._data):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")
    got, want = result._data.dtype, data.dtype
    if exact and got != want:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES.get(got.name, got.name)}, but got "
                           f"{_CPP_NAMES.get(want.name, want.name)} instead")
    if _rank(got) > _rank(want):
        raise RuntimeError(f"result type {_dtypes.scalar_name(got)} can't be cast to the desired output type "
                           f"{_dtypes.scalar_name(want)}")
    if tuple(out.shape) != tuple(result.shape):
        out.data = result.to(out.device, out.dtype)
    else:
        out.copy_(result)
    return out


# the factories: with out=, the values made in out's dtype and on its device (PyTorch's torch.zeros(2, out=t))
_FACTORIES = frozenset({"empty", "zeros", "ones", "full", "eye", "rand", "randn", "randint", "randperm",
                        "linspace", "logspace", "range", "normal"})
# the ones whose out= PyTorch asks to be of the result's dtype exactly
_EXACT = frozenset({"max", "min", "topk", "msort"})


def _tensors_in(args) -> list:
    found = []
    for a in args:
        if isinstance(a, Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(t for t in a if isinstance(t, Tensor))
    return found


def with_out(fn, name):
    """``fn`` (a top-level op without ``out=``) taking PyTorch's ``out=`` (see :func:`written`)."""
    factory = name in _FACTORIES

    def form(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if factory and isinstance(out, Tensor):
            if kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            if kwargs.get("device") is None:
                kwargs["device"] = out.device
        return written(fn(*args, **kwargs), out, name, _tensors_in((*args, *kwargs.values())), name in _EXACT)

    form.__name__ = form.__qualname__ = getattr(fn, "__name__", name)
    form.__doc__ = fn.__doc__
    form.__wrapped__ = fn
    form.checks_input = getattr(fn, "checks_input", False)
    return form


# PyTorch's top-level ops that take out= and whose engine forms did not (engine/__init__.py wraps them)
OUT_FORMS = (
    "abs", "bucketize", "ceil", "chain_matmul", "cholesky", "cholesky_inverse", "cholesky_solve", "clamp", "clip",
    "column_stack", "conj_physical", "cos", "cumsum", "dot", "dstack", "empty", "eq", "erf", "exp", "eye", "floor",
    "full", "ge", "geqrf", "gt", "histogram", "hstack", "le", "linspace", "log", "logcumsumexp", "logspace", "lt",
    "lu_solve", "lu_unpack", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "msort", "narrow_copy",
    "ne", "neg", "negative", "normal", "ones", "ormqr", "outer", "polar", "polygamma", "pow", "rand", "randint",
    "randn", "randperm", "range", "round", "row_stack", "searchsorted", "sigmoid", "sign", "sin", "sqrt", "square",
    "stack", "std", "std_mean", "svd", "tanh", "topk", "triangular_solve", "tril", "triu", "trunc", "var",
    "var_mean", "vdot", "vstack", "where", "zeros",
)
