"""Grad mode, per thread (as in PyTorch: the app's GUI thread and its worker do not see each other's mode):
``no_grad``, ``enable_grad``, ``inference_mode``, ``set_grad_enabled``, ``is_grad_enabled``."""

from __future__ import annotations

import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


# The idents of the threads whose recording is off: a thread's grad mode is ``_get_ident() not in _off``. Every
# recorded op asks, and the hot paths read ``not _off or _get_ident() not in _off``: while no thread is inside
# no_grad (the forward and backward passes of a training step) the answer is yes at once, and otherwise it is one
# set lookup (a thread-local read costs ~700 instructions, callgrind, more than a small op's arithmetic at the
# tiny size). A thread that switches off gets a _Leaving in its thread-local state (once; _watched holds the
# threads that have one): when the thread ends, its state is dropped before its ident can be reused, and the
# _Leaving takes the ident out of both sets, so a thread that ends while off (set_grad_enabled(False) as a call)
# switches no later thread off.
_off: set = set()
_watched: set = set()
_get_ident = threading.get_ident
_local = threading.local()


class _Leaving:
    """Kept in a thread's thread-local state: when the thread ends, its ident leaves ``_off`` and ``_watched``."""

    __slots__ = ("ident",)

    def __init__(self, ident):
        self.ident = ident

    # bound now: at interpreter exit the module's names may be gone
    def __del__(self, off=_off.discard, watched=_watched.discard):
        off(self.ident)
        watched(self.ident)


def _switch_off(ident) -> None:
    """Recording off for the thread ``ident`` (the calling thread)."""
    if ident not in _watched:
        _local.leaving = _Leaving(ident)
        _watched.add(ident)
    _off.add(ident)


def _set_enabled(value) -> None:
    ident = _get_ident()
    if value:
        _off.discard(ident)
    else:
        _switch_off(ident)


def is_grad_enabled() -> bool:
    return not _off or _get_ident() not in _off


class _GradModeContext:
    """Base of the grad-mode switches: usable as ``with`` blocks and as decorators."""

    _target = True

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])  # @engine.no_grad without parentheses, as PyTorch 2 allows
        return super().__new__(cls)

    def __enter__(self):
        ident = _get_ident()
        self._prev = ident not in _off
        if self._target:
            _off.discard(ident)
        else:
            _switch_off(ident)
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._prev:
            _off.discard(_get_ident())
        else:
            _off.add(_get_ident())  # it was off before: it has its _Leaving
        return False

    def __call__(self, func):
        target = self._target

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = is_grad_enabled()
            _set_enabled(target)
            try:
                return func(*args, **kwargs)
            finally:
                _set_enabled(prev)

        return wrapper


class no_grad(_GradModeContext):
    """Turn graph recording off in this thread: ``with engine.no_grad(): ...``, ``@engine.no_grad()`` or
    ``@engine.no_grad``."""

    _target = False


class enable_grad(_GradModeContext):
    """Turn graph recording back on in this thread (inside a ``no_grad`` block)."""

    _target = True


class inference_mode(no_grad):
    """As :class:`no_grad` here (the engine has no separate inference tensors), and
    :func:`is_inference_mode_enabled` says so while it is on."""

    def __init__(self, mode: bool = True):
        self._target = not mode
        self._mode = bool(mode)

    def __enter__(self):
        self._was = is_inference_mode_enabled()
        _local.inference = self._mode
        return super().__enter__()

    def __exit__(self, exc_type, exc, tb):
        _local.inference = self._was
        return super().__exit__(exc_type, exc, tb)

    def __call__(self, func):
        mode = self._mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return func(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode()`` (PyTorch's name)."""
    return getattr(_local, "inference", False)


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` switches recording off now; as a context it restores on exit."""

    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._prev = is_grad_enabled()
        _set_enabled(self._target)

    def __enter__(self):
        return self
