"""``logcumsumexp``, ``nansum``, ``linalg.cross`` and ``addmm``'s siblings (``addmv``, ``addr``, ``baddbmm``,
``addbmm``), the moves (``pixel_shuffle``, ``pixel_unshuffle``, ``channel_shuffle``, ``rot90``) and ``block_diag``
are one node each, as PyTorch's (their graphs and torch
comparisons are in test_composite_graphs.py); here their values and gradients worked out by hand, on each device
(CuPy's ``ufunc.accumulate`` takes only add and multiply, so a GPU runs ``logcumsumexp``'s steps a slice at a
time), and the cost that one node saves.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine
from tests.engine.helpers import walk


def test_logcumsumexp_is_exact_however_far_apart_the_terms(device):
    x = engine.tensor([[-1000.0, 0.0, -1000.0, 800.0], [float("-inf"), 1.0, 1.0, float("-inf")]],
                      dtype=engine.float64, device=device, requires_grad=True)
    y = x.logcumsumexp(1)
    want = [[-1000.0, 0.0, 0.0, 800.0], [float("-inf"), 1.0, 1.0 + math.log(2.0), 1.0 + math.log(2.0)]]
    np.testing.assert_allclose(y.detach().cpu().numpy(), want, rtol=1e-15, atol=0)
    assert y.grad_fn.name() == "LogcumsumexpBackward0" and len(y.grad_fn.next_functions) == 1
    # d/dx_j of sum_i w_i y_i = sum_{i >= j} w_i exp(x_j - y_i); with w = 1 on row 1: x_1 = x_2 = 1. Where x_j
    # and y_j are both -inf, PyTorch's log-space formula gives NaN (exp(-inf - -inf)), and so does the engine's
    y.backward(engine.tensor([[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]], dtype=engine.float64, device=device))
    g = x.grad.cpu().numpy()
    assert g[0].tolist() == [0.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(g[1], [float("nan"), 1.0 + 0.5 + 0.5, 0.5 + 0.5, 0.0], rtol=1e-15, atol=0)


def test_logcumsumexp_of_a_number_and_of_nothing(device):
    x = engine.tensor(2.5, device=device, requires_grad=True)
    y = x.logcumsumexp(0)
    assert y.item() == 2.5 and y.grad_fn.name() == "LogcumsumexpBackward0"
    y.backward()
    assert x.grad.item() == 1.0
    assert engine.zeros(0, 3, device=device).logcumsumexp(0).shape == (0, 3)


def test_nansum_skips_nan_in_its_value_and_its_gradient(device):
    x = engine.tensor([[1.0, float("nan"), 2.0], [float("nan"), float("nan"), 4.0]], device=device,
                      requires_grad=True)
    y = x.nansum(1)
    assert y.tolist() == [3.0, 4.0] and y.grad_fn.name() == "NansumBackward0"
    y.backward(engine.tensor([2.0, -3.0], device=device))
    assert x.grad.tolist() == [[2.0, 0.0, 2.0], [-0.0, -0.0, -3.0]]
    assert engine.tensor([1, 2, 3], device=device).nansum().item() == 6  # (integers: their sum)


def test_cross_of_the_axes_and_its_gradient(device):
    e = engine.eye(3, dtype=engine.float64, device=device)
    a = e.clone().requires_grad_()
    b = e.roll(1, 0).clone().requires_grad_()  # (e3, e1, e2)
    y = engine.linalg.cross(a, b)  # e1 x e3 = -e2, e2 x e1 = -e3, e3 x e2 = -e1
    assert y.tolist() == [[0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]]
    g = engine.tensor([[1.0, 2.0, 3.0]] * 3, dtype=engine.float64, device=device)
    y.backward(g)
    # d/da <g, a x b> = b x g; d/db = g x a
    gv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(a.grad.cpu().numpy(), np.cross(np.roll(np.eye(3), 1, 0), gv))
    np.testing.assert_array_equal(b.grad.cpu().numpy(), np.cross(gv, np.eye(3)))


def test_cross_broadcasts_and_sums_the_gradient_back(device):
    a = engine.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], device=device, requires_grad=True)
    b = engine.tensor([[0.0, 0.0, 2.0]], device=device, requires_grad=True)
    y = engine.cross(a, b, dim=1)
    assert y.tolist() == [[0.0, -2.0, 0.0], [2.0, 0.0, 0.0]]
    y.sum().backward()
    assert b.grad.shape == (1, 3)
    assert b.grad.tolist() == [[-1.0, 1.0, 0.0]]  # sum over rows of ones x a_row: (1,1,1) x e1 + (1,1,1) x e2
    with pytest.raises(RuntimeError, match="inputs must have the same number of dimensions"):
        engine.linalg.cross(a, b[0])


def test_logcumsumexp_records_one_node_however_long():
    x = engine.randn(4, 500, requires_grad=True)
    y = x.logcumsumexp(1)
    seen, stack = set(), [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            stack.extend(n for n, _ in node.next_functions)
    assert len(seen) == 2  # the node and the leaf's AccumulateGrad (it was 500 logaddexp nodes and a cat)


@pytest.mark.parametrize("kind", ["addmv", "addr", "baddbmm", "addbmm"])
def test_addmms_siblings_add_the_scaled_product_and_its_gradients(kind, device):
    """``beta * input + alpha * product`` and the gradients of sum(g * out): beta * g (summed over what the input
    broadcast), alpha * g times the other factor transposed; NumPy's sums, in float64."""
    rs = np.random.default_rng(4)
    shapes = {"addmv": ((1,), (2, 3), (3,)), "addr": ((3,), (2,), (3,)), "baddbmm": ((2, 2, 4), (2, 2, 3), (2, 3, 4)),
              "addbmm": ((4,), (2, 2, 3), (2, 3, 4))}[kind]
    arrays = [rs.standard_normal(s) for s in shapes]
    ins = [engine.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = getattr(engine, kind)(*ins, beta=0.5, alpha=-2.0)
    c, a, b = arrays
    product = {"addmv": lambda: a @ b, "addr": lambda: np.outer(a, b), "baddbmm": lambda: a @ b,
               "addbmm": lambda: (a @ b).sum(0)}[kind]()
    np.testing.assert_allclose(out.detach().cpu().numpy(), 0.5 * c - 2.0 * product, rtol=1e-13, atol=1e-13)
    assert out.grad_fn.name() == {"addmv": "AddmvBackward0", "addr": "AddrBackward0", "baddbmm": "BaddbmmBackward0",
                                  "addbmm": "AddbmmBackward0"}[kind]
    g = rs.standard_normal(out.shape)
    out.backward(engine.tensor(g, device=device))
    gc = 0.5 * g
    while gc.ndim > c.ndim:
        gc = gc.sum(0)
    gc = gc.sum(tuple(i for i, n in enumerate(c.shape) if n == 1), keepdims=True)
    if kind == "addmv":
        ga, gb = -2.0 * np.outer(g, b), -2.0 * a.T @ g
    elif kind == "addr":
        ga, gb = -2.0 * g @ b, -2.0 * g.T @ a
    else:
        gg = np.broadcast_to(g, (a.shape[0],) + g.shape) if kind == "addbmm" else g
        ga, gb = -2.0 * gg @ b.transpose(0, 2, 1), -2.0 * a.transpose(0, 2, 1) @ gg
    for t, want in zip(ins, (gc, ga, gb), strict=True):
        np.testing.assert_allclose(t.grad.cpu().numpy(), want, rtol=1e-12, atol=1e-12)


def test_addmms_siblings_refuse_in_pytorchs_words():
    m, v = engine.ones(2, 3), engine.ones(3)
    cases = [(lambda: engine.addmv(engine.ones(3), m, v), "size mismatch, got input (3), mat (2x3), vec (3)"),
             (lambda: engine.addmv(engine.ones(2), m, v.double()),
              "addmv input tensors must have the same dtype, but got Float, Float, and Double"),
             (lambda: engine.addmv(engine.ones(2), v, v), "vector + matrix @ vector expected, got 1, 1, 1"),
             (lambda: engine.addr(m, v, v), "The expanded size of the tensor (3) must match the existing size (2) at "
                                            "non-singleton dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]"),
             (lambda: engine.addbmm(engine.ones(2, 4), engine.ones(2, 2, 3), engine.ones(2, 4, 4)),
              "Incompatible matrix sizes for bmm (2x3 and 4x4)"),
             (lambda: engine.baddbmm(engine.ones(2, 2, 4), engine.ones(2, 2, 3), engine.ones(3, 3, 4)),
              "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
             (lambda: engine.addbmm(engine.ones(2, 4), engine.ones(2, 2, 3), engine.ones(2, 2, 3)),
              "The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 1.  "
              "Target sizes: [2, 3].  Tensor sizes: [2, 4]")]
    for call, words in cases:
        with pytest.raises(RuntimeError) as caught:
            call()
        assert str(caught.value) == words


def test_the_moves_put_each_element_where_pytorch_puts_it_and_move_the_gradient_back(device):
    F = engine.nn.functional
    x = engine.arange(16.0, device=device).reshape(1, 4, 2, 2).requires_grad_()
    y = F.pixel_shuffle(x, 2)  # out[c, h*2 + i, w*2 + j] = x[c*4 + i*2 + j, h, w]
    assert y.tolist() == [[[[0.0, 4.0, 1.0, 5.0], [8.0, 12.0, 9.0, 13.0], [2.0, 6.0, 3.0, 7.0],
                            [10.0, 14.0, 11.0, 15.0]]]]
    assert F.pixel_unshuffle(y, 2).tolist() == x.tolist()
    y.backward(engine.arange(16.0, device=device).reshape(1, 1, 4, 4))
    assert x.grad.tolist() == F.pixel_unshuffle(engine.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    c = engine.arange(6.0, device=device).reshape(1, 6, 1).requires_grad_()
    shuffled = F.channel_shuffle(c, 2)  # channel g * 3 + i goes to i * 2 + g
    assert shuffled.flatten().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    shuffled.backward(engine.tensor([[[10.0], [11.0], [12.0], [13.0], [14.0], [15.0]]], device=device))
    assert c.grad.flatten().tolist() == [10.0, 12.0, 14.0, 11.0, 13.0, 15.0]
    m = engine.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    r = m.rot90()
    assert r.tolist() == [[2.0, 4.0], [1.0, 3.0]] and not r.is_contiguous()  # (a transposed copy, as PyTorch's)
    r.backward(engine.tensor([[1.0, 2.0], [3.0, 4.0]], device=device))
    assert m.grad.tolist() == [[3.0, 1.0], [4.0, 2.0]]  # the gradient turned back


def test_block_diag_places_each_block_and_gives_each_its_own_gradient(device):
    a = engine.tensor([[1.0, 2.0]], device=device, requires_grad=True)
    v = engine.tensor([3.0, 4.0], dtype=engine.float64, device=device, requires_grad=True)
    s = engine.tensor(5.0, dtype=engine.float64, device=device, requires_grad=True)
    out = engine.block_diag(a, v, s)
    assert out.dtype == engine.float64 and out.grad_fn.name() == "BlockDiagBackward0"
    assert out.tolist() == [[1.0, 2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0, 5.0]]
    out.backward(engine.arange(15.0, dtype=engine.float64, device=device).reshape(3, 5))
    assert a.grad.dtype == engine.float32 and a.grad.tolist() == [[0.0, 1.0]]
    assert v.grad.tolist() == [7.0, 8.0] and s.grad.item() == 14.0


def test_prelu_scales_the_negatives_by_their_channels_weight_and_sums_its_gradient(device):
    x = engine.tensor([[[-1.0, 2.0]], [[3.0, -4.0]]], device=device, requires_grad=True)  # (2, 1, 2): one channel
    w = engine.tensor([0.25], device=device, requires_grad=True)
    y = engine.nn.functional.prelu(x, w)
    assert y.tolist() == [[[-0.25, 2.0]], [[3.0, -1.0]]] and y.grad_fn.name() == "PreluKernelBackward0"
    y.backward(engine.tensor([[[1.0, 1.0]], [[2.0, 3.0]]], device=device))
    assert x.grad.tolist() == [[[0.25, 1.0]], [[2.0, 0.75]]]
    assert w.grad.tolist() == [-1.0 * 1.0 + -4.0 * 3.0]  # the negatives times their gradients, summed
    with pytest.raises(RuntimeError, match="^Mismatch of parameter numbers and input channel size. Found parameter "
                                           "numbers = 3 and channel size = 1.$"):
        engine.nn.functional.prelu(x, engine.ones(3, device=device))


# distances: (expression, torch 2.13's graph); x: (5, 3), y: (4, 3), big: (30, 3), xb: (2, 5, 3), float64
DISTANCES = [
    ("torch.cdist(x, y)", "CdistBackward0(Acc,Acc)"), ("torch.cdist(x, y, p=1)", "CdistBackward0(Acc,Acc)"),
    ("torch.cdist(x, y, p=3)", "CdistBackward0(Acc,Acc)"), ("torch.cdist(x, y, p=0.5)", "CdistBackward0(Acc,Acc)"),
    ("torch.cdist(x, y, p=float('inf'))", "CdistBackward0(Acc,Acc)"),
    ("torch.cdist(x, y, p=0)", "CdistBackward0(Acc,Acc)"),
    ("torch.cdist(xb, y, p=1.5)", "CdistBackward0(Acc,Acc)"),
    ("torch.cdist(big, y)", "ViewBackward0(EuclideanDistBackward0(Acc,Acc))"),
    ("torch.cdist(x, y, compute_mode='use_mm_for_euclid_dist')", "ViewBackward0(EuclideanDistBackward0(Acc,Acc))"),
    ("torch.cdist(big, y, compute_mode='donot_use_mm_for_euclid_dist')", "CdistBackward0(Acc,Acc)"),
    ("torch.cdist(big[None].expand(2, 30, 3), y)",
     "ViewBackward0(EuclideanDistBackward0(ViewBackward0(CloneBackward0(ExpandBackward0(ExpandBackward0("
     "UnsqueezeBackward0(Acc))))),ViewBackward0(CloneBackward0(ExpandBackward0(Acc)))))"),
    ("torch.dist(x, y[:1])", "DistBackward0(Acc,SliceBackward0(Acc))"),
    ("torch.dist(x, y[0], 3)", "DistBackward0(Acc,SelectBackward0(Acc))"),
    ("x.dist(y[0], float('inf'))", "DistBackward0(Acc,SelectBackward0(Acc))"),
    ("torch.nn.functional.pdist(x)", "PdistBackward0(Acc)"), ("torch.nn.functional.pdist(x, 1)", "PdistBackward0(Acc)"),
    ("torch.nn.functional.pdist(x, 3)", "PdistBackward0(Acc)"),
    ("torch.nn.functional.pdist(x, float('inf'))", "PdistBackward0(Acc)"),
]


def _distance_names(torch):
    rs = np.random.RandomState(11)
    return {"torch": torch, **{k: torch.tensor(rs.standard_normal(s), requires_grad=True)
                               for k, s in (("x", (5, 3)), ("y", (4, 3)), ("big", (30, 3)), ("xb", (2, 5, 3)))}}


@pytest.mark.parametrize(("expression", "graph"), DISTANCES, ids=[e for e, _ in DISTANCES])
def test_each_distance_is_one_node_as_pytorchs(expression, graph):
    out = eval(expression, _distance_names(engine))  # noqa: S307 - the table's own expressions
    assert walk(out.grad_fn) == graph


def _first_order_against_torch(expression, names_of, leaf_names, graph):
    """Run ``expression`` in both libraries: the same graph (``graph``), values and first derivatives (of a fixed
    weighting of the output) with respect to ``leaf_names``."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (engine, torch):
        names = names_of(lib)
        out = eval(expression, names)  # noqa: S307 - the tables' own expressions
        weights = lib.tensor(np.cos(np.arange(out.numel()) + 0.5).reshape(tuple(out.shape)))
        grads = lib.autograd.grad(out, [names[k] for k in leaf_names], weights, allow_unused=True)
        results.append((walk(out.grad_fn), tuple(out.shape), out.detach().numpy(),
                        [None if g is None else g.numpy() for g in grads]))
    assert results[0][0] == results[1][0] == graph and results[0][1] == results[1][1]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12, atol=1e-12)
    for mine, theirs in zip(results[0][3], results[1][3], strict=True):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            np.testing.assert_allclose(mine, theirs, rtol=1e-11, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize(("expression", "graph"), DISTANCES, ids=[e for e, _ in DISTANCES])
def test_each_distance_its_value_and_gradients_are_torchs(expression, graph):
    """The values and first derivatives (PyTorch refuses the second of cdist and pdist; the engine gives it)."""
    _first_order_against_torch(expression, _distance_names, ("x", "y", "big", "xb"), graph)


def test_distances_by_hand(device):
    x = engine.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=engine.float64, device=device, requires_grad=True)
    y = engine.tensor([[0.0, 0.0]], dtype=engine.float64, device=device, requires_grad=True)
    d = engine.cdist(x, y)
    assert d.tolist() == [[0.0], [5.0]]
    d.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [0.6, 0.8]]  # a zero distance's gradient is 0, as PyTorch's
    assert y.grad.tolist() == [[-0.6, -0.8]]
    p = engine.nn.functional.pdist(engine.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]], device=device), 1)
    assert p.tolist() == [7.0, 14.0, 7.0]  # pairs (0, 1), (0, 2), (1, 2)
    many = engine.tensor(np.arange(60.0).reshape(30, 2) / 10, dtype=engine.float64, device=device, requires_grad=True)
    far = engine.cdist(many, y.detach())  # 30 rows: one matrix product, as PyTorch's
    assert far.grad_fn.next_functions[0][0].name() == "EuclideanDistBackward0"
    np.testing.assert_allclose(far.detach().cpu().numpy()[:, 0], np.hypot(*(np.arange(60.0).reshape(30, 2) / 10).T),
                               rtol=1e-12, atol=1e-7)
    assert engine.dist(x, y, 1).item() == 7.0


def test_copy_into_a_tensor_is_one_node_whose_gradient_goes_back_to_the_source(device):
    src = engine.tensor([[1.0], [2.0]], dtype=engine.float64, device=device, requires_grad=True)
    dest = engine.ones(2, 3, device=device, requires_grad=True) * 5  # float32: src is cast into it
    dest.copy_(src)
    assert dest.grad_fn.name() == "torch::autograd::CopyBackwards" and dest.dtype == engine.float32
    assert dest.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    leaf = dest.grad_fn.next_functions[0][0].next_functions[0][0].variable  # (dest's old value: ones * 5)
    g_src, g_leaf = engine.autograd.grad(dest.sum(), [src, leaf])
    assert g_src.dtype == engine.float64 and g_src.tolist() == [[3.0], [3.0]]  # summed over the broadcast
    assert g_leaf.tolist() == [[0.0] * 3] * 2  # every old element was replaced
    ints = engine.zeros(3, dtype=engine.int64, device=device).copy_(src[0].expand(3) * 1.7)
    assert ints.grad_fn is None and ints.tolist() == [1, 1, 1]


def test_cov_is_numpys_with_and_without_weights():
    rs = np.random.default_rng(5)
    x = rs.standard_normal((3, 6))
    fw, aw = np.array([1, 2, 0, 3, 1, 1]), rs.uniform(0.1, 1.0, 6)
    t = engine.tensor(x, requires_grad=True)
    cases = [({}, {}), ({"correction": 0}, {"ddof": 0}), ({"fweights": engine.tensor(fw)}, {"fweights": fw}),
             ({"aweights": engine.tensor(aw), "correction": 2}, {"aweights": aw, "ddof": 2}),
             ({"fweights": engine.tensor(fw), "aweights": engine.tensor(aw)}, {"fweights": fw, "aweights": aw})]
    for ours, numpys in cases:
        np.testing.assert_allclose(engine.cov(t, **ours).detach().numpy(), np.cov(x, **numpys), rtol=1e-12)
    np.testing.assert_allclose(engine.corrcoef(t).detach().numpy(), np.corrcoef(x), rtol=1e-12)
    with pytest.raises(RuntimeError, match="^cov\\(\\): fweights cannot be negative$"):
        engine.cov(t, fweights=engine.tensor(-fw))
    with warnings.catch_warnings(record=True) as caught:  # (pytest.warns would re-raise NumPy's divide warning)
        warnings.simplefilter("always")
        assert np.isinf(engine.cov(t, correction=6).detach().numpy()).all()  # divided by 0, as PyTorch's
    assert any("degrees of freedom is <= 0" in str(w.message) for w in caught)


# margin losses: (expression, torch 2.13's graph); a: (4, 5), v: (5,) float64; y: classes; tl: label lists; s: +-1
MARGIN_LOSSES = [
    ("F.soft_margin_loss(a, s)", "SoftMarginLossBackward0(Acc)"),
    ("F.soft_margin_loss(a, s[0], reduction='none')", "SoftMarginLossBackward0(Acc)"),
    ("F.multi_margin_loss(a, y)", "MultiMarginLossBackward0(Acc)"),
    ("F.multi_margin_loss(a, y, p=2, margin=0.5, weight=w, reduction='sum')", "MultiMarginLossBackward0(Acc)"),
    ("F.multi_margin_loss(v, y[1:2], reduction='none')", "MultiMarginLossBackward0(Acc)"),
    ("F.multilabel_margin_loss(a, tl)", "MultilabelMarginLossBackward0(Acc)"),
    ("F.multilabel_margin_loss(a, tl, reduction='none')", "MultilabelMarginLossBackward0(Acc)"),
    ("F.multilabel_margin_loss(v, tl[0], reduction='none')", "MultilabelMarginLossBackward0(Acc)"),
]


def _margin_names(torch):
    rs = np.random.RandomState(2)
    return {"F": torch.nn.functional, "a": torch.tensor(rs.standard_normal((4, 5)), requires_grad=True),
            "v": torch.tensor(rs.standard_normal(5), requires_grad=True), "y": torch.tensor([0, 2, 4, 1]),
            "tl": torch.tensor([[0, 2, -1, 1, 1], [1, -1, 0, 0, 0], [4, 4, 3, -1, 2], [-1, 0, 0, 0, 0]]),
            "w": torch.tensor(rs.uniform(0.5, 1.5, 5)), "s": torch.tensor(np.sign(rs.standard_normal((4, 5))))}


@pytest.mark.parametrize(("expression", "graph"), MARGIN_LOSSES, ids=[e for e, _ in MARGIN_LOSSES])
def test_each_margin_loss_is_one_node_as_pytorchs(expression, graph):
    out = eval(expression, _margin_names(engine))  # noqa: S307 - the table's own expressions
    assert walk(out.grad_fn) == graph


@pytest.mark.torch
@pytest.mark.parametrize(("expression", "graph"), MARGIN_LOSSES, ids=[e for e, _ in MARGIN_LOSSES])
def test_each_margin_loss_its_value_and_gradient_are_torchs(expression, graph):
    _first_order_against_torch(expression, _margin_names, ("a", "v"), graph)


def test_the_multi_class_hinge_loss_by_hand(device):
    F = engine.nn.functional
    x = engine.tensor([[1.0, 0.5, -1.0], [0.0, 2.0, 1.5]], dtype=engine.float64, device=device, requires_grad=True)
    y = engine.tensor([0, 2], device=device)
    loss = F.multi_margin_loss(x, y, reduction="none")  # row 0: 1-1+0.5 and 1-1-1 (out); row 1: 1-1.5+0 (out), 1-1.5+2
    np.testing.assert_allclose(loss.tolist(), [0.5 / 3, 1.5 / 3], rtol=1e-15)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [[-1 / 3, 1 / 3, 0.0], [0.0, 1 / 3, -1 / 3]], rtol=1e-15)
    (g,) = engine.autograd.grad(F.multi_margin_loss(x, y), x, create_graph=True)
    assert g.grad_fn.name() == "torch::autograd::NotImplemented"  # PyTorch has no second derivative either
    with pytest.raises(RuntimeError, match="^derivative for aten::multi_margin_loss_backward is not implemented$"):
        g.sum().backward()
    labels = engine.tensor([[2, 0, -1]], device=device)  # classes 2 and 0 listed; 1 not
    z = engine.tensor([[0.5, 0.2, 1.0]], device=device, requires_grad=True)
    m = F.multilabel_margin_loss(z, labels)  # (1 - 1.0 + 0.2) + (1 - 0.5 + 0.2), over 3 classes
    assert abs(m.item() - 0.9 / 3) < 1e-7
    m.backward()
    assert np.allclose(z.grad.cpu().numpy(), [[-1 / 3, 2 / 3, -1 / 3]])
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        F.soft_margin_loss(z, z.detach().requires_grad_())


# every new node's backward (and its recorded second derivative) against finite differences, in float64: the
# engine's gradcheck and gradgradcheck, no PyTorch needed
def _d(*shape, seed=0, low=-1.0, high=1.0):
    return engine.tensor(np.random.default_rng(seed).uniform(low, high, shape), dtype=engine.float64,
                         requires_grad=True)


CHECKED = {
    "logcumsumexp": (lambda x: x.logcumsumexp(1), lambda: (_d(3, 4),)),
    "nansum": (lambda x: x.nansum(0) ** 2, lambda: (_d(3, 4),)),
    "cross": (lambda a, b: engine.linalg.cross(a, b), lambda: (_d(2, 3), _d(1, 3, seed=1))),
    "addmv": (lambda c, m, v: engine.addmv(c, m, v, beta=0.5, alpha=2.0),
              lambda: (_d(2), _d(2, 3, seed=1), _d(3, seed=2))),
    "addr": (lambda c, u, v: engine.addr(c, u, v, alpha=-1.5), lambda: (_d(2, 3), _d(2, seed=1), _d(3, seed=2))),
    "baddbmm": (lambda c, a, b: engine.baddbmm(c, a, b), lambda: (_d(4), _d(2, 2, 3, seed=1), _d(2, 3, 4, seed=2))),
    "addbmm": (lambda c, a, b: engine.addbmm(c, a, b, beta=2.0), lambda: (_d(2, 4), _d(2, 2, 3, seed=1),
                                                                         _d(2, 3, 4, seed=2))),
    "pixel_shuffle": (lambda x: engine.nn.functional.pixel_shuffle(x, 2) ** 2, lambda: (_d(1, 4, 2, 3),)),
    "channel_shuffle": (lambda x: engine.nn.functional.channel_shuffle(x, 2) ** 2, lambda: (_d(1, 4, 3),)),
    "rot90": (lambda x: x.rot90(1) ** 2, lambda: (_d(3, 4),)),
    "block_diag": (lambda a, b: engine.block_diag(a, b) ** 2, lambda: (_d(2, 2), _d(3, seed=1))),
    "prelu": (lambda x, w: engine.nn.functional.prelu(x, w), lambda: (_d(2, 3, 2), _d(3, seed=1, low=0.1))),
    "dist": (lambda a, b: engine.dist(a, b, 3), lambda: (_d(2, 3), _d(3, seed=1))),
    "cdist": (lambda a, b: engine.cdist(a, b, 1.5), lambda: (_d(3, 2), _d(4, 2, seed=1))),
    "cdist_mm": (lambda a, b: engine.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                 lambda: (_d(3, 2), _d(4, 2, seed=1))),
    "pdist": (lambda x: engine.nn.functional.pdist(x), lambda: (_d(4, 3),)),
    "sinc": (lambda x: x.sinc(), lambda: (_d(3, 4),)),
    "renorm": (lambda x: x.renorm(2, 0, 0.5), lambda: (_d(3, 4),)),
    "soft_margin_loss": (lambda x: engine.nn.functional.soft_margin_loss(x, engine.tensor([1.0, -1.0, 1.0],
                                                                                       dtype=engine.float64)),
                         lambda: (_d(2, 3),)),
    "copy_": (lambda x: engine.zeros(2, 3, dtype=engine.float64).copy_(x) ** 2, lambda: (_d(3),)),
    "affine_grid": (lambda th: engine.nn.functional.affine_grid(th, (2, 1, 3, 4), align_corners=False) ** 2,
                    lambda: (_d(2, 2, 3),)),
    "affine_grid_3d": (lambda th: engine.nn.functional.affine_grid(th, (1, 1, 2, 3, 2), align_corners=True) ** 2,
                       lambda: (_d(1, 3, 4),)),
    "bilinear": (lambda a, b, w: engine.nn.functional.bilinear(a, b, w),
                 lambda: (_d(2, 3), _d(2, 2, seed=1), _d(4, 3, 2, seed=2))),
    "local_response_norm": (lambda x: engine.nn.functional.local_response_norm(x, 2, alpha=0.5, k=2.0),
                            lambda: (_d(1, 3, 2, 2),)),
    "masked_scatter": (lambda x, s: x.masked_scatter(engine.tensor([[True, False, True], [False, True, False]]), s)
                       ** 2, lambda: (_d(2, 3), _d(4, seed=1))),
    "put": (lambda x, s: x.put(engine.tensor([0, 4, -1]), s) ** 2, lambda: (_d(2, 3), _d(3, seed=1))),
    "put_accumulate": (lambda x, s: x.put(engine.tensor([0, 4, 0]), s, accumulate=True) ** 2,
                       lambda: (_d(2, 3), _d(3, seed=1))),
    "max_unpool2d": (lambda x: engine.nn.functional.max_unpool2d(
        x, engine.tensor([[[[0, 3], [9, 14]]]]), 2) ** 2, lambda: (_d(1, 1, 2, 2),)),
}


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_each_new_node_passes_gradcheck_and_gradgradcheck(name):
    fn, inputs = CHECKED[name]
    assert engine.autograd.gradcheck(fn, inputs(), eps=1e-6, atol=1e-5)
    assert engine.autograd.gradgradcheck(fn, inputs(), eps=1e-6, atol=1e-4)


@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
def test_the_margin_losses_pass_gradcheck(name):
    F = engine.nn.functional
    x = _d(3, 4)
    if name == "multi_margin_loss":
        assert engine.autograd.gradcheck(lambda t: F.multi_margin_loss(t, engine.tensor([0, 3, 1]), p=2), (x,),
                                         eps=1e-6, atol=1e-5)
    else:
        labels = engine.tensor([[0, 2, -1, 0], [3, -1, 0, 0], [1, 2, 3, -1]])
        assert engine.autograd.gradcheck(lambda t: F.multilabel_margin_loss(t, labels), (x,), eps=1e-6, atol=1e-5)


def test_affine_grid_is_atens_grid_in_two_and_three_dimensions(device):
    """The identity map gives the base grid itself: pixel centres (-1 + 1/n, ..., 1 - 1/n) or, with align_corners,
    the corners (-1, ..., 1); x runs along the last axis, then y, then z."""
    F = engine.nn.functional
    eye2 = engine.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=engine.float64, device=device)
    g = F.affine_grid(eye2, (1, 1, 2, 4), align_corners=False)
    assert g.shape == (1, 2, 4, 2)
    np.testing.assert_allclose(g[0, 0, :, 0].cpu().numpy(), [-0.75, -0.25, 0.25, 0.75], rtol=1e-15)
    np.testing.assert_allclose(g[0, :, 0, 1].cpu().numpy(), [-0.5, 0.5], rtol=1e-15)
    eye3 = engine.tensor([np.eye(3, 4)], dtype=engine.float64, device=device, requires_grad=True)
    g3 = F.affine_grid(eye3, (1, 1, 2, 3, 3), align_corners=True)
    assert g3.shape == (1, 2, 3, 3, 3) and g3.grad_fn.name() == "AffineGridGeneratorBackward0"
    np.testing.assert_allclose(g3[0, 1, 2, 0].detach().cpu().numpy(), [-1.0, 1.0, 1.0], rtol=1e-15)  # (x, y, z)
    g3.sum().backward()
    # d/dtheta[i, j] of the sum = the sum over the points of coordinate j (1 for the translation): 18 points
    np.testing.assert_allclose(eye3.grad.cpu().numpy()[0, :, 3], [18.0, 18.0, 18.0], rtol=1e-15)
    np.testing.assert_allclose(eye3.grad.cpu().numpy()[0, :, :3], 0.0, atol=1e-14)  # symmetric coordinates


def test_max_unpool_puts_each_value_back_and_takes_its_gradient_from_there(device):
    F = engine.nn.functional
    x = engine.tensor([[[[1.0, 5.0], [2.0, 3.0]]]], device=device, requires_grad=True)
    idx = engine.tensor([[[[0, 3], [9, 14]]]], device=device)
    out = F.max_unpool2d(x, idx, 2)
    assert out.grad_fn.name() == "MaxUnpool2DBackward0" and out.shape == (1, 1, 4, 4)
    assert out.flatten().tolist() == [1.0, 0, 0, 5.0, 0, 0, 0, 0, 0, 2.0, 0, 0, 0, 0, 3.0, 0]
    out.backward(engine.arange(16.0, device=device).reshape(1, 1, 4, 4))
    assert x.grad.flatten().tolist() == [0.0, 3.0, 9.0, 14.0]


def test_a_max_pools_gradient_stays_connected_to_its_input_as_pytorchs():
    x = engine.tensor([[[1.0, -2.0, 3.0, 0.5]]], dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(engine.nn.functional.max_pool1d(x, 2).sum(), x, create_graph=True)
    assert g.requires_grad and g.tolist() == [[[1.0, 0.0, 1.0, 0.0]]]
    (gg,) = engine.autograd.grad((g * g).sum(), x)  # piecewise constant in x: zeros (it was a refusal)
    assert gg.tolist() == [[[0.0, 0.0, 0.0, 0.0]]]


def test_masked_scatter_and_put_write_in_order_and_route_the_gradient(device):
    x = engine.zeros(2, 3, device=device, requires_grad=True)
    src = engine.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True)
    mask = engine.tensor([[True, False, True], [False, True, False]], device=device)
    y = x.masked_scatter(mask, src)
    assert y.tolist() == [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]] and y.grad_fn.name() == "MaskedScatterBackward0"
    gx, gs = engine.autograd.grad(y, [x, src], engine.arange(6.0, device=device).reshape(2, 3))
    assert gx.tolist() == [[0.0, 1.0, 0.0], [3.0, 0.0, 5.0]] and gs.tolist() == [0.0, 2.0, 4.0, 0.0]
    p = x.put(engine.tensor([5, 0, -1], device=device), src[:3], accumulate=True)
    assert p.tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 4.0]] and p.grad_fn.name() == "PutBackward0"
    gx, gs = engine.autograd.grad(p, [x, src], engine.arange(6.0, device=device).reshape(2, 3))
    assert gx.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and gs.tolist() == [5.0, 0.0, 5.0, 0.0]
    with pytest.raises(IndexError, match="^out of range: tried to access index 6 on a tensor of 6 elements.$"):
        x.put(engine.tensor([6], device=device), src[:1])
