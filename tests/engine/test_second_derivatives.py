"""Second derivatives (``create_graph=True``, then a backward of the gradient) of ~140 ops held to PyTorch 2.13:
the elementwise functions and activations of ``test_gradient_edges``, its binary ops, and reductions, losses,
norms, linear algebra, convolution and pooling, indexing and scatters. Its first run found (fixed): ``logit``'s
second derivative outside [0, 1] was finite (PyTorch's first derivative there is a NaN constant, so its own
derivative is 0), and ``det``, ``inv``, ``solve``, ``slogdet``, ``prod``, ``xlogy`` and the p-norms other than 1
and 2, and ``cumprod``, refused ``create_graph`` (now written in the new graph's ops).

Left: PyTorch refuses ``cdist``'s second derivative, which the engine gives.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine
from tests.engine.helpers import walk
from tests.engine.test_gradient_edges import ACTIVATIONS, BINARY, UNARY, _binary, _unary

OTHERS = {
    "softmax": lambda L, x: L.softmax(x, -1),
    "log_softmax": lambda L, x: L.log_softmax(x, -1),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (4,)),
    "sum_sq": lambda L, x: (x * x).sum(0),
    "mean": lambda L, x: x.mean(1),
    "var": lambda L, x: x.var(1),
    "std": lambda L, x: x.std(0),
    "norm": lambda L, x: x.norm(dim=1),
    "norm3": lambda L, x: x.norm(3, dim=1),
    "logsumexp": lambda L, x: x.logsumexp(1),
    "matmul": lambda L, x: x @ x.t(),
    "prod": lambda L, x: x.prod(1),
    "cumsum": lambda L, x: x.cumsum(1) ** 2,
    "cumprod": lambda L, x: x.cumprod(1),
    "max": lambda L, x: x.max(1).values ** 2,
    "amax": lambda L, x: x.amax(0) ** 2,
    "sort": lambda L, x: x.sort(1).values ** 2,
    "topk": lambda L, x: x.topk(2, 1).values ** 3,
    "gather": lambda L, x: x.gather(1, L.tensor([[0, 0], [1, 3], [2, 2]])) ** 2,
    "index": lambda L, x: x[[0, 2, 2]] ** 2,
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0, 3, 1])),
    "mse": lambda L, x: L.nn.functional.mse_loss(x, x.detach() * 0.5 + 1),
    "bce_logits": lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(x, L.sigmoid(x.detach() * 0.3)),
    "huber": lambda L, x: L.nn.functional.huber_loss(x, x.detach() * 0 + 0.3),
    "smooth_l1": lambda L, x: L.nn.functional.smooth_l1_loss(x, x.detach() * 0),
    "kl": lambda L, x: L.nn.functional.kl_div(
        L.log_softmax(x, 1), L.softmax(x.detach().flip(1), 1), reduction="batchmean"
    ),
    "normalize": lambda L, x: L.nn.functional.normalize(x, dim=1),
    "cosine": lambda L, x: L.nn.functional.cosine_similarity(x, x.flip(0)),
    "pdist": lambda L, x: L.nn.functional.pairwise_distance(x, x.flip(0)),
    "conv1d": lambda L, x: L.nn.functional.conv1d(x.unsqueeze(0), x[:2].unsqueeze(1)[:, :, :2].repeat(1, 3, 1)),
    "pool": lambda L, x: L.nn.functional.avg_pool1d(x.unsqueeze(0) ** 2, 2),
    "maxpool": lambda L, x: L.nn.functional.max_pool1d(x.unsqueeze(0), 2) ** 2,
    "where": lambda L, x: L.where(x > 0, x**2, x**3),
    "clamp": lambda L, x: x.clamp(-0.5, 0.5) ** 2,
    "det": lambda L, x: L.linalg.det(x[:, :3]),
    "inv": lambda L, x: L.linalg.inv(x[:, :3] + 3 * L.eye(3, dtype=L.float64)),
    "solve": lambda L, x: L.linalg.solve(x[:, :3] + 3 * L.eye(3, dtype=L.float64), x[:, 3:]),
    "einsum": lambda L, x: L.einsum("ij,kj->ik", x, x),
    "atan2": lambda L, x: L.atan2(x, x.flip(1) + 2),
    "diag": lambda L, x: L.diagonal(x @ x.t()) ** 2,
    "trace": lambda L, x: (x @ x.t()).trace(),
    "outer": lambda L, x: L.outer(x[0], x[1]) ** 2,
    "embedding": lambda L, x: L.nn.functional.embedding(L.tensor([0, 2, 2]), x) ** 2,
    "gelu_tanh": lambda L, x: L.nn.functional.gelu(x, approximate="tanh"),
    "interp": lambda L, x: L.nn.functional.interpolate(x.unsqueeze(0) ** 2, scale_factor=2, mode="linear"),
    "unfold": lambda L, x: L.nn.functional.unfold((x**2).reshape(1, 1, 3, 4), 2),
    "tensor_unfold": lambda L, x: (x**2).unfold(1, 3, 1) ** 2,
    "as_strided": lambda L, x: (x**2).as_strided((3, 3), (1, 2), 1) ** 2,
    "as_strided_of_expand": lambda L, x: x[0].expand(3, 4).as_strided((2, 3), (1, 1)) ** 3,
    "group_norm": lambda L, x: L.nn.functional.group_norm(x.reshape(1, 3, 4), 1),
    "batch_norm": lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True),
    "rms_norm": lambda L, x: L.nn.functional.rms_norm(x, (4,)),
    "glu": lambda L, x: L.nn.functional.glu(x, 1),
    "logcumsumexp": lambda L, x: x.logcumsumexp(1),
    "renorm": lambda L, x: x.renorm(2, 0, 1.0),
    "dist": lambda L, x: L.dist(x, x.flip(0), 3),
    "cdist": lambda L, x: L.cdist(x, x.flip(0) + 0.1),
    "kron": lambda L, x: L.kron(x[:2, :2], x[1:, 2:]) ** 2,
    "quantile": lambda L, x: x.quantile(0.3, 1) ** 2,
    "median": lambda L, x: x.median(1).values ** 2,
    "masked_fill": lambda L, x: x.masked_fill(x > 0.5, 0.0) ** 2,
    "scatter_add": lambda L, x: L.zeros(3, 5, dtype=L.float64).scatter_add(1, L.tensor([[0, 1, 1, 4]] * 3), x**2),
    "pow_tensor": lambda L, x: x.abs() ** x,
    "sinc": lambda L, x: L.sinc(x),
    "xlogy": lambda L, x: L.xlogy(x**2, x.abs() + 1),
}


def _run(lib, f, x0):
    x = lib.tensor(x0, requires_grad=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = f(lib, x)
        w = lib.tensor(np.cos(np.arange(out.numel()) + 0.3).reshape(tuple(out.shape)))
        (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=True)
        first = (g + 0).detach().numpy()  # (+ 0: PyTorch's ZeroTensor made an array)
        if not g.requires_grad:
            return first, None
        w2 = lib.tensor(np.sin(np.arange(g.numel()) + 0.7).reshape(tuple(g.shape)))
        (g * w2).sum().backward()
    return first, None if x.grad is None else (x.grad + 0).numpy()


CALLS = {
    **{n: (lambda L, x, n=n: _unary(L, n, x)) for n in UNARY + ACTIVATIONS},
    **{n: (lambda L, x, n=n: _binary(L, n, x, x.flip(1) * 0.7 + 0.1)) for n in BINARY},
    **OTHERS,
}
REFUSED_HERE: set = set()  # (NotImplementedError, by name: none left)
REFUSED_THERE = {"cdist"}  # (PyTorch's own refusal)
VALUES = [np.random.default_rng(1).standard_normal((3, 4)), np.random.default_rng(2).uniform(0.2, 0.9, (3, 4))]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CALLS))
def test_second_derivatives_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    for x0 in VALUES:
        if name in REFUSED_HERE:
            with pytest.raises(NotImplementedError, match="create_graph=True: the engine has no differentiable"):
                _run(engine, CALLS[name], x0)
            return
        ours = _run(engine, CALLS[name], x0)
        if name in REFUSED_THERE:
            with pytest.raises(RuntimeError):
                _run(torch, CALLS[name], x0)
            return
        theirs = _run(torch, CALLS[name], x0)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-8, atol=1e-10, equal_nan=True)
        if theirs[1] is None or ours[1] is None:  # (a gradient that does not depend on x: none, or zeros)
            other = theirs[1] if ours[1] is None else ours[1]
            assert other is None or np.allclose(other, 0)
            continue
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-7, atol=1e-9, equal_nan=True)


def test_second_derivatives_by_hand():
    x = engine.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(engine.linalg.det(x), x, create_graph=True)  # the cofactors: [[3, -1], [-1, 2]]
    np.testing.assert_allclose(g.detach().numpy(), [[3.0, -1.0], [-1.0, 2.0]], rtol=1e-14, atol=1e-15)
    g[0, 0].backward()  # d(cofactor 00)/dx = d x11 / dx
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0], [0.0, 1.0]], atol=1e-14)
    y = engine.tensor([2.0, 0.0, 3.0], dtype=engine.float64, requires_grad=True)
    (h,) = engine.autograd.grad(y.prod(), y, create_graph=True)
    assert h.tolist() == [0.0, 6.0, 0.0]  # (exact through the 0)
    h[1].backward()
    assert y.grad.tolist() == [3.0, 0.0, 2.0]
    z = engine.tensor([-0.5, 0.5], dtype=engine.float64, requires_grad=True)
    (k,) = engine.autograd.grad(z.logit().sum(), z, create_graph=True)
    k.sum().backward()
    assert np.isnan(k[0].item()) and z.grad.tolist() == [0.0, 0.0]  # (0 outside [0, 1]; (2x - 1) / ... at 0.5)


# the gradient of a piecewise-linear op stays connected to the input (its own gradient zeros), as PyTorch's: the
# first gradient requires grad, is made by this node (torch 2.13's name), and a second derivative is zeros where it
# was a refusal ("element 0 of tensors does not require grad")
CONNECTED = {
    "relu": (lambda L, x: x.relu(), "ThresholdBackwardBackward0"),
    "leaky_relu": (lambda L, x: L.nn.functional.leaky_relu(x, 0.2), "LeakyReluBackwardBackward0"),
    "hardtanh": (lambda L, x: L.nn.functional.hardtanh(x, -0.7, 0.7), "HardtanhBackwardBackward0"),
    "relu6": (lambda L, x: L.nn.functional.relu6(x + 5.5), "HardtanhBackwardBackward0"),
    "threshold": (lambda L, x: L.nn.functional.threshold(x, 0.1, -2.0), "ThresholdBackwardBackward0"),
    "hardshrink": (lambda L, x: L.nn.functional.hardshrink(x, 0.6), "HardshrinkBackwardBackward0"),
    "softshrink": (lambda L, x: L.nn.functional.softshrink(x, 0.6), "SoftshrinkBackwardBackward0"),
    "rrelu_eval": (lambda L, x: L.nn.functional.rrelu(x, training=False), "RreluWithNoiseBackwardBackward0"),
    "abs": (lambda L, x: x.abs(), "MulBackward0"),
    "norm1": (lambda L, x: x.norm(1), "MulBackward0"),
    "norm_inf": (lambda L, x: x.norm(float("inf"), dim=1), "MulBackward0"),
    "norm_minus_inf": (lambda L, x: x.norm(-float("inf")), "MulBackward0"),
    "prelu": (lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25], dtype=L.float64)),
              "PreluKernelBackwardBackward0"),
}
_X = [[-1.0, 0.5, 2.0], [0.25, -3.0, 0.0]]


def _connected(lib, name):
    x = lib.tensor(_X, dtype=lib.float64, requires_grad=True)
    out = CONNECTED[name][0](lib, x)
    weights = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)) - 2)
    (g,) = lib.autograd.grad((out * weights).sum(), x, create_graph=True)
    return g


@pytest.mark.parametrize("name", sorted(CONNECTED))
def test_a_piecewise_gradient_stays_connected_as_pytorchs(name):
    g = _connected(engine, name)
    assert g.requires_grad and g.grad_fn.name() == CONNECTED[name][1]
    x = g.grad_fn.next_functions  # (reaches the input: an edge to a leaf's AccumulateGrad, or through sgn)
    assert x
    (gg,) = engine.autograd.grad((g * g).sum(), _leaf_of(g), allow_unused=True)
    assert gg is not None and gg.tolist() == [[0.0] * 3] * 2


def _leaf_of(g):
    seen, stack = set(), [g.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ == "AccumulateGrad":
            return node.variable
        stack.extend(n for n, _ in node.next_functions)
    raise AssertionError("the gradient reaches no leaf")


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CONNECTED))
def test_the_connected_gradients_are_torchs(name):
    torch = pytest.importorskip("torch")
    g, ours = _connected(torch, name), _connected(engine, name)
    assert g.requires_grad and g.grad_fn.name() == CONNECTED[name][1]
    np.testing.assert_array_equal(ours.detach().numpy(), g.detach().numpy())


def test_hardsigmoids_gradient_stays_connected_where_pytorch_has_a_refusing_node():
    """PyTorch 2.13 records a NotImplemented node for hardsigmoid's gradient and refuses to differentiate it; the
    engine's is piecewise linear like the others above: connected, its own gradient zeros."""
    x = engine.tensor(_X, dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(engine.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "HardsigmoidBackwardBackward0"
    sixth = float(np.float32(1 / 6))  # (PyTorch's kernel's constant is a float's)
    np.testing.assert_allclose(g.detach().numpy(), [[sixth] * 3, [sixth, 0.0, sixth]], rtol=1e-15)  # (0 at -3)
    (gg,) = engine.autograd.grad((g * g).sum(), x)
    assert gg.tolist() == [[0.0] * 3] * 2


def test_the_hessian_of_a_relu_network_in_its_input_is_zeros_and_in_its_weights_its_own():
    """f(x) = sum(relu(x @ w1) @ w2): piecewise linear in x, so its Hessian in x is zeros (PyTorch's; it was a
    refusal here); in (w1, x) jointly the mixed block is w2's pattern on the active units, worked out by hand."""
    x = engine.tensor([1.0, -2.0], dtype=engine.float64, requires_grad=True)
    w1 = engine.tensor([[1.0, 0.5, -1.0], [0.25, -1.0, 2.0]], dtype=engine.float64)
    w2 = engine.tensor([2.0, -3.0, 0.5], dtype=engine.float64)
    hess = engine.autograd.functional.hessian(lambda z: (z @ w1).relu() @ w2, x)
    assert hess.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    w = w1.clone().requires_grad_()
    (gx,) = engine.autograd.grad((x @ w).relu() @ w2, x, create_graph=True)
    (gw,) = engine.autograd.grad(gx[0], w)  # d/dw[i, j] of sum_j w[0, j] w2[j] [h_j > 0] = [i == 0] w2[j] [h_j > 0]
    h = (x @ w1).detach()  # (0.5, 2.5, -5.0): units 0 and 1 active
    assert h.tolist() == [0.5, 2.5, -5.0]
    assert gw.tolist() == [[2.0, -3.0, 0.0], [0.0, 0.0, 0.0]]


# the gradient of tanh, sigmoid, softmax and log_softmax under create_graph is PyTorch's one node on the gradient and
# the op's output (an edge to the op's own node), that of elu, celu, selu, softplus, hardswish and gelu one node on
# the gradient and the input, with PyTorch's formulas; their own gradients (third derivatives) are PyTorch's too.
# Graphs printed by torch 2.13.0.
OUTPUT_GRADS = {
    "tanh": (lambda L, x: x.tanh(), "TanhBackwardBackward0(None,TanhBackward0(Acc))"),
    "sigmoid": (lambda L, x: x.sigmoid(), "SigmoidBackwardBackward0(None,SigmoidBackward0(Acc))"),
    "softmax": (lambda L, x: L.softmax(x, -1), "SoftmaxBackwardDataBackward0(None,SoftmaxBackward0(Acc))"),
    "log_softmax": (lambda L, x: L.log_softmax(x, 0),
                    "LogSoftmaxBackwardDataBackward0(None,LogSoftmaxBackward0(Acc))"),
    "tanh_of_sigmoid": (lambda L, x: x.sigmoid().tanh(),
                        "SigmoidBackwardBackward0(TanhBackwardBackward0(None,TanhBackward0(SigmoidBackward0(Acc))),"
                        "SigmoidBackward0(Acc))"),
    # and the smooth activations', whose backward reads the input: one node on the gradient and the input
    "elu": (lambda L, x: L.nn.functional.elu(x, 0.7), "EluBackwardBackward0(None,Acc)"),
    "celu": (lambda L, x: L.nn.functional.celu(x, 1.5), "EluBackwardBackward0(None,Acc)"),
    "selu": (lambda L, x: L.nn.functional.selu(x), "EluBackwardBackward0(None,Acc)"),
    "softplus": (lambda L, x: L.nn.functional.softplus(x, 2.0, 3.0), "SoftplusBackwardBackward0(None,Acc)"),
    "hardswish": (lambda L, x: L.nn.functional.hardswish(x * 1.3),
                  "MulBackward0(HardswishBackwardBackward0(None,MulBackward0(Acc,None)),None)"),
    "gelu": (lambda L, x: L.nn.functional.gelu(x), "GeluBackwardBackward0(None,Acc)"),
    "gelu_tanh": (lambda L, x: L.nn.functional.gelu(x, approximate="tanh"), "GeluBackwardBackward0(None,Acc)"),
    "logsigmoid": (lambda L, x: L.nn.functional.logsigmoid(x), "LogSigmoidBackwardBackward0(None,Acc)"),
}


def _three_orders(lib, name):
    x = lib.tensor(_X, dtype=lib.float64, requires_grad=True)
    out = OUTPUT_GRADS[name][0](lib, x)
    weights = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)) / 4 - 0.6)
    (g,) = lib.autograd.grad((out * weights).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad((g * g * weights).sum(), x, create_graph=True)
    (ggg,) = lib.autograd.grad((gg * weights).sum(), x)
    return g, gg, ggg


@pytest.mark.parametrize("name", sorted(OUTPUT_GRADS))
def test_the_gradient_of_an_op_that_reads_its_output_is_pytorchs_node(name):
    g, gg, ggg = _three_orders(engine, name)
    assert walk(g.grad_fn) == OUTPUT_GRADS[name][1]
    assert gg.requires_grad and ggg.shape == (2, 3)


def test_tanhs_second_and_third_derivatives_by_hand():
    """t = tanh x: t' = 1 - t^2, t'' = -2 t t', t''' = -2 t'^2 - 2 t t'' (the sums' gradients, term by term)."""
    x = engine.tensor(_X, dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (gg,) = engine.autograd.grad(g.sum(), x, create_graph=True)
    (ggg,) = engine.autograd.grad(gg.sum(), x)
    t = np.tanh(np.array(_X))
    d1 = 1 - t * t
    d2 = -2 * t * d1
    np.testing.assert_allclose(g.detach().numpy(), d1, rtol=1e-14)
    np.testing.assert_allclose(gg.detach().numpy(), d2, rtol=1e-14)
    np.testing.assert_allclose(ggg.numpy(), -2 * d1 * d1 - 2 * t * d2, rtol=1e-13, atol=1e-15)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(OUTPUT_GRADS))
def test_three_orders_of_derivatives_are_torchs(name):
    torch = pytest.importorskip("torch")
    theirs, ours = _three_orders(torch, name), _three_orders(engine, name)
    assert walk(theirs[0].grad_fn) == OUTPUT_GRADS[name][1]
    for t, o in zip(theirs, ours):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-14)


# the first gradient's graph under create_graph, as torch 2.13 records it: derivatives.yaml's formula written out
# (a number a Scalar argument: MulBackward1, AddBackward1; relu's gradient reads its result); the values of these
# second derivatives are held to torch's by the sweep above
UNARY_GRAD_GRAPHS = {
    "relu": "ThresholdBackwardBackward0(None,ReluBackward0(Acc))",
    "cos": "MulBackward0(None,NegBackward0(SinBackward0(Acc)))",
    "tan": "MulBackward0(None,AddBackward1(PowBackward0(TanBackward0(Acc))))",
    "sqrt": "DivBackward0(None,MulBackward1(SqrtBackward0(Acc)))",
    "rsqrt": "MulBackward0(None,PowBackward0(RsqrtBackward0(Acc)))",
    "reciprocal": "MulBackward0(None,MulBackward0(ReciprocalBackward0(Acc),ReciprocalBackward0(Acc)))",
    "expm1": "MulBackward0(None,AddBackward1(Expm1Backward0(Acc)))",
    "log1p": "DivBackward0(None,AddBackward1(Acc))",
    "log2": "DivBackward0(None,MulBackward1(Acc))",
    "log10": "DivBackward0(None,MulBackward1(Acc))",
    "exp2": "MulBackward1(MulBackward0(None,Exp2Backward0(Acc)))",
    "asin": "MulBackward0(None,RsqrtBackward0(AddBackward1(MulBackward0(NegBackward0(Acc),Acc))))",
    "acos": "MulBackward0(None,NegBackward0(RsqrtBackward0(AddBackward1(MulBackward0(NegBackward0(Acc),Acc)))))",
    "atan": "DivBackward0(None,AddBackward1(MulBackward0(Acc,Acc)))",
    "asinh": "MulBackward0(None,RsqrtBackward0(AddBackward1(PowBackward0(Acc))))",
    "acosh": "MulBackward0(None,RsqrtBackward0(SubBackward1(MulBackward0(Acc,Acc))))",
    "atanh": "DivBackward0(None,SubBackward0(None,PowBackward0(Acc)))",
    "erf": "MulBackward0(MulBackward1(ExpBackward0(NegBackward0(PowBackward0(Acc)))),None)",
    "erfc": "MulBackward0(MulBackward1(ExpBackward0(NegBackward0(PowBackward0(Acc)))),None)",
    "erfinv": "MulBackward0(MulBackward1(ExpBackward0(PowBackward0(ErfinvBackward0(Acc)))),None)",
    "lgamma": "MulBackward0(None,DigammaBackward0(Acc))",
    "square": "MulBackward0(None,MulBackward1(PowBackward0(Acc)))",
    "silu": ("MulBackward0(MulBackward0(None,SigmoidBackward0(Acc)),AddBackward1(MulBackward0(Acc,SubBackward0(Non"
         "e,SigmoidBackward0(Acc)))))"),
    "mish": ("MulBackward0(None,AddBackward0(TanhBackward0(Log1PBackward0(ExpBackward0(Acc))),MulBackward0(MulBack"
         "ward0(Acc,SigmoidBackward0(Acc)),SubBackward0(None,MulBackward0(TanhBackward0(Log1PBackward0(ExpBack"
         "ward0(Acc))),TanhBackward0(Log1PBackward0(ExpBackward0(Acc))))))))"),
    "softsign": ("AddBackward0(DivBackward0(None,AddBackward0(AbsBackward0(Acc),None)),MulBackward0(MulBackward0(None,"
         "DivBackward0(DivBackward0(Acc,AddBackward0(AbsBackward0(Acc),None)),AddBackward0(AbsBackward0(Acc),N"
         "one))),SgnBackward0(Acc)))"),
}


@pytest.mark.parametrize("name", sorted(UNARY_GRAD_GRAPHS))
def test_a_unary_ops_recorded_gradient_is_pytorchs_formula(name):
    x = engine.tensor([-1.7, -0.4, 0.3, 0.8, 2.2], dtype=engine.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (acosh, atanh, ... outside their domain: NaN, as PyTorch's)
        (g,) = engine.autograd.grad(_unary(engine, name, x).sum(), x, create_graph=True)
    assert walk(g.grad_fn) == UNARY_GRAD_GRAPHS[name]


def test_divisions_recorded_gradient_is_pytorchs_formula():
    """div's gradient in its divisor: -grad * ((a / b) / b), derivatives.yaml's order (PyTorch's first-order bits
    too: -grad * a / (b * b) differed in a third of float32 values' last bit)."""
    a, b = (engine.tensor([-1.7, -0.4, 0.3, 0.8, 2.2], dtype=engine.float64, requires_grad=True) for _ in range(2))
    ga, gb = engine.autograd.grad((a / b.flip(0)).sum(), (a, b), create_graph=True)
    assert walk(ga.grad_fn) == "DivBackward0(None,FlipBackward0(Acc))"
    assert walk(gb.grad_fn) == ("FlipBackward0(MulBackward0(None,DivBackward0(DivBackward0(Acc,FlipBackward0(Acc)),"
                                "FlipBackward0(Acc))))")  # (torch 2.13's)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    b = engine.tensor(y, requires_grad=True)
    (engine.tensor(x) / b).backward(engine.ones(1000))
    np.testing.assert_array_equal(b.grad.numpy(), -np.ones(1000, np.float32) * ((x / y) / y))


def test_log_sigmoids_slope_far_right_is_exp_of_minus_x_not_zero():
    """ATen's log_sigmoid_backward: z / (1 + z), z = exp(-|x|), from 0 up (1 - exp(log_sigmoid(x)) rounded to 0 past
    x ~ 37 in float64, ~17 in float32); 1 - z / (1 + z) below 0."""
    x = engine.tensor([40.0, 100.0, -3.0, 0.0], dtype=engine.float64, requires_grad=True)
    engine.nn.functional.logsigmoid(x).sum().backward()
    z = np.exp(-np.abs([40.0, 100.0, -3.0, 0.0]))
    np.testing.assert_allclose(x.grad.numpy(), [z[0] / (1 + z[0]), z[1] / (1 + z[1]), 1 - z[2] / (1 + z[2]), 0.5],
                               rtol=1e-15)
    assert x.grad[1].item() > 0
    f = engine.tensor([20.0], requires_grad=True)  # float32
    engine.nn.functional.logsigmoid(f).sum().backward()
    assert f.grad.item() == pytest.approx(math.exp(-20.0), rel=1e-6)
