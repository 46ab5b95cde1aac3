"""The nodes the engine records in one piece, as PyTorch does: ``addmm`` (and ``nn.Linear`` through it),
``mse_loss``, ``add``/``sub`` with ``alpha``; and what goes with them: their values (the same bits as the ops
they replace), their gradients (PyTorch's), their refusals (PyTorch's words), PyTorch 2.13's weighted regression
losses, the edges of a node (``next_functions`` and what its hooks see) and ``expand``'s refusals.

Each torch-marked test runs the same thing in torch 2.13 and compares; the others assert values worked out here.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine

pytestmark = [pytest.mark.usefixtures("graph_core"),  # each test compiled and in Python (conftest.py)
              pytest.mark.filterwarnings("ignore:Using a target size")]  # mse_loss of two shapes, on purpose


def _pair(rs, shape, dtype, requires_grad=True):
    """The same random values as an engine tensor and, where torch is installed, a torch one."""
    data = rs.standard_normal(shape).astype(dtype)
    return data, engine.tensor(data, requires_grad=requires_grad)


def _torch():
    return pytest.importorskip("torch")


# ------------------------------------------------------------------------------------------------ addmm, linear

LINEAR_CASES = [  # (input shape, out features, bias shape or None)
    ((5, 3), 4, (4,)), ((3,), 4, (4,)), ((2, 5, 3), 4, (4,)), ((2, 2, 5, 3), 4, (4,)), ((5, 3), 4, None),
    ((2, 5, 3), 4, None), ((0, 3), 4, (4,)), ((5, 0), 4, (4,)), ((5, 3), 1, (1,)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "out", "bias"), LINEAR_CASES, ids=[str(c) for c in LINEAR_CASES])
def test_linear_has_the_values_of_the_product_then_the_bias(shape, out, bias, dtype):
    """One addmm node gives the very bits of ``x @ w.t() + b``, the composite it replaced, and its gradients."""
    rs = np.random.default_rng(abs(hash((shape, out, bias))) % 2**32)
    xd, x = _pair(rs, shape, dtype)
    wd, w = _pair(rs, (out, shape[-1]), dtype)
    b = _pair(rs, bias, dtype)[1] if bias is not None else None
    y = engine.nn.functional.linear(x, w, b)
    with engine.no_grad():
        ref = x @ w.t() + b if b is not None else x @ w.t()
    np.testing.assert_array_equal(y.detach().numpy(), ref.numpy())
    assert y.dtype == ref.dtype and y.shape == (*shape[:-1], out)
    gy = rs.standard_normal(y.shape).astype(dtype)
    y.backward(engine.tensor(gy))
    rows = int(np.prod(shape[:-1]))
    g2 = gy.reshape(rows, out)
    x2 = xd.reshape(rows, shape[-1])
    np.testing.assert_allclose(x.grad.numpy(), (g2 @ wd).reshape(shape), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), g2.T @ x2, rtol=1e-5, atol=1e-5)
    if b is not None:
        np.testing.assert_allclose(b.grad.numpy(), g2.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.torch
@pytest.mark.parametrize(("shape", "out", "bias"), LINEAR_CASES, ids=[str(c) for c in LINEAR_CASES])
def test_linear_is_torchs(shape, out, bias):
    torch = _torch()
    rs = np.random.default_rng(3)
    xd, wd = rs.standard_normal(shape), rs.standard_normal((out, shape[-1]))
    bd = rs.standard_normal(bias) if bias is not None else None
    gy = rs.standard_normal((*shape[:-1], out))
    results = []
    for lib in (engine, torch):
        x, w = (lib.tensor(d, requires_grad=True) for d in (xd, wd))
        b = lib.tensor(bd, requires_grad=True) if bd is not None else None
        y = lib.nn.functional.linear(x, w, b)
        y.backward(lib.tensor(gy))
        results.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy()] + ([b.grad.numpy()] if b is not None
                                                                                else []))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (0.5, 2.0), (0, 1), (0, -3.0), (2, 0)])
def test_addmm_with_beta_and_alpha(beta, alpha):
    """``beta * c + alpha * (m1 @ m2)`` with the bits of the composite; with beta 0 the bias's NaN do not pass."""
    rs = np.random.default_rng(5)
    cd, c = _pair(rs, (4,), np.float32)
    m1d, m1 = _pair(rs, (3, 5), np.float32)
    m2d, m2 = _pair(rs, (5, 4), np.float32)
    y = engine.addmm(c, m1, m2, beta=beta, alpha=alpha)
    product = m1d @ m2d
    if alpha != 1:
        product = product * np.float32(alpha)
    expected = product if beta == 0 else product + (cd * np.float32(beta) if beta != 1 else cd)
    np.testing.assert_allclose(y.detach().numpy(), expected, rtol=1e-6, atol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), np.full(4, 3 * beta, np.float32))
    np.testing.assert_allclose(m1.grad.numpy(), alpha * np.ones((3, 4), np.float32) @ m2d.T, rtol=1e-6)
    np.testing.assert_allclose(m2.grad.numpy(), alpha * m1d.T @ np.ones((3, 4), np.float32), rtol=1e-6)
    nan = engine.full((4,), float("nan"))
    assert not engine.addmm(nan, m1, m2, beta=0).isnan().any()
    assert engine.addmm(nan, m1, m2).isnan().all()


def test_addmm_of_integers_stays_integer():
    m = engine.ones(4, 3, dtype=engine.int64)
    y = engine.addmm(engine.ones(2, dtype=engine.int64), m, engine.ones(3, 2, dtype=engine.int64), beta=2, alpha=3)
    assert y.dtype == engine.int64 and y.tolist() == [[11, 11]] * 4  # printed by torch 2.13 for the same call


ADDMM_REFUSALS = [
    ("linear(x, w, b64)", "self and mat2 must have the same dtype, but got Double and Float"),
    ("linear(x64, w, b)", "mat1 and mat2 must have the same dtype, but got Double and Float"),
    ("linear(x, w, torch.ones(3))", "The expanded size of the tensor (2) must match the existing size (3) at "
                                    "non-singleton dimension 1.  Target sizes: [4, 2].  Tensor sizes: [3]"),
    ("linear(x, w, torch.ones(2, 2))", "The expanded size of the tensor (4) must match the existing size (2) at "
                                       "non-singleton dimension 0.  Target sizes: [4, 2].  Tensor sizes: [2, 2]"),
    ("linear(x, w, torch.ones(3, 4, 2))", "expand(torch.FloatTensor{[3, 4, 2]}, size=[4, 2]): the number of sizes "
                                          "provided (2) must be greater or equal to the number of dimensions in the "
                                          "tensor (3)"),
    ("linear(x, torch.ones(2, 4), b)", "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x2)"),
    ("linear(x3, torch.ones(2, 4), b)", "mat1 and mat2 shapes cannot be multiplied (20x3 and 4x2)"),
    ("torch.addmm(b, x[0], w.t())", "mat1 must be a matrix, got 1-D tensor"),
    ("torch.addmm(b, x, w.t()[0])", "mat2 must be a matrix, got 1-D tensor"),
    ("torch.addmm(b64, x, w.t())", "self and mat2 must have the same dtype, but got Double and Float"),
    ("torch.addmm(torch.ones(5, 2), x, w.t())", "The expanded size of the tensor (4) must match the existing size (5) "
                                                "at non-singleton dimension 0.  Target sizes: [4, 2].  Tensor sizes: "
                                                "[5, 2]"),
]


def _refusal(lib, expression):
    names = {"torch": lib, "linear": lib.nn.functional.linear, "x": lib.ones(4, 3), "x3": lib.ones(5, 4, 3),
             "x64": lib.ones(4, 3, dtype=lib.float64), "w": lib.ones(2, 3, requires_grad=True), "b": lib.ones(2),
             "b64": lib.ones(2, dtype=lib.float64)}
    with pytest.raises(RuntimeError) as caught:
        eval(expression, names)  # noqa: S307 - the table's own expressions
    return str(caught.value)


@pytest.mark.parametrize(("expression", "message"), ADDMM_REFUSALS, ids=[e for e, _ in ADDMM_REFUSALS])
def test_addmm_refuses_in_pytorchs_words(expression, message):
    assert _refusal(engine, expression) == message


@pytest.mark.torch
@pytest.mark.parametrize(("expression", "message"), ADDMM_REFUSALS, ids=[e for e, _ in ADDMM_REFUSALS])
def test_the_refusals_are_torchs(expression, message):
    assert _refusal(_torch(), expression) == message


def test_a_write_to_the_input_of_linear_is_refused_at_backward():
    x = engine.ones(4, 3, requires_grad=True) * 1
    lin = engine.nn.Linear(3, 2)
    y = lin(x)
    x.add_(1)  # the weight's gradient reads x
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ----------------------------------------------------------------------------------------------------- mse_loss

MSE_CASES = [((4, 3), (4, 3)), ((4, 3), (4, 1)), ((4, 1), (4, 3)), ((3,), (2, 3)), ((), ()), ((0, 3), (0, 3))]


@pytest.mark.torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(("a_shape", "b_shape"), MSE_CASES, ids=[str(c) for c in MSE_CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mse_loss_is_torchs_to_the_bit_in_its_gradient(a_shape, b_shape, reduction, dtype):
    """The loss as PyTorch's (its sum may round differently), the gradients PyTorch's bits: its order,
    ``norm * (input - target) * grad``."""
    torch = _torch()
    rs = np.random.default_rng(11)
    ad, bd = (rs.standard_normal(s).astype(dtype) for s in (a_shape, b_shape))
    results = []
    for lib in (engine, torch):
        a, b = lib.tensor(ad, requires_grad=True), lib.tensor(bd, requires_grad=True)
        loss = lib.nn.functional.mse_loss(a, b, reduction=reduction)
        gy = np.linspace(0.5, 1.5, loss.numel()).astype(dtype).reshape(tuple(loss.shape))
        loss.backward(lib.tensor(gy))
        results.append((loss.detach().numpy(), a.grad.numpy(), b.grad.numpy(), loss.grad_fn.name()))
    (l1, ga1, gb1, n1), (l2, ga2, gb2, n2) = results
    np.testing.assert_allclose(l1, l2, rtol=2e-6 if dtype == "float32" else 1e-14)
    np.testing.assert_array_equal(ga1, ga2)
    np.testing.assert_array_equal(gb1, gb2)
    assert n1 == n2


def test_mse_loss_values_and_gradients():
    a = engine.tensor([1.0, 2.0, 4.0], requires_grad=True)
    b = engine.tensor([0.0, 3.0, 1.0], requires_grad=True)
    loss = engine.nn.functional.mse_loss(a, b)
    assert loss.item() == pytest.approx((1 + 1 + 9) / 3) and loss.grad_fn.name() == "MseLossBackward0"
    loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), [2 / 3, -2 / 3, 2.0], rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), [-2 / 3, 2 / 3, -2.0], rtol=1e-6)
    total = engine.nn.MSELoss(reduction="sum")(a, b)
    assert total.item() == 11.0


def test_a_write_to_the_input_of_mse_loss_is_refused_at_backward():
    a = engine.ones(3, requires_grad=True) * 2
    loss = engine.nn.functional.mse_loss(a, engine.zeros(3))
    a.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_regression_losses_are_pytorch_2_13s(name, reduction):
    """Each term times its weight; mse's and l1's 'mean' over the summed weights, huber's over the count (as
    torch 2.13's Python writes each)."""
    rs = np.random.default_rng(2)
    ad, bd, wd = rs.standard_normal((4, 3)), rs.standard_normal((4, 3)), rs.uniform(0.1, 1.0, (4, 3))
    fn = getattr(engine.nn.functional, name)
    got = fn(engine.tensor(ad), engine.tensor(bd), reduction=reduction, weight=engine.tensor(wd)).numpy()
    d = np.abs(ad - bd)
    terms = {"mse_loss": d ** 2, "l1_loss": d, "huber_loss": np.where(d < 1, 0.5 * d ** 2, d - 0.5)}[name] * wd
    expected = {"none": terms, "sum": terms.sum(),
                "mean": terms.sum() / (terms.size if name == "huber_loss" else wd.sum())}[reduction]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_a_weight_of_another_shape_is_refused(name):
    fn = getattr(engine.nn.functional, name)
    with pytest.raises(ValueError, match=r"^Weights and input must have the same size\.$"):
        fn(engine.ones(4, 3), engine.ones(4, 3), weight=engine.ones(3))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weighted_losses_and_their_gradients_are_torchs(name):
    torch = _torch()
    rs = np.random.default_rng(4)
    ad, bd, wd = rs.standard_normal((4, 3)), rs.standard_normal((4, 3)), rs.uniform(0.1, 1.0, (4, 3))
    results = []
    for lib in (engine, torch):
        a, w = lib.tensor(ad, requires_grad=True), lib.tensor(wd, requires_grad=True)
        loss = getattr(lib.nn.functional, name)(a, lib.tensor(bd), weight=w)
        loss.backward()
        results.append((loss.item(), a.grad.numpy(), w.grad.numpy()))
    (l1, ga1, gw1), (l2, ga2, gw2) = results
    assert l1 == pytest.approx(l2, rel=1e-13)
    np.testing.assert_allclose(ga1, ga2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gw1, gw2, rtol=1e-12, atol=1e-15)


# -------------------------------------------------------------------------------------------- add, sub with alpha

@pytest.mark.parametrize("subtract", [False, True])
def test_add_with_alpha_is_one_node_with_the_composites_bits(subtract):
    rs = np.random.default_rng(8)
    ad, a = _pair(rs, (3, 4), np.float32)
    bd, b = _pair(rs, (4,), np.float32)
    y = a.sub(b, alpha=0.3) if subtract else a.add(b, alpha=0.3)
    with engine.no_grad():
        ref = a - b * 0.3 if subtract else a + b * 0.3
    np.testing.assert_array_equal(y.detach().numpy(), ref.numpy())
    assert y.grad_fn.name() == ("SubBackward0" if subtract else "AddBackward0")
    assert [n.name() for n, _ in y.grad_fn.next_functions] == ["torch::autograd::AccumulateGrad"] * 2
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((3, 4), np.float32))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 3 * (-0.3 if subtract else 0.3), np.float32), rtol=1e-6)


# ------------------------------------------------------------------------------------------- a node's edges

class Scale(engine.autograd.Function):
    """A user's Function given numbers and None between its tensors."""

    @staticmethod
    def forward(ctx, x, k, y, flag):
        ctx.k = k
        return x * k + y

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None, g, None


def test_a_users_function_has_an_edge_per_tensor_argument():
    """As PyTorch's apply counts them: the number and the None are no edges; its hooks see one gradient per edge
    (printed by torch 2.13 for the same Function: [('pre', 1), 2])."""
    x, y = engine.tensor([1.0, 2.0], requires_grad=True), engine.tensor([3.0, 4.0])
    out = Scale.apply(x, 2.0, y, None)
    (acc, i), (none, j) = out.grad_fn.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and none is None and i == j == 0
    seen = []
    out.grad_fn.register_hook(lambda gi, go: seen.append([None if g is None else g.tolist() for g in gi]))
    out.grad_fn.register_prehook(lambda go: seen.append(("pre", len(go))))
    out.sum().backward()
    assert seen == [("pre", 1), [[2.0, 2.0], None]] and x.grad.tolist() == [2.0, 2.0]


def test_a_hook_of_a_built_in_sees_a_gradient_per_edge_and_may_replace_it():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    p = x ** 3  # one edge: the 3 is a Scalar argument of PyTorch's pow
    p.grad_fn.register_hook(lambda gi, go: (gi[0] * 10,))
    p.sum().backward()
    assert x.grad.tolist() == [30.0, 120.0]
    q = x.t()  # dims are no edges either
    assert len(q.grad_fn.next_functions) == 1
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of values \(got 2, but expected 1\)"):
        q.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
        q.sum().backward()


def test_create_graph_runs_the_hooks_per_edge_too():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    p = x ** 3
    p.grad_fn.register_hook(lambda gi, go: (gi[0] * 2,))
    (g,) = engine.autograd.grad(p.sum(), x, create_graph=True)
    assert g.tolist() == [6.0, 24.0]
    (gg,) = engine.autograd.grad(g.sum(), x)
    assert gg.tolist() == [12.0, 24.0]  # 2 * 6x: the doubled gradient, recorded


# -------------------------------------------------------------------------------------------------- expand

EXPAND_REFUSALS = [
    ("torch.ones(3).expand(-1, 3)", "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                    "dimension 0"),
    ("torch.ones(3).expand(4, 2)", "The expanded size of the tensor (2) must match the existing size (3) at "
                                   "non-singleton dimension 1.  Target sizes: [4, 2].  Tensor sizes: [3]"),
    ("torch.ones(3, 4, 2).expand(4, 2)", "expand(torch.FloatTensor{[3, 4, 2]}, size=[4, 2]): the number of sizes "
                                         "provided (2) must be greater or equal to the number of dimensions in the "
                                         "tensor (3)"),
    ("torch.ones(3, dtype=torch.float64).expand(2, 2)", "The expanded size of the tensor (2) must match the existing "
                                                        "size (3) at non-singleton dimension 1.  Target sizes: [2, "
                                                        "2].  Tensor sizes: [3]"),
]


@pytest.mark.parametrize(("expression", "message"), EXPAND_REFUSALS, ids=[e for e, _ in EXPAND_REFUSALS])
def test_expand_refuses_in_pytorchs_words(expression, message):
    with pytest.raises(RuntimeError) as caught:
        eval(expression, {"torch": engine})  # noqa: S307 - the table's own expressions
    assert str(caught.value) == message


@pytest.mark.torch
@pytest.mark.parametrize(("expression", "message"), EXPAND_REFUSALS, ids=[e for e, _ in EXPAND_REFUSALS])
def test_the_expand_refusals_are_torchs(expression, message):
    torch = _torch()
    with pytest.raises(RuntimeError) as caught:
        eval(expression, {"torch": torch})  # noqa: S307 - the table's own expressions
    assert str(caught.value) == message


def test_expand_keeps_what_it_may():
    x = engine.ones(2, 1, requires_grad=True)
    assert x.expand(3, -1, 4).shape == (3, 2, 4) and x.expand(engine.Size([2, 5])).shape == (2, 5)
    assert engine.ones(3).expand(0, 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -2: \[-2, 3\]$"):
        engine.ones(1, 3).expand(-2, 3)


# ------------------------------------------------------------------------------ what the app's views read

def test_the_nn_steps_graph_and_profile_show_the_addmm_and_the_mse_node():
    """The tutorial's nn step (Linear, ReLU, Linear, MSELoss): the graph panel's nodes are PyTorch's, and the
    profile counts each Linear as a matrix product, forward and backward."""
    from engine.autograd.describe import describe
    from engine.profiler import category_of, profile

    nn = engine.nn
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2))
    x, y = engine.randn(8, 6), engine.randn(8, 2)
    with profile() as prof:
        loss = nn.MSELoss(reduction="sum")(model(x), y)
        loss.backward(retain_graph=True)
    prof.finish(1.0)
    ops = [r.op for r in prof.records]
    assert ops.count("Addmm") == 2 and ops.count("Addmm backward") == 2 and "MseLoss" in ops
    assert category_of("Addmm") == "matrix product" == category_of("Addmm backward")
    graph = describe(loss, names={id(p): n for n, p in model.named_parameters()})
    assert [n.grad_fn for n in graph.nodes if n.kind == "op"] == [
        "MseLossBackward0", "AddmmBackward0", "ReluBackward0", "TBackward0", "AddmmBackward0", "TBackward0"]
    first = graph.by_op("Addmm")[-1]
    assert first.shape == (8, 5) and {graph.nodes[i].name for i in first.inputs} >= {"0.bias"}


# ------------------------------------------------------------------------------------------------ activations

ACTIVATION_CASES = [  # (function, keywords, PyTorch's node)
    ("silu", {}, "SiluBackward0"), ("elu", {}, "EluBackward0"), ("elu", {"alpha": 0.3}, "EluBackward0"),
    ("celu", {"alpha": 2.0}, "CeluBackward0"), ("selu", {}, "EluBackward0"),
    ("leaky_relu", {}, "LeakyReluBackward0"), ("leaky_relu", {"negative_slope": 0.2}, "LeakyReluBackward0"),
    ("softplus", {}, "SoftplusBackward0"), ("softplus", {"beta": 2.0, "threshold": 5.0}, "SoftplusBackward0"),
    ("hardtanh", {}, "HardtanhBackward0"), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}, "HardtanhBackward0"),
    ("relu6", {}, "HardtanhBackward0"), ("hardsigmoid", {}, "HardsigmoidBackward0"),
    ("hardswish", {}, "HardswishBackward0"), ("mish", {}, "MishBackward0"), ("softshrink", {}, "SoftshrinkBackward0"),
    ("softshrink", {"lambd": 1.0}, "SoftshrinkBackward0"), ("hardshrink", {}, "HardshrinkBackward0"),
    ("threshold", {"threshold": 0.5, "value": -2.0}, "ThresholdBackward0"),
]
_EDGES = [0.0, -0.0, 3.0, -3.0, 6.0, -1.0, 1.0, 20.0, 25.0, -0.5, 0.5, 100.0, -100.0, np.inf, -np.inf]


def _activation(lib, name, kw, x):
    fn = getattr(lib.nn.functional, name)
    return fn(x, kw["threshold"], kw["value"]) if name == "threshold" else fn(x, **kw)


@pytest.mark.parametrize(("name", "kw", "node"), ACTIVATION_CASES, ids=[f"{n}{k}" for n, k, _ in ACTIVATION_CASES])
def test_an_activation_is_one_node_that_keeps_its_input(name, kw, node):
    x = engine.tensor([-4.0, -0.25, 0.125, 0.75, 5.0], requires_grad=True)  # (no input on a kink)
    y = _activation(engine, name, kw, x)
    assert y.grad_fn.name() == node and len(y.grad_fn.next_functions) == 1
    assert y.dtype == engine.float32
    (g,) = engine.autograd.grad(y.sum(), x)
    eps = 1e-3  # the gradient against central differences, away from the kinks (the inputs are not on one)
    xd = x.detach().numpy().astype(np.float64)
    with engine.no_grad():
        up = _activation(engine, name, kw, engine.tensor(xd + eps)).numpy()
        down = _activation(engine, name, kw, engine.tensor(xd - eps)).numpy()
    np.testing.assert_allclose(g.numpy(), (up - down) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kw", "node"), ACTIVATION_CASES, ids=[f"{n}{k}" for n, k, _ in ACTIVATION_CASES])
def test_activations_are_torchs(name, kw, node, dtype):
    """200 draws and the edges (the kinks, the thresholds, infinities, -0.0): values and gradients within a few
    units in the last place of PyTorch's (its vectorised exp and tanh round their own way), the node's name; at a
    NaN input the gradient is compared where PyTorch's own does not depend on the CPU loop that ran (its float64
    vector loop gives hardtanh's and the shrinks' NaN 0, its scalar loop the gradient)."""
    torch = _torch()
    rs = np.random.default_rng(0)
    xs = np.concatenate([rs.standard_normal(200) * 4, _EDGES, [np.nan]]).astype(dtype)
    gy = np.linspace(-1, 1, len(xs)).astype(dtype)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xs, requires_grad=True)
        y = _activation(lib, name, kw, x)
        y.backward(lib.tensor(gy))
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    (y1, g1, n1), (y2, g2, n2) = results
    assert n1 == n2 == node
    # (a difference of nearly equal terms near a zero of the gradient: an absolute tolerance there)
    rtol, atol = {"float32": (6e-6 if name == "mish" else 1e-6, 1e-8),
                  "float64": (1e-13 if name == "mish" else 1e-14, 1e-16)}[dtype]
    np.testing.assert_allclose(y1, y2, rtol=rtol, atol=atol)
    if dtype == "float64" and name in ("hardtanh", "relu6", "softshrink", "hardshrink"):
        g1, g2 = g1[:-1], g2[:-1]
    np.testing.assert_allclose(g1, g2, rtol=rtol, atol=atol)


def test_in_place_activations_write_their_input():
    for name in ("leaky_relu", "elu", "hardtanh", "relu6", "silu", "hardswish", "mish", "celu", "selu"):
        x = engine.tensor([-2.0, 0.5, 7.0])
        ref = getattr(engine.nn.functional, name)(x)
        assert getattr(engine.nn.functional, name)(x, inplace=True) is x
        np.testing.assert_array_equal(x.numpy(), ref.numpy())


def test_threshold_keeps_a_nan_as_pytorch_does():
    y = engine.nn.functional.threshold(engine.tensor([float("nan"), 0.2, 0.9]), 0.5, -2.0)
    assert np.isnan(y[0].item()) and y[1:].tolist() == [-2.0, pytest.approx(0.9)]


def test_hardsigmoids_second_derivative_is_its_gradients_own():
    """PyTorch has no derivative of hardsigmoid's backward; the engine's is the formula recorded: x^2 hardsigmoid(x)
    has d2/dx2 = 2 hs(x) + 4x hs'(x), hs' = 1/6 inside (-3, 3) (hs'' is 0 there)."""
    x = engine.tensor([-4.0, -1.0, 0.5, 2.0, 4.0], dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad((engine.nn.functional.hardsigmoid(x) * x ** 2).sum(), x, create_graph=True)
    (gg,) = engine.autograd.grad(g.sum(), x)
    xd = x.detach().numpy()
    hs = np.clip(xd + 3, 0, 6) / 6
    inside = (xd > -3) & (xd < 3)
    np.testing.assert_allclose(gg.numpy(), 2 * hs + 4 * xd * np.where(inside, 0.1666666716337204, 0), rtol=1e-7)


# ------------------------------------------------------------------------------------------------- batch norm

BN_CASES = [((6, 3), True, True), ((4, 3, 5), True, True), ((2, 3, 4, 4), True, False), ((2, 3, 2, 3, 2), False, True),
            ((4, 3, 5), False, False), ((5, 1), True, True)]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize(("shape", "affine", "track"), BN_CASES, ids=[str(c) for c in BN_CASES])
def test_batch_norm_is_torchs(shape, affine, track, training, dtype):
    """Values, the three gradients, the running averages after the step, and the node with its edges."""
    torch = _torch()
    if not training and not track:
        pytest.skip("evaluation needs running averages")
    rs = np.random.default_rng(21)
    xd = (rs.standard_normal(shape) * 3 + 1).astype(dtype)
    c = shape[1]
    wd, bd = rs.uniform(0.5, 1.5, c).astype(dtype), rs.standard_normal(c).astype(dtype)
    rmd, rvd = rs.standard_normal(c).astype(dtype), rs.uniform(0.5, 2.0, c).astype(dtype)
    gy = rs.standard_normal(shape).astype(dtype)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        w = lib.tensor(wd, requires_grad=True) if affine else None
        b = lib.tensor(bd, requires_grad=True) if affine else None
        rm, rv = (lib.tensor(rmd), lib.tensor(rvd)) if track else (None, None)
        y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=training, momentum=0.2, eps=1e-4)
        y.backward(lib.tensor(gy))
        names = [None if n is None else n.name() for n, _ in y.grad_fn.next_functions]
        results.append([y.detach().numpy(), x.grad.numpy()] + ([w.grad.numpy(), b.grad.numpy()] if affine else [])
                       + ([rm.numpy(), rv.numpy()] if track else []) + [y.grad_fn.name(), names])
    *mine, name1, edges1 = results[0]
    *theirs, name2, edges2 = results[1]
    assert name1 == name2 == "NativeBatchNormBackward0" and edges1 == edges2
    rtol, atol = (2e-5, 2e-6) if dtype == "float32" else (1e-12, 1e-13)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_batch_norm_values_and_running_averages():
    x = engine.tensor([[1.0, 10.0], [3.0, 20.0], [5.0, 60.0]], dtype=engine.float64, requires_grad=True)
    rm, rv = engine.zeros(2, dtype=engine.float64), engine.ones(2, dtype=engine.float64)
    # (eps 1e-300: positive, as training asks, and lost in the variance's rounding)
    y = engine.nn.functional.batch_norm(x, rm, rv, training=True, momentum=0.5, eps=1e-300)
    mean, var = np.array([3.0, 30.0]), np.array([8 / 3, 1400 / 3])
    np.testing.assert_allclose(y.detach().numpy(), (x.detach().numpy() - mean) / np.sqrt(var), rtol=1e-14)
    np.testing.assert_allclose(rm.numpy(), 0.5 * mean, rtol=1e-15)
    np.testing.assert_allclose(rv.numpy(), 0.5 + 0.5 * var * 3 / 2, rtol=1e-15)  # the unbiased variance
    (y * engine.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]], dtype=engine.float64)).sum().backward()
    # d y00 / d x0k = (delta - 1/3 - z0 zk / 3) / std, z the normalised column
    z = (x.detach().numpy()[:, 0] - 3) / np.sqrt(8 / 3)
    expected = (np.array([1.0, 0, 0]) - 1 / 3 - z[0] * z / 3) / np.sqrt(8 / 3)
    np.testing.assert_allclose(x.grad.numpy()[:, 0], expected, rtol=1e-13)
    assert x.grad.numpy()[:, 1].tolist() == [0.0, 0.0, 0.0]


def test_var_mean_is_one_node_with_two_outputs():
    x = engine.tensor([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]], dtype=engine.float64, requires_grad=True)
    var, mean = engine.var_mean(x, 1)
    assert var.grad_fn is mean.grad_fn and var.grad_fn.name() == "VarMeanBackward0"
    assert var.tolist() == [7.0, 3.0] and mean.tolist() == [3.0, 1.0]
    mean.sum().backward()  # the variance unused: its gradient zeros
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 1 / 3))
    x.grad = None
    std, _ = engine.std_mean(x, 1, unbiased=False)
    std[0].backward()  # d std / dx = (x - mean) / (n std)
    np.testing.assert_allclose(x.grad.numpy()[0], (np.array([1.0, 2.0, 6.0]) - 3) / (3 * np.sqrt(14 / 3)))


PICKS = ["a.median(1)", "a.median(0, keepdim=True)", "a.nanmedian(1)", "a.mode(1)", "a.mode(0, keepdim=True)",
         "a.kthvalue(2, 1)", "a.kthvalue(3, 0, keepdim=True)", "a.cummax(1)", "a.cummin(0)", "s.kthvalue(1)",
         "s.median(0)", "s.nanmedian(-1)", "a[0].mode()", "s.cummax(0)", "s.cummin(-1)"]


@pytest.mark.torch
@pytest.mark.parametrize("expression", PICKS)
def test_picking_ops_are_one_node_each_as_torchs(expression):
    """median, nanmedian, mode, kthvalue (keepdim or not, 0-d too), cummax and cummin: values, indices, the node
    (named as PyTorch's, the kept dimension dropped in it) and the gradient at the picked places."""
    torch = _torch()
    xd = np.random.default_rng(9).permutation(15).reshape(3, 5) - 7.0  # (no ties: which of equal ones is not held)
    xd[1, 2] = np.nan
    results = []
    for lib in (engine, torch):
        a = lib.tensor(xd, requires_grad=True)
        s = lib.tensor(2.5, requires_grad=True)
        values, indices = eval(expression)  # noqa: S307 - the table's own expressions
        node = values.grad_fn
        values.backward(lib.tensor(np.arange(1.0, 1.0 + values.numel()).reshape(tuple(values.shape))))
        leaf = s if expression.startswith("s.") else a
        results.append((node.name(), [n.name() for n, _ in node.next_functions], tuple(values.shape),
                        values.detach().numpy(), indices.numpy(), leaf.grad.numpy()))
    assert results[0][:3] == results[1][:3]
    for mine, theirs in zip(results[0][3:], results[1][3:]):
        np.testing.assert_array_equal(mine, theirs)


SCATTERS = ["a.scatter(0, idx, 2.0)", "a.scatter(0, idx, c)", "a.scatter_add(0, idx, c)",
            "a.index_copy(0, torch.tensor([2, 0]), c)", "a.index_fill(1, torch.tensor([1, 3]), -1.0)",
            "a.index_fill(1, torch.tensor([1, 3]), v)", "a.scatter(0, idx, c.detach())", "a.scatter(0, idx, value=3.0)"]


@pytest.mark.torch
@pytest.mark.parametrize("expression", SCATTERS)
def test_scatters_and_index_writes_are_one_node_each_as_torchs(expression):
    """scatter (a tensor or a value), scatter_add, index_copy and index_fill: PyTorch's node and edges (it was a
    CopySlices, with a SliceBackward0 on src), values, gradients and second derivatives."""
    torch = _torch()
    rs = np.random.default_rng(0)
    ad, cd = rs.standard_normal((3, 4)), rs.standard_normal((2, 4))
    results = []
    for lib in (engine, torch):
        a, c = lib.tensor(ad, requires_grad=True), lib.tensor(cd, requires_grad=True)
        v = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        idx = lib.tensor([[0, 2, 1, 0], [2, 0, 0, 1]])
        y = eval(expression, {"a": a, "c": c, "v": v, "idx": idx, "torch": lib})  # noqa: S307 - the table's own
        leaves = [t for t in (a, c, v) if t.requires_grad]
        grads = lib.autograd.grad((y ** 3).sum(), leaves, create_graph=True, allow_unused=True)
        used = [g for g in grads if g is not None]
        seconds = lib.autograd.grad(sum((g * g).sum() for g in used), leaves, allow_unused=True)
        node = y.grad_fn
        results.append([(node.name(), [None if n is None else n.name() for n, _ in node.next_functions])]
                       + [y.detach().numpy()] + [None if g is None else g.detach().numpy() for g in grads]
                       + [None if g is None else g.numpy() for g in seconds])
    assert results[0][0] == results[1][0]
    for mine, theirs in zip(results[0][1:], results[1][1:]):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_a_scatter_source_larger_than_its_index_gets_zeros_past_it():
    """PyTorch 2.13 refuses this backward ("ScatterBackward0 returned an invalid gradient"): its gradient of src
    has the index's shape. The engine gives src its own shape, zeros where nothing of it was read."""
    a = engine.zeros(2, 3, requires_grad=True)
    src = engine.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = a.scatter(1, engine.tensor([[2, 0]]), src)  # reads src[0, :2]
    assert y.tolist() == [[2.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    (y * engine.tensor([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]])).sum().backward()
    assert src.grad.tolist() == [[30.0, 10.0, 0.0], [0.0, 0.0, 0.0]]
    assert a.grad.tolist() == [[0.0, 20.0, 0.0], [40.0, 50.0, 60.0]]


TAKES = ["a.take(torch.tensor([[0, 5], [-1, 2]]))", "a.take(torch.tensor([1, 1, 1]))", "a.take(torch.tensor(4))",
         "a.diag_embed()", "a.diag_embed(1)", "a.diag_embed(-2, 0, 2)", "a.diag_embed(1, -1, 1)"]


@pytest.mark.torch
@pytest.mark.parametrize("expression", TAKES)
def test_take_and_diag_embed_are_one_node_each_as_torchs(expression):
    """Values, the node, gradients (an entry taken twice gets both) and second derivatives."""
    torch = _torch()
    results = []
    for lib in (engine, torch):
        a = lib.tensor(np.random.default_rng(3).standard_normal((2, 3)), requires_grad=True)
        y = eval(expression, {"a": a, "torch": lib})  # noqa: S307 - the table's own expressions
        (g,) = lib.autograd.grad((y ** 3).sum(), a, create_graph=True)
        (gg,) = lib.autograd.grad((g ** 2).sum(), a)
        results.append((y.grad_fn.name(), y.detach().numpy(), g.detach().numpy(), gg.numpy()))
    assert results[0][0] == results[1][0]
    for mine, theirs in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_take_refuses_as_pytorch_does():
    x = engine.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match=r"^out of range: tried to access index 6 on a tensor of 6 elements\.$"):
        x.take(engine.tensor([1, 6]))
    with pytest.raises(RuntimeError, match=r"^take\(\): Expected a long tensor for index, but got Float$"):
        x.take(engine.tensor([1.0]))
    assert x.take(engine.tensor([[-1, 0]])).tolist() == [[5.0, 0.0]]


AMINMAX_ARGS = [{}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": -1}, {"keepdim": True}]


@pytest.mark.torch
@pytest.mark.parametrize("kwargs", AMINMAX_ARGS, ids=[str(k) for k in AMINMAX_ARGS])
def test_aminmax_is_one_node_with_two_outputs_as_torchs(kwargs):
    """Values, the node (both outputs'), gradients with ties sharing evenly (one output unused too), and second
    derivatives."""
    torch = _torch()
    xd = np.round(np.random.default_rng(0).standard_normal((3, 4)), 0) + 0.0  # (ties; no -0.0)
    results = []
    for lib in (engine, torch):
        a = lib.tensor(xd, requires_grad=True)
        low, high = lib.aminmax(a, **kwargs)
        assert low.grad_fn is high.grad_fn and low.grad_fn.name() == "AminmaxBackward0"
        (g,) = lib.autograd.grad((low * 2).sum() + (high ** 2).sum(), a, create_graph=True)
        (gg,) = lib.autograd.grad((g * a).sum(), a)
        (only_max,) = lib.autograd.grad(lib.aminmax(a, **kwargs).max.sum(), a)
        results.append([low.detach().numpy(), high.detach().numpy(), g.detach().numpy(), gg.numpy(),
                        only_max.numpy()])
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)


VAR_MEAN_ARGS = [{}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}, {"dim": 2, "correction": 0},
                 {"dim": None, "keepdim": True}, {"dim": 1, "unbiased": False}]


@pytest.mark.torch
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("kwargs", VAR_MEAN_ARGS, ids=[str(k) for k in VAR_MEAN_ARGS])
def test_var_mean_and_std_mean_are_torchs(name, kwargs):
    """Values, shapes, gradients (one output unused too), second derivatives, and one node for both outputs."""
    torch = _torch()
    xd = np.random.default_rng(8).standard_normal((3, 4, 5))
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        spread, mean = getattr(lib, name)(x, **kwargs)
        assert spread.grad_fn is mean.grad_fn
        (g,) = lib.autograd.grad((spread ** 2).sum() + (mean ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        (only_mean,) = lib.autograd.grad(getattr(lib, name)(x, **kwargs)[1].sum(), x)
        results.append((spread.grad_fn.name(), spread.detach().numpy(), mean.detach().numpy(), g.detach().numpy(),
                        gg.numpy(), only_mean.numpy()))
    assert results[0][0] == results[1][0]
    for mine, theirs in zip(results[0][1:], results[1][1:]):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-13)


IN_CASES = [((2, 3, 5), True, True), ((3, 2, 4, 4), False, True), ((2, 3, 2, 3, 2), True, False),
            ((4, 1, 6), False, False)]


@pytest.mark.torch
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize(("shape", "affine", "track"), IN_CASES, ids=[str(c) for c in IN_CASES])
def test_instance_norm_is_batch_norm_over_the_samples_channels_as_torchs(shape, affine, track, training):
    """Values, gradients, running averages after two steps, and the graph: one NativeBatchNormBackward0 between two
    views, the weights repeated per sample (it was a mean, a variance and a division, recorded op by op)."""
    torch = _torch()
    if not training and not track:
        pytest.skip("evaluation needs running averages")
    rs = np.random.default_rng(23)
    xd = rs.standard_normal(shape) * 2 + 1
    c = shape[1]
    wd, bd, gy = rs.uniform(0.5, 1.5, c), rs.standard_normal(c), rs.standard_normal(shape)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        w, b = (lib.tensor(wd, requires_grad=True), lib.tensor(bd, requires_grad=True)) if affine else (None, None)
        rm, rv = (lib.zeros(c, dtype=lib.float64), lib.ones(c, dtype=lib.float64)) if track else (None, None)
        for _ in range(2):
            y = lib.nn.functional.instance_norm(x, rm, rv, w, b, use_input_stats=training, momentum=0.3, eps=1e-4)
        y.backward(lib.tensor(gy))
        node = y.grad_fn
        inner = node.next_functions[0][0]
        graph = [node.name(), inner.name()] + [None if n is None else n.name() for n, _ in inner.next_functions]
        results.append([y.detach().numpy(), x.grad.numpy()] + ([w.grad.numpy(), b.grad.numpy()] if affine else [])
                       + ([rm.numpy(), rv.numpy()] if track else []) + [graph])
    assert results[0][-1] == results[1][-1]
    assert results[0][-1][:2] == ["ViewBackward0", "NativeBatchNormBackward0"]
    for a, b in zip(results[0][:-1], results[1][:-1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


BN_REFUSALS = [
    ("F.batch_norm(x, rm, rv, torch.ones(4), None, True)", RuntimeError, "weight should contain 3 elements not 4"),
    ("F.batch_norm(x, torch.zeros(4), rv, None, None, True)", RuntimeError,
     "running_mean should contain 3 elements not 4"),
    ("F.batch_norm(x, rm, rv, torch.ones(3, dtype=torch.float64), None, True)", RuntimeError,
     "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    ("F.batch_norm(x, None, None, None, None, False)", RuntimeError, "running_mean must be defined in evaluation mode"),
]


@pytest.mark.parametrize(("expression", "kind", "message"), BN_REFUSALS, ids=[e for e, *_ in BN_REFUSALS])
def test_batch_norm_refuses_in_pytorchs_words(expression, kind, message):
    names = {"torch": engine, "F": engine.nn.functional, "x": engine.ones(4, 3, 5), "rm": engine.zeros(3),
             "rv": engine.ones(3)}
    with pytest.raises(kind) as caught:
        eval(expression, names)  # noqa: S307 - the table's own expressions
    assert str(caught.value) == message


@pytest.mark.torch
@pytest.mark.parametrize(("expression", "kind", "message"), BN_REFUSALS, ids=[e for e, *_ in BN_REFUSALS])
def test_the_batch_norm_refusals_are_torchs(expression, kind, message):
    torch = _torch()
    names = {"torch": torch, "F": torch.nn.functional, "x": torch.ones(4, 3, 5), "rm": torch.zeros(3),
             "rv": torch.ones(3)}
    with pytest.raises(kind) as caught:
        eval(expression, names)  # noqa: S307 - the table's own expressions
    assert str(caught.value) == message


def test_a_write_to_the_input_of_batch_norm_is_refused_at_backward():
    x = engine.randn(4, 3, requires_grad=True) * 1
    y = engine.nn.BatchNorm1d(3)(x)
    x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -------------------------------------------------------------------------------------- on the device

def test_the_fused_nodes_on_the_cupy_stand_in_equal_the_cpus(cuda_device):
    """addmm (nn.Linear), the losses, each activation, batch and group norm, var and std, repeat, trace, pad and
    logsumexp, forward and backward, on CuPy's arrays (the stand-in here; a real GPU where there is one) with the
    CPU's values."""
    rs = np.random.default_rng(12)
    xd, wd, bd, td = (rs.standard_normal(s) for s in ((6, 4), (3, 4), (3,), (6, 3)))
    results = []
    for device in ("cpu", cuda_device):
        x, w, b = (engine.tensor(d, device=device, requires_grad=True) for d in (xd, wd, bd))
        h = engine.nn.functional.linear(x, w, b)
        acts = sum(_activation(engine, name, kw, h).sum() for name, kw, _ in ACTIVATION_CASES)
        bn = engine.nn.functional.batch_norm(h, engine.zeros(3, device=device, dtype=engine.float64),
                                             engine.ones(3, device=device, dtype=engine.float64), w[:, 0], b,
                                             training=True)
        target = engine.tensor(td, device=device)
        F = engine.nn.functional
        loss = (F.mse_loss(bn, target) + acts * 1e-3 + F.smooth_l1_loss(h, target, beta=0.5)
                + F.huber_loss(h, target, reduction="sum") + F.binary_cross_entropy(h.sigmoid(), target.sigmoid())
                + F.binary_cross_entropy_with_logits(h, target.sigmoid(), pos_weight=engine.full(
                    (3,), 2.0, device=device, dtype=engine.float64)) + h.var(0).sum() + h.std(1).sum()
                + (h.repeat(2, 1) ** 2).sum() + h[:3].trace() + F.pad(h, (1, -1), value=0.5).sum()
                + F.group_norm(h.unsqueeze(2), 3, w[:, 0], b).sum() + h.logsumexp(1).sum())
        loss.backward()
        assert loss.device.type == device and h.grad_fn.name() == "AddmmBackward0"
        results.append([loss.item()] + [t.grad.cpu().numpy() for t in (x, w, b)])
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------------------------------ more losses

LOSS_CASES = [  # (expression of lib, F, x (probabilities for bce), t, w, pw; PyTorch's node)
    ("F.smooth_l1_loss(x, t)", "SmoothL1LossBackward0"), ("F.smooth_l1_loss(x, t, beta=0.3, reduction='sum')",
                                                           "SmoothL1LossBackward0"),
    ("F.smooth_l1_loss(x, t[:1], beta=2.0, reduction='none')", "SmoothL1LossBackward0"),
    ("F.huber_loss(x, t)", "HuberLossBackward0"), ("F.huber_loss(x, t, delta=0.4, reduction='sum')",
                                                   "HuberLossBackward0"),
    ("F.huber_loss(x, t, reduction='none', delta=2.0)", "HuberLossBackward0"),
    ("F.huber_loss(x, t, weight=w)", "MeanBackward0"),
    ("F.binary_cross_entropy(x.sigmoid(), t.sigmoid())", "BinaryCrossEntropyBackward0"),
    ("F.binary_cross_entropy(x.sigmoid(), t.sigmoid(), weight=w.detach(), reduction='sum')",
     "BinaryCrossEntropyBackward0"),
    ("F.binary_cross_entropy(x.sigmoid(), t.sigmoid(), weight=w[0].detach(), reduction='none')",
     "BinaryCrossEntropyBackward0"),
    ("F.binary_cross_entropy_with_logits(x * 4, t.sigmoid())", "BinaryCrossEntropyWithLogitsBackward0"),
    ("F.binary_cross_entropy_with_logits(x * 4, t.sigmoid(), weight=w.detach(), pos_weight=pw, reduction='sum')",
     "BinaryCrossEntropyWithLogitsBackward0"),
    ("F.binary_cross_entropy_with_logits(x * 40, t.sigmoid(), pos_weight=pw, reduction='none')",
     "BinaryCrossEntropyWithLogitsBackward0"),
]


def _loss_names(lib, dtype):
    rs = np.random.default_rng(9)
    return {"F": lib.nn.functional, "x": lib.tensor(rs.standard_normal((5, 3)).astype(dtype), requires_grad=True),
            "t": lib.tensor(rs.standard_normal((5, 3)).astype(dtype), requires_grad=True),
            "w": lib.tensor(rs.uniform(0.2, 1.0, (5, 3)).astype(dtype), requires_grad=True),
            "pw": lib.tensor(rs.uniform(0.5, 3.0, 3).astype(dtype))}


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("expression", "node"), LOSS_CASES, ids=[e for e, _ in LOSS_CASES])
def test_the_fused_losses_are_torchs(expression, node, dtype):
    """The loss, the gradients of the input and the target (and of a weight PyTorch can differentiate), the node."""
    torch = _torch()
    results = []
    for lib in (engine, torch):
        names = _loss_names(lib, dtype)
        loss = eval(expression, names)  # noqa: S307 - the table's own expressions
        gy = np.linspace(0.5, 1.5, loss.numel()).astype(dtype).reshape(tuple(loss.shape))
        loss.backward(lib.tensor(gy))
        grads = [names[k].grad for k in ("x", "t", "w")]
        results.append(([loss.detach().numpy()] + [None if g is None else g.numpy() for g in grads],
                        loss.grad_fn.name()))
    (mine, n1), (theirs, n2) = results
    assert n1 == n2 == node
    rtol, atol = (2e-6, 1e-7) if dtype == "float32" else (1e-13, 1e-15)
    for a, b in zip(mine, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize(("fn", "argument", "call"), [
    ("binary_cross_entropy", "weight", lambda F, x, w: F.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid(),
                                                                              weight=w)),
    ("binary_cross_entropy_with_logits", "weight", lambda F, x, w: F.binary_cross_entropy_with_logits(
        x, x.detach().sigmoid(), weight=w)),
    ("binary_cross_entropy_with_logits", "pos_weight", lambda F, x, w: F.binary_cross_entropy_with_logits(
        x, x.detach().sigmoid(), pos_weight=w[0])),
])
def test_a_weight_that_requires_grad_is_refused_as_pytorch_refuses_it(fn, argument, call):
    x, w = engine.randn(4, 3, requires_grad=True), engine.rand(4, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"^The function '{fn}' is not differentiable with respect to argument "
                                           rf"'{argument}'\. This input cannot have requires_grad True\.$"):
        call(engine.nn.functional, x, w)
    with engine.no_grad():  # nothing recorded: accepted, as PyTorch accepts it
        assert call(engine.nn.functional, x, w).shape == ()


def test_smooth_l1_and_huber_values_by_hand():
    x = engine.tensor([0.0, 0.5, 3.0, -2.0], requires_grad=True)
    t = engine.zeros(4)
    loss = engine.nn.functional.smooth_l1_loss(x, t, reduction="none", beta=1.0)
    assert loss.tolist() == [0.0, 0.125, 2.5, 1.5]
    loss.sum().backward()
    assert x.grad.tolist() == [0.0, 0.5, 1.0, -1.0]
    h = engine.nn.functional.huber_loss(x, t, reduction="sum", delta=2.0)
    assert h.item() == 0.125 + (2.0 * (3.0 - 1.0)) + 2.0
    assert engine.nn.functional.smooth_l1_loss(x, t, beta=0.0).grad_fn.name() == "MeanBackward0"  # L1, as PyTorch


# --------------------------------------------------------------------------------------------- var and std

VAR_CASES = ["x.var()", "x.var(1)", "x.std()", "x.std((0, 2), keepdim=True)", "x.var(-1, unbiased=False)",
             "x.std(correction=0)", "x.var(dim=(0, 1, 2))", "x[0, :, :1].std(1)", "x[0, 0, :1].var()",
             "x[0, 0, 0].std()", "(x * 0 + 1).std(1)", "torch.var(x, 0, keepdim=True)", "torch.std(x, 2, correction=2)"]


@pytest.mark.torch
@pytest.mark.parametrize("expression", VAR_CASES)
def test_var_and_std_are_torchs(expression):
    """One VarBackward0 / StdBackward0 node; the value and the gradient (a constant row's deviation: 0; one element
    without correction: NaN, as PyTorch's)."""
    torch = _torch()
    rs = np.random.default_rng(6)
    xd = rs.standard_normal((3, 4, 5))
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore", UserWarning)  # torch's: degrees of freedom <= 0
            y = eval(expression, {"x": x, "torch": lib})  # noqa: S307 - the table's own expressions
        gy = np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape))
        y.backward(lib.tensor(gy))
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    (y1, g1, n1), (y2, g2, n2) = results
    assert n1 == n2
    np.testing.assert_allclose(y1, y2, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-15)


def test_std_of_a_constant_row_has_a_zero_gradient():
    x = engine.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]], requires_grad=True)
    s = x.std(1)
    assert s.tolist() == [0.0, 1.0] and s.grad_fn.name() == "StdBackward0"
    s.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [-0.5, 0.0, 0.5]]
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        x.var(2)


# -------------------------------------------------------------------------------------------------- pad

PAD_CASES = ["(1, 2)", "(1, -1, -1, 2)", "(0, 0, 0, 0, 2, 1)", "(-1, -2)", "(3, 3, 1, 0)"]


@pytest.mark.torch
@pytest.mark.parametrize("widths", PAD_CASES)
def test_constant_pad_is_one_node_as_torchs(widths):
    torch = _torch()
    xd = np.arange(24.0).reshape(2, 3, 4)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = lib.nn.functional.pad(x, eval(widths), value=-0.5)  # noqa: S307 - the table's own widths
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    (y1, g1, n1), (y2, g2, n2) = results
    assert n1 == n2 == "ConstantPadNdBackward0"
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(g1, g2)


def test_a_pad_that_crops_past_nothing_is_refused():
    with pytest.raises(RuntimeError, match=r"The input size \[2, 3\], plus negative padding would result in a "
                                           r"negative output size"):
        engine.nn.functional.pad(engine.ones(2, 3), (-2, -2))


# ---------------------------------------------------------------------------------------------- logsumexp

@pytest.mark.torch
@pytest.mark.parametrize("expression", ["x.logsumexp(1)", "x.logsumexp((0, 2), keepdim=True)",
                                        "torch.logsumexp(x, -1)", "x[2].logsumexp(0)", "x[:0].logsumexp(0)"])
def test_logsumexp_is_one_node_as_torchs(expression):
    """Rows with -inf and +inf in them too: the values and the gradients, NaN where PyTorch's are NaN."""
    torch = _torch()
    xd = np.random.default_rng(2).standard_normal((3, 4, 5))
    xd[0, 0, :] = -np.inf
    xd[1, 1, 1] = np.inf
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = eval(expression, {"x": x, "torch": lib})  # noqa: S307 - the table's own expressions
        y.backward(lib.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape))))
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    (y1, g1, n1), (y2, g2, n2) = results
    assert n1 == n2 == "LogsumexpBackward0"
    np.testing.assert_allclose(y1, y2, rtol=1e-14)
    np.testing.assert_allclose(g1, g2, rtol=1e-14, atol=1e-300)


# ------------------------------------------------------------------------------- lerp, addcmul, addcdiv

TERNARY_CASES = ["a.lerp(b, 0.3)", "a.lerp(b, 1.0)", "torch.lerp(a, b, 0.75)", "a.lerp(b, w)", "torch.lerp(a, b[0], w)",
                 "torch.addcmul(a, b, w, value=0.3)", "a.addcmul(b[0], w)", "torch.addcdiv(a, b, w + 2, value=-1.7)",
                 "a.addcdiv(b, w[0] + 1)"]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("expression", TERNARY_CASES)
def test_lerp_addcmul_addcdiv_are_torchs(expression, dtype):
    """One node each, PyTorch's order of operations (lerp past a weight of 0.5 from the end: exact at 1), and the
    gradients of every operand. addcdiv's values are PyTorch's bits; lerp's and addcmul's within a rounding, where
    PyTorch's vector loop fuses the multiply and the add (NumPy has no fused multiply-add)."""
    torch = _torch()
    rs = np.random.default_rng(4)
    data = [rs.standard_normal((4, 3)).astype(dtype) for _ in range(2)] + [rs.uniform(0, 1, (4, 3)).astype(dtype)]
    results = []
    for lib in (engine, torch):
        a, b, w = (lib.tensor(d, requires_grad=True) for d in data)
        y = eval(expression, {"a": a, "b": b, "w": w, "torch": lib})  # noqa: S307 - the table's own expressions
        y.backward(lib.tensor(np.linspace(-1, 1, 12).astype(dtype).reshape(4, 3)))
        results.append([y.detach().numpy(), y.grad_fn.name()] + [t.grad.numpy() if t.grad is not None else None
                                                                 for t in (a, b, w)])
    mine, theirs = results
    if "addcdiv" in expression:
        np.testing.assert_array_equal(mine[0], theirs[0])
    else:
        # (one rounding less there: within a unit of the operands' size, where the sum cancels)
        np.testing.assert_allclose(mine[0], theirs[0], rtol=2.4e-7 if dtype == "float32" else 4.5e-16,
                                   atol=4e-7 if dtype == "float32" else 8e-16)
    assert mine[1] == theirs[1]
    for g1, g2 in zip(mine[2:], theirs[2:]):
        assert (g1 is None) == (g2 is None)
        if g1 is not None:
            np.testing.assert_allclose(g1, g2, rtol=1e-6 if dtype == "float32" else 1e-15, atol=1e-7)


def test_lerp_reaches_the_end_exactly():
    a, b = engine.tensor([0.1, 1e8, -3.3]), engine.tensor([0.7, 1.0, 2.9])
    assert a.lerp(b, 1.0).tolist() == b.tolist() and a.lerp(b, 0.0).tolist() == a.tolist()


def test_the_graph_panel_names_each_fused_node_by_what_it_computes():
    from engine.autograd.describe import describe

    x = engine.randn(4, 3, requires_grad=True)
    F = engine.nn.functional
    loss = (engine.addcmul(x, x, x).std() + engine.addcdiv(x, x, x + 3).var() + F.huber_loss(x, x.detach() * 2)
            + F.smooth_l1_loss(x, x.detach()) + x.sub(x, alpha=2).sum() + F.silu(x).sum()
            + F.batch_norm(x, None, None, training=True).sum() + x.logsumexp(1).sum() + x.lerp(x * 2, 0.5).sum())
    ops = {n.op for n in describe(loss).nodes}
    assert {"Addcmul", "Addcdiv", "Std", "Var", "HuberLoss", "SmoothL1Loss", "Sub", "Silu", "BatchNorm",
            "Logsumexp", "Lerp"} <= ops


# ------------------------------------------------------------------------------------------------- group norm

GN_CASES = [((2, 4, 3), 2, True), ((3, 6, 2, 2), 3, False), ((2, 4), 2, True), ((1, 6, 5), 1, True)]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "groups", "affine"), GN_CASES, ids=[str(c) for c in GN_CASES])
def test_group_norm_is_one_node_as_torchs(shape, groups, affine, dtype):
    torch = _torch()
    rs = np.random.default_rng(13)
    xd = (rs.standard_normal(shape) * 2 + 1).astype(dtype)
    wd, bd = rs.uniform(0.5, 1.5, shape[1]).astype(dtype), rs.standard_normal(shape[1]).astype(dtype)
    gy = rs.standard_normal(shape).astype(dtype)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        w, b = (lib.tensor(wd, requires_grad=True), lib.tensor(bd, requires_grad=True)) if affine else (None, None)
        y = lib.nn.functional.group_norm(x, groups, w, b, eps=1e-4)
        y.backward(lib.tensor(gy))
        edges = [None if n is None else n.name() for n, _ in y.grad_fn.next_functions]
        results.append(([y.detach().numpy(), x.grad.numpy()] + ([w.grad.numpy(), b.grad.numpy()] if affine else []),
                        y.grad_fn.name(), edges))
    (mine, n1, e1), (theirs, n2, e2) = results
    assert n1 == n2 == "NativeGroupNormBackward0" and e1 == e2
    rtol, atol = (3e-5, 3e-6) if dtype == "float32" else (1e-12, 1e-13)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_a_group_of_one_element_normalises_to_zero_exactly():
    """(PyTorch's float32 kernel leaves ~1e-5 of rounding there; the centred value is 0 exactly here.)"""
    x = engine.tensor([[1.5, -2.0, 3.0, 0.25]], requires_grad=True)
    b = engine.tensor([0.1, 0.2, 0.3, 0.4])
    y = engine.nn.functional.group_norm(x, 4, engine.ones(4), b)
    assert y.tolist() == [b.tolist()]
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 0.0]]


def test_group_norm_refuses_a_weight_of_another_size_in_pytorchs_words():
    with pytest.raises(RuntimeError, match=r"^Expected weight to be a vector of size equal to the number of channels "
                                           r"in input, but got weight of shape \[3\] and input of shape \[2, 4, 3\]$"):
        engine.nn.functional.group_norm(engine.ones(2, 4, 3), 2, engine.ones(3))


# ---------------------------------------------------------------------------------------------- repeat, trace

@pytest.mark.torch
@pytest.mark.parametrize("expression", ["x.repeat(2, 1)", "x.tile(2)", "x.repeat(3, 1, 2)", "x.repeat(1, 0)",
                                        "x.trace()", "x[:, :2].trace()", "torch.trace(x.t())"])
def test_repeat_and_trace_are_one_node_as_torchs(expression):
    torch = _torch()
    xd = np.arange(6.0).reshape(2, 3)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = eval(expression, {"x": x, "torch": lib})  # noqa: S307 - the table's own expressions
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name(), len(y.grad_fn.next_functions)))
    (y1, g1, *n1), (y2, g2, *n2) = results
    assert n1 == n2
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(g1, g2)


@pytest.mark.parametrize(("sizes", "message"), [
    ((1, -1), "Trying to create tensor with negative dimension -3: [2, -3]"),
    ((-1, -2), "Trying to create tensor with negative dimension -2: [-2, -6]"),
])
def test_repeat_refuses_a_negative_count_in_pytorchs_words(sizes, message):
    with pytest.raises(RuntimeError) as caught:
        engine.ones(2, 3).repeat(*sizes)
    assert str(caught.value) == message
    assert engine.ones(0).repeat(-1).shape == (0,)  # (an empty dimension stays empty, as PyTorch's)


def test_a_repeated_tensor_is_a_copy():
    x = engine.arange(3.0)
    y = x.repeat(2)
    y[0] = 100.0
    assert x.tolist() == [0.0, 1.0, 2.0] and y.tolist() == [100.0, 1.0, 2.0, 0.0, 1.0, 2.0]


def test_a_pruned_walk_keeps_a_nodes_edges_for_its_hooks():
    """autograd.grad for one input narrows a node's needs to it; its hook still sees one gradient per edge (lerp's
    number weight is none), as without the pruning."""
    x, y = engine.tensor([1.0, 2.0], requires_grad=True), engine.tensor([3.0, 4.0], requires_grad=True)
    p = x.lerp(y, 0.25)
    seen = []
    p.grad_fn.register_hook(lambda gi, go: seen.append([None if g is None else g.tolist() for g in gi]))
    (g,) = engine.autograd.grad(p.sum(), x)
    assert seen == [[[0.75, 0.75], None]] and g.tolist() == [0.75, 0.75]


@pytest.mark.parametrize(("name", "kernel"), [("silu", "silu_cpu"), ("elu", "elu_cpu"), ("celu", "elu_cpu"),
                                              ("selu", "elu_cpu"), ("leaky_relu", "leaky_relu_cpu"),
                                              ("softplus", "softplus_cpu"), ("hardsigmoid", "hardsigmoid_cpu"),
                                              ("hardswish", "hardswish_cpu"), ("mish", "mish_cpu"),
                                              ("softshrink", "softshrink_check"), ("hardshrink", "hardshrink_cpu")])
def test_an_activation_of_integers_is_refused_as_pytorch_refuses_it(name, kernel):
    """(They computed in floats and truncated back: silu of [-2, 1, 3] was [0, 0, 2].) PyTorch 2.13's words."""
    with pytest.raises(NotImplementedError) as caught:
        getattr(engine.nn.functional, name)(engine.tensor([-2, 1, 3]))
    assert str(caught.value) == f'"{kernel}" not implemented for \'Long\''


def test_hardtanh_relu6_and_threshold_of_integers_are_pytorchs():
    x = engine.tensor([-2, 1, 3, 8])
    F = engine.nn.functional
    assert F.hardtanh(x).tolist() == [-1, 1, 1, 1] and F.relu6(x).tolist() == [0, 1, 3, 6]
    assert F.threshold(x, 0, 5).tolist() == [5, 1, 3, 8] and F.relu6(x).dtype == engine.int64


@pytest.mark.parametrize(("expression", "kind", "message"), [
    ("x.var()", RuntimeError, "std and var only support floating point and complex dtypes"),
    ("x.std(0)", RuntimeError, "std and var only support floating point and complex dtypes"),
    ("x.lerp(x, 0.5)", NotImplementedError, "\"lerp_kernel_scalar\" not implemented for 'Long'"),
    ("x.lerp(x, x)", NotImplementedError, "\"lerp_kernel_tensor\" not implemented for 'Long'"),
    ("x.double().lerp(x.float(), 0.5)", RuntimeError, "expected dtype double for `end` but got dtype float"),
])
def test_integer_var_std_and_lerp_are_refused_as_pytorch_refuses_them(expression, kind, message):
    with pytest.raises(kind) as caught:
        eval(expression, {"x": engine.tensor([1, 2, 4])})  # noqa: S307 - the table's own expressions
    assert str(caught.value) == message


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [{}, {"nan": 0.5, "posinf": 9.0, "neginf": -9.0}])
def test_nan_to_num_is_one_node_as_torchs(kw, dtype):
    """The replaced values, and a gradient that passes only where the input was finite."""
    torch = _torch()
    xd = np.array([1.0, np.nan, np.inf, -np.inf, -2.0, 0.0]).astype(dtype)
    results = []
    for lib in (engine, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = x.nan_to_num(**kw)
        (y * lib.arange(6, dtype=y.dtype)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    (y1, g1, n1), (y2, g2, n2) = results
    assert n1 == n2 == "NanToNumBackward0"
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(g1, g2)
    assert g1.tolist() == [0.0, 0.0, 0.0, 0.0, 4.0, 5.0]


@pytest.mark.torch
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_and_fmin_are_one_node_as_torchs(name):
    """NaN on either side, ties, a broadcast operand, a NaN gradient (held out where the side is not kept); and the
    second derivative recorded."""
    torch = _torch()
    ad = np.array([[1.0, np.nan, 3.0, 2.0, np.nan], [0.5, -1.0, np.inf, -np.inf, 4.0]])
    bd = np.array([2.0, 1.0, np.nan, 2.0, np.nan])
    results = []
    for lib in (engine, torch):
        a, b = lib.tensor(ad, requires_grad=True), lib.tensor(bd, requires_grad=True)
        y = getattr(lib, name)(a, b)
        y.backward(lib.tensor(np.array([[1.0, 2.0, np.nan, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]])))
        results.append((y.detach().numpy(), a.grad.numpy(), b.grad.numpy(), y.grad_fn.name()))
    for mine, theirs in zip(*results):
        if isinstance(mine, str):
            assert mine == theirs
        else:
            np.testing.assert_array_equal(mine, theirs)
    x = engine.tensor([1.0, 3.0], requires_grad=True)
    (g,) = engine.autograd.grad(getattr(engine, name)(x * x, engine.tensor([2.0, 2.0])).sum(), x, create_graph=True)
    (gg,) = engine.autograd.grad(g.sum(), x)
    assert gg.tolist() == ([0.0, 2.0] if name == "fmax" else [2.0, 0.0])
