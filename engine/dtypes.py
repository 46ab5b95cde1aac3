"""The engine's dtypes: PyTorch's names over NumPy's types (CuPy uses the same ones)."""

from __future__ import annotations

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int32", "int64", "uint8", "bool_", "from_numpy_dtype",
           "to_dtype", "get_default_dtype", "set_default_dtype"]


class dtype:
    """A tensor element type, e.g. ``engine.float32``. ``np`` is the NumPy type it stands for."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "legacy_name")

    def __init__(self, name: str, np_type, legacy_name: str):
        self.name = name
        self.np = np.dtype(np_type)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize
        self.legacy_name = legacy_name

    def __repr__(self):
        return f"engine.{self.name}"

    def __reduce__(self):  # dtypes are singletons; keep them so through pickling
        return (to_dtype, (self.name,))


float16 = dtype("float16", np.float16, "HalfTensor")
float32 = dtype("float32", np.float32, "FloatTensor")
float64 = dtype("float64", np.float64, "DoubleTensor")
int32 = dtype("int32", np.int32, "IntTensor")
int64 = dtype("int64", np.int64, "LongTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
bool_ = dtype("bool", np.bool_, "BoolTensor")

_ALL = (float16, float32, float64, int32, int64, uint8, bool_)
_BY_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64, "int": int32})

_default = float32


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        found = _BY_NP.get(np.dtype(np_dtype))
        if found is None:
            raise TypeError(f"the engine has no dtype for NumPy's {np.dtype(np_dtype)}") from None
        return found


def to_dtype(value) -> dtype:
    """An engine dtype from an engine dtype, a name ('float32', 'double'), or a NumPy type."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value.removeprefix("torch.").removeprefix("engine."))
        if found is None:
            raise TypeError(f"unknown dtype {value!r}; expected one of {', '.join(sorted(_BY_NAME))}")
        return found
    if value is float:
        return _default
    if value is int:
        return int64
    if value is bool:
        return bool_
    return from_numpy_dtype(value)


def get_default_dtype() -> dtype:
    return _default


def set_default_dtype(value) -> None:
    global _default
    value = to_dtype(value)
    if not value.is_floating_point:
        raise TypeError(f"the default dtype must be a floating point type, not {value}")
    _default = value
