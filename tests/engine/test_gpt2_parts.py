"""What a GPT-2 model of nanoGPT's kind needs beyond "Let's build GPT": erf and GELU, the whole of
``cross_entropy``/``nll_loss`` (``ignore_index``, class weights, label smoothing, probabilities, positions),
``sort``/``topk``/``gather`` (top-k sampling), ``scaled_dot_product_attention``, and such a model trained from
PyTorch's weights (tied embeddings, AdamW with decay groups, gradient clipping) step for step as PyTorch trains
it. Each against worked values or torch 2.13; the GPU paths on the CuPy stand-in, with no host syncs."""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest

import engine
from benchmarks.gpt_step import adamw, gpt2
from engine import nn
from engine.nn import functional as F

# ----------------------------------------------------------------------------- erf and GELU


def test_erf_is_within_a_few_units_in_the_last_place_of_maths():
    from engine import kernels

    x = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-300, 0.8, 500), -np.logspace(-300, 0.8, 500),
                        [0.0, 1.0, -1.0, 0.999999999, 1.000000001, 5.99, 6.01, 1e300, -1e300]])
    expected = np.array([math.erf(v) for v in x])
    got = engine.erf(engine.tensor(x)).numpy()
    ulps = np.abs(got - expected) / np.spacing(np.abs(expected))
    assert ulps.max() <= 4, x[ulps.argmax()]
    assert engine.erf(engine.tensor([np.inf, -np.inf])).tolist() == [1.0, -1.0]
    assert np.isnan(engine.erf(engine.tensor([np.nan])).item())
    x32 = np.concatenate([np.linspace(-5, 5, 20001), np.logspace(-30, 0.6, 400)]).astype(np.float32)
    got32 = engine.tensor(x32).erf()
    assert got32.dtype == engine.float32
    exact = np.array([math.erf(v) for v in x32.astype(float)])
    ulps32 = np.abs(got32.numpy() - exact) / np.spacing(np.abs(exact).astype(np.float32))
    assert ulps32.max() <= (1.0 if kernels.implementation() == "compiled" else 4.0)  # C: within an ulp


def test_erfs_gradient_is_two_over_root_pi_times_a_gaussian():
    x = engine.tensor([-2.0, -0.3, 0.0, 0.7, 3.0], dtype=engine.float64, requires_grad=True)
    y = x.erf()
    assert y.grad_fn.name() == "ErfBackward0"
    y.sum().backward()
    expected = [2 / math.sqrt(math.pi) * math.exp(-v * v) for v in (-2.0, -0.3, 0.0, 0.7, 3.0)]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)


@pytest.mark.torch
def test_float_only_maths_of_integers_computes_in_the_default_dtype_as_torch():
    torch = pytest.importorskip("torch")
    for name in ("exp", "log", "sqrt", "sigmoid", "tanh", "sin", "cos", "erf"):
        for values in ([1, 2, 3], [True, True, False] if name != "log" else [True]):
            mine, theirs = getattr(engine.tensor(values), name)(), getattr(torch.tensor(values), name)()
            assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1], name
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, err_msg=name)


@pytest.mark.torch
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gelu_gives_torchs_values_and_gradients(approximate, dtype):
    torch = pytest.importorskip("torch")
    x = np.concatenate([np.linspace(-8, 8, 801), [0.0, -40.0, 40.0]]).astype(dtype)
    g = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
    results = []
    for lib in (engine, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.GELU(approximate=approximate)(t)
        y.backward(lib.tensor(g))
        results.append((y.detach().numpy(), t.grad.numpy()))
    # in the tails 1 + erf (1 + tanh) cancels: there both give a few units of x's rounding, not of the result's
    # (and in float32 torch's vectorised tanh reaches -1 a little sooner: tail gradients 0 where ours are 3e-6)
    rtol, atol = (1e-12, 1e-13) if dtype == "float64" else (2e-6, 4e-6)
    for mine, theirs in zip(*results):
        assert mine.dtype == theirs.dtype
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol)
    assert repr(nn.GELU(approximate)) == repr(torch.nn.GELU(approximate)) == f"GELU(approximate='{approximate}')"


def test_gelu_by_hand_and_its_refusals():
    x = engine.tensor([-1.0, 0.0, 1.0, 2.0], dtype=engine.float64, requires_grad=True)
    y = F.gelu(x)
    assert y.grad_fn.name() == "GeluBackward0"
    phi = [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in (-1.0, 0.0, 1.0, 2.0)]
    np.testing.assert_allclose(y.detach().numpy(), [v * p for v, p in zip((-1.0, 0.0, 1.0, 2.0), phi)], rtol=1e-15)
    y.sum().backward()  # Phi(x) + x phi(x)
    np.testing.assert_allclose(x.grad.numpy(), [p + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
                                                for v, p in zip((-1.0, 0.0, 1.0, 2.0), phi)], rtol=1e-14)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="fast")
    with pytest.raises(NotImplementedError, match="\"GeluKernelImpl\" not implemented for 'Long'"):
        F.gelu(engine.tensor([1, 2]))


# ----------------------------------------------------------------------------- cross_entropy and nll_loss

_CE_SHAPES = [(5,), (4, 5), (3, 5, 2), (2, 5, 2, 3)]


def _ce_case(rng, shape, ignore, probabilities):
    classes = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else (shape[0], *shape[2:])
    x = rng.standard_normal(shape)
    target = rng.integers(0, classes, target_shape)
    if ignore is not None and target.size:
        target.flat[0] = ignore  # one row ignored (the only row of an unbatched input: all of them)
    p = rng.random(shape)
    p /= p.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
    return x, (p if probabilities else target), rng.random(classes) + 0.1


@pytest.mark.torch
@pytest.mark.parametrize("shape", _CE_SHAPES, ids=str)
def test_cross_entropy_follows_torch_in_every_option(shape):
    """Reductions x ignore_index (default, an explicit class, none hit) x class weights x label smoothing x
    class indices or probabilities: the loss and its gradient, each to 1e-12."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    cases = 0
    for reduction, ignore, weighted, smoothing, probabilities in itertools.product(
            ["mean", "sum", "none"], [None, 1, -100], [False, True], [0.0, 0.2], [False, True]):
        if probabilities and ignore is not None:
            continue
        x, target, weight = _ce_case(rng, shape, ignore, probabilities)
        results = []
        for lib in (engine, torch):
            t = lib.tensor(x, requires_grad=True)
            kwargs = {"reduction": reduction, "label_smoothing": smoothing}
            if ignore is not None:
                kwargs["ignore_index"] = ignore
            if weighted:
                kwargs["weight"] = lib.tensor(weight)
            loss = lib.nn.functional.cross_entropy(t, lib.tensor(target), **kwargs)
            (loss.sum() if reduction == "none" else loss).backward()
            results.append((loss.detach().numpy(), t.grad.numpy()))
        (mine, my_grad), (theirs, their_grad) = results
        label = (reduction, ignore, weighted, smoothing, probabilities)
        assert mine.shape == theirs.shape, label
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14, err_msg=str(label))
        np.testing.assert_allclose(my_grad, their_grad, rtol=1e-12, atol=1e-14, err_msg=str(label))
        cases += 1
    assert cases == 3 * 2 * 2 * (3 + 1)


def test_ignored_rows_count_for_nothing_and_every_row_ignored_is_nan_with_zero_gradients():
    logits = engine.tensor([[2.0, 0.0, -1.0], [0.5, 0.5, 0.5], [1.0, 3.0, 0.0]], dtype=engine.float64,
                           requires_grad=True)
    logp = logits.log_softmax(1).detach().numpy()
    loss = F.cross_entropy(logits, engine.tensor([0, -1, 1]), ignore_index=-1)
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.item() == pytest.approx(-(logp[0, 0] + logp[2, 1]) / 2, rel=1e-15)
    loss.backward()
    assert logits.grad[1].tolist() == [0.0, 0.0, 0.0]
    each = F.cross_entropy(logits, engine.tensor([0, -1, 1]), ignore_index=-1, reduction="none")
    np.testing.assert_allclose(each.detach().numpy(), [-logp[0, 0], 0.0, -logp[2, 1]], rtol=1e-15)
    logits.grad = None
    none_left = F.cross_entropy(logits, engine.tensor([-100, -100, -100]))
    assert math.isnan(none_left.item())
    none_left.backward()
    assert logits.grad.abs().sum().item() == 0.0
    weighted = F.nll_loss(engine.tensor(logp), engine.tensor([0, 2, 1]), weight=engine.tensor([1.0, 3.0, 0.5],
                                                                                              dtype=engine.float64))
    assert weighted.item() == pytest.approx(-(logp[0, 0] * 1 + logp[1, 2] * 0.5 + logp[2, 1] * 3) / 4.5, rel=1e-15)


def test_cross_entropy_refuses_what_torch_refuses_by_name():
    x = engine.randn(3, 5)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(x, engine.tensor([0, 5, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        F.cross_entropy(x, engine.tensor([0, -1, 1]))  # not read from the end, as NumPy would
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.cross_entropy(x, engine.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 5 classes or no classes "
                                           r"but got weight tensor of shape: \[4\]"):
        F.cross_entropy(x, engine.tensor([1, 2, 3]), weight=engine.ones(4))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(x, engine.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 3\], got \[2, 4\]"):
        F.cross_entropy(engine.randn(2, 5, 3), engine.zeros(2, 4, dtype=engine.int64))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(x, engine.tensor([1, 2, 3]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="x is not a valid value for reduction"):
        F.cross_entropy(x, engine.tensor([1, 2, 3]), reduction="x")


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")  # torch's, not ours
def test_loss_modules_take_torchs_options_and_old_flags():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x, target, weight = rng.standard_normal((6, 4)), rng.integers(0, 4, 6), rng.random(4) + 0.5
    target[2] = 3
    for make in (lambda lib: lib.nn.CrossEntropyLoss(weight=lib.tensor(weight), ignore_index=3, label_smoothing=0.1),
                 lambda lib: lib.nn.NLLLoss(weight=lib.tensor(weight), reduction="sum"),
                 lambda lib: lib.nn.CrossEntropyLoss(reduce=False),
                 lambda lib: lib.nn.NLLLoss(size_average=False)):
        mine, theirs = make(engine), make(torch)
        assert mine.reduction == theirs.reduction
        np.testing.assert_allclose(mine(engine.tensor(x), engine.tensor(target)).numpy(),
                                   theirs(torch.tensor(x), torch.tensor(target)).numpy(), rtol=1e-12)
    # the old flags: reduce=False means each, size_average=False a sum (the tutorial's MSELoss(size_average=False))
    assert [nn.MSELoss(reduce=False).reduction, nn.MSELoss(size_average=False).reduction,
            nn.MSELoss(size_average=True, reduce=True).reduction] == ["none", "sum", "mean"]
    weighted = nn.CrossEntropyLoss(weight=engine.ones(4))
    assert list(weighted.state_dict()) == list(torch.nn.CrossEntropyLoss(weight=torch.ones(4)).state_dict())


# ----------------------------------------------------------------------------- sort, topk, gather


def _sortable(rng, kind, shape):
    if kind == "distinct":
        return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.5 - 3
    if kind == "ties":
        return rng.integers(0, 3, shape).astype(float)
    if kind == "nan":
        x = rng.integers(0, 3, shape).astype(float)
        x[rng.random(shape) < 0.3] = np.nan
        x[rng.random(shape) < 0.1] = np.inf
        return x
    if kind == "int":
        return rng.integers(-5, 5, shape)
    return rng.random(shape) < 0.5


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["distinct", "ties", "nan", "int", "bool"])
def test_sort_is_torchs_stable_sort_nan_included(kind):
    """NaN sorts last ascending and first descending, equal entries keep their order, as torch's stable sort."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    for shape in [(7,), (3, 6), (2, 5, 4)]:
        for dim, descending in itertools.product(range(-len(shape), len(shape)), (False, True)):
            x = _sortable(rng, kind, shape)
            theirs = torch.sort(torch.tensor(x), dim=dim, descending=descending, stable=True)
            mine = engine.sort(engine.tensor(x), dim, descending)
            np.testing.assert_array_equal(mine.values.numpy(), theirs.values.numpy())
            np.testing.assert_array_equal(mine.indices.numpy(), theirs.indices.numpy())
            np.testing.assert_array_equal(engine.tensor(x).argsort(dim, descending).numpy(), theirs.indices.numpy())


@pytest.mark.torch
def test_topk_and_sort_give_torchs_values_indices_and_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    for shape in [(7,), (3, 6), (2, 5, 4)]:
        for dim, largest in itertools.product(range(len(shape)), (True, False)):
            x = _sortable(rng, "distinct", shape)
            for k in range(shape[dim] + 1):
                mine, theirs = engine.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
                a, b = engine.topk(mine, k, dim, largest), torch.topk(theirs, k, dim, largest)
                np.testing.assert_array_equal(a.values.detach().numpy(), b.values.detach().numpy())
                np.testing.assert_array_equal(a.indices.numpy(), b.indices.numpy())
                g = rng.standard_normal(tuple(b.values.shape))
                a.values.backward(engine.tensor(g))
                b.values.backward(torch.tensor(g))
                np.testing.assert_array_equal(mine.grad.numpy(), theirs.grad.numpy())
    x = engine.tensor([3.0, 1.0, 2.0], requires_grad=True)
    assert x.sort().values.grad_fn.name() == "SortBackward0" and x.topk(2).values.grad_fn.name() == "TopkBackward0"
    assert x.sort(descending=True).values.tolist() == [3.0, 2.0, 1.0] and not x.argsort().requires_grad


@pytest.mark.torch
def test_gather_follows_torch_and_adds_the_gradient_of_an_entry_picked_twice():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5))
    for dim in range(3):
        shape = [2, 3, 4]
        index = rng.integers(0, x.shape[dim], shape)
        results = []
        for lib in (engine, torch):
            t = lib.tensor(x, requires_grad=True)
            out = t.gather(dim, lib.tensor(index))
            (out * out).sum().backward()
            results.append((out.detach().numpy(), t.grad.numpy()))
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=0)
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-15)
    q = engine.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    picked = engine.gather(q, 1, engine.tensor([[0, 0], [1, 0]]))  # DQN's q.gather(1, actions), with a repeat
    assert picked.tolist() == [[1.0, 1.0], [4.0, 3.0]] and picked.grad_fn.name() == "GatherBackward0"
    picked.sum().backward()
    assert q.grad.tolist() == [[2.0, 0.0], [1.0, 1.0]]


def test_sort_topk_and_gather_refuse_by_name():
    x = engine.ones(2, 4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(5)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2"):
        x.sort(2)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 1 with size 4"):
        x.gather(1, engine.tensor([[0, 5]]))
    with pytest.raises(RuntimeError, match=r"Size does not match at dimension 1 expected index \[1, 5\] to be no "
                                           r"larger than self \[2, 4\] apart from dimension 0"):
        x.gather(0, engine.tensor([[0, 1, 1, 1, 1]]))
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions as input tensor"):
        x.gather(0, engine.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int32/int64 for index"):
        x.gather(0, engine.tensor([[0.0]]))
    scalar = engine.tensor(3.0)
    assert scalar.sort().values.item() == 3.0 and scalar.topk(1).indices.item() == 0


@pytest.mark.torch
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_is_one_node_with_torchs_values_gradients_and_name(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    for shape in [(4, 7), (2, 3, 5), (5,), ()]:
        for dim in range(-max(len(shape), 1), max(len(shape), 1)):
            x, g = rng.standard_normal(shape) * 3, rng.standard_normal(shape)
            results = []
            for lib in (engine, torch):
                t = lib.tensor(x, requires_grad=True)
                out = getattr(t, name)(dim)
                out.backward(lib.tensor(g))
                results.append((out.detach().numpy(), t.grad.numpy(), type(out.grad_fn).__name__))
            (mine, my_grad, _), (theirs, their_grad, their_name) = results
            np.testing.assert_allclose(mine, theirs, rtol=1e-14, atol=1e-15)
            np.testing.assert_allclose(my_grad, their_grad, rtol=1e-13, atol=1e-14)
            assert getattr(engine.tensor(x, requires_grad=True), name)(dim).grad_fn.name() == their_name
    from engine.autograd.describe import describe

    logits = engine.randn(3, 4, requires_grad=True)
    ops = [n.op for n in describe(F.cross_entropy(logits, engine.tensor([0, 1, 3]))).nodes]
    assert ops == ["NllLoss", "LogSoftmax", "AccumulateGrad"]  # the graph panel's labels: torch's two nodes
    assert "Topk" in [n.op for n in describe(logits.topk(2).values.sum()).nodes]
    rows = engine.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")]])
    assert rows.softmax(1)[0].tolist() == [1.0, 0.0] and math.isnan(rows.softmax(1)[1, 0].item())  # no warning
    assert engine.ones(3, 0).softmax(1).shape == (3, 0)
    assert F.softmax(engine.tensor([1, 2]), 0, dtype=engine.float64).dtype == engine.float64


@pytest.mark.torch
def test_layer_norm_is_one_node_with_torchs_values_and_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    for shape, normalized in (((4, 6), (6,)), ((2, 3, 6), (6,)), ((2, 3, 4, 5), (4, 5))):
        for affine in ((True, True), (True, False), (False, False)):
            x, g = rng.standard_normal(shape) * 3 + 1, rng.standard_normal(shape)
            w, b = rng.standard_normal(normalized), rng.standard_normal(normalized)
            results = []
            for lib in (engine, torch):
                xt = lib.tensor(x, requires_grad=True)
                wt = lib.tensor(w, requires_grad=True) if affine[0] else None
                bt = lib.tensor(b, requires_grad=True) if affine[1] else None
                out = lib.nn.functional.layer_norm(xt, normalized, wt, bt)
                out.backward(lib.tensor(g))
                grads = [t.grad.numpy() for t in (wt, bt) if t is not None]
                results.append([out.detach().numpy(), xt.grad.numpy(), *grads,
                                type(out.grad_fn).__name__ if lib is torch else out.grad_fn.name()])
            for a, c in zip(results[0][:-1], results[1][:-1]):
                np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-13)
            assert results[0][-1] == results[1][-1] == "NativeLayerNormBackward0"
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as normalized_shape, but got weight "
                                           r"of shape \[4\] and normalized_shape = \[6\]"):
        F.layer_norm(engine.ones(2, 6), (6,), engine.ones(4))


# ----------------------------------------------------------------------------- attention


@pytest.mark.torch
@pytest.mark.parametrize("mask", ["none", "causal", "bool", "float", "scale"])
def test_scaled_dot_product_attention_is_torchs(mask):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    allowed = rng.random((5, 5)) < 0.7
    np.fill_diagonal(allowed, True)
    added = rng.standard_normal((5, 5))
    results = []
    for lib in (engine, torch):
        qt, kt, vt = (lib.tensor(a, requires_grad=True) for a in (q, k, v))
        kwargs = {"causal": {"is_causal": True}, "bool": {"attn_mask": lib.tensor(allowed)},
                  "float": {"attn_mask": lib.tensor(added)}, "scale": {"scale": 0.3}}.get(mask, {})
        out = lib.nn.functional.scaled_dot_product_attention(qt, kt, vt, **kwargs)
        (out * out).sum().backward()
        results.append([out.detach().numpy(), qt.grad.numpy(), kt.grad.numpy(), vt.grad.numpy()])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(engine.ones(2, 2), engine.ones(2, 2), engine.ones(2, 2),
                                       attn_mask=engine.ones(2, 2, dtype=engine.bool), is_causal=True)


_EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bhid,bhjd->bhij", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("i,i->", [(3,), (3,)]),
            ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
            ("i,j->ij", [(2,), (3,)]), ("bij,bjk", [(2, 3, 4), (2, 4, 5)]), ("ijk->", [(2, 3, 4)]),
            ("iij->j", [(3, 3, 2)]), ("ij->j", [(2, 3)]), ("ba,cb", [(2, 3), (4, 2)]), ("i...->...", [(2, 3, 4)]),
            ("b i d, b j d -> b i j", [(2, 3, 4), (2, 5, 4)]), ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 2)]),
            ("iji->j", [(2, 3, 2)]), ("Ab,bC->CA", [(2, 3), (3, 4)])]


@pytest.mark.torch
@pytest.mark.parametrize(("equation", "shapes"), _EINSUMS, ids=[e for e, _ in _EINSUMS])
def test_einsum_gives_torchs_values_and_gradients(equation, shapes):
    """Products, sums, transposes, outer products, batches, ellipses, diagonals and traces (the gradient put back
    on the diagonal), implicit outputs, three operands."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in shapes]
    results, g = [], None
    for lib in (engine, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.einsum(equation, *ts)
        g = rng.standard_normal(tuple(out.shape)) if g is None else g
        out.backward(lib.tensor(g))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for mine, theirs in zip(*results):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)


def test_einsum_refuses_what_torch_refuses_by_name():
    a, b = engine.ones(2, 3), engine.ones(4, 5)
    for equation, operands, message in [
            ("ij,jk->ik", [a], "fewer operands were provided than specified in the equation"),
            ("ij->ik", [a], "output subscript k does not appear in the equation for any input operand"),
            ("ij", [engine.ones(2, 3, 4)], r"the number of subscripts in the equation \(2\) does not match the number "
                                           r"of dimensions \(3\) for operand 0 and no ellipsis was given"),
            ("ij,jk->ik", [a, b], "subscript j has size 4 for operand 1 which does not broadcast with previously seen "
                                  "size 3"),
            ("i->ii", [engine.ones(2)], "output subscript i appears more than once in the output"),
            ("i1", [a], "invalid subscript given at index 1 in the equation string, subscripts must be in "
                        r"\[a-zA-Z\]")]:
        with pytest.raises(RuntimeError, match=message):
            engine.einsum(equation, *operands)
    assert engine.einsum("ij,jk", [engine.ones(2, 3), engine.ones(3, 1)]).tolist() == [[3.0], [3.0]]  # a list too
    assert engine.einsum("ij->j", engine.ones(2, 3, requires_grad=True)).grad_fn.name() == "EinsumBackward0"


# ----------------------------------------------------------------------------- on the GPU stand-in


def test_the_gpu_gives_the_cpus_values_without_host_syncs(cuda_device):
    """GELU, erf, a cross-entropy with ignored rows and class weights, top-k, a sort through a NaN, gather, einsum
    and softmax: the CPU's values and gradients, and on the stand-in no wait for the device (a GPU's targets are
    not read back to be checked, and its sort takes the NaN pass without asking whether there is a NaN)."""
    from tests import fake_cupy

    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5))
    with_nan = x.copy()
    with_nan[0, 1] = np.nan
    target = np.array([0, 4, -100, 2, 2, 1])

    def run(dev):
        logits = engine.tensor(x, device=dev, requires_grad=True)
        with fake_cupy.count_syncs() as seen:
            loss = F.cross_entropy(F.gelu(logits), engine.tensor(target, device=dev),
                                   weight=engine.tensor([1.0, 2.0, 1.0, 0.5, 1.0], device=dev, dtype=engine.float64))
            top = logits.topk(2, dim=1)
            picked = logits.gather(1, top.indices)
            ordered = engine.tensor(with_nan, device=dev).sort(dim=0, descending=True)
            scores = engine.einsum("ij,kj->ik", logits, logits).softmax(-1)
            (loss + logits.erf().sum() + (top.values * picked).sum() + scores[0, 1]).backward()
        if fake_cupy.active():
            assert seen == [], seen
        return [t.detach().cpu().numpy() for t in (loss, top.values, top.indices, ordered.values, ordered.indices,
                                                   scores, logits.grad)]

    for a, b in zip(run("cpu"), run(cuda_device)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ----------------------------------------------------------------------------- a GPT-2 model, trained


@pytest.mark.torch
def test_a_gpt2_model_trains_step_for_step_as_torchs():
    """From PyTorch's weights: ten AdamW steps (decay groups, gradients clipped to norm 1) give PyTorch's losses
    and clipped norms (rtol 1e-12) and weights; the tied embedding stays one tensor; top-k picks the same tokens."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = gpt2(torch).double()
    mine = gpt2(engine).double()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert mine.lm_head.weight is mine.transformer.wte.weight
    assert sum(p.numel() for p in mine.parameters()) == sum(p.numel() for p in theirs.parameters())
    rng = np.random.default_rng(0)
    idx, targets = rng.integers(0, 13, (4, 8)), rng.integers(0, 13, (4, 8))
    targets[0, :3] = -1
    optimizers = {engine: adamw(engine, mine), torch: adamw(torch, theirs)}
    for _ in range(10):
        seen = []
        for lib, model in ((engine, mine), (torch, theirs)):
            loss = model(lib.tensor(idx), lib.tensor(targets))
            optimizers[lib].zero_grad(set_to_none=True)
            loss.backward()
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizers[lib].step()
            seen.append((loss.item(), float(norm)))
        assert seen[0] == pytest.approx(seen[1], rel=1e-12)
    for (name, a), (_, b) in zip(mine.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-13, err_msg=name)
    with engine.no_grad(), torch.no_grad():
        a = mine(engine.tensor(idx[:, :5]))[:, -1, :].topk(4)
        b = theirs(torch.tensor(idx[:, :5]))[:, -1, :].topk(4)
    np.testing.assert_array_equal(a.indices.numpy(), b.indices.numpy())


# ----------------------------------------------------------------------------- one pass each


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_and_gelu_in_one_pass_agree_with_the_ufunc_chain(dtype):
    """The C (or CUDA) kernels and the NumPy spelling that runs where they cannot (no compiler, a strided array):
    within a few units in the last place of each other, both directions and both approximations."""
    from engine import kernels

    x = np.linspace(-9, 9, 4001).astype(dtype)
    gy = np.random.default_rng(0).standard_normal(x.shape).astype(dtype)
    strided = np.repeat(x, 2)[::2]  # the same values, not contiguous: the chain
    assert not strided.flags.c_contiguous
    # absolute: the tanh form's derivative saturates to 0 in the tails a step sooner in C's tanh than in NumPy's
    tol = {"rtol": 5e-6 if dtype == np.float32 else 1e-14, "atol": 4e-6 if dtype == np.float32 else 1e-13}
    np.testing.assert_allclose(kernels.erf(x), kernels._erf_chain(x), **tol)
    np.testing.assert_allclose(kernels.erf(x), kernels.erf(strided), **tol)
    for approximate in ("none", "tanh"):
        one, chain = kernels.gelu(x, approximate), kernels.gelu(strided, approximate)
        assert one.dtype == chain.dtype == dtype
        np.testing.assert_allclose(one, chain, **tol)
        np.testing.assert_allclose(kernels.gelu_backward(gy, x, approximate),
                                   kernels.gelu_backward(gy, strided, approximate), **tol)


@pytest.mark.torch
def test_a_linear_on_a_batch_of_sequences_is_one_product_with_torchs_results():
    """``(B, T, k) @ (k, m)``, nn.Linear's product on a batch of sequences, is folded into one 2-D product, both
    ways (as PyTorch folds it): torch's values and gradients, for contiguous and transposed inputs."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    w = rng.standard_normal((5, 3))
    for x in (rng.standard_normal((4, 6, 5)), rng.standard_normal((2, 3, 5, 4)).swapaxes(-1, -2)):
        results = []
        for lib in (engine, torch):
            xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
            out = xt @ wt
            (out * out).sum().backward()
            results.append([out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()])
        for mine, theirs in zip(*results):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    assert (engine.ones(2, 3, 4, requires_grad=True) @ engine.ones(4, 5)).grad_fn.name() == "UnsafeViewBackward0"
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 3x5\)"):
        engine.ones(2, 3, 4) @ engine.ones(3, 5)


# ----------------------------------------------------------------------------- what nanoGPT's train.py reaches for


def _scaler_run(lib, scaler, bad_steps):
    p = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([p], lr=0.1)
    seen = []
    for i in range(6):
        opt.zero_grad()
        scaler.scale((p * 2).sum()).backward()
        if i in bad_steps:
            p.grad[0] = float("inf")
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), p.detach().tolist()))
    return seen, scaler.state_dict()


@pytest.mark.torch
def test_grad_scaler_scales_skips_and_grows_as_torchs():
    """A step with an infinite gradient is skipped and the scale halved; after ``growth_interval`` clean steps it
    doubles; the parameters move as torch's do."""
    torch = pytest.importorskip("torch")
    mine = _scaler_run(engine, engine.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2), {1, 4})
    theirs = _scaler_run(torch, torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2), {1, 4})
    assert [s for s, _ in mine[0]] == [s for s, _ in theirs[0]] == [8.0, 4.0, 4.0, 8.0, 4.0, 4.0]
    for (_, a), (_, b) in zip(mine[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert mine[1] == theirs[1]


def test_grad_scaler_refuses_misuse_and_steps_plainly_when_disabled():
    scaler = engine.amp.GradScaler("cpu")
    p = nn.Parameter(engine.ones(2))
    opt = engine.optim.SGD([p], lr=1.0)
    with pytest.raises(AssertionError, match="Attempted update but _scale is None"):
        scaler.update()
    scaler.scale(p.sum()).backward()
    assert p.grad.tolist() == [65536.0, 65536.0]
    scaler.unscale_(opt)
    assert p.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer since the last "
                                           "update\\(\\)"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update\\(\\)"):
        scaler.step(opt)
    scaler.update()
    off = engine.amp.GradScaler("cpu", enabled=False)
    loss = p.sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ValueError, match="The growth factor must be > 1.0."):
        engine.amp.GradScaler("cpu", growth_factor=1.0)


def test_without_cuda_a_cuda_grad_scaler_disables_itself_as_torchs(monkeypatch):
    from engine import backend

    monkeypatch.setattr(backend, "cuda_status", lambda: (False, "no GPU in this test"))
    with pytest.warns(UserWarning, match="torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                                         "Disabling."):
        scaler = engine.cuda.amp.GradScaler(enabled=True)
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0


def test_autocast_says_once_that_the_block_keeps_its_dtypes(monkeypatch):
    from engine import amp

    monkeypatch.setattr(amp, "_warned_autocast", False)
    x = engine.ones(2, 2)
    with pytest.warns(UserWarning, match="autocast: the engine has no mixed precision"):
        with engine.autocast(device_type="cpu", dtype=engine.bfloat16):
            y = x @ x
    assert y.dtype == engine.float32 and y.tolist() == [[2.0, 2.0], [2.0, 2.0]]

    @engine.amp.autocast("cuda")
    def twice(t):
        return t * 2

    assert twice(x).dtype == engine.float32  # (and no second warning: filterwarnings=error would raise it)
    with engine.cuda.amp.autocast(enabled=False):
        pass


def test_bfloat16_has_its_name_and_is_refused_as_a_tensors_dtype():
    table = {"float32": engine.float32, "bfloat16": engine.bfloat16, "float16": engine.float16}  # nanoGPT's table
    assert repr(table["bfloat16"]) == "engine.bfloat16" and engine.bfloat16.is_floating_point
    assert engine.cuda.is_bf16_supported() is False
    assert engine.bfloat16.is_complex is False and copy.deepcopy(table)["bfloat16"] is engine.bfloat16
    for make in (lambda: engine.zeros(2, dtype=engine.bfloat16), lambda: engine.ones(2).to(engine.bfloat16),
                 lambda: engine.ones(2, dtype="bfloat16")):
        with pytest.raises(TypeError, match="bfloat16 is PyTorch's, but the engine has no bfloat16 .*use float32, "
                                            "or float16"):
            make()


def test_one_process_one_device_names_refuse_by_name():
    assert engine.distributed.is_available() is False and engine.distributed.is_initialized() is False
    with pytest.raises(RuntimeError, match="torch.distributed.init_process_group: multi-process training is "
                                           "PyTorch's, not the engine's"):
        engine.distributed.init_process_group(backend="nccl")
    with pytest.raises(RuntimeError, match="torch.nn.parallel.DistributedDataParallel: training on several devices"):
        engine.nn.parallel.DistributedDataParallel(nn.Linear(2, 2), device_ids=[0])
    model = nn.Linear(2, 2)
    assert engine.compile(model) is model and engine.compile(mode="max-autotune")(model) is model
    assert engine.backends.cuda.matmul.allow_tf32 is False  # PyTorch's default; a script may set it


def test_a_scaled_step_on_the_gpu_waits_for_the_device_once_in_step_and_once_in_update(simulated_gpu):
    """Whether any gradient is infinite is one flag per optimizer, read once by step() and once by update()
    (PyTorch's reads its found_inf there too), however many parameters there are."""
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to("cuda")
    opt = engine.optim.SGD(model.parameters(), lr=0.1)
    scaler = engine.amp.GradScaler("cuda")
    scaler.scale(model(engine.randn(3, 4, device="cuda")).sum()).backward()
    with simulated_gpu.count_syncs() as in_step:
        scaler.step(opt)
    with simulated_gpu.count_syncs() as in_update:
        scaler.update()
    assert len(in_step) == 1 and len(in_update) == 1, (in_step, in_update)
    assert scaler.get_scale() == 65536.0
