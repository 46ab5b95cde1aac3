"""Memory formats: the order a tensor's elements lie in memory (PyTorch's ``torch.memory_format``).

An engine tensor's array (NumPy's or CuPy's) has strides of its own, so the formats are real: ``channels_last``
lays a 4-D (N, C, H, W) tensor out as N, H, W, C (``x.stride()`` then reads ``(H*W*C, 1, W*C, C)``, as PyTorch's),
``channels_last_3d`` a 5-D one as N, D, H, W, C. ``preserve_format``, the default of ``clone`` and the ``*_like``
creators, keeps the strides of a dense input (one whose elements fill its memory without gaps or overlaps, in any
order of dimensions) and gives any other a row-major layout, as PyTorch's rule has it. The values never depend on
the format; only the strides, and the speed of what reads them, do.
"""

from __future__ import annotations

import math

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
           "check", "arranged", "is_arranged", "empty_like"]


class memory_format:  # noqa: N801 - PyTorch's name
    """How a tensor's elements are ordered in memory: ``contiguous_format`` (row-major), ``channels_last`` (4-D,
    channels innermost), ``channels_last_3d`` (5-D), ``preserve_format`` (as the input's, where that is dense)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"engine.{self.name}"

    def __reduce__(self):  # one of each, kept so through copy and pickle (as the dtypes are)
        return self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# the dimensions of a channels-last layout from the innermost out (PyTorch's is_channels_last_strides order)
_ORDER = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}


def check(fmt, op: str = "") -> memory_format:
    """``fmt`` itself, or PyTorch's TypeError for what is not a memory format (None: the default, preserve)."""
    if fmt is None:
        return preserve_format
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not {type(fmt).__name__}")
    return fmt


def _rank(a, fmt) -> None:
    rank = _ORDER[fmt][0]
    if a.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")


def is_arranged(a, fmt) -> bool:
    """Whether array ``a`` lies in memory as ``fmt`` says (a dimension of size 1 may have any stride, as in
    PyTorch's check)."""
    if fmt is contiguous_format or fmt is preserve_format:
        return bool(a.flags.c_contiguous)
    rank, order = _ORDER[fmt]
    if a.ndim != rank:
        return False
    expected, item = 1, a.itemsize
    for d in order:
        if a.shape[d] != 1:
            if a.strides[d] != expected * item:
                return False
            expected *= a.shape[d]
    return True


def _dense(a) -> bool:
    """Whether ``a``'s elements fill exactly its extent of memory, in some order of its dimensions."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    dims = sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n != 1)
    expected = a.itemsize
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return all(s >= 0 for s in a.strides)


def _permuted(a, order):
    """A copy of ``a`` laid out with ``order``'s dimensions from the outermost in, viewed back in ``a``'s order."""
    xp_copy = a.transpose(order).copy()  # (NumPy and CuPy copy in row-major order of the transposed view)
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    return xp_copy.transpose(back)


def arranged(a, fmt, copy: bool = False):
    """``a`` laid out as ``fmt`` says: itself where it already is (and ``copy`` is not asked), else a copy.
    ``preserve_format``: a dense ``a``'s own strides (its copy keeps them), any other's a row-major copy."""
    if fmt is preserve_format:
        if not _dense(a):
            return a.copy()  # (row-major)
        return a.copy(order="K") if copy else a
    if fmt is contiguous_format:
        return a.copy() if copy or not a.flags.c_contiguous else a
    _rank(a, fmt)
    if is_arranged(a, fmt) and not copy:
        return a
    return _permuted(a, tuple(reversed(_ORDER[fmt][1])))


def _empty_in_order(xp, shape, dtype, outer_first):
    """Uninitialised memory of ``shape`` whose dimensions lie ``outer_first``'s order from the outermost in."""
    flat = xp.empty(tuple(shape[d] for d in outer_first), dtype=dtype)
    back = [0] * len(outer_first)
    for i, d in enumerate(outer_first):
        back[d] = i
    return flat.transpose(back)


def empty_like(xp, a, shape, dtype, fmt):
    """An uninitialised array of ``shape`` and ``dtype`` on ``xp``'s device, laid out as ``fmt`` says
    (``preserve_format``: in the order of ``a``'s strides where ``a`` is dense and of that shape, else
    row-major)."""
    if fmt is preserve_format:
        if a is None or tuple(shape) != tuple(a.shape) or a.flags.c_contiguous or not _dense(a) \
                or math.prod(shape) == 0:
            return xp.empty(shape, dtype=dtype)
        # (the largest stride outermost; a tie, a dimension of size 1, in the order of the dimensions)
        return _empty_in_order(xp, shape, dtype, sorted(range(a.ndim), key=lambda d: (-a.strides[d], d)))
    if fmt is contiguous_format:
        return xp.empty(shape, dtype=dtype)
    rank, order = _ORDER[fmt]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return _empty_in_order(xp, shape, dtype, tuple(reversed(order)))
