"""torch.linalg of complex matrices, as PyTorch 2.13 has it: the decompositions (``cholesky``, ``qr``, ``eigh``,
``svd``, ``lu``, ``householder_product``) and what is made of them (``pinv``, ``lstsq``, ``cond``, the nuclear and
spectral norms, ``cholesky_solve``/``cholesky_inverse``, ``lu_solve``, ``ormqr``), their gradients PyTorch's
formulas with ``^H`` for ``^T`` (and the terms that only a complex matrix has: the phases of eigenvectors and
singular vectors, which a loss may not depend on, refused in PyTorch's words).

Each loss below is real and does not depend on those phases; its value and its gradients are held to torch's
(where torch is installed) and to central differences of the engine's own forward in each real coordinate of each
complex element. A Hermitian input is built as ``z @ z.mH + 3 I`` or ``z + z.mH`` of a general ``z``, so that a
step in any coordinate of ``z`` keeps it Hermitian, as the decompositions assume."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from engine.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.usefixtures("graph_core")  # compiled and Python recording and walk (conftest.py)

_RNG = np.random.default_rng(11)
LEAVES = {"z": _RNG.normal(size=(3, 3)) + 1j * _RNG.normal(size=(3, 3)),
          "w": _RNG.normal(size=(4, 3)) + 1j * _RNG.normal(size=(4, 3)),
          "b": _RNG.normal(size=(2, 3, 3)) + 1j * _RNG.normal(size=(2, 3, 3))}

_SPD = "(z @ z.mH + 3 * L.eye(3, device=z.device))"
_HER = "(z + z.mH)"

LOSSES = [
    f"L.linalg.cholesky({_SPD}).abs().sum()",
    f"L.linalg.cholesky({_SPD}, upper=True).real.sum()",
    f"(L.linalg.cholesky({_SPD}) * w[:3]).imag.sum()",
    "L.linalg.cholesky(b @ b.mH + 2 * L.eye(3)).real.sum()",
    f"L.linalg.cholesky_ex({_SPD})[0].imag.sum()",
    "L.linalg.qr(w)[0].real.sum() + L.linalg.qr(w)[1].imag.sum()",
    "L.linalg.qr(w.mT)[0].imag.sum() + L.linalg.qr(w.mT)[1].real.sum()",
    "(L.linalg.qr(b)[0].abs() ** 2 * L.arange(3.0)).sum() + L.linalg.qr(b)[1].real.sum()",
    "L.linalg.qr(z, mode='complete')[0].real.sum()",
    f"L.linalg.eigvalsh({_HER}).pow(2).sum()",
    f"L.linalg.eigvalsh({_HER}, UPLO='U').exp().sum()",
    f"(L.linalg.eigh({_HER})[1].abs() ** 2 * L.arange(3.0, device=z.device)).sum()",
    f"(lambda e, v: ((v * e) @ v.mH).real.sum() + e.sum())(*L.linalg.eigh({_HER}))",
    "L.linalg.eigvalsh(b + b.mH).sin().sum()",
    "L.linalg.svdvals(w).sum()",
    "L.linalg.svdvals(b).pow(3).sum()",
    "(L.linalg.svd(w, full_matrices=False)[0].abs() ** 3).sum()",
    "(L.linalg.svd(w.mT, full_matrices=False)[2].abs() ** 3).sum()",
    "(lambda u, s, vh: ((u[:, :3] * s) @ vh).abs().sum())(*L.linalg.svd(w))",
    "(lambda u, s, vh: (u @ vh).real.sum() + (u @ vh).imag.sum())(*L.linalg.svd(w, full_matrices=False))",
    "(lambda u, s, vh: (u @ vh).real.sum())(*L.linalg.svd(w.mT, full_matrices=False))",
    "(lambda u, s, v: (u.abs() ** 2).sum(0).dot(s) + (v.abs() ** 3).sum())(*L.svd(w))",
    "L.linalg.pinv(w).real.sum() + L.linalg.pinv(w.mT).imag.sum()",
    "L.linalg.pinv(z @ z.mH, hermitian=True).real.sum()",
    "L.linalg.lstsq(w, w[:, 0] * 1j).solution.imag.sum()",
    "L.linalg.lstsq(w, w[:, :2] - 1, driver='gelsd').solution.real.sum()",
    "L.linalg.matrix_norm(w, 'nuc') + L.linalg.matrix_norm(w, 2) + L.linalg.matrix_norm(w, -2)",
    "L.linalg.norm(z, 'nuc') * L.linalg.cond(z)",
    "L.linalg.cond(z, 'fro') + L.linalg.cond(z, 1)",
    "L.linalg.cond(z, 'nuc') + L.linalg.cond(w.mT @ w, -2)",
    "L.linalg.matrix_exp(z * 0.5).real.sum() + L.linalg.matrix_exp(b).imag.sum()",
    "L.linalg.solve_triangular(z, w.mT, upper=True).real.sum()",
    "L.linalg.solve_triangular(z, w, upper=False, left=False).imag.sum()",
    "L.linalg.solve_triangular(z, z * 2j, upper=True, unitriangular=True).real.sum()",
    f"L.cholesky_solve(w.mT, L.linalg.cholesky({_SPD})).real.sum()",
    f"L.cholesky_solve(w.mT, L.linalg.cholesky({_SPD}, upper=True), upper=True).imag.sum()",
    f"L.cholesky_inverse(L.linalg.cholesky({_SPD})).real.sum()",
    f"L.cholesky_inverse(L.linalg.cholesky({_SPD}, upper=True), upper=True).abs().sum()",
    "L.linalg.vecdot(z, w[:3]).real.sum() + L.linalg.vecdot(z, w[1:], dim=0).imag.sum()",
    "L.linalg.lu_factor(z)[0].real.sum()",
    "(lambda p, l, u: l.real.sum() + u.imag.sum() + p.real.sum())(*L.linalg.lu(z))",
    "L.linalg.lu_solve(*L.linalg.lu_factor(z), w.mT).real.sum()",
    "L.linalg.lu_solve(*L.linalg.lu_factor(z), w.mT, adjoint=True).imag.sum()",
    "L.linalg.lu_solve(*L.linalg.lu_factor(z), w, left=False).real.sum()",
    "L.linalg.householder_product(w, w[0, :2]).real.sum()",
    "(lambda a, tau: L.ormqr(a, tau, w.mT, transpose=True).real.sum())(*L.geqrf(b[0].detach()))",
    "(lambda a, tau: L.ormqr(a, tau, w, left=False).imag.sum())(*L.geqrf(b[0].detach()))",
    "L.ormqr(w, w[0] * 0.5, z.repeat(2, 1)[:4]).real.sum()",
    "L.linalg.det(L.linalg.cholesky(b @ b.mH + L.eye(3))).real.sum()",
]


def _run(lib, expr, arrays, device="cpu"):
    """The loss's value and each leaf's gradient (None where it has none)."""
    leaves = {k: lib.tensor(a, requires_grad=True, device=device) for k, a in arrays.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        loss = eval(expr, {"L": lib, **leaves})  # noqa: S307 - the test's own expressions
        loss.backward()
    grads = {k: None if t.grad is None else t.grad.detach().cpu().resolve_conj().numpy() for k, t in leaves.items()}
    return float(loss.detach().cpu()), grads


def _value(expr, arrays) -> float:
    with engine.no_grad():
        return float(eval(expr, {"L": engine, **{k: engine.tensor(a) for k, a in arrays.items()}}))  # noqa: S307


def _finite_differences(expr, name, eps=1e-6):
    """dL/dx + i dL/dy of each element of leaf ``name``, by central differences of the engine's forward."""
    base = LEAVES[name]
    grad = np.zeros(base.shape, dtype=base.dtype)
    for k in range(base.size):
        for step in (1.0, 1j):
            moved = []
            for sign in (1, -1):
                a = base.copy()
                a.reshape(-1)[k] += sign * eps * step
                moved.append(_value(expr, {**LEAVES, name: a}))
            grad.reshape(-1)[k] += step * (moved[0] - moved[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("expr", LOSSES)
def test_complex_linalg_gradients_are_central_differences_of_the_forward(expr):
    _, grads = _run(engine, expr, LEAVES)
    assert any(g is not None for g in grads.values())
    for name, g in grads.items():
        if g is not None and np.any(g):
            assert g.dtype == np.complex128, name
            np.testing.assert_allclose(g, _finite_differences(expr, name), rtol=1e-5, atol=1e-6, err_msg=name)


# torch 2.13's backward of cond in the 'fro', 1 and inf norms raises for real matrices too ("one of the variables
# needed for gradient computation has been modified by an inplace operation": its inverse, written in place); the
# engine's gradient is held to central differences above, its value to torch's here
_TORCH_RAISES = {"L.linalg.cond(z, 'fro') + L.linalg.cond(z, 1)"}


@pytest.mark.torch
@pytest.mark.parametrize("expr", LOSSES)
def test_complex_linalg_values_and_gradients_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    if expr in _TORCH_RAISES:
        with torch.no_grad():
            theirs = float(eval(expr, {"L": torch, **{k: torch.tensor(a) for k, a in LEAVES.items()}}))  # noqa: S307
        assert _value(expr, LEAVES) == pytest.approx(theirs, rel=1e-12)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _run(torch, expr, LEAVES)
        return
    (value, grads), (theirs, their_grads) = _run(engine, expr, LEAVES), _run(torch, expr, LEAVES)
    assert value == pytest.approx(theirs, rel=1e-9, abs=1e-12)
    for name in LEAVES:
        assert (grads[name] is None) == (their_grads[name] is None), name
        if grads[name] is not None:
            np.testing.assert_allclose(grads[name], their_grads[name], rtol=1e-8, atol=1e-9, err_msg=name)


@pytest.mark.torch
@pytest.mark.parametrize("expr", [LOSSES[i] for i in (0, 5, 9, 11, 14, 18, 22, 34, 39, 44)])
def test_complex64_linalg_is_pytorchs(expr):
    torch = pytest.importorskip("torch")
    single = {k: a.astype(np.complex64) for k, a in LEAVES.items()}
    (value, grads), (theirs, their_grads) = _run(engine, expr, single), _run(torch, expr, single)
    assert value == pytest.approx(theirs, rel=1e-4, abs=1e-5)
    for name in single:
        if grads[name] is not None:
            assert grads[name].dtype == np.complex64
            np.testing.assert_allclose(grads[name], their_grads[name], rtol=1e-3, atol=1e-4, err_msg=name)


# ------------------------------------------------------------------ what the decompositions give

@pytest.mark.parametrize("dtype", [engine.complex64, engine.complex128])
def test_the_decompositions_of_a_complex_matrix_rebuild_it_with_pytorchs_dtypes(dtype):
    tol = 1e-4 if dtype == engine.complex64 else 1e-12
    z = engine.tensor(LEAVES["z"]).to(dtype)
    w = engine.tensor(LEAVES["w"]).to(dtype)
    real = engine.float32 if dtype == engine.complex64 else engine.float64
    eye = engine.eye(3, dtype=dtype)

    spd = z @ z.mH + 3 * eye
    low = engine.linalg.cholesky(spd)
    assert low.dtype == dtype and bool((low.triu(1) == 0).all())
    assert float((low @ low.mH - spd).abs().max()) < tol * 10
    up = engine.linalg.cholesky(spd, upper=True)
    assert float((up - low.mH).abs().max()) == 0.0

    q, r = engine.linalg.qr(w)
    assert (q.dtype, r.dtype, tuple(q.shape), tuple(r.shape)) == (dtype, dtype, (4, 3), (3, 3))
    assert float((q @ r - w).abs().max()) < tol * 10 and float((q.mH @ q - eye).abs().max()) < tol * 10

    her = z + z.mH
    values, vectors = engine.linalg.eigh(her)
    assert values.dtype == real and vectors.dtype == dtype  # (a Hermitian matrix's eigenvalues are real)
    assert engine.linalg.eigvalsh(her).dtype == real
    assert float(((vectors * values) @ vectors.mH - her).abs().max()) < tol * 10
    assert values.tolist() == sorted(values.tolist())

    u, s, vh = engine.linalg.svd(w, full_matrices=False)
    assert (u.dtype, s.dtype, vh.dtype) == (dtype, real, dtype)
    assert float(((u * s) @ vh - w).abs().max()) < tol * 10
    assert engine.linalg.svdvals(w).dtype == real and engine.linalg.matrix_norm(w, "nuc").dtype == real
    u_full, _, vh_full = engine.linalg.svd(w)
    assert tuple(u_full.shape) == (4, 4) and tuple(vh_full.shape) == (3, 3)
    _, _, v = engine.svd(w)  # (torch.svd's V is Vh's conjugate transpose)
    assert float((v - vh.mH).abs().max()) == 0.0

    assert float((w @ engine.linalg.pinv(w) @ w - w).abs().max()) < tol * 10
    assert int(engine.linalg.matrix_rank(w)) == 3 and engine.linalg.matrix_rank(w).dtype == engine.int64
    assert engine.linalg.cond(z).dtype == real
    assert engine.linalg.vecdot(z, z).dtype == dtype
    np.testing.assert_allclose(engine.linalg.vecdot(z, z).numpy().imag, 0, atol=tol)  # x^H x: real


def test_vecdot_conjugates_its_first_argument_as_pytorchs():
    x, y = engine.tensor([1j, 2.0 + 0j]), engine.tensor([1j, 1.0 + 0j])
    assert engine.linalg.vecdot(x, y).item() == 3 + 0j  # conj(1j) * 1j + 2 * 1
    assert engine.linalg.vecdot(engine.tensor([1.0, 2.0]), engine.tensor([3.0, 4.0])).item() == 11.0


def test_lstsq_residuals_of_a_complex_system_are_real_squares():
    a, b = engine.tensor(LEAVES["w"]), engine.tensor(LEAVES["w"][:, 0] + 1j)
    result = engine.linalg.lstsq(a, b, driver="gelsd")
    assert result.residuals.dtype == engine.float64
    x = result.solution
    assert result.residuals.item() == pytest.approx(float(((a @ x - b).abs() ** 2).sum()), rel=1e-10)
    exact = np.linalg.lstsq(a.numpy(), b.numpy(), rcond=None)[0]
    np.testing.assert_allclose(x.numpy(), exact, atol=1e-12)


@pytest.mark.torch
def test_lstsq_residuals_are_pytorchs():
    torch = pytest.importorskip("torch")
    got = engine.linalg.lstsq(engine.tensor(LEAVES["w"]), engine.tensor(LEAVES["w"][:, :1] + 1j), driver="gelsd")
    theirs = torch.linalg.lstsq(torch.tensor(LEAVES["w"]), torch.tensor(LEAVES["w"][:, :1] + 1j), driver="gelsd")
    assert str(got.residuals.dtype).split(".")[1] == str(theirs.residuals.dtype).split(".")[1]
    np.testing.assert_allclose(got.residuals.numpy(), theirs.residuals.numpy(), rtol=1e-10)
    np.testing.assert_allclose(got.singular_values.numpy(), theirs.singular_values.numpy(), rtol=1e-12)


def test_geqrf_and_householder_product_give_qrs_q_of_a_complex_matrix():
    a, tau = engine.geqrf(engine.tensor(LEAVES["w"]))
    assert a.dtype == tau.dtype == engine.complex128
    q = engine.linalg.householder_product(a, tau)
    q_ref, r_ref = np.linalg.qr(LEAVES["w"])
    np.testing.assert_allclose(q.numpy(), q_ref, atol=1e-12)
    np.testing.assert_allclose(np.triu(a.numpy()[:3]), r_ref, atol=1e-12)
    c = engine.tensor(LEAVES["z"][:, :2].repeat(2, axis=0)[:4])
    complete = np.linalg.qr(LEAVES["w"], mode="complete")[0]
    np.testing.assert_allclose(engine.ormqr(a, tau, c, transpose=True).numpy(), complete.conj().T @ c.numpy(),
                               atol=1e-12)  # (transpose: Q's conjugate transpose)


# ------------------------------------------------------------------ the phases a loss may not depend on

PHASES = [
    ("L.linalg.svd(w)[0].real.sum()", "svd_backward: The singular vectors in the complex case are specified up to "
                                      "multiplication by e^{i phi}. The specified loss function depends on this "
                                      "phase term, making it ill-defined."),
    ("L.linalg.svd(w, full_matrices=False)[2].imag.sum()", "svd_backward: The singular vectors in the complex case"),
    ("L.svd(z)[2].real.sum()", "svd_backward: The singular vectors in the complex case"),
    (f"L.linalg.eigh({_HER})[1].real.sum()", "linalg_eigh_backward: The eigenvectors in the complex case are "
                                             "specified up to multiplication by e^{i phi}. The specified loss "
                                             "function depends on this quantity, so it is ill-defined."),
    ("L.linalg.eig(z)[1].imag.sum()", "linalg_eig_backward: The eigenvectors in the complex case are specified up "
                                      "to multiplication by e^{i phi}."),
]


@pytest.mark.parametrize(("expr", "words"), PHASES)
def test_a_loss_that_depends_on_a_vectors_phase_is_refused_in_pytorchs_words(expr, words):
    with pytest.raises(RuntimeError) as caught:
        _run(engine, expr, LEAVES)
    assert str(caught.value).startswith(words)


@pytest.mark.torch
@pytest.mark.parametrize(("expr", "words"), PHASES)
def test_pytorch_refuses_the_same_losses_in_the_same_words(expr, words):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as caught:
        _run(engine, expr, LEAVES)
    with pytest.raises(RuntimeError) as theirs:
        _run(torch, expr, LEAVES)
    assert str(theirs.value) == str(caught.value)


def test_a_real_matrix_has_no_phase_to_refuse():
    """Of a real matrix, the singular vectors' signs are its only freedom, and a loss of them is taken as PyTorch
    takes it (no check): the real part of U is U."""
    a = engine.tensor(LEAVES["w"].real, requires_grad=True)
    engine.linalg.svd(a)[0].sum().backward()
    assert a.grad is not None and bool(a.grad.isfinite().all())


# ------------------------------------------------------------------ second derivatives

SECOND = {
    "cholesky": ("z", lambda z: engine.linalg.cholesky(z @ z.mH + 3 * engine.eye(3))),
    "cholesky, upper": ("z", lambda z: engine.linalg.cholesky(z @ z.mH + 3 * engine.eye(3), upper=True)),
    "qr of a tall matrix": ("w", lambda w: engine.linalg.qr(w)),
    "qr of a wide matrix": ("w", lambda w: engine.linalg.qr(w.mT)),
    "eigvalsh": ("z", lambda z: engine.linalg.eigvalsh(z + z.mH)),
    "eigenvector moduli": ("z", lambda z: engine.linalg.eigh(z + z.mH)[1].abs()),
    "svdvals": ("w", lambda w: engine.linalg.svdvals(w)),
    "U S Vh": ("w", lambda w: (lambda u, s, vh: (u * s) @ vh)(*engine.linalg.svd(w, full_matrices=False))),
    "pinv": ("w", lambda w: engine.linalg.pinv(w)),
    "cholesky_solve": ("z", lambda z: engine.cholesky_solve(z, engine.linalg.cholesky(z @ z.mH + 3 * engine.eye(3)))),
    "cholesky_inverse": ("z", lambda z: engine.cholesky_inverse(engine.linalg.cholesky(z @ z.mH + 3 * engine.eye(3)))),
    "householder_product": ("w", lambda w: engine.linalg.householder_product(w, w[0, :2])),
    "lu": ("z", lambda z: engine.linalg.lu(z)[1:]),
    "lstsq": ("w", lambda w: engine.linalg.lstsq(w, w[:, :1] * 2j)[0]),
}


@pytest.mark.parametrize("name", SECOND)
def test_second_derivatives_of_complex_decompositions_are_central_differences(name):
    leaf, fn = SECOND[name]
    x = engine.tensor(LEAVES[leaf], requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("upper", [False, True])
def test_a_real_cholesky_factors_second_derivative_follows_the_factor_back(upper):
    """The upper factor is the output the node hands on; it was the lower one that was saved, which no second
    derivative could follow back to A (gradgradcheck said False)."""
    x = engine.tensor(LEAVES["z"].real, requires_grad=True)
    assert gradgradcheck(lambda z: engine.linalg.cholesky(z @ z.mT + 3 * engine.eye(3), upper=upper), (x,))


@pytest.mark.torch
@pytest.mark.parametrize("expr", [LOSSES[i] for i in (0, 1, 5, 6, 9, 11, 14, 16, 18, 22, 34, 36)])
def test_complex_second_derivatives_are_pytorchs(expr):
    """The gradient of |grad|^2: a second derivative through each decomposition's backward."""
    torch = pytest.importorskip("torch")

    def run(lib):
        leaves = {k: lib.tensor(a, requires_grad=True) for k, a in LEAVES.items()}
        loss = eval(expr, {"L": lib, **leaves})  # noqa: S307
        used = [t for t in leaves.values()]
        grads = lib.autograd.grad(loss, used, create_graph=True, allow_unused=True)
        total = sum((g.abs() ** 2).sum() for g in grads if g is not None)
        seconds = lib.autograd.grad(total, used, allow_unused=True)
        return [None if g is None else g.detach().resolve_conj().numpy() for g in seconds]

    for ours, theirs in zip(run(engine), run(torch), strict=True):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-8)


# ------------------------------------------------------------------ refusals

def test_ormqr_wants_all_of_geqrfs_reflectors_as_pytorch_213():
    a, tau = engine.geqrf(engine.randn(4, 3, dtype=engine.float64))
    with pytest.raises(RuntimeError, match=r"torch.ormqr: tau.shape\[-1\] must be equal to min\(other.shape\[-2\], "
                                           r"input.shape\[-1\]\)"):
        engine.ormqr(a, tau[:2], engine.randn(4, 2, dtype=engine.float64))
    with pytest.raises(RuntimeError, match=r"min\(other.shape\[-1\], input.shape\[-1\]\)"):
        engine.ormqr(a, tau[:2], engine.randn(2, 4, dtype=engine.float64), left=False)


def test_an_integer_matrix_is_still_refused_by_name():
    with pytest.raises(RuntimeError, match="linalg.svd: Expected a floating point or complex tensor as input. Got "
                                           "Long"):
        engine.linalg.svd(engine.ones(2, 2, dtype=engine.int64))


def test_a_complex_matrix_that_is_not_positive_definite_is_refused():
    with pytest.raises(RuntimeError, match="linalg.cholesky: The factorization could not be completed because the "
                                           "input is not positive-definite"):
        engine.linalg.cholesky(engine.tensor([[1.0 + 0j, 2j], [-2j, 1.0 + 0j]]))


# ------------------------------------------------------------------ on a GPU (the stand-in, or a real one)

@pytest.mark.parametrize("expr", [LOSSES[i] for i in (0, 1, 5, 9, 11, 14, 18, 22, 34, 38, 41)])
def test_complex_linalg_on_a_gpu_is_the_cpus(expr, device):
    value, grads = _run(engine, expr, LEAVES, device)
    on_cpu, cpu_grads = _run(engine, expr, LEAVES)
    assert value == pytest.approx(on_cpu, rel=1e-9)
    for name, g in grads.items():
        assert (g is None) == (cpu_grads[name] is None)
        if g is not None:
            np.testing.assert_allclose(g, cpu_grads[name], rtol=1e-8, atol=1e-9)


def test_a_failed_complex_factorization_on_a_gpu_is_refused(device):
    with pytest.raises(RuntimeError, match="not positive-definite"):
        engine.linalg.cholesky(engine.tensor([[1.0 + 0j, 2j], [-2j, 1.0 + 0j]], device=device))
