"""New arrays of a given shape on a device: the size arguments' checks and the allocation that ``engine.zeros``
and ``Tensor.new_zeros`` (and the other filled makers) share. A leaf: NumPy and the backend only."""

from __future__ import annotations

import numpy as np

from . import backend


def sizes(args, fn: str) -> tuple:
    """``(2, 3)`` from ``zeros(2, 3)`` or ``zeros((2, 3))`` (a one-element tensor counts as its value); a size that
    is not a whole number, or is negative, is refused by name."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for a in args:
        if not isinstance(a, (int, np.integer)) and hasattr(a, "item") and hasattr(a, "requires_grad"):
            a = a.item()  # a Tensor
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{fn}(): sizes must be integers, got {a!r} in {list(args)}")
        if a < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {a}: {list(args)}")
        out.append(int(a))
    return tuple(out)


def filled(fill, shape: tuple, np_dtype, dev):
    """``fill(xp, shape, dtype)``, run with ``dev``'s array module (and, on a GPU, ``dev`` made current)."""
    xp = backend.array_module(dev)
    if dev.type == "cpu":
        return fill(xp, shape, np_dtype)
    with xp.cuda.Device(dev.index):
        return fill(xp, shape, np_dtype)
