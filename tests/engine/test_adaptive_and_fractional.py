"""``nn.AdaptiveLogSoftmaxWithLoss`` and fractional max pooling (``nn.FractionalMaxPool2d/3d``,
``F.fractional_max_pool2d/3d``), held to PyTorch: values, indices, every gradient, a few SGD steps, the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
import engine.nn.functional as EF

rng = np.random.default_rng(7)


def _twin_asm(torch, *args, **kwargs):
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    ours = engine.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    ours.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.torch
@pytest.mark.parametrize("config", [
    dict(in_features=16, n_classes=20, cutoffs=[4, 10, 15], div_value=2.0, head_bias=True),
    dict(in_features=8, n_classes=6, cutoffs=[2], div_value=4.0, head_bias=False),
    dict(in_features=64, n_classes=50, cutoffs=[5, 6, 30]),
])
def test_adaptive_log_softmax_trains_as_pytorchs(config):
    torch = pytest.importorskip("torch")
    ours, theirs = _twin_asm(torch, **config)
    assert repr(ours) == repr(theirs)
    opt_o = engine.optim.SGD(ours.parameters(), lr=0.3)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.3)
    for step in range(4):
        n = 13 if step else 1  # (a batch of one: a cluster with one row, the 0-d index PyTorch's squeeze makes)
        x = rng.standard_normal((n, config["in_features"]))
        y = rng.integers(0, config["n_classes"], n)
        y[: min(n, 3)] = [config["n_classes"] - 1, 0, config["cutoffs"][0]][: min(n, 3)]
        xo, xt = engine.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out_o, out_t = ours(xo, engine.tensor(y)), theirs(xt, torch.tensor(y))
        np.testing.assert_allclose(out_o.output.detach().numpy(), out_t.output.detach().numpy(), rtol=1e-12)
        assert out_o.loss.item() == pytest.approx(out_t.loss.item(), rel=1e-12)
        opt_o.zero_grad()
        opt_t.zero_grad()
        out_o.loss.backward()
        out_t.loss.backward()
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-15)
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            g = np.zeros(q.shape) if q.grad is None else q.grad.numpy()
            np.testing.assert_allclose(np.zeros(p.shape) if p.grad is None else p.grad.numpy(), g, rtol=1e-10,
                                       atol=1e-15, err_msg=name)
        opt_o.step()
        opt_t.step()
    x = rng.standard_normal((9, config["in_features"]))
    np.testing.assert_allclose(ours.log_prob(engine.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert ours.predict(engine.tensor(x)).tolist() == theirs.predict(torch.tensor(x)).tolist()
    # one example, a 0-d target
    out_o = ours(engine.tensor(x[0]), engine.tensor(int(y[1])))
    out_t = theirs(torch.tensor(x[0]), torch.tensor(int(y[1])))
    assert out_o.output.shape == () and out_o.output.item() == pytest.approx(out_t.output.item(), rel=1e-12)


@pytest.mark.torch
def test_adaptive_log_softmax_predicts_in_each_of_its_three_ways():
    """predict: all in the head's shortlist, all in clusters, and a mix (the rows of clusters alone recomputed)."""
    torch = pytest.importorskip("torch")
    ours, theirs = _twin_asm(torch, 16, 10, [3, 6], head_bias=True)
    with torch.no_grad(), engine.no_grad():
        for bias in ([9, 9, 9, -9, -9], [-9, -9, -9, 9, 9], [9, -9, -9, 9, -9]):
            theirs.head.bias.copy_(torch.tensor(bias, dtype=torch.float64))
            ours.head.bias.copy_(engine.tensor(bias, dtype=engine.float64))
            x = rng.standard_normal((7, 16))
            if bias == [9, -9, -9, 9, -9]:
                x[:, :] *= 0.01  # the head's bias decides; the first feature tips some rows into cluster 0
                theirs.head.weight[0, 0] = 4000.0
                ours.head.weight[0, 0] = 4000.0
                x[:3, 0] = 1.0
                x[3:, 0] = -1.0
            got, want = ours.predict(engine.tensor(x)).tolist(), theirs.predict(torch.tensor(x)).tolist()
            assert got == want
            assert got == ours.log_prob(engine.tensor(x)).argmax(dim=1).tolist()


def test_adaptive_log_softmax_refuses_as_pytorch_does():
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        engine.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
    for bad in ([5, 3], [0, 4], [4, 10], [3, 3], [2.5]):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
            engine.nn.AdaptiveLogSoftmaxWithLoss(4, 10, bad)
    asm = engine.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\], but values in range \[0, 12\]"):
        asm(engine.randn(2, 4), engine.tensor([0, 12]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        asm(engine.randn(3, 4), engine.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        asm(engine.randn(2, 4, 1), engine.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        asm(engine.randn(2, 4), engine.tensor([[0, 1]]))


# ------------------------------------------------------------------ fractional max pooling


@pytest.mark.torch
@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fractional_max_pool_is_pytorchs_values_indices_and_gradient(nd, dtype):
    torch = pytest.importorskip("torch")
    cases = 0
    for trial in range(12):
        batch, channels = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sizes = tuple(int(v) for v in rng.integers(3, 12 if nd == 2 else 8, nd))
        kernel = tuple(int(rng.integers(1, min(n - (nd == 3), 4) + 1)) for n in sizes)
        out = tuple(int(rng.integers(1, n - k + (2 if nd == 2 else 1))) for n, k in zip(sizes, kernel))
        x = rng.standard_normal((batch, channels) + sizes)
        if trial % 3 == 0:
            x = np.round(x * 2) / 2  # ties: the first maximum is taken
        if trial % 4 == 1:
            x.ravel()[rng.integers(0, x.size, 3)] = math.nan  # the last NaN of a window is taken
        if trial % 5 == 2:
            x.ravel()[rng.integers(0, x.size, 4)] = -math.inf
        x = x.astype(dtype)
        u = rng.uniform(0, 1, (batch + trial % 2, channels, nd)).astype(dtype)
        ratio = trial % 4 == 3
        kwargs = dict(output_ratio=tuple(o / n + 1e-9 for o, n in zip(out, sizes))) if ratio else dict(
            output_size=out)
        results = []
        for L, F in ((engine, EF), (torch, torch.nn.functional)):
            t = L.tensor(x, requires_grad=True)
            values, idx = getattr(F, f"fractional_max_pool{nd}d")(t, kernel, return_indices=True,
                                                                   _random_samples=L.tensor(u), **kwargs)
            w = L.tensor(np.cos(np.arange(values.numel())).reshape(tuple(values.shape)).astype(dtype))
            (values.nan_to_num(0.0, 0.0, 0.0) * w).sum().backward()
            results.append((values.detach().numpy(), idx.numpy(), t.grad.numpy()))
        (vo, io, go), (vt, it, gt) = results
        np.testing.assert_array_equal(io, it)
        np.testing.assert_array_equal(vo, vt)
        np.testing.assert_allclose(go, gt, rtol=1e-6 if dtype == "float32" else 1e-14)
        cases += 1
    assert cases == 12


@pytest.mark.torch
def test_fractional_max_pool_modules_unbatched_inputs_and_their_own_draws():
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((3, 10, 9))
    u = rng.uniform(0, 1, (1, 3, 2))
    ours = engine.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.6), return_indices=True,
                                         _random_samples=engine.tensor(u))
    theirs = torch.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.6), return_indices=True,
                                          _random_samples=torch.tensor(u))
    (vo, io), (vt, it) = ours(engine.tensor(x)), theirs(torch.tensor(x))
    assert vo.shape == (3, 5, 5)
    np.testing.assert_array_equal(vo.numpy(), vt.numpy())
    np.testing.assert_array_equal(io.numpy(), it.numpy())
    assert "_random_samples" in dict(ours.named_buffers())
    # without samples: drawn from the engine's generator, one per (batch, channel): a valid pooling either way
    pool = engine.nn.FractionalMaxPool3d((2, 2, 1), output_size=(3, 2, 4))
    x = engine.randn(2, 4, 6, 5, 7)
    values = pool(x)
    assert values.shape == (2, 4, 3, 2, 4)
    values, idx = EF.fractional_max_pool3d(x, (2, 2, 1), output_size=(3, 2, 4), return_indices=True)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x.numpy().reshape(2, 4, -1),
                                                                     idx.numpy().reshape(2, 4, -1), -1)
                                  .reshape(values.shape))
    assert engine.nn.functional.fractional_max_pool2d_with_indices(engine.randn(1, 1, 5, 5), 2,
                                                                   output_size=2)[1].dtype == engine.int64


def test_fractional_max_pool_refuses_as_pytorch_does():
    x = engine.randn(1, 2, 6, 6)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        EF.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 6"):
        EF.fractional_max_pool2d(x, 3, output_size=(5, 2))
    with pytest.raises(RuntimeError, match="Expect _random_samples to have the same dtype as input"):
        EF.fractional_max_pool2d(x, 2, output_size=3, _random_samples=engine.rand(1, 2, 2, dtype=engine.float64))
    with pytest.raises(RuntimeError, match="equals to 2; got 3"):
        EF.fractional_max_pool2d(x, 2, output_size=3, _random_samples=engine.rand(1, 2, 3))
    with pytest.raises(RuntimeError, match="no less then input batch size"):
        EF.fractional_max_pool2d(engine.randn(3, 2, 6, 6), 2, output_size=3, _random_samples=engine.rand(1, 2, 2))
    with pytest.raises(RuntimeError, match=r"fractional_max_pool3d_out\(\): pool time 2 too large relative to input "
                       "time 7"):
        EF.fractional_max_pool3d(engine.randn(1, 1, 7, 7, 7), 2, output_size=(6, 3, 3))
    assert EF.fractional_max_pool2d(engine.randn(1, 1, 7, 7), 2, output_size=(6, 3)).shape == (1, 1, 6, 3)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D tensor"):
        EF.fractional_max_pool2d(engine.randn(6, 6), 2, output_size=3)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        engine.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        engine.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
        engine.nn.FractionalMaxPool3d(2)


def test_on_the_cupy_stand_in_both_equal_the_cpus(cuda_device):
    x = rng.standard_normal((2, 3, 9, 8))
    u = rng.uniform(0, 1, (2, 3, 2))
    results = []
    for device in ("cpu", cuda_device):
        t = engine.tensor(x, device=device, requires_grad=True)
        values, idx = EF.fractional_max_pool2d(t, 3, output_size=(4, 5), return_indices=True,
                                               _random_samples=engine.tensor(u, device=device))
        values.sum().backward()
        assert values.device.type == device
        results.append((values.detach().cpu().numpy(), idx.cpu().numpy(), t.grad.cpu().numpy()))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    engine.manual_seed(0)
    asm = engine.nn.AdaptiveLogSoftmaxWithLoss(32, 12, [3, 7]).double()
    x, y = rng.standard_normal((6, 32)), np.array([0, 5, 11, 2, 8, 3])
    cpu = asm(engine.tensor(x), engine.tensor(y)).loss.item()
    asm.to(cuda_device)
    out = asm(engine.tensor(x, device=cuda_device), engine.tensor(y, device=cuda_device))
    assert out.output.device.type == "cuda"
    assert out.loss.item() == pytest.approx(cpu, rel=1e-14)
