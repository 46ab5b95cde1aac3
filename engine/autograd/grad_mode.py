"""Grad mode, per thread (as in PyTorch: the app's GUI thread and its worker do not see each other's mode):
``no_grad``, ``enable_grad``, ``inference_mode``, ``set_grad_enabled``, ``is_grad_enabled``."""

from __future__ import annotations

import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled"]


# Idents of the threads that switched recording off. Every recorded op asks whether recording is on, and a
# thread-local read costs more than a small op's arithmetic at the tiny size (~700 instructions, callgrind): while
# this set is empty (no thread is inside no_grad, the forward and backward passes of a training step), the answer
# is yes for every thread, and the hot paths read ``not _off or _mode.enabled``. A thread's ident is in the set
# whenever its mode is off (it adds itself before switching off and leaves after switching on; no other live
# thread has its ident), so the shortcut is exact. A thread that ends while off (set_grad_enabled(False) as a
# call) leaves as its thread-local state is dropped, before its ident can be reused.
_off: set = set()
_get_ident = threading.get_ident


class _Leaving:
    """Kept in a thread's grad-mode state: when the thread ends, its ident leaves ``_off``."""

    __slots__ = ("ident",)

    def __init__(self, ident):
        self.ident = ident

    def __del__(self, discard=_off.discard):  # bound now: at interpreter exit the module's names may be gone
        discard(self.ident)


class _GradMode(threading.local):
    def __init__(self):
        self.enabled = True

    def __setattr__(self, name, value):
        if name == "enabled":
            if value:
                threading.local.__setattr__(self, name, True)
                _off.discard(_get_ident())
                return
            ident = _get_ident()
            if "leaving" not in self.__dict__:
                threading.local.__setattr__(self, "leaving", _Leaving(ident))
            _off.add(ident)
            value = False
        threading.local.__setattr__(self, name, value)


_mode = _GradMode()


def is_grad_enabled() -> bool:
    return not _off or _mode.enabled


class _GradModeContext:
    """Base of the grad-mode switches: usable as ``with`` blocks and as decorators."""

    _target = True

    def __enter__(self):
        self._prev = _mode.enabled
        _mode.enabled = self._target
        return self

    def __exit__(self, *exc):
        _mode.enabled = self._prev
        return False

    def __call__(self, func):
        target = self._target

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = _mode.enabled
            _mode.enabled = target
            try:
                return func(*args, **kwargs)
            finally:
                _mode.enabled = prev

        return wrapper


class no_grad(_GradModeContext):
    """Turn graph recording off in this thread: ``with engine.no_grad(): ...`` or ``@engine.no_grad()``."""

    _target = False


class enable_grad(_GradModeContext):
    """Turn graph recording back on in this thread (inside a ``no_grad`` block)."""

    _target = True


class inference_mode(no_grad):
    """Same as :class:`no_grad` here (the engine has no separate inference tensors)."""

    def __init__(self, mode: bool = True):
        self._target = not mode


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` switches recording off now; as a context it restores on exit."""

    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._prev = _mode.enabled
        _mode.enabled = self._target

    def __enter__(self):
        return self
