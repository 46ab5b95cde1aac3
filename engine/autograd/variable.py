"""``Variable``, as the older tutorials wrote it (``x = Variable(torch.randn(N, D_in), requires_grad=True)``).

Since PyTorch 0.4 a Variable is a Tensor: ``Variable(t)`` gives a tensor that shares ``t``'s memory, is a leaf
(no history), and requires grad when asked; every tensor is an instance of ``Variable``. ``volatile`` is gone
(``no_grad`` took its place), and is refused with PyTorch's warning."""

from __future__ import annotations

import warnings

from ..tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            from ..creation import empty

            return empty(0, requires_grad=requires_grad)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        return t.requires_grad_(True) if requires_grad else t
