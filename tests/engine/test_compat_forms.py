"""PyTorch's top-level functions in ``engine/compat.py`` held to PyTorch 2.13: the ``nn.functional`` ops in their
top-level argument order (``torch.embedding(weight, indices)``, the losses' integer ``reduction``), ``gradient``
(values and gradients, uniform and coordinate spacing, both edge orders), the windows, ``histogram``, ``range``,
DLPack exchange both ways (shared memory), and the refusals of the functions PyTorch removed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5))


_MORE = {shape: RNG.standard_normal(shape) for shape in [(2, 3, 7, 5), (2, 3, 4, 7, 5), (3, 9)]}


def _x(L, shape=(4, 5), rg=False):  # noqa: N803
    t = L.tensor(X if shape == (4, 5) else _MORE[shape], dtype=L.float64)
    return t.requires_grad_() if rg else t


CASES = {
    "gradient": lambda L: _grad_case(L, {}),
    "gradient, spacing per dimension, edge order 2": lambda L: _grad_case(L, {"spacing": [2.0, 0.5], "edge_order": 2}),
    "gradient, coordinates": lambda L: _grad_case(L, {"spacing": (L.tensor([0.0, 1.0, 3.0, 6.0, 7.5],
                                                                           dtype=L.float64),), "dim": 1}),
    "gradient, coordinates, edge order 2": lambda L: _grad_case(L, {"spacing": (L.tensor(
        [0.0, 0.5, 2.0, 2.5], dtype=L.float64),), "dim": 0, "edge_order": 2}),
    "batch_norm": lambda L: L.batch_norm(_x(L), L.ones(5, dtype=L.float64) * 2, None, None, None, True, 0.1, 1e-5,
                                         False),
    "instance_norm": lambda L: L.instance_norm(_x(L).reshape(2, 2, 5), None, None, None, None, True, 0.1, 1e-5,
                                               False),
    "embedding": lambda L: L.embedding(_x(L), L.tensor([[3, 0], [1, 1]])),
    "binary_cross_entropy_with_logits, sum": lambda L: L.binary_cross_entropy_with_logits(
        _x(L), (_x(L) > 0).double(), None, None, 2),
    "cosine_embedding_loss": lambda L: L.cosine_embedding_loss(_x(L), _x(L).flip(0), L.tensor([1, -1, 1, -1]), 0.1, 0),
    "hinge_embedding_loss": lambda L: L.hinge_embedding_loss(_x(L), (_x(L) > 0).double() * 2 - 1),
    "kl_div": lambda L: L.kl_div(_x(L).log_softmax(1), _x(L).softmax(1), 1, log_target=False),
    "losses without a reduction": lambda L: (
        L.kl_div(_x(L), _x(L).abs()), L.hinge_embedding_loss(_x(L), (_x(L) > 0).double()),
        L.triplet_margin_loss(_x(L), _x(L).flip(1), _x(L) * 2), L.margin_ranking_loss(_x(L)[0], _x(L)[1], _x(L)[2]),
        L.binary_cross_entropy_with_logits(_x(L), _x(L).sigmoid())),
    "margin_ranking_loss": lambda L: L.margin_ranking_loss(_x(L)[0], _x(L)[1], L.tensor([1.0, -1, 1, 1, -1],
                                                                                        dtype=L.float64), 0.2, 2),
    "poisson_nll_loss": lambda L: L.poisson_nll_loss(_x(L), _x(L).abs(), True, False, 1e-8, 1),
    "triplet_margin_loss": lambda L: L.triplet_margin_loss(_x(L), _x(L).flip(1), _x(L) * 2),
    "rms_norm": lambda L: L.rms_norm(_x(L), (5,)),
    "pdist": lambda L: L.pdist(_x(L)),
    "channel_shuffle": lambda L: L.channel_shuffle(_x(L).reshape(1, 4, 5), 2),
    "constant_pad_nd": lambda L: L.constant_pad_nd(_x(L), (1, 2), 0.5),
    "adaptive_max_pool1d": lambda L: L.adaptive_max_pool1d(_x(L).reshape(1, 4, 5), 2),
    "max_pool1d_with_indices": lambda L: L.max_pool1d_with_indices(_x(L).reshape(1, 4, 5), 2),
    "adaptive max pools with indices": lambda L: (
        *L.nn.functional.adaptive_max_pool2d(_x(L, (2, 3, 7, 5)), (3, 2), return_indices=True),
        *L.nn.functional.adaptive_max_pool3d_with_indices(_x(L, (2, 3, 4, 7, 5)), (2, 3, 2)),
        *L.nn.AdaptiveMaxPool1d(4, return_indices=True)(_x(L, (3, 9)))),
    "fill": lambda L: L.fill(_x(L), 2.5),
    "range": lambda L: L.range(1, 2.5, 0.5),
    "windows": lambda L: (L.hann_window(7), L.hann_window(7, False), L.hamming_window(6), L.bartlett_window(5),
                          L.blackman_window(8), L.kaiser_window(6, True, 5.0), L.hann_window(1),
                          L.hann_window(4, dtype=L.float64)),
    "histogram": lambda L: tuple(L.histogram(_x(L), 6)) + tuple(L.histogram(_x(L), bins=L.tensor(
        [-3.0, -1.0, 0.0, 2.0], dtype=L.float64), weight=_x(L).abs(), density=True)),
    "frobenius_norm and nuclear_norm": lambda L: (L.frobenius_norm(_x(L), (0, 1)), L.nuclear_norm(_x(L))),
    "empty_strided's strides": lambda L: L.tensor(L.empty_strided((2, 3), (1, 2)).stride()),
}


def _grad_case(L, kwargs):  # noqa: N803
    x = _x(L, rg=True)
    out = L.gradient(x, **kwargs)
    sum(((g * g) * (i + 1)).sum() for i, g in enumerate(out)).backward()
    return (*out, x.grad)


def _parts(out):
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_top_level_function_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (torch.range's deprecation: both warn, checked below)
        theirs, ours = _parts(CASES[name](torch)), _parts(CASES[name](engine))
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[6:] == str(b.dtype)[7:], (a.dtype, b.dtype)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_range_warns_and_includes_its_end():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        assert engine.range(0, 3).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_dlpack_shares_memory_with_pytorch_and_numpy_both_ways():
    torch = pytest.importorskip("torch")
    ours = engine.arange(4.0)
    theirs = torch.from_dlpack(ours)
    theirs[0] = 9.0
    assert ours.tolist() == [9.0, 1.0, 2.0, 3.0]
    t = torch.arange(3.0)
    shared = engine.from_dlpack(t)
    shared[1] = 7.0
    assert t.tolist() == [0.0, 7.0, 2.0]
    assert engine.from_dlpack(torch.utils.dlpack.to_dlpack(t)).tolist() == [0.0, 7.0, 2.0]
    assert np.from_dlpack(engine.ones(2)).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient, use tensor.detach\\(\\)"):
        np.from_dlpack(engine.ones(2, requires_grad=True))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["solve", "eig", "lstsq", "matrix_rank", "symeig"])
def test_removed_functions_refuse_with_pytorchs_message(name):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch, name)(torch.eye(2), torch.eye(2)) if name in ("solve", "lstsq") else getattr(torch, name)(
            torch.eye(2))
    with pytest.raises(RuntimeError) as ours:
        getattr(engine, name)(engine.eye(2))
    assert str(ours.value) == str(theirs.value)


def test_frombuffer_shares_the_buffer():
    buf = bytearray(np.arange(4, dtype=np.float32).tobytes())
    t = engine.frombuffer(buf, dtype=engine.float32)
    t[2] = 10.0
    assert np.frombuffer(buf, dtype=np.float32).tolist() == [0.0, 1.0, 10.0, 3.0]
    assert engine.frombuffer(buf, dtype=engine.float32, count=2, offset=4).tolist() == [1.0, 10.0]
