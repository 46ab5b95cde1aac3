"""helper_test_op, after tinygrad's: one line per op test names shapes, a NumPy float64 reference and the
engine expression; forward values and gradients are checked against the reference, finite differences,
and PyTorch when it is importable."""

from __future__ import annotations

import importlib.util
import warnings
from contextlib import contextmanager

import numpy as np
import pytest

import engine
from engine import kernels
from engine.autograd import function, graph

HAVE_TORCH = importlib.util.find_spec("torch") is not None


@contextmanager
def python_paths():
    """The graph recorded and walked by the Python code (function._apply, graph._run), and the CPU backward's
    masked writes done by NumPy (engine/kernels.py), inside the block, whether or not the compiled parts
    (engine/autograd/_cgraph.c, engine/_ckernels.c) are built."""
    walk, apply, ck = graph._cwalk, function.Function.__dict__["apply"], kernels._ck
    graph._cwalk = None
    function.Function.apply = classmethod(function._apply)
    kernels._ck = None
    try:
        yield
    finally:
        graph._cwalk = walk
        function.Function.apply = apply
        kernels._ck = ck


def walk(node) -> str:
    """The graph below ``node`` as one line, as the graph tests print PyTorch's and the engine's: each node's name
    (``Acc``: a leaf's AccumulateGrad) and, in brackets, its edges' (``None``: one to what needs no gradient)."""
    if node is None:
        return "None"
    name = node.name().replace("torch::autograd::AccumulateGrad", "Acc")
    kids = ",".join(walk(n) for n, _ in node.next_functions)
    return f"{name}({kids})" if kids else name


def assert_same_run(mine, theirs, tol=1e-12):
    """Two runs of one expression, ``(graph, value, gradients, second derivatives)``, the engine's and PyTorch's:
    the same graph, and the arrays equal to ``tol`` (None where the other is None)."""
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=tol, atol=tol)
    for m, t in zip(mine[2] + mine[3], theirs[2] + theirs[3], strict=True):
        assert (m is None) == (t is None)
        if m is not None:
            np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


def answer(expr, env):
    """What ``expr`` gives in ``env``, for a table of answers: a tensor as (shape, dtype name, its values as a
    list), an error as (type name, message). UserWarnings are silenced (a table's own tests check those)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = eval(expr, env)  # noqa: S307 - a test table's own expressions
    except Exception as error:  # noqa: BLE001 - the error is the answer
        return type(error).__name__, str(error)
    return _answer_of(out)


def _answer_of(out):
    if isinstance(out, bool):  # (a comparison in the table: ``x.shape == (2, 3)``)
        return (), "bool", [out]
    if isinstance(out, str):  # (a name: ``grad_fn.name()``)
        return out
    if isinstance(out, list):  # (several tensors: gradients)
        return [_answer_of(o) for o in out]
    return tuple(out.shape), str(out.dtype).split(".")[-1], out.detach().reshape(-1).tolist()


def check_answer(got, expected, expr):
    """``got`` (from :func:`answer`) against a table's ``expected``: an error's type and the start of its message
    (None: the type alone, where the engine's words are its own), or a tensor's shape, dtype and values (to 1e-6,
    NaN equal to NaN); a list of those, or a name."""
    if isinstance(expected, str):
        assert got == expected, (expr, got)
        return
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), (expr, got)
        for g, e in zip(got, expected):
            check_answer(g, e, expr)
        return
    if isinstance(expected[0], str):
        assert got[0] == expected[0], (expr, got)
        assert expected[1] is None or got[1].startswith(expected[1]), (expr, got)
        return
    assert got[:2] == expected[:2], (expr, got)
    kind = complex if any(isinstance(v, complex) for v in (*got[2], *expected[2])) else float
    np.testing.assert_allclose(np.asarray(got[2], dtype=kind), np.asarray(expected[2], dtype=kind), rtol=1e-6,
                               atol=1e-7 if kind is complex else 0, err_msg=expr)


def table_tests(cases, env, torch_words=lambda got: got):
    """The two tests of a table of PyTorch's answers, ``(expression, expected)`` with the names ``env(lib)`` gives:
    the engine's answers against the table, and the table against the torch installed (where there is one;
    ``torch_words`` mends a misprint of torch's own in its message). A test module binds the pair to its names."""
    ids = [case[0] for case in cases]

    @pytest.mark.parametrize(("expr", "expected"), cases, ids=ids)
    def test_the_engine_answers_as_pytorch(expr, expected):
        check_answer(answer(expr, env(engine)), expected, expr)

    @pytest.mark.parametrize(("expr", "expected"), cases, ids=ids)
    def test_the_table_is_pytorchs(expr, expected):
        torch = pytest.importorskip("torch")
        check_answer(torch_words(answer(expr, env(torch))), expected, expr)

    return test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs


def host(t) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, engine.Tensor) else np.asarray(t)


def make_inputs(shapes, seed=0, low=-2.0, high=2.0, positive=False):
    rng = np.random.default_rng(seed)
    arrays = []
    for s in shapes:
        a = rng.uniform(low, high, size=s)
        if positive:
            a = np.abs(a) + 0.5
        arrays.append(a)
    return arrays


def helper_test_op(shapes, ref, fn, torch_fn=None, device="cpu", positive=False, low=-2.0, high=2.0,
                   grad=True, rtol=1e-10, atol=1e-12, grad_atol=1e-6, grad_rtol=1e-5, seed=0):
    """Check ``fn(*engine tensors)`` against ``ref(*numpy float64 arrays)``, gradients against finite
    differences, and (``torch_fn`` or ``fn``) against PyTorch in float64."""
    arrays = make_inputs(shapes, seed, low, high, positive)
    tensors = [engine.tensor(a, dtype=engine.float64, device=device, requires_grad=grad) for a in arrays]
    out = fn(*tensors)
    expected = ref(*arrays)
    np.testing.assert_allclose(host(out), expected, rtol=rtol, atol=atol)
    if not grad:
        return out
    # the engine's gradients of a fixed random projection of the output, vs central differences
    weights = np.random.default_rng(seed + 1).standard_normal(np.shape(expected))
    w = engine.tensor(weights, dtype=engine.float64, device=device)
    (out * w).sum().backward()
    grads = [host(t.grad) for t in tensors]
    numeric = _numeric_grads(ref, arrays, weights)
    for i, (g, n) in enumerate(zip(grads, numeric)):
        np.testing.assert_allclose(g, n, rtol=grad_rtol, atol=grad_atol, err_msg=f"gradient of input {i}")
    if HAVE_TORCH:
        import torch

        tt = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
        tout = (torch_fn or fn)(*tt)
        np.testing.assert_allclose(host(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
        (tout * torch.tensor(weights)).sum().backward()
        for i, (g, t) in enumerate(zip(grads, tt)):
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=f"vs torch, input {i}")
    return out


def _numeric_grads(ref, arrays, weights, eps=1e-6):
    out = []
    for a in arrays:
        g = np.zeros_like(a)
        flat = a.reshape(-1)
        for k in range(flat.size):
            orig = flat[k]
            flat[k] = orig + eps
            plus = np.sum(ref(*arrays) * weights)
            flat[k] = orig - eps
            minus = np.sum(ref(*arrays) * weights)
            flat[k] = orig
            g.reshape(-1)[k] = (plus - minus) / (2 * eps)
        out.append(g)
    return out
