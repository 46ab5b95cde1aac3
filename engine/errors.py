"""Error texts the engine gives in more than one place, as PyTorch words them. A leaf: imports nothing."""

from __future__ import annotations

import re

FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def complex_refusal(op: str, dtype) -> NotImplementedError:
    """PyTorch's refusal of an op that has no complex form (``"max_all" not implemented for 'ComplexFloat'``):
    ``op`` its name, ``dtype`` the complex NumPy dtype met (or a Python complex number's, complex64's)."""
    kind = _C_NAMES.get(str(dtype), (None, "ComplexFloat"))[1]
    return NotImplementedError(f'"{op}" not implemented for \'{kind}\'')


def shapes_error(a, b) -> RuntimeError:
    """PyTorch's error for a matrix product of arrays whose shapes do not fit."""
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(a.shape)} and {_shape_text(b.shape)})"
    )


def _shape_text(shape):
    return "x".join(str(n) for n in shape) if shape else "scalar"


# PyTorch names the C types in its matrix-product dtype errors
_C_NAMES = {"float32": ("float", "Float"), "float64": ("double", "Double"), "float16": ("c10::Half", "Half"),
            "int64": ("long int", "Long"), "int32": ("int", "Int"), "int16": ("short int", "Short"),
            "int8": ("signed char", "Char"), "uint8": ("unsigned char", "Byte"), "bool": ("bool", "Bool"),
            "complex64": ("c10::complex<float>", "ComplexFloat"),
            "complex128": ("c10::complex<double>", "ComplexDouble")}


def c_type_name(dtype) -> str:
    """The C type PyTorch names a dtype by in some of its errors ("float", "double", "long int")."""
    return _C_NAMES.get(str(dtype), (str(dtype),))[0]


def product_dtypes_error(a, b) -> RuntimeError:
    """PyTorch's error for a matrix product of two dtypes (it never promotes there)."""
    na, nb = _C_NAMES.get(str(a.dtype), (str(a.dtype),) * 2), _C_NAMES.get(str(b.dtype), (str(b.dtype),) * 2)
    if a.ndim == 1 and b.ndim == 1:
        return RuntimeError(f"dot : expected both vectors to have same dtype, but found {na[1]} and {nb[1]}")
    return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {na[0]} != {nb[0]}")


def same_dtype_error(first: str, a, b) -> RuntimeError:
    """PyTorch's addmm-family refusal of two dtypes: ``first`` names the operand ``a`` ("self" or "mat1"), b is
    mat2's."""
    na, nb = _C_NAMES.get(str(a.dtype), (str(a.dtype),) * 2), _C_NAMES.get(str(b.dtype), (str(b.dtype),) * 2)
    return RuntimeError(f"{first} and mat2 must have the same dtype, but got {na[1]} and {nb[1]}")


def raise_broadcast_error(a, b, error: ValueError):
    """Raise PyTorch's error for ``a`` and ``b`` that do not broadcast (NumPy's ``error`` said so), else ``error``."""
    refusal = broadcast_error(a, b)
    raise (refusal or error) from None


def broadcast_error(a, b) -> RuntimeError | None:
    """PyTorch's error for two elementwise operands whose shapes do not broadcast (``a`` the left one), naming the
    first dimension from the right where they differ; None where they broadcast."""
    sa, sb = tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ()))
    n = max(len(sa), len(sb))
    for i in range(n - 1, -1, -1):
        back = n - i
        x = sa[-back] if back <= len(sa) else 1
        y = sb[-back] if back <= len(sb) else 1
        if x != y and x != 1 and y != 1:
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                                f"dimension {i}")
    return None


def expanded_shape(shape, sizes, type_name: str) -> tuple:
    """The shape ``expand(*sizes)`` makes of a tensor of ``shape`` (``type_name``: its legacy name,
    'torch.FloatTensor', for the message): -1 keeps a dimension, new ones go in front, and a dimension other than
    1 must stay as it is. PyTorch's errors, word for word, where it refuses; a negative size left over is refused as
    PyTorch refuses one in a new tensor."""
    shape, sizes = tuple(shape), tuple(int(s) for s in sizes)
    nd, n = len(shape), len(sizes)
    if n < nd:
        raise RuntimeError(f"expand({type_name}{{{list(shape)}}}, size={list(sizes)}): the number of sizes provided "
                           f"({n}) must be greater or equal to the number of dimensions in the tensor ({nd})")
    out = []
    for i, s in enumerate(sizes):
        j = i - (n - nd)
        if j < 0:
            if s == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
        else:
            have = shape[j]
            if s == -1:
                s = have
            elif s != have and have != 1:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                                   f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                                   f"{list(shape)}")
        out.append(s)
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


_NUMPY_INDEX_ERRORS = (
    (re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)"),
     "index {0} is out of bounds for dimension {1} with size {2}"),
    (re.compile(r"too many indices for array: array is (\d+)-dimensional, but \d+ were indexed"),
     "too many indices for tensor of dimension {0}"),
    (re.compile(r"boolean index did not match indexed array along (?:axis|dimension) (\d+); size of (?:axis|dimension) "
                r"is (\d+) but size of corresponding boolean (?:axis|dimension) is (\d+)"),
     "The shape of the mask at index {0} (size {2}) does not match the shape of the indexed tensor {shape} at index "
     "{0} (size {1})"),
    (re.compile(r"arrays used as indices must be of integer \(or boolean\) type"),
     "tensors used as indices must be long, int, byte or bool tensors"),
    (re.compile(r"only integers, slices .* are valid indices"),
     "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices"),
)


def index_error(error: IndexError, shape) -> IndexError:
    """NumPy's (and CuPy's) indexing error in PyTorch's words ("dimension", "tensor"), else the error itself."""
    text = str(error)
    for pattern, words in _NUMPY_INDEX_ERRORS:
        found = pattern.match(text)
        if found:
            return IndexError(words.format(*found.groups(), shape=list(shape)))
    return error


def setitem_error(target_shape, value_shape, mask: bool, error: ValueError, type_name="FloatTensor") -> Exception:
    """PyTorch's words where a value does not broadcast to the places ``x[index] = value`` writes (NumPy's
    "could not broadcast input array"): a mask's places are one dimension, else the value is expanded to them."""
    target, value = list(target_shape), list(value_shape)
    fits = len(value) <= len(target) and all(v in (1, t) for v, t in zip(value[::-1], target[::-1]))
    if fits:  # (the shapes were not what NumPy refused: a read-only array, ...)
        return error
    if mask:
        return RuntimeError(f"shape mismatch: value tensor of shape {value} cannot be broadcast to indexing result of "
                            f"shape {target}")
    if len(value) > len(target):
        return RuntimeError(f"expand(torch.{type_name}{{{value}}}, size={target}): the number of sizes provided "
                            f"({len(target)}) must be greater or equal to the number of dimensions in the tensor "
                            f"({len(value)})")
    for back in range(1, len(value) + 1):
        if value[-back] not in (1, target[-back]):
            return RuntimeError(f"The expanded size of the tensor ({target[-back]}) must match the existing size "
                                f"({value[-back]}) at non-singleton dimension {len(target) - back}.  Target sizes: "
                                f"{target}.  Tensor sizes: {value}")
    return error
