"""In-place writes, on the clock that numbers graph nodes: how ``backward()`` sees that a value a node saved for it
was written in place after the node saved it (PyTorch's "modified by an inplace operation" error).

PyTorch keeps a version counter per tensor storage, and each saved tensor remembers the version it was saved at.
The engine's nodes save raw arrays (a view, the tensor's own array, or the forward's output), so the record is kept
per array: every in-place write (an in-place operator or method, a setitem, ``zero_``/``fill_``/``copy_``, an
optimizer's step) notes its time against the array that owns the memory it wrote (a NumPy or CuPy view's
``base``; both collapse a view of a view to the owner; on a GPU, the allocation CuPy's pool gave, which its
``as_strided`` headers share without a base). The time is a tick of the same clock that numbers graph
nodes as they are recorded (their ``_seq``). At backward, a node recorded before the newest write looks up what it
saved: a write to it after the node's own tick means the value its backward would read is not the one its forward
used. In the usual loop (the optimizer writes, then the next forward records) every node is newer than the newest
write, and the walk looks nothing up.

The table is keyed by ``id`` of the owning array and holds no reference to it. An entry that outlives its array
cannot raise by mistake: a node holds what it saved (so its owner's id is not reused while the node lives), and a
write noted before the node was recorded is older than the node. Past 4096 owners the table keeps the half written
most recently; an entry dropped from it can only miss a write, never invent one.
"""

from __future__ import annotations

import itertools

from numpy import ndarray as _ndarray

__all__ = ["tick", "wrote", "rebound", "written_after", "last"]

tick = itertools.count().__next__  # the one clock: graph nodes' _seq and in-place writes

_LIMIT = 4096
_written: dict = {}  # id(owning array) -> tick of its newest in-place write, oldest first
last = -1  # the tick of the newest write or rebind anywhere (a node newer than this has nothing to look up)


def _owner(arr) -> int:
    """The key of the memory ``arr`` views: the id of its NumPy base (or its own), or of a CuPy array's allocation
    (``data.mem``, which every view and every ``as_strided`` header of it shares; such a header has no base)."""
    base = arr.base
    if arr.__class__ is not _ndarray:
        mem = getattr(arr.data, "mem", None)  # (None for a NumPy scalar's, whose data is a memoryview)
        if mem is not None:
            return id(mem)
    return id(arr if base is None else base)


def wrote(arr) -> int:
    """Note an in-place write into ``arr`` (a NumPy or CuPy array), now; its tick."""
    global last
    t = tick()
    if arr.__class__ is _ndarray:
        base = arr.base
        _written[id(arr if base is None else base)] = t
    else:
        _written[_owner(arr)] = t
    if len(_written) > _LIMIT:
        _forget_older_half()
    last = t
    return t


def rebound() -> int:
    """Note that an in-place op gave a tensor its new node, now (after the op's own nodes, which may have taken the
    tensor as an operand: ``h += h``): its tick, which the walks then see as newer than those nodes."""
    global last
    last = t = tick()
    return t


def _forget_older_half():
    """Keep the half of the table written most recently (by tick, not by when an owner was first written: the
    parameters an optimizer writes every step stay)."""
    cutoff = sorted(_written.values())[len(_written) // 2]
    for key in [key for key, when in _written.items() if when < cutoff]:
        del _written[key]


def written_after(arr, seq) -> bool:
    """Whether the memory of ``arr`` was written in place after tick ``seq``."""
    if getattr(arr, "base", False) is False:  # (a number)
        return False
    when = _written.get(_owner(arr))
    return when is not None and when > seq
