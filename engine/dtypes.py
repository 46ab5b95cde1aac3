"""The engine's dtypes: PyTorch's names over NumPy's types (CuPy uses the same ones)."""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_", "bfloat16",
           "complex64", "complex128", "complex32", "from_numpy_dtype", "to_dtype", "get_default_dtype",
           "set_default_dtype"]


class dtype:
    """A tensor element type, e.g. ``engine.float32``. ``np`` is the NumPy type it stands for."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "is_complex", "itemsize", "legacy_name")

    def __init__(self, name: str, np_type, legacy_name: str):
        self.name = name
        self.np = np.dtype(np_type)
        self.is_floating_point = self.np.kind == "f"
        self.is_signed = self.np.kind in "fic"  # (as PyTorch's: unsigned integers and bool are not)
        self.is_complex = self.np.kind == "c"
        self.itemsize = self.np.itemsize
        self.legacy_name = legacy_name

    def __repr__(self):
        return f"engine.{self.name}"

    def __reduce__(self):  # dtypes are singletons; keep them so through pickling
        return (to_dtype, (self.name,))


float16 = dtype("float16", np.float16, "HalfTensor")
float32 = dtype("float32", np.float32, "FloatTensor")
float64 = dtype("float64", np.float64, "DoubleTensor")
int8 = dtype("int8", np.int8, "CharTensor")
int16 = dtype("int16", np.int16, "ShortTensor")
int32 = dtype("int32", np.int32, "IntTensor")
int64 = dtype("int64", np.int64, "LongTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
bool_ = dtype("bool", np.bool_, "BoolTensor")
# (PyTorch has no legacy constructors of these; the names are what ``x.type()`` says and its messages' scalar names)
complex64 = dtype("complex64", np.complex64, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, "ComplexDoubleTensor")



class _Missing:
    """A PyTorch dtype the engine has not (NumPy and CuPy have no bfloat16, nor a complex of two float16s): its
    name is there, so that a script may name it in a table of choices (nanoGPT's ``{'bfloat16': torch.bfloat16,
    ...}``), and making a tensor of it is refused by name."""

    __slots__ = ("name", "is_floating_point", "is_complex", "instead")

    def __init__(self, name: str, instead: str, is_complex: bool = False):
        self.name = name
        self.is_floating_point = not is_complex
        self.is_complex = is_complex
        self.instead = instead

    def refusal(self) -> TypeError:
        return TypeError(f"{self.name} is PyTorch's, but the engine has no {self.name} (NumPy and CuPy have none): use "
                         f"{self.instead}")

    # what the engine reads of a dtype to make or cast a tensor: refused by name (other attributes are simply
    # missing, so hasattr() and copy work on it)
    @property
    def np(self):
        raise self.refusal()

    @property
    def itemsize(self):
        raise self.refusal()

    @property
    def legacy_name(self):
        raise self.refusal()

    def __repr__(self):
        return f"engine.{self.name}"

    def __reduce__(self):  # one of it, kept so through copy and pickle (as the dtypes are)
        return self.name


bfloat16 = _Missing("bfloat16", "float32, or float16")
complex32 = _Missing("complex32", "complex64", is_complex=True)


class layout:  # noqa: N801 - PyTorch's name
    """How a tensor's elements lie in memory: the engine's are all ``strided`` (dense), as PyTorch's default."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"engine.{self.name}"

    def __reduce__(self):
        return self.name


strided = layout("strided")

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_, complex64, complex128)
_BY_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64, "int": int32, "short": int16,
                 "cfloat": complex64, "cdouble": complex128})
_MISSING = {"bfloat16": bfloat16, "complex32": complex32, "chalf": complex32}

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
    if value.__class__ is _Missing:
        raise value.refusal()
    if isinstance(value, str):
        missing = _MISSING.get(value.removeprefix("torch.").removeprefix("engine."))
        if missing is not None:
            raise missing.refusal()
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
    if value is complex:
        return default_complex()
    return from_numpy_dtype(value)


def get_default_dtype() -> dtype:
    return _default


def default_complex() -> dtype:
    """The complex dtype that goes with the default float dtype (complex64 beside float32), as PyTorch's: what
    ``tensor(1j)`` and ``randn(dtype=complex)`` make."""
    return complex128 if _default is float64 else complex64


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(np.complex64): np.dtype(np.complex64), np.dtype(np.complex128): np.dtype(np.complex128)}
_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def complex_of(np_dtype):
    """The complex NumPy dtype of a float one's precision (PyTorch's ``toComplexType``); float16's, complex32, is
    refused by name."""
    found = _COMPLEX_OF.get(np_dtype)
    if found is None:
        raise complex32.refusal()
    return found


def real_part_for(array, np_dtype):
    """``array`` as it is, or, where a complex array is to become a real dtype, its real part, with PyTorch's
    warning (NumPy's cast would give the same numbers with a ComplexWarning of its own)."""
    if np_dtype is not None and array.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
        return array.real
    return array


def cast_gradient(g, dtype):
    """A gradient in its input's ``dtype``, where an op promoted (float32 * float64: each input gets its gradient
    in its own dtype). A complex gradient of a real input is its real part, as PyTorch's: the derivative of a real
    loss along the real axis, all a real input can move along (NumPy's cast would drop the imaginary part with a
    warning)."""
    if g.dtype.kind == "c" and dtype.kind != "c":
        g = g.real
    return g.astype(dtype)


def real_of(np_dtype):
    """The float NumPy dtype of a complex one's parts (``toRealValueType``); any other dtype as it is."""
    return _REAL_OF.get(np_dtype, np_dtype)


def set_default_dtype(value) -> None:
    global _default
    value = to_dtype(value)
    if not value.is_floating_point:
        raise TypeError(f"the default dtype must be a floating point type, not {value}")
    _default = value


# ----------------------------------------------------------------------------- PyTorch's type promotion
# Categories bool < integer < floating < complex. Among the operands of the highest category, dimensioned
# tensors decide before 0-d tensors, and those before Python scalars (which count as int64, or the default
# float dtype); a lower category never widens a higher one (float32 * int64 -> float32, float32 * 0-d float64
# -> float32, int64 * 2.5 -> the default float dtype). NumPy 2 widens in those cases. (c10's result_type:
# combine_categories(dimResult, combine_categories(zeroResult, wrappedResult)).)

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_PY_SCALARS = (bool, int, float, complex)


def _category(np_dtype) -> int:
    return _CATEGORY[np_dtype.kind]


def scalar_name(np_dtype) -> str:
    """PyTorch's name of a dtype's scalar type in its messages: Float, Long, Bool."""
    return from_numpy_dtype(np_dtype).legacy_name.removesuffix("Tensor")


def can_cast(result, target) -> bool:
    """PyTorch's rule for writing a result of NumPy dtype ``result`` into a tensor of ``target``: not into a lower
    category (a float into an integer tensor, an integer into a bool one); any size within one."""
    return _category(result) <= _category(target)


def cast_refusal(result, target) -> RuntimeError:
    """PyTorch's words where an in-place op's result cannot be written into the tensor."""
    return RuntimeError(f"result type {scalar_name(result)} can't be cast to the desired output type "
                        f"{scalar_name(target)}")


def promote_types(a, b):
    """PyTorch's ``promote_types`` of two NumPy dtypes (None: absent): within a category NumPy's answer, across
    categories the higher one's dtype (float16 with int64 is float16)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca == cb:
        return np.promote_types(a, b)
    if ca + cb == 5:  # complex with float: the wider of the two precisions (float64 and complex64: complex128)
        return complex_of(np.promote_types(real_of(a), real_of(b)))
    return a if ca > cb else b


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = _category(higher), _category(lower)
    if ch >= 2 and ch >= cl:
        return higher
    if cl == 3 and ch == 2:  # a 0-d or number complex beside dimensioned floats: complex of their precision
        return complex_of(higher)
    if ch == 0 or cl >= 2:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(x):
    if isinstance(x, bool) or isinstance(x, np.bool_):
        return np.dtype(np.bool_)
    if isinstance(x, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(x, complex) or isinstance(x, np.complexfloating):
        return np.dtype(np.complex64 if _default.np == np.float32 else np.complex128)
    return np.dtype(_default.np)


def result_type(*operands):
    """The NumPy dtype PyTorch gives ``op(*operands)`` (arrays, 0-d arrays, Python or NumPy scalars)."""
    dim = zero = wrapped = None
    for x in operands:
        shape = getattr(x, "shape", None)
        if shape is None or not hasattr(x, "ndim") or isinstance(x, np.generic):
            wrapped = promote_types(wrapped, _scalar_dtype(x))
        elif len(shape):
            dim = promote_types(dim, x.dtype)
        else:
            zero = promote_types(zero, x.dtype)
    return _combine(dim, _combine(zero, wrapped))


def _cast(x, want):
    if getattr(x, "dtype", None) is None or isinstance(x, np.generic) or x.dtype == want:
        return x
    return x.astype(want)


def _weak_fits(scalar_type, kind: str, true_divide: bool) -> bool:
    """Whether a Python scalar beside an array of ``kind`` leaves NumPy's answer PyTorch's."""
    if true_divide and kind not in "fc":
        return False
    if scalar_type is float:
        return kind in "fc"
    if scalar_type is int:
        return kind != "b"
    return scalar_type is bool


_NARROW_INTS = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max)) for t in (np.int8, np.int16, np.int32,
                                                                                    np.uint8)}


def wrapped_int(value: int, dtype) -> int:
    """A Python int as an integer tensor of ``dtype`` takes it, as PyTorch casts a Scalar: wrapped into the dtype's
    range (``uint8 + -1`` adds 255; ``int8 == 300`` compares with 44). NumPy 2 refuses one out of range
    (OverflowError). An int past int64's range is left to be refused."""
    bounds = _NARROW_INTS.get(dtype)
    if bounds is None or bounds[0] <= value <= bounds[1] or not -(1 << 63) <= value < 1 << 63:
        return value
    lo, hi = bounds
    return (value - lo) % (hi - lo + 1) + lo


_C_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "int32": "int",
            "uint32": "uint32_t"}


def checked_integers(values, np_dtype, fill: bool = False):
    """Numbers (a Python number or a NumPy array of them) as a narrow integer ``np_dtype`` takes them when a tensor
    is made (``tensor``, ``full``), as PyTorch's checked conversion: a negative int down to minus the maximum wraps
    into an unsigned dtype (-1 as uint8 is 255), anything else outside the range is refused in PyTorch's words
    (``fill``: full's, which names the C type, ``uint8_t``) rather than wrapped or refused as NumPy 2 does
    (OverflowError). Other dtypes, and int64, are left as they are."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.name not in _C_NAMES:
        return values
    a = np.asarray(values)
    if a.dtype.kind not in "iuf" or not a.size:
        return values
    info = np.iinfo(np_dtype)
    low = -info.max if info.min == 0 and a.dtype.kind != "f" else info.min
    with np.errstate(invalid="ignore"):
        if ((a < low) | (a > info.max)).any():
            name = _C_NAMES[np_dtype.name] if fill else np_dtype.name
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    if info.min == 0 and a.dtype.kind == "i" and (a < 0).any():
        a = np.where(a < 0, a + (int(info.max) + 1), a)
    return a if isinstance(values, np.ndarray) or a.ndim else a.item()


def promote(a, b, true_divide: bool = False):
    """``(a, b)`` ready for a NumPy/CuPy binary op that gives PyTorch's result dtype: cast where NumPy's rules
    differ, as they are otherwise (the common case, one dtype or a Python scalar of the array's category, costs
    a few comparisons). ``true_divide``: an integer or bool result becomes the default float dtype."""
    da = getattr(a, "dtype", None)
    db = getattr(b, "dtype", None)
    if da is db:  # one dtype (NumPy hands out one object per built-in dtype), or two Python scalars
        if da is None or not true_divide or da.kind in "fc":
            return a, b
    elif db is None:
        if _weak_fits(b.__class__, da.kind, true_divide):
            return (a, wrapped_int(b, da)) if b.__class__ is int and da in _NARROW_INTS else (a, b)
    elif da is None and _weak_fits(a.__class__, db.kind, true_divide):
        return (wrapped_int(a, db), b) if a.__class__ is int and db in _NARROW_INTS else (a, b)
    if (da is None and not isinstance(a, _PY_SCALARS)) or (db is None and not isinstance(b, _PY_SCALARS)):
        return a, b  # a list or another object: NumPy's rules, or its error
    want = result_type(a, b)
    if true_divide and want.kind not in "fc":
        want = np.dtype(_default.np)
    a, b = _cast(a, want), _cast(b, want)
    if getattr(a, "dtype", None) is None and getattr(b, "dtype", None) is None:
        return a, b
    # a Python or NumPy scalar beside an array of the result dtype: NumPy 2 keeps the array's dtype for a Python
    # scalar; a NumPy scalar is strong in NumPy, so it becomes a Python one
    if isinstance(a, np.generic):
        a = a.item()
    if isinstance(b, np.generic):
        b = b.item()
    return a, b
