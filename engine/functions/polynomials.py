"""The orthogonal polynomials of ``torch.special`` (Chebyshev's T, U, V, W and their shifted forms, Hermite's H and
He, Laguerre's L, Legendre's P) of an array ``x`` at integer degrees ``n`` (an array too), written with NumPy's (or
CuPy's) ufuncs so they run on either device. Each follows PyTorch's definition (ATen's Math.h) step for step: the
three-term recurrence, the trigonometric form inside (-1, 1) for Chebyshev's past a small degree, the exact values
at the ends of the interval, 0 for a negative degree, NaN for Hermite's past degree 512 (128 in float32), and the
recurrence stopped at its first NaN (so a value that overflows reads NaN, as PyTorch's does). They compute in the
result's dtype, as PyTorch's do, so float32 rounds and overflows where PyTorch's does."""

from __future__ import annotations

import numpy as np

# the recurrence runs on the elements that need it, and every 64 steps it stops early once none is left; Chebyshev's
# stop at 2^14 steps, and those still running (|x| > 1 by a hair, not yet overflowed) take the closed form
_STEPS_CHECKED = 64
_CHEBYSHEV_STEPS = 1 << 14


def degrees(xp, n):
    """PyTorch's ``static_cast<int64_t>(n)`` of a float degree: truncated; NaN, infinities and magnitudes past
    2^63 read as INT64_MIN there (x86's conversion), a negative degree here."""
    if n.dtype.kind in "iub":
        return n.astype(np.int64)
    ok = xp.isfinite(n) & (abs(n) < 9.2e18)
    return xp.where(ok, xp.trunc(xp.where(ok, n, -1.0)), -1.0).astype(np.int64)


def _recur(xp, x, n, start, step, stop_at_nan=True, cap=None):
    """Run ``step(k, x, p, q) -> r`` for k = 2, ..., n (the degree it makes), with p = 1 and q = ``start`` (the
    degree-1 value) before the first step, on the elements given; returns (the degree-n values, the elements still
    running when ``cap`` steps were reached)."""
    out = start.copy()
    p = xp.ones_like(x)
    q = start.copy()
    top = int(n.max())  # (on a GPU, a read back: these are not a step's ops)
    if cap is not None:
        top = min(top, cap + 1)
    k = 2
    active = n >= k
    while k <= top:
        if stop_at_nan:
            active = active & ~xp.isnan(q)
        r = step(k, x, p, q)
        p = xp.where(active, q, p)
        q = xp.where(active, r, q)
        out = xp.where(active, r, out)
        k += 1
        active = active & (n >= k)
        if k % _STEPS_CHECKED == 0 and not bool(active.any()):
            break
    return out, active & ~xp.isnan(q)


def _on_subset(xp, out, run, x, n, start, step, **options):
    """``out`` with the recurrence's values (:func:`_recur`) put at the elements ``run`` marks (the others take no
    step); also the mask of those still running at the cap."""
    if not bool(run.any()):
        return out, None
    idx = xp.nonzero(run.ravel())[0]
    r, running = _recur(xp, x.ravel()[idx], n.ravel()[idx], start.ravel()[idx], step, **options)
    flat = out.ravel().copy()
    flat[idx] = r
    return flat.reshape(out.shape), (idx, running)


def _as(x, dtype):
    return x if x.dtype == dtype else x.astype(dtype)


def chebyshev(xp, kind, x, n, shifted=False):
    """Chebyshev's ``kind`` ('t', 'u', 'v' or 'w') polynomial of degree n at x (``shifted``: at 2x - 1)."""
    dtype = x.dtype
    one = dtype.type(1)
    two = dtype.type(2)
    y = x + x - one if shifted else x
    nf = n.astype(dtype)
    sign_n = xp.where(n % 2 == 0, one, -one)
    # the values at y = 1 and y = -1
    at_plus = {"t": one, "u": nf + one, "v": one, "w": nf + nf + one}[kind]
    at_minus = {"t": sign_n, "u": sign_n * (nf + one), "v": sign_n * (nf + nf + one), "w": sign_n}[kind]
    # the trigonometric form inside the interval past a small degree
    threshold = {"t": 6, "u": 8, "v": 8, "w": 8} if not shifted else {"t": 6, "u": 6, "v": 6, "w": 4}
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        inside = abs(y) < one
        theta = xp.arccos(xp.where(inside, y, dtype.type(0)))
        half = dtype.type(0.5)
        if kind == "t":
            trig = xp.cos(nf * theta)
        elif kind == "u":
            s = xp.sin(theta)
            trig = xp.where(s != 0, xp.sin((nf + one) * theta) / xp.where(s != 0, s, one),
                            (nf + one) * xp.cos((nf + one) * theta) / y)
        elif kind == "v":
            trig = xp.where(xp.sin(theta / two) != one, xp.cos((nf + half) * theta) / xp.cos(theta / two),
                            sign_n * (nf + nf + one))
        else:
            c = xp.cos(theta / two)
            edge = sign_n if shifted else xp.where(y > 0, nf + nf + one, sign_n)  # (PyTorch's shifted form: +-1)
            trig = xp.where(c != one, xp.sin((nf + half) * theta) / xp.sin(theta / two), edge)
        start = {"t": y, "u": y + y, "v": y + y - one, "w": y + y + one}[kind]
        use_trig = (n > threshold[kind]) & inside
        run = (n >= 2) & ~use_trig & (abs(y) != one)
        out = xp.where(n == 1, start, one)
        out, ran = _on_subset(xp, out, run, y, n, start, lambda k, v, p, q: (v + v) * q - p, cap=_CHEBYSHEV_STEPS)
        if ran is not None and bool(ran[1].any()):  # (still running at the cap: the closed form there)
            idx = ran[0][ran[1]]
            flat = out.ravel().copy()
            flat[idx] = _outside(xp, kind, y.ravel()[idx], n.ravel()[idx].astype(dtype))
            out = flat.reshape(out.shape)
        out = xp.where(use_trig, trig, out)
        ends = abs(y) == one
        out = xp.where(ends, xp.where(y > 0, at_plus, at_minus), out)
        out = xp.where(n < 0, dtype.type(0), out)
    return _as(out, dtype)


def _outside(xp, kind, y, n):
    """Chebyshev's polynomials outside [-1, 1] in closed form, a = acosh|y|: T = cosh(n a), U = sinh((n+1) a) /
    sinh(a), V = cosh((n+1/2) a) / cosh(a/2), W = sinh((n+1/2) a) / sinh(a/2), with V and W trading places and
    (-1)^n for y < -1; NaN where it overflows (where PyTorch's recurrence reaches NaN)."""
    a = xp.arccosh(abs(y))
    sign = xp.where(n % 2 == 0, 1.0, -1.0).astype(y.dtype)
    h = n + 0.5
    v = xp.cosh(h * a) / xp.cosh(a / 2)
    w = xp.sinh(h * a) / xp.sinh(a / 2)
    value = {"t": xp.cosh(n * a), "u": xp.sinh((n + 1) * a) / xp.sinh(a),
             "v": xp.where(y > 0, v, sign * w), "w": xp.where(y > 0, w, sign * v)}[kind]
    value = value * xp.where(y < 0, sign, 1) if kind in "tu" else value
    return xp.where(xp.isfinite(value), value, np.nan).astype(y.dtype)


def hermite(xp, x, n, physicists=True):
    """Hermite's H (``physicists``) or He of degree n at x: NaN past degree 512 (128 in float32), PyTorch's."""
    dtype = x.dtype
    limit = 128 if dtype == np.float32 else 512
    one = dtype.type(1)
    with np.errstate(invalid="ignore", over="ignore"):
        start = x + x if physicists else x.copy()
        out = xp.where(n == 1, start, one)
        run = (n >= 2) & (n <= limit)
        if physicists:  # PyTorch's k = 2, 4, ..., 2n - 2: r = 2x q - k p
            step = lambda k, v, p, q: (v + v) * q - dtype.type(2 * k - 2) * p  # noqa: E731
        else:  # k = 1, ..., n - 1: r = x q - k p
            step = lambda k, v, p, q: v * q - dtype.type(k - 1) * p  # noqa: E731
        out, _ = _on_subset(xp, out, run, x, n, start, step, stop_at_nan=False)
        out = xp.where(n > limit, dtype.type(np.nan), out)
        out = xp.where(n < 0, dtype.type(0), out)
    return _as(out, dtype)


def laguerre(xp, x, n):
    """Laguerre's L of degree n at x: 1 at x = 0."""
    dtype = x.dtype
    one = dtype.type(1)
    with np.errstate(invalid="ignore", over="ignore"):
        start = one - x
        out = xp.where(n == 1, start, one)
        run = (n >= 2) & (x != 0)
        # PyTorch's k = 1, ..., n - 1: r = ((2k + 1 - x) q - k p) / (k + 1)
        out, _ = _on_subset(xp, out, run, x, n, start, lambda k, v, p, q: (
            (dtype.type(2 * k - 2) + (one - v)) * q - dtype.type(k - 1) * p) / dtype.type(k))
        out = xp.where(x == 0, one, out)
        out = xp.where(n < 0, dtype.type(0), out)
    return _as(out, dtype)


def legendre(xp, x, n):
    """Legendre's P of degree n at x: +-1 at x = +-1."""
    dtype = x.dtype
    one = dtype.type(1)
    with np.errstate(invalid="ignore", over="ignore"):
        out = xp.where(n == 1, x, one)
        run = (n >= 2) & (abs(x) != one)
        # PyTorch's k = 1, ..., n - 1: r = ((2k + 1) x q - k p) / (k + 1)
        out, _ = _on_subset(xp, out, run, x, n, x, lambda k, v, p, q: (
            dtype.type(2 * k - 1) * v * q - dtype.type(k - 1) * p) / dtype.type(k))
        sign_n = xp.where(n % 2 == 0, one, -one)
        out = xp.where(abs(x) == one, xp.where(x > 0, one, sign_n), out)
        out = xp.where(n < 0, dtype.type(0), out)
    return _as(out, dtype)
