"""The special functions NumPy has not (engine/functions/special.py; ``torch.special``): held to Python's ``math``
(lgamma, erfc, erf for the inverses) and to identities without torch, to PyTorch where it is installed, with their
gradients checked by ``gradcheck``, and on the CuPy stand-in."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.autograd import gradcheck, gradgradcheck

GRID = np.concatenate([np.linspace(0.01, 12, 97), [0.5, 1.0, 2.0, 3.0, 30.0, 171.5, 1e5],
                       -np.linspace(0.05, 9.95, 41) - 1e-3])


def _t(values, **kw):
    return engine.tensor(np.asarray(values, dtype=np.float64), **kw)


def test_lgamma_is_pythons():
    got = _t(GRID).lgamma().numpy()
    want = np.array([math.lgamma(v) for v in GRID])
    np.testing.assert_allclose(got, want, rtol=2e-13, atol=1e-14)


def test_lgamma_and_digamma_at_their_poles_are_pytorchs():
    x = _t([0.0, -0.0, -1.0, -4.0, np.inf, -np.inf, np.nan])
    assert x.lgamma().tolist()[:6] == [math.inf] * 6 and math.isnan(x.lgamma()[6].item())
    d = x.digamma().tolist()
    assert d[0] == -math.inf and d[1] == math.inf and math.isnan(d[2]) and math.isnan(d[3]) and d[4] == math.inf


def test_digamma_by_its_identities():
    euler = 0.5772156649015329
    assert _t([1.0]).digamma().item() == pytest.approx(-euler, rel=1e-15)
    x = GRID[np.abs(GRID - np.round(GRID)) > 1e-6]
    psi, psi_next = _t(x).digamma().numpy(), _t(x + 1).digamma().numpy()
    np.testing.assert_allclose(psi_next, psi + 1 / x, rtol=1e-12, atol=1e-12)  # psi(x + 1) = psi(x) + 1/x
    np.testing.assert_allclose(_t(1 - x).digamma().numpy() - psi, np.pi / np.tan(np.pi * x), rtol=1e-9,
                               atol=1e-9)  # reflection


def test_polygamma_by_zeta_and_by_differences():
    assert _t([1.0]).polygamma(1).item() == pytest.approx(math.pi ** 2 / 6, rel=1e-14)
    assert _t([1.0]).polygamma(3).item() == pytest.approx(math.pi ** 4 / 15, rel=1e-14)  # 3! zeta(4)
    assert _t([0.5]).polygamma(2).item() == pytest.approx(-14 * 1.2020569031595942, rel=1e-13)  # -2! 7 zeta(3)
    x, h = np.array([0.3, 1.7, 4.2, -0.5, -2.3]), 1e-5
    for n in (1, 2, 3):
        fd = (_t(x + h).polygamma(n - 1).numpy() - _t(x - h).polygamma(n - 1).numpy()) / (2 * h)
        np.testing.assert_allclose(_t(x).polygamma(n).numpy(), fd, rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n."):
        _t([1.0]).polygamma(-1)


def test_erfc_is_pythons_far_into_the_tail():
    x = np.concatenate([np.linspace(-6, 27, 331), [-30.0, 0.0, 1.0, 8.0, 26.5]])
    np.testing.assert_allclose(_t(x).erfc().numpy(), [math.erfc(v) for v in x], rtol=1e-13, atol=0)
    assert _t([np.inf, -np.inf, 30.0]).erfc().tolist() == [0.0, 2.0, 0.0]


def test_erfinv_and_ndtri_invert_erf_and_the_normal_cdf():
    v = np.concatenate([np.linspace(-0.999, 0.999, 201), 1 - np.geomspace(1e-15, 0.4, 40)])
    y = _t(v).erfinv().numpy()
    np.testing.assert_allclose([math.erf(t) for t in y], v, rtol=0, atol=4e-16)
    tails = 1 - v[v > 0.5]  # near 1, the inverse of 1 - erf: erfc(y) is the tail, to its own precision
    np.testing.assert_allclose([math.erfc(t) for t in _t(1 - tails).erfinv().numpy()], tails, rtol=1e-12)
    assert _t([1.0, -1.0, 1.5]).erfinv().tolist()[:2] == [math.inf, -math.inf]
    assert math.isnan(_t([1.5]).erfinv().item())
    p = np.geomspace(1e-300, 0.5, 200)
    q = engine.special.ndtri(_t(p)).numpy()
    np.testing.assert_allclose([0.5 * math.erfc(-t / math.sqrt(2)) for t in q], p, rtol=1e-12)


def test_ndtr_and_log_ndtr_are_pythons():
    x = np.concatenate([np.linspace(-37, 8, 181), [-1e-3, 0.0, 1e-3]])
    want = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    # (far left, x / sqrt(2) rounds by 1e-16 relative, and erfc's exp(-a^2) turns that into ~2 a^2 1e-16: 2e-13)
    np.testing.assert_allclose(engine.special.ndtr(_t(x)).numpy(), want, rtol=3e-13, atol=0)
    left = x <= 0
    np.testing.assert_allclose(engine.special.log_ndtr(_t(x[left])).numpy(), np.log(want[left]), rtol=1e-13)
    right = np.array([5.0, 7.0, 9.0])  # log(1 - tiny): log1p of the tail, not log of a number near 1
    np.testing.assert_allclose(engine.special.log_ndtr(_t(right)).numpy(),
                               [math.log1p(-0.5 * math.erfc(v / math.sqrt(2))) for v in right], rtol=1e-13)
    far = engine.special.log_ndtr(_t([-50.0, -1000.0])).numpy()  # past float64's ndtr: the asymptotic series
    np.testing.assert_allclose(far, [-1254.8313611394199, -500007.82669481218], rtol=1e-14)  # (mpmath, 40 digits)


def test_float32_in_float32_out_and_integers_in_the_default_float():
    x = engine.tensor([0.5, 2.5])
    assert {x.lgamma().dtype, x.digamma().dtype, x.erfc().dtype, (x / 4).erfinv().dtype, x.polygamma(2).dtype} == {
        engine.float32}
    assert engine.tensor([1, 2]).lgamma().dtype == engine.float32
    np.testing.assert_allclose(x.lgamma().numpy(), [math.lgamma(0.5), math.lgamma(2.5)], rtol=1e-6)


@pytest.mark.parametrize("name, fn, values", [
    ("lgamma", lambda t: t.lgamma(), [0.3, 1.7, 4.2, -0.5, -2.3]),
    ("digamma", lambda t: t.digamma(), [0.3, 1.7, 4.2, -0.5, -2.3]),
    ("polygamma 2", lambda t: t.polygamma(2), [0.3, 1.7, 4.2, -0.5]),
    ("mvlgamma 3", lambda t: t.mvlgamma(3), [2.5, 3.0, 7.1]),
    ("erfc", lambda t: t.erfc(), [-2.0, -0.3, 0.4, 1.5, 6.0]),
    ("erfinv", lambda t: t.erfinv(), [-0.9, -0.2, 0.1, 0.6, 0.99]),
    ("ndtri", lambda t: engine.special.ndtri(t), [1e-6, 0.2, 0.5, 0.9]),
    ("log_ndtr", lambda t: engine.special.log_ndtr(t), [-30.0, -21.0, -3.0, 0.0, 2.0]),
    ("ndtr", lambda t: engine.special.ndtr(t), [-3.0, 0.0, 2.0]),
    ("xlog1py", lambda t: engine.special.xlog1py(t, t * 0.5), [0.3, 1.2, 2.0]),
])
def test_gradients_pass_gradcheck(name, fn, values):
    assert gradcheck(fn, (_t(values, requires_grad=True),))


def test_second_derivatives_pass_gradgradcheck():
    assert gradgradcheck(lambda t: t.lgamma(), (_t([0.3, 1.7, -0.5], requires_grad=True),))
    assert gradgradcheck(lambda t: t.erfc(), (_t([-0.3, 0.4, 1.5], requires_grad=True),))


def test_in_place_and_top_level_forms():
    x = _t([0.5, 2.0])
    assert x.lgamma_() is x and x.tolist() == pytest.approx([math.lgamma(0.5), 0.0], abs=1e-15)
    y = _t([1.0, 2.0])
    assert engine.polygamma(1, y).tolist() == pytest.approx([math.pi ** 2 / 6, math.pi ** 2 / 6 - 1], rel=1e-14)
    assert engine.special.gammaln(y).tolist() == pytest.approx([0.0, 0.0], abs=1e-15)
    assert engine.special.psi(y).tolist() == engine.digamma(y).tolist()
    assert engine.special.multigammaln(_t([2.0]), 2).item() == pytest.approx(
        math.lgamma(2.0) + math.lgamma(1.5) + 0.5 * math.log(math.pi), rel=1e-14)
    with pytest.raises(RuntimeError, match=r"All elements must be greater than \(p-1\)/2"):
        _t([0.2]).mvlgamma(2)
    assert engine.special.entr(_t([0.0, 0.5, -1.0])).tolist() == [0.0, pytest.approx(0.5 * math.log(2)), -math.inf]


@pytest.mark.torch
@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfc", "erfinv", "polygamma1", "polygamma2",
                                  "ndtri", "log_ndtr", "ndtr", "entr", "xlog1py", "multigammaln"])
def test_values_and_gradients_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    grids = {"erfinv": np.linspace(-0.999, 0.999, 101), "ndtri": np.geomspace(1e-12, 0.999, 101),
             "log_ndtr": np.linspace(-60, 8, 137), "ndtr": np.linspace(-5, 8, 97), "entr": np.linspace(0.01, 5, 50),
             "xlog1py": np.linspace(0.01, 5, 50), "multigammaln": np.linspace(1.6, 9, 40),
             "erfc": np.linspace(-6, 26, 129)}
    x = grids.get(name, GRID[np.abs(GRID - np.round(GRID)) > 1e-6])
    calls = {"lgamma": lambda L, t: t.lgamma(), "digamma": lambda L, t: t.digamma(), "erfc": lambda L, t: t.erfc(),
             "erfinv": lambda L, t: t.erfinv(), "polygamma1": lambda L, t: L.polygamma(1, t),
             "polygamma2": lambda L, t: L.polygamma(2, t), "ndtri": lambda L, t: L.special.ndtri(t),
             "log_ndtr": lambda L, t: L.special.log_ndtr(t), "ndtr": lambda L, t: L.special.ndtr(t),
             "entr": lambda L, t: L.special.entr(t), "xlog1py": lambda L, t: L.special.xlog1py(t, t - 0.5),
             "multigammaln": lambda L, t: L.special.multigammaln(t, 3)}
    outs = []
    for lib in (torch, engine):
        t = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        out = calls[name](lib, t)
        out.sum().backward()
        outs.append((out.detach().numpy(), t.grad.numpy()))
    (theirs, their_grad), (ours, our_grad) = outs
    rtol = 1e-8 if name.startswith("polygamma") or name == "digamma" else 1e-11  # (PyTorch's trigamma: ~5e-10)
    # (PyTorch's ndtr is (1 + erf(x / sqrt(2))) / 2 in the left tail, ~1e-16 off: its values there are held to
    # Python's erfc in test_ndtr_and_log_ndtr_are_pythons)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-300 if name != "ndtr" else 1e-16)
    np.testing.assert_allclose(our_grad, their_grad, rtol=max(rtol, 1e-8), atol=1e-300)


def test_on_the_cupy_stand_in(simulated_gpu):
    x = engine.tensor([0.3, 1.7, -0.5], dtype=engine.float64, device="cuda", requires_grad=True)
    y = x.lgamma() + x.digamma() + x.polygamma(1) + x.erfc() + (x / 4).erfinv()
    y.sum().backward()
    assert y.device.type == "cuda" and x.grad.device.type == "cuda"
    cpu = engine.tensor([0.3, 1.7, -0.5], dtype=engine.float64, requires_grad=True)
    z = cpu.lgamma() + cpu.digamma() + cpu.polygamma(1) + cpu.erfc() + (cpu / 4).erfinv()
    z.sum().backward()
    np.testing.assert_allclose(y.detach().cpu().numpy(), z.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(x.grad.cpu().numpy(), cpu.grad.numpy(), rtol=1e-14)


def _incomplete_gamma_grid():
    rng = np.random.default_rng(0)
    a = np.concatenate([rng.uniform(0.01, 3, 300), rng.uniform(3, 60, 300), rng.uniform(60, 300, 150)])
    x = np.concatenate([rng.uniform(0, 5, 300), rng.uniform(0, 80, 300), rng.uniform(40, 350, 150)])
    return a, x


def test_the_incomplete_gamma_functions_are_mpmaths():
    """P(a, x) and Q(a, x) (``igamma``/``igammac``, ``special.gammainc``/``gammaincc``) against mpmath's at 40
    digits, over small and large shapes, either side of x = a."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    a, x = _incomplete_gamma_grid()
    p = engine.special.gammainc(_t(a), _t(x)).numpy()
    q = _t(a).igammac(_t(x)).numpy()
    want_p = np.array([float(mpmath.gammainc(mpmath.mpf(ai), 0, mpmath.mpf(xi), regularized=True))
                       for ai, xi in zip(a, x)])
    np.testing.assert_allclose(p, want_p, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(q, 1 - want_p, rtol=1e-10, atol=1e-14)


def test_the_incomplete_gamma_functions_edges_and_refusals():
    a = _t([0.0, 0.0, 1.0, 2.0, -1.0, 3.0, np.inf])
    x = _t([1.0, 0.0, 0.0, np.inf, 1.0, -1.0, 2.0])
    p, q = engine.igamma(a, x).tolist(), engine.igammac(a, x).tolist()
    nan = float("nan")
    assert [v if v == v else nan for v in p][2:4] == [0.0, 1.0] and p[0] == 1.0 and p[6] == 0.0
    assert all(v != v for v in (p[1], p[4], p[5], q[1], q[4], q[5])) and q[0] == 0.0 and q[6] == 1.0
    with pytest.raises(NotImplementedError, match="\"igamma_cpu\" not implemented for 'Long'"):
        engine.tensor([2]).igamma(engine.tensor([3]))
    shape = _t([2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented."):
        engine.igamma(shape, _t([1.0])).backward()
    point = _t([1.5, 0.3], requires_grad=True)
    engine.igammac(_t([2.5, 0.7]), point).sum().backward()  # dQ/dx = -x^(a-1) e^-x / Gamma(a)
    want = [-(v ** (s - 1)) * math.exp(-v) / math.gamma(s) for s, v in ((2.5, 1.5), (0.7, 0.3))]
    assert point.grad.tolist() == pytest.approx(want, rel=1e-14)
    y = _t([0.5, 2.0])
    assert y.igamma_(_t([1.0, 1.0])) is y and y.tolist() == pytest.approx([math.erf(1.0), 1 - 2 / math.e], rel=1e-14)


@pytest.mark.torch
def test_the_incomplete_gamma_functions_are_pytorchs():
    """Within 2e-9: PyTorch's asymptotic series for shapes near x (above 20) is off by ~3e-10 there, where mpmath
    says the engine's series and continued fraction are within 1e-15 (the test above)."""
    torch = pytest.importorskip("torch")
    a, x = _incomplete_gamma_grid()
    for name in ("igamma", "igammac"):
        ours = getattr(engine, name)(_t(a), _t(x)).numpy()
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(x)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=2e-9, atol=1e-9)
