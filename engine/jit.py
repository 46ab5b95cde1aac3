"""``torch.jit`` for scripts that use TorchScript as a speed-up: ``@torch.jit.script`` on a function,
``torch.jit.trace`` of a model, ``torch.jit.is_scripting()`` in a module's ``forward``. TorchScript compiles a
program that computes what the Python does; the engine runs eagerly and has no compiler, so ``script``, ``trace``
and their kin hand back what they were given, as :func:`engine.compile` does: the same results, at the engine's
speed. What needs the compiled program itself (``save``/``load`` of a TorchScript archive) is refused with a way
out."""

from __future__ import annotations

from typing import Final  # noqa: F401 - torch.jit.Final, the annotation of a constant attribute

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "annotate", "interface", "freeze", "optimize_for_inference", "fork", "wait", "save", "load",
           "ScriptModule", "ScriptFunction", "Final", "Future"]


class ScriptModule:
    """The type of a scripted module in PyTorch. Nothing here is one (``script`` hands the module back), so
    ``isinstance(m, torch.jit.ScriptModule)`` is False, as for any module not scripted."""


class ScriptFunction:
    """The type of a scripted function in PyTorch (see :class:`ScriptModule`)."""


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself (a function or a module): see the module's note."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """``func`` itself, a function or a module (PyTorch's runs it once on ``example_inputs`` to record its ops)."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    return mod


def _decorator(fn=None, **_options):
    """``@ignore``, ``@ignore(drop=True)``, ``@unused``, ``@export``: what they mark is left as it is."""
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


ignore = unused = export = _decorator


def is_scripting() -> bool:
    """False: nothing here runs as TorchScript (a module's eager-only branch is taken, as outside ``script``)."""
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type, the_value):
    """``the_value`` (TorchScript reads the type; Python needs none)."""
    return the_value


def interface(obj):
    return obj


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


class Future:
    """What :func:`fork` returns: its result, already computed (the engine runs the call when forked)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def done(self) -> bool:
        return True


def fork(func, *args, **kwargs) -> Future:
    """``func(*args, **kwargs)`` run now; :func:`wait` gives its result (PyTorch's may run it on another thread)."""
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


def _refused(what):
    raise RuntimeError(f"torch.jit.{what}: the engine has no TorchScript (it runs eagerly and compiles nothing), so "
                       "there is no compiled program to write or read; save the weights instead: "
                       "torch.save(model.state_dict(), path), and load them into the model's class with "
                       "model.load_state_dict(torch.load(path))")


def save(m, f, _extra_files=None):
    _refused("save")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    _refused("load")
