"""Grad mode, per thread (as in PyTorch: the app's GUI thread and its worker do not see each other's mode):
``no_grad``, ``enable_grad``, ``inference_mode``, ``set_grad_enabled``, ``is_grad_enabled``."""

from __future__ import annotations

import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled"]


class _GradMode(threading.local):
    def __init__(self):
        self.enabled = True


_mode = _GradMode()


def is_grad_enabled() -> bool:
    return _mode.enabled


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
