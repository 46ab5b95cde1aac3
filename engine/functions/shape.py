"""Shape and movement: reshape, transpose, permute, expand, indexing, clone, casts, device moves,
stack and cat."""

from __future__ import annotations

import math

import numpy as np

from .. import _layouts, dtypes, kernels
from ..autograd.function import Function, apply_several, holomorphic
from ..backend import add_at, device_of_array, to_device_array, xp_of


class Reshape(Function):
    raw = True
    complex_ok = True
    backward_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        try:
            if shape and min(shape) < -1:  # (NumPy reads any negative size as the one to infer)
                raise ValueError
            return x.reshape(shape)
        except ValueError:
            raise RuntimeError(_reshape_error(x.size, shape)) from None

    @staticmethod
    def backward(ctx, gy):
        return gy.reshape(ctx.shape)


def _reshape_error(size, shape) -> str:
    """PyTorch's message for a shape that ``size`` elements cannot take (``infer_size``'s checks, in its order)."""
    shape = [int(n) for n in shape]
    for i, n in enumerate(shape):
        if n < -1:
            return f"invalid shape dimension {n} at index {i} of shape {shape}"
    if shape.count(-1) > 1:
        return "only one dimension can be inferred"
    if -1 in shape and size == 0 and 0 in shape:
        return (f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified dimension size -1 "
                "can be any value and is ambiguous")
    return f"shape '{shape}' is invalid for input of size {size}"


def views_as(arr, shape) -> bool:
    """Whether ``arr`` can be shown in ``shape`` without a copy (PyTorch's ``computeStride``, which decides whether
    ``view`` is allowed and ``reshape`` views): each run of dimensions whose memory is contiguous maps onto a run
    of the new dimensions of the same count. True where ``shape`` is not one of its size (the reshape refuses it)."""
    old = arr.shape
    if not old:
        return True
    shape = list(shape)
    size = arr.size
    if shape.count(-1) == 1:
        known = math.prod(n for n in shape if n != -1)
        if not known or size % known:
            return True
        shape[shape.index(-1)] = size // known
    if math.prod(shape) != size or size == 0:
        return True
    item = arr.itemsize
    strides = [st // item for st in arr.strides]
    view_d = len(shape) - 1
    base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and strides[d - 1] != tensor_numel * base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                base_stride = strides[d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


class Transpose(Function):
    raw = True
    complex_ok = True
    backward_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return x.swapaxes(dim0, dim1)

    @staticmethod
    def backward(ctx, gy):
        return gy.swapaxes(*ctx.dims)


class Permute(Function):
    raw = True
    complex_ok = True
    backward_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return x.transpose(dims)

    @staticmethod
    def backward(ctx, gy):
        return gy.transpose(tuple(np.argsort(ctx.dims)))


class Expand(Function):
    """A broadcast view; its gradient is summed back by the walk's one unbroadcast."""

    raw = True
    complex_ok = True
    backward_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        shape = tuple(x.shape[i - (len(shape) - x.ndim)] if n == -1 else n for i, n in enumerate(shape))
        out = xp_of(x).broadcast_to(x, shape)
        ctx.repeats = out.size != x.size
        return out if ctx.repeats else x.reshape(shape)  # (only dimensions of size 1: a view that can be written)

    @staticmethod
    def backward(ctx, gy):
        return gy


def diagonal_view(x, offset, dim1, dim2):
    """``x.diagonal(offset, dim1, dim2)`` as a view that can be written, as PyTorch's is (``x.diagonal().fill_(1)``
    sets the diagonal): NumPy's view is read-only, though its memory is not; CuPy's can be written as it is."""
    d = x.diagonal(offset, dim1, dim2)
    if d.__class__ is np.ndarray and not d.flags.writeable and x.flags.writeable:
        d.flags.writeable = True
    return d


class Take(Function):
    """``take``: the entries of the flattened input at ``index`` (any shape, negative counting from the end), one
    node as PyTorch's ``TakeBackward0`` (it was a view, then an index); backward adds each entry's gradient back
    (an entry taken twice gets both)."""

    raw = True
    complex_ok = True
    backward_name = "TakeBackward0"

    @staticmethod
    def forward(ctx, x, index):
        ctx.meta = (x.shape, index)
        return x.reshape(-1)[index]

    @staticmethod
    def backward(ctx, gy):
        shape, index = ctx.meta
        xp = xp_of(gy)
        gx = xp.zeros(math.prod(shape), dtype=gy.dtype)
        add_at(gx, index, gy)
        return gx.reshape(shape)


class DiagEmbed(Function):
    """``diag_embed``: the last dimension as the ``offset`` diagonals of new ``dim1``/``dim2`` planes, zeros
    elsewhere, one node as PyTorch's ``DiagEmbedBackward0`` (it was zeros written through a diagonal, then moved);
    backward takes those diagonals of the gradient."""

    raw = True
    complex_ok = True
    backward_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        xp = xp_of(x)
        n, nd = x.shape[-1] + abs(offset), x.ndim + 1
        out = xp.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
        diagonal_view(out, offset, nd - 2, nd - 1)[...] = x
        ctx.args = (offset, dim1, dim2)
        return xp.ascontiguousarray(xp.moveaxis(out, (nd - 2, nd - 1), (dim1, dim2)))

    @staticmethod
    def backward(ctx, gy):
        return gy.diagonal(*ctx.args).copy()


class Diagonal(Function):
    """The diagonal of the ``dim1``/``dim2`` planes as the last dimension, a view of the input (a copy for
    ``diag``)."""

    raw = True
    complex_ok = True
    backward_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2, copy=False):
        ctx.args = (offset, dim1, dim2)
        ctx.shape = x.shape
        ctx.copy = copy
        d = diagonal_view(x, offset, dim1, dim2)
        return d.copy() if copy else d

    @staticmethod
    def backward(ctx, gy):
        g = xp_of(gy).zeros(ctx.shape, dtype=gy.dtype)
        diagonal_view(g, *ctx.args)[...] = gy
        return g


def storage_of(arr):
    """``(root, offset, size)``: the array that owns ``arr``'s memory (PyTorch's storage), where ``arr``'s first
    element lies in it and its size, in elements. On a GPU, CuPy's ``base`` is the owner; an array made by
    :func:`strided_view` there has none (CuPy's ``as_strided`` makes a new header on the same memory), and its
    storage is then the allocation CuPy's pool gave (``data.mem``), rounded up as the pool rounds it."""
    if arr.__class__ is np.ndarray:
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        ptr = arr.__array_interface__["data"][0]
        return root, (ptr - root.__array_interface__["data"][0]) // arr.itemsize, root.size
    root = arr.base if arr.base is not None else arr
    mem = arr.data.mem
    if mem is None:  # (an empty array: no memory)
        return root, 0, 0
    offset = (arr.data.ptr - mem.ptr) // arr.itemsize
    if _plain_allocation(root):
        return root, offset, root.size
    return root, offset, mem.size // arr.itemsize


def _plain_allocation(root) -> bool:
    return root.data.mem is not None and root.data.ptr == root.data.mem.ptr and (
        root.flags.c_contiguous or root.flags.f_contiguous)


def strided_view(arr, size, stride, offset):
    """The view of ``arr``'s storage (:func:`storage_of`) with ``size``, ``stride`` and first element at ``offset``
    (in elements, PyTorch's ``as_strided``), checked against the storage's bounds with PyTorch's messages."""
    size, stride, offset = tuple(int(n) for n in size), tuple(int(s) for s in stride), int(offset)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, {len(stride)} strides")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    root, own, total = storage_of(arr)
    need = 0 if 0 in size else offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if need > total:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
            f"{arr.itemsize} requiring a storage size of {need * arr.itemsize} are out of bounds for storage of size "
            f"{total * arr.itemsize}")
    itemsize = arr.itemsize
    strides = tuple(s * itemsize for s in stride)
    if arr.__class__ is np.ndarray:
        if not (root.flags.c_contiguous or root.flags.f_contiguous):
            raise RuntimeError("as_strided: the tensor's memory is not one block (a NumPy array with its own strides, "
                               "given to from_numpy): clone() it first")
        return np.ndarray(size, arr.dtype, buffer=root, offset=offset * itemsize, strides=strides)
    xp = xp_of(arr)
    if offset == own:
        start = arr
    elif _plain_allocation(root):
        flat = (root if root.flags.c_contiguous else root.T).reshape(-1)  # (memory order: a view)
        start = flat[min(offset, flat.size):]
    else:
        raise NotImplementedError(
            "as_strided with another storage offset than the tensor's own, of a tensor that as_strided or unfold "
            "made on a CUDA device, is not supported here: clone() it first")
    return xp.lib.stride_tricks.as_strided(start, size, strides)


class AsStrided(Function):
    """``x.as_strided(size, stride, storage_offset)`` and ``x.unfold(dimension, size, step)``: a view of x's memory
    with the given strides (:func:`strided_view`). Its gradient is PyTorch's: the output's gradient added up on
    the memory places (an element seen twice gets both), then given to each of x's elements at its place, shared
    evenly where x's elements share a place (an expanded x); places outside x's elements get nothing. The forward
    keeps the two geometries only; the places are worked out by the backward (:func:`strided_places`)."""

    raw = True
    complex_ok = True

    @staticmethod
    def forward(ctx, x, size, stride, offset, name="AsStridedBackward0"):
        out = strided_view(x, size, stride, offset)
        ctx.grad_name = name
        ctx.shape, ctx.x_stride = x.shape, tuple(s // x.itemsize for s in x.strides)
        ctx.size, ctx.stride = out.shape, tuple(int(s) for s in stride)
        ctx.rel = int(offset) - storage_of(x)[1]
        return out

    def backward_name(self):
        return self.grad_name

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        out_at, in_at, shared, n = strided_places(xp, ctx.shape, ctx.x_stride, ctx.size, ctx.stride, ctx.rel)
        if gy.dtype.kind == "c":
            g = xp.zeros(n + 1, dtype=gy.dtype)
            add_at(g, out_at.reshape(-1), gy.reshape(-1))
        else:
            g = xp.bincount(out_at.reshape(-1), weights=gy.reshape(-1), minlength=n + 1).astype(gy.dtype)
        g = g[:n]
        if shared is not None:
            g = g / shared.astype(g.dtype)
        return g.reshape(ctx.shape) if in_at is None else g[in_at]


def strided_places(xp, shape, x_stride, size, stride, rel):
    """``(out_at, in_at, shared, n)`` for a strided view (``size``, ``stride``, first element ``rel`` elements from
    x's) of an x of ``shape`` and ``x_stride``: the memory places x's elements hold, numbered 0..n-1 in memory order;
    ``out_at`` (of ``size``) the number of each output element's place, n where x has no element there; ``in_at``
    (of ``shape``) each of x's elements' number, None where x is contiguous (its elements are then 0..n-1 in
    order); ``shared`` the count of x's elements at each place, None where none is shared."""
    out_pos = memory_places(xp, size, stride, rel)
    contiguous = all(st == want for st, want, n in zip(x_stride, _contiguous_strides(shape), shape) if n > 1)
    if contiguous:
        n = math.prod(shape)
        in_at = shared = None
        out_at = out_pos
    else:
        in_pos = memory_places(xp, shape, x_stride, 0).reshape(-1)
        places, in_at, shared = xp.unique(in_pos, return_inverse=True, return_counts=True)
        n = int(places.size)
        in_at = in_at.reshape(shape)
        if bool((shared == 1).all()):
            shared = None
        found = xp.searchsorted(places, out_pos)
        hit = places[xp.minimum(found, max(n - 1, 0))] == out_pos if n else xp.zeros(out_pos.shape, dtype=bool)
        out_at = xp.where(hit & (found < n), found, n)
    out_at = xp.where((out_at >= 0) & (out_at < n), out_at, n)
    return out_at, in_at, shared, n


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def memory_places(xp, shape, stride, start):
    """The memory places (in elements, from ``start``) of the elements of an array of ``shape`` and ``stride``."""
    places = xp.full(shape, start, dtype=np.int64)
    for k, (n, st) in enumerate(zip(shape, stride)):
        if n > 1 and st:
            places += xp.arange(0, n * st, st, dtype=np.int64).reshape((1,) * k + (n,) + (1,) * (len(shape) - k - 1))
    return places


def index_view(x, index):
    """``x[index]``, where NumPy's would be a scalar (``x[0]`` of a vector: a copy) a 0-d view instead, as PyTorch's
    ``x[0]`` is (``x[0].add_(1)`` changes ``x``)."""
    out = x[index]
    if out.__class__ is not x.__class__:
        out = x[(index if index.__class__ is tuple else (index,)) + (Ellipsis,)]
    return out


def is_basic_index(index) -> bool:
    """Only ints, slices, None and Ellipsis: the result is a view and no element repeats."""
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        if p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice)) and not isinstance(p, bool):
            continue
        return False
    return True


def _has_integer_arrays(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        if hasattr(p, "dtype") and p.dtype.kind in "iu":
            return True
        if isinstance(p, (list, range)):
            return True
    return False


def _is_integer(p) -> bool:
    """An integer index: a Python or NumPy int, or a 0-d integer array (``x[torch.tensor(1)]``); not a bool."""
    if p.__class__ is int or isinstance(p, np.integer):
        return True
    return getattr(p, "ndim", None) == 0 and p.dtype.kind in "iu"


def index_backward_name(shape, index) -> str:
    """The node PyTorch's indexing ends in: ``IndexBackward0`` with an index array, list or mask; otherwise the last
    of its steps that does something (an integer selects, a slice short of the whole dimension slices, None
    unsqueezes), and ``AliasBackward0`` where none does (``x[:, :]``, ``x[...]``); checked against PyTorch 2.13."""
    if index.__class__ is slice:
        return "SliceBackward0"  # a lone slice slices, even all of the dimension (in a tuple it would not)
    parts = index if isinstance(index, tuple) else (index,)
    if not all(p is None or p is Ellipsis or p.__class__ is slice or _is_integer(p) for p in parts):
        return "IndexBackward0"
    name, dim = "AliasBackward0", 0
    for p in parts:
        if p is None:
            name = "UnsqueezeBackward0"
        elif p is Ellipsis:
            dim += len(shape) - sum(1 for q in parts if q is not None and q is not Ellipsis)
        else:
            if p.__class__ is not slice:
                name = "SelectBackward0"
            elif p.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
    return name


class GetItem(Function):
    raw = True
    complex_ok = True

    def backward_name(self):
        shape, _, index = self.meta
        return index_backward_name(shape, index)

    @staticmethod
    def forward(ctx, x, index):
        ctx.meta = (x.shape, x.dtype, index)
        return index_view(x, index)

    @staticmethod
    def backward(ctx, gy):
        shape, dtype, index = ctx.meta
        xp = xp_of(gy)
        gx = xp.zeros(shape, dtype=gy.dtype)
        if _has_integer_arrays(index):
            # a repeated index must add up, not overwrite (cupyx.scatter_add is deprecated in CuPy 14)
            rows = index[0] if isinstance(index, tuple) and len(index) == 1 else index
            if not kernels.add_rows(gx, rows, gy):  # (rows picked by one index array: C, where built)
                add_at(gx, index, gy)
        else:
            gx[index] = gy
        return gx


def assign(data, index, value) -> None:
    """``data[index] = value``. On a GPU, a boolean mask of data's shape with one value goes through
    ``copyto(where=mask)``: CuPy's masked assignment counts the mask on the host first (a synchronisation on
    every call, and no CUDA graph can capture it)."""
    one_value = value.__class__ in (int, float, bool) or getattr(value, "ndim", 1) == 0
    if (data.__class__ is not np.ndarray and getattr(index, "dtype", None) == np.bool_
            and index.shape == data.shape and one_value):
        xp_of(data).copyto(data, value, casting="unsafe", where=index)
    else:
        data[index] = value


def view_step(node, out_shape):
    """How ``node`` made its output as a view of its input, to be replayed on an array (:func:`replay_view`): a
    ``(kind, argument)`` pair, or None where the node is not one of the view ops (or indexed with an array, which
    copies)."""
    cls = node.__class__
    if cls is GetItem:
        index = node.meta[2]
        return ("index", index) if is_basic_index(index) else None
    if cls is Transpose:
        return ("swap", node.dims)
    if cls is Permute:
        return ("permute", node.dims)
    if cls is Reshape:  # (ATen's _unsafe_view, a Reshape so named, makes no view: an in-place write is its own node)
        return None if node.backward_name == "UnsafeViewBackward0" else ("reshape", out_shape)
    if cls is Expand:
        return ("expand", out_shape) if node.repeats else ("reshape", out_shape)
    if cls is Diagonal and not node.copy:
        return ("diagonal", node.args)
    if cls is AsStrided:
        return ("strided", (node.size, node.stride, node.rel, node.shape, node.x_stride, node.grad_name))
    if cls.__name__ == "ViewAsReal":  # (complex_ops' views: a complex tensor's parts, and back)
        return ("as_real", None)
    if cls.__name__ == "ViewAsComplex":
        return ("as_complex", None)
    return None


def replay_view(arr, steps):
    """The view ``steps`` (oldest first) make of ``arr``: ``arr[index]``, ``swapaxes``, ``transpose``, ``diagonal``,
    ``broadcast_to``, ``reshape``."""
    for kind, arg in steps:
        if kind == "index":
            arr = index_view(arr, arg)
        elif kind == "piece":  # (a piece of split: Tensor._pieces)
            arr = index_view(arr, arg[0])
        elif kind == "swap":
            arr = arr.swapaxes(*arg)
        elif kind == "permute":
            arr = arr.transpose(arg)
        elif kind == "diagonal":
            arr = diagonal_view(arr, *arg)
        elif kind == "expand":
            arr = xp_of(arr).broadcast_to(arr, arg)
        elif kind == "strided":
            size, stride, rel = arg[:3]
            arr = strided_view(arr, size, stride, storage_of(arr)[1] + rel)
        elif kind == "as_real":
            arr = _complex_ops().as_real(arr)
        elif kind == "as_complex":
            arr = _complex_ops().as_complex(arr)
        else:
            arr = arr.reshape(arg)
    return arr


def _complex_ops():
    from . import complex_ops  # (it imports this module's neighbours; read when a view of one is replayed)

    return complex_ops


def view_node(base, step):
    """The view op of ``step`` (a :func:`view_step` pair) applied to the Tensor ``base``, recorded: a new node for a
    view made before an in-place op gave the base a new one."""
    kind, arg = step
    if kind == "index":
        return GetItem.apply(base, index=arg)
    if kind == "swap":
        return Transpose.apply(base, *arg)
    if kind == "permute":
        return Permute.apply(base, arg)
    if kind == "diagonal":
        return Diagonal.apply(base, *arg)
    if kind == "expand":
        return Expand.apply(base, arg)
    if kind == "strided":
        size, stride, rel, _, _, name = arg
        return AsStrided.apply(base, size, stride, storage_of(base._data)[1] + rel, name=name)
    if kind == "as_real":
        return _complex_ops().ViewAsReal.apply(base)
    if kind == "as_complex":
        return _complex_ops().ViewAsComplex.apply(base)
    return Reshape.apply(base, arg)


def written_places(shape, steps, xp=None):
    """The flat positions, in a base of ``shape``, of the view ``steps`` make of it (oldest first; a first
    ``("flat", places)`` step gives the places of a view made without a node, in the base's memory, which is then
    contiguous): the view's steps replayed on the positions (reshape's meaning does not depend on memory layout, so
    they select the same elements of a contiguous gradient)."""
    if steps[0][0] == "flat":
        places, steps = steps[0][1], steps[1:]
    else:
        places = xp.arange(math.prod(shape)).reshape(shape)
    for step in steps:
        places = _strided_positions(places, step[1]) if step[0] == "strided" else replay_view(places, (step,))
    return places


def _reinterprets(steps) -> bool:
    """Whether view ``steps`` change the dtype (a complex tensor's parts, or parts as complex numbers)."""
    return any(step[0] in ("as_real", "as_complex", "parts") for step in steps)


def _part_places(shape, steps, complex_base, xp):
    """:func:`written_places` for steps that change the dtype, counted in the base's real coordinates (each complex
    element two: its real part at 2k, its imaginary part at 2k + 1): a complex base's places as complex numbers
    ``2k + (2k + 1)i``, so that ``as_real`` views them as its pairs, and a real base's as floats, so that
    ``as_complex`` pairs them; the view's places come out real (a real view) or complex (a complex one)."""
    if steps[0][0] == "parts":  # (the places of a view made without a node, already so counted)
        places, steps = steps[0][1], steps[1:]
    else:
        k = xp.arange(math.prod(shape), dtype=np.float64)
        places = ((2 * k + 1j * (2 * k + 1)) if complex_base else k).reshape(shape)
    for step in steps:
        places = replay_view(places, (step,))
    return places


def _write_view_backward(gy, steps):
    """WriteView's gradients where its view changed the dtype: the base's with the written real coordinates zeroed,
    the value's those coordinates (paired again where the view is complex)."""
    xp = xp_of(gy)
    flat = xp.ascontiguousarray(gy).reshape(-1)
    coords = (_complex_ops().as_real(flat) if gy.dtype.kind == "c" else flat).reshape(-1).copy()
    where = _part_places(gy.shape, steps, gy.dtype.kind == "c", xp)
    if where.dtype.kind == "c":
        re, im = where.real.astype(np.int64), where.imag.astype(np.int64)
        gvalue = coords[re] + 1j * coords[im]
        coords[re] = 0
        coords[im] = 0
    else:
        at = where.astype(np.int64)
        gvalue = coords[at]
        coords[at] = 0
    gbase = _complex_ops().as_complex(coords.reshape(-1, 2)) if gy.dtype.kind == "c" else coords
    return gbase.reshape(gy.shape), gvalue


def _strided_positions(places, arg):
    """The elements of ``places`` (a positions array of the shape of a strided view's input) that the view
    (:func:`view_step`'s ``"strided"`` argument) shows, picked: the write through it lands on those places."""
    size, stride, rel, shape, x_stride, _ = arg
    xp = xp_of(places)
    out_at, in_at, shared, n = strided_places(xp, shape, x_stride, size, stride, rel)
    if shared is not None or bool((out_at == n).any()):
        raise RuntimeError("a write through a view made by as_strided that shows memory outside its base's elements, "
                           "or of a base whose elements share memory, cannot be recorded: clone() the base first")
    if in_at is not None:  # (x's elements numbered in memory order: back to their logical order)
        logical = xp.empty(n, dtype=np.int64)
        logical[in_at.reshape(-1)] = xp.arange(n)
        out_at = logical[out_at]
    return places.reshape(-1)[out_at]


class RefusedView(Function):
    """The node of a view made with grad mode off, after a write with grad mode on gave its base a node
    (``Tensor._refresh_plain_views``): its backward refuses, with PyTorch's message (PyTorch refuses the view's
    ``grad_fn`` at once)."""

    raw = True
    backward_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, base, message):
        ctx.message = message
        return base[:0]

    @staticmethod
    def backward(ctx, gy):
        raise RuntimeError(ctx.message)


class WriteView(Function):
    """An in-place op on a view of a tensor that requires grad (``h[0].mul_(2)``, ``h.t().add_(1)``): the op's result
    written into the base's memory, and this node made the base's (PyTorch's CopySlices). The gradient of the
    viewed region goes to the op's result, the rest to the base as it was. ``Tensor._before_write`` finds the base
    and the view's ``steps`` from the graph; the forward writes through the same view, and returns the base's array
    itself."""

    raw = True
    complex_ok = True
    backward_name = "CopySlices"
    op_label = "CopySlices"  # the graph panel's name, as PyTorch's

    @staticmethod
    def forward(ctx, base, value, steps):
        ctx.steps = steps
        if steps[0][0] == "flat":  # (a view made without a node: the places of its elements in the base's memory)
            base.reshape(-1)[written_places(base.shape, steps)] = value
        elif steps[0][0] == "parts":  # (the same, counted in the base's real coordinates: the view changed dtype)
            where = _part_places(base.shape, steps, base.dtype.kind == "c", xp_of(base))
            coords = (_complex_ops().as_real(base) if base.dtype.kind == "c" else base).reshape(-1)
            if where.dtype.kind == "c":
                coords[where.real.astype(np.int64)] = value.real
                coords[where.imag.astype(np.int64)] = value.imag
            else:
                coords[where.astype(np.int64)] = value
        else:
            replay_view(base, steps)[...] = value
        return base

    @staticmethod
    def backward(ctx, gy):
        if _reinterprets(ctx.steps):
            return _write_view_backward(gy, ctx.steps)
        xp = xp_of(gy)
        flat = xp.ascontiguousarray(gy).reshape(-1)
        where = written_places(gy.shape, ctx.steps, xp)
        gvalue = flat[where]
        gbase = flat.copy()
        gbase[where] = 0
        return gbase.reshape(gy.shape), gvalue


class SetItem(Function):
    """``x[index] = value`` recorded out of place; Tensor.__setitem__ rebinds the tensor to the result. ``name``:
    PyTorch's node where an op writes this way (``scatter``: ``ScatterBackward0``); ``crop``: the part of ``value``
    written, where only its leading part is (``scatter``'s ``src`` larger than its index: the rest gets a zero
    gradient, as PyTorch's)."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return self.node_name

    @staticmethod
    def forward(ctx, x, value, index, name="CopySlices", crop=None):
        out = x.copy()
        ctx.node_name = name
        ctx.crop = None if crop is None else (crop, value.shape)
        assign(out, index, value if crop is None else value[crop])
        ctx.index = index
        return out

    @staticmethod
    def backward(ctx, gy):
        need_x, need_value = ctx.needs_input_grad
        gx = gv = None
        if need_x:
            gx = np.array(gy) if isinstance(gy, np.generic) else gy.copy()  # (a 0-d NumPy gradient may come as a
            assign(gx, ctx.index, 0)  # scalar, which cannot be written)
        if need_value:
            gv = _value_gradient(ctx, gy)
        return gx, gv


def _value_gradient(ctx, gy):
    """The gradient of the value :class:`SetItem` or :class:`IndexAdd` wrote at ``ctx.index``: the output's there,
    in the value's own shape where only its leading part (``ctx.crop``) was written (zeros past it)."""
    gv = gy[ctx.index]
    if ctx.crop is None:
        return gv
    crop, shape = ctx.crop
    full = xp_of(gy).zeros(shape, dtype=gy.dtype)
    full[crop] = gv
    return full


class IndexAdd(Function):
    """``x`` with ``value`` added at ``index`` (a full index tuple), a repeated index adding up:
    ``scatter_add`` and ``index_add``; the value's gradient is the output's at its places."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return self.node_name

    @staticmethod
    def forward(ctx, x, value, index, name="IndexAddBackward0", crop=None):
        out = x.copy()
        add_at(out, index, value if crop is None else value[crop])
        ctx.index, ctx.node_name = index, name
        ctx.crop = None if crop is None else (crop, value.shape)  # (as SetItem's: scatter_add's larger src)
        ctx.op_label = name[:-len("Backward0")]  # ScatterAdd, IndexAdd or IndexPut in the graph panel
        return out

    @staticmethod
    def backward(ctx, gy):
        need_x, need_value = ctx.needs_input_grad
        return (gy if need_x else None), (_value_gradient(ctx, gy) if need_value else None)


_REDUCE_IDENTITY = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}


def _at(xp, kind, out, where, values):
    """``out[where] (op)= values``, a repeated place taking every value: NumPy's ``ufunc.at``. CuPy's ``add.at`` is
    its own (atomic adds on the device); the others go through the host (a copy each way) rather than rely on
    CuPy's ``ufunc.at`` for them."""
    if kind == "add":
        add_at(out, where, values)
        return
    if xp is np:
        getattr(xp, kind).at(out, where, values)
        return
    host = out.get()
    getattr(np, kind).at(host, where.get(), values.get())
    out[...] = xp.asarray(host)


class ScatterReduce(Function):
    """``x`` with ``src``'s values reduced into it at ``index`` (a full index tuple, ``scatter``'s addressing) by
    ``reduce`` (sum, prod, mean, amax, amin), ``x``'s own value taking part where ``include_self``: PyTorch's
    ``scatter_reduce`` and ``index_reduce``. The gradient as PyTorch's: for amax/amin shared evenly among the
    values equal to the result; for prod the product of the others (exact where a value is 0)."""

    raw = True

    def backward_name(self):
        return self.node_name

    @staticmethod
    def forward(ctx, x, src, index, reduce, include_self, name="ScatterReduceBackward0"):
        xp = xp_of(x)
        shape = src.shape
        where = xp.zeros(shape, dtype=np.int64)  # each src value's place in x, flat
        step = 1
        for axis in range(x.ndim - 1, -1, -1):
            where += xp.broadcast_to(xp.asarray(index[axis], dtype=np.int64), shape) * step
            step *= x.shape[axis]
        where, values = where.reshape(-1), src.reshape(-1)
        out = x.reshape(-1).copy()
        touched = xp.zeros(out.shape, dtype=bool)
        touched[where] = True
        count = xp.zeros(out.shape, dtype=np.int64)
        add_at(count, where, 1)
        if not include_self:
            identity = _REDUCE_IDENTITY[reduce]
            if out.dtype.kind in "iub" and reduce in ("amax", "amin"):  # (an integer's: its type's far end)
                info = np.iinfo(out.dtype) if out.dtype.kind != "b" else None
                identity = (info.min if reduce == "amax" else info.max) if info else reduce == "amin"
            out[touched] = identity
        else:
            count += 1
        if reduce in ("sum", "mean"):
            add_at(out, where, values)
            if reduce == "mean":
                n = xp.maximum(count, 1).astype(out.dtype)
                out = xp.where(touched, out // n if out.dtype.kind in "iub" else out / n, out).astype(x.dtype)
        else:
            _at(xp, {"prod": "multiply", "amax": "maximum", "amin": "minimum"}[reduce], out, where, values)
        ctx.node_name, ctx.op_label = name, name[:-len("Backward0")]
        ctx.meta = (x.shape, src.shape, reduce, include_self)
        ctx.saved = (x.reshape(-1), values, where, out, count, touched)
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, gy):
        shape, src_shape, reduce, include_self = ctx.meta
        x, values, where, out, count, touched = ctx.saved
        xp = xp_of(gy)
        g = gy.reshape(-1)
        keep_self = xp.ones(g.shape, dtype=bool) if include_self else ~touched
        if reduce == "sum":
            gx, gsrc = g * keep_self, g[where]
        elif reduce == "mean":
            per = g / xp.maximum(count, 1)
            gx, gsrc = xp.where(touched, per * keep_self, g), per[where]
        elif reduce in ("amax", "amin"):
            self_tie = touched & keep_self & (x == out)
            src_tie = values == out[where]
            ties = self_tie.astype(g.dtype)
            add_at(ties, where, src_tie.astype(g.dtype))
            share = g / xp.maximum(ties, 1)
            gx, gsrc = xp.where(touched, share * self_tie, g), share[where] * src_tie
        else:  # prod: each value's gradient is the product of the others in its place
            zeros = (touched & keep_self & (x == 0)).astype(np.int64)
            add_at(zeros, where, (values == 0).astype(np.int64))
            nonzero = xp.where(touched & keep_self & (x != 0), x, 1).astype(g.dtype)
            _at(xp, "multiply", nonzero, where, xp.where(values == 0, 1, values).astype(g.dtype))

            def others(v, z, p, full):
                return xp.where(v != 0, xp.where(z == 0, full / xp.where(v != 0, v, 1), 0),
                                xp.where(z == 1, p, 0))

            gx = xp.where(touched, g * keep_self * others(x, zeros, nonzero, out), g)
            gsrc = g[where] * others(values, zeros[where], nonzero[where], out[where])
        need_x, need_src = ctx.needs_input_grad
        return (gx.reshape(shape) if need_x else None), (gsrc.reshape(src_shape) if need_src else None)


class Flip(Function):
    """``flip`` (``shift=None``) or ``roll`` along ``axes``: a copy in the new order; the gradient goes back in
    the old order."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return "FlipBackward0" if self.shift is None else "RollBackward0"

    @staticmethod
    def forward(ctx, x, axes, shift=None):
        ctx.axes, ctx.shift = axes, shift
        ctx.op_label = "Flip" if shift is None else "Roll"
        xp = xp_of(x)
        return xp.flip(x, axes).copy() if shift is None else xp.roll(x, shift, axes)

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        if ctx.shift is None:
            return xp.flip(gy, ctx.axes).copy()
        return xp.roll(gy, tuple(-s for s in ctx.shift), ctx.axes)


class Embedding(Function):
    """Rows of a weight table picked by integer indices (``nn.Embedding``): the gradient of a row is the sum of
    the gradients where it was picked, none for ``padding_idx``, each over how often the row was picked with
    ``scale_grad_by_freq``."""

    raw = True
    complex_ok = True  # (a row's gradient is the sum of its picks' gradients, complex or not)
    backward_name = "EmbeddingBackward0"
    nondiff = (1,)  # the indices

    @staticmethod
    def forward(ctx, weight, indices, padding_idx=None, scale_grad_by_freq=False):
        ctx.meta = (weight.shape, indices, padding_idx, scale_grad_by_freq)
        return weight[indices]

    @staticmethod
    def backward(ctx, gy):
        shape, indices, padding_idx, scale = ctx.meta
        xp = xp_of(gy)
        flat = indices.reshape(-1)
        gw = xp.zeros(shape, dtype=gy.dtype)
        rows = gy.reshape(-1, shape[1])
        if not kernels.add_rows(gw, flat, rows):  # (C, where built: add.at's sums, in one pass)
            add_at(gw, flat, rows)  # a row picked twice gets both gradients
        if scale:
            counts = xp.zeros(shape[0], dtype=gy.real.dtype)  # (real: a complex table's counts too)
            add_at(counts, flat, 1)
            gw /= xp.maximum(counts, 1).reshape(-1, 1)
        if padding_idx is not None:
            gw[padding_idx] = 0
        return gw, None


class Triangle(Function):
    """``tril``/``triu``: the last two dimensions' lower (upper) triangle from ``diagonal`` on, zeros elsewhere; the
    gradient passes where the values did (a causal mask: ``torch.tril(torch.ones(T, T))``)."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return "TrilBackward0" if self.meta[0] == "lower" else "TriuBackward0"

    @staticmethod
    def _keep(xp, shape, side, diagonal):
        rows = xp.arange(shape[-2]).reshape(-1, 1)
        cols = xp.arange(shape[-1]).reshape(1, -1)
        return (cols - rows <= diagonal) if side == "lower" else (cols - rows >= diagonal)

    @staticmethod
    def forward(ctx, x, side="lower", diagonal=0):
        xp = xp_of(x)
        keep = Triangle._keep(xp, x.shape, side, diagonal)
        ctx.meta = (side, keep)
        return xp.where(keep, x, x.dtype.type(0))

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        return xp.where(ctx.meta[1], gy, gy.dtype.type(0))


class Cumsum(Function):
    """The running sum along ``dim``; its gradient is the running sum of the gradient from the other end."""

    raw = True
    complex_ok = True
    backward_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, x, dim, asked=False):
        ctx.meta = dim
        if x.dtype.kind in "biu":  # PyTorch's: an integer or boolean running sum is int64 (unless dtype= asked)
            return x.cumsum(axis=dim, dtype=x.dtype if asked and x.dtype.kind != "b" else np.int64)
        return x.cumsum(axis=dim)

    @staticmethod
    def backward(ctx, gy):
        dim = ctx.meta
        back = (slice(None),) * dim + (slice(None, None, -1),)
        return gy[back].cumsum(axis=dim)[back]


def _pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(math.prod(lead), c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(math.prod(lead), c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def _channel_shuffle(x, groups):
    n, c, *rest = x.shape
    order = (0, 2, 1) + tuple(range(3, 3 + len(rest)))
    return x.reshape(n, groups, c // groups, *rest).transpose(order).reshape(n, c, *rest)


def _rot90(x, k, d0, d1):
    """ATen's rot90: a flipped copy, transposed (a view of it) for a quarter turn either way."""
    def flipped(*dims):
        index = [slice(None)] * x.ndim
        for d in dims:
            index[d] = slice(None, None, -1)
        return x[tuple(index)].copy()

    if k == 1:
        return flipped(d1).swapaxes(d0, d1)
    if k == 2:
        return flipped(d0, d1)
    if k == 3:
        return flipped(d0).swapaxes(d0, d1)
    return x.copy()


# op -> (PyTorch's node, forward(array, *args), the inverse op and its args as a function of these args)
REARRANGE = {
    "pixel_shuffle": ("PixelShuffleBackward0", _pixel_shuffle, lambda r: ("pixel_unshuffle", (r,))),
    "pixel_unshuffle": ("PixelUnshuffleBackward0", _pixel_unshuffle, lambda r: ("pixel_shuffle", (r,))),
    "channel_shuffle": ("ChannelShuffleBackward0", _channel_shuffle, None),  # (the inverse reads the channels)
    "rot90": ("Rot90Backward0", _rot90, lambda k, d0, d1: ("rot90", ((-k) % 4, d0, d1))),
}


def rearrange_inverse(op, args, shape):
    """The op and args that undo ``op`` on an output of ``shape`` (channel_shuffle's: the other grouping)."""
    if op == "channel_shuffle":
        return "channel_shuffle", (shape[1] // args[0],)
    return REARRANGE[op][2](*args)


class Rearrange(Function):
    """An op that only moves elements, as one node as PyTorch's: ``pixel_shuffle``/``pixel_unshuffle``,
    ``channel_shuffle``, ``rot90`` (they were reshapes, permutes and copies, or flips and transposes). Backward moves
    the gradient back with the inverse op, itself a Rearrange (second derivatives are recorded)."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return REARRANGE[self.op][0]

    @staticmethod
    def forward(ctx, x, op, args):
        ctx.op, ctx.args = op, args
        out = REARRANGE[op][1](x, *args)
        ctx.inverse = rearrange_inverse(op, args, out.shape)
        return out

    @staticmethod
    def backward(ctx, gy):
        op, args = ctx.inverse
        return REARRANGE[op][1](gy, *args)


class BlockDiag(Function):
    """``block_diag``: the tensors (0-, 1- or 2-D; a vector a row) down the diagonal of one matrix, zeros
    elsewhere, one node as PyTorch's ``BlockDiagBackward0``, the dtype their promotion; each gradient is its
    block of the output's, in its shape and dtype."""

    raw = True
    complex_ok = True
    backward_name = "BlockDiagBackward0"

    @staticmethod
    def forward(ctx, *arrays):
        xp = xp_of(arrays[0])
        mats = [a.reshape(1, -1) if a.ndim < 2 else a for a in arrays]
        dtype = mats[0].dtype
        for m in mats[1:]:
            dtype = np.promote_types(dtype, m.dtype) if m.dtype != dtype else dtype
        out = xp.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype=dtype)
        r = c = 0
        places = []
        for a, m in zip(arrays, mats, strict=True):
            out[r:r + m.shape[0], c:c + m.shape[1]] = m
            places.append((r, c, m.shape, a.shape, a.dtype))
            r, c = r + m.shape[0], c + m.shape[1]
        ctx.meta = places
        return out

    @staticmethod
    def backward(ctx, gy):
        return tuple(gy[r:r + rows, c:c + cols].reshape(shape).astype(dtype, copy=False)
                     for r, c, (rows, cols), shape, dtype in ctx.meta)


def _linspace_from_neg_one(n, align_corners, dtype):
    """ATen's grid coordinates along one axis: ``linspace(-1, 1, n)`` as its kernel computes it (from the start
    for the first half, from the end for the rest), scaled by ``(n - 1) / n`` for pixel centres; 0 for one step."""
    if n <= 1:
        return np.zeros(max(n, 1), dtype=dtype)
    t = np.dtype(dtype).type
    step = (t(1) - t(-1)) / t(n - 1)
    i = np.arange(n)
    out = np.where(i < n // 2, t(-1) + step * i.astype(dtype), t(1) - step * (n - i - 1).astype(dtype)).astype(dtype)
    if not align_corners:
        out = (out * t(n - 1) / t(n)).astype(dtype)
    return out


def affine_base_grid(spatial, align_corners, dtype):
    """ATen's base grid: ``(*spatial, k + 1)`` of each point's (x, y[, z]) coordinates and a 1, x along the last
    spatial axis."""
    axes = [_linspace_from_neg_one(n, align_corners, dtype) for n in spatial]
    base = np.empty(tuple(spatial) + (len(spatial) + 1,), dtype=dtype)
    k = len(spatial)
    for c in range(k):  # coordinate c (x, y, z) runs along spatial axis k - 1 - c
        shape = [1] * k
        shape[k - 1 - c] = spatial[k - 1 - c]
        base[..., c] = axes[k - 1 - c].reshape(shape)
    base[..., k] = 1
    return base


class AffineGrid(Function):
    """``affine_grid``: each output point's coordinates, in [-1, 1], mapped by its batch's ``theta``
    (``(N, 2, 3)`` or ``(N, 3, 4)``), one node as PyTorch's ``AffineGridGeneratorBackward0``: ATen's base grid
    times ``theta`` transposed, one batched product; the gradient is the base grid's transpose times the output's."""

    raw = True
    backward_name = "AffineGridGeneratorBackward0"

    @staticmethod
    def forward(ctx, theta, spatial, align_corners):
        xp = xp_of(theta)
        base = affine_base_grid(spatial, align_corners, theta.dtype)
        if xp is not np:
            base = xp.asarray(base)
        n, points = theta.shape[0], math.prod(spatial)
        flat = xp.broadcast_to(base.reshape(1, points, base.shape[-1]), (n, points, base.shape[-1]))
        ctx.meta = (spatial, align_corners)
        return (flat @ theta.swapaxes(1, 2)).reshape((n,) + tuple(spatial) + (len(spatial),))

    @staticmethod
    def backward(ctx, gy):
        spatial, align_corners = ctx.meta
        xp = xp_of(gy)
        base = affine_base_grid(spatial, align_corners, gy.dtype)
        if xp is not np:
            base = xp.asarray(base)
        n, points = gy.shape[0], math.prod(spatial)
        flat = base.reshape(points, base.shape[-1])
        return (flat.T @ gy.reshape(n, points, len(spatial))).swapaxes(1, 2)


class MaxUnpool(Function):
    """``max_unpool2d``/``3d``: each value put back at the place its max pool took it from (``indices``, flat
    within its plane), zeros elsewhere, one node as PyTorch's ``MaxUnpool2DBackward0``/``MaxUnpool3DBackward0``
    (``indices`` no edge); the gradient is the output's at those places (ATen's max_pool_double_backward)."""

    raw = True
    nondiff = (1,)

    def backward_name(self):
        return f"MaxUnpool{len(self.meta[1])}DBackward0"

    @staticmethod
    def forward(ctx, x, indices, size):
        xp = xp_of(x)
        nd = len(size)
        lead, plane = x.shape[:-nd], math.prod(size)
        rows = math.prod(lead)
        out = xp.zeros((rows, plane), dtype=x.dtype)
        flat_index = indices.reshape(rows, -1)
        out[xp.arange(rows)[:, None], flat_index] = x.reshape(rows, -1)
        ctx.saved = (flat_index,)
        ctx.meta = (x.shape, tuple(size))
        return out.reshape(lead + tuple(size))

    @staticmethod
    def backward(ctx, gy):
        (flat_index,) = ctx.saved
        shape, size = ctx.meta
        rows = flat_index.shape[0]
        g = gy.reshape(rows, -1)
        return g[xp_of(gy).arange(rows)[:, None], flat_index].reshape(shape), None


class MaskedScatter(Function):
    """``masked_scatter``: the elements where ``mask`` (broadcast) is true replaced, in order, by ``source``'s first
    ones; one node as PyTorch's ``MaskedScatterBackward0`` (the mask no edge). The gradient is the output's where the
    mask is false, and to ``source`` the output's at the masked places, in order, zeros past them."""

    raw = True
    complex_ok = True
    backward_name = "MaskedScatterBackward0"
    nondiff = (1,)

    @staticmethod
    def forward(ctx, x, mask, source):
        xp = xp_of(x)
        shape = np.broadcast_shapes(x.shape, mask.shape)
        m = xp.broadcast_to(mask, shape)
        out = xp.broadcast_to(x, shape).copy()
        n = int(m.sum())
        out[m] = source.reshape(-1)[:n]
        ctx.saved = (m,)
        ctx.meta = (n, source.shape)
        return out

    @staticmethod
    def backward(ctx, gy):
        (m,) = ctx.saved
        n, shape = ctx.meta
        xp = xp_of(gy)
        need_x, _, need_s = ctx.needs_input_grad[:3]
        gs = None
        if need_s:
            gs = xp.zeros(math.prod(shape), dtype=gy.dtype)
            gs[:n] = gy[m]
            gs = gs.reshape(shape)
        return (xp.where(m, gy.dtype.type(0), gy) if need_x else None), None, gs


class Put(Function):
    """``put``: ``source``'s values written (``accumulate``: added, a repeated index adding up) at the flat places
    ``index`` of a copy, one node as PyTorch's ``PutBackward0`` (the index no edge). The gradient is the output's,
    zero at the written places (not when accumulating), and to ``source`` the output's at ``index``."""

    raw = True
    complex_ok = True
    backward_name = "PutBackward0"
    nondiff = (1,)

    @staticmethod
    def forward(ctx, x, index, source, accumulate):
        out = x.copy().reshape(-1)
        flat, values = index.reshape(-1), source.reshape(-1)
        if accumulate:
            add_at(out, flat, values)
        else:
            out[flat] = values
        ctx.saved = (flat,)
        ctx.meta = (accumulate, source.shape)
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, gy):
        (flat,) = ctx.saved
        accumulate, shape = ctx.meta
        need_x, _, need_s = ctx.needs_input_grad[:3]
        gx = None
        if need_x:
            gx = gy
            if not accumulate:
                gx = gy.copy().reshape(-1)
                gx[flat] = 0
                gx = gx.reshape(gy.shape)
        return gx, None, (gy.reshape(-1)[flat].reshape(shape) if need_s else None)


def logcumsumexp(x, dim):
    """``log(cumsum(exp(x)))`` along ``dim``: each step the ``logaddexp`` of the running value and the next
    element (exact however far apart they are, as PyTorch's scan). NumPy accumulates it in one call; CuPy's
    ``ufunc.accumulate`` takes only add and multiply, so on a GPU the steps run one slice at a time."""
    xp = xp_of(x)
    if x.ndim == 0 or not x.size:  # (a number: itself)
        return x.copy()
    if xp is np and x.dtype.kind != "c":
        return np.logaddexp.accumulate(x, axis=dim)
    out = xp.empty_like(x)
    src, dst = xp.moveaxis(x, dim, 0), xp.moveaxis(out, dim, 0)
    if src.shape[0]:
        dst[0] = src[0]
    if x.dtype.kind == "c":  # (complex numbers, PyTorch's step: elementwise.py's logaddexp of them)
        from .elementwise import _logaddexp_forward

        for i in range(1, src.shape[0]):
            dst[i] = _logaddexp_forward(xp, dst[i - 1], src[i])
        return out
    for i in range(1, src.shape[0]):
        xp.logaddexp(dst[i - 1], src[i], out=dst[i])
    return out


def logcumsumexp_grad(gy, x, out, dim):
    """PyTorch's logcumsumexp_backward (TensorFlow's): the gradient's positive and negative parts each carried in
    log space, ``exp(reverse_logcumsumexp(log|g| - out) + x)``, so nothing overflows where ``exp(x)`` would."""
    xp = xp_of(gy)
    if gy.ndim == 0 or gy.size == 0:
        return gy
    back = (slice(None),) * dim + (slice(None, None, -1),)
    if gy.dtype.kind == "c":  # (complex: one part, no sign to split, as PyTorch's: conj(exp(... log(conj g) ...)))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_grad = xp.log(gy.conj())
            return xp.exp(logcumsumexp((log_grad - out)[back], dim)[back] + x).conj()
    lowest = np.finfo(gy.dtype).min
    with np.errstate(divide="ignore"):
        log_abs = xp.log(xp.abs(gy))

    def part(log_grad):
        return xp.exp(logcumsumexp((log_grad - out)[back], dim)[back] + x)

    return part(xp.where(gy > 0, log_abs, lowest)) - part(xp.where(gy < 0, log_abs, lowest))


class LogCumSumExp(Function):
    """``logcumsumexp`` along ``dim``, one node as PyTorch's ``LogcumsumexpBackward0`` (it was a logaddexp node
    per element, joined by a cat)."""

    raw = True
    complex_ok = True
    backward_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        out = logcumsumexp(x, dim)
        ctx.saved = (x, out)
        ctx.meta = dim
        return out

    @staticmethod
    def backward(ctx, gy):
        x, out = ctx.saved
        return logcumsumexp_grad(gy, x, out, ctx.meta)


class Cumprod(Function):
    """The running product along ``dim``. Element i's gradient is ``prod(x[:i]) * S_i`` with
    ``S_i = g_i + x_{i+1} S_{i+1}``, run from the far end: exact where an input is 0 (no division by it), as
    PyTorch's."""

    raw = True
    complex_ok = True
    backward_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx, x, dim, asked=False):
        ctx.saved = (x,)
        ctx.meta = dim
        if x.dtype.kind in "biu":  # PyTorch's: an integer or boolean running product is int64 (unless dtype= asked)
            return xp_of(x).cumprod(x, axis=dim, dtype=x.dtype if asked and x.dtype.kind != "b" else np.int64)
        return xp_of(x).cumprod(x, axis=dim)

    @staticmethod
    @holomorphic
    def backward(ctx, gy):
        x = xp_of(gy).moveaxis(ctx.saved[0], ctx.meta, -1)
        g = xp_of(gy).moveaxis(gy, ctx.meta, -1)
        xp = xp_of(gy)
        n = x.shape[-1]
        if n == 0:
            return xp.moveaxis(xp.zeros_like(g), -1, ctx.meta)
        ones = xp.ones(x.shape[:-1] + (1,), dtype=x.dtype)
        before = xp.concatenate([ones, xp.cumprod(x[..., :-1], axis=-1)], axis=-1)
        s = xp.empty_like(g)
        s[..., n - 1] = g[..., n - 1]
        for i in range(n - 2, -1, -1):
            s[..., i] = g[..., i] + x[..., i + 1] * s[..., i + 1]
        return xp.moveaxis(before * s, -1, ctx.meta)


class Clone(Function):
    """A copy, laid out as ``fmt`` says (engine._layouts: row-major, a dense input's own strides, channels last)."""

    raw = True
    complex_ok = True
    backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x, fmt=_layouts.contiguous_format):
        return _layouts.arranged(x, fmt, copy=True)

    @staticmethod
    def backward(ctx, gy):
        return gy


class Cast(Function):
    raw = True
    complex_ok = True
    backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, np_dtype):
        ctx.src = x.dtype
        return dtypes.real_part_for(x, np_dtype).astype(np_dtype)

    @staticmethod
    def backward(ctx, gy):  # (a complex tensor cast to a real dtype: the real part's gradient, complex again)
        return dtypes.cast_gradient(gy, ctx.src) if ctx.src.kind in "fc" else None


class ToDevice(Function):
    raw = True
    complex_ok = True
    backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dev, np_dtype=None, copy=False):
        ctx.src = (device_of_array(x), x.dtype)
        return to_device_array(x, dev, dtype=np_dtype, copy=copy)

    @staticmethod
    def backward(ctx, gy):
        dev, dtype = ctx.src
        return to_device_array(dtypes.cast_gradient(gy, dtype), dev) if dtype.kind in "fc" else None


class CopyFrom(Function):
    """``dest.copy_(src)`` recorded as PyTorch's ``CopyBackwards``: ``src`` moved to ``dest``'s device, cast to its
    dtype and broadcast to its shape; the gradient of ``dest``'s old value is zeros (every element was replaced),
    ``src``'s the gradient moved back to its device and dtype (the walk sums it to its shape)."""

    raw = True
    complex_ok = True
    backward_name = "torch::autograd::CopyBackwards"

    @staticmethod
    def forward(ctx, dest, src):
        ctx.src = (device_of_array(src), src.dtype)
        ctx.dest = (dest.shape, dest.dtype)
        moved = to_device_array(src, device_of_array(dest), dtype=dest.dtype)
        return xp_of(dest).broadcast_to(moved, dest.shape).copy()

    @staticmethod
    def backward(ctx, gy):
        dev, dtype = ctx.src
        shape, dest_dtype = ctx.dest
        need_dest, need_src = ctx.needs_input_grad[:2]
        return ((xp_of(gy).zeros(shape, dtype=dest_dtype) if need_dest else None),
                (to_device_array(dtypes.cast_gradient(gy, dtype), dev) if need_src and dtype.kind in "fc" else None))


def _join_dim(dim, nd):
    """``cat``'s and ``stack``'s ``dim`` checked against ``nd`` dimensions, as PyTorch's, made non-negative."""
    if not -max(nd, 1) <= dim < max(nd, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], "
                         f"but got {dim})")
    return dim % max(nd, 1)


def _joined_dtype(xs):
    """PyTorch's dtype of ``cat``/``stack``: the tensors' promoted type (an int32 beside a float32 is float32;
    NumPy's concatenate made it float64)."""
    dtype = xs[0].dtype
    for x in xs[1:]:
        if x.dtype != dtype:
            return dtypes.result_type(*xs)
    return dtype


class Stack(Function):
    """``stack``: the tensors (of one shape) along a new dimension, in their promoted dtype; each gradient is its
    slice, in its tensor's own dtype."""

    raw = True
    complex_ok = True
    backward_name = "StackBackward0"

    @staticmethod
    def forward(ctx, *xs, dim=0):
        xp = xp_of(xs[0])
        axis = _join_dim(dim, xs[0].ndim + 1)
        for i, x in enumerate(xs[1:], 1):
            if x.shape != xs[0].shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(xs[0].shape)} at entry "
                                   f"0 and {list(x.shape)} at entry {i}")
        dtype = _joined_dtype(xs)
        out = xp.stack([x.astype(dtype, copy=False) for x in xs], axis=axis)
        ctx.axis = axis
        ctx.dtypes = [x.dtype for x in xs]
        return out

    @staticmethod
    def backward(ctx, gy):
        lead = (slice(None),) * ctx.axis
        return tuple(gy[lead + (i,)].astype(dt, copy=False) for i, dt in enumerate(ctx.dtypes))


class Cat(Function):
    """``cat``: the tensors joined along ``dim``, in their promoted dtype, checked as PyTorch checks them (the same
    number of dimensions, the same sizes but along ``dim``, none 0-d); a 1-D empty tensor is skipped beside
    tensors of more dimensions, as PyTorch's legacy rule. Each gradient is its piece, in its tensor's dtype."""

    raw = True
    complex_ok = True
    backward_name = "CatBackward0"

    @staticmethod
    def forward(ctx, *xs, dim=0):
        xp = xp_of(xs[0])
        for i, x in enumerate(xs):
            if not x.ndim:
                raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        kept = [x.shape != (0,) for x in xs]
        ref = next((x for x, k in zip(xs, kept) if k), xs[0])
        if ref.ndim == 1:  # (only beside tensors of more dimensions is an empty 1-D one skipped)
            kept = [True] * len(xs)
        axis = _join_dim(dim, ref.ndim)
        for i, x in enumerate(xs):
            if not kept[i]:
                continue
            if x.ndim != ref.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
            for d, (want, got) in enumerate(zip(ref.shape, x.shape)):
                if d != axis and want != got:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. Expected size {want} "
                                       f"but got size {got} for tensor number {i} in the list.")
        dtype = _joined_dtype(xs)
        out = xp.concatenate([x.astype(dtype, copy=False) for x, k in zip(xs, kept) if k], axis=axis)
        ctx.axis = axis
        ctx.sizes = [x.shape[axis] if k else None for x, k in zip(xs, kept)]
        ctx.dtypes = [x.dtype for x in xs]
        return out

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        sizes = [n for n in ctx.sizes if n is not None]
        pieces = iter(xp.split(gy, np.cumsum(sizes)[:-1].tolist(), axis=ctx.axis))
        return tuple(xp.zeros((0,), dtype=dt) if n is None else next(pieces).astype(dt, copy=False)
                     for n, dt in zip(ctx.sizes, ctx.dtypes))


class Split(Function):
    """``split``, ``chunk``, ``split_with_sizes`` and ``unbind`` (``sizes`` None): one node whose outputs are views
    of the input's pieces along ``dim``, as PyTorch's ``SplitBackward0``, ``SplitWithSizesBackward0`` and
    ``UnbindBackward0`` (``name``). Backward joins the pieces' gradients in one array (zeros for a piece no path
    used), where a node per piece had each add its gradient into zeros of the input's size.

    A piece, and a view of one, may not be written in place where that would record, nor read back after its
    base was (PyTorch refuses both: ``Tensor._before_write``, ``tensor._refresh_views``), but where the
    ``unsafe_`` forms made it (``UnsafeSplitBackward0``: PyTorch leaves that to the caller)."""

    raw = True
    complex_ok = True
    apply = classmethod(apply_several)

    def backward_name(self):
        return self.op_name

    @staticmethod
    def forward(ctx, x, sizes, dim, name):
        ctx.axis = dim
        ctx.op_name = name
        lead = (slice(None),) * dim
        if sizes is None:
            return tuple(index_view(x, lead + (i,)) for i in range(x.shape[dim]))
        out, start = [], 0
        for n in sizes:
            out.append(x[lead + (slice(start, start + n),)])
            start += n
        return tuple(out)

    @staticmethod
    def backward(ctx, *gys):
        xp = xp_of(gys[0])
        if ctx.op_name == "UnbindBackward0":
            return xp.stack(gys, axis=ctx.axis)
        return xp.concatenate(gys, axis=ctx.axis)

    @property
    def unsafe(self) -> bool:
        """Whether its pieces may be written in place (``unsafe_split``, ``unsafe_chunk``)."""
        return self.op_name.startswith("Unsafe")


def along(xp, index, axis):
    """The index tuple that picks ``index``'s entries along ``axis`` and its own position in every other
    dimension (``take_along_axis``'s, written out so that a gradient can be added back through it)."""
    nd = index.ndim
    return tuple(index if d == axis else xp.arange(index.shape[d]).reshape([-1 if e == d else 1 for e in range(nd)])
                 for d in range(nd))


# the ops whose picks may repeat an entry (its gradient then adds up)
_PICKS_REPEAT = frozenset({"GatherBackward0", "CummaxBackward0", "CumminBackward0"})


class TakeAlong(Function):
    """Entries picked along one dimension by an index array of the input's rank (``gather``; the values of
    ``sort``, ``topk``, ``kthvalue``, ``median``, ``mode``, ``cummax``, whose indices the caller found; ``name``
    PyTorch's node's, ``squeeze`` whether the picked dimension is dropped, as those ops' ``keepdim=False`` drop
    it in the same node): the gradient is added back where each entry came from (an entry picked twice by
    ``gather`` gets both). A 0-d input is its own pick."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return self.op_name

    @staticmethod
    def forward(ctx, x, index, dim, name="GatherBackward0", squeeze=False):
        xp = xp_of(x)
        ctx.op_name = name
        ctx.op_label = name[:-len("Backward0")].capitalize()  # Gather, Sort or Topk, in the graph panel
        if x.ndim == 0:
            ctx.meta = (x.shape, False, None)
            ctx.saved = (Ellipsis,)
            return x.copy()
        where = along(xp, index, dim)
        ctx.meta = (x.shape, name in _PICKS_REPEAT, dim if squeeze else None)
        ctx.saved = where
        out = x[where]
        return out.squeeze(dim) if squeeze else out

    @staticmethod
    def backward(ctx, gy):
        shape, repeats, squeezed = ctx.meta
        where = ctx.saved
        xp = xp_of(gy)
        if squeezed is not None:
            gy = xp.expand_dims(gy, squeezed)
        gx = xp.zeros(shape, dtype=gy.dtype)
        if repeats:
            add_at(gx, where, gy)
        else:  # sort and topk pick each entry at most once
            gx[where] = gy
        return gx, None


class ConstantPad(Function):
    """``F.pad(x, pad, 'constant', value)`` as one node, PyTorch's ``ConstantPadNdBackward0``: ``widths`` is (before,
    after) per dimension (0, 0 where unpadded), a negative width crops; the output is ``value`` around the kept
    part. The gradient is the output's over the kept part, 0 over what was cropped."""

    raw = True
    complex_ok = True
    backward_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, widths, value=0.0):
        xp = xp_of(x)
        if any(n + b + a < 0 for n, (b, a) in zip(x.shape, widths)):
            raise RuntimeError(f"The input size {list(x.shape)}, plus negative padding would result in a negative "
                               f"output size")
        crop = tuple(slice(min(max(-b, 0), n), max(n - max(-a, 0), min(max(-b, 0), n)))
                     for n, (b, a) in zip(x.shape, widths))
        kept = x[crop]
        shape = tuple(n + b + a for n, (b, a) in zip(x.shape, widths))
        place = tuple(slice(max(b, 0), max(b, 0) + k) for k, (b, _) in zip(kept.shape, widths))
        out = xp.full(shape, value, dtype=x.dtype)
        out[place] = kept
        ctx.meta = (x.shape, crop, place)
        return out

    @staticmethod
    def backward(ctx, gy):
        shape, crop, place = ctx.meta
        part = gy[place]
        if part.shape == tuple(shape):
            return part.copy()
        g = xp_of(gy).zeros(shape, dtype=gy.dtype)
        g[crop] = part
        return g


class Repeat(Function):
    """``x.repeat(*sizes)`` as one node, PyTorch's ``RepeatBackward0``: the tiles copied out (more sizes than
    dimensions add leading ones); the gradient sums the tiles back."""

    raw = True
    complex_ok = True
    backward_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, x, sizes):
        shape = (1,) * (len(sizes) - x.ndim) + x.shape
        ctx.meta = (x.shape, shape, sizes)
        return xp_of(x).tile(x.reshape(shape), sizes)

    @staticmethod
    def backward(ctx, gy):
        x_shape, shape, sizes = ctx.meta
        split = tuple(n for r, s in zip(sizes, shape) for n in (r, s))
        return gy.reshape(split).sum(axis=tuple(range(0, 2 * len(sizes), 2))).reshape(x_shape)


class Trace(Function):
    """The sum of a matrix's diagonal, one node as PyTorch's ``TraceBackward0``; the gradient is the output's on
    the diagonal, 0 elsewhere."""

    raw = True
    complex_ok = True
    backward_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "b":
            raise NotImplementedError("\"trace\" not implemented for 'Bool'")
        ctx.meta = x.shape
        dtype = np.int64 if x.dtype.kind in "iu" else x.dtype  # (an integer trace in int64, as sum's)
        return xp_of(x).asarray(x.trace(dtype=dtype), dtype=dtype)

    @staticmethod
    def backward(ctx, gy):
        n, m = ctx.meta
        return xp_of(gy).eye(n, m, dtype=gy.dtype) * gy


class Pad(Function):
    """``F.pad``'s reflect and replicate modes as one node, as PyTorch's (``ReflectionPad2DBackward0``,
    ``ReplicationPad1DBackward0``, ...; ``name``): along each padded dimension (``maps``: ``(axis, input size,
    indices on the device, the centre (first output, first input, length), the edges ((output, input), ...))``) the
    output takes the input at its index. Backward puts the centre's gradient back as one slice and adds each edge
    position's to the input it copied (a few slices), where an index_select per dimension added its gradient back
    through a scatter."""

    raw = True
    complex_ok = True

    def backward_name(self):
        return self.op_name

    @staticmethod
    def forward(ctx, x, maps, name):
        ctx.maps = maps
        ctx.op_name = name
        xp = xp_of(x)
        for axis, _, index, _, _ in maps:
            x = xp.take(x, index, axis=axis)
        return x

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        g = gy
        for axis, n, _, (first_out, first_in, length), edges in reversed(ctx.maps):
            shape = list(g.shape)
            shape[axis] = n
            gx = xp.zeros(shape, dtype=g.dtype)
            lead = (slice(None),) * axis
            gx[lead + (slice(first_in, first_in + length),)] = g[lead + (slice(first_out, first_out + length),)]
            for out, src in edges:
                gx[lead + (src,)] += g[lead + (out,)]
            g = gx
        return g


def pad_map(xp, axis, n, where, before):
    """A :class:`Pad` map of dimension ``axis`` (size ``n``, ``before`` positions padded before it, negative for a
    crop): ``where``, the input index of each output position (host integers); its centre, the outputs that take
    the input as it is (output ``k`` input ``k - before``); and the other positions, with the inputs they copy."""
    where = np.asarray(where, dtype=np.int64)
    first_out, stop = max(before, 0), min(before + n, where.size)
    length = max(stop - first_out, 0)
    edges = tuple((int(k), int(where[k])) for k in range(where.size) if not first_out <= k < first_out + length)
    return axis, n, xp.asarray(where), (first_out, first_out - before, length), edges
