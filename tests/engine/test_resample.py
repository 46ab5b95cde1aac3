"""``interpolate``'s nearest, linear and cubic modes as one node each, as PyTorch's (``UpsampleNearest2DBackward0``,
``UpsampleBilinear2DBackward0``, ...): values and gradients worked out here, and compared with torch 2.13 across
modes, dimensions, corner alignment and sizes up and down, through both of backward's ways (a dense map's product,
and sums of runs of taps: ``DENSE_LIMIT``); a NaN in the gradient stays at its taps; integer images; second
derivatives. Then ``F.pad``'s reflect and replicate modes, one node each as PyTorch's (``ReflectionPad2DBackward0``),
and circular, which crops first and wraps round what is left, as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.functions import conv

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

F = engine.nn.functional


@pytest.fixture(params=["dense", "runs"])
def backward_way(request, monkeypatch):
    """Backward by the dense map's product, or (a limit of 0) by the sums of runs of taps."""
    if request.param == "runs":
        monkeypatch.setattr(conv, "DENSE_LIMIT", 0)
    return request.param


def test_linear_weighs_the_two_nearest_and_gives_the_gradient_back_to_them(backward_way):
    x = engine.tensor([[[1.0, 3.0]]], dtype=engine.float64, requires_grad=True)
    y = F.interpolate(x, size=4, mode="linear")  # centres at -0.25, 0.25, 0.75, 1.25 of the input: held at 0 and 1
    np.testing.assert_allclose(y.detach().numpy().ravel(), [1.0, 1.5, 2.5, 3.0])
    assert y.grad_fn.name() == "UpsampleLinear1DBackward0"
    y.backward(engine.tensor([[[1.0, 10.0, 100.0, 1000.0]]], dtype=engine.float64))
    # x0 gets all of y0, 3/4 of y1, 1/4 of y2; x1 the rest
    np.testing.assert_allclose(x.grad.numpy().ravel(), [1 + 7.5 + 25, 2.5 + 75 + 1000])


def test_nearest_sums_each_block_of_the_gradient(backward_way):
    x = engine.arange(6.0).reshape(1, 1, 2, 3).requires_grad_()
    y = F.interpolate(x, scale_factor=2)
    assert y.grad_fn.name() == "UpsampleNearest2DBackward0" and tuple(y.shape) == (1, 1, 4, 6)
    np.testing.assert_array_equal(y.detach().numpy()[0, 0, ::2, ::2], x.detach().numpy()[0, 0])
    g = np.arange(24.0, dtype=np.float32).reshape(1, 1, 4, 6)
    y.backward(engine.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), g.reshape(1, 1, 2, 2, 3, 2).sum((3, 5)))


def test_a_nan_in_the_gradient_stays_at_its_taps(backward_way):
    x = engine.ones(1, 1, 4, 4, requires_grad=True)
    y = F.interpolate(x, scale_factor=2, mode="bilinear")
    g = np.ones(y.shape, dtype=np.float32)
    g[0, 0, 0, 0] = np.nan  # taps x[0:2, 0:2] (the second ones with weight 0, and NaN * 0 is NaN, as in PyTorch)
    y.backward(engine.tensor(g))
    nan = np.isnan(x.grad.numpy()[0, 0])
    assert nan[:2, :2].all() and nan.sum() == 4  # (a product with the whole map would have spread it everywhere)


CASES = [  # (input shape, interpolate's keywords)
    ((2, 3, 5), {"scale_factor": 2, "mode": "nearest"}), ((2, 3, 7), {"size": 4, "mode": "nearest"}),
    ((2, 3, 5), {"scale_factor": 1.7, "mode": "nearest-exact"}), ((2, 3, 6), {"size": 9, "mode": "linear"}),
    ((2, 3, 6), {"size": 4, "mode": "linear", "align_corners": True}),
    ((2, 2, 5, 4), {"scale_factor": 2, "mode": "nearest"}), ((2, 2, 5, 4), {"size": (3, 7), "mode": "nearest-exact"}),
    ((2, 2, 5, 4), {"scale_factor": 2, "mode": "bilinear"}),
    ((2, 2, 5, 4), {"size": (8, 3), "mode": "bilinear", "align_corners": True}),
    ((2, 2, 5, 4), {"scale_factor": (1.5, 2.5), "mode": "bicubic"}),
    ((1, 2, 6, 5), {"size": (4, 9), "mode": "bicubic", "align_corners": True}),
    ((1, 2, 3, 4, 5), {"scale_factor": 2, "mode": "nearest"}),
    ((1, 2, 3, 4, 5), {"size": (5, 2, 7), "mode": "trilinear"}),
    ((1, 2, 3, 4, 5), {"scale_factor": 1.5, "mode": "trilinear", "align_corners": True}),
]


@pytest.mark.torch
@pytest.mark.parametrize(("shape", "kwargs"), CASES, ids=[f"{s}-{k}" for s, k in CASES])
def test_values_gradients_and_node_are_torchs(shape, kwargs, backward_way):
    torch = pytest.importorskip("torch")
    rs = np.random.default_rng(len(shape) * 7 + len(kwargs))
    xd = rs.standard_normal(shape)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = lib.nn.functional.interpolate(x, **kwargs)
        g = np.random.default_rng(1).standard_normal(tuple(y.shape))
        y.backward(lib.tensor(g))
        results.append((y.grad_fn.name(), y.detach().numpy(), x.grad.numpy()))
    assert results[0][0] == results[1][0]
    for mine, theirs in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_second_derivatives_are_torchs(mode):
    torch = pytest.importorskip("torch")
    xd = np.random.default_rng(4).standard_normal((1, 2, 3, 4))
    out = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = lib.nn.functional.interpolate(x, size=(5, 7), mode=mode)
        (g,) = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g ** 2).sum(), x)
        out.append((g.detach().numpy(), gg.numpy()))
    for mine, theirs in zip(*out):
        np.testing.assert_allclose(mine, theirs, rtol=1e-11, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_an_integer_image_is_torchs(mode):
    """Nearest copies the pixels, as PyTorch's; bilinear weighs in floats and rounds, where PyTorch's uint8 kernel
    weighs in fixed point: within 1 of its values."""
    torch = pytest.importorskip("torch")
    img = np.random.default_rng(5).integers(0, 256, (1, 3, 5, 6)).astype(np.uint8)
    mine = F.interpolate(engine.tensor(img), scale_factor=2, mode=mode)
    theirs = torch.nn.functional.interpolate(torch.tensor(img), scale_factor=2, mode=mode)
    assert mine.dtype == engine.uint8
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), atol=0 if mode == "nearest" else 1)


# ------------------------------------------------------------------------------------------------ reflect, replicate

def test_reflect_padding_gives_each_copy_its_gradient_back():
    x = engine.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = F.pad(x, (2, 1), mode="reflect")
    assert y.tolist() == [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]] and y.grad_fn.name() == "ReflectionPad1DBackward0"
    y.backward(engine.tensor([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]))
    assert x.grad.tolist() == [[3.0, 2.0 + 4.0 + 6.0, 1.0 + 5.0]]


def test_replicate_padding_and_cropping():
    x = engine.tensor([[1.0, 2.0, 3.0, 4.0]], requires_grad=True)
    y = F.pad(x, (-1, 2), mode="replicate")  # the first column cropped, the last repeated twice
    assert y.tolist() == [[2.0, 3.0, 4.0, 4.0, 4.0]] and y.grad_fn.name() == "ReplicationPad1DBackward0"
    y.backward(engine.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]]))
    assert x.grad.tolist() == [[0.0, 1.0, 2.0, 12.0]]


PADS = [((2, 3, 5), (2, 1), "reflect"), ((2, 3, 5), (-1, 3), "replicate"), ((2, 3, 5, 6), (1, 2, 3, 0), "reflect"),
        ((2, 3, 5, 6), (4, -2, 0, 7), "replicate"), ((1, 2, 3, 4, 5), (1, 1, 2, 2, 1, 0), "reflect"),
        ((1, 2, 3, 4, 5), (0, 3, 2, 1, 4, 4), "replicate"), ((2, 3, 5), (3, 2), "circular"),
        ((2, 3, 4, 4), (-1, 4, 2, 0), "circular"), ((2, 5), (2, 3), "reflect"), ((2, 5), (0, 0), "replicate")]


@pytest.mark.torch
@pytest.mark.parametrize(("shape", "pad", "mode"), PADS, ids=[str(p) for p in PADS])
def test_padding_is_torchs(shape, pad, mode):
    """Values, gradients, second derivatives, and the node (circular: PyTorch's last node's name; below it,
    PyTorch copies slices, here one node)."""
    torch = pytest.importorskip("torch")
    xd = np.random.default_rng(len(shape) + sum(pad)).standard_normal(shape)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = lib.nn.functional.pad(x, pad, mode=mode)
        (g,) = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        results.append((y.grad_fn.name(), y.detach().numpy(), g.detach().numpy(), gg.numpy()))
    assert results[0][0] == results[1][0]
    # (circular, cropped on one side and wrapped past what is left on the other: PyTorch copies the output into
    # itself, and the gradient of the copy of a copied element is lost there; here it reaches the input, as the
    # values say it should)
    overlapping = mode == "circular" and pad == (-1, 4, 2, 0)
    for mine, theirs in zip(results[0][1:2] if overlapping else results[0][1:], results[1][1:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_circular_padding_crops_then_wraps_what_is_left():
    x = engine.tensor([[0.0, 1.0, 2.0, 3.0]], requires_grad=True)
    y = F.pad(x, (-1, 4), mode="circular")  # 1, 2, 3 kept; four more wrap round them
    assert y.tolist() == [[1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0]]
    y.backward(engine.tensor([[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]]))
    assert x.grad.tolist() == [[0.0, 1.0 + 8.0 + 64.0, 2.0 + 16.0, 4.0 + 32.0]]


# ------------------------------------------------------------------------------------------------ adaptive max pool

def test_adaptive_max_pool_is_one_node_with_each_windows_first_maximum():
    x = engine.tensor([[[1.0, 5.0, 5.0, 2.0, 0.0]]], requires_grad=True)
    y, where = F.adaptive_max_pool1d(x, 3, return_indices=True)  # windows [0, 2), [1, 4), [3, 5)
    assert y.tolist() == [[[5.0, 5.0, 2.0]]] and where.tolist() == [[[1, 1, 3]]]
    assert y.grad_fn.name() == "SqueezeBackward1"
    assert y.grad_fn.next_functions[0][0].name() == "AdaptiveMaxPool2DBackward0"
    y.backward(engine.tensor([[[1.0, 10.0, 100.0]]]))
    assert x.grad.tolist() == [[[0.0, 11.0, 0.0, 100.0, 0.0]]]  # (a maximum two windows share gets both)


AMP = [((2, 3, 7, 5), (3, 2)), ((2, 3, 7), 3), ((1, 2, 5, 6, 7), (2, 3, 4)), ((3, 7, 5), (None, 4)),
       ((2, 2, 4, 4), 4), ((2, 2, 3, 3), 5)]


@pytest.mark.torch
@pytest.mark.parametrize(("shape", "out"), AMP, ids=[str(c) for c in AMP])
def test_adaptive_max_pool_is_torchs(shape, out):
    """Values, indices (ties among the values: the first), gradients, second derivatives and nodes."""
    torch = pytest.importorskip("torch")
    xd = np.round(np.random.default_rng(len(shape)).standard_normal(shape), 1)
    nd = len(shape) - 2 if len(shape) > 3 or shape == (2, 3, 7) else 2
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y, where = getattr(lib.nn.functional, f"adaptive_max_pool{nd}d")(x, out, return_indices=True)
        (g,) = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        results.append((y.grad_fn.name(), where.numpy(), y.detach().numpy(), g.detach().numpy(), gg.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
    for mine, theirs in zip(results[0][2:], results[1][2:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)
