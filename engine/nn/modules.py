"""``engine.nn`` modules: Module, Parameter, Linear, ReLU, Sequential, MSELoss, CrossEntropyLoss."""

from __future__ import annotations

import math
from collections import OrderedDict

from .. import creation
from ..autograd import no_grad
from ..backend import target
from ..tensor import Tensor, _wrap
from . import functional as F

__all__ = ["Parameter", "Module", "Linear", "ReLU", "Sigmoid", "Tanh", "Sequential", "MSELoss",
           "CrossEntropyLoss", "Flatten", "Identity"]


class Parameter(Tensor):
    """A Tensor that a Module registers as a trainable parameter (requires grad by default)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = creation.empty(0)
        p = Tensor.__new__(cls)
        p._data = data._data if isinstance(data, Tensor) else data
        p._rg = False
        p.grad = None
        p.grad_fn = None
        p._out_index = 0
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base of layers and models: parameters and submodules are found by attribute assignment."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is None:
            raise AttributeError("cannot assign before Module.__init__() call")
        if isinstance(value, Parameter):
            self._modules.pop(name, None)
            self.__dict__.pop(name, None)  # a plain attribute of that name would shadow the parameter
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            self._modules[name] = value
        else:
            if name in params and value is None:
                params[name] = None
                return
            params.pop(name, None)
            self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- traversal
    def named_modules(self, prefix=""):
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def children(self):
        yield from self._modules.values()

    def named_parameters(self, prefix="", recurse=True):
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_name, m in mods:
            for name, p in m._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def zero_grad(self, set_to_none: bool = True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def train(self, mode: bool = True):
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    # ---- state
    def state_dict(self):
        return OrderedDict((name, p.detach()) for name, p in self.named_parameters())

    def load_state_dict(self, state_dict, strict: bool = True):
        own = dict(self.named_parameters())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}: missing keys {missing}, "
                f"unexpected keys {unexpected}"
            )
        with no_grad():
            for name, value in state_dict.items():
                if name not in own:
                    continue
                p = own[name]
                if tuple(p.shape) != tuple(value.shape):
                    raise RuntimeError(
                        f"size mismatch for {name}: copying a param with shape {tuple(value.shape)}, "
                        f"the shape in current model is {tuple(p.shape)}"
                    )
                p.copy_(value)
        return missing, unexpected

    # ---- moving
    def _apply_to_params(self, fn):
        for p in self.parameters():
            moved = fn(_wrap(p._data))
            p._data = moved._data
            if p.grad is not None:
                p.grad = fn(p.grad)
        return self

    def to(self, *args, **kwargs):
        return self._apply_to_params(lambda t: t.to(*args, **kwargs))

    def cuda(self, device=None):
        return self._apply_to_params(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply_to_params(lambda t: t.cpu())

    def double(self):
        return self._apply_to_params(lambda t: t.double())

    def float(self):
        return self._apply_to_params(lambda t: t.float())

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- printing
    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


class Linear(Module):
    """``y = x @ weight.T + bias``; weight and bias start uniform in ±1/sqrt(in_features), as in PyTorch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        for label, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, int) or n <= 0:
                raise ValueError(f"Linear: {label} must be a positive integer, got {n!r}")
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features)
        dev = target(device)
        self.weight = Parameter(creation.rand(out_features, in_features, dtype=dtype, device=dev) * (2 * bound)
                                - bound)
        if bias:
            self.bias = Parameter(creation.rand(out_features, dtype=dtype, device=dev) * (2 * bound) - bound)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Identity(Module):
    def forward(self, x):
        return x


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                setattr(self, name, m)
        else:
            for i, m in enumerate(modules):
                setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, index):
        mods = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(*mods[index])
        return mods[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class MSELoss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            # the tutorial's old spelling: MSELoss(size_average=False) means a sum
            reduction = "sum" if size_average is False or reduce is False else "mean"
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', 'sum' or 'none')")
        self.reduction = reduction

    def forward(self, input, target):  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)

    def extra_repr(self):
        return f"reduction='{self.reduction}'" if self.reduction != "mean" else ""


class CrossEntropyLoss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(input, target, reduction=self.reduction)
