"""The activations past the tutorial's ReLU, as ``torch.nn`` has them: each a Module over its
``engine.nn.functional`` form."""

from __future__ import annotations

import warnings

from .. import creation
from ..backend import target
from . import functional as F
from .modules import Module, Parameter

__all__ = ["LogSigmoid", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "Softsign", "Softmin", "Tanhshrink",
           "Softshrink", "Hardshrink", "Threshold", "GLU", "CELU", "SELU", "PReLU"]


class _Plain(Module):
    """An activation without settings: ``forward`` is ``engine.nn.functional.<_fn>``."""

    _fn = ""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return getattr(F, self._fn)(input, inplace=True) if self.inplace else getattr(F, self._fn)(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LogSigmoid(_Plain):
    _fn = "logsigmoid"


class ReLU6(_Plain):
    _fn = "relu6"


class Hardsigmoid(_Plain):
    _fn = "hardsigmoid"


class Hardswish(_Plain):
    _fn = "hardswish"


class Mish(_Plain):
    _fn = "mish"


class Softsign(_Plain):
    _fn = "softsign"


class Tanhshrink(_Plain):
    _fn = "tanhshrink"


class SELU(_Plain):
    _fn = "selu"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, min_value=None,
                 max_value=None):
        super().__init__()
        for old, new in (("min_value", "min_val"), ("max_value", "max_val")):  # (PyTorch's old spellings)
            if locals()[old] is not None:
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to `{new}`", FutureWarning,
                              stacklevel=2)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Softmin(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return F.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softshrink(Module):
    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):  # noqa: A002
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, input):  # noqa: A002
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):  # noqa: A002
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class CELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):  # noqa: A002
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """A leaky ReLU whose negative slope is learned: one (``num_parameters=1``) or one per channel, starting at
    ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or num_parameters <= 0:
            raise ValueError(f"PReLU: num_parameters must be a positive integer, got {num_parameters!r}")
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(creation.full((num_parameters,), init, dtype=dtype, device=target(device)))

    def forward(self, input):  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
