"""``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and ``nn.LinearCrossEntropyOptions`` (PyTorch 2.13),
held to PyTorch: the composition without options, the chunked path with them (values and every gradient), the
options' resolution and checks, the fall-back warning, the refusals; and the chunked path's point, measured: its
peak memory stays far below the logits it never holds."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import engine

rng = np.random.default_rng(5)


def _run(L, x, w, t, *, bias=None, options=None, grad_of=True, **kwargs):
    xs = L.tensor(x, requires_grad=True)
    ws = L.tensor(w, requires_grad=True)
    bs = None if bias is None else L.tensor(bias, requires_grad=True)
    opts = None if options is None else L.nn.LinearCrossEntropyOptions(**options)
    weight = kwargs.pop("weight", None)
    out = L.nn.functional.linear_cross_entropy(xs, ws, L.tensor(t), linear_bias=bs, options=opts,
                                               weight=None if weight is None else L.tensor(weight), **kwargs)
    upstream = L.tensor(np.cos(np.arange(out.numel()) + 0.5).reshape(tuple(out.shape)))
    (out * upstream).sum().backward()
    grads = [xs.grad.numpy(), ws.grad.numpy()] + ([] if bs is None else [bs.grad.numpy()])
    return [out.detach().numpy()] + grads


CASES = [
    dict(reduction="mean"), dict(reduction="sum"), dict(reduction="none"),
    dict(reduction="mean", weight="classes"), dict(reduction="none", weight="classes", ignore_index=3),
    dict(reduction="mean", ignore_index=-100, bias=True), dict(reduction="sum", weight="classes", bias=True),
]


@pytest.mark.torch
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("options", [None, dict(batch_chunk_size=7), dict(), dict(chunking_method="aspect_ratio:4"),
                                     dict(allow_retain_graph=True, batch_chunk_size=64)])
def test_values_and_gradients_are_pytorchs_with_and_without_chunks(case, options):
    torch = pytest.importorskip("torch")
    kwargs = dict(CASES[case])
    n, d, c = 41, 6, 50
    x, w = rng.standard_normal((n, d)), rng.standard_normal((c, d))
    t = rng.integers(0, c, n)
    t[:4] = kwargs.get("ignore_index", -100)
    if kwargs.pop("weight", None):
        kwargs["weight"] = rng.uniform(0.5, 2.0, c)
    bias = rng.standard_normal(c) if kwargs.pop("bias", False) else None
    ours = _run(engine, x, w, t, bias=bias, options=options, **dict(kwargs))
    theirs = _run(torch, x, w, t, bias=bias, options=options, **dict(kwargs))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.mark.torch
def test_the_reference_path_takes_what_cross_entropy_takes():
    torch = pytest.importorskip("torch")
    x, w = rng.standard_normal((9, 5)), rng.standard_normal((4, 5))
    probs = rng.dirichlet(np.ones(4), 9)
    kdim_w, kdim_b = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3))
    kdim_t = rng.integers(0, 4, (9, 3))
    labels = rng.integers(0, 4, 9)
    for ours, theirs in [
        (_run(engine, x, w, probs, label_smoothing=0.2), _run(torch, x, w, probs, label_smoothing=0.2)),
        (_run(engine, x, w, labels, label_smoothing=0.1, reduction="sum"),
         _run(torch, x, w, labels, label_smoothing=0.1, reduction="sum")),
        (_run(engine, x, kdim_w, kdim_t, bias=kdim_b), _run(torch, x, kdim_w, kdim_t, bias=kdim_b)),
        (_run(engine, x[0], w, np.int64(2), options={}), _run(torch, x[0], w, np.int64(2), options={})),
    ]:
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.mark.torch
def test_options_resolve_and_refuse_as_pytorchs():
    torch = pytest.importorskip("torch")
    for L in (engine, torch):
        cpu = L.zeros(1).device
        got = [(o.batch_chunk_size, o.chunking_method, o.acc_policy, str(o.acc_dtype).rsplit(".", 1)[-1])
               for o in (L.nn.LinearCrossEntropyOptions()._adjust(1000, 64, 5000, L.float32, cpu),
                         L.nn.LinearCrossEntropyOptions()._adjust(7, 3, 2, L.float64, cpu),
                         L.nn.LinearCrossEntropyOptions(batch_chunk_size=5)._adjust(100, 10, 10, L.float32, cpu),
                         L.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio")._adjust(
                             300, 16, 4000, L.float64, cpu))]
        assert got == [(8, "aspect_ratio:2", "compact", "float32"), (4, "aspect_ratio:2", "compact", "float64"),
                       (5, None, "compact", "float32"), (2, "aspect_ratio", "compact", "float64")]
        for bad, message in ((dict(acc_policy="x"), "invalid acc_policy: 'x'"),
                             (dict(chunking_method="aspect_ratio:0"), "invalid chunking_method"),
                             (dict(batch_chunk_size=0), "batch_chunk_size must be positive int or None, got 0"),
                             (dict(acc_dtype=L.int64), "acc_dtype must be one of")):
            with pytest.raises(ValueError, match=message):
                L.nn.LinearCrossEntropyOptions(**bad)
        with pytest.raises(ValueError, match="give different chunk sizes"):
            L.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")._adjust(
                100, 10, 10, L.float32, cpu)


@pytest.mark.torch
def test_warnings_refusals_and_the_second_backward_are_pytorchs():
    torch = pytest.importorskip("torch")
    outcomes = []
    for L in (engine, torch):
        seen = []
        x, w, t = L.randn(8, 4, requires_grad=True), L.randn(10, 4), L.randint(0, 10, (8,))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.nn.functional.linear_cross_entropy(x, w, t, label_smoothing=0.1,
                                                 options=L.nn.LinearCrossEntropyOptions())
        seen.append([str(c.message).replace("engine.", "torch.") for c in caught])
        for args, kwargs in (((L.randn(2, 3, 4), w, t), {}), ((x, L.randn(4), t), {}), ((x, L.randn(10, 5), t), {}),
                             ((x, w, t), dict(linear_bias=L.randn(3))),
                             ((x[0], L.randn(10, 2, 4), t[0]), {}),
                             ((x, w, L.rand(8, 10)), dict(ignore_index=1))):
            with pytest.raises(RuntimeError) as err:
                L.nn.functional.linear_cross_entropy(*args, **kwargs)
            seen.append(str(err.value))
        out = L.nn.functional.linear_cross_entropy(x, w, t, options=L.nn.LinearCrossEntropyOptions())
        out.backward(retain_graph=True)
        with pytest.raises(RuntimeError) as err:
            out.backward()
        seen.append(str(err.value))
        kept = L.nn.functional.linear_cross_entropy(
            x, w, t, options=L.nn.LinearCrossEntropyOptions(allow_retain_graph=True))
        x.grad = None
        kept.backward(retain_graph=True)
        once = x.grad.clone()
        kept.backward()
        seen.append(bool(np.allclose(x.grad.numpy(), 2 * once.numpy())))
        outcomes.append(seen)
    assert outcomes[0] == outcomes[1]


@pytest.mark.torch
def test_the_loss_module_is_pytorchs():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.LinearCrossEntropyLoss(6, 5, out_features=(2,), bias=True, label_smoothing=0.05).double()
    ours = engine.nn.LinearCrossEntropyLoss(6, 5, out_features=(2,), bias=True, label_smoothing=0.05).double()
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == ["linear.weight", "linear.bias"]
    ours.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x, t = rng.standard_normal((7, 6)), rng.integers(0, 5, (7, 2))
    lo, lt = ours(engine.tensor(x), engine.tensor(t)), theirs(torch.tensor(x), torch.tensor(t))
    lo.backward()
    lt.backward()
    assert lo.item() == pytest.approx(lt.item(), rel=1e-12)
    np.testing.assert_allclose(ours.linear.weight.grad.numpy(), theirs.linear.weight.grad.numpy(), rtol=1e-11)
    with pytest.raises(RuntimeError, match=r"expected weight shape to be \(5,\)"):
        engine.nn.LinearCrossEntropyLoss(6, 5, weight=engine.ones(4))
    with pytest.raises(RuntimeError, match=r"expected label_smoothing to be in range \[0, 1\]"):
        engine.nn.LinearCrossEntropyLoss(6, 5, label_smoothing=1.5)


def test_the_chunked_path_never_holds_the_logits():
    """4096 rows, 2000 classes: the logits alone are 65.5 MB in float64. In 64-row chunks the forward and backward
    together peak under a fifth of that (the chunk's logits are 1 MB); the plain path holds them (and more)."""
    n, d, c = 4096, 32, 2000
    x = engine.randn(n, d, dtype=engine.float64, requires_grad=True)
    w = engine.randn(c, d, dtype=engine.float64, requires_grad=True)
    t = engine.randint(0, c, (n,))
    logits_bytes = n * c * 8

    def peak(options):
        tracemalloc.start()
        try:
            loss = engine.nn.functional.linear_cross_entropy(x, w, t, options=options)
            loss.backward()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            x.grad = w.grad = None

    chunked = peak(engine.nn.LinearCrossEntropyOptions(batch_chunk_size=64))
    plain = peak(None)
    assert chunked < logits_bytes / 5, chunked
    assert plain > logits_bytes, plain


def test_on_the_cupy_stand_in_the_chunked_path_equals_the_cpus(cuda_device):
    x, w, t = rng.standard_normal((30, 5)), rng.standard_normal((12, 5)), rng.integers(0, 12, 30)
    results = []
    for device in ("cpu", cuda_device):
        xs = engine.tensor(x, device=device, requires_grad=True)
        ws = engine.tensor(w, device=device, requires_grad=True)
        for reduction in ("mean", "none"):
            out = engine.nn.functional.linear_cross_entropy(
                xs, ws, engine.tensor(t, device=device), reduction=reduction,
                options=engine.nn.LinearCrossEntropyOptions(batch_chunk_size=8))
            out.sum().backward()
            assert out.device.type == device
            results.append((out.detach().cpu().numpy(), xs.grad.cpu().numpy().copy(), ws.grad.cpu().numpy().copy()))
    for a, b in zip(results[:2], results[2:]):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-13)
