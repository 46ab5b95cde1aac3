"""The rest of PyTorch's ``nn`` that a script of one's own meets, missing before (AttributeError): ``max_unpool``
and ``MaxUnpool1d/2d/3d``, ``max_pool*_with_indices``, ``adaptive_max_pool3d``, ``lp_pool3d``, ``channel_shuffle``,
``alpha_dropout``/``feature_alpha_dropout``, ``gumbel_softmax``, ``multi_margin_loss``, ``multilabel_margin_loss``,
``triplet_margin_with_distance_loss``, the deprecated ``upsample_*`` aliases, the in-place ``relu_`` family,
``Softmax2d``, ``nn.Buffer`` and ``Tensor.exponential_``: values and gradients against PyTorch 2.13 where it is
installed, and worked by hand (or by their statistics, for the random ones) where it is not.

PyTorch's own slip, left: ``celu``'s gradient in float64 differs from the engine's by ~1e-8, because PyTorch's
derivative takes ``1 / alpha.toFloat()`` (float32) where the engine divides in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine

F = engine.nn.functional


def _x(lib, *shape, seed=0, positive=False):
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(np.abs(values) + 0.1 if positive else values, requires_grad=True)


def _pools(lib):
    f = lib.nn.functional
    x3 = _x(lib, 2, 3, 9)
    x4 = _x(lib, 2, 3, 6, 8)
    x5 = _x(lib, 1, 2, 4, 6, 6)
    cases = {
        "adaptive_max_pool3d": (lambda: f.adaptive_max_pool3d(x5, (2, 3, 4)), x5),
        "lp_pool3d": (lambda: f.lp_pool3d(x5.abs() + 0.1, 2, 2), x5),
        "lp_pool3d p3 ceil": (lambda: f.lp_pool3d(x5.abs() + 0.1, 3, (2, 3, 2), stride=1, ceil_mode=True), x5),
        "channel_shuffle": (lambda: f.channel_shuffle(x4, 3), x4),
        "max_pool1d_with_indices": (lambda: f.max_pool1d_with_indices(x3, 2)[0], x3),
        "max_pool2d_with_indices": (lambda: f.max_pool2d_with_indices(x4, 3, 2, 1)[0], x4),
        "max_pool3d_with_indices": (lambda: f.max_pool3d_with_indices(x5, 2)[0], x5),
        "upsample_nearest": (lambda: f.upsample_nearest(x4, scale_factor=2), x4),
        "upsample_bilinear": (lambda: f.upsample_bilinear(x4, size=(5, 9)), x4),
    }
    for nd, x in ((1, x3), (2, x4), (3, x5)):
        pool, unpool = getattr(f, f"max_pool{nd}d"), getattr(f, f"max_unpool{nd}d")
        for k, s, p, bigger in ((2, None, 0, False), (3, 2, 1, False), (2, 2, 0, True)):
            def run(x=x, pool=pool, unpool=unpool, k=k, s=s, p=p, bigger=bigger, nd=nd):
                y, where = pool(x, k, s, p, return_indices=True)
                size = None  # (the default, or the input's: a 3-wide pool's default would miss its last row)
                if p:
                    size = list(x.shape[-nd:])
                if bigger:  # (one more than the default size along each dimension: within stride of it)
                    size = [int((n - 1) * (s or k) - 2 * p + k + 1) for n in y.shape[-nd:]]
                return unpool(y, where, k, s, p, size)
            cases[f"max_unpool{nd}d k{k} s{s} p{p}{' bigger' if bigger else ''}"] = (run, x)
    return cases


def _losses(lib):
    f = lib.nn.functional
    x = _x(lib, 5, 4)
    y = lib.tensor([3, 0, 1, 1, 2])
    w = lib.tensor([0.5, 1.0, 2.0, 1.5], dtype=lib.float64)
    labels = lib.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 1, 2, 0], [0, -1, 0, 0], [2, 2, -1, 0]])
    a, b, c = _x(lib, 5, 3, seed=1), _x(lib, 5, 3, seed=2), _x(lib, 5, 3, seed=3)
    cases = {}
    for p in (1, 2):
        for reduction in ("mean", "sum", "none"):
            cases[f"multi_margin p{p} {reduction}"] = (
                lambda p=p, r=reduction: f.multi_margin_loss(x, y, p=p, margin=0.7, weight=w, reduction=r), x)
    cases["multi_margin one sample"] = (lambda: f.multi_margin_loss(x[0], y[2:3]), x)
    for reduction in ("mean", "sum", "none"):
        cases[f"multilabel_margin {reduction}"] = (
            lambda r=reduction: f.multilabel_margin_loss(x, labels, reduction=r), x)
    cases["multilabel_margin one sample"] = (lambda: f.multilabel_margin_loss(x[1], labels[1]), x)
    for swap in (False, True):
        cases[f"triplet_with_distance swap={swap}"] = (
            lambda s=swap: f.triplet_margin_with_distance_loss(a, b, c, swap=s, margin=0.5), a)
        cases[f"triplet_with_distance cosine swap={swap}"] = (
            lambda s=swap: f.triplet_margin_with_distance_loss(
                a, b, c, distance_function=lambda u, v: 1 - f.cosine_similarity(u, v), swap=s, reduction="none"), a)
    return cases


def _in_place(lib):
    f = lib.nn.functional
    x = _x(lib, 5, 4)
    forms = {"relu_": (), "elu_": (0.5,), "leaky_relu_": (0.2,), "hardtanh_": (-0.5, 0.7), "selu_": (),
             "threshold_": (0.1, -2.0), "rrelu_": (0.1, 0.3)}
    return {name: (lambda n=name, args=args: getattr(f, n)(x * 1, *args), x) for name, args in forms.items()}


ALL = {**_pools(engine), **_losses(engine), **_in_place(engine)}


def _outcome(lib, name):
    make, x = {**_pools(lib), **_losses(lib), **_in_place(lib)}[name]
    out = make()
    (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:`nn.functional.upsample")
@pytest.mark.parametrize("name", sorted(ALL))
def test_values_and_gradients_are_torchs(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _outcome(engine, name), _outcome(torch, name)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_max_unpool_puts_each_maximum_back_at_its_place():
    x = engine.tensor([[[1.0, 5.0, 3.0, 2.0, 0.0, 4.0]]], requires_grad=True)
    y, where = F.max_pool1d(x, 2, return_indices=True)
    assert y.tolist() == [[[5.0, 3.0, 4.0]]] and where.tolist() == [[[1, 2, 5]]]
    back = F.max_unpool1d(y, where, 2)
    assert back.tolist() == [[[0.0, 5.0, 3.0, 0.0, 0.0, 4.0]]]
    (back * engine.arange(6.0)).sum().backward()
    assert x.grad.tolist() == [[[0.0, 1.0, 2.0, 0.0, 0.0, 5.0]]]  # each maximum's place's weight, through both
    assert F.max_unpool1d(y, where, 2, output_size=[7]).shape == (1, 1, 7)
    assert engine.nn.MaxUnpool1d(2)(y, where).tolist() == back.tolist()
    with pytest.raises(ValueError, match=r"invalid output_size \"\[9\]\" \(dim 0 must be between 4 and 8\)"):
        F.max_unpool1d(y, where, 2, output_size=[9])
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 6 \(output volumes are of size 4\)"):
        F.max_unpool1d(y[..., :2], engine.tensor([[[1, 6]]]), 2)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same as that of the input tensor"):
        F.max_unpool1d(y, where[..., :2], 2)


def test_channel_shuffle_interleaves_the_groups():
    x = engine.arange(6.0).reshape(1, 6, 1)
    assert F.channel_shuffle(x, 2).flatten().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert engine.nn.ChannelShuffle(3)(x).flatten().tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 6 channels and 4"):
        F.channel_shuffle(x, 4)


def test_multi_margin_loss_by_hand():
    """x = [0.1, 0.2, 0.4, 0.8], y = 3: the wrong classes' hinges are max(0, 1 - 0.8 + x_j) = 0.3, 0.4, 0.6,
    summed and divided by the 4 classes: 0.325; squared (p=2): (0.09 + 0.16 + 0.36) / 4."""
    x = engine.tensor([[0.1, 0.2, 0.4, 0.8]], dtype=engine.float64)
    assert F.multi_margin_loss(x, engine.tensor([3])).item() == pytest.approx(0.325)
    assert F.multi_margin_loss(x, engine.tensor([3]), p=2).item() == pytest.approx(0.61 / 4)
    weight = engine.tensor([1.0, 1, 1, 2], dtype=engine.float64)  # (the input's dtype, as PyTorch asks)
    assert engine.nn.MultiMarginLoss(weight=weight)(x, engine.tensor([3])).item() == pytest.approx(0.65)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        engine.nn.MultiMarginLoss(p=3)


def test_multilabel_margin_loss_by_hand():
    """PyTorch's documented example: x = [0.1, 0.2, 0.4, 0.8], classes 3 and 0 (then -1 ends the list): 0.85."""
    x = engine.tensor([[0.1, 0.2, 0.4, 0.8]])
    assert engine.nn.MultiLabelMarginLoss()(x, engine.tensor([[3, 0, -1, 1]])).item() == pytest.approx(0.85)


def test_triplet_margin_with_distance_loss_takes_any_distance():
    a, p, n = engine.tensor([[0.0, 0.0]]), engine.tensor([[3.0, 4.0]]), engine.tensor([[1.0, 0.0]])
    loss = engine.nn.TripletMarginWithDistanceLoss(margin=1.0)(a, p, n)
    assert loss.item() == pytest.approx(5.0 - 1.0 + 1.0, rel=1e-5)  # (pairwise_distance's eps aside)
    l1 = engine.nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: (u - v).abs().sum(-1))
    assert l1(a, p, n).item() == pytest.approx(7.0 - 1.0 + 1.0)
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0"):
        engine.nn.TripletMarginWithDistanceLoss(margin=0)


def test_alpha_dropout_keeps_a_selu_nets_mean_and_variance():
    engine.manual_seed(0)
    x = engine.randn(200_000, dtype=engine.float64)
    for p in (0.2, 0.5):
        y = F.alpha_dropout(x, p, training=True)
        assert abs(float(y.mean())) < 0.01 and abs(float(y.var()) - 1) < 0.01
        a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
        dropped = -1.7580993408473766 * a + 1.7580993408473766 * a * p  # what a dropped unit becomes
        share = float(((y - dropped).abs() < 1e-12).double().mean())
        assert share == pytest.approx(p, abs=0.005)
    assert F.alpha_dropout(x, 0.5, training=False) is x
    assert float(F.alpha_dropout(x, 1.0, training=True).abs().max()) == 0.0
    drop = engine.nn.AlphaDropout(0.3)
    drop.eval()
    assert drop(x) is x
    channels = F.feature_alpha_dropout(engine.randn(400, 8, 5, dtype=engine.float64), 0.5, training=True)
    assert bool((channels.std(-1) > 0).float().mean() < 0.75)  # about half the channels dropped whole (std 0)


def test_gumbel_softmax_samples_and_its_hard_form_passes_the_soft_gradient():
    engine.manual_seed(0)
    logits = engine.tensor([[2.0, 0.0, -1.0]], requires_grad=True)
    soft = F.gumbel_softmax(logits.expand(20_000, 3), tau=0.1)
    assert soft.sum(-1).detach().numpy() == pytest.approx(np.ones(20_000))
    picked = np.bincount(soft.argmax(-1).numpy(), minlength=3) / 20_000
    expected = np.exp([2.0, 0.0, -1.0]) / np.exp([2.0, 0.0, -1.0]).sum()  # (the Gumbel-max trick's law)
    np.testing.assert_allclose(picked, expected, atol=0.015)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    assert sorted(hard.detach().flatten().tolist()) == [0.0, 0.0, 1.0]
    (hard * engine.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert logits.grad.abs().sum().item() > 0  # the straight-through estimator's gradient


def test_exponential_draws_have_their_rate():
    engine.manual_seed(0)
    draws = engine.empty(100_000, dtype=engine.float64).exponential_(2.0)
    assert float(draws.min()) >= 0 and float(draws.mean()) == pytest.approx(0.5, rel=0.02)
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0, but found lambda=0"):
        engine.empty(3).exponential_(0)


def test_in_place_forms_write_into_their_input():
    x = engine.tensor([-1.0, 0.5, 2.0])
    assert F.relu_(x) is x and x.tolist() == [0.0, 0.5, 2.0]
    assert F.hardtanh_(x, 0.0, 1.0).tolist() == [0.0, 0.5, 1.0]
    assert F.threshold_(x, 0.6, -1.0).tolist() == [-1.0, -1.0, 1.0]


def test_softmax2d_normalises_over_the_channels():
    x = engine.randn(2, 3, 4, 5)
    out = engine.nn.Softmax2d()(x)
    np.testing.assert_allclose(out.sum(1).numpy(), np.ones((2, 4, 5)), rtol=1e-6)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        engine.nn.Softmax2d()(engine.randn(3, 4))


def test_a_buffer_assigned_to_a_module_is_registered():
    class Model(engine.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = engine.nn.Buffer(engine.ones(2))
            self.scratch = engine.nn.Buffer(engine.zeros(1), persistent=False)
            self.w = engine.nn.Parameter(engine.ones(1))

    m = Model()
    assert list(m.state_dict()) == ["w", "scale"] and [n for n, _ in m.named_buffers()] == ["scale", "scratch"]
    assert isinstance(m.scale, engine.nn.Buffer) and not isinstance(engine.ones(1), engine.nn.Buffer)
    assert m.double().scale.dtype == engine.float64  # moved and cast with the module
    m.scale = engine.nn.Buffer(engine.zeros(3), persistent=False)
    assert list(m.state_dict()) == ["w"]


MODULE_REPRS = {
    "MaxUnpool2d(2)": "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))",
    "MaxUnpool1d(3, stride=2, padding=1)": "MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(1,))",
    "ChannelShuffle(3)": "ChannelShuffle(groups=3)",
    "AlphaDropout(0.2)": "AlphaDropout(p=0.2, inplace=False)",
    "FeatureAlphaDropout()": "FeatureAlphaDropout(p=0.5, inplace=False)",
    "Softmax2d()": "Softmax2d()",
    "MultiMarginLoss()": "MultiMarginLoss()",
    "MultiLabelMarginLoss()": "MultiLabelMarginLoss()",
    "TripletMarginWithDistanceLoss()": "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)",
    "AdaptiveMaxPool3d((2, 3, 4))": "AdaptiveMaxPool3d(output_size=(2, 3, 4))",
    "LPPool3d(2, 3)": "LPPool3d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)",
}


@pytest.mark.parametrize("call", sorted(MODULE_REPRS))
def test_the_modules_print_as_pytorchs(call):
    assert repr(eval("engine.nn." + call)) == MODULE_REPRS[call]
