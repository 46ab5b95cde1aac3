"""What PyTorch tells about its dtypes: ``finfo`` and ``iinfo`` (the limits a numerically careful script reads,
``torch.finfo(x.dtype).eps``), and its promotion rules as functions: ``promote_types``, ``result_type``,
``can_cast`` (the rules themselves are :mod:`engine.dtypes`')."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dtypes
from .tensor import Tensor

__all__ = ["finfo", "iinfo", "promote_types", "result_type", "can_cast"]


def _engine_dtype(value, fn: str, arg: str = "type") -> _dtypes.dtype:
    if not isinstance(value, _dtypes.dtype):
        raise TypeError(f"{fn}(): argument '{arg}' must be torch.dtype, not {type(value).__name__}")
    return value


class finfo:
    """The machine limits of a floating point dtype (the default dtype when none is given); of a complex one, its
    parts' (``finfo(complex64)`` is float32's, as PyTorch's)."""

    def __init__(self, type=None):  # noqa: A002 - PyTorch's name
        dt = _dtypes.get_default_dtype() if type is None else _engine_dtype(type, "finfo")
        if dt.is_complex:
            dt = _dtypes.from_numpy_dtype(_dtypes.real_of(dt.np))
        if not dt.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = np.finfo(dt.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # (exact in decimal, as PyTorch gives it)
        self.dtype = dt.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype."""

    def __init__(self, type):  # noqa: A002 - PyTorch's name
        dt = _engine_dtype(type, "iinfo")
        if dt.np == np.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt.is_floating_point or dt.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(dt.np)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = dt.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


def promote_types(type1, type2) -> _dtypes.dtype:
    """The dtype an op on tensors of ``type1`` and ``type2`` gives (``promote_types(int64, float16)`` is
    float16: a higher category wins whatever its size)."""
    a = _engine_dtype(type1, "promote_types", "type1")
    b = _engine_dtype(type2, "promote_types", "type2")
    return _dtypes.from_numpy_dtype(_dtypes.promote_types(np.dtype(a.np), np.dtype(b.np)))


def _operand(x, fn: str):
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (bool, int, float, complex)):
        return x
    raise TypeError(f"{fn}(): argument 'tensor' must be Tensor or Number, not {type(x).__name__}")


def result_type(tensor1, tensor2) -> _dtypes.dtype:
    """The dtype ``tensor1 + tensor2`` would have (tensors or Python numbers; a 0-d tensor or a number does not widen
    a dimensioned tensor of its category)."""
    return _dtypes.from_numpy_dtype(_dtypes.result_type(_operand(tensor1, "result_type"),
                                                        _operand(tensor2, "result_type")))


def can_cast(from_, to) -> bool:
    """Whether an in-place op may write a result of dtype ``from_`` into a tensor of dtype ``to``: not to a lower
    category (float to integer, integer to bool); any size within one."""
    a = _engine_dtype(from_, "can_cast", "from_")
    b = _engine_dtype(to, "can_cast", "to")
    return _dtypes.can_cast(np.dtype(a.np), np.dtype(b.np))
