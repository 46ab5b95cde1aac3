"""``engine.func`` (``torch.func``): the transforms against PyTorch's on the programs of its tutorials (per-sample
gradients, model ensembling, Jacobians and Hessians, composed transforms), and its refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine

RNG = np.random.default_rng(0)
W, X, Y = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal((5, 3))
V = RNG.standard_normal(4)


def _model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 3)).double()
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor(W))
        model[0].bias.fill_(0.1)
        model[2].weight.copy_(lib.tensor(W[:, :3]))
        model[2].bias.fill_(-0.2)
    return model


def _f(t):
    return (t.sin() * t).sum()


PROGRAMS = {
    "per-sample gradients": lambda L: _per_sample(L),
    "ensemble by stack_module_state": lambda L: _ensemble(L),
    "grad, argnums and a dict": lambda L: L.func.grad(lambda p, x: (p["a"] * x).sum() + (p["b"] ** 2).sum() * x.sum(),
                                                      argnums=(0, 1))({"a": L.tensor(V), "b": L.tensor(V[:2])},
                                                                      L.tensor(V * 2)),
    "grad with aux": lambda L: L.func.grad(lambda t: (_f(t), t.cos()), has_aux=True)(L.tensor(V)),
    "grad_and_value": lambda L: L.func.grad_and_value(_f)(L.tensor(V)),
    "grad of grad": lambda L: L.func.grad(lambda t: L.func.grad(_f)(t).sum())(L.tensor(V)),
    "jacrev": lambda L: L.func.jacrev(lambda a, b: (a * b.sum(), a.exp()), argnums=(0, 1))(L.tensor(V),
                                                                                          L.tensor(V[:2])),
    "jacfwd": lambda L: L.func.jacfwd(lambda t: t.sin() * t)(L.tensor(V)),
    "hessian": lambda L: L.func.hessian(_f)(L.tensor(V)),
    "hessian of a model's loss by its input": lambda L: _hessian_of_model(L),
    "vjp, twice": lambda L: _vjp_twice(L),
    "jvp": lambda L: L.func.jvp(lambda a, b: a.exp() * b, (L.tensor(V), L.tensor(V + 1)),
                                (L.tensor(V * 0 + 1), L.tensor(V))),
    "vmap, in_dims and out_dims": lambda L: L.func.vmap(lambda a, b: (a @ b, a * b), in_dims=(1, None),
                                                        out_dims=(0, 1))(L.tensor(X), L.tensor(X[:, 0].copy())),
    "vmap of vmap": lambda L: L.func.vmap(L.func.vmap(lambda a, b: a * b + 1))(L.tensor(X), L.tensor(X[::-1].copy())),
    "vmap with a keyword": lambda L: L.func.vmap(lambda a, scale: a * scale)(L.tensor(V), scale=3.0),
    "vmap of jacrev": lambda L: L.func.vmap(L.func.jacrev(lambda t: t.tanh() * t.sum()))(L.tensor(X)),
    "gradient penalty, to the critic's parameters": lambda L: _gradient_penalty(L),
    "functional_call with other weights": lambda L: L.func.functional_call(
        _model(L), {"0.weight": L.tensor(W * 2)}, (L.tensor(X),)),
}


def _per_sample(L):  # noqa: N803 - the library
    model = _model(L)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = L.func.functional_call(model, p, (x.unsqueeze(0),))
        return ((out - y.unsqueeze(0)) ** 2).sum()

    return L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))(params, L.tensor(X), L.tensor(Y))


def _ensemble(L):  # noqa: N803
    models = [_model(L) for _ in range(3)]
    with L.no_grad():
        for k, m in enumerate(models):
            m[0].weight.mul_(k + 1)
    params, buffers = L.func.stack_module_state(models)
    base = _model(L)

    def run(p, b, x):
        return L.func.functional_call(base, (p, b), (x,))

    return L.func.vmap(run, in_dims=(0, 0, None))(params, buffers, L.tensor(X)), params["0.weight"].requires_grad


def _gradient_penalty(L):  # noqa: N803
    """WGAN-GP's penalty by ``grad`` of a critic that the function closes over: the input gradient stays
    differentiable with respect to the critic's parameters, which the penalty's backward reaches."""
    critic = _model(L)
    g = L.func.grad(lambda x: critic(x).sum())(L.tensor(X[0]))
    ((g.norm() - 1) ** 2).backward()
    return g.requires_grad, [p.grad for p in critic.parameters()]


def _hessian_of_model(L):  # noqa: N803
    model = _model(L)  # (made outside: PyTorch's jacfwd refuses the random draws of a layer made inside)
    return L.func.hessian(lambda x: model(x).pow(2).sum())(L.tensor(V))


def _vjp_twice(L):  # noqa: N803
    out, fn = L.func.vjp(lambda a, b: (a * b, a.sum() * b), L.tensor(V), L.tensor(V[::-1].copy()))
    ones = (L.ones(4, dtype=L.float64), L.ones(4, dtype=L.float64))
    return out, fn(ones), fn((L.tensor(V), L.tensor(V)))


def _leaves(out):
    if isinstance(out, dict):
        return [x for k in sorted(out) for x in _leaves(out[k])]
    if isinstance(out, (tuple, list)):
        return [x for v in out for x in _leaves(v)]
    return [out]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_transforms_give_pytorchs_numbers(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (PyTorch's forward mode warns of its own torch.jit use)
        theirs = _leaves(PROGRAMS[name](torch))
    ours = _leaves(PROGRAMS[name](engine))
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        if isinstance(a, bool) or a is None:
            assert a == b if isinstance(a, bool) else b is None
            continue
        assert tuple(a.shape) == tuple(b.shape) and b.requires_grad == a.requires_grad
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_known_values_without_pytorch():
    x = engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64)
    assert engine.func.grad(lambda t: (t ** 3).sum())(x).tolist() == [3.0, 12.0, 27.0]
    assert engine.func.hessian(lambda t: (t ** 3).sum())(x).tolist() == [[6.0, 0, 0], [0, 12.0, 0], [0, 0, 18.0]]
    assert engine.func.vmap(lambda r: r.sum())(engine.ones(4, 3)).tolist() == [3.0] * 4
    m = engine.nn.Linear(3, 1, bias=False, dtype=engine.float64)
    out = engine.func.functional_call(m, {"weight": engine.ones(1, 3, dtype=engine.float64)}, x)
    assert out.tolist() == [6.0] and m.weight.tolist() != [[1.0, 1.0, 1.0]]  # (its own weight back after the call)


def test_randomness_modes_of_vmap():
    engine.manual_seed(0)
    same = engine.func.vmap(lambda t: t + engine.randn(()), randomness="same")(engine.zeros(4))
    assert len(set(same.tolist())) == 1
    different = engine.func.vmap(lambda t: t + engine.randn(()), randomness="different")(engine.zeros(4))
    assert len(set(different.tolist())) == 4
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        engine.func.vmap(lambda t: t + engine.randn(()))(engine.zeros(4))


def test_refusals_name_the_problem():
    f = engine.func
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 "
                                           "dims. Maybe you wanted to use the vjp or jacrev APIs instead"):
        f.grad(lambda t: t * 2)(engine.ones(3))
    with pytest.raises(RuntimeError, match="Got argnums=2, but only 1 positional inputs"):
        f.grad(lambda t: t.sum(), argnums=2)(engine.ones(3))
    with pytest.raises(RuntimeError, match="output of function f should be a tuple: \\(output, aux\\)"):
        f.grad(lambda t: t.sum(), has_aux=True)(engine.ones(3))
    with pytest.raises(ValueError, match="Expected all tensors to have the same size in the mapped dimension, got "
                                         "sizes \\[2, 3\\]"):
        f.vmap(lambda a, b: a + b)(engine.ones(2), engine.ones(3))
    with pytest.raises(ValueError, match="at least one input must be mapped over"):
        f.vmap(lambda a: a, in_dims=None)(engine.ones(2))
    with pytest.raises(ValueError, match="expected in_dim to satisfy -1 <= in_dim < 1"):
        f.vmap(lambda a: a, in_dims=1)(engine.ones(2))
    m = engine.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="Error\\(s\\) in reparametrizing for Linear:\n\tUnexpected key\\(s\\): "
                                           "'w'.\n\tMissing key\\(s\\): 'bias', 'weight'."):
        f.functional_call(m, {"w": engine.ones(2, 2)}, engine.ones(2), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        f.functional_call(m, ({"bias": engine.ones(2)}, {"bias": engine.ones(2)}), engine.ones(2))


def test_functional_call_follows_tied_weights():
    emb = engine.nn.Embedding(3, 2)
    head = engine.nn.Linear(2, 3, bias=False)
    head.weight = emb.weight  # (tied, as a language model's)
    model = engine.nn.Sequential(emb, head)
    new = engine.ones(3, 2)
    out = engine.func.functional_call(model, {"0.weight": new}, engine.tensor([1]))
    assert out.tolist() == [[2.0, 2.0, 2.0]]  # the head used the new table too
    untied = engine.func.functional_call(model, {"0.weight": new}, engine.tensor([1]), tie_weights=False)
    assert untied.tolist() != [[2.0, 2.0, 2.0]]


def test_the_older_stateless_functional_call_warns_and_calls_the_same():
    m = engine.nn.Linear(2, 1, bias=False)
    with pytest.warns(FutureWarning, match="Please use torch.func.functional_call instead"):
        out = engine.nn.utils.stateless.functional_call(m, {"weight": engine.ones(1, 2)}, engine.tensor([2.0, 3.0]))
    assert out.tolist() == [5.0]
