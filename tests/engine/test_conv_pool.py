"""Convolution and pooling, as a learner's image model uses them (the "What is torch.nn really?" tutorial's CNN):
values worked by hand, gradients against central differences, every geometry against PyTorch where it is
installed, PyTorch's modules printed as PyTorch prints them, bad arguments refused by name, and a small CNN that
learns, on each device without a host synchronisation per step."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import nn


def _t(array, requires_grad=False):
    return engine.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


# ----------------------------------------------------------------------------- values worked by hand

def test_a_convolution_is_the_cross_correlation_worked_by_hand():
    x = _t(np.arange(16.0).reshape(1, 1, 4, 4))
    w = _t([[[[1.0, 0.0], [0.0, -1.0]]]])  # x[i, j] - x[i + 1, j + 1]: -5 everywhere
    assert F.conv2d(x, w).tolist() == [[[[-5.0] * 3] * 3]]
    # stride 2 and a bias: the top-left of each 2x2 block minus its bottom-right, plus 10
    assert F.conv2d(x, w, _t([10.0]), stride=2).tolist() == [[[[5.0, 5.0], [5.0, 5.0]]]]
    # zero padding of 1: the corners meet the padding (x[0, 0] - 0 at the top left, 0 - x[3, 3] at the bottom right)
    out = F.conv2d(x, w, padding=1)
    assert out.shape == (1, 1, 5, 5) and out[0, 0, 0, 0].item() == -0.0 - 0.0 - 0.0 - 0.0 - x[0, 0, 0, 0].item()
    assert out[0, 0, 4, 4].item() == 15.0 and out[0, 0, 2, 2].item() == -5.0
    # dilation 2: x[i, j] - x[i + 2, j + 2] = -10
    assert F.conv2d(x, w, dilation=2).tolist() == [[[[-10.0, -10.0], [-10.0, -10.0]]]]
    # 1-D: a moving sum of three
    assert F.conv1d(_t([[[1.0, 2.0, 3.0, 4.0]]]), _t([[[1.0, 1.0, 1.0]]])).tolist() == [[[6.0, 9.0]]]


def test_groups_keep_their_channels_apart():
    x = _t(np.stack([np.ones((3, 3)), 2 * np.ones((3, 3))])[None])  # channel 0 all 1, channel 1 all 2
    w = _t(np.ones((2, 1, 3, 3)))  # two groups: each output channel sums its own input channel
    assert F.conv2d(x, w, groups=2).flatten().tolist() == [9.0, 18.0]
    assert F.conv2d(x, _t(np.ones((1, 2, 3, 3)))).flatten().tolist() == [27.0]  # one group: both channels


def test_padding_same_keeps_the_size_and_pads_an_even_kernel_more_on_the_right():
    x = _t(np.arange(5.0).reshape(1, 1, 5))
    assert F.conv1d(x, _t([[[1.0, 1.0, 1.0]]]), padding="same").tolist() == [[[1.0, 3.0, 6.0, 9.0, 7.0]]]
    # a kernel of 2: the total padding 1 goes to the right, as PyTorch's
    assert F.conv1d(x, _t([[[1.0, 10.0]]]), padding="same").tolist() == [[[10.0, 21.0, 32.0, 43.0, 4.0]]]
    assert F.conv1d(x, _t([[[1.0, 1.0, 1.0]]]), padding="valid").shape == (1, 1, 3)


def test_pooling_worked_by_hand():
    x = _t(np.arange(16.0).reshape(1, 1, 4, 4))
    assert F.max_pool2d(x, 2).tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    assert F.avg_pool2d(x, 2).tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]
    values, where = F.max_pool2d(x, 2, return_indices=True)
    assert where.tolist() == [[[[5, 7], [13, 15]]]] and where.dtype == engine.int64
    # padding: -inf for the maximum; for the mean counted (count_include_pad) or not
    assert F.max_pool2d(-x, 2, padding=1).tolist()[0][0][0] == [-0.0, -1.0, -3.0]  # windows [-1, 0], [1, 2], [3, 4]
    assert F.avg_pool2d(x, 2, padding=1)[0, 0, 0, 0].item() == 0.0 / 4
    assert F.avg_pool2d(x + 4, 2, padding=1, count_include_pad=False)[0, 0, 0, 0].item() == 4.0
    # ceil_mode: a last, partial window (its mean over the part inside)
    assert F.max_pool2d(x[:, :, :3, :3], 2, ceil_mode=True).tolist() == [[[[5.0, 6.0], [9.0, 10.0]]]]
    # the mean of a partial window: its part inside (2 and 6, then 8 and 9, then 10), as PyTorch's
    assert F.avg_pool2d(x[:, :, :3, :3], 2, ceil_mode=True).tolist() == [[[[2.5, 4.0], [8.5, 10.0]]]]
    assert F.avg_pool2d(x, 2, divisor_override=1).tolist() == [[[[10.0, 18.0], [42.0, 50.0]]]]
    # adaptive: windows spread over the input (3 into 2: [0, 2) and [1, 3), overlapping)
    assert F.adaptive_avg_pool1d(_t([[[1.0, 2.0, 6.0]]]), 2).tolist() == [[[1.5, 4.0]]]
    assert F.adaptive_avg_pool2d(x, 1).tolist() == [[[[7.5]]]]
    assert F.adaptive_avg_pool2d(x, (2, None)).shape == (1, 1, 2, 4)
    assert F.max_pool1d(_t([[[3.0, 1.0, 4.0, 1.0, 5.0]]]), 2).tolist() == [[[3.0, 4.0]]]
    assert F.avg_pool1d(_t([[[3.0, 1.0, 4.0, 1.0, 5.0]]]), 2).tolist() == [[[2.0, 2.5]]]


def test_the_maximums_gradient_goes_to_the_first_maximum_and_sums_where_windows_overlap():
    x = _t([[[[3.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]]]], requires_grad=True)
    F.max_pool2d(x, 2, stride=1).sum().backward()  # four windows: one picks the 3, three the 2 they share
    assert x.grad.tolist() == [[[[1.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.0]]]]
    tie = _t([[[[1.0, 1.0], [1.0, 0.0]]]], requires_grad=True)
    F.max_pool2d(tie, 2).sum().backward()
    assert tie.grad.tolist() == [[[[1.0, 0.0], [0.0, 0.0]]]]  # the first of equal maxima, as PyTorch's
    nan = _t([[[[1.0, float("nan")], [3.0, 2.0]]]], requires_grad=True)
    assert np.isnan(F.max_pool2d(nan, 2).item())  # a NaN in the window is its maximum, as PyTorch's


def test_a_1d_pool_and_an_unbatched_convolution_end_in_a_squeeze_as_pytorchs():
    assert F.max_pool1d(_t(np.ones((1, 2, 4)), True), 2).grad_fn.name() == "SqueezeBackward1"
    conv = nn.Conv2d(2, 3, 3)
    image = engine.randn(2, 5, 5)
    out = conv(image)  # (C, H, W): no batch dimension
    assert out.shape == (3, 3, 3) and out.grad_fn.name() == "SqueezeBackward1"
    assert out.equal(conv(image.unsqueeze(0))[0])


# ----------------------------------------------------------------------------- gradients

GEOMETRIES = [  # (input shape, weight shape, keywords)
    ((2, 3, 7), (4, 3, 3), {"stride": 2, "padding": 1}),
    ((1, 2, 6, 5), (3, 2, 3, 2), {"padding": (1, 0), "dilation": (1, 2)}),
    ((2, 4, 5, 5), (6, 2, 3, 3), {"groups": 2, "stride": (2, 1)}),
    ((1, 2, 4, 4), (2, 2, 2, 2), {"padding": "same"}),
    ((1, 2, 3, 4, 3), (2, 2, 2, 2, 2), {"padding": 1}),
    ((2, 5, 5), (2, 2, 3, 3), {}),  # unbatched 2-D
]


@pytest.mark.parametrize(("x_shape", "w_shape", "kwargs"), GEOMETRIES, ids=[str(g[2]) for g in GEOMETRIES])
def test_convolution_gradients_match_central_differences(x_shape, w_shape, kwargs):
    rng = np.random.default_rng(0)
    x, w, b = (_t(rng.normal(size=s), True) for s in (x_shape, w_shape, w_shape[:1]))
    conv = (F.conv1d, F.conv2d, F.conv3d)[len(w_shape) - 3]
    assert engine.autograd.gradcheck(lambda x, w, b: conv(x, w, b, **kwargs), (x, w, b))
    assert engine.autograd.gradcheck(lambda x, w: conv(x, w, **kwargs), (x, w))  # no bias


@pytest.mark.parametrize("pool", [
    lambda x: F.max_pool2d(x, 2, stride=1, padding=1),
    lambda x: F.max_pool2d(x, 3, stride=2, dilation=2, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 2, padding=1, count_include_pad=False),
    lambda x: F.avg_pool2d(x, (2, 3), divisor_override=4),
    lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
    lambda x: F.max_pool1d(x[0], 3, 2, 1),
    lambda x: F.avg_pool1d(x[0], 2, ceil_mode=True),
    lambda x: F.adaptive_avg_pool1d(x[0], 4),
    lambda x: F.max_pool3d(x, 2),
    lambda x: F.avg_pool3d(x, (1, 2, 2)),
], ids=["max pad", "max dilated ceil", "avg ceil", "avg exclude pad", "avg divisor", "adaptive", "max 1d",
        "avg 1d", "adaptive 1d", "max 3d", "avg 3d"])
def test_pooling_gradients_match_central_differences(pool):
    x = _t(np.random.default_rng(1).permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 10.0, True)  # no ties
    assert engine.autograd.gradcheck(pool, (x,))


# ----------------------------------------------------------------------------- bad arguments

X = engine.randn(2, 3, 8, 8)
W = engine.randn(4, 3, 3, 3)

REFUSED = [
    (lambda: F.conv2d(X.double(), W), r"input is \w+.float64 and weight is \w+.float32: they must be one dtype"),
    (lambda: F.conv2d(X, W, engine.randn(4).double()), r"weight is \w+.float32 and bias is \w+.float64"),
    (lambda: F.conv2d(X, W, padding="foo"), "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(X, W, padding="same", stride=2), "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(X, W, padding=-1), "negative padding is not supported"),
    (lambda: F.conv2d(X, W, stride=0), "non-positive stride is not supported"),
    (lambda: F.conv2d(X, W, dilation=0), "non-positive dilation is not supported"),
    (lambda: F.conv2d(X, W, groups=0), "non-positive groups is not supported"),
    (lambda: F.conv2d(X, W, groups=2), r"Given groups=2, weight of size \[4, 3, 3, 3\], expected input\[2, 3, 8, 8\] "
                                       r"to have 6 channels, but got 3 channels instead"),
    (lambda: F.conv2d(X, engine.randn(4, 1, 3, 3), groups=3), "expected weight to be divisible by 3 at dimension 0"),
    (lambda: F.conv2d(X[0, 0], W), r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of "
                                   r"size: \[8, 8\]"),
    (lambda: F.conv2d(X, W[0]), r"conv2d: expected a 4-D weight .* but got weight of size \[3, 3, 3\]"),
    (lambda: F.conv2d(X, W, engine.randn(5)), r"expected bias to be 1-dimensional with 4 elements, but got bias of "
                                              r"size \[5\] instead"),
    (lambda: F.conv2d(X[:, :, :2, :2], W), r"Calculated padded input size per channel: \(2 x 2\). Kernel size: "
                                           r"\(3 x 3\). Kernel size can't be greater than actual input size"),
    (lambda: F.conv2d(X, W, stride=(1, 2, 3)), "expected stride to be a single integer value or a list of 2 values"),
    (lambda: F.max_pool2d(X, 3, padding=2), "pad should be at most half of effective kernel size, but got pad=2, "
                                            "kernel_size=3 and dilation=1"),
    (lambda: F.avg_pool2d(X, 3, padding=2), "pad should be at most half of kernel size, but got pad=2, kernel_size=3"),
    (lambda: F.max_pool2d(X[0, 0, 0], 2),
     r"non-empty 3D or 4D \(batch mode\) tensor expected for input \(max_pool2d: got one of size \[8\]\)"),
    (lambda: F.max_pool2d(X[:, :, :1, :1], 2), r"Given input size: \(3x1x1\). Calculated output size: \(3x0x0\). "
                                               r"Output size is too small"),
    (lambda: F.max_pool2d(X, 0), "kernel size should be greater than zero"),
    (lambda: F.max_pool2d(X, 2, stride=0), "stride should be greater than zero"),
    (lambda: F.avg_pool2d(X.int(), 2), "\"avg_pool2d\" not implemented for 'Int'"),
    (lambda: F.avg_pool2d(X, 2, divisor_override=0), "divisor must be not zero"),
    (lambda: F.adaptive_avg_pool2d(X[0, 0, 0], 2), r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[8\]"),
    (lambda: F.adaptive_avg_pool2d(X, -1), "output_size must be non-negative integers"),
    (lambda: F.max_pool1d(X[0, 0, 0], 2), r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor"),
    (lambda: nn.Unflatten(1, (2, 2))(engine.randn(3, 5)), r"unflatten: Provided sizes \[2, 2\] don't multiply up to "
                                                           r"the size of dim 1 \(5\) in the input tensor"),
]

MODULE_REFUSED = [
    (lambda: nn.Conv2d(3, 4, 3, groups=2), "in_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 3, 3, groups=2), "out_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 4, 3, groups=0), "Conv2d: groups must be a positive integer, got 0"),
    (lambda: nn.Conv2d(4, 4, 3, padding="same", stride=2), "padding='same' is not supported for strided"),
    (lambda: nn.Conv2d(4, 4, 3, padding="foo"), "Invalid padding string 'foo', should be one of"),
    (lambda: nn.Conv2d(4, 4, 3, padding_mode="foo"), "padding_mode must be one of"),
    (lambda: nn.Conv2d(0, 4, 3), "Conv2d: in_channels must be a positive integer, got 0"),
    (lambda: nn.Conv1d(4, 4, 0), "Conv1d: kernel_size must be positive integers, got 0"),
    (lambda: nn.Conv2d(4, 4, (3, 3, 3)), r"Conv2d: kernel_size must be an integer or 2 integers, got \(3, 3, 3\)"),
]


@pytest.mark.parametrize(("call", "message"), REFUSED, ids=[m[:40] for _, m in REFUSED])
def test_bad_arguments_are_refused_by_name(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


@pytest.mark.parametrize(("call", "message"), MODULE_REFUSED, ids=[m[:40] for _, m in MODULE_REFUSED])
def test_a_layer_with_bad_settings_is_refused_when_made(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_padding_mode_pads_the_input_before_the_convolution():
    """Worked by hand: a 1x3 kernel of ones over [1, 2, 3, 4] padded by one on each side sums each window of the
    padded row: reflect pads [2, 1, 2, 3, 4, 3], replicate [1, 1, 2, 3, 4, 4], circular [4, 1, 2, 3, 4, 1]; each
    input element's gradient counts the windows it (or its copy in the padding) falls in."""
    x = engine.tensor([[[1.0, 2.0, 3.0, 4.0]]], requires_grad=True)
    expected = {"reflect": ([5.0, 6.0, 9.0, 10.0], [2.0, 4.0, 4.0, 2.0]),
                "replicate": ([4.0, 6.0, 9.0, 11.0], [3.0, 3.0, 3.0, 3.0]),
                "circular": ([7.0, 6.0, 9.0, 8.0], [3.0, 3.0, 3.0, 3.0]),
                "zeros": ([3.0, 6.0, 9.0, 7.0], [2.0, 3.0, 3.0, 2.0])}
    for mode, (values, grad) in expected.items():
        conv = nn.Conv1d(1, 1, 3, padding=1, bias=False, padding_mode=mode)
        with engine.no_grad():
            conv.weight.fill_(1.0)
        x.grad = None
        y = conv(x)
        y.sum().backward()
        assert y.detach().numpy().ravel().tolist() == values, mode
        assert x.grad.numpy().ravel().tolist() == grad, mode
    assert "padding_mode=circular" in repr(nn.Conv2d(2, 2, 3, padding="same", padding_mode="circular"))


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize(("nd", "padding", "dilation"), [(1, 2, 1), (2, (1, 2), 1), (2, "same", 2), (2, "valid", 1),
                                                          (3, 1, 1)])
def test_padding_modes_are_pytorchs(mode, nd, padding, dilation):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(nd)
    shape = (2, 2) + (5, 6, 4)[:nd]
    x0 = rng.standard_normal(shape)
    ours = getattr(nn, f"Conv{nd}d")(2, 4, 3, padding=padding, dilation=dilation, groups=2, padding_mode=mode).double()
    theirs = getattr(torch.nn, f"Conv{nd}d")(2, 4, 3, padding=padding, dilation=dilation, groups=2,
                                              padding_mode=mode).double()
    ours.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    results = []
    for lib, m in ((engine, ours), (torch, theirs)):
        x = lib.tensor(x0, requires_grad=True)
        y = m(x)
        (y * lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))).sum().backward()
        results.append([y.detach().numpy(), x.grad.numpy(), m.weight.grad.numpy(), m.bias.grad.numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- the modules

def test_modules_hold_pytorchs_parameters_and_print_as_pytorch():
    conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
    assert [tuple(p.shape) for p in conv.parameters()] == [(4, 3, 3, 3), (4,)]
    bound = 1 / np.sqrt(3 * 9)
    assert float(conv.weight.abs().max()) <= bound and float(conv.bias.abs().max()) <= bound
    assert float(conv.weight.abs().max()) > bound / 2  # drawn over the whole range
    assert list(conv.state_dict()) == ["weight", "bias"]
    assert repr(conv) == "Conv2d(3, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"
    assert repr(nn.Conv1d(3, 4, 3)) == "Conv1d(3, 4, kernel_size=(3,), stride=(1,))"
    assert repr(nn.Conv2d(3, 4, (3, 5), bias=False, dilation=2, padding="same")) == \
        "Conv2d(3, 4, kernel_size=(3, 5), stride=(1, 1), padding=same, dilation=(2, 2), bias=False)"
    assert repr(nn.Conv2d(4, 4, 3, groups=2)) == "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), groups=2)"
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool1d(3, 2)) == "MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(nn.AdaptiveAvgPool2d(1)) == "AdaptiveAvgPool2d(output_size=1)"
    assert repr(nn.AdaptiveAvgPool2d((2, None))) == "AdaptiveAvgPool2d(output_size=(2, None))"
    assert repr(nn.BatchNorm2d(4)) == \
        "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert repr(nn.Unflatten(1, (2, 2))) == "Unflatten(dim=1, unflattened_size=(2, 2))"


def test_pool_modules_call_their_functions():
    x = engine.randn(2, 3, 6, 6)
    assert nn.MaxPool2d(2)(x).equal(F.max_pool2d(x, 2))
    values, where = nn.MaxPool2d(3, 1, 1, return_indices=True)(x)
    assert values.equal(F.max_pool2d(x, 3, 1, 1)) and where.shape == (2, 3, 6, 6)
    assert nn.AvgPool2d(3, 2, 1, count_include_pad=False)(x).equal(F.avg_pool2d(x, 3, 2, 1,
                                                                                count_include_pad=False))
    assert nn.AdaptiveAvgPool2d((2, 3))(x).equal(F.adaptive_avg_pool2d(x, (2, 3)))
    assert nn.MaxPool1d(2)(x[0]).equal(F.max_pool1d(x[0], 2))
    assert nn.AvgPool1d(2)(x[0]).equal(F.avg_pool1d(x[0], 2))
    assert nn.AdaptiveAvgPool1d(2)(x[0]).equal(F.adaptive_avg_pool1d(x[0], 2))
    assert nn.Unflatten(1, (3, -1))(x.flatten(1)).equal(x.flatten(2))
    assert x.flatten(1).unflatten(-1, (3, 6, 6)).equal(x)


def test_batch_norm_2d_normalises_each_channel_over_batch_and_positions():
    bn = nn.BatchNorm2d(3)
    x = engine.randn(4, 3, 5, 5) * engine.tensor([1.0, 3.0, 10.0]).view(1, 3, 1, 1) + 7
    out = bn(x)
    per_channel = out.detach().numpy().transpose(1, 0, 2, 3).reshape(3, -1)
    np.testing.assert_allclose(per_channel.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(per_channel.std(1), 1, rtol=1e-3)
    host = x.numpy().transpose(1, 0, 2, 3).reshape(3, -1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * host.mean(1), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * host.var(1, ddof=1), rtol=1e-5)
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        bn(x[0])
    with pytest.raises(ValueError, match=r"BatchNorm2d\(3\) got an input of 2 features"):
        bn(x[:, :2])


# ----------------------------------------------------------------------------- a CNN that learns, on each device

def _bars(n, rng):
    """Images of one bar, vertical (class 0) or horizontal (class 1), at a random place, with noise."""
    x = rng.normal(0, 0.3, size=(n, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 2, n)
    at = rng.integers(1, 7, n)
    for i in range(n):
        if y[i]:
            x[i, 0, at[i], :] += 1.0
        else:
            x[i, 0, :, at[i]] += 1.0
    return x, y


def test_a_small_cnn_learns_on_each_device_without_host_syncs_per_step(device, request):
    from tests import fake_cupy

    rng = np.random.default_rng(0)
    engine.manual_seed(0)
    x, y = _bars(128, rng)
    x, y = engine.tensor(x, device=device), engine.tensor(y, device=device)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(8, 2)).to(device)
    opt = engine.optim.Adam(model.parameters(), lr=0.02)
    sim = "cuda-sim" in request.node.callspec.id
    losses = []
    for _ in range(40):
        with fake_cupy.count_syncs() as seen:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if sim:
            assert seen == [], seen
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]
    model.eval()
    with engine.no_grad():
        xt, yt = _bars(64, rng)
        accuracy = (model(engine.tensor(xt, device=device)).argmax(1).cpu().numpy() == yt).mean()
    assert accuracy > 0.9


def test_the_gpu_gives_the_cpus_values(cuda_device):
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(2, 4, 7, 7)), rng.normal(size=(6, 2, 3, 3))

    def run(dev):
        xt, wt = engine.tensor(x, device=dev, requires_grad=True), engine.tensor(w, device=dev, requires_grad=True)
        out = F.conv2d(xt, wt, stride=2, padding=1, groups=2)
        pooled = F.max_pool2d(out, 3, 1, 1) + F.avg_pool2d(out, 3, 1, 1, count_include_pad=False) \
            + F.adaptive_avg_pool2d(out, (3, 2)).sum()
        pooled.sum().backward()
        return [t.detach().cpu().numpy() for t in (pooled, xt.grad, wt.grad)]

    for a, b in zip(run("cpu"), run(cuda_device)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ----------------------------------------------------------------------------- against PyTorch

def _pairs(torch, arrays):
    return ([engine.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True)
                                                                     for a in arrays])


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # torch's note on its speed
@pytest.mark.parametrize(("x_shape", "w_shape", "kwargs"), GEOMETRIES, ids=[str(g[2]) for g in GEOMETRIES])
def test_convolutions_follow_torch(x_shape, w_shape, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    arrays = [rng.normal(size=s) for s in (x_shape, w_shape, w_shape[:1])]
    _same_as_torchs(torch, f"conv{len(w_shape) - 2}d", arrays, kwargs, rng)


def _same_as_torchs(torch, name, arrays, kwargs, rng):
    """``F.<name>(*arrays, **kwargs)`` with each library, backward from the same random gradient: the outputs,
    every gradient (1e-10) and the node's name the same."""
    grad, results = None, []
    for lib, tensors in zip((engine, torch), _pairs(torch, arrays)):
        out = getattr(lib.nn.functional, name)(*tensors, **kwargs)
        grad = rng.normal(size=tuple(out.shape)) if grad is None else grad
        out.backward(lib.tensor(grad))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in tensors] + [out.grad_fn.name()])
    for a, b in zip(*results):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.torch
def test_every_pooling_geometry_follows_torch_or_is_refused_as_torch_refuses_it():
    """Kernels 1-3, every stride, padding and dilation PyTorch allows, ceil_mode on and off, odd and even sizes:
    values, indices and gradients the same, and the same geometries refused."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    compared = 0
    for k, s, p, d, ceil, h in itertools.product([1, 2, 3], [None, 1, 2, 3], [0, 1], [1, 2], [False, True], [5, 8]):
        x = rng.normal(size=(2, 3, h, 7))
        x[0, 0, 0, 1] = x[0, 0, 0, 0]  # a tie
        calls = [("max_pool2d", {"dilation": d, "return_indices": True})]
        if d == 1:
            calls += [("avg_pool2d", {}), ("avg_pool2d", {"count_include_pad": False}),
                      ("avg_pool2d", {"divisor_override": 3})]
        for name, kwargs in calls:
            (mine,), (theirs,) = _pairs(torch, [x])
            try:
                expected = getattr(torch.nn.functional, name)(theirs, k, s, p, ceil_mode=ceil, **kwargs)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    getattr(F, name)(mine, k, s, p, ceil_mode=ceil, **kwargs)
                continue
            got = getattr(F, name)(mine, k, s, p, ceil_mode=ceil, **kwargs)
            if isinstance(expected, tuple):
                assert got[1].tolist() == expected[1].tolist()
                got, expected = got[0], expected[0]
            g = rng.normal(size=tuple(expected.shape))
            got.backward(engine.tensor(g))
            expected.backward(torch.tensor(g))
            np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-14)
            assert got.grad_fn.name() == expected.grad_fn.name()
            compared += 1
    assert compared > 300


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    "adaptive_avg_pool2d(x, 1)", "adaptive_avg_pool2d(x, 2)", "adaptive_avg_pool2d(x, (2, None))",
    "adaptive_avg_pool2d(x, (4, 3))", "adaptive_avg_pool2d(x, (8, 9))", "adaptive_avg_pool1d(x[0], 3)",
    "max_pool1d(x[0], 3, 2, 1)", "avg_pool1d(x[0], 2, ceil_mode=True)", "max_pool3d(x, 2)",
    "avg_pool3d(x, (1, 2, 2), padding=(0, 1, 1))", "adaptive_avg_pool3d(x, (1, 2, 3))",
    "max_pool2d(x[0], 2)", "avg_pool2d(x[0], 2)",
])
def test_the_other_pools_follow_torch(call):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(6).normal(size=(2, 3, 5, 7))
    results = []
    for lib, (t,) in zip((engine, torch), _pairs(torch, [x])):
        out = eval(call, {"x": t, **vars(lib.nn.functional)})  # noqa: S307 - the test's own calls
        (out * lib.arange(out.numel(), dtype=lib.float64).view(out.shape)).sum().backward()
        results.append((out.detach().numpy(), t.grad.numpy(), out.grad_fn.name()))
    (a, ga, na), (b, gb, nb) = results
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ga, gb, rtol=1e-12, atol=1e-14)
    assert na == nb


@pytest.mark.torch
def test_the_modules_print_as_torchs():
    torch = pytest.importorskip("torch")
    made = ["Conv2d(3, 4, 3, stride=2, padding=1)", "Conv1d(3, 4, 3)", "Conv3d(2, 4, (1, 2, 3), bias=False)",
            "Conv2d(3, 4, (3, 5), bias=False, dilation=2, padding='same')", "Conv2d(4, 4, 3, groups=2)",
            "MaxPool2d(2)", "MaxPool1d(3, 2)", "MaxPool2d(3, 1, 1, ceil_mode=True)", "AvgPool2d(2)", "AvgPool1d(3)",
            "AvgPool2d(3, 1, 1)", "AdaptiveAvgPool2d(1)", "AdaptiveAvgPool2d((2, None))", "AdaptiveAvgPool1d(4)",
            "BatchNorm2d(4)", "Unflatten(1, (2, 2))", "MaxPool3d(2)", "AvgPool3d(2)", "AdaptiveAvgPool3d(2)"]
    for text in made:
        assert repr(eval("nn." + text, {"nn": engine.nn})) == repr(eval("nn." + text, {"nn": torch.nn})), text  # noqa: S307


@pytest.mark.torch
def test_the_tutorials_cnn_trains_as_torchs_from_the_same_weights():
    """The CNN of "What is torch.nn really?" (three strided convolutions, ReLUs, an average pool), its weights
    copied from torch's: ten SGD steps with momentum give the same losses and weights."""
    torch = pytest.importorskip("torch")

    def model(lib):
        return lib.nn.Sequential(
            lib.nn.Unflatten(1, (1, 28, 28)),
            lib.nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1), lib.nn.ReLU(),
            lib.nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1), lib.nn.ReLU(),
            lib.nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1), lib.nn.ReLU(),
            lib.nn.AdaptiveAvgPool2d(1), lib.nn.Flatten())

    theirs = model(torch).double()
    mine = model(engine).double()
    mine.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(7)
    x, y = rng.random((32, 784)), rng.integers(0, 10, 32)
    runs = []
    for lib, net in ((engine, mine), (torch, theirs)):
        opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        xb, yb = lib.tensor(x), lib.tensor(y)
        losses = []
        for _ in range(10):
            loss = lib.nn.functional.cross_entropy(net(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        runs.append((losses, [p.detach().numpy() for p in net.parameters()]))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-10)
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12)


def test_a_cnn_steps_graph_and_profile_name_the_convolution_and_the_pool():
    from engine.autograd.describe import describe
    from engine.profiler import category_of, profile

    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 2))
    x, y = engine.randn(5, 1, 8, 8), engine.tensor([0, 1, 0, 1, 1])
    with profile() as prof:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
    prof.finish(1.0)
    ops = [r.op for r in prof.records]
    assert {"Convolution", "Convolution backward", "MaxPool", "MaxPool backward"} <= set(ops)
    assert category_of("Convolution") == "matrix product" == category_of("Convolution backward")
    assert category_of("MaxPool") == "elementwise"
    graph = describe(loss, names={id(p): n for n, p in model.named_parameters()})
    conv = graph.by_op("Convolution")[0]
    assert conv.grad_fn == "ConvolutionBackward0" and conv.shape == (5, 4, 6, 6)
    assert graph.by_op("MaxPool")[0].grad_fn == "MaxPool2DWithIndicesBackward0"
    assert {leaf.name for leaf in graph.leaves} >= {"0.weight", "0.bias", "4.weight", "4.bias"}


# ----------------------------------------------------------------------------- transposed convolutions

TRANSPOSED = [  # (input, weight (C_in, C_out / groups, *K), settings)
    ((2, 3, 4, 5), (3, 2, 3, 3), {}),
    ((2, 4, 3, 3), (4, 3, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((1, 4, 5), (4, 1, 3), {"groups": 2, "stride": 3, "dilation": 2}),
    ((2, 4, 3, 4), (4, 3, 2, 2), {"groups": 2, "stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    ((3, 2, 4, 4), (2, 4, 4, 4), {"stride": 2, "padding": 1}),  # DCGAN's generator layer: doubles the size
    ((2, 3, 2, 3, 2), (3, 2, 2, 3, 1), {"stride": (1, 2, 1), "output_padding": (0, 1, 0)}),
    ((3, 5), (3, 2, 2), {"stride": 2}),  # unbatched
]


def test_a_transposed_convolution_spreads_each_input_over_its_window_worked_by_hand():
    x = _t([[[1.0, 10.0]]])
    w = _t([[[1.0, 2.0, 3.0]]])
    assert F.conv_transpose1d(x, w).tolist() == [[[1.0, 12.0, 23.0, 30.0]]]  # 1*w, then 10*w one to the right
    assert F.conv_transpose1d(x, w, stride=2).tolist() == [[[1.0, 2.0, 13.0, 20.0, 30.0]]]
    assert F.conv_transpose1d(x, w, stride=2, padding=1).tolist() == [[[2.0, 13.0, 20.0]]]
    assert F.conv_transpose1d(x, w, stride=2, output_padding=1).tolist() == [[[1.0, 2.0, 13.0, 20.0, 30.0, 0.0]]]


@pytest.mark.parametrize(("x_shape", "w_shape", "kwargs"), TRANSPOSED, ids=[str(g) for g in TRANSPOSED])
def test_transposed_convolution_gradients_match_central_differences(x_shape, w_shape, kwargs):
    rng = np.random.default_rng(8)
    groups = kwargs.get("groups", 1)
    x, w = _t(rng.normal(size=x_shape), True), _t(rng.normal(size=w_shape), True)
    b = _t(rng.normal(size=w_shape[1] * groups), True)
    conv = getattr(F, f"conv_transpose{len(w_shape) - 2}d")
    assert engine.autograd.gradcheck(lambda *t: conv(*t, **kwargs), (x, w, b), eps=1e-6, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize(("x_shape", "w_shape", "kwargs"), TRANSPOSED, ids=[str(g) for g in TRANSPOSED])
def test_transposed_convolutions_follow_torch(x_shape, w_shape, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    arrays = [rng.normal(size=s) for s in (x_shape, w_shape, (w_shape[1] * kwargs.get("groups", 1),))]
    _same_as_torchs(torch, f"conv_transpose{len(w_shape) - 2}d", arrays, kwargs, rng)


@pytest.mark.torch
def test_transposed_modules_print_and_size_their_output_as_torchs():
    torch = pytest.importorskip("torch")
    for settings in ({"stride": 2, "padding": 1, "output_padding": 1},
                     {"groups": 2, "bias": False, "dilation": 2}):
        mods = [lib.nn.ConvTranspose2d(4, 2, 3, **settings) for lib in (engine, torch)]
        assert repr(mods[0]) == repr(mods[1])
        assert [n for n, _ in mods[0].named_parameters()] == [n for n, _ in mods[1].named_parameters()]
        assert all(tuple(p.shape) == tuple(q.shape) for p, q in zip(mods[0].parameters(), mods[1].parameters()))
    up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    assert up(engine.zeros(1, 3, 4, 4)).shape == (1, 2, 7, 7)
    assert up(engine.zeros(1, 3, 4, 4), output_size=(8, 8)).shape == (1, 2, 8, 8)  # output_padding 1 chosen
    with pytest.raises(ValueError, match="valid sizes range from 7 to 8"):
        up(engine.zeros(1, 3, 4, 4), output_size=(9, 9))
    bound = 1 / np.sqrt(2 * 9)  # fan_in: out_channels / groups x kernel, as PyTorch's
    assert float(up.weight.abs().max()) <= bound and float(up.weight.abs().max()) > 0.8 * bound


@pytest.mark.parametrize(("call", "message"), [
    (lambda: F.conv_transpose2d(engine.ones(1, 3, 4, 4), engine.ones(2, 2, 3, 3)), "expected input.*to have 2 "
                                                                                   "channels, but got 3"),
    (lambda: F.conv_transpose2d(engine.ones(1, 2, 4, 4), engine.ones(2, 2, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation"),
    (lambda: F.conv_transpose1d(engine.ones(1, 2, 1), engine.ones(2, 2, 1), padding=1), "Output size is too small"),
    (lambda: nn.ConvTranspose2d(2, 2, 3, padding="same"), "padding must be integers"),
])
def test_transposed_convolutions_refuse_bad_arguments_by_name(call, message):
    with pytest.raises((RuntimeError, ValueError), match=message):
        call()


@pytest.mark.torch
def test_a_dcgan_generator_and_discriminator_train_as_torchs_from_the_same_weights():
    """The DCGAN tutorial's shapes, scaled down: a generator of ConvTranspose2d, BatchNorm2d, ReLU and Tanh, a
    discriminator of Conv2d, LeakyReLU and Sigmoid, BCELoss, Adam with betas (0.5, 0.999); three steps of both."""
    torch = pytest.importorskip("torch")

    def make(lib):
        nn_ = lib.nn
        g = nn_.Sequential(nn_.ConvTranspose2d(8, 16, 4, 1, 0, bias=False), nn_.BatchNorm2d(16), nn_.ReLU(True),
                           nn_.ConvTranspose2d(16, 8, 4, 2, 1, bias=False), nn_.BatchNorm2d(8), nn_.ReLU(True),
                           nn_.ConvTranspose2d(8, 1, 4, 2, 1, bias=False), nn_.Tanh())
        d = nn_.Sequential(nn_.Conv2d(1, 8, 4, 2, 1, bias=False), nn_.LeakyReLU(0.2, inplace=True),
                           nn_.Conv2d(8, 16, 4, 2, 1, bias=False), nn_.BatchNorm2d(16), nn_.LeakyReLU(0.2, True),
                           nn_.Conv2d(16, 1, 4, 1, 0, bias=False), nn_.Sigmoid())
        return g.double(), d.double()

    rng = np.random.default_rng(12)
    (g_e, d_e), (g_t, d_t) = make(engine), make(torch)
    for ours, theirs in ((g_e, g_t), (d_e, d_t)):
        for p, q in zip(ours.parameters(), theirs.parameters()):
            values = rng.normal(0, 0.02, size=tuple(p.shape)) if p.dim() > 1 else rng.normal(1, 0.02, size=p.shape)
            with torch.no_grad():
                q.copy_(torch.tensor(values))
            p.data = engine.tensor(values)
    real, noise = rng.uniform(-1, 1, (6, 1, 16, 16)), rng.normal(size=(6, 8, 1, 1))
    losses = {}
    for lib, g, d in ((engine, g_e, d_e), (torch, g_t, d_t)):
        opt_g = lib.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999))
        opt_d = lib.optim.Adam(d.parameters(), lr=2e-4, betas=(0.5, 0.999))
        bce, run = lib.nn.BCELoss(), []
        for _ in range(3):
            d.zero_grad()
            fake = g(lib.tensor(noise))
            loss_d = bce(d(lib.tensor(real)).view(-1), lib.ones(6, dtype=lib.float64)) + \
                bce(d(fake.detach()).view(-1), lib.zeros(6, dtype=lib.float64))
            loss_d.backward()
            opt_d.step()
            g.zero_grad()
            loss_g = bce(d(fake).view(-1), lib.ones(6, dtype=lib.float64))
            loss_g.backward()
            opt_g.step()
            run += [loss_d.item(), loss_g.item()]
        losses[lib.__name__] = run
    np.testing.assert_allclose(losses["engine"], losses["torch"], rtol=1e-9)
    for p, q in zip(g_e.parameters(), g_t.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-8, atol=1e-10)


def test_a_transposed_convolution_on_the_stand_in_gives_the_cpus_values(cuda_device):
    rng = np.random.default_rng(3)
    x, w, b = rng.normal(size=(2, 4, 3, 3)), rng.normal(size=(4, 3, 3, 2)), rng.normal(size=6)

    def run(dev):
        ts = [engine.tensor(a, device=dev, requires_grad=True) for a in (x, w, b)]
        out = F.conv_transpose2d(*ts, stride=2, padding=1, output_padding=1, groups=2)
        (out * out).sum().backward()
        return [t.detach().cpu().numpy() for t in [out, *[t.grad for t in ts]]]

    for a, c in zip(run("cpu"), run(cuda_device)):
        np.testing.assert_allclose(a, c, rtol=1e-12)
