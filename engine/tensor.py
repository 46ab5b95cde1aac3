"""Tensor: an n-dimensional array (NumPy on the CPU, CuPy on a CUDA GPU) with PyTorch's API and autograd."""

from __future__ import annotations

import builtins
import operator as _operator
import re as _re
import sys
from collections import namedtuple
from weakref import ref as _weakref

import numpy as np

from . import _alloc, _deferred, _layouts
from . import backend as _backend
from . import dtypes as _dtypes
from . import kernels as _kernels
from . import printing as _printing
from . import random as _random
from . import threads as _threads
from .backend import CPU, device_of_array, resolve, to_host, xp_of
from .dtypes import promote as _promote
from .errors import (
    broadcast_error,
    c_type_name,
    complex_refusal,
    expanded_shape,
    index_error,
    product_dtypes_error,
    raise_broadcast_error,
    setitem_error,
    shapes_error,
)
from .legacy import LegacyTensorType, parse_legacy_name
from .tensor_math import TensorMath

__all__ = ["Tensor", "Size", "is_tensor"]

_float = builtins.float
_int = builtins.int
_bool = builtins.bool


class Size(tuple):
    """A tensor's shape: a tuple, printed as ``engine.Size([64, 10])`` (PyTorch's ``torch.Size([64, 10])``, named
    as the dtypes are: ``engine.float32``); slicing, ``+`` and ``*`` give a Size again, as in PyTorch
    (``x.shape[1:].numel()``)."""

    def __repr__(self):
        return f"engine.Size({list(self)})"

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return Size(got) if index.__class__ is slice else got

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times):
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


def _return_type(name: str):
    """PyTorch's ``torch.return_types.max``: a named pair, printed one field a line."""
    def __repr__(self):
        return f"engine.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    return type(name, (namedtuple(name, ["values", "indices"]),), {"__slots__": (), "__repr__": __repr__})


return_types_max = _return_type("max")
return_types_min = _return_type("min")
return_types_sort = _return_type("sort")
return_types_topk = _return_type("topk")


def _wrap(array, requires_grad=False):
    """A Tensor around ``array`` (no copy). NumPy scalars from reductions become 0-d arrays."""
    if array.__class__ in _SCALAR_TYPES:
        array = np.asarray(array)
    t = _new(Tensor)
    t._data = array
    t._rg = requires_grad
    return t


_new = object.__new__
_SCALAR_TYPES = frozenset(np.sctypeDict.values()) - {np.ndarray}
_ndarray = np.ndarray
_add_reduce = np.add.reduce  # ndarray.sum() without the Python function NumPy's method goes through


def _ipow(a, b):
    """``a **= b`` on arrays, an integer's negative powers as PyTorch's (:func:`functions.arithmetic.power`;
    NumPy refuses them, having written part of ``a``)."""
    if a.dtype.kind in "iu":
        if b.__class__ is _int and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if getattr(b, "dtype", None) is not None and b.dtype.kind == "i":
            a[...] = _fn.arithmetic.power(*_promote(a, b)).astype(a.dtype)
            return a
    a **= b
    return a


def _inplace_op(fn_name: str, iop, out_of_place=None):
    """``self op= other``: recorded as ``functions.<fn_name>`` when the graph needs it (the tensor then
    points at the new node), else done in place on the array with its in-place operator (for an array,
    its ufunc with ``out=`` itself); ``out_of_place``: the op for a result cast back, where not ``operator``'s."""

    def recorded(self, other):
        if self._data.dtype.kind not in "fc":  # (an integer or bool tensor, and a float that requires grad)
            _check_out_shape(self._data, other._data if isinstance(other, Tensor) else other)
            raise _cast_refusal(self._data, other._data if isinstance(other, Tensor) else other, true_divide) \
                or RuntimeError("an integer tensor cannot take a gradient")
        self._check_inplace()
        try:
            out = getattr(_fn, fn_name).apply(self._before_write(), other)
        except ValueError:
            _check_broadcast(self._data, other._data if isinstance(other, Tensor) else other)
            raise
        if out._data.shape != self._data.shape:  # (the op broadcast this tensor: an in-place op keeps its shape)
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                               f"{list(out._data.shape)}")
        self._rebind(out)
        return self

    def method(self, other):
        if subtract and (self._data.dtype.kind == "b" or _is_bool(other)):
            check_subtraction(self, other)
        if isinstance(other, Tensor):
            if (self._rg or other._rg) and (not _grad_off or _get_ident() not in _grad_off):
                return recorded(self, other)
            if other._data.__class__ is not self._data.__class__:
                _check_same_device(self, other)
            other = other._data
        elif _foreign(other):
            return NotImplemented
        elif self._rg and (not _grad_off or _get_ident() not in _grad_off):
            return recorded(self, other)
        try:
            iop(self._data, other)
        except OverflowError:  # a Python int out of a narrow integer dtype's range: wrapped, as PyTorch casts it
            if other.__class__ is not _int:
                raise
            iop(self._data, _dtypes.wrapped_int(other, self._data.dtype))
        except TypeError:  # NumPy's refusal to cast the result into this tensor's dtype: PyTorch's words for it
            # (after its check of the shapes), or, within a category (an int32 result into a uint8 tensor), the
            # cast PyTorch makes
            _check_out_shape(self._data, other)
            refusal = _cast_refusal(self._data, other, true_divide)
            if refusal is not None:
                raise refusal from None
            data = self._data
            data[...] = (out_of_place or op)(*_dtypes.promote(data, other, true_divide)).astype(data.dtype)
        except ValueError:
            _check_broadcast(self._data, other)
            _check_overlap(self._data)
            shape = np.broadcast_shapes(self._data.shape, getattr(other, "shape", ()))
            if shape != self._data.shape:
                raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                                   f"{list(shape)}") from None
            raise  # another refusal (a read-only array's)
        data = self._data
        # (else only this tensor holds the array: no node can have saved it, no view or other tensor sees it; the
        # tutorial's w -= ...; "_shares": a CuPy as_strided header, which has no base)
        if data.base is not None or _getrefcount(data) > _SOLE_REFS or "_shares" in self.__dict__:
            _writes.wrote(data)
        return self

    true_divide = fn_name == "Div"
    subtract = fn_name == "Sub"
    op = getattr(_operator, iop.__name__.strip("_")[1:])  # (iadd -> add: the op out of place, for a cast NumPy will
    method.__name__ = f"__{iop.__name__.strip('_')}__"  # not make)
    return method


def _cast_refusal(data, other, true_divide=False) -> Exception | None:
    """PyTorch's refusal of an in-place op whose result has a higher category than the tensor (a float result
    into an integer tensor, an integer one into a bool tensor: ``n += 0.5``, ``n /= 2``); None where PyTorch
    casts the result (within a category: int32 into uint8)."""
    want = _dtypes.result_type(data, other)
    if true_divide and want.kind not in "fc":
        want = np.dtype(_dtypes.get_default_dtype().np)
    return None if _dtypes.can_cast(want, data.dtype) else _dtypes.cast_refusal(want, data.dtype)


_BOOLS = (bool, np.dtype(np.bool_))
_INT64 = np.dtype(np.int64)


def _setitem_refusal(data, index, value, error):
    """``x[index] = value`` refused in PyTorch's words (:func:`errors.setitem_error`), or NumPy's ``error``."""
    try:
        places = np.broadcast_to(np.empty((), np.bool_), data.shape)[_backend.to_host(index) if hasattr(index, "shape")
                                                                       else index]
    except Exception:  # noqa: BLE001 - an index this cannot replay on the host: NumPy's own words, then
        return error
    mask = getattr(index, "dtype", None) == np.bool_ or (isinstance(index, tuple) and any(
        getattr(i, "dtype", None) == np.bool_ for i in index))
    kind = _dtypes.from_numpy_dtype(value.dtype).legacy_name if hasattr(value, "dtype") else "FloatTensor"
    return setitem_error(places.shape, getattr(value, "shape", ()), mask, error, kind)


def _check_alpha(self, other) -> None:
    """PyTorch's refusal of a float ``alpha`` where ``add``/``sub`` is of integers (it would be truncated)."""
    if _dtypes.result_type(self._data, _raw(other)).kind in "biu":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _check_integer_divisor(a, b) -> None:
    """PyTorch's refusal of an integer division (``//``, ``%``, ``fmod``, ``div`` with rounding) by zero on the CPU
    (NumPy gives 0 and a warning; a CUDA kernel cannot raise, and PyTorch's does not check there either)."""
    kind = "f" if a.__class__ is float else "b" if a.__class__ is _bool else getattr(a, "dtype", _INT64).kind
    if b.__class__ is _int or b.__class__ is _bool:
        zero = b == 0 and kind in "iu"
    elif b.__class__ is _ndarray:  # (a bool divisor with an integer dividend divides as an integer)
        zero = (b.dtype.kind in "iu" and kind in "iub" or b.dtype.kind == "b" and kind in "iu") and not b.all()
    else:
        return
    if zero:
        raise RuntimeError("ZeroDivisionError")


def _plain_binary(op, reflected=False, bitwise=False, shift=False):
    """A binary op with no gradient (``//``, ``%``, ``&``, ``|``, ``^``, ``<<``, ``>>``), in PyTorch's result
    dtype (NumPy's differs: a bool tensor // 2.5 is float32 there, not float64). The bitwise ones take integers
    and bools only, the shifts integers only, as in PyTorch."""

    def method(self, other):
        given = other
        if isinstance(other, Tensor):
            if other._data.__class__ is not self._data.__class__:
                _check_same_device(self, other)
            other = other._data
        elif not isinstance(other, (_int, float, _bool)) and not hasattr(other, "dtype"):
            return NotImplemented
        a, b = (other, self._data) if reflected else (self._data, other)
        if a.__class__ is b.__class__ and a.shape != b.shape:  # (the shapes are checked first, as PyTorch's)
            _check_broadcast(a, b)
        if divides and (self._data.dtype.kind == "c" or _is_complex_operand(given)):
            _no_complex(self if self._data.dtype.kind == "c" else given if isinstance(given, Tensor)
                        else _wrap(np.asarray(given, dtype=np.complex64)), "div_floor" if floor_divide else "remainder")
        if divides:
            _check_integer_divisor(a, b)
        if bitwise:
            want = _dtypes.result_type(a, b)
            if want.kind not in ("iu" if shift else "biu"):
                name = {"and_": "bitwise_and", "or_": "bitwise_or", "xor": "bitwise_xor", "lshift": "lshift",
                        "rshift": "rshift"}[op.__name__]
                raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtypes.scalar_name(want)}\'')
        a, b = _dtypes.promote(a, b)
        if divides and getattr(a, "dtype", a.__class__) in _BOOLS and getattr(b, "dtype", b.__class__) in _BOOLS:
            raise NotImplementedError(f'"{"div_floor" if op is _operator.floordiv else "remainder"}_cpu" not '
                                      "implemented for 'Bool'")
        try:
            out = _fn.elementwise.remainder(xp_of(self._data), a, b) if modulo else op(a, b)
        except ValueError as error:
            raise_broadcast_error(a, b, error)
        if floor_divide and out.dtype.kind == "f" and (self._rg or (given is not other and given._rg)) and (
                not _grad_off or _get_ident() not in _grad_off):  # (PyTorch's node whose backward refuses)
            pair = (given, self) if reflected else (self, given)
            return _fn.NotImplementedDerivative.apply(*pair, value=out, op="aten::floor_divide")
        return _wrap(out)

    divides = op is _operator.floordiv or op is _operator.mod
    floor_divide = op is _operator.floordiv
    modulo = op is _operator.mod
    method.__name__ = f"__{'r' if reflected else ''}{op.__name__.strip('_')}__"
    return method


def _plain_in_place(out_of_place, name):
    """``x op= y`` for an op with no gradient: the result written into the tensor's memory (views and aliases see
    it), in the tensor's dtype where PyTorch allows the cast (not a float into an integer tensor, nor an integer
    into a bool one)."""

    def method(self, other):
        if self._rg and (not _grad_off or _get_ident() not in _grad_off):
            self._check_inplace()
            raise RuntimeError(f"the derivative for '{name}' is not implemented: {name} in place on a tensor that "
                               "requires grad has no gradient to record (do it on a detach()ed tensor, or under "
                               "no_grad)")
        if isinstance(other, Tensor):
            _check_out_shape(self._data, other._data)
        result = out_of_place(self, other)
        if result is NotImplemented:
            return NotImplemented
        data = self._data
        _check_overlap(data)
        _keep_shape(data, result._data)
        if not _dtypes.can_cast(result._data.dtype, data.dtype):
            raise _dtypes.cast_refusal(result._data.dtype, data.dtype)
        data[...] = result._data
        _writes.wrote(data)
        return self

    method.__name__ = f"{name}_"
    return method


def _numpy_names(dim, keepdim, axis, keepdims):
    """``axis=`` and ``keepdims=``, NumPy's names for ``dim`` and ``keepdim``, which PyTorch's reductions take too
    (``P.sum(1, keepdims=True)``, as a learner from NumPy writes it); both names at once is an error, as there."""
    if axis is not None:
        if dim is not None:
            raise TypeError("got both 'dim' and its alias 'axis'")
        dim = axis
    return dim, (keepdim if keepdims is None else bool(keepdims))


def _required_dim(dim, axis, fn: str):
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{fn}() got both 'dim' and its alias 'axis'")
        return axis
    if dim is None:
        raise TypeError(f"{fn}() missing 1 required positional argument: 'dim'")
    return dim


def _viewed(base: Tensor, view: Tensor, tracked: bool = True) -> Tensor:
    """``view``, made from ``base`` by a view op (indexing, ``t()``, ``view``, ``permute``, ``diagonal``, ...); where
    the op was recorded on a base that is not a leaf, noted on the base (weakly), so that an in-place op on the base
    re-points the view's node at the base's new one (:func:`_refresh_views`), as PyTorch regenerates a view's
    ``grad_fn``. A leaf has no history to re-point, and an in-place op on it is refused where it would record.

    Where the op was not recorded (a base that does not require grad, or grad mode off), the view notes the tensor
    whose memory it views (the first base of a chain of such views), and whether grad mode was off: PyTorch's view
    metadata. A write into the view that records (``x[0][1] = w[0]``, ``x[1:3].copy_(w)``) then gives that base its
    node (:meth:`Tensor._view_chain`), as PyTorch's does, and a view made with grad mode off refuses such a write,
    as PyTorch's does. That base notes the view (weakly), so that such a write, or any that gives the base a node,
    gives it one too (:func:`_refresh_plain_views`). (~0.25 us a view; the tutorial's manual step makes three.)
    ``tracked`` is False for an op that copied, ``"shared"`` for one whose result shares memory though its array
    may have no ``base`` (CuPy's ``as_strided``: :func:`_strided_viewed`)."""
    node = view.grad_fn
    if node is None:
        if tracked and (view._data.base is not None or tracked == "shared"):  # (not a copy)
            d = base.__dict__
            src = d.get("_src")
            if src is None or base.grad_fn is not None:
                src = base
            elif "_src_no_grad" in d:
                view._src_no_grad = True
            view._src = src
            if _grad_off and _get_ident() in _grad_off:
                view._src_no_grad = True
            _note_plain_view(src, view)
        return view
    if base.grad_fn is not None:
        step = _fn.shape.view_step(node, view._data.shape)
        if step is not None:
            _note_view(base, view, step)
    return view


def _note_view(base: Tensor, view: Tensor, step) -> None:
    """``view`` (made from ``base`` by ``step``) noted on the base weakly, for :func:`_refresh_views`."""
    views = base.__dict__.get("_views")
    if views is None:
        base._views = [(_weakref(view), step)]
        return
    n = len(views)
    if n >= 32 and not n & (n - 1):  # (at each power of two: the dead ones dropped)
        views[:] = [v for v in views if v[0]() is not None]
    views.append((_weakref(view), step))


def _strided_viewed(base: Tensor, view: Tensor) -> Tensor:
    """:func:`_viewed` for an ``as_strided``/``unfold`` view, whose array, on a GPU, is a header on the base's
    memory without a ``base`` (CuPy's ``as_strided``): marked ``_shares``, so that a write into it is noted and goes
    into that memory (:meth:`Tensor._before_write`)."""
    if view._data.__class__ is not _ndarray:
        view._shares = True
    return _viewed(base, view, tracked="shared")


class _WeakViews(list):
    """Weak references to the views of a tensor made without a node (:func:`_refresh_plain_views`). The dead ones
    are dropped when the list reaches ``limit``, then twice the live ones (at least 32): a tensor viewed at every
    step keeps a short list, and one with many live views (``rows = [x[i] for i in range(n)]``) is not scanned at
    every few views."""

    __slots__ = ("limit",)

    def prune(self):
        self[:] = [ref for ref in self if ref() is not None]
        self.limit = max(32, 2 * len(self))


def _note_plain_view(root: Tensor, view: Tensor):
    """``view``, made without a node from the memory of ``root``, noted on it weakly (:func:`_refresh_plain_views`)."""
    views = root.__dict__.get("_plain_views")
    if views is None:
        views = root._plain_views = _WeakViews()
        views.limit = 32
    views.append(_weakref(view))
    if len(views) >= views.limit:
        views.prune()


def _refresh_plain_views(root: Tensor, skip=None):
    """After a write gave ``root`` a node (``x[0] = w[0]``, ``x.add_(w)``, a write into a view of it): each live
    view of it made without a node (:func:`_viewed`) whose memory is still within root's gets a node that takes
    root as it is now, as PyTorch regenerates a view's ``grad_fn`` (``AsStridedBackward0``): its elements' places in
    root's flat memory, picked. Without this, ``a = x[:2]; x[0] = w[0]; a.sum().backward()`` found no graph, and
    with another path to ``w``, lost this one's gradient. A view made with grad mode off gets a node that refuses
    the backward, as PyTorch refuses it."""
    flat = None
    views = root._plain_views
    views.prune()  # (the dead ones dropped here too: once a tensor has a node, its new views are noted elsewhere)
    for ref in views:
        view = ref()
        if view is None or view is skip:
            continue
        places = _flat_places(root._data, view._data)
        parts = None if places is not None else _part_places(root._data, view._data)
        if places is None and parts is None:
            continue  # (root's memory was replaced, or the view was given another array)
        if flat is None:
            flat = _fn.Reshape.apply(root, (-1,))
        if "_src_no_grad" in view.__dict__:
            node = _fn.shape.RefusedView.apply(flat, message=_NO_GRAD_VIEW_WRITTEN).grad_fn
        elif parts is not None:  # (a view that changed the dtype: the parts of root's elements)
            node = _parts_of(root, parts).grad_fn
        else:
            node = _fn.GetItem.apply(flat, index=places).grad_fn
            node.backward_name = "AsStridedBackward0"
        view._rebound_at = root._rebound_at
        view._remember()
        view._rg, view.grad_fn, view._out_index = True, node, 0
        if "_views" in view.__dict__:
            _refresh_views(view, skip)


def _view_of_written(base: Tensor, steps, view_data=None):
    """A node for a view (``steps`` of :meth:`Tensor._view_chain`) of ``base`` after a write through it gave the
    base its new node: the view ops replayed on the base (the view keeps its own array). A view known by its places
    in the base's memory (a first ``"flat"`` step) gets an ``as_strided`` of the base with its array's geometry, a
    view op a second write through it finds (``v.mul_(w).exp_()``)."""
    if steps[0][0] == "flat" and view_data is not None:
        node = _strided_node(base, view_data)
        if node is not None:
            return node
    t = base
    for step in steps:
        if step[0] == "flat":
            t = _fn.GetItem.apply(_fn.Reshape.apply(t, (-1,)), index=step[1])
        elif step[0] == "parts":
            t = _parts_of(t, step[1])
        else:
            t = _fn.shape.view_node(t, step)
    node = t.grad_fn
    node.backward_name = "AsStridedBackward0"
    return node


def _parts_of(t: Tensor, places) -> Tensor:
    """The elements of ``t`` at ``places`` counted in its real coordinates (:func:`_part_places`), recorded: a real
    view's values, or a complex view's as its real and imaginary parts put together."""
    coords = _fn.Reshape.apply(_fn.complex_ops.ViewAsReal.apply(t) if t.is_complex() else t, (-1,))
    if places.dtype.kind == "c":
        return _fn.complex_ops.Complex.apply(_fn.GetItem.apply(coords, index=places.real.astype(np.int64)),
                                             _fn.GetItem.apply(coords, index=places.imag.astype(np.int64)))
    return _fn.GetItem.apply(coords, index=places)


def _strided_node(base: Tensor, arr):
    """The node of ``base.as_strided`` with the geometry of ``arr`` (an array within base's memory): a view's node
    that reads base as it is now; None where base's memory cannot show it."""
    try:
        return _fn.AsStrided.apply(base, arr.shape, tuple(s // arr.itemsize for s in arr.strides),
                                   _fn.shape.storage_of(arr)[1]).grad_fn
    except RuntimeError:
        return None


def _flat_places(root, arr):
    """The places, in the flat ``root`` array (C-contiguous), of the elements of ``arr``, a view of its memory: an
    integer array of ``arr``'s shape; None where ``arr`` is not within ``root``'s memory, or ``root`` is not
    contiguous."""
    if root.dtype != arr.dtype or not root.flags.c_contiguous:
        return None
    size = arr.itemsize
    off = _data_ptr(arr) - _data_ptr(root)
    if off < 0 or off % size or any(st % size for st in arr.strides):
        return None
    off //= size
    strides = [st // size for st in arr.strides]
    if arr.size and off + sum((n - 1) * st for n, st in zip(arr.shape, strides)) >= root.size:
        return None
    return _fn.shape.memory_places(xp_of(arr), arr.shape, strides, off)


def _part_places(root, arr):
    """:func:`_flat_places` of a view that changed the dtype, counted in ``root``'s real coordinates (a complex
    element's real part at 2k, its imaginary part at 2k + 1): integers where ``arr`` is real, complex numbers (the
    places of its real and imaginary parts) where it is complex; None where it is neither kind of view."""
    ops = _fn.complex_ops
    if root.dtype.kind == "c" and arr.dtype == _dtypes.real_of(root.dtype):
        return _flat_places(ops.as_real(root).reshape(-1), arr) if root.flags.c_contiguous else None
    if arr.dtype.kind == "c" and root.dtype == _dtypes.real_of(arr.dtype):
        pairs = _flat_places(root, ops.as_real(arr))
        return None if pairs is None else pairs[..., 0] + 1j * pairs[..., 1]
    return None


_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).")
_NO_GRAD_VIEW_WRITTEN = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace with "
    "grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you don't want the "
    "inplace to be tracked) or both outside (if you want the inplace to be tracked).")


_PIECE_TAIL = ("This view is the output of a function that returns multiple views. Such functions do not allow the "
               "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


_BACKWARD_SUFFIX = _re.compile(r"Backward\d*$")


def _piece_refusal(t: Tensor, what: str, index=None) -> str:
    """PyTorch's message for a piece of ``split``/``chunk``/``unbind`` (or a view of one, ``t``) written in place
    (``what``: "is being modified inplace"), or read back after its base was: its op named as PyTorch names it
    ("Output 1 of Split"). ``t[index] = v`` writes, in PyTorch, the view its ints and slices make (output 0 of
    Select or Slice), or ``t`` itself where they make none."""
    name, out = t.grad_fn.name(), t._out_index
    if index is not None:
        parts = index if index.__class__ is tuple else (index,)
        basic = tuple(p if p is None or p is Ellipsis or isinstance(p, (_int, np.integer, slice)) else slice(None)
                      for p in parts)
        viewed = _fn.shape.index_backward_name(t._data.shape, basic)
        if viewed != "AliasBackward0":
            name, out = viewed, 0
    return f"Output {out} of {_BACKWARD_SUFFIX.sub('', name)} is a view and {what}. {_PIECE_TAIL}"


def _refresh_views(base: Tensor, skip=None, top=None, refused=False):
    """After an in-place op gave ``base`` a new node (at tick ``base._rebound_at``): each live view made from it
    whose memory is still the base's gets a node that takes the base as it is now (PyTorch's ``AsStridedBackward0``),
    and the same for the views made from that view; the nodes that took a view before keep where it stood
    (``Tensor._remember``). Without this, ``v = h[0]; h.relu_(); v.backward()`` would reach ``h`` around the ReLU.
    A piece of ``split`` (a ``"piece"`` step), and each view made from one (``refused``), gets a node that refuses
    the backward instead, as PyTorch refuses their ``grad_fn``."""
    for ref, step in base._views:
        view = ref()
        if view is None or view is skip:
            continue
        try:
            again = _fn.shape.replay_view(base._data, (step,))
        except (ValueError, IndexError, TypeError, RuntimeError):
            continue
        mine = view._data
        if (again.shape != mine.shape or again.strides != mine.strides or again.dtype != mine.dtype
                or _data_ptr(again) != _data_ptr(mine)):
            continue  # no longer a view of the base's memory (the op copied, or the view was given another array)
        node = None
        refuse = refused or step[0] == "piece"  # (a piece of split, or a view of one: PyTorch refuses its gradient)
        if refuse:
            node = _fn.shape.RefusedView.apply(base, message=_piece_refusal(
                view, "its base or another view of its base has been modified inplace")).grad_fn
        elif step[0] == "strided" and top is not None:  # (an as_strided may show more of the top base than its input)
            node = _strided_node(top, mine)
        if node is None:
            node = _fn.shape.view_node(base, step).grad_fn
        node.backward_name = "AsStridedBackward0"
        view._rebound_at = base._rebound_at
        view._remember()
        view._rg, view.grad_fn, view._out_index = True, node, 0
        if "_views" in view.__dict__:
            _refresh_views(view, skip, base if top is None else top, refuse)


def _check_overlap(data):
    """PyTorch's refusal of a write into an expanded tensor, whose elements share memory (NumPy's view is read-only;
    CuPy's would be written by several threads at once)."""
    if 0 in data.strides and data.size and any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")


def _distinct(data):
    """Where ``data`` is an expanded array (its elements share memory), the view of each memory place once, which
    can be written: ``fill_`` and ``zero_`` write one value, so PyTorch lets them write an expanded tensor."""
    if 0 not in data.strides:
        return data
    part = data[tuple(slice(0, 1) if st == 0 else slice(None) for st in data.strides)]
    if part.__class__ is _ndarray and not part.flags.writeable and data.base is not None and data.base.flags.writeable:
        part.flags.writeable = True  # (NumPy's broadcast view is read-only; this part of it repeats no element)
    return part


def _check_out_shape(data, other) -> None:
    """PyTorch's first check of an in-place op: ``other`` broadcasts to the tensor's own shape (before the result's
    dtype, or a division by zero, is looked at)."""
    other_shape = getattr(other, "shape", ())
    if other_shape and tuple(other_shape) != data.shape:
        _check_broadcast(data, other)
        shape = np.broadcast_shapes(data.shape, tuple(other_shape))
        if shape != data.shape:
            raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast shape {list(shape)}")


def _keep_shape(data, result) -> None:
    """PyTorch's refusal where an in-place op's result is bigger than the tensor (the op broadcast it)."""
    if result.shape != data.shape:
        raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")


def _saved_as_written(out: Tensor, memory) -> None:
    """An in-place op's result ``out`` was just written into ``memory`` (the tensor's own, which others see).

    Where the op's node also saved that memory (it took the tensor as an operand too: ``h.mul_(h)``), what it saved
    is now the result, not the operand: the write is noted after the node, which then refuses its backward, as
    PyTorch's does. Otherwise, where the node saved its result (``exp_``, ``tanh_``, ``relu_``), it holds the
    memory instead, which has the same values, so that a later write to the tensor is refused, as in PyTorch."""
    node = out.grad_fn
    saved = getattr(node, "saved", None) if node is not None else None
    owner = memory if memory.base is None else memory.base
    if node.__class__ is _fn.Cast or saved.__class__ is tuple and any(
            a is not None and hasattr(a, "base") and (a if a.base is None else a.base) is owner for a in saved):
        _writes.wrote(memory)  # (a cast: the op's node is behind it, and may have saved the memory too)
        return
    if saved and saved.__class__ is tuple:
        result = out._data
        if result.ndim == 0 and not any(a is result for a in saved):
            # (a 0-d result: the op saved the NumPy scalar its forward made, which the Tensor holds as a 0-d array)
            scalar = [a for a in saved if isinstance(a, np.generic) and a.dtype == result.dtype
                      and a.tobytes() == result.tobytes()]
            if scalar:
                result = scalar[0]
        if any(a is result for a in saved):
            node.saved = tuple(memory if a is result else a for a in saved)
            # the write just made (through a view: Tensor._rebind noted it) is this op's own: the node's check
            # counts from it (without this, h[1:].exp_() refused its own backward as "modified by an inplace
            # operation"; none of the node's other saved arrays is that memory, or the branch above was taken)
            node._own_write = _writes.last


def _fill_recorded(old: Tensor, value, tensor_name: str, number_name: str) -> Tensor:
    """``old``'s shape with every element ``value``, recorded as ``where(False, old, value)``: old gets a zero
    gradient (``old * 0 + value`` would turn its NaN and inf into NaN), a tensor value the sum of the output's; the
    node named as PyTorch's fill (``tensor_name`` for a tensor value, ``number_name`` for a number, a Scalar
    argument there and so no edge). Tensor.fill_ and torch.fill."""
    keep_none = xp_of(old._data).zeros(old._data.shape, dtype=bool)
    tensor_value = isinstance(value, Tensor)
    out = _named(_fn.Where.apply(keep_none, old, value if tensor_value and value._rg else _raw(value)),
                 tensor_name if tensor_value else number_name)
    if not tensor_value:
        out.grad_fn._edges = (1,)
    return out


def _named(t: Tensor, name: str) -> Tensor:
    """``t``, its node (when one was recorded) named ``name`` as PyTorch names the op that made it (a tensor method
    that applies a more general Function: ``unsqueeze`` applies Reshape and its node reads "UnsqueezeBackward0")."""
    node = t.grad_fn
    if node is not None:
        node.backward_name = name
    return t


def _is_complex_operand(value) -> bool:
    return value.__class__ is complex or (isinstance(value, Tensor) and value._data.dtype.kind == "c")


def _no_complex(t: Tensor, op: str, message: str | None = None, error=NotImplementedError) -> None:
    """PyTorch's refusal of a complex tensor where an op has no complex form and no Function of its own refuses it
    (``sort``, the comparisons: NumPy orders complex numbers lexicographically): ``message`` in ``error``, or its
    common words, ``"<op>_cpu" not implemented for 'ComplexFloat'`` (``_cuda`` on a GPU)."""
    data = t._data
    if data.dtype.kind == "c":
        if message is not None:
            raise error(message)
        raise complex_refusal(f"{op}_{'cpu' if data.__class__ is np.ndarray else 'cuda'}", data.dtype)


# the threads running a built-in's recorded backward (engine.autograd.higher): there ``t * 2`` and ``2 * t`` record as
# ATen's formulas do in C++, the number a Scalar argument (MulBackward1, one edge), not as Python's ``t * 2`` does
_aten_scalars: set = set()


def _scalar_node(t: Tensor, name: str) -> Tensor:
    """``t``, made by an op of a tensor and a number, its node named as PyTorch's op of a Tensor and a Scalar
    (``AddBackward1``, ``MulBackward1``: what ATen's own formulas record) with the tensor's edge alone (a Python
    ``x + 1`` wraps the 1 in a tensor: ``AddBackward0`` with two edges, the engine's default)."""
    node = t.grad_fn
    if node is not None:
        node.backward_name = name
        node._edges = (0,)
    return t


def _dim_error(dim, nd):
    raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], but "
                     f"got {dim})")


def _masked_fill_node(t: Tensor, value) -> Tensor:
    """``masked_fill``'s where(mask, value, x) named and edged as PyTorch's node: ``MaskedFillBackward0`` (x) for a
    number, ``MaskedFillBackward1`` (x, value) for a tensor."""
    node = t.grad_fn
    if node is not None:
        tensor_value = isinstance(value, Tensor)
        node.backward_name = "MaskedFillBackward1" if tensor_value else "MaskedFillBackward0"
        node._edges = (2, 1) if tensor_value else (2,)
    return t


def _index_steps(index: tuple, shape) -> list | None:
    """A basic index of several parts that act (an integer selects, a slice short of its dimension slices, None
    unsqueezes) as the indexes of one part each that apply them in turn, as PyTorch records ``x[0, 1]`` (two
    ``SelectBackward0``); None where fewer than two act, or the index is not basic (an array, a mask)."""
    if not _fn.shape.is_basic_index(index):
        return None
    consumed = sum(1 for p in index if p is not None and p is not Ellipsis)
    steps, dim, src = [], 0, 0
    for p in index:
        if p is Ellipsis:
            skipped = len(shape) - consumed
            dim, src = dim + skipped, src + skipped
        elif p is None:
            steps.append((slice(None),) * dim + (None,))
            dim += 1
        elif p.__class__ is slice:
            if src < len(shape) and p.indices(shape[src]) != (0, shape[src], 1):
                steps.append((slice(None),) * dim + (p,))
            dim, src = dim + 1, src + 1
        else:
            steps.append((slice(None),) * dim + (p,))
            src += 1
    return steps if len(steps) > 1 else None


def _foreign(other) -> bool:
    """Whether ``other`` is no operand of a Tensor's operator: PyTorch's take a Tensor, a number, or a NumPy (or
    CuPy) scalar or array. The operator then returns NotImplemented, and Python refuses a list, a string or None as
    it does for PyTorch (``x + [1]``: TypeError; ``x == None``: False)."""
    return not isinstance(other, (Tensor, _int, _float, complex)) and not hasattr(other, "dtype")


def _named_form(name: str, dunder):
    """``Tensor.<name>``, the method form of an operator (``mul``, ``eq``): a TypeError naming the argument where the
    operator would return NotImplemented, as PyTorch's."""

    def method(self, other):
        out = dunder(self, other)
        if out is NotImplemented:
            raise _not_an_operand(name, other)
        return out

    method.__name__ = name
    method.__doc__ = dunder.__doc__
    return method


def _not_a_tensor(name: str, argument: str, value) -> TypeError:
    """PyTorch's refusal of what is not a Tensor where a method takes one (``x.mm(3)``)."""
    return TypeError(f"{name}(): argument '{argument}' (position 1) must be Tensor, not {type(value).__name__}")


def _not_an_operand(name: str, other) -> TypeError:
    return TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")


_BOOL_MINUS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
               "`logical_xor()` operator instead.")
_BOOL_MASK_MINUS = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert "
                    "a mask, use the `~` or `logical_not()` operator instead.")


def _is_bool(value) -> bool:
    """A Python bool or a bool tensor (PyTorch takes a NumPy bool, or an array of them, for a number)."""
    return value.__class__ is _bool or (isinstance(value, Tensor) and value._data.dtype.kind == "b")


def check_subtraction(a, b) -> None:
    """PyTorch's refusal of a subtraction with a bool operand (a Python bool is a bool tensor there): two bools,
    or one (``1 - mask``: the hint is ``~mask``)."""
    left, right = _is_bool(a), _is_bool(b)
    if left and right:
        raise RuntimeError(_BOOL_MINUS)
    if left or right:
        raise RuntimeError(_BOOL_MASK_MINUS)


def _binary(fn_name: str, op, reflected: bool = False, backward_name: str | None = None):
    """A Tensor's ``op`` operator (``reflected``: the ``__r*__`` form, the Tensor on the right; ``backward_name``:
    what PyTorch names its node, where that is not the Function's own name).

    Recorded through ``functions.<fn_name>`` when the graph needs it; otherwise one array expression and a
    wrap, with no other Python call (at the tiny size an op's Python costs more than its arithmetic)."""

    true_divide = fn_name == "Div"
    scalar_name = fn_name + "Backward1"  # (AddBackward1, ...: PyTorch's op of a Tensor and a Scalar)
    # ``2 * a`` records as ``a * 2``, as PyTorch's (its __rmul__ is mul(a, 2)): the node's edges in its order
    swap = reflected and fn_name in ("Add", "Mul")
    # ``1 - a`` is PyTorch's rsub(a, 1), whose 1 is a Scalar argument: no edge of RsubBackward1 (Function.nondiff)
    tensor_edge_only = reflected and fn_name == "Sub"
    subtract = fn_name == "Sub"

    def method(self, other):
        a = self._data
        if subtract and (a.dtype.kind == "b" or other.__class__ is _bool
                         or (isinstance(other, Tensor) and other._data.dtype.kind == "b")):
            check_subtraction(self, other)
        if isinstance(other, Tensor):
            if (self._rg or other._rg) and (not _grad_off or _get_ident() not in _grad_off):
                fn = getattr(_fn, fn_name)
                try:
                    if reflected:
                        out = fn.apply(other, self)
                        return _named(out, backward_name) if backward_name else out
                    return fn.apply(self, other)
                except ValueError:
                    _check_broadcast(other if reflected else self, self if reflected else other)
                    raise
            o = other._data
            if o.dtype is not a.dtype or true_divide:  # PyTorch's type promotion where NumPy's differs
                a, o = _promote(a, o, true_divide)
        else:
            if other.__class__ is not _float and other.__class__ is not _int and _foreign(other):
                return NotImplemented
            if self._rg and (not _grad_off or _get_ident() not in _grad_off):
                fn = getattr(_fn, fn_name)
                if reflected and not swap:
                    out = fn.apply(other, self)
                    if tensor_edge_only:
                        out.grad_fn._edges = (1,)
                    return _named(out, backward_name) if backward_name else out
                if _aten_scalars and _get_ident() in _aten_scalars:  # (a built-in's recorded backward: ATen's
                    return _scalar_node(fn.apply(self, other), scalar_name)  # C++ takes the number as a Scalar)
                return fn.apply(self, other)
            o = other
            cls = o.__class__
            if not ((cls is _float and a.dtype.kind in "fc") or (cls is _int and a.dtype.kind != "b")) or true_divide:
                a, o = _promote(a, o, true_divide)
        try:
            out = op(o, a) if reflected else op(a, o)
        except (TypeError, ValueError):
            _check_same_device(self, other)  # NumPy and CuPy arrays do not mix: say which devices
            _check_broadcast(other if reflected else self, self if reflected else other)
            raise
        except OverflowError:  # a Python int out of a narrow integer dtype's range: wrapped, as PyTorch casts it
            o = _dtypes.wrapped_int(o, a.dtype) if o.__class__ is _int else o
            out = op(o, a) if reflected else op(a, o)
        if out.__class__ is not _ndarray and out.__class__ in _SCALAR_TYPES:
            out = np.asarray(out)
        t = _new(Tensor)
        t._data = out
        t._rg = False
        return t

    method.__name__ = f"__{'r' if reflected else ''}{op.__name__.strip('_')}__"
    return method


def _raw(value):
    return value._data if isinstance(value, Tensor) else value



def _check_broadcast(left, right) -> None:
    """PyTorch's RuntimeError, naming the sizes and the dimension, where NumPy's ValueError says "operands could
    not be broadcast together"."""
    refusal = broadcast_error(left, right)
    if refusal is not None:
        raise refusal from None


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def _check_same_device(*values):
    """Raise PyTorch's error when tensors of one op live on different devices."""
    devices = []
    for v in values:
        if isinstance(v, Tensor):
            d = v.device
            if d not in devices:
                devices.append(d)
    if len(devices) > 1:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{devices[0]} and {devices[1]}!"
        )


def _convert_index(index, xp):
    if isinstance(index, tuple):
        return tuple(_convert_index_part(p, xp) for p in index)
    return _convert_index_part(index, xp)


def _ints_first(index, shape=None):
    """PyTorch applies the integers of an index before its index arrays (``x[0, None, mask]`` is ``x[0][None,
    mask]``); NumPy counts them among the arrays, which can move the arrays' dimensions to the front (shape
    (2, 1) where PyTorch's is (1, 2)). For a tuple holding both: (the basic part, the rest) to apply one after the
    other; None for every other index. Given the indexed ``shape`` (a read, whose graph is PyTorch's), a None or a
    slice short of its dimension is applied first too, as PyTorch records ``x[1:, [0, 2]]``: ``SliceBackward0``,
    then ``IndexBackward0``."""
    if index.__class__ is not tuple:
        return None
    has_int = has_array = has_basic = False
    consumed = sum(0 if p is None or p is Ellipsis else
                   p.ndim if hasattr(p, "dtype") and p.dtype == bool else 1 for p in index)
    src = 0
    for p in index:
        if p.__class__ is _int or isinstance(p, np.integer):
            has_int = True
            src += 1
        elif p is None:
            has_basic = True
        elif p.__class__ is slice:
            if shape is not None and src < len(shape) and p.indices(shape[src]) != (0, shape[src], 1):
                has_basic = True
            src += 1
        elif p is Ellipsis:
            src += len(shape) - consumed if shape is not None else 0
        else:
            if isinstance(p, list) or (hasattr(p, "shape") and hasattr(p, "dtype") and p.ndim > 0):
                has_array = True
            src += p.ndim if hasattr(p, "dtype") and p.dtype == bool else 1
    if not (has_array and (has_int or (shape is not None and has_basic))):
        return None
    first, rest = [], []
    for p in index:
        if p.__class__ is _int or isinstance(p, np.integer):
            first.append(p)
        elif p is None or p.__class__ is slice:
            first.append(p)
            rest.append(slice(None))
        elif p is Ellipsis:
            first.append(p)
            rest.append(p)
        else:
            dims = p.ndim if hasattr(p, "dtype") and p.dtype == bool else 1
            first.extend([slice(None)] * dims)
            rest.append(p)
    return tuple(first), tuple(rest)


def _check_step(p: slice) -> None:
    """PyTorch's refusal of a slice that steps backwards (NumPy's would give a reversed view; ``flip`` is the
    tensor way)."""
    if p.step is not None and p.step <= 0:
        raise ValueError("step must be greater than zero" if p.step else "slice step cannot be zero")


def _convert_index_part(p, xp):
    if p.__class__ is slice:
        _check_step(p)
        return p
    if isinstance(p, Tensor):
        p = p._data
        if xp is not np and isinstance(p, np.ndarray):
            p = xp.asarray(p)
        elif xp is np and not isinstance(p, np.ndarray):
            p = to_host(p)
        return p
    if isinstance(p, range):
        return xp.arange(p.start, p.stop, p.step)
    if isinstance(p, list) and xp is not np:
        return xp.asarray(p)
    return p


def _cast_method(name: str, dtype):
    """``Tensor.<name>()``: ``to(dtype)``, in ``memory_format``'s layout where one is given (``x.double()``,
    ``x.bool(memory_format=torch.channels_last)``), as PyTorch's casts."""
    def method(self, memory_format=None):
        if memory_format is None:
            return self._moved(None, dtype)
        return self.to(dtype, memory_format=memory_format)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``to({dtype})``: this tensor in that dtype (itself where it already is), as PyTorch's."
    return method


class Tensor(TensorMath):
    """An n-dimensional array on a device, with autograd.

    ``engine.Tensor(2, 3)`` and ``engine.Tensor([1, 2])`` work as PyTorch's legacy constructor (float32);
    prefer :func:`engine.tensor`, :func:`engine.zeros`, :func:`engine.randn`.
    """

    # _data and _rg are read by every op: slots make those reads fast. __dict__ stays on purpose: a PyTorch tensor
    # takes any attribute (code sets its own marks on tensors; nn.Parameter adds its own), and the attributes
    # most tensors never set (grad, grad_fn, the output index) live there only when set, with the class-level
    # defaults below, so creating a tensor assigns two slots and nothing else.
    __slots__ = ("_data", "_rg", "__weakref__", "__dict__")
    __array_ufunc__ = None  # `ndarray * tensor` defers to Tensor.__rmul__
    __array_priority__ = 1000
    # class-level defaults: most tensors never set these, which saves their creation the assignments
    _grad = None
    grad_fn = None
    _out_index = 0
    _rebound_at = -1  # the tick (autograd._writes) at which an in-place op last rebound it to a recorded result
    _history = None  # [(tick, grad_fn, out_index, requires_grad, array or None) before each rebind]: _as_it_was

    def __init__(self, *args, device=None):
        if len(args) == 1 and not isinstance(args[0], (_int, np.integer)):
            data = args[0]
            array = np.asarray(_raw(data) if isinstance(data, Tensor) else data, dtype=np.float32)
        else:
            if any(not isinstance(a, (_int, np.integer)) or a < 0 for a in args):
                raise TypeError(f"Tensor(*sizes) needs non-negative integer sizes, got {args}")
            array = np.empty(args, dtype=np.float32)
        dev = _backend.target(device)
        if dev is not CPU:
            array = _backend.to_device_array(array, dev)
        self._data = array
        self._rg = False
        self.grad = None
        self.grad_fn = None
        self._out_index = 0

    # ------------------------------------------------------------------ properties
    def _set_grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor "
                                   f"of size '{list(self._data.shape)}'. Please ensure that the gradient and the "
                                   "tensor are the same size")
            if value._data.dtype != self._data.dtype:  # (an optimizer would then mix the two dtypes)
                raise RuntimeError(f"attempting to assign a gradient with dtype '{c_type_name(value._data.dtype)}' to "
                                   f"a tensor with grad_dtype '{_dtypes.scalar_name(self._data.dtype)}'. The gradient "
                                   "must match the tensor's grad_dtype (defaults to the tensor's dtype).")
        self._grad = value

    # read through a C getter, no Python frame: the tutorial's step reads .grad four times
    grad = property(_operator.attrgetter("_grad"), _set_grad,
                    doc="The gradient accumulated by ``backward()`` (None until then, or after ``grad = None``).")

    @property
    def data(self) -> Tensor:
        """The same values, detached from the graph (shares memory)."""
        return _wrap(self._data)

    @data.setter
    def data(self, value):
        value = value._data if isinstance(value, Tensor) else value
        self._data = value

    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def dtype(self):
        return _dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return device_of_array(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def T(self) -> Tensor:
        nd = self._data.ndim
        if nd < 2:
            return self
        return self.permute(*reversed(range(nd)))

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        if self._data.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                               f"{self._data.ndim}-D tensor.")
        return self.transpose(-2, -1)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        if not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[self._dim_of(dim)]

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def get_device(self) -> int:
        d = self.device
        return -1 if d.type == "cpu" else d.index

    # ------------------------------------------------------------------ autograd
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients (this one is {self.dtype})"
            )
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        self._rg = _bool(requires_grad)
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``."""
        if gradient is None and inputs is None and not create_graph and self.grad_fn is not None:
            data = self._data
            if data.size == 1:  # loss.backward(): the common case, straight to the walk
                _walk._run((self,), [_walk._scalar_seed(data)], _bool(retain_graph))
                return
        _walk.backward(self, gradient, retain_graph, create_graph, inputs)

    def retain_grad(self) -> None:
        """Keep ``.grad`` of this non-leaf tensor after backward."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            _walk._register_retained(self)

    def register_hook(self, hook):
        """``hook(grad)`` is called with this tensor's gradient each time backward computes it (before it goes
        into a leaf's ``.grad``, or on through the graph); a tensor it returns takes the gradient's place. The
        handle's ``remove()`` takes it away again. A hook should not change its argument in place (use the
        return value): the same array may be another tensor's gradient too."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return _walk.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` is called once this leaf's ``.grad`` holds the gradient of a ``backward()`` (the
        tutorial "How to save memory by fusing the optimizer step into the backward pass" steps each parameter's
        optimizer here). The handle's ``remove()`` takes it away again."""
        return _walk.register_post_accumulate_grad_hook(self, hook)

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return node is not None and node._retained is not None and self._out_index in node._retained

    def _new_filled(self, fill, size, dtype, device, requires_grad, fn) -> Tensor:
        """A new tensor of ``size``, made by ``fill(xp, shape, dtype)``, with this tensor's dtype and device
        unless given (PyTorch's ``new_*``)."""
        np_dtype = self._data.dtype if dtype is None else _dtypes.to_dtype(dtype).np
        dev = self.device if device is None else resolve(device)
        t = _wrap(_alloc.filled(fill, _alloc.sizes(size, fn), np_dtype, dev))
        return t.requires_grad_(True) if requires_grad else t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Zeros of ``size`` with this tensor's dtype and device (unless given), as PyTorch's ``new_zeros``."""
        return self._new_filled(lambda xp, s, d: xp.zeros(s, dtype=d), size, dtype, device, requires_grad,
                                "new_zeros")

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        return self._new_filled(lambda xp, s, d: xp.ones(s, dtype=d), size, dtype, device, requires_grad,
                                "new_ones")

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        return self._new_filled(lambda xp, s, d: xp.empty(s, dtype=d), size, dtype, device, requires_grad,
                                "new_empty")

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
        if isinstance(fill_value, (_int, float)) and not isinstance(fill_value, _bool):  # (PyTorch's range check)
            fill_value = _dtypes.checked_integers(
                fill_value, self._data.dtype if dtype is None else _dtypes.to_dtype(dtype).np, fill=True)
        return self._new_filled(lambda xp, s, d: xp.full(s, fill_value, dtype=d), (size,), dtype, device,
                                requires_grad, "new_full")

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A new tensor of ``data`` (copied, never sharing memory), with this tensor's dtype and device unless
        given."""
        np_dtype = self._data.dtype if dtype is None else _dtypes.to_dtype(dtype).np
        dev = self.device if device is None else resolve(device)
        raw = data._data if isinstance(data, Tensor) else data
        if not hasattr(raw, "shape"):
            raw = np.asarray(raw, dtype=np_dtype)
        t = _wrap(_backend.to_device_array(raw, dev, dtype=np_dtype, copy=True))
        return t.requires_grad_(True) if requires_grad else t

    def detach(self) -> Tensor:
        return _wrap(self._data)

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self._rg = False
        self.__dict__.pop("_history", None)
        return self

    def _shallow(self) -> Tensor:
        """A new Tensor object with the same array and graph position."""
        t = _wrap(self._data, self._rg)
        t.grad_fn = self.grad_fn
        t._out_index = self._out_index
        return t

    def _before_write(self, index=None) -> Tensor:
        """An in-place op is about to give this tensor its recorded result: note the write against the array it
        holds, before the op's own node is recorded (a node that saved that array, recorded earlier, now refuses
        its backward, as PyTorch's does), and give the op its input: a Tensor of the value as it was.

        Where this tensor is a view of one that requires grad (``h[0]``, ``h.t()``, made by recorded view ops),
        :meth:`_rebind` then writes the result into the view's memory and gives the base its new node, as
        PyTorch does. Where anything else may see its memory (a view of it, ``detach()``, a node that saved it),
        :meth:`_rebind` writes the result into that memory, as PyTorch's in-place op does; only where this tensor
        alone holds its array does it take the result's array instead (nothing can tell the two apart, and it
        saves a copy). In both cases the op gets a copy of the values, which that write would change under it."""
        d = self.__dict__
        d.pop("_pending_view", None)  # (left by an op that raised before its _rebind)
        d.pop("_write_into", None)
        data = self._data
        _check_overlap(data)
        node = self.grad_fn
        if data.base is not None or "_shares" in d:
            # (refuses a piece of split; ``index``: where __setitem__ writes it, which PyTorch writes through a view)
            chain = self._view_chain(index) if node is not None or "_src" in d else None
            self._rebound_at = _writes.wrote(data)
            if chain is not None:
                self._pending_view = chain
                return self._copy_as_is()
        else:
            self._rebound_at = _writes.wrote(data)
            if _getrefcount(data) <= _SOLE_REFS:
                return self._shallow()
        self._write_into = True
        return self._copy_as_is()

    def _copy_as_is(self) -> Tensor:
        """A new Tensor of a copy of the values, at the same graph position."""
        t = _wrap(self._data.copy(), self._rg)
        t.grad_fn = self.grad_fn
        t._out_index = self._out_index
        return t

    def _remember(self, data=None):
        """Before an in-place op rebinds this tensor (at tick ``_rebound_at``): keep where it stood in the graph,
        for the nodes that took it as an input before (:meth:`_as_it_was`); and its array, where the op gives it
        another shape (``unsqueeze_``, ``t_``)."""
        history = self.__dict__.get("_history")
        if history is None:
            history = self._history = []
        history.append((self._rebound_at, self.grad_fn, self._out_index, self._rg, data))

    def _as_it_was(self, seq) -> Tensor:
        """This tensor as the node recorded at tick ``seq`` took it as an input: where an in-place op has rebound it
        since, a Tensor standing where it stood then in the graph (a node's inputs are Tensor objects, so without
        this the gradient of ``z = h * 3`` would flow through a later ``h *= 2``)."""
        if self._rebound_at > seq:
            for tick, grad_fn, out_index, rg, data in self._history or ():  # (none where the op raised)
                if tick > seq:
                    t = _wrap(self._data if data is None else data, rg)
                    t.grad_fn = grad_fn
                    t._out_index = out_index
                    return t
        return self

    def _view_chain(self, index=None):
        """(base, steps) where this tensor is, by recorded view ops (indexing with ints and slices, transposes,
        permutes, views), a view of the memory of ``base``, a tensor made by an op; None where it is not. A view of
        a leaf that requires grad is refused, as PyTorch refuses an in-place op on it. Where those views start at a
        view made by an op that was not recorded (``x[0]`` of an ``x`` that does not require grad), ``base`` is the
        tensor it views and the first step is ``("flat", places)``: where in that tensor's flat memory each of its
        elements is (:func:`_flat_places`)."""
        steps, t = [], self
        while True:
            node = t.grad_fn
            step = None if node is None else _fn.shape.view_step(node, t._data.shape)
            if step is None:
                break
            steps.append(step)
            t = node._inputs[0]._as_it_was(node._seq)
        steps.reverse()
        if steps:
            try:
                view = _fn.shape.replay_view(t._data, steps)
            except (ValueError, IndexError, TypeError, RuntimeError):
                return None
            mine = self._data
            if (view.shape != mine.shape or view.strides != mine.strides or view.dtype != mine.dtype
                    or _data_ptr(view) != _data_ptr(mine)):
                return None  # a view op that copied (a reshape of a transpose), or a base rebound since
        if t.grad_fn.__class__ is _fn.Split and not t.grad_fn.unsafe:
            raise RuntimeError(_piece_refusal(self, "is being modified inplace", index))
        d = t.__dict__
        root = d.get("_src")  # (a view made by an op that was not recorded: _viewed)
        if root is not None and not (t.grad_fn is None and t._rg):  # (a leaf of its own, refused below)
            if "_src_no_grad" in d:
                raise RuntimeError(_NO_GRAD_VIEW)
            places = _flat_places(root._data, t._data)
            if places is not None:
                steps.insert(0, ("flat", places))
                t = root
            else:  # (a view of a complex tensor's parts, or parts viewed as complex numbers: view_as_real, .real)
                places = _part_places(root._data, t._data)
                if places is not None:
                    steps.insert(0, ("parts", places))
                    t = root
        if any(step[0] == "strided" for step in steps):  # (as_strided may show the base's elements its input hid)
            places = _flat_places(t._data, self._data)
            if places is not None:
                steps = [("flat", places)]
        if not steps:
            return None
        if t.grad_fn is None and t._rg:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        return t, tuple(steps)

    # ------------------------------------------------------------------ conversion
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if self._data.__class__ is not np.ndarray:
            if _backend.capturing_here():
                raise _backend.CaptureTransferError("it reads a value back to the host (item(), float() or bool() "
                                                    "of a CUDA tensor)")
            _deferred.raise_pending()
        return self._data.item()

    def tolist(self):
        return to_host(self._data).tolist()

    def numpy(self, force: bool = False) -> np.ndarray:
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if not isinstance(self._data, np.ndarray):
            if force:
                return to_host(self._data)
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy "
                "the tensor to host memory first."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        if not isinstance(self._data, np.ndarray):
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy "
                "the tensor to host memory first."
            )
        return self._data if dtype is None else self._data.astype(dtype, copy=False)

    def to(self, *args, **kwargs) -> Tensor:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)``, each with
        ``memory_format=`` (engine._layouts); differentiable."""
        dev = kwargs.pop("device", None)
        dt = kwargs.pop("dtype", None)
        copy = _bool(kwargs.pop("copy", False))
        kwargs.pop("non_blocking", None)
        fmt = _layouts.check(kwargs.pop("memory_format", None), "to")
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        if fmt is not _layouts.preserve_format:
            moved = self.to(*args, device=dev, dtype=dt, copy=copy)
            return moved if _layouts.is_arranged(moved._data, fmt) else moved._laid_out(fmt)
        flags = [a for a in args if isinstance(a, _bool)]  # (positional non_blocking, then copy, as PyTorch's)
        if len(flags) > 2:
            raise TypeError("to() received an invalid combination of arguments: more than two bools (non_blocking, "
                            "copy)")
        if len(flags) == 2:
            copy = copy or flags[1]
        for a in args:
            if isinstance(a, _bool):
                continue
            if isinstance(a, Tensor):
                dev, dt = a.device, a.dtype
            elif isinstance(a, _dtypes.dtype):
                dt = a
            elif isinstance(a, (str, _backend.device, _int)) and not isinstance(a, _bool):
                dev = a
            elif a is None:
                continue
            else:
                dt = _dtypes.to_dtype(a)
        return self._moved(dev, dt, copy)

    def _moved(self, dev, dt, copy=False) -> Tensor:
        target = resolve(dev) if dev is not None else None
        np_dtype = _dtypes.to_dtype(dt).np if dt is not None else None
        here = self.device
        same_place = target is None or target == here
        same_type = np_dtype is None or np_dtype == self._data.dtype
        if same_place and same_type and not copy:
            return self
        if np_dtype is not None and np_dtype.kind not in "fc" and self._rg:
            return self.detach()._moved(dev, dt, copy)  # an integer or bool tensor has no gradient: not recorded
        if same_place:
            return _fn.Cast.apply(self, np_dtype if np_dtype is not None else self._data.dtype) if not (
                same_type and copy) else self.clone()
        return _fn.ToDevice.apply(self, target, np_dtype, copy)

    def cpu(self) -> Tensor:
        return self._moved(CPU, None)

    def cuda(self, device=None, non_blocking=False) -> Tensor:
        if device is None:
            device = "cuda"
        elif isinstance(device, _int):
            device = f"cuda:{device}"
        return self._moved(device, None)

    def type(self, dtype=None, non_blocking=False):
        """Without an argument, the legacy type name ('torch.FloatTensor'); with one, a cast (and move)."""
        if dtype is None:
            prefix = "torch.cuda." if self.is_cuda else "torch."
            return prefix + self.dtype.legacy_name
        if isinstance(dtype, str) and "Tensor" in dtype:
            dtype = parse_legacy_name(dtype)
        if isinstance(dtype, LegacyTensorType):
            if dtype.is_cuda:
                dev = None if self.is_cuda else "cuda"
            else:
                dev = "cpu"
            return self._moved(dev, dtype.dtype)
        return self._moved(None, dtype)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other)

    float = _cast_method("float", _dtypes.float32)
    double = _cast_method("double", _dtypes.float64)
    cfloat = _cast_method("cfloat", _dtypes.complex64)
    cdouble = _cast_method("cdouble", _dtypes.complex128)
    chalf = _cast_method("chalf", _dtypes.complex32)  # (refused by name: NumPy and CuPy have no complex32)
    half = _cast_method("half", _dtypes.float16)
    long = _cast_method("long", _dtypes.int64)
    int = _cast_method("int", _dtypes.int32)
    short = _cast_method("short", _dtypes.int16)
    char = _cast_method("char", _dtypes.int8)
    bool = _cast_method("bool", _dtypes.bool_)

    def contiguous(self, memory_format=None) -> Tensor:
        """The tensor itself when its elements are in row-major order (or ``memory_format``'s: channels_last, ...);
        else such a copy (recorded as a clone, as PyTorch's)."""
        if memory_format is None:
            if self._data.flags.c_contiguous:
                return self
            if self._records():
                return _fn.Clone.apply(self, _layouts.contiguous_format)
            return _wrap(self._data.copy())  # NumPy and CuPy copy in row-major order
        fmt = _layouts.check(memory_format, "contiguous")
        if _layouts.is_arranged(self._data, fmt):
            return self
        if fmt is _layouts.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return self._laid_out(fmt)

    def _laid_out(self, fmt) -> Tensor:
        """A copy laid out as ``fmt`` (recorded as a clone)."""
        if self._records():
            return _fn.Clone.apply(self, fmt)
        return _wrap(_layouts.arranged(self._data, fmt, copy=True))

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements lie in row-major order (or ``memory_format``'s)."""
        if memory_format is None:
            return _bool(self._data.flags.c_contiguous)
        return _layouts.is_arranged(self._data, _layouts.check(memory_format, "is_contiguous"))

    # ------------------------------------------------------------------ Python protocol
    def __repr__(self):
        """As PyTorch prints it (engine/printing.py): ``tensor([0.1000, 2.0000], device='cuda:0',
        dtype=engine.float64, grad_fn=<MulBackward0>)``; a large GPU tensor is cut down to what is shown before it is
        copied to the host."""
        data, dt, extras = self._data, self.dtype, []
        dev = self.device
        # shown where it is not the default device's type, or not the current GPU
        if dev.type != _backend.get_default_device().type or (
                dev.type == "cuda" and dev.index != _backend.current_cuda_index()):
            extras.append(f"device='{dev}'")
        if data.size == 0:  # nothing to tell the dtype by: shown unless it is the default
            if data.ndim != 1:
                extras.append(f"size={tuple(data.shape)}")
            if dt != _dtypes.get_default_dtype():
                extras.append(f"dtype={dt}")
            text = "[]"
        else:
            if not _printing.OPTIONS.edgeitems:  # nothing of it is shown
                extras.append(f"size={tuple(data.shape)}")
            if dt not in (_dtypes.get_default_dtype(), _dtypes.default_complex(), _dtypes.int64, _dtypes.bool_):
                extras.append(f"dtype={dt}")
            summary, shown = _printing.summarized(data, xp_of(data))
            text = _printing.body(to_host(shown), data.shape, summary, len("tensor("))
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._rg:
            extras.append("requires_grad=True")
        return _printing.with_suffixes("tensor(" + text, extras, len("tensor("))

    def __str__(self):
        return self.__repr__()

    def __format__(self, spec):
        if self._data.size == 1 and self._data.ndim == 0:
            return format(self.item(), spec)
        return format(self.__repr__(), spec)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous" if self._data.size
                               else "Boolean value of Tensor with no values is ambiguous")
        if self._data.__class__ is not np.ndarray:
            _deferred.raise_pending()
        return _bool(self._data.item())

    def __float__(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return _float(self.item())

    def __int__(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return _int(self.item())

    def __contains__(self, element):
        """``element in x``: whether any element of x equals it (a tensor: broadcast), as PyTorch's."""
        if not isinstance(element, (Tensor, _int, _float, _bool)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return _bool(((element == self) if isinstance(element, Tensor) else (self == element)).any().item())

    def __index__(self):
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return _int(self.item())

    __hash__ = object.__hash__

    def __reduce__(self):
        return (_rebuild, (to_host(self._data), str(self.device), self._rg))

    def __deepcopy__(self, memo):
        t = _wrap(self._data.copy(), self._rg)
        memo[id(self)] = t
        return t

    # ------------------------------------------------------------------ arithmetic
    # When nothing needs recording, the hot operators compute on the arrays directly (the same expression
    # as the op's forward) and skip Function.apply: the tutorial's manual step is ~20 such ops, and at the
    # tiny size each op's Python costs more than its arithmetic.
    def _records(self, other=None) -> bool:
        """Whether an op on ``self`` (and ``other``) is recorded for autograd: the one recording predicate. The
        operators of the tutorial's step (the arithmetic and in-place operators, mm, pow, clamp, sum) write
        it out instead: a call here costs ~0.1 us, and with ~20 such ops a step, unifying them all measured
        +52% instructions for the tiny manual step (callgrind, 2026-11-22), past its 0.5x-of-PyTorch target."""
        return ((not _grad_off or _get_ident() not in _grad_off)
                and (self._rg or (isinstance(other, Tensor) and other._rg)))

    __add__ = _binary("Add", _operator.add)
    __radd__ = _binary("Add", _operator.add, reflected=True)
    __sub__ = _binary("Sub", _operator.sub)
    __rsub__ = _binary("Sub", _operator.sub, reflected=True, backward_name="RsubBackward1")
    __mul__ = _binary("Mul", _operator.mul)
    __rmul__ = _binary("Mul", _operator.mul, reflected=True)
    __truediv__ = _binary("Div", _operator.truediv)

    def __rtruediv__(self, other):
        """``other / self`` as PyTorch computes it: ``self.reciprocal() * other`` (its graph ReciprocalBackward0
        then MulBackward0, and its values that product's, which are not always a division's bits)."""
        if _foreign(other):
            return NotImplemented
        return self.reciprocal() * other

    def __pow__(self, other):
        if other.__class__ is not _int and other.__class__ is not _float and _foreign(other):
            return NotImplemented
        if not isinstance(other, Tensor) and not (self._rg and (not _grad_off or _get_ident() not in _grad_off)):
            a = self._data
            if a.dtype.kind != "f" or other.__class__ not in (_int, _float):  # as Pow.forward
                a, other = _promote(a, other)
            elif other == 2:
                return _wrap(a * a)
            return _wrap(_fn.arithmetic.power(a, other))
        return _fn.Pow.apply(self, other)

    def __rpow__(self, other):
        if _foreign(other):
            return NotImplemented
        return _named(_fn.Pow.apply(other, self), "PowBackward2")

    def __neg__(self):
        if self._data.dtype.kind == "b":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                               "invert a mask, use the `~` or `logical_not()` operator instead.")
        return _fn.Neg.apply(self) if self._records() else _wrap(-self._data)

    def __pos__(self):
        return self

    def __abs__(self):
        if self._data.dtype == np.bool_:
            raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
        return _fn.Abs.apply(self)

    def __matmul__(self, other):
        if _foreign(other) or (other.__class__ is not Tensor and not getattr(other, "ndim", 0)):
            # (a number is no operand of @: Python's TypeError)
            return NotImplemented
        if self._records(other):
            if not isinstance(other, Tensor):
                other = _wrap(_backend.to_device_array(other, self.device))
            elif other._data.__class__ is not self._data.__class__:
                _check_same_device(self, other)
            if self._data.ndim == 2 and other._data.ndim == 2:
                return _fn.MatMul.apply(self, other)
            return self._matmul(other)  # (PyTorch's graph for the other dimensions: TensorMath._matmul)
        b = _raw_checked(self, other)
        try:
            return _wrap(_fn.MatMul.forward(_fn.MatMul(), self._data, b))
        except RuntimeError:
            if self._data.ndim == 2 and getattr(b, "ndim", 0) == 2:
                raise
            # PyTorch's refusal, in the words of the product it would have called
            self._matmul(other if isinstance(other, Tensor) else _wrap(b))
            raise

    def mm(self, mat2):
        a = self._data
        if not isinstance(mat2, Tensor):
            raise _not_a_tensor("mm", "mat2", mat2)
        if a.ndim != 2 or mat2._data.ndim != 2:
            raise RuntimeError("self must be a matrix" if a.ndim != 2 else "mat2 must be a matrix")
        if (self._rg or mat2._rg) and (not _grad_off or _get_ident() not in _grad_off):
            return _fn.MatMul.apply(self, mat2)
        b = mat2._data
        if b.__class__ is not a.__class__:
            _check_same_device(self, mat2)
        if b.dtype is not a.dtype and b.dtype != a.dtype:
            raise shapes_error(a, b) if a.shape[1] != b.shape[0] else product_dtypes_error(a, b)
        try:
            # as MatMul.forward for 2-D, without its ctx
            if a.__class__ is _ndarray:
                return _wrap(_threads.dot(a, b))
            return _wrap(_fn.arithmetic.dot2(a, b))
        except ValueError:
            raise shapes_error(a, b) from None

    def __rmatmul__(self, other):
        if _foreign(other) or (other.__class__ is not Tensor and not getattr(other, "ndim", 0)):
            return NotImplemented
        return _wrap(_backend.to_device_array(other, self.device)) @ self

    # the ops with no gradient (floor division, %, the bitwise ones and shifts): PyTorch's result dtype, each also
    # reflected (2 // x) and in place (x //= 2, writing the tensor's own memory)
    __floordiv__ = _plain_binary(_operator.floordiv)
    __rfloordiv__ = _plain_binary(_operator.floordiv, reflected=True)
    _plain_mod = _plain_binary(_operator.mod)
    __rmod__ = _plain_binary(_operator.mod, reflected=True)

    def __mod__(self, other):
        """Python's ``%``: ``remainder``, recorded (its gradient is 1) where a float is involved, as PyTorch's."""
        if _foreign(other):
            return NotImplemented
        if self._data.dtype.kind == "f" or isinstance(other, float) or (
                isinstance(other, Tensor) and other._data.dtype.kind == "f"):
            return self.remainder(other)
        return self._plain_mod(other)

    def __imod__(self, other):
        if self._data.dtype.kind == "f":
            return self._apply_in_place(lambda t: t.remainder(other), *([other] if isinstance(other, Tensor) else []))
        return self._plain_imod(other)

    __and__ = bitwise_and = _plain_binary(_operator.and_, bitwise=True)
    __rand__ = _plain_binary(_operator.and_, reflected=True, bitwise=True)
    __or__ = bitwise_or = _plain_binary(_operator.or_, bitwise=True)
    __ror__ = _plain_binary(_operator.or_, reflected=True, bitwise=True)
    __xor__ = bitwise_xor = _plain_binary(_operator.xor, bitwise=True)
    __rxor__ = _plain_binary(_operator.xor, reflected=True, bitwise=True)
    __lshift__ = bitwise_left_shift = _plain_binary(_operator.lshift, bitwise=True, shift=True)
    __rlshift__ = _plain_binary(_operator.lshift, reflected=True, bitwise=True, shift=True)
    __rshift__ = bitwise_right_shift = _plain_binary(_operator.rshift, bitwise=True, shift=True)
    __rrshift__ = _plain_binary(_operator.rshift, reflected=True, bitwise=True, shift=True)
    __ifloordiv__ = _plain_in_place(__floordiv__, "floor_divide")
    _plain_imod = _plain_in_place(_plain_mod, "remainder")
    __iand__ = bitwise_and_ = _plain_in_place(__and__, "bitwise_and")
    __ior__ = bitwise_or_ = _plain_in_place(__or__, "bitwise_or")
    __ixor__ = bitwise_xor_ = _plain_in_place(__xor__, "bitwise_xor")
    __ilshift__ = bitwise_left_shift_ = _plain_in_place(__lshift__, "bitwise_left_shift")
    __irshift__ = bitwise_right_shift_ = _plain_in_place(__rshift__, "bitwise_right_shift")

    def bitwise_not(self):
        if self._data.dtype.kind not in "biu":
            raise NotImplementedError(f'"bitwise_not_cpu" not implemented for '
                                      f"'{_dtypes.scalar_name(self._data.dtype)}'")
        return _wrap(~self._data)

    def bitwise_not_(self):
        return _plain_in_place(lambda t, _: t.bitwise_not(), "bitwise_not")(self, None)

    def div(self, other, *, rounding_mode=None):
        """``self / other`` (true division: integers give a float); ``rounding_mode='trunc'`` or ``'floor'``
        rounds the quotient, and keeps integer inputs integer (PyTorch's result dtype of the two)."""
        if _foreign(other):
            raise _not_an_operand("div", other)
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                             f"'{rounding_mode}'")
        want = _dtypes.result_type(self._data, _raw(other))
        if want.kind in "iu":  # integers: the quotient rounded exactly, in their result dtype (not through floats,
            _check_same_device(self, other)  # which lose int64's low digits)
            o = _raw(other)
            a, b = _dtypes.promote(self._data, _dtypes.wrapped_int(o, want) if o.__class__ is _int else o)
            _check_integer_divisor(a, b)
            if rounding_mode == "floor":
                return _wrap(a // b)
            return _wrap((a - xp_of(self._data).fmod(a, b)) // b)  # (a multiple of b: // is exact)
        return _fn.DivRounded.apply(self, other, mode=rounding_mode)  # (one DivBackward2, as PyTorch's)

    def div_(self, other, *, rounding_mode=None):
        if other.__class__ is not Tensor and _foreign(other):  # (the optimizers' Tensor first: one check)
            raise _not_an_operand("div_", other)
        if rounding_mode is None:
            return self.__itruediv__(other)
        return _plain_in_place(lambda t, o: t.div(o, rounding_mode=rounding_mode), "div")(self, other)

    mul = _named_form("mul", __mul__)
    divide = div
    multiply = _named_form("multiply", __mul__)
    subtract = _named_form("subtract", __sub__)
    matmul = _named_form("matmul", __matmul__)
    neg = __neg__
    abs = __abs__

    def add(self, other, alpha=1):
        if _foreign(other):
            raise _not_an_operand("add", other)
        if alpha.__class__ is _float:
            _check_alpha(self, other)
        if alpha != 1 and self._records(other):  # one AddBackward0, as PyTorch's (b's gradient is alpha times)
            return _fn.AddScaled.apply(self, other, alpha)
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1):
        if _foreign(other):
            raise _not_an_operand("sub", other)
        if _is_bool(other) or self._data.dtype.kind == "b":
            check_subtraction(self, other)
        if alpha.__class__ is _float:
            _check_alpha(self, other)
        if alpha != 1 and self._records(other):
            return _fn.AddScaled.apply(self, other, alpha, subtract=True)
        return self - (other * alpha if alpha != 1 else other)

    pow = _named_form("pow", __pow__)

    def dot(self, other):
        if not isinstance(other, Tensor):
            raise _not_a_tensor("dot", "tensor", other)
        if self._data.ndim != 1 or other._data.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self._data.ndim}D and {other._data.ndim}D tensors")
        return self @ other

    # comparisons: not differentiable, return bool tensors (NotImplemented for what is no operand: x == None is
    # False, and x < "a" Python's TypeError, as PyTorch's)
    def __lt__(self, other):
        if _foreign(other):
            return NotImplemented
        try:
            out = _wrap(self._data < (other._data if isinstance(other, Tensor) else other))
        except ValueError as error:
            raise_broadcast_error(self, other, error)
        if out._data.dtype.kind == "b" and (self._data.dtype.kind == "c" or _is_complex_operand(other)):
            _no_complex(self if self._data.dtype.kind == "c" else other if isinstance(other, Tensor)
                        else _wrap(self._data.astype(np.complex64)), "lt")
        return out

    def __le__(self, other):
        if _foreign(other):
            return NotImplemented
        try:
            out = _wrap(self._data <= (other._data if isinstance(other, Tensor) else other))
        except ValueError as error:
            raise_broadcast_error(self, other, error)
        if out._data.dtype.kind == "b" and (self._data.dtype.kind == "c" or _is_complex_operand(other)):
            _no_complex(self if self._data.dtype.kind == "c" else other if isinstance(other, Tensor)
                        else _wrap(self._data.astype(np.complex64)), "le")
        return out

    def __gt__(self, other):
        if _foreign(other):
            return NotImplemented
        try:
            out = _wrap(self._data > (other._data if isinstance(other, Tensor) else other))
        except ValueError as error:
            raise_broadcast_error(self, other, error)
        if out._data.dtype.kind == "b" and (self._data.dtype.kind == "c" or _is_complex_operand(other)):
            _no_complex(self if self._data.dtype.kind == "c" else other if isinstance(other, Tensor)
                        else _wrap(self._data.astype(np.complex64)), "gt")
        return out

    def __ge__(self, other):
        if _foreign(other):
            return NotImplemented
        try:
            out = _wrap(self._data >= (other._data if isinstance(other, Tensor) else other))
        except ValueError as error:
            raise_broadcast_error(self, other, error)
        if out._data.dtype.kind == "b" and (self._data.dtype.kind == "c" or _is_complex_operand(other)):
            _no_complex(self if self._data.dtype.kind == "c" else other if isinstance(other, Tensor)
                        else _wrap(self._data.astype(np.complex64)), "ge")
        return out

    def __eq__(self, other):
        if _foreign(other):
            return NotImplemented
        try:
            return _wrap(self._data == (other._data if isinstance(other, Tensor) else other))
        except ValueError as error:
            raise_broadcast_error(self, other, error)

    def __ne__(self, other):
        if _foreign(other):
            return NotImplemented
        try:
            return _wrap(self._data != (other._data if isinstance(other, Tensor) else other))
        except ValueError as error:
            raise_broadcast_error(self, other, error)

    def __invert__(self):
        if self._data.dtype.kind not in "biu":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return self.bitwise_not()

    lt, le, gt, ge = (_named_form("lt", __lt__), _named_form("le", __le__), _named_form("gt", __gt__),
                      _named_form("ge", __ge__))
    eq, ne = _named_form("eq", __eq__), _named_form("ne", __ne__)

    def equal(self, other) -> bool:
        o = other._data
        return self._data.shape == o.shape and _bool((self._data == o).all())

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        """Whether :meth:`isclose` holds everywhere (the same checks: one dtype, shapes that broadcast)."""
        return _bool(self.isclose(other, rtol=rtol, atol=atol, equal_nan=equal_nan)._data.all())

    def isnan(self):
        return _wrap(xp_of(self._data).isnan(self._data))

    def isfinite(self):
        return _wrap(xp_of(self._data).isfinite(self._data))

    # ------------------------------------------------------------------ elementwise math
    def _floating(self):
        """Self, or an integer or bool tensor as the default float dtype: what PyTorch's float-only math
        (exp, log, sqrt, sigmoid, tanh, sin, cos, erf) computes in and returns for them."""
        return self.to(_dtypes.get_default_dtype()) if self._data.dtype.kind in "biu" else self

    def exp(self):
        return _fn.Exp.apply(self._floating())

    def log(self):
        return _fn.Log.apply(self._floating())

    def sqrt(self):
        return _fn.Sqrt.apply(self._floating())

    def sigmoid(self):
        return _fn.Sigmoid.apply(self._floating())

    def tanh(self):
        return _fn.Tanh.apply(self._floating())

    def sin(self):
        return _fn.Sin.apply(self._floating())

    def cos(self):
        return _fn.Cos.apply(self._floating())

    def erf(self):
        return _fn.Unary.apply(self._floating(), op="erf")

    def relu(self):
        if self._data.dtype == np.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        return _fn.ReLU.apply(self)

    def clamp(self, min=None, max=None):  # noqa: A002
        if isinstance(min, Tensor) or isinstance(max, Tensor):  # (a bound that may learn: its own gradient)
            if min is None and max is None:
                raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
            return _fn.ClampTensors.apply(self, min, max)  # (in PyTorch's result dtype of the three)
        if self._rg and (not _grad_off or _get_ident() not in _grad_off):
            return _fn.Clamp.apply(self, min=min, max=max)
        _no_complex(self, "clamp", "clamp is not supported for complex types")
        a = self._data
        if a.dtype.kind in "biu" and (isinstance(min, float) or isinstance(max, float)):
            return self.to(_dtypes.get_default_dtype()).clamp(min, max)  # (PyTorch's result dtype: float32)
        if max is None and min is not None and not isinstance(min, Tensor):  # the tutorial's ReLU
            return _wrap(_kernels.clamp_min(a, min))  # as Clamp.forward, without its ctx
        return _wrap(_fn.Clamp.forward(_fn.Clamp(), a, _raw(min), _raw(max)))

    clip = clamp

    def maximum(self, other):
        return _fn.Maximum.apply(self, other, mode="max")

    def minimum(self, other):
        return _fn.Maximum.apply(self, other, mode="min")

    # piecewise constant: a zero gradient, as PyTorch's (not None: x.grad exists after backward)
    def sign(self):
        return _fn.Rounding.apply(self, mode="sign")

    def floor(self):
        return _fn.Rounding.apply(self, mode="floor")

    def ceil(self):
        return _fn.Rounding.apply(self, mode="ceil")

    def trunc(self):
        return _fn.Rounding.apply(self, mode="trunc")

    def round(self, decimals=0):
        return _fn.Rounding.apply(self, mode="round", decimals=decimals)

    def square(self):
        return _fn.Pow.apply(self, 2)

    def masked_fill(self, mask, value):
        """``value`` (a number or a 0-d tensor) where ``mask`` is true; the result keeps this tensor's dtype, as in
        PyTorch (1.5 into an int64 tensor is 1)."""
        if not isinstance(mask, Tensor):
            raise TypeError(f"masked_fill(): argument 'mask' (position 1) must be Tensor, not {type(mask).__name__}")
        if mask._data.dtype != np.bool_:  # (an integer mask was read as a bool one: an int 0/1 mask did nothing)
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                               f"{c_type_name(mask._data.dtype)}")
        if isinstance(value, Tensor) and value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        data = self._data
        if data.dtype.kind not in "fc":  # (an integer or bool tensor: no gradient, the value cast to its dtype)
            if isinstance(value, Tensor):
                _check_same_device(self, value)
                if value._records():
                    raise RuntimeError(f"Autograd not support dtype: {_dtypes.scalar_name(data.dtype)}")
            xp = xp_of(data)
            return _wrap(xp.where(_raw(mask), xp.asarray(_raw(value)).astype(data.dtype), data))
        return _masked_fill_node(_fn.Where.apply(mask, value, self), value)

    def masked_fill_(self, mask, value):
        if self._records(value) and self._data.dtype.kind in "fc":
            self._check_inplace()
            self._rebind(_masked_fill_node(_fn.Where.apply(mask, value, self._before_write()), value))
            return self
        out = self.masked_fill(mask, value)._data
        _keep_shape(self._data, out)
        self._data[...] = out
        _writes.wrote(self._data)
        return self

    def where(self, condition, other):
        return _fn.Where.apply(condition, self, other)

    def outer(self, vec2):
        if self._data.ndim != 1 or not isinstance(vec2, Tensor) or vec2._data.ndim != 1:
            raise RuntimeError("outer: expected two 1-D tensors")
        return self.reshape(self._data.shape[0], 1) * vec2  # (ATen's: ViewBackward0, then MulBackward0)

    # ------------------------------------------------------------------ statistics and softmax
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
        """The variance over ``dim`` (all elements by default), divided by ``n - correction``: 1 by default (the
        unbiased estimate, PyTorch's default), 0 with ``unbiased=False``; NaN where ``n - correction <= 0``."""
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        if isinstance(dim, _bool):  # the legacy torch.var(x, unbiased)
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        return self._var_std(dim, correction, keepdim, False)

    def _var_std(self, dim, correction, keepdim, std, with_mean=False):
        """One ``VarBackward0`` (``StdBackward0``) node over ``dim`` (an int, a sequence, or None for all);
        ``with_mean``: the pair (spread, mean) of one ``VarMeanBackward0`` (``StdMeanBackward0``)."""
        if self._data.dtype.kind not in "fc":
            raise RuntimeError("std and var only support floating point and complex dtypes")
        if self._data.dtype.kind == "c":  # (real: |z - mean|^2 summed, which is the parts' spreads added)
            return self._complex_var_std(dim, correction, keepdim, std, with_mean)
        shape = self._data.shape
        if (dim is None or (not isinstance(dim, _int) and not len(dim))  # (no dims named: all, as PyTorch's)
                or (not shape and dim in (0, -1, (0,), (-1,), [0], [-1]))):
            axes = None
        else:
            nd = len(shape)
            axes = tuple(sorted({_int(a) % nd if -nd <= _int(a) < nd else _dim_error(a, nd)
                                 for a in ((dim,) if isinstance(dim, _int) else tuple(dim))}))
            if axes == tuple(range(nd)) and not keepdim:
                axes = None
        if with_mean:
            return _fn.VarMean.apply(self, axes=axes, correction=correction, keepdim=keepdim, std=std)
        return _fn.VarStd.apply(self, axes=axes, correction=correction, keepdim=keepdim, std=std)

    def _complex_var_std(self, dim, correction, keepdim, std, with_mean):
        """The spread of complex numbers, PyTorch's: the variance of the real parts plus that of the imaginary ones
        (each by the real path, its correction, NaN and warning), and the standard deviation the 2-norm of the two
        parts' (so that where it is 0 its gradient is 0, as the real one's)."""
        parts = [t._var_std(dim, correction, keepdim, std) for t in (self.real, self.imag)]
        spread = _fn.VectorNorm.apply(_fn.Stack.apply(*parts, dim=0), ord=2.0, dim=0, keepdim=False) if std \
            else parts[0] + parts[1]
        if with_mean:
            return spread, self.mean(() if dim is None else dim, keepdim)
        return spread

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
        """The square root of :meth:`var` (the same arguments); where it is 0 its gradient is 0, as PyTorch's (the
        square root's would be 0 / 0 there: a constant row gave NaN gradients)."""
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        if isinstance(dim, _bool):
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        return self._var_std(dim, correction, keepdim, True)

    def _softmax(self, dim, axis, dtype, log: bool):
        dim = _required_dim(dim, axis, "log_softmax" if log else "softmax")
        t = self if dtype is None else self.to(dtype)
        nd = t._data.ndim
        if not -max(nd, 1) <= dim < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], "
                             f"but got {dim})")
        if t._data.dtype.kind != "f":  # (PyTorch has no integer nor complex softmax: dtype= converts first)
            kernel = "softmax_lastdim_kernel_impl" if dim % max(nd, 1) == max(nd, 1) - 1 else "softmax_kernel_impl"
            raise NotImplementedError(f'"{"log_" if log else ""}{kernel}" not implemented for '
                                      f"'{_dtypes.scalar_name(t._data.dtype)}'")
        return _fn.Softmax.apply(t, dim % nd if nd else 0, log=log)

    def log_softmax(self, dim=None, dtype=None, *, axis=None):
        """``x - log(sum(exp(x)))`` along ``dim``, with the maximum taken out first so that ``exp`` cannot
        overflow (it cancels in the result); one node, PyTorch's ``LogSoftmaxBackward0``."""
        return self._softmax(dim, axis, dtype, log=True)

    def softmax(self, dim=None, dtype=None, *, axis=None):
        """``exp(x) / sum(exp(x))`` along ``dim``, the maximum taken out first; one node, ``SoftmaxBackward0``."""
        return self._softmax(dim, axis, dtype, log=False)

    # ------------------------------------------------------------------ reductions
    def sum(self, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        if (dim is None and dtype is None and not keepdim
                and not (self._rg and (not _grad_off or _get_ident() not in _grad_off))):
            a = self._data
            if a.dtype.kind == "u":  # (PyTorch sums every integer and bool dtype into int64; NumPy uint8 into uint64)
                return self.sum(dtype=_dtypes.int64)
            return _wrap(_add_reduce(a, axis=None) if a.__class__ is _ndarray else a.sum())  # as Sum.forward
        if dtype is None and self._data.dtype.kind == "u":
            dtype = _dtypes.int64
        t = self if dtype is None else self.to(dtype)
        if t._data.dtype.kind in "biu" and t._data.dtype != _INT64:  # (NumPy sums a narrow integer into int64)
            return _fn.Sum.apply(t, dim=dim, keepdim=keepdim, dtype=_INT64 if dtype is None else t._data.dtype)
        return _fn.Sum.apply(t, dim=dim, keepdim=keepdim)

    def mean(self, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either a floating point "
                               f"or complex dtype. Got: {_dtypes.scalar_name(dtype.np)}")
        t = self if dtype is None else self.to(dtype)
        if t._data.dtype.kind not in "fc":
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {_dtypes.scalar_name(t._data.dtype)}")
        return _fn.Mean.apply(t, dim=dim, keepdim=keepdim)

    def _maxmin(self, dim, keepdim, mode):
        if isinstance(dim, Tensor):
            return _fn.Maximum.apply(self, dim, mode=mode)
        if dim is None:
            return _fn.MaxMin.apply(self, mode=mode)
        if self._data.ndim == 0:  # (dim 0 or -1 of a 0-d tensor, as PyTorch's: one element along it)
            _fn.reduction._axes(dim, 0)
            return self.reshape(1)._maxmin(0, False, mode)
        values = _fn.MaxMinDim.apply(self, dim, keepdim=keepdim, mode=mode)
        dim = self._dim_of(dim)
        xp = xp_of(self._data)
        idx = (xp.argmax if mode == "max" else xp.argmin)(self._data, axis=dim)
        if keepdim:
            idx = xp.expand_dims(idx, dim)
        result = return_types_max if mode == "max" else return_types_min
        return result(values, _wrap(idx))

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        return self._maxmin(dim, keepdim, "max")

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        return self._maxmin(dim, keepdim, "min")

    def amax(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """The maximum over ``dim`` (an int, a tuple, or all); ties share the gradient evenly, as PyTorch's."""
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        return _fn.AMaxMin.apply(self, dim=dim, keepdim=keepdim, mode="max")

    def _sort_order(self, dim, descending):
        """The indices that sort along ``dim`` (a checked, non-negative dimension), stably, as PyTorch's ``sort``:
        NaN last ascending and first descending, equal entries in their first order either way."""
        a = self._data
        xp = xp_of(a)
        if a.dtype.kind == "b":
            a = a.astype(np.uint8)
        if not descending:
            return xp.argsort(a, axis=dim, kind="stable")
        if a.dtype.kind != "f":
            return xp.argsort(~a, axis=dim, kind="stable")  # ~ reverses an integer order, and cannot overflow
        nan = xp.isnan(a)
        order = xp.argsort(xp.where(nan, -xp.inf, -a), axis=dim, kind="stable")
        if a.__class__ is np.ndarray and not nan.any():
            return order  # (on a GPU, knowing would mean waiting for it: the NaN pass always runs there)
        nan_last = (~xp.take_along_axis(nan, order, axis=dim)).astype(np.uint8)
        return xp.take_along_axis(order, xp.argsort(nan_last, axis=dim, kind="stable"), axis=dim)

    def _sort_dim(self, dim):
        nd = self._data.ndim
        if not -max(nd, 1) <= dim < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], "
                             f"but got {dim})")
        return dim % nd if nd else 0

    def sort(self, dim=-1, descending=False, stable=False):
        """The entries along ``dim`` in order, and where each came from (``values``, ``indices``); always stable."""
        _no_complex(self, "sort", " Sort does not support complex dtypes on CPU", RuntimeError)
        if self._data.ndim == 0:
            self._sort_dim(dim)
            return return_types_sort(self.clone(), _wrap(xp_of(self._data).zeros((), dtype=np.int64)))
        dim = self._sort_dim(dim)
        order = self._sort_order(dim, descending)
        return return_types_sort(_fn.TakeAlong.apply(self, order, dim, name="SortBackward0"), _wrap(order))

    def argsort(self, dim=-1, descending=False, stable=False):
        return self.sort(dim, descending, stable).indices

    def msort(self):
        return self.sort(0).values

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
        """The ``k`` largest entries along ``dim`` (smallest with ``largest=False``), largest first, and their
        indices; NaN counts as the largest, as PyTorch's."""
        _no_complex(self, "topk", " topk does not support complex dtypes on CPU", RuntimeError)
        nd = self._data.ndim
        dim = self._sort_dim(dim)
        size = self._data.shape[dim] if nd else 1
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        if nd == 0:
            return return_types_topk(self.clone(), _wrap(xp_of(self._data).zeros((), dtype=np.int64)))
        order = self._sort_order(dim, largest)[(slice(None),) * dim + (slice(0, k),)]
        return return_types_topk(_fn.TakeAlong.apply(self, order, dim, name="TopkBackward0"), _wrap(order))

    def gather(self, dim, index, *, sparse_grad=False):
        """``out[i][j] = self[index[i][j]][j]`` for ``dim`` 0 (and so on): entries picked along ``dim`` by an
        index tensor of the same rank, no larger than ``self`` in the other dimensions; the gradient adds back."""
        if not isinstance(index, Tensor) or index.dtype not in (_dtypes.int64, _dtypes.int32):
            if isinstance(index, Tensor) and index._data.size == 0 and index._data.dtype.kind != "c":
                index = index.long()  # (an empty index of any real dtype picks nothing: PyTorch checks no dtype)
            else:
                got = index.dtype if isinstance(index, Tensor) else type(index).__name__
                raise RuntimeError(f"gather(): Expected dtype int32/int64 for index, but got {got}")
        a, idx = self._data, index._data
        nd = a.ndim
        dim = self._sort_dim(dim)
        if idx.size == 0:  # (nothing picked: an empty result of the index's shape, as PyTorch's, with no shape check)
            return self.reshape(-1)[:0].reshape(idx.shape)
        if idx.ndim != nd and not (max(nd, 1) == max(idx.ndim, 1)):
            raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
        if nd == 0 or idx.ndim == 0:
            return self.reshape(-1).gather(0, index.reshape(-1)).reshape(index.shape)  # (the index's shape)
        larger = [d for d in range(nd) if d != dim and idx.shape[d] > a.shape[d]]
        if larger:
            raise RuntimeError(f"Size does not match at dimension {larger[0]} expected index {list(idx.shape)} to be "
                               f"no larger than self {list(a.shape)} apart from dimension {dim}")
        if idx.__class__ is np.ndarray and idx.size:
            bad = (idx < 0) | (idx >= a.shape[dim])
            if bad.any():
                raise RuntimeError(f"index {int(idx.reshape(-1)[bad.reshape(-1).argmax()])} is out of bounds for "
                                   f"dimension {dim} with size {a.shape[dim]}")
        elif idx.size:
            _deferred.check(_deferred.out_of_range(idx, 0, a.shape[dim]), RuntimeError,
                            f"gather(): index out of bounds for dimension {dim} with size {a.shape[dim]}")
        return _fn.TakeAlong.apply(self, idx.astype(np.int64, copy=False), dim, name="GatherBackward0")

    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        _no_complex(self, "argmax", "argmax(): does not support complex input", RuntimeError)
        xp = xp_of(self._data)
        if dim is None:
            if not self._data.size:
                raise IndexError("argmax(): Expected reduction dim to be specified for input.numel() == 0.")
            return _wrap(xp.asarray(self._data.argmax()))
        dim = self._dim_of(dim)
        _fn.reduction._nonempty(self._data.shape, (dim,) if self._data.ndim else (), "argmax")
        out = self._data.argmax(axis=dim if self._data.ndim else None)
        return _wrap(xp.expand_dims(out, dim) if keepdim and self._data.ndim else out)

    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        _no_complex(self, "argmin", "argmin(): does not support complex input", RuntimeError)
        xp = xp_of(self._data)
        if dim is None:
            if not self._data.size:
                raise IndexError("argmin(): Expected reduction dim to be specified for input.numel() == 0.")
            return _wrap(xp.asarray(self._data.argmin()))
        dim = self._dim_of(dim)
        _fn.reduction._nonempty(self._data.shape, (dim,) if self._data.ndim else (), "argmin")
        out = self._data.argmin(axis=dim if self._data.ndim else None)
        return _wrap(xp.expand_dims(out, dim) if keepdim and self._data.ndim else out)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """The vector ``p``-norm over ``dim`` (all elements by default): 2 (``'fro'``, the default), 1, ``inf``,
        ``-inf``, 0 (the count of nonzeros) or any other order, as PyTorch's (one node; a zero vector's gradient is
        zero)."""
        if p == "fro":
            p = 2.0
        if not isinstance(p, (_int, _float, np.integer, np.floating)) or isinstance(p, _bool):
            if p == "nuc":  # (engine/linalg.py's Tensor.norm takes it first: this is reached without it)
                raise NotImplementedError("norm(p='nuc'): the nuclear norm needs engine.linalg")
            raise ValueError(f"norm: p must be a number, 'fro' or inf, not {p!r}")
        t = self.to(dtype) if dtype is not None else self
        if t._data.dtype.kind == "c":  # (the norm of the moduli: real, its gradient sgn(z) times theirs)
            t = t.abs()
        if not t._data.dtype.kind == "f":
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                               f"{_dtypes.from_numpy_dtype(t._data.dtype).legacy_name[:-6]}")
        return _fn.VectorNorm.apply(t, ord=_float(p), dim=dim, keepdim=keepdim)

    def all(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Whether every element (along ``dim``: an int or a tuple of ints) is true (non-zero)."""
        return self._logical_reduce("all", dim, keepdim, axis, keepdims)

    def any(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Whether any element (along ``dim``) is true (non-zero)."""
        return self._logical_reduce("any", dim, keepdim, axis, keepdims)

    def _logical_reduce(self, name, dim, keepdim, axis, keepdims):
        out = self._logical_reduced(name, dim, keepdim, axis, keepdims)
        if self._data.dtype == np.uint8:  # (PyTorch's all/any of uint8 stay uint8, for the old masks' sake)
            out._data = out._data.astype(np.uint8)
        return out

    def _logical_reduced(self, name, dim, keepdim, axis, keepdims):
        if axis is not None or keepdims is not None:  # NumPy's names, which PyTorch takes too
            dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        data = self._data
        xp = xp_of(data)
        if dim is None:
            return _wrap(xp.asarray(getattr(data, name)()))
        nd = data.ndim
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        for d in dims:
            if not -max(nd, 1) <= d < max(nd, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, "
                                 f"{max(nd, 1) - 1}], but got {d})")
        if nd == 0:  # (a 0-d tensor takes dim 0 or -1, as PyTorch's)
            return _wrap(xp.asarray(getattr(data, name)()))
        return _wrap(xp.asarray(getattr(data, name)(axis=tuple(d % nd for d in dims), keepdims=bool(keepdim))))

    # ------------------------------------------------------------------ shape
    def view(self, *shape, dtype=None):
        """The tensor's memory in another shape: refused, as PyTorch refuses it, where its strides cannot show
        that shape without a copy (``x.t().view(-1)``: ``reshape`` copies). ``view(dtype)``: its bytes read as
        another dtype (:meth:`_view_dtype`)."""
        if len(shape) == 1 and isinstance(shape[0], _dtypes.dtype) and dtype is None:
            dtype = shape[0]
            shape = ()
        if dtype is not None:
            if shape:
                raise TypeError("view() takes either a shape or a dtype, not both")
            return self._view_dtype(_dtypes.to_dtype(dtype).np)
        if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
            shape = tuple(shape[0])
        data = self._data
        if not data.flags.c_contiguous and not _fn.shape.views_as(data, shape):
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return _viewed(self, _fn.Reshape.apply(self, shape))

    def _view_dtype(self, want):
        """``view(dtype)``: the same memory read as ``want`` (the last dimension scaled where the element sizes
        differ), with PyTorch's checks in its words; not differentiable, as PyTorch's ``view.dtype``."""
        data = self._data
        have = data.dtype
        if want.itemsize != have.itemsize:
            names = (f"to view {_dtypes.scalar_name(have)} as {_dtypes.scalar_name(want)} (different element "
                     f"sizes)")
            if data.ndim == 0:
                raise RuntimeError(f"self.dim() cannot be 0 {names}")
            strides = [st // have.itemsize for st in data.strides]
            if have.itemsize > want.itemsize:
                if strides[-1] != 1:
                    raise RuntimeError(f"self.stride(-1) must be 1 {names}, but got {strides[-1]}")
            else:
                ratio = want.itemsize // have.itemsize
                if data.shape[-1] % ratio:
                    raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {names}, but got "
                                       f"{data.shape[-1]}")
                offset = _fn.shape.storage_of(data)[1]
                if offset % ratio:
                    raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {names}, but got "
                                       f"{offset}")
                for i, st in enumerate(strides[:-1]):
                    if st % ratio:
                        raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {names}, but got {st}")
                if strides[-1] != 1:
                    raise RuntimeError(f"self.stride(-1) must be 1 {names}, but got {strides[-1]}")
        return _viewed(self, _wrap(data.view(want)))

    def reshape(self, *shape):
        """``view`` where the strides allow it (a non-contiguous tensor's node is PyTorch's
        ``ReshapeAliasBackward0``), else a contiguous copy in that shape (``CloneBackward0``, then
        ``UnsafeViewBackward0``), as PyTorch's."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
            shape = tuple(shape[0])
        data = self._data
        if data.flags.c_contiguous:
            return _viewed(self, _fn.Reshape.apply(self, shape))
        if _fn.shape.views_as(data, shape):
            return _named(_viewed(self, _fn.Reshape.apply(self, shape)), "ReshapeAliasBackward0")
        copy = self.clone()
        return _named(_fn.Reshape.apply(copy, shape), "UnsafeViewBackward0")

    def view_as(self, other):
        return self.view(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        shape = self._data.shape
        nd = len(shape)
        if nd == 0:
            self._dim_of(start_dim), self._dim_of(end_dim)  # (0 or -1, as PyTorch's)
            return self.reshape(1)
        s, e = self._dim_of(start_dim), self._dim_of(end_dim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self  # as PyTorch: nothing to flatten, the tensor itself
        n = 1
        for d in shape[s : e + 1]:
            n *= d
        return self.reshape(shape[:s] + (n,) + shape[e + 1 :])

    def tril(self, diagonal=0):
        """The lower triangle of the last two dimensions (on and below ``diagonal``), zeros above it."""
        return self._triangle("lower", diagonal)

    def triu(self, diagonal=0):
        """The upper triangle of the last two dimensions (on and above ``diagonal``), zeros below it."""
        return self._triangle("upper", diagonal)

    def _triangle(self, side, diagonal):
        if self._data.ndim < 2:
            raise RuntimeError(f"{'tril' if side == 'lower' else 'triu'}: input tensor must have at least 2 "
                               f"dimensions")
        return _fn.Triangle.apply(self, side=side, diagonal=int(diagonal))

    def tril_(self, diagonal=0):
        return self._triangle_(self.tril, diagonal)

    def triu_(self, diagonal=0):
        return self._triangle_(self.triu, diagonal)

    def _triangle_(self, make, diagonal):
        if self._records():
            self._check_inplace()
            self._rebind(make.__func__(self._before_write(), diagonal))
            return self
        self._data[...] = make(diagonal)._data
        _writes.wrote(self._data)
        return self

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn from this tensor's rows of weights: ``torch.multinomial`` (``engine.random.multinomial``)."""
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {self.dtype}")
        return _wrap(_random.multinomial(self._data, num_samples, replacement, self.device, generator))

    def cumsum(self, dim=None, dtype=None, *, axis=None):
        """The running sum along ``dim`` (an integer or boolean tensor's in int64, as PyTorch's)."""
        return self._running(_fn.Cumsum, "cumsum", dim, dtype, axis)

    def cumprod(self, dim=None, dtype=None, *, axis=None):
        """The running product along ``dim`` (an integer or boolean tensor's in int64, as PyTorch's); its gradient
        is exact where an element is 0."""
        return self._running(_fn.Cumprod, "cumprod", dim, dtype, axis)

    def _running(self, fn, name, dim, dtype, axis):
        dim = _required_dim(dim, axis, name)
        t = self if dtype is None else self.to(dtype)
        nd = t._data.ndim
        if not -max(nd, 1) <= dim < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], "
                             f"but got {dim})")
        if nd == 0:
            return fn.apply(t.view(1), dim=0, asked=dtype is not None).view(())
        return fn.apply(t, dim=dim % nd, asked=dtype is not None)

    def unflatten(self, dim, sizes):
        """Dimension ``dim`` split into ``sizes`` (one of them may be -1: what is left), a view."""
        shape = self._data.shape
        nd = len(shape)
        if not -nd <= dim < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
        d = dim % nd
        sizes = tuple(sizes)
        known = 1
        for n in sizes:
            known *= n if n != -1 else 1
        if sizes.count(-1) == 1 and known and shape[d] % known == 0:
            sizes = tuple(shape[d] // known if n == -1 else n for n in sizes)
        elif known != shape[d] or -1 in sizes:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                               f"({shape[d]}) in the input tensor")
        return self.view(shape[:d] + sizes + shape[d + 1 :])

    def t(self):
        nd = self._data.ndim
        if nd > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
        if self._records():
            if nd < 2:
                return _viewed(self, _named(_fn.Permute.apply(self, tuple(range(nd))), "TBackward0"))
            return _viewed(self, _named(_fn.Transpose.apply(self, 0, 1), "TBackward0"))
        if nd < 2:
            return self
        view = _wrap(self._data.T)
        d = self.__dict__  # (_viewed's note on a view made without a node, written out: the tutorial's manual step
        if "_src" in d or _grad_off:  # makes three of these)
            return _viewed(self, view)
        view._src = self
        views = d.get("_plain_views")  # (_note_plain_view, written out here too: ~50 ns of a ~0.9 us t())
        if views is None:
            _note_plain_view(self, view)
        else:
            views.append(_weakref(view))
            if len(views) >= views.limit:
                views.prune()
        return view

    def transpose(self, dim0, dim1):
        if self._data.ndim == 0:  # (dims 0 and -1 of a 0-d tensor, as PyTorch's)
            _fn.reduction._axes((dim0,), 0), _fn.reduction._axes((dim1,), 0)
            return _viewed(self, _named(_fn.Reshape.apply(self, ()), "TransposeBackward0"))
        return _viewed(self, _fn.Transpose.apply(self, dim0, dim1))

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if len(dims) != self._data.ndim:
            raise RuntimeError("permute(): number of dimensions in the tensor input does not match the length of the "
                               f"desired ordering of dimensions i.e. input.dim() = {self._data.ndim} is not equal to "
                               f"len(dims) = {len(dims)}")
        dims = tuple(self._dim_of(d) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return _viewed(self, _fn.Permute.apply(self, dims))

    def unsqueeze(self, dim=None, *, axis=None):
        dim = _required_dim(dim, axis, "unsqueeze")
        nd = self._data.ndim
        if not -nd - 1 <= dim <= nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd - 1}, {nd}], but got {dim})")
        dim = dim % (nd + 1)
        shape = self._data.shape
        return _viewed(self, _named(_fn.Reshape.apply(self, shape[:dim] + (1,) + shape[dim:]), "UnsqueezeBackward0"))

    def squeeze(self, dim=None, *, axis=None):
        if axis is not None:
            dim = axis
        shape = self._data.shape
        if dim is None:
            new = tuple(n for n in shape if n != 1)
        else:
            dims = set(_fn.reduction._axes(dim, len(shape)) if isinstance(dim, _int) or len(dim) else ())
            new = tuple(n for i, n in enumerate(shape) if not (i in dims and n == 1))
        # a new tensor even where nothing is squeezed, as PyTorch's view; its node named by PyTorch's overload
        name = "SqueezeBackward" + ("0" if dim is None else "1" if isinstance(dim, _int) else "2")
        return _viewed(self, _named(_fn.Reshape.apply(self, new), name))

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def repeat(self, *sizes):
        """Tiles the tensor ``sizes[i]`` times along each dimension (more sizes than dimensions add leading ones),
        as PyTorch's: a view broadcast along new axes, then copied to its shape, so the gradient sums the tiles."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
            sizes = tuple(sizes[0])
        if len(sizes) < self._data.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                               "tensor")
        sizes = tuple(_int(n) for n in sizes)
        shape = (1,) * (len(sizes) - self._data.ndim) + self._data.shape
        target = [n * s for n, s in zip(sizes, shape)]
        if any(n < 0 for n in target):  # (PyTorch's refusal: the first negative size of the result)
            raise RuntimeError(f"Trying to create tensor with negative dimension {next(n for n in target if n < 0)}: "
                               f"{target}")
        if any(n < 0 for n in sizes):  # (a negative count of an empty dimension: empty, as PyTorch's)
            sizes = tuple(max(n, 0) for n in sizes)
        if not self._records():
            return _wrap(xp_of(self._data).tile(self._data.reshape(shape), sizes))
        return _fn.Repeat.apply(self, sizes)  # one RepeatBackward0: the tiles are a copy, as PyTorch's

    def split(self, split_size_or_sections, dim=0):
        """Pieces of ``split_size`` along ``dim`` (the last one smaller), or of the listed sizes, which must add up
        to the dimension's size: views of the tensor, made by one node (PyTorch's ``SplitBackward0``, or
        ``SplitWithSizesBackward0`` for a list), whose backward joins their gradients."""
        return self._split(split_size_or_sections, dim, "")

    def _split(self, split_size_or_sections, dim, unsafe):
        if self._data.ndim == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        d = self._dim_of(dim)
        size = self._data.shape[d]
        split = split_size_or_sections
        if isinstance(split, Tensor) and split._data.ndim == 0:
            split = split.item()
        if isinstance(split, (_int, np.integer)) and not isinstance(split, bool):
            step = _int(split)
            if step < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
            if step == 0 and size:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
            n = builtins.max(-(-size // step), 1) if step else 1
            sizes = [step] * (n - 1) + [size - step * (n - 1)]
            name = "SplitBackward0"
        elif isinstance(split, (list, tuple)):
            for i, n in enumerate(split):
                if not isinstance(n, (_int, np.integer)) or isinstance(n, bool):
                    raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, "
                                    f"but found element of type {type(n).__name__} at pos {i}")
            sizes = [_int(n) for n in split]
            if builtins.min(sizes, default=0) < 0:
                raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                                   f"split_sizes={sizes}")
            if builtins.sum(sizes) != size:
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                                   f"size at dimension {d}), but got split_sizes={sizes}")
            name = "SplitWithSizesBackward0"
        else:
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                            f"{type(split).__name__}")
        return self._pieces(sizes, d, unsafe + name)

    def _dim_of(self, dim, fn=None) -> int:
        nd = self._data.ndim
        if not isinstance(dim, (_int, np.integer)):
            raise TypeError(f"{fn + '(): ' if fn else ''}argument 'dim' must be int, not {type(dim).__name__}")
        if not -builtins.max(nd, 1) <= dim < builtins.max(nd, 1):
            _dim_error(dim, nd)
        return _int(dim) % builtins.max(nd, 1)

    def _pieces(self, sizes, dim, name):
        """``split``'s and ``unbind``'s (``sizes`` None) views, made by one :class:`functions.Split` node where it is
        recorded, and noted on a base that has a node, so that a write into it later refuses their backward
        (:func:`_refresh_views`: ``("piece", ...)`` steps). Unrecorded, each is a plain view (:func:`_viewed`)."""
        pieces = _fn.Split.apply(self, sizes, dim, name)
        node = pieces[0].grad_fn if pieces else None
        if node is None:
            return tuple(_viewed(self, p) for p in pieces)
        if self.grad_fn is not None and not node.unsafe:
            lead = (slice(None),) * dim
            start = 0
            for i, p in enumerate(pieces):
                if sizes is None:
                    index = lead + (i,)
                else:
                    index = lead + (slice(start, start + sizes[i]),)
                    start += sizes[i]
                _note_view(self, p, ("piece", (index, i, name)))
        return pieces

    def chunk(self, chunks, dim=0):
        """At most ``chunks`` pieces along ``dim``, each ``ceil(size / chunks)`` long but the last: ``split``'s."""
        return self._chunk(chunks, dim, "")

    def _chunk(self, chunks, dim, unsafe):
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        if self._data.ndim == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        d = self._dim_of(dim)
        size = self._data.shape[d]
        step = -(-size // chunks)
        if step == 0:  # (an empty dimension: PyTorch makes the chunks asked for, each empty)
            return self._pieces([0] * chunks, d, unsafe + "SplitWithSizesBackward0")
        return self._split(step, d, unsafe)

    def unbind(self, dim=0):
        """The slices along ``dim``, as a tuple, each without that dimension: views, made by one node (PyTorch's
        ``UnbindBackward0``), whose backward stacks their gradients."""
        if self._data.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        d = self._dim_of(dim)
        if not self._data.shape[d]:
            return ()
        return self._pieces(None, d, "UnbindBackward0")

    def expand(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = expanded_shape(self._data.shape, shape, self.type())  # (PyTorch's refusals, not NumPy's)
        return _viewed(self, _fn.Expand.apply(self, shape))

    def expand_as(self, other):
        return self.expand(other.shape)

    def clone(self, *, memory_format=None):
        """A copy, laid out as ``memory_format`` says: by default (``preserve_format``) with a dense tensor's own
        strides (a transposed one's stay transposed, as PyTorch's), any other row-major."""
        fmt = _layouts.check(memory_format, "clone")
        if self._records():
            return _fn.Clone.apply(self, fmt)
        return _wrap(_layouts.arranged(self._data, fmt, copy=True))

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, index):
        try:
            if index.__class__ is not _int:
                if index.__class__ is slice:
                    if index.step is not None:
                        _check_step(index)
                else:
                    index = _convert_index(index, xp_of(self._data))
                    parts = _ints_first(index, self._data.shape if self._records() else None)
                    if parts is not None:
                        return self[parts[0]][parts[1]]
                    if index.__class__ is tuple and len(index) > 1 and self._records():
                        steps = _index_steps(index, self._data.shape)
                        if steps is not None:  # (PyTorch's graph: one select, slice or unsqueeze a part)
                            t = self
                            for step in steps:
                                t = t[step]
                            return t
            if self._data.__class__ is not _ndarray and index.__class__ is not slice:
                _deferred.check_index(index, self._data.shape)  # (CuPy wraps an index past the end round)
            return _viewed(self, _fn.GetItem.apply(self, index=index),
                           index.__class__ is slice or index.__class__ is _int or _fn.shape.is_basic_index(index))
        except IndexError as error:  # (NumPy's words for it: PyTorch's, with "dimension" for "axis")
            raise index_error(error, self._data.shape) from None

    def __setitem__(self, index, value):
        written = index  # (as given: where a refusal says PyTorch writes, _piece_refusal)
        if index.__class__ is Tensor and index._data.__class__ is self._data.__class__:
            index = index._data  # a mask or index tensor on this tensor's device (the tutorial's grad_h[h < 0])
        elif index.__class__ is slice:
            if index.step is not None:
                _check_step(index)
        elif index.__class__ is not _int:
            index = _convert_index(index, xp_of(self._data))
            parts = _ints_first(index)
            if parts is not None:  # (PyTorch's layout of the written places, as in __getitem__: one array per
                data = self._data  # dimension, the places in PyTorch's order, so that a value lines up as there)
                xp = xp_of(data)
                places = xp.arange(data.size).reshape(data.shape)[parts[0]][parts[1]]
                index = _backend.unravel(places, data.shape)
        if self._data.__class__ is not _ndarray and index.__class__ is not slice and index.__class__ is not _int:
            _deferred.check_index(index, self._data.shape)  # (CuPy wraps an index past the end round)
        if self._records(value) and self._data.dtype.kind in "fc":  # (into an integer tensor: cast, no gradient)
            self._check_inplace()
            try:
                out = _fn.SetItem.apply(self._before_write(written), value, index=index)
            except ValueError as error:
                raise _setitem_refusal(self._data, index, _raw(value), error) from None
            self._rebind(out)
            return
        if isinstance(value, Tensor):
            _check_same_device(self, value)
            value = value._data
        data = self._data
        try:
            if data.__class__ is _ndarray:
                if not (_kernels.is_plus_zero(value) and _kernels.zero_where(data, index)):
                    data[index] = value  # (else a boolean mask set to 0, the tutorial's grad_h[h < 0] = 0, was
                    # written without a branch per element)
            else:
                _fn.shape.assign(data, index, value)
        except OverflowError:  # a Python int out of a narrow integer dtype's range: wrapped, as PyTorch casts it
            if value.__class__ is not _int:
                raise
            _fn.shape.assign(data, index, _dtypes.wrapped_int(value, data.dtype))
        except IndexError as error:
            raise index_error(error, data.shape) from None
        except ValueError as error:
            raise _setitem_refusal(data, index, value, error) from None
        # (as in _inplace_op: held by this tensor alone, nothing saved it)
        if data.base is not None or _getrefcount(data) > _SOLE_REFS or "_shares" in self.__dict__:
            _writes.wrote(data)

    # ------------------------------------------------------------------ in place
    def _check_inplace(self):
        if self.grad_fn is None and self._rg:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation. "
                "(Wrap the update in `with engine.no_grad():`.)"
            )

    def _rebind(self, out: Tensor):
        _keep_shape(self._data, out._data)
        if out._data.dtype != self._data.dtype:
            out = _fn.Cast.apply(out, self._data.dtype)  # an in-place op keeps the tensor's dtype
        view = self.__dict__.pop("_pending_view", None)
        if view is not None:  # a view of a tensor that requires grad (_before_write): written through, as PyTorch
            base, steps = view
            written = _fn.WriteView.apply(base._shallow(), out, steps=steps)  # writes out into base's memory
            # rebound after the op's nodes: a node that took this tensor or its base as an operand (h[0].add_(h))
            # takes them as they were, not as the result it makes (a cycle)
            self._rebound_at = base._rebound_at = _writes.wrote(self._data)
            base._remember()
            base._rg, base.grad_fn, base._out_index = True, written.grad_fn, 0
            self._remember()
            # the view's node: the view of the base as written (PyTorch's AsStridedBackward0 on its CopySlices), so
            # that it is still a view of the base to a second write (v.add_(2).mul_(w)) and reads the base's node
            self._rg, self.grad_fn, self._out_index = True, _view_of_written(base, steps, self._data), 0
            _saved_as_written(out, self._data)
            if "_views" in base.__dict__:
                _refresh_views(base, skip=self)
            if "_plain_views" in base.__dict__:
                _refresh_plain_views(base, skip=self)
            if "_views" in self.__dict__:
                _refresh_views(self)
            return
        self._rebound_at = _writes.rebound()  # (after the op's node: h += h takes h as it was, not its own result)
        self._remember()
        if self.__dict__.pop("_write_into", False):  # (others may see this memory: the result goes into it)
            self._data[...] = out._data
            _saved_as_written(out, self._data)
        else:
            self._data = out._data
        self._rg = out._rg
        self.grad_fn = out.grad_fn
        self._out_index = out._out_index
        d = self.__dict__
        if "_views" in d:
            _refresh_views(self)
        if "_plain_views" in d and out.grad_fn is not None:
            _refresh_plain_views(self)

    __iadd__ = _inplace_op("Add", _operator.iadd)
    __isub__ = _inplace_op("Sub", _operator.isub)
    __imul__ = _inplace_op("Mul", _operator.imul)
    __itruediv__ = _inplace_op("Div", _operator.itruediv)
    _ipow = __ipow__ = _inplace_op("Pow", _ipow, lambda a, b: _fn.arithmetic.power(a, b))

    def add_(self, other, alpha=1):
        if other.__class__ is not Tensor and _foreign(other):  # (the optimizers' Tensor first: one check)
            raise _not_an_operand("add_", other)
        return self.__iadd__(other * alpha if alpha != 1 else other)

    def sub_(self, other, alpha=1):
        if other.__class__ is not Tensor and _foreign(other):  # (the optimizers' Tensor first: one check)
            raise _not_an_operand("sub_", other)
        return self.__isub__(other * alpha if alpha != 1 else other)

    def mul_(self, other):
        if other.__class__ is not Tensor and _foreign(other):  # (the optimizers' Tensor first: one check)
            raise _not_an_operand("mul_", other)
        return self.__imul__(other)


    def pow_(self, exponent):
        if exponent.__class__ is not Tensor and _foreign(exponent):  # (the optimizers' Tensor first: one check)
            raise _not_an_operand("pow_", exponent)
        return self._ipow(exponent)

    def clamp_(self, min=None, max=None):  # noqa: A002
        if isinstance(min, Tensor) or isinstance(max, Tensor):  # (a bound that may learn: ClampTensors, written
            learns = [b for b in (min, max) if isinstance(b, Tensor) and b._rg]  # into this tensor)
            return self._apply_in_place(lambda t: t.clamp(min, max), *learns[:1])
        if self._records():
            self._check_inplace()
            self._rebind(_fn.Clamp.apply(self._before_write(), min=_raw(min), max=_raw(max)))
            return self
        if self._data.dtype.kind in "biu" and (min.__class__ is _float or max.__class__ is _float):
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{c_type_name(self._data.dtype)}")
        xp_of(self._data).clip(self._data, _raw(min), _raw(max), out=self._data)
        _writes.wrote(self._data)
        return self

    def relu_(self):
        if self._data.dtype == np.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        if self._records():  # PyTorch's ReluBackward0, which keeps the result (so a later write to it is refused)
            self._check_inplace()
            self._rebind(_fn.ReLU.apply(self._before_write()))
            return self
        return self.clamp_(min=0)

    def zero_(self):
        cls = self.__class__
        if cls is _LazyZeros:
            return self
        if self._rg and (not _grad_off or _get_ident() not in _grad_off):
            self.fill_(0)
            node = self.grad_fn
            if node is not None and node.backward_name == "FillBackward2":  # (PyTorch's node of zero_)
                node.backward_name = "ZeroBackward0"
            return self
        arr = self._data
        # the tutorial's w.grad.zero_(): when no one else holds the array, the zeros are written only when someone
        # reads it; backward() drops it instead (_LazyZeros)
        if (cls is Tensor and arr.__class__ is _ndarray and arr.base is None and _getrefcount(arr) <= _SOLE_REFS
                and arr.flags.writeable):
            self.__class__ = _LazyZeros  # (no one else holds the array: nothing saved it, no write to note)
            return self
        _distinct(arr).fill(0)
        _writes.wrote(arr)
        return self

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value._data.ndim:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                                   f"{value._data.ndim} dimensions.")
            if value._data.__class__ is not self._data.__class__:
                _check_same_device(self, value)
        if self._records(value) and self._data.dtype.kind in "fc":  # (a value that requires grad too: FillBackward)
            self._check_inplace()
            self._rebind(_fill_recorded(self._before_write(), value, "FillBackward3", "FillBackward2"))
            return self
        value = _raw(value)
        if value.__class__ is _int:  # (wrapped into a narrow integer dtype, as PyTorch casts it)
            value = _dtypes.wrapped_int(value, self._data.dtype)
        _backend.fill(_distinct(self._data), value)
        _writes.wrote(self._data)
        return self

    def copy_(self, src):
        src_data = _backend.to_device_array(_raw(src), self.device, dtype=self._data.dtype)
        if src_data.shape != self._data.shape:
            _check_broadcast(self._data, src_data)
            shape = np.broadcast_shapes(self._data.shape, src_data.shape)
            if shape != self._data.shape:
                raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                                   f"{list(shape)}")
        if self._records(src) and self._data.dtype.kind in "fc":  # (into integers: a cast, no gradient)
            self._check_inplace()
            # one node as PyTorch's CopyBackwards: edges to this tensor's old value (zeros) and to src
            self._rebind(_fn.CopyFrom.apply(self._before_write(), src if isinstance(src, Tensor) else _wrap(src_data)))
            return self
        _check_overlap(self._data)
        self._data[...] = src_data
        _writes.wrote(self._data)
        return self

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        if self._data.dtype.kind != "f":
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                      f"'{_dtypes.scalar_name(self._data.dtype)}'")
        if not std >= 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        return self._fill_drawn(_random.normal_like(self._data, mean, std, generator))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        if self._data.dtype.kind != "f":
            raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                      f"'{_dtypes.scalar_name(self._data.dtype)}'")
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
        return self._fill_drawn(_random.uniform_like(self._data, a, b, generator))



def _data_ptr(arr) -> int:
    """Where an array's first element is (NumPy or CuPy)."""
    return arr.__array_interface__["data"][0] if arr.__class__ is np.ndarray else arr.data.ptr


def _direct(op, a, b):
    """``op`` on the arrays of a and b (either may be a number), wrapped; no graph."""
    a_data = a._data if isinstance(a, Tensor) else a
    b_data = b._data if isinstance(b, Tensor) else b
    try:
        return _wrap(op(a_data, b_data))
    except (TypeError, ValueError):
        _check_same_device(a, b)  # NumPy and CuPy arrays do not mix: say which devices
        raise


def _raw_checked(a, b):
    if isinstance(b, Tensor):
        if b._data.__class__ is not a._data.__class__:
            _check_same_device(a, b)
        return b._data
    return b


def _rebuild(host, dev, requires_grad):
    array = _backend.to_device_array(host, resolve(dev))
    return _wrap(array, requires_grad)



_data_slot = Tensor._data  # the slot itself: reads and writes the array without what _LazyZeros adds
_data_get, _data_set = _data_slot.__get__, _data_slot.__set__  # bound once: a call each, no lookup
_getrefcount = sys.getrefcount


class _LazyZeros(Tensor):
    """A Tensor whose ``zero_()`` has not written its zeros yet.

    The tutorial clears each gradient with ``w.grad.zero_()``, and the next ``backward()`` adds the new gradient to
    those zeros: two passes over a weight-sized buffer that hand-written NumPy never makes (the fill alone measured
    ~7% of the tutorial's autograd step). So ``zero_()`` on a CPU tensor whose array no one else holds (no view,
    no other tensor, no ``numpy()`` result: its reference count; and it owns its memory) only switches the
    tensor's class to this one. Every read of ``_data``, the one way at the array, writes the zeros first and
    switches the class back, so any use of the tensor (printing it, an op, ``numpy()``, a view, a write) sees
    zeros as before. ``backward()`` is the exception: it takes the tensor while it is still in this state, so
    the new gradient's array takes the old array's place (:func:`engine.autograd.graph._accumulate_leaf`) and
    nothing is written twice. The Tensor a user holds stays the same object. The type reads as ``Tensor``.
    """

    __slots__ = ()

    @property
    def _data(self):
        arr = _data_get(self)
        arr.fill(0)  # before the class goes back: another thread reading meanwhile fills too, never sees old values
        self.__class__ = Tensor
        return arr

    @_data.setter
    def _data(self, value):
        self.__class__ = Tensor
        _data_set(self, value)


_LazyZeros.__name__ = _LazyZeros.__qualname__ = "Tensor"


def _refs_while_zeroing(holder) -> int:
    arr = holder._data
    return _getrefcount(arr)


# what zero_() counts for an array that only its tensor holds, measured through the same steps (the interpreter's
# version decides how many references its frame adds)
_SOLE_REFS = _refs_while_zeroing(_wrap(np.zeros(1)))


from . import functions as _fn  # noqa: E402
from .autograd import _writes  # noqa: E402
from .autograd import graph as _walk  # noqa: E402
from .autograd.grad_mode import _get_ident  # noqa: E402
from .autograd.grad_mode import _off as _grad_off  # noqa: E402
