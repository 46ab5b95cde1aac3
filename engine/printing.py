"""How a tensor prints, by PyTorch's rules, so that a script prints the same digits with the engine as with torch.

PyTorch (``torch/_tensor_str.py``) decides one format for all of a tensor's elements, from its nonzero finite values:

- whole numbers print as ``1.``, ``-3.`` (and ``nan``, ``inf`` as they are);
- other values with 4 decimals, ``0.1000``, unless the largest is over 1000 times the smallest, over 1e8, or the
  smallest is under 1e-4: then all are in scientific notation, ``1.0000e-05`` (whole numbers too);
- each element is right-aligned to the widest, lines wrap at 80 characters, and past 1000 elements only the first and
  last 3 of each dimension are shown, around ``...``.

:func:`set_printoptions` changes these as ``torch.set_printoptions`` does. NumPy's ``array2string`` prints the same
numbers otherwise (``1.e-05``, ``0.50``), which is why the engine does not use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "body"]


@dataclass
class _Options:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


OPTIONS = _Options()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def _whole(name, value, least):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"set_printoptions: {name} must be a whole number of at least {least}, got {value!r}")
    return int(value)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """``torch.set_printoptions``: ``precision`` decimals (default 4), a summary past ``threshold`` elements (1000)
    showing ``edgeitems`` (3) at each end of each dimension, lines of ``linewidth`` characters (80); ``profile``
    "default", "short" (2 decimals, 2 edge items) or "full" (no summary) first; ``sci_mode`` True or False forces
    scientific notation on or off, None (what every call without it sets, as in PyTorch) decides per tensor."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {', '.join(map(repr, _PROFILES))}, "
                             f"got {profile!r}")
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = _PROFILES[profile]
    if precision is not None:
        OPTIONS.precision = _whole("precision", precision, 0)
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) or not threshold >= 0:
            raise ValueError(f"set_printoptions: threshold must be a number of at least 0, got {threshold!r}")
        OPTIONS.threshold = threshold
    if edgeitems is not None:
        OPTIONS.edgeitems = _whole("edgeitems", edgeitems, 0)
    if linewidth is not None:
        OPTIONS.linewidth = _whole("linewidth", linewidth, 1)
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise ValueError(f"set_printoptions: sci_mode must be True, False or None, got {sci_mode!r}")
    OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as ``torch._tensor_str.get_printoptions`` gives them."""
    return {"precision": OPTIONS.precision, "threshold": OPTIONS.threshold, "edgeitems": OPTIONS.edgeitems,
            "linewidth": OPTIONS.linewidth, "sci_mode": OPTIONS.sci_mode}


def summarized(array, xp):
    """Whether ``array`` prints as a summary, and the part of it that is shown: the first and last ``edgeitems`` of
    each dimension longer than twice that (taken where the array lives, so a large GPU tensor is not copied whole to
    be printed)."""
    if not array.size > OPTIONS.threshold:
        return False, array
    edge = OPTIONS.edgeitems
    for axis, n in enumerate(array.shape):
        if n > 2 * edge:
            lead = (slice(None),) * axis
            array = xp.concatenate((array[lead + (slice(0, edge),)], array[lead + (slice(n - edge, n),)]), axis=axis)
    return True, array


class _Formatter:
    """One format for every element of the shown part (PyTorch's ``_Formatter``)."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        p = OPTIONS.precision
        if not self.floating:
            for v in values.ravel().tolist():
                self.width = max(self.width, len(str(v)))
        else:
            flat = values.ravel().astype(np.float64)
            shown = flat[np.isfinite(flat) & (flat != 0)]
            if shown.size:  # (else: no number to go by, and sci_mode is not applied either, as in PyTorch)
                big, small = float(np.abs(shown).max()), float(np.abs(shown).min())
                self.int_mode = bool((shown == np.ceil(shown)).all())
                if OPTIONS.sci_mode is None:
                    self.sci_mode = big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4
                else:
                    self.sci_mode = OPTIONS.sci_mode
                if self.sci_mode:
                    widths = (len(f"{v:.{p}e}") for v in shown.tolist())
                elif self.int_mode:
                    widths = (len(f"{v:.0f}") + 1 for v in shown.tolist())  # and a point: "3."
                else:
                    widths = (len(f"{v:.{p}f}") for v in shown.tolist())
                self.width = max(self.width, max(widths))

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{OPTIONS.precision}f}"
        return text.rjust(self.width)


class _ComplexFormatter:
    """A complex element as PyTorch prints it: the real parts in one format, the imaginary parts in another (each a
    :class:`_Formatter` of its own), ``1.0000+2.0000j``."""

    def __init__(self, values: np.ndarray):
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.width = self.real.width + self.imag.width + 1  # (and the j)

    def format(self, value) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def body(shown: np.ndarray, shape: tuple, summary: bool, indent: int) -> str:
    """The numbers of a tensor of ``shape``, as PyTorch prints them after ``tensor(`` (``indent`` characters in):
    ``shown`` is the whole array on the host, or where ``summary``, the part :func:`summarized` took."""
    fmt = _ComplexFormatter(shown) if shown.dtype.kind == "c" else _Formatter(shown)
    edge = OPTIONS.edgeitems

    def cut(n):
        return summary and n > 2 * edge

    def vector(v, n, indent):
        if summary and not edge:
            items = ["..."]
        else:
            values = [fmt.format(x) for x in v.tolist()]
            items = values[:edge] + [" ..."] + values[edge:] if cut(n) else values
        per_line = max(1, (OPTIONS.linewidth - indent) // (fmt.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def nested(a, shape, indent):
        if not shape:
            return fmt.format(a.item())
        if len(shape) == 1:
            return vector(a, shape[0], indent)
        rows = [nested(a[i], shape[1:], indent + 1) for i in range(a.shape[0])]
        if cut(shape[0]):
            rows = rows[:edge] + ["..."] + rows[edge:]
        return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(rows) + "]"

    return nested(shown, tuple(shape), indent)


def with_suffixes(text: str, suffixes: list, indent: int) -> str:
    """``text`` and its ``, dtype=...`` suffixes, each on a new line where it would pass the line width."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"
