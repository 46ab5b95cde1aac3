"""``engine.nn.utils.parametrize``, as ``torch.nn.utils.parametrize``: a parameter (or buffer) of a module seen
through a function of tensors the module keeps, ``module.weight`` being ``f(original)`` each time it is read
(``register_parametrization(layer, "weight", Symmetric())``). The originals live in
``module.parametrizations.<name>.original`` (or ``original0``, ``original1``, ... where the parametrization's
``right_inverse`` returns several), which is what ``parameters()`` and ``state_dict()`` hold and an optimizer
trains; assigning ``module.weight = value`` writes ``right_inverse(value)`` into them.

As in PyTorch, the module's class is swapped for a subclass of it (``ParametrizedLinear``) that carries the
property, so that other modules of the same class are not touched; ``cached()`` computes each parametrized tensor
once inside its block (a recurrent net reading its weight at every step)."""

from __future__ import annotations

from contextlib import contextmanager

from ...autograd import no_grad
from ...tensor import Tensor
from ..modules import Module, ModuleDict, ModuleList, Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "transfer_parametrizations_and_params", "ParametrizationList"]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Inside this block each parametrized tensor is computed once, on its first read, and that value is read
    again after (the gradient still reaches the originals); the values are dropped at the end of the block."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_values(dest: Tensor, value: Tensor) -> None:
    """``dest`` given ``value``'s values (its shape too, as PyTorch's ``set_``), the tensor object kept (an optimizer
    holds it)."""
    if tuple(dest.shape) == tuple(value.shape):
        dest.copy_(value)
    else:
        dest.data = value.detach().clone()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor of a module, applied in order to its original(s)."""

    def __init__(self, modules, original, unsafe: bool = False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, tuple, list)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set_values(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(originali).__name__}.")
                originali = originali.detach().clone()
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)

    def right_inverse(self, value: Tensor) -> None:
        """``module.<name> = value``: the parametrizations' ``right_inverse`` in reverse order, the result written
        into the original(s)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set_values(self.original, value)
            else:
                if not isinstance(value, (tuple, list)):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                     f"{self.ntensors}. Got a sequence of length {len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError(f"`right_inverse` must return a sequence of tensors. Got element {i} of "
                                         f"type {type(tensor).__name__}")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                         f"`original{i}` has dtype {original_i.dtype}")
                    _set_values(original_i, tensor)

    def forward(self):
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in mods[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """``module``'s class swapped for a subclass of it (``Parametrized<Name>``) that will carry the properties."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        import copy

        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                           "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                           "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    attrs = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        attrs["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attrs)


def _inject_property(module: Module, tensor_name: str) -> None:
    """The property ``tensor_name`` on the module's (parametrized) class: read, the parametrizations applied to the
    originals; assigned, their ``right_inverse`` written into them."""

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            tensor = _cache.get(key)
            if tensor is None:
                tensor = parametrization()
                _cache[key] = tensor
            return tensor
        return parametrization()

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization swapped it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def _check(module, tensor_name, Y, X, parametrization, what):  # noqa: N803 - PyTorch's names
    if not isinstance(Y, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(Y).__name__}.")
    if Y.dtype != X.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.dtype: {X.dtype}\n{what}.dtype: {Y.dtype}")
    if tuple(Y.shape) != tuple(X.shape):
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.shape: {tuple(X.shape)}\n{what}.shape: "
                         f"{tuple(Y.shape)}")
    if hasattr(parametrization, "right_inverse"):
        try:
            with no_grad():
                Z = parametrization.right_inverse(X)  # noqa: N806
        except NotImplementedError:
            return
        if not isinstance(Z, Tensor):
            raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(Z).__name__}")
        if Z.dtype != Y.dtype:
            raise ValueError("The tensor returned by parametrization.right_inverse must have the same dtype as "
                             f"module.{tensor_name}, unless the `unsafe` flag is enabled.\nmodule.{tensor_name}.dtype:"
                             f" {Y.dtype}\nreturned dtype: {Z.dtype}")
        if tuple(Z.shape) != tuple(Y.shape):
            raise ValueError("The tensor returned by parametrization.right_inverse must have the same shape as "
                             f"module.{tensor_name}, unless the `unsafe` flag is enabled.\nmodule.{tensor_name}.shape:"
                             f" {tuple(Y.shape)}\nreturned shape: {tuple(Z.shape)}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """``module.<tensor_name>`` read through ``parametrization`` from now on: the tensor (a parameter or a buffer)
    becomes its ``original`` (after ``parametrization.right_inverse``, where it has one), and reading it gives
    ``parametrization(original)``. A second registration on the same name applies after the first. Unless
    ``unsafe``, the parametrization must keep the tensor's shape and dtype, as PyTorch checks."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"parametrization must be an nn.Module, got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)  # noqa: N806
            X = parametrization(Y)  # noqa: N806
            _check(module, tensor_name, X, Y, parametrization, "parametrization(module.weight)")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"Module '{type(module).__name__}' has no tensor under '{tensor_name}' (it is None)")
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
        if not unsafe:
            _check(module, tensor_name, getattr(module, tensor_name), original, parametrization,
                   "parametrization(module.weight)")
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name "
                         f"'{tensor_name}'")
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """The parametrizations on ``tensor_name`` taken away: the tensor is a plain parameter (or buffer) again, of
    its parametrized value (``leave_parametrized``) or of its original; the module gets its own class back when
    none is left."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _set_values(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def transfer_parametrizations_and_params(from_module: Module, to_module: Module, tensor_name: str | None = None):
    """The parametrizations of ``from_module`` (on ``tensor_name``, or all) registered on ``to_module`` too, with
    the same originals' values."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach().clone()))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization, unsafe=source.unsafe)
        with no_grad():
            target = to_module.parametrizations[name]
            if source.is_tensor:
                _set_values(target.original, source.original)
            else:
                for i in range(source.ntensors):
                    _set_values(getattr(target, f"original{i}"), getattr(source, f"original{i}"))
    return to_module
