"""Complex tensors through the layers' ops, as PyTorch 2.13 has them: convolutions (1-, 2- and 3-D, transposed,
grouped, strided, dilated), unfold and fold, logsumexp, embedding, cov and vander. Values and gradients (of a real
loss) equal torch's where torch is installed; first and second derivatives pass gradcheck and gradgradcheck (which
take complex inputs by their real coordinates) everywhere."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.usefixtures("graph_core")

_RNG = np.random.default_rng(0)


def _complex(*shape):
    return _RNG.normal(size=shape) + 1j * _RNG.normal(size=shape)


ARRAYS = {"x": _complex(2, 3, 6, 6), "w": _complex(4, 3, 3, 3), "b": _complex(4), "v": _complex(3, 4)}

EXPRESSIONS = [
    "F.conv2d(x, w, b, padding=1)", "F.conv2d(x, w, b, stride=2, dilation=2)", "F.conv2d(x, w[:3, :1], groups=3)",
    "F.conv1d(x[:, :, 0], w[:, :, 0], b)", "F.conv3d(x[:, :, None].expand(2, 3, 3, 6, 6), w[:, :, None], b)",
    "F.conv_transpose2d(x, w.transpose(0, 1), stride=2)",
    "F.conv_transpose1d(x[:, :, 0], w[:, :, 0].transpose(0, 1), padding=1)",
    "F.unfold(x, 2, stride=2)", "F.fold(F.unfold(x, 3, padding=1), (6, 6), 3, padding=1)",
    "v.logsumexp(1)", "v.logsumexp(0, keepdim=True)", "L.logsumexp(v, (0, 1))", "L.special.logsumexp(v, 1)",
    "L.cov(v)", "L.cov(v, correction=0)",
]


def _run(lib, expr):
    leaves = {k: lib.tensor(a, requires_grad=True) for k, a in ARRAYS.items()}
    out = eval(expr, {"L": lib, "F": lib.nn.functional, **leaves})  # noqa: S307 - the test's own expressions
    weights = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)) * (1 - 0.3j))
    (out * weights).real.sum().backward()

    def plain(t):
        return t.detach().resolve_conj().numpy()

    return plain(out), {k: None if t.grad is None else plain(t.grad) for k, t in leaves.items()}


@pytest.mark.torch
@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_complex_layer_ops_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    (out, grads), (theirs, their_grads) = _run(engine, expr), _run(torch, expr)
    assert out.dtype == theirs.dtype and out.shape == theirs.shape
    np.testing.assert_allclose(out, theirs, rtol=1e-10, atol=1e-10)
    for name in ARRAYS:
        assert (grads[name] is None) == (their_grads[name] is None), name
        if grads[name] is not None:
            np.testing.assert_allclose(grads[name], their_grads[name], rtol=1e-9, atol=1e-10, err_msg=name)


_SMALL = {"x": _complex(1, 2, 4, 4), "w": _complex(2, 2, 2, 2), "v": _complex(3, 4)}
SECOND = {
    "conv2d": (lambda x, w: engine.nn.functional.conv2d(x, w, padding=1), "xw"),
    "conv_transpose2d": (lambda x, w: engine.nn.functional.conv_transpose2d(x, w, stride=2), "xw"),
    "unfold": (lambda x: engine.nn.functional.unfold(x, 2), "x"),
    "fold": (lambda x: engine.nn.functional.fold(engine.nn.functional.unfold(x, 2), (4, 4), 2), "x"),
    "logsumexp": (lambda v: v.logsumexp(1), "v"),
    "embedding": (lambda v: engine.nn.functional.embedding(engine.tensor([0, 2, 0]), v), "v"),
    "cov": (lambda v: engine.cov(v), "v"),
}


@pytest.mark.parametrize("name", SECOND)
def test_first_and_second_derivatives_of_complex_layer_ops(name):
    fn, leaves = SECOND[name]
    args = tuple(engine.tensor(_SMALL[k], requires_grad=True) for k in leaves)
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


@pytest.mark.torch
def test_vander_of_a_complex_vector_is_complex_as_pytorchs():
    """(torch 2.13's own backward of vander raises here: an in-place write of a saved tensor.)"""
    torch = pytest.importorskip("torch")
    ours, theirs = engine.vander(engine.tensor(ARRAYS["v"][0])), torch.vander(torch.tensor(ARRAYS["v"][0]))
    assert ours.dtype == engine.complex128
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert engine.vander(engine.tensor([1, 2, 3])).dtype == engine.int64


def test_a_complex_embeddings_gradient_is_the_sum_of_its_rows_where_torch_213_refuses_one():
    """torch 2.13 computes a complex embedding and refuses its gradient ("embedding does not support automatic
    differentiation for outputs with complex dtype"); the engine's is the sum of the picked rows' gradients."""
    table = engine.tensor(_complex(4, 2), requires_grad=True)
    out = engine.nn.functional.embedding(engine.tensor([0, 2, 0]), table)
    (out * engine.tensor([[1j, 1.0], [2.0, 0.0], [1.0, -1j]])).real.sum().backward()
    np.testing.assert_allclose(table.grad.numpy(), [[1 - 1j, 1 + 1j], [0, 0], [2, 0], [0, 0]])


def test_complex_convolution_on_a_gpu_is_the_cpus(device):
    def run(dev):
        x = engine.tensor(_SMALL["x"], device=dev, requires_grad=True)
        w = engine.tensor(_SMALL["w"], device=dev, requires_grad=True)
        out = engine.nn.functional.conv2d(x, w, padding=1)
        (out.abs() ** 2).sum().backward()
        return [t.detach().cpu().numpy() for t in (out, x.grad, w.grad)]

    for got, expected in zip(run(device), run("cpu"), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
