"""The Bessel functions, erfcx, Hurwitz's zeta and the orthogonal polynomials of ``torch.special``: values against
mpmath (the truth, at 40 digits) and PyTorch, PyTorch's gradients (first and second) where it has them, its
refusals, dtypes and values at the edges."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import engine
from engine.functions import bessel as B

mp = pytest.importorskip("mpmath")
mp.mp.dps = 40

GRID = np.concatenate([np.linspace(-40, 40, 1601), [1e-300, 1e-8, 1e-5, 2.0, 2.09, -2.09, 5.0, 8.0, -8.0, 50.0,
                                                    103.0, -103.0, 300.0, 700.0, -700.0, 1e4]])

# (our array function, mpmath's, error measured relative to |value| or, for the oscillating ones, absolutely)
TRUTH = {
    "bessel_j0": (B.j0, lambda x: mp.besselj(0, x), "abs"),
    "bessel_j1": (B.j1, lambda x: mp.besselj(1, x), "abs"),
    "bessel_y0": (B.y0, lambda x: mp.bessely(0, x), "abs"),
    "bessel_y1": (B.y1, lambda x: mp.bessely(1, x), "abs"),
    "i0": (B.i0, lambda x: mp.besseli(0, x), "rel"),
    "i1": (B.i1, lambda x: mp.besseli(1, x), "rel"),
    "i0e": (B.i0e, lambda x: mp.besseli(0, x) * mp.exp(-abs(x)), "rel"),
    "i1e": (B.i1e, lambda x: mp.besseli(1, x) * mp.exp(-abs(x)), "rel"),
    "modified_bessel_k0": (B.k0, lambda x: mp.besselk(0, x), "rel"),
    "modified_bessel_k1": (B.k1, lambda x: mp.besselk(1, x), "rel"),
    "scaled_modified_bessel_k0": (B.k0e, lambda x: mp.besselk(0, x) * mp.exp(x), "rel"),
    "scaled_modified_bessel_k1": (B.k1e, lambda x: mp.besselk(1, x) * mp.exp(x), "rel"),
    "airy_ai": (B.airy_ai, mp.airyai, "abs"),
    "spherical_bessel_j0": (B.spherical_j0, lambda x: mp.sin(x) / x if x else mp.mpf(1), "abs"),
}


def _truth(fn, xs):
    return np.array([float(mp.re(fn(mp.mpf(float(x))))) for x in xs])


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_each_function_is_within_a_few_units_in_the_last_place_of_mpmath(name):
    ours_fn, theirs, how = TRUTH[name]
    xs = GRID[GRID > 0] if name.startswith("bessel_y") else GRID
    if name.startswith(("modified_bessel_k", "scaled")):  # (mpmath's K is slow: a quarter of the points)
        xs = np.concatenate([GRID[GRID > 0][::4], [1e-300, 1e-8, 2.0, 50.0, 300.0, 700.0]])
    with np.errstate(all="ignore"):
        truth = _truth(theirs, xs)
    ours = ours_fn(np, xs)
    finite = np.isfinite(truth) & (np.abs(truth) > 1e-290)  # (past the subnormals float64 has no digits to give)
    err = np.abs(ours[finite] - truth[finite])
    scale = np.ones_like(err) if how == "abs" else np.abs(truth[finite])
    far = np.abs(xs[finite]) > 100  # the phase x - pi/4 of a large x carries x's own rounding: ~|x| eps
    bound = np.where(far, 2e-16 * np.abs(xs[finite]), 8e-15) * scale
    assert np.all(err <= bound), (xs[finite][err > bound][:5], err[err > bound][:5])
    # and the engine's function gives the same array, in float64 and (rounded) in float32
    t = engine.tensor(xs)
    got = getattr(engine.special, name)(t)
    np.testing.assert_array_equal(got.numpy(), ours)
    got32 = getattr(engine.special, name)(t.float())
    assert got32.dtype == engine.float32
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got32.numpy(), ours_fn(np, xs.astype(np.float32)).astype(np.float32))


def test_erfcx_against_mpmath_from_the_left_tail_to_past_the_continued_fraction():
    xs = np.concatenate([np.linspace(-26, 60, 4301), [1e-8, -1e-8, 0.5, 1.0, 8.0, 50.0, 50.1, 5e7, 1e8, 1e30]])
    ours = engine.special.erfcx(engine.tensor(xs)).numpy()
    truth = _truth(lambda x: mp.exp(x * x) * mp.erfc(x), xs)
    rel = np.abs(ours - truth) / truth
    # exp(x^2) of a negative x carries x's rounding times 2x^2: ~1e-13 at -26; elsewhere a few ulps
    assert np.all(rel <= np.maximum(4e-16 * xs * xs, 2e-15)), xs[np.argmax(rel / np.maximum(4e-16 * xs * xs, 2e-15))]
    assert engine.special.erfcx(engine.tensor([-27.0, math.inf, -math.inf, math.nan])).tolist()[:3] == [
        math.inf, 0.0, math.inf]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(TRUTH) + ["erfcx"])
def test_values_and_edges_are_pytorchs_or_closer_to_the_truth(name):
    torch = pytest.importorskip("torch")
    edges = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 710.0, -710.0, 1e-20, -1e-20]
    xs = np.concatenate([GRID, edges])
    with np.errstate(all="ignore"):
        ours = getattr(engine.special, name)(engine.tensor(xs)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(xs)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(theirs))
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(theirs))
    np.testing.assert_array_equal(np.signbit(ours[ours == 0]), np.signbit(theirs[ours == 0]))
    finite = np.isfinite(ours) & np.isfinite(theirs)
    scale = np.maximum(np.abs(theirs[finite]), 1.0)
    off = np.abs(ours[finite] - theirs[finite]) / scale > 1e-12
    if name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"):
        # PyTorch's fits drop Cephes' leading 1 of p1evl: off by up to ~3e-6, where ours is the truth's
        assert off.any()
        xo = xs[finite][off]
        truth = _truth(TRUTH[name][1], xo)
        ours_err = np.abs(ours[finite][off] - truth)
        theirs_err = np.abs(theirs[finite][off] - truth)
        assert np.all(ours_err < 1e-14 * np.maximum(np.abs(xo), 1)), xo[ours_err >= 1e-14]
        assert np.all(theirs_err > 10 * ours_err)
        assert np.max(np.abs(ours[finite] - theirs[finite])) < 5e-6
    else:
        assert not off.any(), xs[finite][off][:5]
    # integers compute in the default float dtype; float32 rounds as PyTorch's float32 does
    ints = getattr(engine.special, name)(engine.tensor([1, 2, 3]))
    assert ints.dtype == engine.float32
    f32 = getattr(engine.special, name)(engine.tensor(GRID[::7], dtype=engine.float32)).numpy()
    t32 = getattr(torch.special, name)(torch.tensor(GRID[::7], dtype=torch.float32)).numpy()
    finite = np.isfinite(t32) & np.isfinite(f32)
    tol = 3e-6 if name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai") else 0
    np.testing.assert_allclose(f32[finite], t32[finite], rtol=4e-6, atol=tol + 1e-30)


def _derivatives(L, name, dtype, xs, w):
    x = L.tensor(xs, dtype=getattr(L, dtype), requires_grad=True)
    y = getattr(L.special, name)(x)
    g, = L.autograd.grad((y * L.tensor(w, dtype=getattr(L, dtype))).sum(), x, create_graph=True)
    h, = L.autograd.grad(g.sum(), x)
    node = y.grad_fn.name() if L is engine else type(y.grad_fn).__name__
    return node, [y.detach().numpy(), g.detach().numpy(), h.numpy()]


@pytest.mark.torch
@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "erfcx"])
def test_gradients_and_second_derivatives_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    xs = [-9.0, -3.0, -0.5, -1e-20, 0.0, 1e-30, 0.7, 4.0, 12.0, 30.0]
    w = [0.3, -1.2, 0.5, 2.0, 1.0, -0.7, 0.9, 1.1, -0.4, 0.25]
    (our_node, ours), (their_node, theirs) = (_derivatives(L, name, "float64", xs, w) for L in (engine, torch))
    assert our_node == their_node
    # (erfcx' = 2x erfcx - 2/sqrt(pi) and i1e' cancel at large x, their terms O(1): both within 3e-15 of mpmath)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    # float32: within float32's rounding of the float64 values (PyTorch's float32 tables are shorter: it is off
    # by up to 3e-5 in the second derivative, where the terms cancel)
    node32, ours32 = _derivatives(engine, name, "float32", xs, w)
    _, theirs32 = _derivatives(torch, name, "float32", xs, w)
    assert node32 == our_node
    xs32, w32 = (np.array(v, dtype=np.float32).astype(np.float64) for v in (xs, w))
    _, exact = _derivatives(engine, name, "float64", xs32, w32)
    # (relative to the value, and absolute where terms cancel: float32's rounding of them, O(1) for i0e and i1e,
    # O(|x|) in erfcx'' = 2 erfcx + 2x (2x erfcx - 2/sqrt(pi)))
    cancelled = 1e-7 * (1 + 3 * np.abs(xs32))
    for a32, t32, a64 in zip(ours32, theirs32, exact):
        assert a32.dtype == np.float32
        assert np.all(np.abs(a32 - a64) <= 1e-6 * np.abs(a64) + cancelled), (a32, a64)
        assert np.all(np.abs(t32 - a64) <= 1e-4 * np.abs(a64) + cancelled), (t32, a64)


def test_i0_is_a_method_a_function_and_in_place():
    x = engine.tensor([0.5, -2.0, 3.0], dtype=engine.float64, requires_grad=True)
    y = x * 1
    y.i0_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), B.i1(np, np.array([0.5, -2.0, 3.0])), rtol=1e-15)
    np.testing.assert_array_equal(engine.i0(x).detach().numpy(), x.i0().detach().numpy())
    np.testing.assert_array_equal(engine.special.i0(x).detach().numpy(), y.detach().numpy())
    assert engine.i0(engine.tensor([1, 2])).dtype == engine.float32
    with pytest.raises(TypeError, match="must be Tensor"):
        engine.special.i0e([1.0])


@pytest.mark.torch
def test_the_other_bessel_functions_and_airy_need_no_gradient_as_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
                 "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                 "spherical_bessel_j0", "airy_ai"]:
        ours = getattr(engine.special, name)(engine.tensor([0.5, 2.0], requires_grad=True))
        theirs = getattr(torch.special, name)(torch.tensor([0.5, 2.0], requires_grad=True))
        assert ours.requires_grad is theirs.requires_grad is False
        assert ours.grad_fn is None


# ------------------------------------------------------------------ zeta


@pytest.mark.torch
def test_zeta_values_gradient_and_refusal_are_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 20, 400)
    q = rng.uniform(-30, 30, 400)
    x[:80] = np.round(x[:80])  # integer x: defined for a negative non-integer q too
    q[80:100] = np.round(q[80:100])  # poles at the non-positive integers
    x[100:110] = 1.0
    ours = engine.special.zeta(engine.tensor(x), engine.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.tensor(x), torch.tensor(q)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))
    finite = np.isfinite(ours)
    assert finite.sum() > 200
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=2e-14)
    for i in np.nonzero(finite)[0][:40]:  # and the truth
        assert abs(ours[i] - float(mp.zeta(x[i], q[i]))) <= 1e-14 * abs(ours[i])
    # the gradient in q (-x zeta(x + 1, q)), first and second, against PyTorch's
    grads = []
    for L in (engine, torch):
        xs = L.tensor([2.0, 3.5, 7.0], dtype=L.float64)
        qs = L.tensor([0.5, 2.0, 3.25], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.special.zeta(xs, qs).sum(), qs, create_graph=True)
        h, = L.autograd.grad(g.sum(), qs)
        s, = L.autograd.grad(L.special.zeta(2.5, qs).sum(), qs)
        grads.append([g.detach().numpy(), h.numpy(), s.numpy()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    # none in x: refused when asked for, in PyTorch's words
    xs = engine.tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        engine.special.zeta(xs, 2.0).sum().backward()
    # the node's name says which operand was a number, as PyTorch's
    names = []
    for L in (engine, torch):
        t = L.tensor([2.0, 3.0], requires_grad=True)
        names.append([L.special.zeta(t, t + 1).grad_fn.name(), L.special.zeta(2.0, t).grad_fn.name(),
                      L.special.zeta(t, 2.0).grad_fn.name()])
    assert names[0] == names[1] == ["SpecialZetaBackward0", "SpecialZetaBackward1", "SpecialZetaBackward2"]
    # numbers on either side, integers in the default float dtype, two numbers refused
    assert engine.special.zeta(engine.tensor([2, 3]), 1).dtype == engine.float32
    np.testing.assert_allclose(engine.special.zeta(2, engine.tensor([1.0, 2.0])).numpy(),
                               torch.special.zeta(2, torch.tensor([1.0, 2.0])).numpy(), rtol=1e-6)
    assert engine.special.zeta(2.0, engine.tensor([1.0], dtype=engine.float64)).dtype == engine.float64
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        engine.special.zeta(2.0, 3.0)


# ------------------------------------------------------------------ orthogonal polynomials

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.torch
@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polynomials_are_pytorchs_at_random_points_degrees_and_edges(name, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    np_dtype = np.dtype(dtype)
    x = np.concatenate([rng.uniform(-1.6, 1.6, 300), rng.uniform(-0.05, 1.05, 100),
                        [1, -1, 0, 0.5, 1.0000001, -1.0000001, 2, -2, math.inf, -math.inf, 1 - 2 ** -24,
                         1 - 2 ** -53]]).astype(np_dtype)
    n = rng.integers(-2, 40, x.size)
    n[-12:] = [5, 6, 7, 9, 30, 31, 200, 201, 3, 4, 12, 13]
    n_float = n.astype(np_dtype)
    n_float[:5] = [math.nan, math.inf, 3.7, -0.5, 1e30]  # truncated as PyTorch's; NaN, inf, huge: degree < 0
    for degrees in (n, n_float):
        ours = getattr(engine.special, name)(engine.tensor(x), engine.tensor(degrees))
        theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(degrees))
        assert ours.dtype == getattr(engine, str(theirs.dtype).split(".")[1])
        assert not ours.requires_grad
        a, b = ours.numpy(), theirs.numpy()
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
        finite = np.isfinite(a)
        rel = np.abs(a[finite] - b[finite]) / np.maximum(np.abs(b[finite]), 1)
        # (float32: both run the same recurrence in float32, in their own order of operations: near a root the
        # difference is a few float32 roundings of the terms that cancel)
        assert rel.max() <= (1e-12 if dtype == "float64" else 1e-3), x[finite][np.argmax(rel)]
    # a number for x or n, broadcasting, and PyTorch's refusal of two numbers
    row = getattr(engine.special, name)(0.25, engine.tensor([[0, 1, 2, 3]]))
    col = getattr(torch.special, name)(0.25, torch.tensor([[0, 1, 2, 3]]))
    np.testing.assert_allclose(row.numpy(), col.numpy(), rtol=1e-6)
    grid = getattr(engine.special, name)(engine.tensor([[0.1], [0.6]], dtype=engine.float64), 4)
    assert grid.shape == (2, 1) and grid.dtype == engine.float64
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        getattr(engine.special, name)(0.5, 3)


def test_polynomials_against_their_closed_forms_and_a_nan_point():
    x = np.linspace(-0.99, 0.99, 41)
    theta = np.arccos(x)
    for n in (0, 1, 2, 5, 9, 25):
        np.testing.assert_allclose(engine.special.chebyshev_polynomial_t(engine.tensor(x), n).numpy(),
                                   np.cos(n * theta), atol=1e-13)
        np.testing.assert_allclose(engine.special.chebyshev_polynomial_u(engine.tensor(x), n).numpy(),
                                   np.sin((n + 1) * theta) / np.sin(theta), atol=1e-12)
        np.testing.assert_allclose(engine.special.shifted_chebyshev_polynomial_t(engine.tensor((x + 1) / 2), n)
                                   .numpy(), np.cos(n * theta), atol=1e-12)
    # Legendre, Laguerre and Hermite against mpmath's
    for n in (2, 7, 16):
        for name, ref in (("legendre_polynomial_p", mp.legendre), ("laguerre_polynomial_l", mp.laguerre),
                          ("hermite_polynomial_h", mp.hermite)):
            got = getattr(engine.special, name)(engine.tensor(x * 3), n).numpy()
            want = np.array([float(ref(n, v) if name != "laguerre_polynomial_l" else ref(n, 0, v)) for v in x * 3])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    # a NaN point is NaN at every degree past 0 (PyTorch's Hermite, Laguerre, Legendre, W read an unset
    # variable there)
    for name in POLYNOMIALS:
        got = getattr(engine.special, name)(engine.tensor([math.nan] * 4), engine.tensor([0, 1, 2, 3])).tolist()
        assert got[0] == 1.0 and all(math.isnan(v) for v in got[1:]), name
    # Chebyshev's just outside [-1, 1] at a degree past the recurrence's 2^14 steps: the closed form
    y = 1 + 1e-9
    got = engine.special.chebyshev_polynomial_t(engine.tensor([y, -y], dtype=engine.float64), 20001).tolist()
    want = float(mp.cosh(20001 * mp.acosh(mp.mpf(y))))
    assert got == pytest.approx([want, -want], rel=1e-9)


def test_on_the_cupy_stand_in_values_and_gradients_equal_the_cpus(cuda_device):
    """Every function here on the CUDA path (the stand-in: plumbing; a real GPU where the cuda parameter runs):
    the values and gradients the CPU gives, and no read back to the host for the Bessel functions and erfcx
    (zeta and the polynomials read one number: the loop's length)."""
    from tests import fake_cupy

    xs = np.array([-7.5, -2.0, -0.3, 0.0, 0.4, 1.7, 6.0, 11.0])
    for name in sorted(TRUTH) + ["erfcx"]:
        cpu = getattr(engine.special, name)(engine.tensor(xs)).numpy()
        fake_cupy.syncs.clear()
        x = engine.tensor(xs, device=cuda_device, requires_grad=name in ("i0", "i0e", "i1", "i1e", "erfcx"))
        out = getattr(engine.special, name)(x)
        if x.requires_grad:
            out.sum().backward()
        assert fake_cupy.syncs == [], (name, fake_cupy.syncs)  # (on a real GPU nothing records: empty)
        assert out.device.type == "cuda"
        np.testing.assert_allclose(out.detach().cpu().numpy(), cpu, rtol=1e-14, equal_nan=True)
        if x.requires_grad:
            leaf = engine.tensor(xs, requires_grad=True)
            getattr(engine.special, name)(leaf).sum().backward()
            np.testing.assert_allclose(x.grad.cpu().numpy(), leaf.grad.numpy(), rtol=1e-14)
    q = engine.tensor([0.5, 2.0, 3.5], device=cuda_device, requires_grad=True)
    z = engine.special.zeta(engine.tensor([2.0, 3.0, 4.5], device=cuda_device), q)
    z.sum().backward()
    qc = engine.tensor([0.5, 2.0, 3.5], requires_grad=True)
    zc = engine.special.zeta(engine.tensor([2.0, 3.0, 4.5]), qc)
    zc.sum().backward()
    np.testing.assert_allclose(z.detach().cpu().numpy(), zc.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(q.grad.cpu().numpy(), qc.grad.numpy(), rtol=1e-14)
    points = np.linspace(-1.3, 1.3, 12)
    degrees = np.arange(12) % 9
    for name in POLYNOMIALS:
        on_gpu = getattr(engine.special, name)(engine.tensor(points, device=cuda_device),
                                               engine.tensor(degrees, device=cuda_device))
        on_cpu = getattr(engine.special, name)(engine.tensor(points), engine.tensor(degrees))
        assert on_gpu.device.type == "cuda"
        np.testing.assert_allclose(on_gpu.cpu().numpy(), on_cpu.numpy(), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_a_polynomial_of_0d_tensors_is_0d_on_every_device(name, device):
    """As PyTorch's: a 0-dimensional point and degree give a 0-dimensional value (it came back with shape (1,):
    ascontiguousarray, NumPy's and CuPy's, gives a 0-dimensional array one dimension)."""
    f = getattr(engine.special, name)
    x, n = engine.tensor(0.25, device=device), engine.tensor(3.0, device=device)
    assert f(x, n).shape == () and f(x, 3).shape == () and f(0.25, n).shape == ()
    assert f(engine.tensor([0.25], device=device), n).shape == (1,)
    assert f(x, n).item() == f(engine.tensor([0.25], dtype=engine.float32), 3).item()
