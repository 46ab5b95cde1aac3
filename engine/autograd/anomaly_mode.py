"""Anomaly detection, as PyTorch's ``torch.autograd.detect_anomaly`` and ``set_detect_anomaly``: the first thing a
learner is told to try when a loss turns NaN.

While it is on:

- each node the forward records keeps where it was made (the stack of the calling code, the engine's own frames
  left out);
- the backward walk runs in Python (the compiled walk is left for the plain runs), and a node whose backward gives a
  NaN gradient stops it: ``RuntimeError: Function 'DivBackward0' returned nan values in its 1th output.``, after a
  warning that shows the line of the forward that made the node ("Error detected in DivBackward0. Traceback of
  forward call that caused the error: ..."). Any other error in a node's backward gets that warning too.

It is global, as PyTorch's: every thread's forward records where, every walk checks. ``check_nan=False`` keeps the
stacks and the warning and drops the NaN check. The recorded (``create_graph=True``) walk checks the same way."""

from __future__ import annotations

import functools
import os
import traceback
import warnings

from ..backend import xp_of

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

_enabled = False
_check_nan = True
_plain_apply = None  # Function.apply as it was before the forward began to note where its nodes are made
_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


def _set(mode: bool, check_nan: bool) -> None:
    global _enabled, _check_nan
    from . import graph

    _enabled, _check_nan = bool(mode), bool(check_nan)
    graph._anomaly = _backward if _enabled else None  # (both walks read it: graph's, and higher's recorded one)
    _note_forward(_enabled)


def _note_forward(on: bool) -> None:
    """Function.apply wrapped (on) or as it was (off): each node an apply records keeps the caller's stack."""
    global _plain_apply
    from .function import Function

    if on and _plain_apply is None:
        _plain_apply = Function.__dict__["apply"]
        plain = _plain_apply.__func__

        def apply(cls, *args, **kwargs):
            out = plain(cls, *args, **kwargs)
            stack = None
            for o in out if out.__class__ is tuple else (out,):
                node = getattr(o, "grad_fn", None)
                if node is not None and "_forward_stack" not in node.__dict__:
                    if stack is None:
                        stack = _user_stack()
                    node._forward_stack = stack
            return out

        Function.apply = classmethod(apply)
    elif not on and _plain_apply is not None:
        Function.apply = _plain_apply
        _plain_apply = None


def _user_stack() -> list[str]:
    """The calling code's frames, outermost first, without the engine's own."""
    frames = traceback.extract_stack()
    return traceback.format_list([f for f in frames if not os.path.abspath(f.filename).startswith(_ENGINE_DIR)])


def _warn_forward(node) -> None:
    stack = node.__dict__.get("_forward_stack")
    if stack is None:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
                      "anomaly during forward pass for more information.", stacklevel=2)
    else:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                      + "".join(stack), stacklevel=2)


def _backward(node, gouts, run):
    """``run(node, gouts)`` (a walk's call of a node's backward) under anomaly detection."""
    try:
        gins = run(node, gouts)
    except Exception:
        _warn_forward(node)
        raise
    if _check_nan:
        for i, g in enumerate(gins):
            if g is None:
                continue
            data = getattr(g, "_data", g)  # (the recorded walk's gradients are Tensors)
            if data.dtype.kind in "fc" and bool(xp_of(data).isnan(data).any()):
                _warn_forward(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return gins


class detect_anomaly:
    """Anomaly detection on inside the block (or the decorated function), as it was after. Warns that it is on,
    as PyTorch does: it costs a stack per recorded op and a check per node."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self.prev = (_enabled, _check_nan)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (_enabled, _check_nan)
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Anomaly detection on or off from this call (``set_detect_anomaly(True)``), or inside a ``with`` block, as it
    was after the block."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (_enabled, _check_nan)
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False
