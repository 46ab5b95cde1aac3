"""What scripts of one's own still named and the engine lacked (AttributeError, ImportError): ``nn.utils.fusion``
(a convolution or Linear and its batch norm folded into one layer for a deployed model), ``nn.utils.skip_init``,
the modules ``nn.utils.clip_grad`` and ``convert_parameters`` that older scripts import from, ``nn.init``'s old
names without the underscore (with PyTorch's FutureWarning), and ``linalg.tensorinv``/``tensorsolve``: values,
gradients and refusals against PyTorch 2.13."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine


def _fused(L, kind):  # noqa: N803
    L.manual_seed(0)
    rng = np.random.default_rng(0)
    nn = L.nn
    if kind == "conv":
        layer, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        x = L.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    elif kind == "conv, no bias":
        layer, bn = nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4, affine=False)
        x = L.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    elif kind == "conv transpose":
        layer, bn = nn.ConvTranspose2d(3, 4, 3), nn.BatchNorm2d(4)
        x = L.tensor(rng.standard_normal((2, 3, 5, 5)).astype(np.float32))
    else:
        layer, bn = nn.Linear(5, 4), nn.BatchNorm1d(4)
        x = L.tensor(rng.standard_normal((8, 5)).astype(np.float32))
    with L.no_grad():  # (the same weights and statistics for both libraries)
        layer.weight.copy_(L.tensor(rng.standard_normal(tuple(layer.weight.shape)).astype(np.float32)))
        if layer.bias is not None:
            layer.bias.copy_(L.tensor(rng.standard_normal(tuple(layer.bias.shape)).astype(np.float32)))
        bn.running_mean.copy_(L.tensor(rng.standard_normal(4).astype(np.float32)))
        bn.running_var.copy_(L.tensor(rng.uniform(0.5, 2, 4).astype(np.float32)))
        if bn.weight is not None:
            bn.weight.copy_(L.tensor(rng.uniform(0.5, 2, 4).astype(np.float32)))
            bn.bias.copy_(L.tensor(rng.standard_normal(4).astype(np.float32)))
    layer.eval()
    bn.eval()
    u = L.nn.utils
    fused = (u.fuse_linear_bn_eval(layer, bn) if kind == "linear" else
             u.fuse_conv_bn_eval(layer, bn, transpose=kind == "conv transpose"))
    with L.no_grad():
        return (fused(x).numpy(), bn(layer(x)).numpy(), fused.weight.detach().numpy(), fused.bias.detach().numpy(),
                type(fused.weight).__name__, fused.weight.requires_grad)


@pytest.mark.parametrize("kind", ["conv", "conv, no bias", "conv transpose", "linear"])
def test_a_layer_and_its_batch_norm_fold_into_one(kind):
    fused_out, separate, weight, bias, kind_name, grad = _fused(engine, kind)
    np.testing.assert_allclose(fused_out, separate, rtol=1e-4, atol=1e-5)
    assert kind_name == "Parameter" and grad
    try:
        import torch
    except ImportError:
        return
    theirs = _fused(torch, kind)
    for mine, other in zip((fused_out, weight, bias), theirs[:1] + theirs[2:4]):
        np.testing.assert_allclose(mine, other, rtol=1e-5, atol=1e-5)


def test_fusion_refusals_are_pytorchs():
    conv, bn = engine.nn.Conv2d(3, 4, 3), engine.nn.BatchNorm2d(4)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        engine.nn.utils.fuse_conv_bn_eval(conv, bn)
    linear, bn5 = engine.nn.Linear(3, 4).eval(), engine.nn.BatchNorm1d(5).eval()
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features or bn.num_features == "
                                             "1, got linear.out_features=4 and bn.num_features=5"):
        engine.nn.utils.fuse_linear_bn_eval(linear, bn5)
    stateless = engine.nn.BatchNorm2d(4, track_running_stats=False).eval()
    with pytest.raises(AssertionError, match="bn.running_mean and bn.running_var must not be None"):
        engine.nn.utils.fuse_conv_bn_eval(conv.eval(), stateless)


def test_skip_init_and_the_submodules_scripts_import_from():
    from engine.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
    from engine.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

    m = engine.nn.utils.skip_init(engine.nn.Linear, 5, 1)
    assert isinstance(m, engine.nn.Linear) and m.weight.shape == (1, 5) and m.weight.device.type == "cpu"
    m2 = engine.nn.utils.skip_init(engine.nn.Linear, in_features=6, out_features=1)
    assert m2.weight.shape == (1, 6)
    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        engine.nn.utils.skip_init(int)

    class NoDevice(engine.nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        engine.nn.utils.skip_init(NoDevice, 3)
    m.weight.grad = engine.full((1, 5), 10.0)
    assert clip_grad_norm_(m.parameters(), 1.0).item() == pytest.approx(np.sqrt(500), rel=1e-6)
    clip_grad_value_(m.parameters(), 0.1)
    assert m.weight.grad.max().item() == pytest.approx(0.1)
    vector = parameters_to_vector(m.parameters())
    vector_to_parameters(vector * 0, m.parameters())
    assert vector.shape == (6,) and m.weight.abs().sum().item() == 0.0


def test_init_s_old_names_warn_and_work():
    engine.manual_seed(0)
    w = engine.empty(3, 4)
    for old, new, args in [("uniform", "uniform_", ()), ("normal", "normal_", ()), ("constant", "constant_", (0.5,)),
                           ("xavier_uniform", "xavier_uniform_", ()), ("xavier_normal", "xavier_normal_", ()),
                           ("kaiming_uniform", "kaiming_uniform_", ()), ("kaiming_normal", "kaiming_normal_", ()),
                           ("orthogonal", "orthogonal_", ()), ("eye", "eye_", ()), ("sparse", "sparse_", (0.5,))]:
        engine.manual_seed(1)
        with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`."):
            got = getattr(engine.nn.init, old)(w, *args).clone()
        engine.manual_seed(1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            expected = getattr(engine.nn.init, new)(w, *args)
        assert got.tolist() == expected.tolist(), old
    conv = engine.empty(4, 4, 3, 3)
    with pytest.warns(FutureWarning, match="nn.init.dirac"):
        engine.nn.init.dirac(conv)
    assert conv[0, 0, 1, 1].item() == 1.0 and conv.sum().item() == 4.0


@pytest.mark.torch
def test_tensorinv_and_tensorsolve_are_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, a2, b2 = rng.standard_normal((4, 6, 8, 3)), rng.standard_normal((6, 4, 6, 4)), rng.standard_normal((6, 4))
    a3, b3 = rng.standard_normal((2, 3, 4, 2, 3, 4)), rng.standard_normal((2, 3, 4))
    results = []
    for L in (engine, torch):
        x, x2, x3 = (L.tensor(v, requires_grad=True) for v in (a, a2, a3))
        inverse = L.linalg.tensorinv(x)
        solved = L.linalg.tensorsolve(x2.permute(1, 3, 0, 2), L.tensor(b2), dims=(0, 2))
        plain = L.linalg.tensorsolve(x3, L.tensor(b3))
        (inverse.sin().sum() + solved.sum() + (plain * plain).sum()).backward()
        results.append([t.detach().numpy() for t in (inverse, solved, plain, x.grad, x2.grad, x3.grad)])
        for call, words in [(lambda L=L, x=x: L.linalg.tensorinv(x, ind=0), "strictly positive integer for 'ind', "
                             "but got 0"),
                            (lambda L=L, x=x: L.linalg.tensorinv(x, ind=1), r"prod\(self.shape\[ind:\]\) == "
                             r"prod\(self.shape\[:ind\]\), but got 144 != 4"),
                            (lambda L=L: L.linalg.tensorsolve(L.ones(6, 5), L.ones(6)), r"but got 5 != 6")]:
            with pytest.raises(RuntimeError, match=words):
                call()
    for mine, theirs in zip(*results, strict=True):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.tensordot(a3, results[0][2], 3), b3, atol=1e-10)  # the solution solves it
