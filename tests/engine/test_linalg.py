"""engine.linalg and the norms: values and gradients against PyTorch 2.13 from the same float64 arrays, against
central differences without it, a zero vector's norm, a singular determinant, refusals, and the CuPy stand-in."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.autograd import gradcheck

RNG = np.random.default_rng(21)
A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)  # well conditioned
B = RNG.standard_normal((2, 3, 2))
V = RNG.standard_normal((2, 3))
M = RNG.standard_normal((3, 4))
M[1] = 0.0  # a zero row: its norms are 0
M[2, 2] = M[2, 3] = 5.0  # a tie for the infinity norm

CASES = {  # name: (arrays, the call with lib = engine or torch)
    "inv": ((A,), lambda lib, a: lib.linalg.inv(a)),
    "inverse": ((A,), lambda lib, a: a.inverse()),
    "det": ((A,), lambda lib, a: lib.linalg.det(a)),
    "det method": ((A,), lambda lib, a: a[0].det()),
    "slogdet": ((A,), lambda lib, a: lib.linalg.slogdet(a).logabsdet * lib.linalg.slogdet(a).sign),
    "logdet": ((A,), lambda lib, a: lib.logdet(a @ a.mT)),
    "solve": ((A, B), lambda lib, a, b: lib.linalg.solve(a, b)),
    "solve a vector": ((A, V), lambda lib, a, v: lib.linalg.solve(a, v)),
    "solve on the right": ((A, B), lambda lib, a, b: lib.linalg.solve(a, b.mT, left=False)),
    "vector_norm": ((M,), lambda lib, m: lib.linalg.vector_norm(m, 3, 1) + lib.linalg.vector_norm(m, 1.5, 1)),
    "norms of a zero row": ((M,), lambda lib, m: lib.stack([m.norm(p, 1) for p in (2, 1, math.inf, -math.inf,
                                                                                   0.5, 3.0)])),
    "matrix_norm": ((A,), lambda lib, a: lib.stack([lib.linalg.matrix_norm(a, o) for o in
                                                    ("fro", 1, -1, math.inf, -math.inf)])),
    "linalg.norm": ((A, M), lambda lib, a, m: lib.stack([lib.linalg.norm(a).reshape(1),
                                                         lib.linalg.norm(m, 1).reshape(1),
                                                         lib.linalg.norm(a, dim=(1, 2))[:1]])),
    "normalize a zero row": ((M,), lambda lib, m: lib.nn.functional.normalize(m, dim=1)),
}


def _run(lib, name):
    arrays, fn = CASES[name]
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return out.detach().cpu().numpy(), [t.grad.cpu().numpy() for t in leaves], out.grad_fn.name()


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    (ours, our_grads, _), (theirs, their_grads, _) = _run(engine, name), _run(torch, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)
    assert not any(np.isnan(g).any() for g in our_grads)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"norms of a zero row", "normalize a zero row",
                                                        "vector_norm"}))
def test_gradients_equal_central_differences(name):
    arrays, fn = CASES[name]
    leaves = [engine.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(engine, *xs), leaves, eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.torch
def test_node_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ("inv", "det", "solve", "solve a vector", "vector_norm"):
        assert _run(engine, name)[2] == _run(torch, name)[2], name
    assert _run(engine, "inv")[2] == "LinalgInvExBackward0"


def test_a_zero_vectors_norm_has_a_zero_gradient_not_nan():
    """sqrt's chain rule at 0 is inf * 0 = NaN; PyTorch's norm gives 0 there, and F.normalize a finite gradient."""
    x = engine.zeros(3, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    y = engine.zeros(2, 3, requires_grad=True)
    engine.nn.functional.normalize(y).sum().backward()
    assert y.grad.tolist() == [[float(np.float32(1e12))] * 3] * 2  # 1 / eps in float32, as PyTorch's
    assert engine.tensor([3.0, 4.0]).norm(np.int64(2)).item() == 5.0  # a NumPy number as the order, as torch takes it
    z = engine.tensor([1.0, 0.0, 2.0], requires_grad=True)
    z.norm(0).backward()
    assert z.grad is None  # the count of nonzeros: no gradient at all, as PyTorch's


def test_a_singular_determinants_gradient_is_its_adjugate():
    """det at a singular matrix of rank n - 1 still moves: its gradient is the adjugate's transpose, which central
    differences confirm (PyTorch 2.13 gives 0 there, from det(A) A^-T with det(A) = 0)."""
    a = engine.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=engine.float64, requires_grad=True)
    d = engine.linalg.det(a)
    d.backward()
    assert d.item() == 0.0
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    s = engine.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=engine.float64, requires_grad=True)
    assert gradcheck(engine.linalg.det, (s,), eps=1e-6, atol=1e-6)


def test_refusals_name_the_problem():
    with pytest.raises(RuntimeError, match="must be batches of square matrices, but they are 3 by 4"):
        engine.linalg.inv(engine.ones(3, 4))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        engine.linalg.det(engine.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        engine.linalg.det(engine.ones(2, 2, dtype=engine.int64))
    with pytest.raises(RuntimeError, match="singular"):
        engine.linalg.inv(engine.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        engine.linalg.solve(engine.eye(3), engine.ones(2, 2))
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        engine.linalg.matrix_norm(engine.eye(2), 3)
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        engine.tensor([1, 2]).norm()


def test_on_the_cupy_stand_in_values_equal_the_cpus_without_a_host_sync(cuda_device):
    from tests import fake_cupy

    for name in ("inv", "det", "slogdet", "solve", "solve a vector", "norms of a zero row", "matrix_norm"):
        cpu, cpu_grads, _ = _run(engine, name)
        arrays, fn = CASES[name]
        leaves = [engine.tensor(a, device=cuda_device, requires_grad=True) for a in arrays]
        fake_cupy.syncs.clear()
        out = fn(engine, *leaves)
        weights = engine.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), device=cuda_device)
        (out * weights).sum().backward()
        assert fake_cupy.syncs == [], (name, fake_cupy.syncs)
        np.testing.assert_allclose(out.detach().cpu().numpy(), cpu, rtol=1e-12)
        for leaf, g in zip(leaves, cpu_grads):
            np.testing.assert_allclose(leaf.grad.cpu().numpy(), g, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------------------------------- decompositions
# Losses that do not depend on the signs LAPACK picks for singular vectors and eigenvectors (a column of U flips
# with its row of Vh, a column of Q with its row of R), so that the engine's NumPy and PyTorch's LAPACK agree.
X53 = RNG.standard_normal((5, 3))
X35 = RNG.standard_normal((3, 5))
XB = RNG.standard_normal((2, 4, 3))
S3 = RNG.standard_normal((3, 3))


def _spd(lib, x):
    return x @ x.mT + 3 * lib.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _flat(lib, *ts):
    return lib.cat([t.reshape(-1) for t in ts])


DECOMPOSITIONS = {
    "cholesky": ((S3,), lambda lib, x: lib.linalg.cholesky(_spd(lib, x))),
    "cholesky upper": ((XB[:, :3],), lambda lib, x: lib.linalg.cholesky(_spd(lib, x), upper=True)),
    "qr tall": ((X53,), lambda lib, x: _flat(lib, *(t * t for t in lib.linalg.qr(x)))),
    "qr wide": ((X35,), lambda lib, x: _flat(lib, *(t * t for t in lib.linalg.qr(x)))),
    "qr batched": ((XB,), lambda lib, x: _flat(lib, *(t ** 3 * t for t in lib.linalg.qr(x)))),
    "eigh": ((S3,), lambda lib, x: _flat(lib, *(lambda w, v: (w * w, v * v))(*lib.linalg.eigh(x + x.mT)))),
    "eigvalsh": ((XB[:, :3],), lambda lib, x: lib.linalg.eigvalsh(x @ x.mT)),
    "eigh upper": ((S3,), lambda lib, x: (lambda w, v: _flat(lib, w, (v @ v.mT * 2) ** 2 * v * v))(
        *lib.linalg.eigh(x + x.mT, UPLO="U"))),
    "svd tall": ((X53,), lambda lib, x: _flat(lib, *(lambda u, s, vh: (u * u, s, vh * vh))(
        *lib.linalg.svd(x, full_matrices=False)))),
    "svd wide": ((X35,), lambda lib, x: _flat(lib, *(lambda u, s, vh: (u * u, s ** 2, vh * vh))(
        *lib.linalg.svd(x, full_matrices=False)))),
    "svd full": ((X53,), lambda lib, x: (lambda u, s, vh: _flat(lib, u[:, :3] ** 2, s, vh ** 2))(*lib.linalg.svd(x))),
    "svd batched, U alone": ((XB,), lambda lib, x: lib.linalg.svd(x, full_matrices=False).U ** 2),
    "svdvals": ((XB,), lambda lib, x: lib.linalg.svdvals(x)),
    "matrix_norm from singular values": ((XB,), lambda lib, x: lib.cat([
        lib.linalg.matrix_norm(x, o).reshape(-1) for o in ("nuc", 2, -2)] + [
        lib.linalg.matrix_norm(x.movedim(0, -1), "nuc", dim=(0, 1), keepdim=True).reshape(-1),
        lib.linalg.norm(x[0], 2).reshape(-1)])),
}


def _run_decomposition(lib, name):
    arrays, fn = DECOMPOSITIONS[name]
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return out.detach().cpu().numpy(), [t.grad.cpu().numpy() for t in leaves]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(DECOMPOSITIONS))
def test_decompositions_values_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    (ours, our_grads), (theirs, their_grads) = _run_decomposition(engine, name), _run_decomposition(torch, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g, h, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", sorted(DECOMPOSITIONS))
def test_decompositions_gradients_equal_central_differences(name):
    arrays, fn = DECOMPOSITIONS[name]
    leaves = [engine.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(engine, *xs), leaves, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_decompositions_rebuild_their_matrix_and_name_their_nodes():
    a = engine.tensor(X53, requires_grad=True)
    u, s, vh = engine.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ vh).detach().numpy(), X53, atol=1e-12)
    assert s.grad_fn.name() == "LinalgSvdBackward0" and (s.detach().numpy() >= 0).all()
    q, r = engine.linalg.qr(a)
    np.testing.assert_allclose((q @ r).detach().numpy(), X53, atol=1e-12)
    assert q.shape == (5, 3) and engine.linalg.qr(a, mode="complete").Q.shape == (5, 5)
    assert engine.linalg.qr(a, mode="r").Q.numel() == 0 and engine.linalg.qr(a, mode="r").R.shape == (3, 3)
    sym = engine.tensor(S3 + S3.T)
    w, v = engine.linalg.eigh(sym)
    np.testing.assert_allclose((v * w.unsqueeze(-2) @ v.mT).numpy(), S3 + S3.T, atol=1e-12)
    assert list(w.numpy()) == sorted(w.numpy())
    low = engine.linalg.cholesky(_spd(engine, engine.tensor(S3)))
    np.testing.assert_allclose((low @ low.mT).numpy(), _spd(engine, engine.tensor(S3)).numpy(), atol=1e-12)
    assert repr(engine.linalg.eigh(sym)).startswith("engine.return_types.linalg_eigh(\neigenvalues=tensor(")


def test_decompositions_refuse_by_name():
    with pytest.raises(RuntimeError, match="not positive-definite"):
        engine.linalg.cholesky(engine.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        engine.linalg.eigh(engine.ones(2, 3))
    with pytest.raises(RuntimeError, match="unrecognized mode 'full'"):
        engine.linalg.qr(engine.ones(2, 2), mode="full")
    a = engine.tensor(X53, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        engine.linalg.qr(a, mode="complete").Q.sum().backward()
    assert not engine.linalg.qr(a, mode="r").R.requires_grad


def test_decompositions_differentiate_twice():
    """Their backward is written in tensor ops: create_graph=True records it (a Hessian-vector product through the
    singular values, against central differences of the first-order gradient)."""
    x = engine.tensor(X35, requires_grad=True)
    v = engine.tensor(RNG.standard_normal((3, 5)))

    def grad_of(t):
        (g,) = engine.autograd.grad((engine.linalg.svdvals(t) ** 3).sum(), t, create_graph=True)
        return g

    (hvp,) = engine.autograd.grad((grad_of(x) * v).sum(), x)
    eps = 1e-6
    plus = grad_of(engine.tensor(X35 + eps * v.numpy(), requires_grad=True)).detach().numpy()
    minus = grad_of(engine.tensor(X35 - eps * v.numpy(), requires_grad=True)).detach().numpy()
    np.testing.assert_allclose(hvp.numpy(), (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_decompositions_on_the_cupy_stand_in_equal_the_cpus(cuda_device):
    for name in ("cholesky", "qr tall", "qr wide", "eigh", "svd tall", "svd wide", "svdvals"):
        cpu, cpu_grads = _run_decomposition(engine, name)
        arrays, fn = DECOMPOSITIONS[name]
        leaves = [engine.tensor(a, device=cuda_device, requires_grad=True) for a in arrays]
        out = fn(engine, *leaves)
        weights = engine.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), device=cuda_device)
        (out * weights).sum().backward()
        np.testing.assert_allclose(out.detach().cpu().numpy(), cpu, rtol=1e-12, atol=1e-13)
        for leaf, g in zip(leaves, cpu_grads):
            np.testing.assert_allclose(leaf.grad.cpu().numpy(), g, rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        engine.linalg.cholesky(engine.tensor([[1.0, 2.0], [2.0, 1.0]], device=cuda_device))


def test_solves_that_broadcast_batches_run_on_the_cupy_stand_in(cuda_device):
    """CuPy's solve broadcasts no batch dimensions (the stand-in holds to that): the engine broadcasts A and B
    itself, for linalg.solve, solve_triangular and cholesky_solve, and the gradients sum back to each input."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    factor = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    cases = {
        "solve": lambda L, x, y, f: L.linalg.solve(x, y),
        "solve_triangular": lambda L, x, y, f: L.linalg.solve_triangular(x, y, upper=False),
        "cholesky_solve": lambda L, x, y, f: L.cholesky_solve(y.expand(2, 3, 2), f),
        "cholesky_solve, batched factor": lambda L, x, y, f: L.cholesky_solve(y, x.tril() + 3 * L.eye(3, dtype=x.dtype,
                                                                                                     device=x.device)),
        "cholesky_inverse": lambda L, x, y, f: L.cholesky_inverse(f),
    }
    for name, fn in cases.items():
        results = []
        for device in ("cpu", cuda_device):
            leaves = [engine.tensor(v, device=device, requires_grad=True) for v in (a, b, factor)]
            out = fn(engine, *leaves)
            out.sum().backward()
            results.append([out.detach().cpu().numpy()] + [leaf.grad.cpu().numpy() for leaf in leaves
                                                            if leaf.grad is not None])
        for mine, cpu in zip(results[1], results[0], strict=True):
            np.testing.assert_allclose(mine, cpu, rtol=1e-12, atol=1e-12, err_msg=name)
