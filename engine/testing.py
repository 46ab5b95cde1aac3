"""``engine.testing.assert_close``: PyTorch's check that two tensors (or numbers, or sequences and mappings of
them) are close, with its default tolerances per dtype and its messages, for one who checks an engine's results
against another's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from . import creation
from .backend import to_host
from .tensor import Tensor

__all__ = ["assert_close"]

# PyTorch's default (rtol, atol) by dtype; integers and bools must be equal
_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
               np.dtype(np.float64): (1e-7, 1e-7), np.dtype(np.complex64): (1.3e-6, 1e-5),
               np.dtype(np.complex128): (1e-7, 1e-7)}


def _tolerance(*dtypes) -> tuple:
    found = [_TOLERANCES.get(np.dtype(d), (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in found), max(a for _, a in found)


def _as_tensor(value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, complex, np.number, np.ndarray)):
        return creation.tensor(value)
    return None


def _fail(message: str, msg) -> None:
    if callable(msg):
        message = msg(message)
    elif msg is not None:
        message = msg
    raise AssertionError(message)


def _where(index) -> str:
    return str(tuple(int(i) for i in index))


def _compare(actual: Tensor, expected: Tensor, rtol, atol, equal_nan, check_device, check_dtype, msg, path) -> None:
    at = "" if not path else f"\n\nThe failure occurred for {path}"
    if tuple(actual.shape) != tuple(expected.shape):
        _fail(f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}.{at}", msg)
    if check_device and actual.device != expected.device:
        _fail(f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.{at}", msg)
    if check_dtype and actual.dtype != expected.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.{at}", msg)
    a, e = to_host(actual.detach()._data), to_host(expected.detach()._data)
    if rtol is None:
        rtol, atol = _tolerance(a.dtype, e.dtype)
    exact = a.dtype.kind in "biu" and e.dtype.kind in "biu"
    common = np.result_type(a.dtype, e.dtype) if not exact else np.int64
    a, e = a.astype(common), e.astype(common)
    with np.errstate(invalid="ignore", over="ignore"):
        if exact:
            close = a == e
        else:
            close = (a == e) | (np.abs(a - e) <= atol + rtol * np.abs(e))
            if equal_nan:
                close |= np.isnan(a) & np.isnan(e)
    if close.all():
        return
    total, bad = close.size, int((~close).sum())
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(a - e)
        rel = (diff / np.abs(e)).astype(np.float32 if exact else diff.dtype)  # (real: of complex numbers, moduli)
    def worst(values):  # the index of the largest difference among the mismatches (a NaN counts as the largest)
        score = values.astype(np.float64)
        score = np.where(close, -np.inf, np.where(np.isnan(score), np.inf, score))
        return np.unravel_index(int(np.argmax(score)), values.shape) if values.ndim else ()

    where_abs, where_rel = worst(diff), worst(rel)
    kind = "equal" if exact and rtol == 0 and atol == 0 else "close"
    lines = [f"Tensor-likes are not {kind}!", "",
             f"Mismatched elements: {bad} / {total} ({100 * bad / total:.1f}%)"]
    if bad:
        big_abs = diff[where_abs] if diff.ndim else diff[()]
        big_rel = rel[where_rel] if rel.ndim else rel[()]
        abs_text = f"{int(big_abs)}" if exact else f"{float(big_abs)}"
        lines.append(f"Greatest absolute difference: {abs_text} at index {_where(where_abs)}"
                     + ("" if kind == "equal" else f" (up to {atol} allowed)"))
        lines.append(f"Greatest relative difference: {float(big_rel)} at index {_where(where_rel)}"
                     + ("" if kind == "equal" else f" (up to {rtol} allowed)"))
    _fail("\n".join(lines) + at, msg)


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False, msg=None) -> None:
    """Raises AssertionError, in PyTorch's words, unless ``actual`` and ``expected`` have the same shape (and
    device and dtype, unless told not to check) and every element satisfies ``|actual - expected| <= atol + rtol *
    |expected|`` (by default PyTorch's tolerances for the dtype: float32 1.3e-6 and 1e-5, float64 1e-7 and 1e-7;
    integers exactly). Sequences and mappings are compared element by element."""
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    _walk(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, "")


def _walk(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, path) -> None:
    a, e = _as_tensor(actual), _as_tensor(expected)
    if a is not None and e is not None:
        if not isinstance(actual, Tensor) and not isinstance(expected, Tensor) and type(actual) is not type(expected):
            _fail(f"The values for attribute 'type' do not match: {type(actual)} != {type(expected)}.", msg)
        _compare(a, e, rtol, atol, equal_nan, check_device, check_dtype, msg, path)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match: {sorted(map(str, actual))} != "
                  f"{sorted(map(str, expected))}", msg)
        for key in actual:
            _walk(actual[key], expected[key], rtol, atol, equal_nan, check_device, check_dtype, msg,
                  f"{path}[{key!r}]" if path else f"item [{key!r}]")
        return
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) and not isinstance(actual, str):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", msg)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _walk(x, y, rtol, atol, equal_nan, check_device, check_dtype, msg, f"{path}[{i}]" if path else
                  f"item [{i}]")
        return
    if actual != expected:
        _fail(f"{actual!r} != {expected!r}", msg)
