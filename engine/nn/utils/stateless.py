"""``torch.nn.utils.stateless``: the older home of ``functional_call`` (PyTorch warns it is deprecated for
``torch.func.functional_call``, which this calls)."""

from __future__ import annotations

import warnings

from ... import func as _func

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    warnings.warn("This API is deprecated as of PyTorch 2.0 and will be removed in a future version of PyTorch. "
                  "Please use torch.func.functional_call instead which is a drop-in replacement.", FutureWarning,
                  stacklevel=2)
    return _func.functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                                 strict=strict)
