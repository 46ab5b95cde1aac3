"""Higher-order gradients (``create_graph=True``, engine/autograd/higher.py): each op's gradient recorded and
differentiated once more. Every call below runs with the engine and with PyTorch 2.13 from the same float64 arrays:
the gradient, and the gradient of ``<gradient, v>`` (a Hessian-vector product), must agree at 1e-12; without
PyTorch the second is held to central differences of the first-order gradient. Then what a learner's script does
with them (a physics-informed network, a WGAN-GP gradient penalty, MAML's inner step, hessian), the refusals, and
the CuPy stand-in."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import engine
from engine.autograd import functional as AF

pytestmark = pytest.mark.filterwarnings("ignore:Using a target size")  # mse_loss of two shapes, on purpose

HAVE_TORCH = importlib.util.find_spec("torch") is not None
F64 = {"dtype": "float64"}

# name: (input shapes, a domain for the random inputs, the call with lib = engine or torch); domains keep clear of
# kinks, where finite differences would cross a step
IDX = np.array([2, 0, 2, 1])
CASES = {
    "add, sub, neg": ([(3, 4), (4,)], (-1.0, 1.0), lambda lib, a, b: (a + b) * (a - b) - (-a) * b),
    "mul, div": ([(3, 4), (3, 4)], (0.5, 2.0), lambda lib, a, b: a * b / (a + b) + 3 / b),
    "pow": ([(3, 4)], (0.5, 2.0), lambda lib, a: a ** 3 + a ** 2 - a ** 0.5 + 2 ** a),
    "pow of tensors": ([(3, 4), (3, 4)], (0.5, 2.0), lambda lib, a, b: a ** b),
    "mm and F.linear": ([(3, 4), (5, 4), (5,)], (-1.0, 1.0),
                        lambda lib, x, w, c: lib.nn.functional.linear(x, w, c) ** 2 @ w),
    "addmm with beta and alpha, 3-D linear": ([(5,), (3, 4), (4, 5), (2, 3, 5)], (-1.0, 1.0),
                                               lambda lib, c, x, w, z: lib.addmm(c, x, w, beta=0.5, alpha=-2.0) ** 2
                                               @ w.t() + lib.nn.functional.linear(z, w, c[:4]).sum(0) ** 2),
    "add and sub with alpha": ([(3, 4), (3, 4)], (0.5, 2.0),
                               lambda lib, a, b: a.add(b * a, alpha=2.5) * a.sub(b ** 2, alpha=-0.5)),
    "mse_loss broadcast, each reduction": ([(4, 3), (4, 1)], (-1.0, 1.0),
                                           lambda lib, a, b: lib.nn.functional.mse_loss(a ** 2, b)
                                           * lib.nn.functional.mse_loss(b * a, a, reduction="sum")
                                           + (lib.nn.functional.mse_loss(a, b ** 3, reduction="none") * a).sum()),
    "silu, elu, celu, selu, softplus, mish": ([(3, 4)], (-2.0, 2.0),
                                              lambda lib, a: (lib.nn.functional.silu(a) * lib.nn.functional.elu(a, 0.7)
                                                              + lib.nn.functional.celu(a, 1.5) ** 2
                                                              + lib.nn.functional.selu(a) * a
                                                              + lib.nn.functional.softplus(a, 2.0, 3.0) ** 2
                                                              + lib.nn.functional.mish(a) ** 2)),
    "leaky_relu, hardtanh, hardswish, shrinks, threshold": (  # (hardsigmoid's: torch has none, test_fused_nodes)
        [(3, 4)], (-4.0, 4.0), lambda lib, a: (lib.nn.functional.leaky_relu(a, 0.2) ** 2
                                               + lib.nn.functional.hardtanh(a, -1.5, 2.5) * a
                                               + lib.nn.functional.hardswish(a) ** 2
                                               + lib.nn.functional.softshrink(a, 0.5) ** 3
                                               + lib.nn.functional.hardshrink(a, 0.5) * a
                                               + lib.nn.functional.threshold(a, 0.1, -1.0) ** 2)),
    "batch_norm, training and not": ([(4, 3, 2), (3,), (3,)], (-1.0, 1.0),
                                     lambda lib, x, w, b: (lib.nn.functional.batch_norm(
                                         x * x, None, None, w, b, training=True) ** 2 * x).sum()
                                     + (lib.nn.functional.batch_norm(x, lib.tensor([0.1, -0.2, 0.3], dtype=x.dtype),
                                                                     lib.tensor([1.5, 0.5, 2.0], dtype=x.dtype), w,
                                                                     None, training=False) ** 2
                                        * w.view(1, 3, 1)).sum()),
    "smooth_l1, huber, bce, bce with logits": ([(4, 3), (4, 3)], (-1.0, 1.0),
                                               lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a * a, b, beta=0.5)
                                               * lib.nn.functional.huber_loss(a, b * b, delta=0.3, reduction="sum")
                                               + lib.nn.functional.binary_cross_entropy(
                                                   a.sigmoid(), b.sigmoid(), weight=lib.ones(3, dtype=a.dtype) * 0.5)
                                               + lib.nn.functional.binary_cross_entropy_with_logits(
                                                   a * b, b.sigmoid(), pos_weight=lib.ones(3, dtype=a.dtype) * 2,
                                                   reduction="sum")),
    "var and std, over dims and all": ([(3, 4), (3, 4)], (-1.0, 1.0),
                                       lambda lib, a, b: (a * b).var(1) @ a.std(0, keepdim=True).t().squeeze(1)[:3]
                                       + a.var() * b.std(correction=0) + (a ** 2).std((0, 1), keepdim=True).sum()),
    "constant pad, cropping too": ([(2, 3, 4)], (-1.0, 1.0),
                                   lambda lib, a: (lib.nn.functional.pad(a * a, (1, -1, -1, 2), value=0.5) ** 2).sum()
                                   * lib.nn.functional.pad(a, (2, 1)).sum()),
    "logsumexp": ([(3, 4)], (-2.0, 2.0), lambda lib, a: (a * a).logsumexp(1) @ a.logsumexp(0, keepdim=True).t()[:3]
                  .squeeze(1)),
    "lerp, addcmul, addcdiv": ([(3, 4), (3, 4), (3, 4)], (0.5, 1.5),
                               lambda lib, a, b, w: (a.lerp(b * b, w) * a.lerp(b, 0.7)
                                                     + lib.addcmul(a, b, w * a, value=0.3)
                                                     * lib.addcdiv(a * b, w, b + a, value=-1.5))),
    "group_norm": ([(2, 4, 3), (4,), (4,)], (-1.0, 1.0),
                   lambda lib, x, w, b: (lib.nn.functional.group_norm(x * x, 2, w, b) ** 2 * x).sum()
                   + (lib.nn.functional.group_norm(x, 4) ** 3).sum()),
    "repeat, trace": ([(2, 3)], (-1.0, 1.0), lambda lib, a: (a.repeat(2, 1, 2) ** 2).sum() * (a * a).t().trace()
                      + (a @ a.t()).trace() ** 2),
    "matmul vectors": ([(4,), (4, 3), (3,)], (-1.0, 1.0), lambda lib, v, m, u: (v @ m) * (m @ u).sum() + (v @ v)),
    "matmul batched": ([(2, 3, 4), (4, 5), (2, 5, 3)], (-1.0, 1.0), lambda lib, a, b, c: (a @ b) ** 2 @ c),
    "exp, log, sqrt": ([(3, 4)], (0.5, 2.0), lambda lib, a: a.exp() * a.log() + a.sqrt() ** 3),
    "sin, cos, tanh, sigmoid": ([(3, 4)], (-2.0, 2.0),
                                lambda lib, a: a.sin() * a.cos() + a.tanh() ** 2 + a.sigmoid() * a),
    "abs, relu, leaky_relu, elu": ([(3, 4)], (-2.0, 2.0), lambda lib, a: lib.relu(a) ** 2 + a.abs() * a
                                   + lib.nn.functional.leaky_relu(a, 0.2) ** 3 + lib.nn.functional.elu(a) * a),
    "clamp, maximum, where": ([(3, 4), (3, 4)], (-2.0, 2.0),
                              lambda lib, a, b: a.clamp(-0.5, 0.7) * a + lib.maximum(a, b) ** 2
                              + lib.where(a > b, a * b, a + b) ** 2 + a.clamp(min=0.1) * b),
    "softplus, silu, gelu": ([(3, 4)], (-2.0, 2.0),
                             lambda lib, a: lib.nn.functional.softplus(a) * a + lib.nn.functional.silu(a) ** 2
                             + lib.nn.functional.gelu(a) * a + lib.nn.functional.gelu(a, approximate="tanh") ** 2),
    "the one-tensor table": ([(3, 4)], (0.2, 0.8),
                             lambda lib, a: a.log1p() * a.expm1() + a.rsqrt() * a.asin() + a.atan() * a.cosh()
                             + a.reciprocal() * a.erf() + lib.nn.functional.logsigmoid(a) ** 2),
    "the two-tensor table": ([(3, 4), (3, 4)], (0.5, 2.0),
                             lambda lib, a, b: lib.atan2(a, b) * a + lib.hypot(a, b) ** 2 + a.logaddexp(b) * b),
    "sum, mean": ([(2, 3, 4)], (-1.0, 1.0),
                  lambda lib, a: (a.sum(1) ** 2).mean(0) * a.mean() + (a.sum((0, 2), keepdim=True) * a).sum((0, 1))),
    "max, min": ([(3, 4)], (-1.0, 1.0), lambda lib, a: a.max(1).values * a.min(0).values[:3] + a.max() * a[0, :3]),
    "softmax, log_softmax": ([(3, 4)], (-2.0, 2.0),
                             lambda lib, a: a.softmax(1) * a + a.log_softmax(0) ** 2),
    "norm": ([(3, 4)], (-1.0, 1.0), lambda lib, a: (a.norm(2, dim=1) - 1) ** 2 + a.norm() * a.norm(1, dim=0)[:3]),
    "shapes": ([(2, 3, 4)], (-1.0, 1.0),
               lambda lib, a: (a.reshape(6, 4) ** 2).t() @ a.permute(2, 0, 1).reshape(6, 4)
               + (a.transpose(0, 2).reshape(4, 6) * a.view(4, 6)) @ a.view(6, 4) + a[0, 0, :1].expand(4, 4) ** 2),
    "indexing": ([(4, 5)], (-1.0, 1.0),
                 lambda lib, a: a[:, 1:3] ** 2 @ a[1:3] + a[lib.tensor(IDX)] ** 2 + a[a > 0.2].sum() * a[0]),
    "cat, stack, cumsum, flip, roll, tril": ([(3, 3), (3, 3)], (-1.0, 1.0),
                                             lambda lib, a, b: lib.cat([a * b, a ** 2]).cumsum(0) * lib.stack(
                                                 [a, b.flip(1)]).sum(0).roll(1, 0).repeat(2, 1)
                                             + (a @ b).tril().repeat(2, 1) ** 2),
    "gather, embedding": ([(3, 4), (5, 3)], (-1.0, 1.0),
                          lambda lib, a, w: a.gather(1, lib.tensor([[0, 0], [3, 1], [2, 2]])) ** 2
                          + (lib.nn.functional.embedding(lib.tensor([1, 4, 1]), w) ** 3)[:, :2]),
    "cross_entropy, mse_loss": ([(4, 3), (4, 3)], (-1.0, 1.0),
                                lambda lib, a, b: lib.nn.functional.cross_entropy(a * b, lib.tensor([0, 2, 1, 2]))
                                * lib.nn.functional.mse_loss(a, b) + lib.nn.functional.cross_entropy(
                                    a ** 2, lib.tensor([1, 1, 0, 2]), reduction="none").sum()),
    "casts": ([(3, 4)], (-1.0, 1.0), lambda lib, a: (a.float() ** 2).double() * a),
    "conv2d": ([(2, 4, 6, 5), (6, 2, 3, 3), (6,)], (-1.0, 1.0),
               lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=2) ** 2),
    "conv1d dilated": ([(2, 3, 9), (4, 3, 2)], (-1.0, 1.0),
                       lambda lib, x, w: lib.tanh(lib.nn.functional.conv1d(x, w, dilation=3, padding=2))),
    "conv2d padded unevenly": ([(1, 2, 5, 5), (3, 2, 2, 4)], (-1.0, 1.0),
                               lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same") ** 2),
    "conv_transpose2d": ([(2, 4, 3, 4), (4, 3, 3, 2), (6,)], (-1.0, 1.0),
                         lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(
                             x, w, b, stride=2, padding=1, output_padding=1, groups=2) ** 2),
    "max_pool2d, avg_pool2d": ([(2, 3, 6, 5)], (-1.0, 1.0),
                               lambda lib, x: lib.nn.functional.max_pool2d(x ** 3, 2, stride=1) ** 2
                               + lib.nn.functional.avg_pool2d(x ** 2, 3, stride=1, padding=1,
                                                              count_include_pad=False)[..., :5, :4] ** 2),
    "adaptive_avg_pool2d, unfold, fold": (
        [(1, 2, 5, 7)], (-1.0, 1.0),
        lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x ** 2, (3, 4)).reshape(-1)[:6] ** 2
        + lib.nn.functional.fold(lib.nn.functional.unfold(x, 2, padding=1) ** 2, (5, 7), 2, padding=1)
        .reshape(-1)[:6]),
    "amax, amin": ([(3, 4)], (-1.0, 1.0), lambda lib, a: (a ** 2).amax(1) * a.amin(0)[:3] + a.amax() * a[0, :3]),
    "binary_cross_entropy": ([(3, 4), (3, 4)], (0.1, 0.9),
                             lambda lib, p, t: lib.nn.functional.binary_cross_entropy(p, t, reduction="none") ** 2
                             + lib.nn.functional.binary_cross_entropy_with_logits(p * 4 - 2, t)),
    "einsum": ([(3, 4), (4, 5), (3, 3)], (-1.0, 1.0),
               lambda lib, a, b, c: lib.einsum("ij,jk->ik", a, b) ** 2 + lib.einsum("ii->i", c).sum()
               + lib.einsum("ij,ij->i", a, a).unsqueeze(1) * lib.einsum("ij->j", b)),
    "conv3d": ([(1, 2, 4, 3, 4), (3, 2, 2, 2, 2)], (-1.0, 1.0),
               lambda lib, x, w: lib.nn.functional.conv3d(x, w, stride=(1, 2, 1)) ** 2),
    "layer_norm": ([(3, 2, 5), (2, 5), (2, 5)], (-1.0, 1.0),
                   lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (2, 5), w, b) ** 3
                   + lib.nn.functional.layer_norm(x * w, (5,)) ** 2),
}


def _inputs(shapes, domain, seed=5):
    rng = np.random.default_rng(seed)
    return [rng.uniform(*domain, size=s) for s in shapes]


def _second_order(lib, name, arrays):
    """The call's gradient ``g`` (of ``sum(out * w)``) with create_graph, then the gradient of ``sum(g * v)``:
    both as NumPy arrays, one per input."""
    shapes, _, fn = CASES[name]
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    w = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64)
    grads = lib.autograd.grad((out * w).sum(), leaves, create_graph=True)
    vs = _inputs(shapes, (-1.0, 1.0), seed=11)
    total = sum((g * lib.tensor(v, dtype=lib.float64)).sum() for g, v in zip(grads, vs))
    second = lib.autograd.grad(total, leaves, allow_unused=True)
    return ([g.detach().numpy() for g in grads],
            [np.zeros_like(a) if s is None else s.numpy() for s, a in zip(second, arrays)], vs)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # torch's, of its own copy
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_of_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    arrays = _inputs(*CASES[name][:2])
    ours, our_second, _ = _second_order(engine, name, arrays)
    theirs, their_second, _ = _second_order(torch, name, arrays)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    for a, b in zip(our_second, their_second):  # (BCE: PyTorch's double backward is another formula's rounding)
        np.testing.assert_allclose(a, b, rtol=1e-10 if name == "binary_cross_entropy" else 1e-11, atol=1e-12)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n != "casts"))
def test_gradients_of_gradients_equal_finite_differences(name):
    """``H v`` against ``(g(x + e v) - g(x - e v)) / 2e``, g the first-order gradient (held to PyTorch's and to
    finite differences by the other tests). (The casts, through float32, are held to PyTorch alone: float32's
    rounding is far above a difference of 1e-6.)"""
    shapes, domain, fn = CASES[name]
    arrays = _inputs(shapes, domain)
    _, second, vs = _second_order(engine, name, arrays)

    def first(xs):
        leaves = [engine.tensor(a, dtype=engine.float64, requires_grad=True) for a in xs]
        out = fn(engine, *leaves)
        w = engine.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=engine.float64)
        grads = engine.autograd.grad((out * w).sum(), leaves, allow_unused=True)
        return [np.zeros_like(a) if g is None else g.numpy() for g, a in zip(grads, xs)]

    eps = 1e-6
    up = first([a + eps * v for a, v in zip(arrays, vs)])
    down = first([a - eps * v for a, v in zip(arrays, vs)])
    for s, u, d in zip(second, up, down):
        np.testing.assert_allclose(s, (u - d) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_a_known_second_derivative_by_hand():
    """d/dx of x^3 is 3x^2, and d2/dx2 is 6x: at x = 2, 12 and 12; the third, 6."""
    x = engine.tensor(2.0, requires_grad=True)
    (dx,) = engine.autograd.grad(x ** 3, x, create_graph=True)
    (dxx,) = engine.autograd.grad(dx, x, create_graph=True)
    (dxxx,) = engine.autograd.grad(dxx, x)
    assert (dx.item(), dxx.item(), dxxx.item()) == (12.0, 12.0, 6.0)
    assert dx.requires_grad and dx.grad_fn is not None
    assert dxxx.grad_fn is None  # the last without create_graph: a plain gradient


def _pinn(lib):
    """A physics-informed network fitting u'' + u = 0: the derivatives of its output by its input go into its loss."""
    rng = np.random.default_rng(0)
    x = lib.tensor(np.linspace(-1, 1, 9).reshape(-1, 1), requires_grad=True)
    params = [lib.tensor(rng.normal(size=s), requires_grad=True) for s in ((1, 6), (6,), (6, 1), (1,))]
    w1, b1, w2, b2 = params
    u = lib.tanh(x @ w1 + b1) @ w2 + b2
    (ux,) = lib.autograd.grad(u, x, grad_outputs=lib.ones_like(u), create_graph=True)
    (uxx,) = lib.autograd.grad(ux, x, grad_outputs=lib.ones_like(ux), create_graph=True)
    loss = ((uxx + u) ** 2).mean() + ((u[4] - 1) ** 2).sum()
    loss.backward()
    return [loss.item()] + [p.grad.numpy() for p in params]


def _gradient_penalty(lib):
    """WGAN-GP's penalty: the critic's gradient at points between real and fake samples, held near norm 1."""
    rng = np.random.default_rng(1)
    lib.manual_seed(0)
    critic = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.LeakyReLU(0.2), lib.nn.Linear(8, 8), lib.nn.Tanh(),
                               lib.nn.Linear(8, 1)).double()
    with lib.no_grad():
        for p, a in zip(critic.parameters(), (rng.normal(size=tuple(q.shape)) for q in critic.parameters())):
            p.copy_(lib.tensor(a))
    points = lib.tensor(rng.normal(size=(5, 3)), requires_grad=True)
    score = critic(points)
    (grads,) = lib.autograd.grad(score, points, grad_outputs=lib.ones_like(score), create_graph=True,
                                 retain_graph=True)
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean() * 10 - score.mean()
    penalty.backward()
    return [penalty.item()] + [p.grad.numpy() for p in critic.parameters()]


def _maml_step(lib):
    """MAML: one inner SGD step on a task, then the loss after it, differentiated back through the step."""
    rng = np.random.default_rng(2)
    w = lib.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    b = lib.tensor(rng.normal(size=3), requires_grad=True)
    x, y = lib.tensor(rng.normal(size=(6, 4))), lib.tensor([0, 2, 1, 1, 0, 2])
    inner = lib.nn.functional.cross_entropy(x @ w + b, y)
    gw, gb = lib.autograd.grad(inner, (w, b), create_graph=True)
    w2, b2 = w - 0.5 * gw, b - 0.5 * gb
    outer = lib.nn.functional.cross_entropy(lib.relu(x) @ w2 + b2, y)
    outer.backward()
    return [outer.item(), w.grad.numpy(), b.grad.numpy()]


def _conv_gradient_penalty(lib):
    """WGAN-GP as the paper trains images: a convolutional critic, the penalty on its gradient by the image."""
    rng = np.random.default_rng(3)
    critic = lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3, stride=2, padding=1), lib.nn.LeakyReLU(0.2),
                               lib.nn.Conv2d(4, 8, 3, stride=2, padding=1), lib.nn.LayerNorm([8, 2, 2]),
                               lib.nn.LeakyReLU(0.2), lib.nn.Flatten(), lib.nn.Linear(32, 1)).double()
    with lib.no_grad():
        for p in critic.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)) * 0.5))
    real, fake = lib.tensor(rng.normal(size=(3, 1, 7, 7))), lib.tensor(rng.normal(size=(3, 1, 7, 7)))
    alpha = lib.tensor(rng.uniform(size=(3, 1, 1, 1)))
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(mixed)
    (grads,) = lib.autograd.grad(score, mixed, lib.ones_like(score), create_graph=True)
    loss = critic(fake).mean() - critic(real).mean() + 10 * ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
    loss.backward()
    return [loss.item()] + [p.grad.numpy() for p in critic.parameters()]


SCRIPTS = {"physics-informed network": _pinn, "gradient penalty": _gradient_penalty, "MAML step": _maml_step,
           "convolutional gradient penalty": _conv_gradient_penalty}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_learners_script_gets_torchs_numbers(name):
    torch = pytest.importorskip("torch")
    torch.set_default_dtype(torch.float64)
    engine.set_default_dtype(engine.float64)
    try:
        ours, theirs = SCRIPTS[name](engine), SCRIPTS[name](torch)
    finally:
        torch.set_default_dtype(torch.float32)
        engine.set_default_dtype(engine.float32)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-12)
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_the_physics_informed_networks_gradient_equals_finite_differences():
    """Without PyTorch: the PINN's loss (which holds u'') as a function of one weight, against its gradient."""
    engine.set_default_dtype(engine.float64)
    try:
        base = _pinn(engine)
        rng = np.random.default_rng(0)
        shapes = ((1, 6), (6,), (6, 1), (1,))
        start = [rng.normal(size=s) for s in shapes]

        def loss_at(delta):
            x = engine.tensor(np.linspace(-1, 1, 9).reshape(-1, 1), requires_grad=True)
            w1, b1, w2, b2 = [engine.tensor(a, requires_grad=True) for a in start]
            w1 = w1 + engine.tensor(delta)
            u = engine.tanh(x @ w1 + b1) @ w2 + b2
            (ux,) = engine.autograd.grad(u, x, engine.ones_like(u), create_graph=True)
            (uxx,) = engine.autograd.grad(ux, x, engine.ones_like(ux), create_graph=True)
            return (((uxx + u) ** 2).mean() + ((u[4] - 1) ** 2).sum()).item()

        for j in range(6):
            e = np.zeros((1, 6))
            e[0, j] = 1e-6
            assert base[1][0, j] == pytest.approx((loss_at(e) - loss_at(-e)) / 2e-6, rel=1e-6, abs=1e-8)
    finally:
        engine.set_default_dtype(engine.float32)


def test_hessian_and_friends_equal_torchs():
    torch = pytest.importorskip("torch")
    x = np.array([0.3, -1.2, 2.0])
    y = np.array([[0.5, 1.5], [-0.7, 0.2]])

    def f(lib):
        return lambda a, b: (a.sin() * a ** 3).sum() * (b ** 2).sum() + a.norm() + (b @ b).trace()

    ours = AF.hessian(f(engine), (engine.tensor(x), engine.tensor(y)))
    theirs = torch.autograd.functional.hessian(f(torch), (torch.tensor(x), torch.tensor(y)))
    assert len(ours) == 2 and all(len(row) == 2 for row in ours)
    for row, trow in zip(ours, theirs):
        for a, b in zip(row, trow):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-13)
    one = AF.hessian(lambda a: (a ** 4).sum(), engine.tensor(x))
    np.testing.assert_allclose(one.numpy(), np.diag(12 * x ** 2), rtol=1e-15)  # by hand: 12 x^2 on the diagonal
    v = np.array([0.5, 1.5, 1.0])
    a, ta = engine.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    _, ours_vjp = AF.vjp(lambda t: t.exp() * t, a, engine.tensor(v), create_graph=True)
    _, their_vjp = torch.autograd.functional.vjp(lambda t: t.exp() * t, ta, torch.tensor(v), create_graph=True)
    assert ours_vjp.requires_grad and their_vjp.requires_grad
    np.testing.assert_allclose(engine.autograd.grad(ours_vjp.sum(), a)[0].numpy(),
                               torch.autograd.grad(their_vjp.sum(), ta)[0].numpy(), rtol=1e-13)


def test_hessian_by_hand_without_torch():
    """f(a, b) = a^2 b + b^3: H = [[2b, 2a], [2a, 6b]] at (a, b) = (1.5, -2)."""
    h = AF.hessian(lambda a, b: a * a * b + b ** 3, (engine.tensor(1.5, **F64), engine.tensor(-2.0, **F64)))
    assert [[h[i][j].item() for j in range(2)] for i in range(2)] == [[-4.0, 3.0], [3.0, -12.0]]
    with pytest.raises(RuntimeError, match="should contain a single element"):
        AF.hessian(lambda a: a * 2, engine.tensor([1.0, 2.0]))
    zeros = AF.hessian(lambda a, b: (a ** 2).sum(), (engine.tensor([1.0, 2.0]), engine.tensor([3.0])))
    assert zeros[1][1].tolist() == [[0.0]] and zeros[0][0].tolist() == [[2.0, 0.0], [0.0, 2.0]]


def test_backward_with_create_graph_leaves_a_grad_that_can_be_differentiated():
    """``loss.backward(create_graph=True)``: each ``.grad`` has a ``grad_fn``; a penalty on the gradient's norm then
    reaches the weights (d/dw |2 w x^2|^2 ... by hand below)."""
    w = engine.tensor([1.0, -2.0], requires_grad=True)
    x = engine.tensor([3.0, 0.5])
    (w * w * x).sum().backward(create_graph=True)  # grad = 2 w x
    assert w.grad.tolist() == [6.0, -2.0] and w.grad.grad_fn is not None
    penalty = (w.grad ** 2).sum()  # 4 w^2 x^2, whose gradient is 8 w x^2
    g = w.grad
    w.grad = None
    penalty.backward()
    assert w.grad.tolist() == [72.0, -4.0]
    assert g.grad_fn is not None  # the first .grad kept its graph
    a = engine.tensor([1.0, 2.0], requires_grad=True)
    (a * a).sum().backward(create_graph=True)
    (a * a).sum().backward(create_graph=True)  # accumulated out of place, still recorded
    assert a.grad.tolist() == [4.0, 8.0] and a.grad.grad_fn is not None


def test_the_same_gradient_is_not_shared_between_two_grads():
    a, b = engine.tensor([1.0], requires_grad=True), engine.tensor([2.0], requires_grad=True)
    (a + b).sum().backward(create_graph=True)  # Add gives both inputs the one gradient it got
    assert a.grad is not b.grad
    a.grad.data.mul_(5)
    assert b.grad.tolist() == [1.0]


def test_grad_outputs_that_require_grad_stay_connected():
    """The double-backward trick for a Jacobian-vector product: the gradient is linear in ``grad_outputs``, so its
    gradient by them is J v."""
    x = engine.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = engine.stack([x[0] * x[1], x[1] ** 2, x[2].exp()])
    u = engine.zeros(3, requires_grad=True)
    (g,) = engine.autograd.grad(y, x, grad_outputs=u, create_graph=True)
    (jv,) = engine.autograd.grad(g, u, grad_outputs=engine.tensor([1.0, 0.0, 1.0]))
    np.testing.assert_allclose(jv.numpy(), [1.0, 0.0, np.exp(2.0)], rtol=1e-6)  # J (1, 0, 1): x1, 0, e^x2


def test_a_users_function_whose_backward_is_written_in_tensor_ops_is_differentiable():
    """The tutorial's LegendrePolynomial3: its backward, 1.5 (5 x^2 - 1) g, written with Tensors, is recorded."""

    class Legendre(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x ** 3 - 3 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 1.5 * (5 * x ** 2 - 1)

    x = engine.tensor(0.5, requires_grad=True)
    (d1,) = engine.autograd.grad(Legendre.apply(x), x, create_graph=True)
    (d2,) = engine.autograd.grad(d1, x)
    assert d1.item() == pytest.approx(1.5 * (5 * 0.25 - 1)) and d2.item() == pytest.approx(15 * 0.5)


def test_hooks_and_retained_grads_see_the_recorded_gradient():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(g.requires_grad) or g * 2)
    (h * x).sum().backward(create_graph=True)
    assert seen == [True]
    assert h.grad.tolist() == [2.0, 4.0]  # d/dh of h x is x, doubled by the hook (retain_grad's runs last)
    assert x.grad.tolist() == [5.0, 20.0]  # h directly, and 2x through h: x^2 + 2x (2x) = 5 x^2
    assert h.grad.grad_fn is not None and x.grad.grad_fn is not None


def test_what_has_no_recorded_backward_is_refused_by_name():
    x = engine.randn(1, 1, 4, 4, requires_grad=True)
    with pytest.raises(NotImplementedError, match=r"no differentiable backward for ScatterReduceBackward0; "
                                                  r"higher-order gradients cover .*convolution"):
        v = x.reshape(-1)
        engine.autograd.grad(engine.zeros(2).scatter_reduce(0, engine.zeros(16, dtype=engine.int64), v, "amax").sum(),
                             v, create_graph=True)

    with pytest.raises(NotImplementedError, match=r"ProdBackward0 \(a product over 2049 elements\)"):
        big = engine.rand(2049, requires_grad=True)
        engine.autograd.grad(big.prod(), big, create_graph=True)


def test_the_graph_is_kept_by_default_and_freed_when_asked():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    engine.autograd.grad(y, x, create_graph=True)
    (again,) = engine.autograd.grad(y, x)  # retain_graph defaults to create_graph, as PyTorch's
    assert again.tolist() == [3.0, 12.0]
    z = (x ** 3).sum()
    engine.autograd.grad(z, x, create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        engine.autograd.grad(z, x)


def test_jacobian_with_create_graph_is_differentiable():
    x = engine.tensor([0.5, -1.0], requires_grad=True)
    jac = AF.jacobian(lambda a: a ** 3, x, create_graph=True)  # diag(3 x^2)
    assert jac.requires_grad
    (g,) = engine.autograd.grad(jac.sum(), x)  # d/dx of 3 x^2 summed: 6 x
    assert g.tolist() == [3.0, -6.0]
    values, products = AF.jvp(lambda a: a ** 2, x, engine.tensor([1.0, 1.0]), create_graph=True)
    assert products.requires_grad and products.tolist() == [1.0, -2.0]


def test_the_profile_shows_the_recorded_backward_as_backward_rows():
    """In a profile (the Time view, --profile), the ops a node's recorded backward applies are that node's backward
    row, as in the first-order walk, not forward rows of their own."""
    from engine import profiler

    x = engine.linspace(-1, 1, 16).reshape(-1, 1).requires_grad_()
    w = engine.randn(1, 8, requires_grad=True)
    with profiler.profile() as prof:
        u = engine.tanh(x @ w).sum()
        (ux,) = engine.autograd.grad(u, x, create_graph=True)
        (ux ** 2).mean().backward()
    forward = [r.op for r in prof.records if r.phase == "forward"]
    backward = [r.op for r in prof.records if r.phase == "backward"]
    assert forward == ["MatMul", "tanh", "Sum", "Pow", "Mean"]  # the script's own calls: none of the recorded walk's
    # the recorded walk (one row per node), then loss.backward() through the forward and the recorded backward
    assert backward[:4] == ["Sum backward", "Tanh backward", "MatMul backward", "Mean backward"]
    assert backward.count("Tanh backward") == 2 and "TanhGrad backward" in backward[4:]  # (TanhBackwardBackward0)
    assert w.grad is not None and w.grad.shape == (1, 8)


def test_on_the_cupy_stand_in_the_second_order_equals_the_cpus(cuda_device):
    results = {}
    for device in ("cpu", cuda_device):
        x = engine.tensor(np.linspace(-1, 1, 5).reshape(-1, 1), dtype=engine.float64, device=device,
                          requires_grad=True)
        w = engine.tensor(np.linspace(-2, 2, 6).reshape(1, 6), dtype=engine.float64, device=device,
                          requires_grad=True)
        v = engine.tensor(np.linspace(1, 0, 6).reshape(6, 1), dtype=engine.float64, device=device)
        u = engine.tanh(x @ w).softmax(1) @ v
        (ux,) = engine.autograd.grad(u.sum(), x, create_graph=True)
        ((ux ** 2).sum() + (u[1:3] ** 2).sum()).backward()
        assert w.grad.device.type == device.split(":")[0]
        results[device] = [w.grad.cpu().numpy()]
        # a convolutional critic's gradient penalty: conv, pooling, layer norm, their recorded backward there too
        image = engine.tensor(np.linspace(-1, 1, 2 * 36).reshape(2, 1, 6, 6), dtype=engine.float64, device=device,
                              requires_grad=True)
        kernel = engine.tensor(np.linspace(-1, 1, 18).reshape(2, 1, 3, 3), dtype=engine.float64, device=device,
                               requires_grad=True)
        F = engine.nn.functional
        h = F.max_pool2d(F.leaky_relu(F.conv2d(image, kernel, padding=1), 0.2), 2)
        score = F.layer_norm(F.avg_pool2d(h, 3), (2, 1, 1)).sum()
        (g,) = engine.autograd.grad(score, image, create_graph=True)
        ((g.flatten(1).norm(dim=1) - 1) ** 2).mean().backward()
        results[device].append(kernel.grad.cpu().numpy())
    for a, b in zip(results[cuda_device], results["cpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    assert np.abs(results["cpu"][1]).sum() > 0
