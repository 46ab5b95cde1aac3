"""The base of every optimizer (``engine.optim.Optimizer``): parameter groups, ``zero_grad``, ``state_dict``,
the gradients as the update rules take them (:meth:`Optimizer._groups`), and a step's closure. Its own module, as
PyTorch's ``torch/optim/optimizer.py``, so that :mod:`.lbfgs` can build on it without an import circle."""

from __future__ import annotations

import math
import warnings
from collections.abc import MutableMapping

import numpy as np

from ..autograd._writes import wrote as _wrote
from ..autograd.grad_mode import enable_grad
from ..backend import to_device_array, xp_of
from ..functions.complex_ops import as_complex, as_real
from ..tensor import Tensor, _wrap

__all__ = ["Optimizer"]


class _ParamState(dict):
    """``optimizer.state``: each parameter's state, keyed by the parameter itself, an empty dict made at the first
    look-up (PyTorch's ``defaultdict(dict)``), so an optimizer of one's own writes ``state = self.state[p]``."""

    def __missing__(self, key):
        if not isinstance(key, Tensor):
            raise KeyError(key)
        state = self[key] = {}
        return state


# the numbers an engine optimizer keeps that PyTorch keeps as 0-d tensors (the step count, NAdam's momentum
# product, ASGD's eta and mu; L-BFGS's counters stay numbers there too)
_SCALAR_TENSORS = frozenset({"step", "mu_product", "eta", "mu"})


def _shown(name, value):
    """A raw state value as PyTorch shows it: an array as a Tensor on the same memory, the step count a Tensor."""
    if isinstance(value, Tensor) or value is None:
        return value
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return _wrap(value)
    if name in _SCALAR_TENSORS and isinstance(value, (int, float)) and not isinstance(value, bool):
        from .. import creation

        return creation.tensor(float(value))
    return value


def _raw(value):
    """A value written into an engine optimizer's state: a Tensor as its array."""
    return value._data if isinstance(value, Tensor) else value


def _as_parameters(value, param):
    """A buffer of a complex parameter's state, which the engine's updates keep as its parts (a real array of one
    more dimension, of size 2), as the complex array PyTorch keeps (a view of the same memory); else as it is."""
    if (param is not None and param._data.dtype.kind == "c" and getattr(value, "dtype", None) is not None
            and value.dtype.kind == "f" and value.shape == param._data.shape + (2,)):
        return as_complex(value)
    return value


def _as_parts(value, param):
    """The other way: a complex buffer of a complex parameter as the parts the updates keep."""
    if (param is not None and param._data.dtype.kind == "c" and getattr(value, "dtype", None) is not None
            and value.dtype.kind == "c" and value.shape == param._data.shape):
        return as_real(value)
    return value


class _RawView(MutableMapping):
    """A mapping shown over a raw dict of an engine optimizer (the part its two views share)."""

    def __init__(self, raw: dict):
        self._raw = raw

    def __delitem__(self, key):
        del self._raw[key]

    def __iter__(self):
        return iter(self._raw)

    def __len__(self):
        return len(self._raw)

    def __contains__(self, key):
        return key in self._raw


class _TensorState(_RawView):
    """One parameter's state of an engine optimizer, its arrays shown as Tensors (:attr:`Optimizer.state`); of a
    complex parameter, complex, as PyTorch's (the updates step its parts, :meth:`Optimizer._groups`)."""

    def __init__(self, raw: dict, param=None):
        super().__init__(raw)
        self._param = param

    def __getitem__(self, key):
        return _shown(key, _as_parameters(self._raw[key], self._param))

    def __setitem__(self, key, value):
        old = self._raw.get(key)
        if key in _SCALAR_TENSORS and isinstance(old, (int, float)) and isinstance(value, Tensor):
            value = type(old)(value.item())  # (kept a number inside: the step count the updates read)
        self._raw[key] = _as_parts(_raw(value), self._param)

    def __repr__(self):
        return repr(dict(self.items()))


class _TensorStates(_RawView):
    """An engine optimizer's ``state``: parameter -> :class:`_TensorState` (an empty one made at a first look-up
    of a parameter, as PyTorch's defaultdict)."""

    def __getitem__(self, key):
        return _TensorState(self._raw[key], key)

    def __setitem__(self, key, value):
        self._raw[key] = {k: _as_parts(_raw(v), key) for k, v in dict(value).items()}

    def __repr__(self):
        return repr({k: dict(v.items()) for k, v in self.items()})


class Optimizer:
    # the engine's own optimizers keep their buffers as raw arrays (loaded so); one's own keeps tensors
    _raw_state = False

    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts")
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = defaults
        self.param_groups = []
        self._states: dict = _ParamState()
        for g in groups:
            self.add_param_group(dict(g))

    @property
    def state(self):
        """Each parameter's state, keyed by the parameter (PyTorch's ``optimizer.state``). The engine's own
        optimizers keep their buffers as raw arrays for speed; they are shown here as Tensors sharing that memory
        (``state[p]["exp_avg"].norm()`` works, an in-place change reaches the optimizer), and the step count as a
        0-d Tensor of the default dtype, as PyTorch's. An optimizer of one's own keeps what it writes."""
        return _TensorStates(self._states) if self._raw_state else self._states

    @state.setter
    def state(self, value) -> None:
        if self._raw_state:
            value = _ParamState({p: {k: _raw(v) for k, v in s.items()} for p, s in value.items()})
        elif not isinstance(value, _ParamState):
            value = _ParamState(value)
        self._states = value

    def __init_subclass__(cls, **kwargs):
        """Each optimizer's own ``step`` wrapped so that the hooks of :meth:`register_step_pre_hook` and
        :meth:`register_step_post_hook` run around it, as PyTorch's."""
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("engine.optim"):
            cls._raw_state = True
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            def hooked(self, *args, **kwargs):
                for hook in list(self.__dict__.get("_step_pre_hooks", {}).values()):
                    result = hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but "
                                               f"got {result}.")
                        args, kwargs = result
                out = step(self, *args, **kwargs)
                for hook in list(self.__dict__.get("_step_post_hooks", {}).values()):
                    hook(self, args, kwargs)
                return out

            hooked.__name__, hooked.__doc__, hooked.__qualname__ = step.__name__, step.__doc__, step.__qualname__
            hooked._hooked = True
            cls.step = hooked

    def add_param_group(self, param_group: dict) -> None:
        """A parameter group added (a layer unfrozen to fine-tune it with its own rate): its settings default to
        the optimizer's; a parameter already in a group is refused, as PyTorch refuses it."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        # (named parameters, as model.named_parameters() gives them: the names kept as the group's param_names)
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(param).__module__}.{type(param).__name__}")
            if param.grad_fn is not None:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        if len({id(p) for p in param_group["params"]}) != len(param_group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{'with' if 'param_names' in param_group else 'without'} names to the optimizer")
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self._check(param_group)
        self.param_groups.append(param_group)

    def _hook_table(self, name):
        from collections import OrderedDict

        table = self.__dict__.get(name)
        if table is None:
            table = self.__dict__[name] = OrderedDict()
        return table

    def _register(self, name, hook, prepend=False):
        from ..utils.hooks import RemovableHandle

        if not callable(hook):
            raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
        table = self._hook_table(name)
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each ``step``; what it returns, when not None, is ``(args,
        kwargs)`` for the step. A handle whose ``remove()`` takes it away."""
        return self._register("_step_pre_hooks", hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return self._register("_step_post_hooks", hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False):
        """``hook(optimizer)`` before :meth:`state_dict` makes its dict."""
        return self._register("_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False):
        """``hook(optimizer, state_dict)`` after; what it returns, when not None, is the dict returned."""
        return self._register("_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False):
        """``hook(optimizer, state_dict)`` before :meth:`load_state_dict`; what it returns, when not None, is the
        dict loaded."""
        return self._register("_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False):
        """``hook(optimizer)`` after :meth:`load_state_dict`."""
        return self._register("_load_state_dict_post_hooks", hook, prepend)

    def _check(self, group):
        lr = group.get("lr")
        if isinstance(lr, Tensor):  # (PyTorch's: a one-element tensor, which a schedule then writes in place)
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            if lr.is_complex() or not math.isfinite(float(lr)) or float(lr) < 0:
                raise ValueError(f"Invalid learning rate: {lr}")
        elif not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        decay = group.get("weight_decay", 0)  # (every PyTorch optimizer refuses a negative one)
        if not isinstance(decay, (int, float)) or not decay >= 0:
            raise ValueError(f"Invalid weight_decay value: {decay}")

    def zero_grad(self, set_to_none: bool = True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p.grad.zero_()

    def _groups(self):
        """(group, [(p, its array, its gradient's array)]) for the parameters that have a gradient, with the
        gradient as PyTorch's update rules take it: negated for ``maximize``, then weight decay added; with
        ``decoupled_weight_decay`` (AdamW's, and Adam's, NAdam's and RAdam's option) the weights shrink by
        ``lr * weight_decay`` instead of the decay joining the gradient."""
        for group in self.param_groups:
            wd, maximize = group.get("weight_decay", 0.0), group.get("maximize", False)
            decoupled = group.get("decoupled_weight_decay", False)
            params = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                w, g = p._data, p.grad._data
                _wrote(w)  # the step writes it in place: a graph that saved it refuses its backward from now
                if w.dtype.kind == "c":  # (PyTorch's _view_as_real: a complex parameter steps as its real parts)
                    w, g = as_real(w), as_real(g)
                if maximize:
                    g = -g
                if wd:
                    if decoupled:
                        w *= 1 - float(group["lr"]) * wd
                    else:
                        g = g + wd * w
                params.append((p, w, g))
            yield group, params

    def __repr__(self):
        """As PyTorch prints an optimizer: each parameter group's settings, one a line, by name."""
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    def state_dict(self) -> dict:
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self)
        state = self._state_dict()
        for hook in list(self.__dict__.get("_state_dict_post_hooks", {}).values()):
            result = hook(self, state)
            if result is not None:
                state = result
        return state

    def _state_dict(self) -> dict:
        """As PyTorch's: ``{"state": {index: {name: tensor or number}}, "param_groups": [{settings, "params":
        [indices]}]}``, a parameter known by its position across the groups, its buffers copied as tensors, so
        ``engine.save`` can keep it and :meth:`load_state_dict` put it back into an optimizer of the same
        parameters (a checkpoint of model and optimizer resumes a run where it stopped)."""
        index, groups = {}, []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {index[id(key)]: {name: _copied(_as_parameters(v, key) if self._raw_state else v)
                                  for name, v in s.items()}
                 for key, s in self._states.items() if id(key) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Settings and buffers from :meth:`state_dict` of an optimizer over the same parameters (the same groups
        of the same sizes), each buffer moved to its parameter's device and dtype."""
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        self._load_state_dict(state_dict)
        for hook in list(self.__dict__.get("_load_state_dict_post_hooks", {}).values()):
            hook(self)

    def _load_state_dict(self, state_dict: dict) -> None:
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        by_index = {}
        for saved, group in zip(saved_groups, self.param_groups):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            by_index.update(zip(saved["params"], group["params"]))
        state = _ParamState()
        for key, buffers in state_dict["state"].items():
            p = by_index[key]
            state[p] = {name: self._loaded(v, p) for name, v in buffers.items()}
        self._states = state
        for saved, group in zip(saved_groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})

    def step(self, closure=None):
        """One update of every parameter that has a gradient; with ``closure`` (a function that zeroes the
        gradients, computes the loss, calls backward() and returns the loss), that is called first, with grad mode
        on, and its loss returned."""
        raise NotImplementedError

    def _loaded(self, v, p):
        """A buffer of a loaded state dict, on its parameter's device (in its dtype where it is floating): a raw
        array for the engine's own optimizers, a tensor for one's own, as it saved it."""
        if not isinstance(v, Tensor):
            return v
        arr = to_device_array(v._data, p.device, dtype=p._data.dtype if v.dtype.is_floating_point else None,
                              copy=True)
        return _as_parts(arr, p) if self._raw_state else _wrap(arr)

    def _advance(self, p, w, *zeros, **made) -> tuple:
        """Parameter ``p``'s state (made at its first step: a step count, a zero buffer like ``w`` for each name
        in ``zeros``, and ``made``'s values, a callable called with ``w``), its step count advanced; and that
        count, kept at the default dtype's precision as PyTorch keeps it."""
        state = self._states.get(p)
        if state is None:
            xp = xp_of(w)
            state = self._states[p] = {"step": 0.0, **{k: v(w) if callable(v) else v for k, v in made.items()},
                                         **{name: xp.zeros_like(w) for name in zeros}}
        state["step"] = t = _scalar(state["step"] + 1)
        return state, t


def _copied(v):
    """A state buffer as ``state_dict`` gives it: a tensor copy of an array or tensor, anything else as it is."""
    if isinstance(v, Tensor):
        return v.detach().clone()
    if hasattr(v, "shape") and hasattr(v, "copy"):
        return _wrap(v.copy())
    return v


def _closure_loss(closure):
    """``closure()`` with grad mode on (the step itself runs outside the graph), or None without one."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _scalar(value: float, like=None) -> float:
    """``value`` as PyTorch keeps an optimizer's step count and NAdam's running product: a 0-d tensor of the
    default dtype's precision (float32 unless the default is float64), read back as a Python float."""
    from ..dtypes import float64, get_default_dtype

    return float(value) if get_default_dtype() is float64 else float(np.float32(value))
