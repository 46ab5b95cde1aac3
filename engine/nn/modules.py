"""``engine.nn`` modules: Module, Parameter, Linear, ReLU, Sequential, ModuleList, Dropout, the losses."""

from __future__ import annotations

import functools
import math
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from .. import creation
from ..autograd import Function, is_grad_enabled, no_grad
from ..backend import target, to_host
from ..tensor import Size, Tensor, _rebuild, _wrap
from . import functional as F

__all__ = ["Parameter", "Module", "Linear", "ReLU", "Sigmoid", "Tanh", "Sequential", "MSELoss",
           "CrossEntropyLoss", "Flatten", "Identity", "ModuleList", "Softmax", "LogSoftmax", "Dropout", "L1Loss",
           "LeakyReLU", "LayerNorm", "BatchNorm1d", "BCELoss", "BCEWithLogitsLoss", "NLLLoss", "SiLU", "ELU",
           "Softplus", "Unflatten", "Conv1d", "Conv2d", "Conv3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "BatchNorm2d",
           "Embedding", "ModuleDict", "GELU", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


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

    def __reduce__(self):
        return (_rebuild_parameter, (to_host(self._data), str(self.device), self._rg))

    def __deepcopy__(self, memo):
        p = Parameter(_wrap(self._data.copy()), self._rg)
        memo[id(self)] = p
        return p


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and instance.__dict__.get("_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """``self.x = nn.Buffer(tensor)`` in a Module registers ``x`` as a buffer (``persistent``: in its
    ``state_dict``), as PyTorch's: a tensor the module keeps and moves but does not train. Made, it is the tensor
    (detached), marked."""

    def __new__(cls, data=None, *, persistent: bool = True):
        if data is None:
            data = creation.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t._is_buffer, t.persistent = True, persistent
        return t


def _rebuild_parameter(host, dev, requires_grad):
    """A Parameter again, from what ``Parameter.__reduce__`` kept (pickle, ``engine.save``, ``copy.deepcopy``)."""
    return Parameter(_rebuild(host, dev, False), requires_grad)


class _HookIdentity(Function):
    """The identity on a module's input or output tensors, whose backward hands their gradients to the module's
    backward hooks (:class:`_BackwardHooks`), as PyTorch's ``BackwardHookFunction``."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        return tensors if len(tensors) > 1 else tensors[0]

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.on_grads(grads))


class _BackwardHooks:
    """One call of a module with backward hooks: its positional tensor inputs that require grad pass through one
    identity node, its output tensors through another; the output's node runs the pre-hooks on the gradients that
    arrive there, the input's node runs the full hooks on the gradients it passes on."""

    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_args = 0
        self.positions = []

    def wrap_inputs(self, args):
        self.n_args = len(args)
        self.positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        # (a tensor input that needs no gradient gets zeros in grad_input, where some other input needs one: the
        # gradient PyTorch's hook node materialises for its non-differentiable outputs)
        self.zeros = {i: a for i, a in enumerate(args) if isinstance(a, Tensor) and not a.requires_grad}
        if not self.positions:
            return args
        wrapped = _HookIdentity.apply(self._on_input_grads, *(args[i] for i in self.positions))
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        args = list(args)
        for i, t in zip(self.positions, wrapped):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        items = (out,) if single else out if isinstance(out, (tuple, list)) else None
        if items is None:
            return out
        places = [i for i, t in enumerate(items) if isinstance(t, Tensor) and t.requires_grad]
        if not places:
            return out
        wrapped = _HookIdentity.apply(self._on_output_grads, *(items[i] for i in places))
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        items = list(items)
        for i, t in zip(places, wrapped):
            items[i] = t
        return items[0] if single else type(out)(items)

    def _on_output_grads(self, grads):
        module = self.module
        grads = tuple(grads)
        for hook in list((module.__dict__.get("_backward_pre_hooks") or {}).values()):
            result = hook(module, grads)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grads):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(result)}, but expected {len(grads)}")
                grads = result
        self.grad_outputs = grads
        full = list((module.__dict__.get("_backward_hooks") or {}).values())
        if not self.positions and full:  # no input needs a gradient: the full hooks are called now, with None
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            for hook in full:
                if hook(module, (None,) * self.n_args, grads) is not None:
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
        return grads

    def _on_input_grads(self, grads):
        module = self.module
        grad_input = [None] * self.n_args
        for i, g in zip(self.positions, grads):
            grad_input[i] = g
        for i, a in self.zeros.items():
            grad_input[i] = a.new_zeros(*a.shape)
        for hook in list((module.__dict__.get("_backward_hooks") or {}).values()):
            result = hook(module, tuple(grad_input), self.grad_outputs)
            if result is not None:
                result = list(result) if isinstance(result, (tuple, list)) else [result]
                if len(result) != self.n_args:
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, "
                                       f"but expected {self.n_args}")
                grad_input = result
        return tuple(grad_input[i] for i in self.positions)


def _non_full_hook(hook, module, grad_input, grad_output):
    return hook(module, grad_input, grad_output)


_NON_FULL = "is deprecated and will be removed in future versions. This hook will be missing some"
_USE_FULL = "Please use register_full_backward_hook to get the documented behavior."


def _warn_non_full_backward_hook(inputs, result, node):
    """PyTorch's FutureWarnings where a non-full backward hook's gradients are not the module's."""
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            warnings.warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple "
                          f"of Tensors {_NON_FULL} of the grad_output. {_USE_FULL}", FutureWarning, stacklevel=4)
            return
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            warnings.warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                          f"tuple of Tensors {_NON_FULL} of the grad_input. {_USE_FULL}", FutureWarning, stacklevel=4)
            return
    else:
        inputs = (inputs,)
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(out_nodes) == 0 or (len(out_nodes) == 1 and node not in out_nodes):
        warnings.warn(f"Using a non-full backward hook when outputs are nested in python data structure {_NON_FULL} "
                      "grad_output.", FutureWarning, stacklevel=4)
    elif len(out_nodes) > 1:
        warnings.warn(f"Using a non-full backward hook when outputs are generated by different autograd Nodes "
                      f"{_NON_FULL} grad_output. {_USE_FULL}", FutureWarning, stacklevel=4)
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in node.next_functions}:
        warnings.warn(f"Using a non-full backward hook when the forward contains multiple autograd Nodes {_NON_FULL} "
                      f"grad_input. {_USE_FULL}", FutureWarning, stacklevel=4)


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find, and those it did not expect."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def _type_name(value) -> str:
    """How PyTorch names what was given in its refusals: a tensor's legacy type ('torch.FloatTensor'), else the
    class's name."""
    return value.type() if isinstance(value, Tensor) else type(value).__name__


class Module:
    """Base of layers and models: parameters and submodules are found by attribute assignment."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)
        for table in ("_forward_pre_hooks", "_forward_hooks"):  # hook id -> hook, in calling order
            object.__setattr__(self, table, OrderedDict())
        for table in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs", "_forward_hooks_always_called"):
            object.__setattr__(self, table, OrderedDict())  # the ids of the hooks registered so (weakly held)

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is None:
            raise AttributeError("cannot assign before Module.__init__() call")
        buffers = self.__dict__.get("_buffers", {})
        if name in buffers and (value is None or (isinstance(value, Tensor) and not isinstance(value, Parameter))):
            buffers[name] = value  # a buffer's new value (running statistics)
            if isinstance(value, Buffer):
                self.register_buffer(name, value, value.persistent)
            return
        if isinstance(value, Buffer):  # (nn.Buffer: registered, as PyTorch's)
            self.__dict__.pop(name, None)
            params.pop(name, None)
            self._modules.pop(name, None)
            self.register_buffer(name, value, value.persistent)
            return
        if isinstance(value, Parameter):
            self._modules.pop(name, None)
            self.__dict__.pop(name, None)  # a plain attribute of that name would shadow the parameter
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            self._modules[name] = value
        else:  # (a parameter's or a child's name takes only its kind or None, as PyTorch: a plain tensor set as
            if name in params:  # a weight would leave the optimizer's parameter untouched by training)
                if value is not None:
                    raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' (torch.nn.Parameter "
                                    "or None expected)")
                params[name] = None
                return
            if name in self._modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' (torch.nn.Module "
                                    "or None expected)")
                self._modules[name] = None
                return
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        """``del module.weight``: a parameter, buffer or submodule taken out of the module's tables (a plain
        attribute as any object's)."""
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if name in d.get(table, ()):
                del d[table][name]
                if table == "_buffers":
                    d["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """``param`` (a Parameter, or None) registered as ``name``, checked as PyTorch checks it."""
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' (torch.nn.Parameter or "
                            "None required)")
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """``module`` registered as the child ``name`` (``self.name = module`` by a name made at run time)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__module__}.{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str):
        """The module at the dotted path ``target`` (``"encoder.layers.0"``); ``""`` is this one."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module, strict: bool = False) -> None:
        """The module at the dotted path ``target`` replaced by ``module`` (with ``strict``, only one that
        exists)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        *path, name = target.split(".")
        parent = self.get_submodule(".".join(path))
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str):
        """The parameter at the dotted path ``target`` (``"encoder.layers.0.weight"``)."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str):
        """The buffer at the dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """A tensor the module keeps that is not trained (BatchNorm's running statistics): moved with the module
        by ``to()``/``cuda()``, and, when ``persistent``, part of its ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"buffer name must be a non-empty string without '.', got {name!r}")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (torch Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if d.get("_forward_pre_hooks") or d.get("_forward_hooks") or d.get("_backward_hooks") \
                or d.get("_backward_pre_hooks") or d.get("_non_full_backward_hooks"):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    # ---- backward hooks: the gradients at a module's outputs and inputs, as PyTorch's full backward hooks
    def register_full_backward_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_input, grad_output)`` once the gradients with respect to the module's positional
        tensor inputs are computed (``grad_input`` holds None for an input that needs none; all None when no input
        requires grad, called as the output's gradient arrives); what it returns, when not None, replaces
        ``grad_input``. A handle whose ``remove()`` takes it away."""
        if self.__dict__.get("_is_full_backward_hook") is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", True)
        return self._add_hook(self._table("_backward_hooks"), hook, prepend, None)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated backward hook: ``hook(module, grad_input, grad_output)`` on the node that made the
        module's output (its first tensor), at each forward: ``grad_input`` are that one node's input gradients,
        not the module's (PyTorch's own caveat, and its FutureWarnings where they differ). Prefer
        :meth:`register_full_backward_hook`."""
        if self.__dict__.get("_is_full_backward_hook") is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", False)
        return self._add_hook(self._table("_non_full_backward_hooks"), hook, False, None)

    def _hook_output_node(self, args, out):
        """The non-full backward hooks on the node that made the output's first tensor (PyTorch's choice)."""
        var = out
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
        node = var.grad_fn
        if node is None:
            return
        for hook in list(self._non_full_backward_hooks.values()):
            node.register_hook(functools.partial(_non_full_hook, hook, self))
        _warn_non_full_backward_hook(args, out, node)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_output)`` as the gradients of the module's outputs arrive, before the module's own
        backward; what it returns, when not None, replaces ``grad_output``."""
        return self._add_hook(self._table("_backward_pre_hooks"), hook, prepend, None)

    def _table(self, name):
        table = self.__dict__.get(name)
        if table is None:
            table = OrderedDict()
            object.__setattr__(self, name, table)
        return table

    # ---- hooks: PyTorch's forward hooks (a look at a layer's input and output, as an activation plot takes them)
    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """``hook(module, args)`` (``hook(module, args, kwargs)`` with ``with_kwargs``) before each forward; what
        it returns, when not None, replaces the arguments. A handle whose ``remove()`` takes it away."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              self._forward_pre_hooks_with_kwargs if with_kwargs else None)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with ``with_kwargs``) after each
        forward; what it returns, when not None, replaces the output. With ``always_call`` it is called (with
        output None) when the forward raises too. A handle whose ``remove()`` takes it away."""
        extra = [d for d, on in ((self._forward_hooks_with_kwargs, with_kwargs),
                                 (self._forward_hooks_always_called, always_call)) if on]
        return self._add_hook(self._forward_hooks, hook, prepend, extra)

    def _add_hook(self, table, hook, prepend, marks):
        from ..utils.hooks import RemovableHandle

        if not callable(hook):
            raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
        marks = [] if marks is None else [marks] if isinstance(marks, dict) else marks
        handle = RemovableHandle(table, extra_dict=marks)
        table[handle.id] = hook
        for mark in marks:
            mark[handle.id] = True
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def _call_with_hooks(self, args, kwargs):
        d = self.__dict__
        backward = None
        if (d.get("_backward_hooks") or d.get("_backward_pre_hooks")) and is_grad_enabled():
            backward = _BackwardHooks(self)
            args = backward.wrap_inputs(args)
        out = self._call_forward_hooked(args, kwargs)
        if d.get("_non_full_backward_hooks"):
            self._hook_output_node(args, out)
        return backward.wrap_outputs(out) if backward is not None else out

    def _call_forward_hooked(self, args, kwargs):
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        called = set()
        try:
            out = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                called.add(hook_id)
                result = (hook(self, args, kwargs, out) if hook_id in self._forward_hooks_with_kwargs
                          else hook(self, args, out))
                if result is not None:
                    out = result
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):  # PyTorch's: each always_call hook once
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        (hook(self, args, kwargs, None) if hook_id in self._forward_hooks_with_kwargs
                         else hook(self, args, None))
                    except Exception as exc:  # the forward's own error is the one raised
                        warnings.warn(f"forward hook with ``always_call=True`` raised an exception that was silenced "
                                      f"as another error was raised in forward: {exc}", stacklevel=3)
            raise
        return out

    # ---- traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """This module and those under it, with their dotted names; a module held twice (one Linear in two places
        of a Sequential) once, unless ``remove_duplicate=False``, as PyTorch's."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def children(self):
        yield from self._modules.values()

    def named_parameters(self, prefix="", recurse=True):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_name, m in mods:
            for name, p in m._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True):
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_name, m in mods:
            for name, b in m._buffers.items():
                if b is not None:
                    yield (f"{mod_name}.{name}" if mod_name else name), b

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        yield from self._modules.items()

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
    def _state(self) -> OrderedDict:
        """Parameters and persistent buffers by name, module by module (its parameters, then its buffers), as
        PyTorch orders a state_dict."""
        out = OrderedDict()
        # every name a parameter is held under: a module held twice, or a weight tied to another (a GPT's head and
        # its embedding), is saved under each of its names, as PyTorch saves it
        for mod_name, m in self.named_modules(remove_duplicate=False):
            prefix = f"{mod_name}." if mod_name else ""
            for name, p in m._parameters.items():
                if p is not None:
                    out[prefix + name] = p
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    out[prefix + name] = b
        return out

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters and persistent buffers by dotted name (detached unless ``keep_vars``), each module's
        ``get_extra_state()`` under ``<prefix>_extra_state`` where it defines one, its state-dict hooks run around
        its part (``register_state_dict_pre_hook``/``post_hook``), as PyTorch's."""
        if args:  # (PyTorch's older positional form: destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()):
            if hook(self, destination, prefix, {}) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def get_extra_state(self):
        """A module's state beyond its tensors, for ``state_dict`` (override it, with :meth:`set_extra_state`)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before the module's part of a ``state_dict`` is made."""
        return self._add_hook(self._table("_state_dict_pre_hooks"), hook, False, None)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after; it may change the dict in place."""
        return self._add_hook(self._table("_state_dict_hooks"), hook, False, None)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        before :meth:`load_state_dict` copies the module's part (it may rename the entries: an old checkpoint's
        names)."""
        return self._add_hook(self._table("_load_state_dict_pre_hooks"), hook, False, None)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return self.register_load_state_dict_pre_hook(lambda module, *args: hook(*args))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after :meth:`load_state_dict`: it may change the lists of missing
        and unexpected keys (in place) that strict loading then refuses."""
        return self._add_hook(self._table("_load_state_dict_post_hooks"), hook, False, None)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copies each entry into the parameter or buffer of its name, as PyTorch's: an entry of another shape is
        an error whatever ``strict`` says (and is not copied); with ``strict``, so are missing and unexpected
        names. The errors are raised together, in PyTorch's words, after the entries that fit were copied.
        ``assign``: the entries become the parameters and buffers (parameters kept as such, their
        ``requires_grad`` kept), not copied into them. The load hooks run as PyTorch's."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict = OrderedDict(state_dict)
        missing, unexpected, errors = [], [], []
        for mod_name, m in self.named_modules(remove_duplicate=False):
            prefix = f"{mod_name}." if mod_name else ""
            for hook in list(m.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
                hook(m, state_dict, prefix, {}, strict, missing, unexpected, errors)
        own = self._state()
        extras = {f"{name}._extra_state" if name else "_extra_state": m
                  for name, m in self.named_modules(remove_duplicate=False)
                  if type(m).get_extra_state is not Module.get_extra_state}
        missing += [k for k in list(own) + list(extras) if k not in state_dict]
        unexpected += [k for k in state_dict if k not in own and k not in extras]
        with no_grad():
            for name, value in state_dict.items():
                if name in extras:
                    extras[name].set_extra_state(value)
                    continue
                if name not in own:
                    continue
                p = own[name]
                if tuple(p.shape) != tuple(value.shape):
                    errors.append(f"size mismatch for {name}: copying a param with shape {Size(value.shape)!r} from "
                                  f"checkpoint, the shape in current model is {Size(p.shape)!r}.")
                    continue
                if assign:
                    owner, _, leaf = name.rpartition(".")
                    mod = self.get_submodule(owner)
                    if leaf in mod._parameters:
                        mod._parameters[leaf] = value if isinstance(value, Parameter) else Parameter(
                            value.detach(), p.requires_grad)
                    else:
                        mod._buffers[leaf] = value
                else:
                    p.copy_(value)
        keys = IncompatibleKeys(missing, unexpected)
        for _, m in self.named_modules():
            for hook in list(m.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                if hook(m, keys) is not None:
                    raise RuntimeError("load_state_dict post-hook must return None")
        if strict:
            for label, keys in (("Unexpected", unexpected), ("Missing", missing)):
                if keys:
                    quoted = ", ".join('"' + k + '"' for k in keys)
                    errors.insert(0, f"{label} key(s) in state_dict: {quoted}. ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        return IncompatibleKeys(missing, unexpected)

    # ---- moving
    def _apply_to_params(self, fn):
        for p in self.parameters():
            moved = fn(_wrap(p._data))
            p._data = moved._data
            if p.grad is not None:
                p.grad = fn(p.grad)
        for m in self.modules():
            for name, b in m._buffers.items():
                if b is not None:
                    moved = fn(b)
                    if not b.is_floating_point() and moved.dtype != b.dtype:
                        moved = moved.to(b.dtype)  # a cast is for floating tensors (a count stays an integer)
                    m._buffers[name] = moved
        return self

    def to(self, *args, **kwargs):
        """Parameters and buffers moved and cast as ``Tensor.to`` does; ``memory_format=`` lays out those of 4 or 5
        dimensions (a convolution's weights: ``channels_last``), the others as they are, as PyTorch's."""
        fmt = kwargs.pop("memory_format", None)
        if fmt is None:
            return self._apply_to_params(lambda t: t.to(*args, **kwargs))
        return self._apply_to_params(lambda t: t.to(*args, **kwargs, memory_format=fmt) if t.dim() in (4, 5)
                                     else t.to(*args, **kwargs))

    def to_empty(self, *, device, recurse: bool = True):
        """Parameters and buffers moved to ``device`` as uninitialised memory of their shapes and dtypes (PyTorch's,
        for a model built on the meta device or to be loaded from a checkpoint); ``recurse=False``: this module's
        own only."""
        def empty(t):
            return creation.empty_like(t, device=device)

        if recurse:
            return self._apply_to_params(empty)
        for p in self._parameters.values():
            if p is not None:
                p._data = empty(_wrap(p._data))._data
                p.grad = None
        for name, b in self._buffers.items():
            if b is not None:
                self._buffers[name] = empty(b)
        return self

    def cuda(self, device=None):
        return self._apply_to_params(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply_to_params(lambda t: t.cpu())

    def double(self):
        return self._apply_to_params(lambda t: t.double())

    def float(self):
        return self._apply_to_params(lambda t: t.float())

    def half(self):
        """The floating-point parameters and buffers cast to float16 (the others kept)."""
        return self._apply_to_params(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply_to_params(lambda t: t.bfloat16())

    def type(self, dst_type):
        """Every parameter and buffer cast to ``dst_type`` (a dtype)."""
        return self._apply_to_params(lambda t: t.type(dst_type))

    def share_memory(self):
        """PyTorch moves the tensors to shared memory for worker processes; the engine's workers are threads,
        which share it already: the module as it is."""
        return self

    def compile(self, *args, **kwargs) -> None:
        """``torch.compile`` of the module's forward: the engine has no compiler (as ``engine.compile``, which hands
        back what it was given), so the module runs as before."""

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- printing
    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        """As PyTorch prints a module: a one-line ``extra_repr`` inside the parentheses when there are no
        children, else each of its lines and each child (indented) on lines of their own."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        head = f"{type(self).__name__}("
        if not lines:
            return head + ")"
        if len(extra_lines) == 1 and not child_lines:
            return head + extra_lines[0] + ")"
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

    def reset_parameters(self) -> None:
        """The weight and bias drawn again, uniform in ±1/sqrt(in_features), in place."""
        _uniform_again(self, 1.0 / math.sqrt(self.in_features))

    def forward(self, input):  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, input):  # noqa: A002
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):  # noqa: A002
        return F.tanh(input)


class Identity(Module):
    """Its input, unchanged; it takes any arguments and ignores them, as PyTorch's (a placeholder for a layer)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size`` (Flatten's inverse)."""

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):  # noqa: A002
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of ``embedding_dim``, looked up by integer indices (a word's or a
    character's id); the weights start normal(0, 1), the ``padding_idx`` row at zero, as PyTorch's."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None):
        super().__init__()
        for label, n in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if isinstance(n, bool) or not isinstance(n, int):
                raise TypeError(f"Embedding: {label} must be an integer, got {n!r}")
        if num_embeddings < 0 or embedding_dim < 0:  # (an empty table is PyTorch's too)
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(num_embeddings, embedding_dim)}: [{num_embeddings}, {embedding_dim}]")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        if sparse:
            raise ValueError("Embedding: sparse=True (sparse gradients) is PyTorch's but not the engine's")
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = max_norm, norm_type, \
            scale_grad_by_freq, sparse
        if _weight is None:
            weight = creation.randn(num_embeddings, embedding_dim, dtype=dtype, device=target(device))
            if padding_idx is not None:
                weight[padding_idx] = 0
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError("Shape of weight does not match num_embeddings and embedding_dim")
            weight = _weight.detach()
        self.weight = Parameter(weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """The table drawn again from normal(0, 1), in place, the ``padding_idx`` row at zero."""
        with no_grad():
            self.weight.normal_()
            if self.padding_idx is not None:
                self.weight[self.padding_idx].zero_()

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose table is ``embeddings`` (2-D), not trained unless ``freeze=False``."""
        if embeddings.dim() != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)

    def forward(self, input):  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return s


class _ConvNd(Module):
    """Conv1d/2d/3d: ``out_channels`` filters of ``in_channels / groups`` channels each, slid over the input;
    weight and bias start uniform in ±1/sqrt(fan_in) (fan_in = in_channels / groups x the kernel's size), as
    PyTorch's."""

    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        for label, n in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups)):
            if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
                raise ValueError(f"{name}: {label} must be a positive integer, got {n!r}")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        kernel = self._sizes(kernel_size, "kernel_size")
        if any(k <= 0 for k in kernel):
            raise ValueError(f"{name}: kernel_size must be positive integers, got {kernel_size!r}")
        stride, dilation = self._sizes(stride, "stride"), self._sizes(dilation, "dilation")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(st != 1 for st in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = self._sizes(padding, "padding")
        modes = ("zeros", "reflect", "replicate", "circular")
        if padding_mode not in modes:
            raise ValueError(f"padding_mode must be one of {set(modes)}, but got padding_mode={padding_mode!r}")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.padding_mode = padding_mode
        # F.pad's order (the last dimension first, each side), for a padding_mode other than zeros, as PyTorch's
        if padding == "same":
            totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
            sides = [(t // 2, t - t // 2) for t in totals]
        elif padding == "valid":
            sides = [(0, 0)] * self._nd
        else:
            sides = [(p, p) for p in padding]
        self._reversed_padding_repeated_twice = tuple(n for pair in reversed(sides) for n in pair)
        bound = 1.0 / math.sqrt(in_channels // groups * math.prod(kernel))
        dev = target(device)
        shape = (out_channels, in_channels // groups) + kernel
        self.weight = Parameter(creation.rand(*shape, dtype=dtype, device=dev) * (2 * bound) - bound)
        if bias:
            self.bias = Parameter(creation.rand(out_channels, dtype=dtype, device=dev) * (2 * bound) - bound)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """The weight and bias drawn again, uniform in ±1/sqrt(fan_in) (the weight's second dimension times the
        kernel's size, for the transposed convolutions too, as PyTorch's), in place."""
        _uniform_again(self, 1.0 / math.sqrt(self.weight.shape[1] * math.prod(self.kernel_size)))

    def _sizes(self, value, label):
        if isinstance(value, int) and not isinstance(value, bool):
            return (value,) * self._nd
        if (isinstance(value, (tuple, list)) and len(value) == self._nd
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            return tuple(value)
        raise ValueError(f"{type(self).__name__}: {label} must be an integer or {self._nd} integers, got {value!r}")

    def forward(self, input):  # noqa: A002
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":  # the input padded first (reflected, repeated or wrapped), as PyTorch's
            return conv(F.pad(input, self._reversed_padding_repeated_twice, self.padding_mode), self.weight,
                        self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if getattr(self, "output_padding", (0,) * self._nd) != (0,) * self._nd:  # the transposed layers'
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    _nd = 1


class Conv2d(_ConvNd):
    _nd = 2


class Conv3d(_ConvNd):
    _nd = 3


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d/2d/3d: the convolution run backwards, as a generator grows an image; weight
    ``(in_channels, out_channels / groups, *kernel)``, initialised as PyTorch's (uniform in ±1/sqrt(fan_in), its
    fan_in out_channels / groups x the kernel's size). ``forward(input, output_size)`` picks the output_padding
    that gives that size."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be integers, not {padding!r}")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self.output_padding = self._sizes(output_padding, "output_padding")
        bound = 1.0 / math.sqrt(out_channels // groups * math.prod(self.kernel_size))
        shape = (in_channels, out_channels // groups) + self.kernel_size
        dev = target(device)
        self.weight = Parameter(creation.rand(*shape, dtype=dtype, device=dev) * (2 * bound) - bound)
        if bias:
            self.bias = Parameter(creation.rand(out_channels, dtype=dtype, device=dev) * (2 * bound) - bound)

    def _output_padding(self, input, output_size):  # noqa: A002
        if output_size is None:
            return self.output_padding
        nd = self._nd
        size = list(output_size)[-nd:]
        if len(size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                             f"{nd + 2} elements (got {len(list(output_size))})")
        extra = []
        for i in range(nd):
            smallest = ((input.shape[input.dim() - nd + i] - 1) * self.stride[i] - 2 * self.padding[i]
                        + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            largest = smallest + self.stride[i] - 1
            if not smallest <= size[i] <= largest:
                raise ValueError(f"requested an output size of {size}, but valid sizes range from "
                                 f"{smallest} to {largest} (for an input of {list(input.shape[2:])})")
            extra.append(size[i] - smallest)
        return tuple(extra)

    def forward(self, input, output_size=None):  # noqa: A002
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                    self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3


class _MaxPoolNd(Module):
    """MaxPool1d/2d/3d: the maximum of each window; ``stride`` defaults to ``kernel_size``."""

    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):  # noqa: A002
        pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self._nd - 1]
        return pool(input, self.kernel_size, self.stride, self.padding, self.dilation, ceil_mode=self.ceil_mode,
                    return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _nd = 1


class MaxPool2d(_MaxPoolNd):
    _nd = 2


class MaxPool3d(_MaxPoolNd):
    _nd = 3


class _AvgPoolNd(Module):
    """AvgPool1d/2d/3d: the mean of each window; ``stride`` defaults to ``kernel_size``."""

    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None):
        super().__init__()
        if self._nd == 1:  # PyTorch's AvgPool1d keeps its sizes as 1-tuples (and has no divisor_override)
            def one(v):
                return tuple(v) if isinstance(v, (tuple, list)) else (v,)
            kernel_size, stride, padding = one(kernel_size), one(stride if stride is not None else kernel_size), \
                one(padding)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):  # noqa: A002
        if self._nd == 1:
            return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                self.count_include_pad)
        pool = (F.avg_pool2d, F.avg_pool3d)[self._nd - 2]
        return pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                    self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd):
    _nd = 2


class AvgPool3d(_AvgPoolNd):
    _nd = 3


class _LPPoolNd(Module):
    """LPPool1d/2d: the ``norm_type``-norm of each window (``nn.functional.lp_pool1d``/``lp_pool2d``)."""

    _nd = 0

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):  # noqa: A002
        pool = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._nd - 1]
        return pool(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    _nd = 1


class LPPool2d(_LPPoolNd):
    _nd = 2


class LPPool3d(_LPPoolNd):
    _nd = 3


class _AdaptiveAvgPoolNd(Module):
    """AdaptiveAvgPool1d/2d/3d: the mean of windows spread evenly so that the output has ``output_size``."""

    _nd = 0

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._nd - 1]
        return pool(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _nd = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _nd = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _nd = 3


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                setattr(self, name, m)
        else:
            for i, m in enumerate(modules):
                setattr(self, str(i), m)

    def forward(self, input):  # noqa: A002
        for m in self._modules.values():
            input = m(input)  # noqa: A001
        return input

    def __getitem__(self, index):
        mods = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(*mods[index])
        if not -len(mods) <= index < len(mods):
            raise IndexError(f"index {index} is out of range")
        return mods[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class _Loss(Module):
    """A loss module: its ``reduction`` ('mean', 'sum' or 'none', or what PyTorch's old ``size_average`` and
    ``reduce`` flags stand for) checked when it is made."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        reduction = F.legacy_reduction(size_average, reduce, reduction)
        F.check_reduction(reduction)
        self.reduction = reduction


class MSELoss(_Loss):
    # (the tutorial's old spelling: MSELoss(size_average=False) means a sum)
    def forward(self, input, target):  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)

class _WeightedLoss(_Loss):
    """A loss with a class weight, kept as the buffer ``weight`` (saved with the model, moved with it)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class ModuleList(Module):
    """Modules in a list, registered as ``0``, ``1``, ...: their parameters are the list's (a model that keeps its
    layers in a Python list would hide them from ``parameters()``). It has no forward: a model iterates it."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _checked(self, module):
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList holds Modules, not {type(module).__name__}")
        return module

    def _index(self, index: int) -> int:
        n = len(self._modules)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range")
        return index % n

    def __getitem__(self, index):
        mods = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(mods[index])
        return mods[self._index(index)]

    def __setitem__(self, index, module):
        setattr(self, str(self._index(index)), self._checked(module))

    def __delitem__(self, index):
        mods = list(self._modules.values())
        del mods[index if isinstance(index, slice) else self._index(index)]
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        setattr(self, str(len(self._modules)), self._checked(module))
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, self._checked(module))
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __repr__(self):
        """As PyTorch prints one: a run of equal modules as one line, ``(0-1): 2 x Linear(...)``."""
        mods = [repr(m).replace("\n", "\n  ") for m in self._modules.values()]
        if not mods:
            return "ModuleList()"
        lines, start = [], 0
        for i in range(1, len(mods) + 1):
            if i == len(mods) or mods[i] != mods[start]:
                count = i - start
                lines.append(f"({start}): {mods[start]}" if count == 1 else
                             f"({start}-{i - 1}): {count} x {mods[start]}")
                start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Modules by name, in the order they were put in, registered under their names (a GPT's ``transformer``:
    ``nn.ModuleDict(dict(wte=..., h=nn.ModuleList(...)))``). It has no forward: a model looks its modules up."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str):
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict keys are names (str), not {type(key).__name__}")
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict holds Modules, not {type(module).__name__}")
        setattr(self, key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key: str):
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules) -> None:
        """From a mapping, or pairs of (name, module), in their order."""
        pairs = modules.items() if hasattr(modules, "items") else modules
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


class _AlongDim(Module):
    """Softmax and LogSoftmax: ``_fn`` along ``dim`` (PyTorch's legacy choice, with its warning, when none)."""

    _fn = None  # the function in engine.nn.functional, by name

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        dim = self.dim if self.dim is not None else F.implicit_dim(self._fn, input.ndim)
        return getattr(F, self._fn)(input, dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    _fn = "softmax"


class LogSoftmax(_AlongDim):
    _fn = "log_softmax"


class Dropout(Module):
    """In training, each element zeroed with probability ``p`` and the rest scaled by ``1 / (1 - p)``; in eval mode
    (``model.eval()``) the identity."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        F.check_dropout_probability(p)
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class L1Loss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class LayerNorm(Module):
    """Normalises each sample over its last dimensions (``normalized_shape``), with a learned scale and shift."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.has_bias = elementwise_affine and bias
        dev = target(device)
        self.weight = Parameter(creation.ones(shape, dtype=dtype, device=dev)) if elementwise_affine else None
        self.bias = Parameter(creation.zeros(shape, dtype=dtype, device=dev)) if elementwise_affine and bias else None

    def reset_parameters(self) -> None:
        _ones_and_zeros(self)

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.has_bias}")


def _uniform_again(module, bound: float) -> None:
    """``module``'s weight and bias (where it has one) drawn again, uniform in ±``bound``, in place (PyTorch's
    ``reset_parameters`` of Linear and the convolutions: its kaiming_uniform_ with a=sqrt(5) is this bound)."""
    with no_grad():
        module.weight.uniform_(-bound, bound)
        if module.bias is not None:
            module.bias.uniform_(-bound, bound)


class _ResetNorm:
    """``reset_running_stats`` and ``reset_parameters`` of BatchNorm and InstanceNorm, as PyTorch's ``_NormBase``:
    the running averages back to mean 0, variance 1 and no batch; the scale to 1 and the shift to 0."""

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _ones_and_zeros(self)


def _ones_and_zeros(module) -> None:
    with no_grad():
        if module.weight is not None:
            module.weight.fill_(1)
        if module.bias is not None:
            module.bias.zero_()


def _norm_state(norm, num_features, affine, bias, track_running_stats, device, dtype):
    """What BatchNorm and InstanceNorm hold, as PyTorch's: a scale and shift per feature where ``affine`` (the
    shift where ``bias`` too), and running averages where ``track_running_stats`` (None buffers otherwise)."""
    norm.affine, norm.track_running_stats = affine, track_running_stats
    dev = target(device)
    norm.weight = Parameter(creation.ones(num_features, dtype=dtype, device=dev)) if affine else None
    norm.has_bias = affine and bias
    norm.bias = Parameter(creation.zeros(num_features, dtype=dtype, device=dev)) if norm.has_bias else None
    if track_running_stats:
        norm.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype, device=dev))
        norm.register_buffer("running_var", creation.ones(num_features, dtype=dtype, device=dev))
        norm.register_buffer("num_batches_tracked", creation.tensor(0, device=dev))
    else:
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            norm.register_buffer(name, None)


class _BatchNorm(_ResetNorm, Module):
    """Normalises each feature (channel) over the batch: in training with the batch's mean and biased variance,
    keeping running averages of mean and unbiased variance (``momentum``, or a cumulative average when None);
    after ``model.eval()`` with those averages. The subclasses say which inputs they take."""

    _dims = ()  # the input dimensions each takes

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features <= 0:
            raise ValueError(f"{type(self).__name__}: num_features must be a positive integer, got {num_features!r}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        _norm_state(self, num_features, affine, bias, track_running_stats, device, dtype)

    def forward(self, input):  # noqa: A002
        if input.dim() not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got {input.dim()}D input)")
        if input.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}) got an input of {input.shape[1]} features "
                             f"(shape {list(input.shape)})")
        batch_stats = self.training or not self.track_running_stats
        m = self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            m = 1.0 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
        # the running buffers are None when not tracked: then the batch's statistics, and nothing updated
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight,
                            self.bias if self.has_bias else None, batch_stats, 0.0 if m is None else m, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.has_bias}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)``: each of the C features over the batch (and length)."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of images ``(N, C, H, W)``: each channel over the batch and every position."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of volumes ``(N, C, D, H, W)``: each channel over the batch and every position."""

    _dims = (5,)


class _InstanceNorm(_ResetNorm, Module):
    """InstanceNorm1d/2d/3d: each sample's each channel normalised over its own positions (a style transfer's
    norm), with a learned scale and shift per channel when ``affine``. With ``track_running_stats`` it keeps
    running averages of the samples' statistics in training (by ``momentum``; none when it is None, as PyTorch's)
    and normalises by them in eval mode."""

    _nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        _norm_state(self, num_features, affine, bias, track_running_stats, device, dtype)

    def forward(self, input):  # noqa: A002
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input (got {input.dim()}D input)")
        unbatched = input.dim() == self._nd + 1
        x = input.unsqueeze(0) if unbatched else input
        # (PyTorch's momentum of None updates nothing here, and num_batches_tracked is never counted)
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out

    extra_repr = _BatchNorm.extra_repr  # the same settings, printed alike


class InstanceNorm1d(_InstanceNorm):
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    _nd = 3


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities (after a Sigmoid)."""

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits: the Sigmoid and the loss in one, without overflow. ``weight`` and
    ``pos_weight`` are buffers, as PyTorch's (saved with the model, moved with it)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class SiLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.silu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"
