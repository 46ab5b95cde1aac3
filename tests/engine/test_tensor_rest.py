"""Tensor methods a script of one's own meets that were missing (AttributeError): the random fills ``bernoulli_``,
``random_``, ``cauchy_``, ``log_normal_``, ``geometric_`` (held to their laws by their statistics; a leaf that
requires grad refused, a result's filled part given no gradient, as ``normal_`` and ``uniform_`` now too), the in-place
products ``addmm_``/``addmv_``/``baddbmm_`` (values and every operand's gradient against PyTorch 2.13), and
PyTorch's plain answers for a dense real tensor (``real``, ``conj``, ``layout``, ``storage_offset``, ...)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import engine
from tests.engine.helpers import HAVE_TORCH


def test_bernoulli_fills_with_ones_at_its_rate():
    engine.manual_seed(0)
    x = engine.empty(100_000).bernoulli_(0.3)
    assert set(np.unique(x.numpy()).tolist()) == {0.0, 1.0} and float(x.mean()) == pytest.approx(0.3, abs=0.01)
    p = engine.tensor([0.0, 1.0, 0.5]).expand(20_000, 3)
    drawn = engine.empty(20_000, 3).bernoulli_(p)
    assert drawn.mean(0).tolist() == pytest.approx([0.0, 1.0, 0.5], abs=0.02)
    leaf = engine.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        leaf.bernoulli_()
    with engine.no_grad():  # (as an init function fills a parameter)
        assert set(leaf.bernoulli_(1.0).tolist()) == {1.0}


def test_random_draws_integers_in_its_range():
    engine.manual_seed(0)
    assert set(engine.empty(5000).random_(4).unique().tolist()) == {0.0, 1.0, 2.0, 3.0}
    ints = engine.empty(5000, dtype=engine.int64).random_(-2, 3)
    assert ints.dtype == engine.int64 and set(ints.unique().tolist()) == {-2, -1, 0, 1, 2}
    big = engine.empty(5000).random_()  # float32: the integers it holds exactly, up to 2 ** 24
    assert float(big.min()) >= 0 and float(big.max()) <= 2 ** 24 and float(big.max()) > 2 ** 23
    assert bool((big == big.round()).all())
    assert set(engine.empty(2000, dtype=engine.uint8).random_().unique().tolist()) <= set(range(256))
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=3 >= to=3"):
        engine.empty(2).random_(3, 3)


def test_cauchy_log_normal_and_geometric_draws_follow_their_laws():
    engine.manual_seed(0)
    c = engine.empty(100_000, dtype=engine.float64).cauchy_(1.0, 2.0).numpy()
    q1, med, q3 = np.quantile(c, [0.25, 0.5, 0.75])
    assert (med, q1, q3) == (pytest.approx(1.0, abs=0.05), pytest.approx(-1.0, abs=0.05), pytest.approx(3.0, abs=0.06))
    ln = engine.empty(100_000, dtype=engine.float64).log_normal_(0.5, 0.25).numpy()
    assert float(np.log(ln).mean()) == pytest.approx(0.5, abs=0.01) and float(np.log(ln).std()) == pytest.approx(
        0.25, abs=0.01)
    g = engine.empty(100_000, dtype=engine.int64).geometric_(0.25).numpy()
    assert g.min() == 1 and float(g.mean()) == pytest.approx(4.0, rel=0.02)  # trials to the first success: 1 / p
    assert float((g == 1).mean()) == pytest.approx(0.25, abs=0.01)
    with pytest.raises(RuntimeError, match="geometric_ expects p to be in \\(0, 1\\), but got p=1"):
        engine.empty(2).geometric_(1)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0, but found std=0"):
        engine.empty(2).log_normal_(0, 0)


@pytest.mark.parametrize("fill", ["normal_", "uniform_", "bernoulli_", "exponential_", "cauchy_"])
def test_a_random_fill_of_a_leaf_is_refused_and_of_a_result_recorded(fill):
    """As PyTorch: a leaf that requires grad may be filled under ``no_grad`` only (``normal_`` and ``uniform_`` wrote
    it before); a result's filled part gets no gradient, through a view too (they wrote the memory and left the
    node, so the gradient went on through the values the fill replaced: [2, 2, 2, 2] here)."""
    leaf = engine.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(leaf, fill)()
    with engine.no_grad():
        getattr(leaf, fill)()
    w = engine.ones(4, requires_grad=True)
    h = w * 2
    getattr(h[1:3], fill)()
    (h * engine.tensor([1.0, 10.0, 100.0, 1000.0])).sum().backward()
    assert w.grad.tolist() == [2.0, 0.0, 0.0, 2000.0] and h.grad_fn.name() == "CopySlices"


def _products(lib, name):
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    m1 = lib.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    m2 = lib.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    base = a * 1
    if name == "addmm_":
        base.addmm_(m1, m2, beta=0.5, alpha=2)
    elif name == "addmv_ of a row":
        base[0].addmv_(m1.t()[:4], m2[:3, 0] * 1, beta=0.5, alpha=2)  # (written through a view)
    else:
        batch = base.unsqueeze(0).repeat(2, 1, 1)
        base = batch.baddbmm_(m1.unsqueeze(0).repeat(2, 1, 1), m2.unsqueeze(0).repeat(2, 1, 1), alpha=0.3)
    (base * lib.tensor(np.linspace(-1, 1, base.numel()).reshape(tuple(base.shape)))).sum().backward()
    return [base.detach().numpy(), a.grad.numpy(), m1.grad.numpy(), m2.grad.numpy()]


@pytest.mark.torch
@pytest.mark.parametrize("name", ["addmm_", "addmv_ of a row", "baddbmm_"])
def test_in_place_products_are_torchs(name):
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_products(engine, name), _products(torch, name)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_in_place_products_by_hand():
    x = engine.ones(2, 2)
    assert x.addmm_(engine.eye(2), engine.full((2, 2), 3.0), beta=0.5, alpha=2).tolist() == [[6.5, 6.5], [6.5, 6.5]]
    v = engine.zeros(2)
    assert v.addmv_(engine.tensor([[1.0, 2.0], [3.0, 4.0]]), engine.tensor([1.0, 1.0])).tolist() == [3.0, 7.0]


def test_a_dense_real_tensor_answers_as_pytorchs():
    x = engine.arange(12.0).reshape(3, 4)
    assert x.real is x and x.conj() is x and x.conj_physical().tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
        _ = x.imag
    assert x.layout is engine.strided and repr(engine.strided) == "engine.strided"
    assert not (x.is_sparse or x.is_quantized or x.is_meta or x.is_inference() or x.is_pinned() or x.is_shared())
    assert x.pin_memory() is x and x.share_memory_() is x
    assert (x.storage_offset(), x[1:, 2:].storage_offset(), x.t()[1].storage_offset(), x[2, 3].storage_offset()) == (
        0, 6, 1, 11)
    assert [t.tolist() for t in x.unsafe_chunk(2, 1)] == [t.tolist() for t in x.chunk(2, 1)]
    assert [t.shape for t in x.unsafe_split(2)] == [(2, 4), (1, 4)]
    y = engine.tensor([1.0, 2.0], requires_grad=True)
    assert (y.output_nr, (y * 2).output_nr) == (0, 0)


def test_repeat_and_a_first_matrix_power_are_new_tensors():
    """NumPy reshaped ``repeat``'s broadcast view without copying where it could: the result shared the input's
    memory (a write into the input changed it, and one into it was refused); ``matrix_power(1)`` was the input."""
    x = engine.ones(2)
    tiled, once = x.repeat(3, 1), x.repeat(1)
    x.add_(1)
    assert tiled.tolist() == [[1.0, 1.0]] * 3 and once.tolist() == [1.0, 1.0]
    assert tiled.mul_(2).tolist() == [[2.0, 2.0]] * 3
    assert engine.ones(2, requires_grad=True).repeat(3, 1).grad_fn.name() == "RepeatBackward0"
    m = engine.eye(2)
    p = m.matrix_power(1)
    m.add_(1)
    assert p is not m and p.tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.torch
def test_legacy_new_resize_and_python_callables_are_pytorchs():
    torch = pytest.importorskip("torch")
    for lib in (torch, engine):
        x = lib.arange(6.0)
        assert tuple(x.new(2, 3).shape) == (2, 3) and x.new([1, 2]).tolist() == [1.0, 2.0]
        assert tuple(x.new().shape) == (0,) and tuple(x.new(lib.Size([2, 2])).shape) == (2, 2)
        y = lib.arange(6.0)
        y.resize_(2, 3)
        assert y.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        z = lib.arange(6.0).resize_(2, 2)
        assert z.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        assert tuple(z.resize_as_(lib.ones(3, 3)).shape) == (3, 3) and z[0].tolist() == [0.0, 1.0, 2.0]
        a = lib.arange(4.0)
        assert a.apply_(lambda v: v * v) is a and a.tolist() == [0.0, 1.0, 4.0, 9.0]
        assert lib.arange(4.0).map_(lib.tensor(2.0), lambda p, q: p + q).tolist() == [2.0, 3.0, 4.0, 5.0]
        assert lib.arange(4.0).map2_(lib.ones(4), lib.ones(4) * 3, lambda p, q, r: p * q * r).tolist() == [0, 3, 6, 9]
        w = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            w.resize_(3)
        with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires grad"):
            w.apply_(lambda v: v)


def test_the_data_submodules_and_the_distributed_sampler():
    from engine.utils.data.dataloader import DataLoader, default_collate
    from engine.utils.data.dataset import Dataset, TensorDataset
    from engine.utils.data.distributed import DistributedSampler
    from engine.utils.data.sampler import Sampler

    assert DataLoader is engine.utils.data.DataLoader and default_collate is engine.utils.data.default_collate
    assert Dataset is engine.utils.data.Dataset and Sampler is engine.utils.data.Sampler
    data = TensorDataset(engine.arange(10.0))
    shares = [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # (padded by repeating, as PyTorch's)
    dropped = [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=False, drop_last=True)) for r in range(3)]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    sampler = DistributedSampler(data, num_replicas=2, rank=1, seed=5)
    first = list(sampler)
    assert list(sampler) == first and len(sampler) == 5
    sampler.set_epoch(1)
    assert list(sampler) != first and sorted(set(first) | set(DistributedSampler(data, 2, 0, seed=5))) == list(
        range(10))
    loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, 2, 0, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[0.0, 2.0], [4.0, 6.0], [8.0]]
    with pytest.raises(ValueError, match="Invalid rank 3, rank should be in the interval \\[0, 1\\]"):
        DistributedSampler(data, num_replicas=2, rank=3)


CONVERSIONS = [
    ("2.5 in x", False), ("1.5 in x", True), ("lib.tensor(0.0) in x", True), ("lib.tensor([1.5, -2.0]) in x", True),
    ("lib.tensor([[1.5, 0.0]]) in x", True), ("lib.tensor([[7.0, 7.0]]) in x", False),
    ("lib.float32.is_signed", True), ("lib.uint8.is_signed", False), ("lib.bool.is_signed", False),
    ("lib.int8.is_signed", True), ("lib.float64.is_complex", False), ("x.size(-1)", 2),
]
CONVERSION_REFUSALS = [
    ("'a' in x", RuntimeError, "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               "<class 'str'>."),
    ("lib.ones(3) in x", RuntimeError, "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
                                       "dimension 1"),
    ("int(x)", ValueError, "only one element tensors can be converted to Python scalars"),
    ("float(lib.arange(3))", ValueError, "only one element tensors can be converted to Python scalars"),
    ("bool(x)", RuntimeError, "Boolean value of Tensor with more than one value is ambiguous"),
    ("bool(lib.zeros(0))", RuntimeError, "Boolean value of Tensor with no values is ambiguous"),
    ("x.size(2)", IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("lib.tensor(1.0).size(0)", IndexError, "Dimension specified as 0 but tensor has no dimensions"),
]


def _conversion_env(lib):
    return {"lib": lib, "x": lib.tensor([[1.5, -2.0], [0.0, 3.0]])}


@pytest.mark.parametrize(("expr", "expected"), CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_membership_and_dtype_flags_as_pytorch(expr, expected):
    """``in`` asks whether any element equals it (iterating gave rows whose truth was ambiguous: an error)."""
    assert eval(expr, _conversion_env(engine)) == expected  # noqa: S307 - the table's own expressions
    torch = pytest.importorskip("torch")
    assert eval(expr, _conversion_env(torch)) == expected  # noqa: S307


@pytest.mark.parametrize(("expr", "error", "message"), CONVERSION_REFUSALS, ids=[c[0] for c in CONVERSION_REFUSALS])
def test_conversions_refuse_in_pytorchs_words(expr, error, message):
    for lib in (engine, *([importlib.import_module("torch")] if HAVE_TORCH else [])):
        with pytest.raises(error) as refusal:
            eval(expr, _conversion_env(lib))  # noqa: S307
        assert str(refusal.value) == message, lib.__name__
