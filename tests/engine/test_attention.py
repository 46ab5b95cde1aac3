"""``scaled_dot_product_attention`` as PyTorch runs it on the CPU: one ``ScaledDotProductFlashAttentionForCpuBackward0``
where PyTorch's flash kernel applies (4-D inputs, no dropout, one batch size and head size, the same heads or
grouped-query heads, non-empty sequences, a last dimension of stride 1, a 2-D or 4-D mask that needs no gradient),
else ATen's composite node for node (query and key each scaled by sqrt(scale), the mask added in place,
``_safe_softmax``, the product with the values); a query that sees no key gives zeros either way. The expected
graphs were printed by torch 2.13.0 (``Acc``: a leaf's AccumulateGrad; ``None``: an edge to what needs no
gradient). Where torch is installed, values and gradients are held to its in float64 to 1e-12, and second
derivatives to its composite's (its flash node refuses one; the engine's gives it)."""

from __future__ import annotations

import math
from contextlib import nullcontext

import numpy as np
import pytest

import engine
from engine import kernels
from tests.engine.helpers import python_paths, walk

FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"

GRAPHS = [
    ('F.scaled_dot_product_attention(q, k, v, is_causal=True)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(q, k6, v6, is_causal=True)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(q, k6, v6, attn_mask=bool_mask)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(q, k, v, attn_mask=m)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(AddBackward0(Uns'
     'afeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward'
     '0(ExpandBackward0(MulBackward1(TransposeBackward0(Acc)))))),Acc)))),ViewBackward0(ExpandBackward0(Ac'
     'c))))'),
    ('F.scaled_dot_product_attention(q, k, v, attn_mask=mask4)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(q, k, v, attn_mask=mask3)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(AddBackward0(Uns'
     'afeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward'
     '0(ExpandBackward0(MulBackward1(TransposeBackward0(Acc)))))),None)))),ViewBackward0(ExpandBackward0(A'
     'cc))))'),
    ('F.scaled_dot_product_attention(q, k, v, scale=0.3)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(q, q, q)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))',
     'ScaledDotProductFlashAttentionForCpuBackward0(TransposeBackward0(Acc),TransposeBackward0(Acc),Transp'
     'oseBackward0(Acc))'),
    ('F.scaled_dot_product_attention(q, k.detach(), v)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,None,Acc)'),
    ('F.scaled_dot_product_attention(g, k2, v2, enable_gqa=True, is_causal=True)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
    ('F.scaled_dot_product_attention(g, k2, v1, enable_gqa=True)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(UnsafeViewBackwa'
     'rd0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward0(ExpandBackw'
     'ard0(MulBackward1(TransposeBackward0(ViewBackward0(CloneBackward0(ExpandBackward0(UnsqueezeBackward0'
     '(Acc))))))))))))),ViewBackward0(ExpandBackward0(ViewBackward0(CloneBackward0(ExpandBackward0(Unsquee'
     'zeBackward0(Acc))))))))'),
    ('F.scaled_dot_product_attention(q, k, w)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(UnsafeViewBackwa'
     'rd0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward0(ExpandBackw'
     'ard0(MulBackward1(TransposeBackward0(Acc))))))))),ViewBackward0(ExpandBackward0(Acc))))'),
    ('F.scaled_dot_product_attention(q, k[:1], v[:1])',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(UnsafeViewBackwa'
     'rd0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),UnsafeViewBackward0(CloneBackward'
     '0(ExpandBackward0(MulBackward1(TransposeBackward0(SliceBackward0(Acc))))))))))),UnsafeViewBackward0('
     'CloneBackward0(ExpandBackward0(SliceBackward0(Acc))))))'),
    ('F.scaled_dot_product_attention(a, b, c)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(UnsafeViewBackwa'
     'rd0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward0(ExpandBackw'
     'ard0(MulBackward1(TransposeBackward0(Acc))))))))),ViewBackward0(ExpandBackward0(Acc))))'),
    ('F.scaled_dot_product_attention(a, b, c, is_causal=True)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(AddBackward0(Uns'
     'afeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward'
     '0(ExpandBackward0(MulBackward1(TransposeBackward0(Acc)))))),None)))),ViewBackward0(ExpandBackward0(A'
     'cc))))'),
    ('F.scaled_dot_product_attention(a, b, c, scale=-0.7)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(SafeSoftmaxBackward0(UnsafeViewBackwa'
     'rd0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward0(ExpandBackw'
     'ard0(MulBackward1(TransposeBackward0(Acc))))))))),ViewBackward0(ExpandBackward0(Acc))))'),
    ('F.scaled_dot_product_attention(a[0], a[1], a[2], attn_mask=row_off)',
     'MmBackward0(SafeSoftmaxBackward0(AddBackward0(MmBackward0(MulBackward1(SelectBackward0(Acc)),MulBack'
     'ward1(TransposeBackward0(SelectBackward0(Acc)))),None)),SelectBackward0(Acc))'),
    ('F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)',
     'UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward0(SafeSoftmaxBackward0(Uns'
     'afeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))),ReshapeAliasBackward'
     '0(ExpandBackward0(MulBackward1(TransposeBackward0(Acc))))))),None))),ViewBackward0(ExpandBackward0(A'
     'cc))))'),
    ('F.scaled_dot_product_attention(q, k, v, attn_mask=row_off)',
     'ScaledDotProductFlashAttentionForCpuBackward0(Acc,Acc,Acc)'),
]


def names(lib):
    """The tensors the table's expressions name, the same numbers for either library."""
    rng = np.random.default_rng(3)

    def T(*s, g=True):  # noqa: N802 - short for the table
        return lib.tensor(rng.standard_normal(s), requires_grad=g)

    n = dict(F=lib.nn.functional, torch=lib)
    n.update(q=T(2,3,4,5), k=T(2,3,4,5), v=T(2,3,4,5), k6=T(2,3,6,5), v6=T(2,3,6,5), w=T(2,3,4,7),
             bool_mask=lib.tensor(rng.random((4,6)) > 0.4), float_mask=T(4,4,g=False), m=T(4,4),
             mask4=T(2,1,4,1,g=False), mask3=T(3,4,4,g=False), g=T(2,4,4,5), k2=T(2,2,4,5), v2=T(2,2,4,5),
             v1=T(2,1,4,5), a=T(3,4,5), b=T(3,6,5), c=T(3,6,5),
             row_off=lib.tensor([[True, False, True, True], [False] * 4, [True] * 4, [True, True, False, False]]))
    return n


@pytest.mark.parametrize("expression,graph", GRAPHS, ids=[e for e, _ in GRAPHS])
def test_the_graph_is_pytorchs(expression, graph):
    assert walk(eval(expression, names(engine)).grad_fn) == "".join(graph)  # noqa: S307 - the table's own


def _run(lib, expression, second=True):
    n = names(lib)
    out = eval(expression, n)  # noqa: S307 - the table's own expressions
    leaves = [t for t in n.values() if isinstance(t, lib.Tensor) and t.requires_grad]
    weights = lib.tensor(np.random.default_rng(7).standard_normal(tuple(out.shape)))
    grads = lib.autograd.grad(out, leaves, weights, create_graph=second, allow_unused=True)
    used = [g for g in grads if g is not None]
    seconds = [None] * len(leaves)
    if second:
        squares = sum((g * g).sum() for g in used)
        seconds = lib.autograd.grad(squares, leaves, allow_unused=True)

    def host(t):
        return None if t is None else t.detach().numpy()

    return out.detach().numpy(), [host(g) for g in grads], [host(g) for g in seconds]


def _assert_close(mine, theirs, tol=1e-12):
    np.testing.assert_allclose(mine[0], theirs[0], rtol=tol, atol=tol)
    for m, t in zip(mine[1] + mine[2], theirs[1] + theirs[2], strict=True):
        assert (m is None) == (t is None)
        if m is not None:
            np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [e for e, _ in GRAPHS], ids=[e for e, _ in GRAPHS])
def test_values_gradients_and_second_derivatives_are_torchs(expression):
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    first = _run(torch, expression, second=False)
    with sdpa_kernel(SDPBackend.MATH):  # (PyTorch's flash node has no second derivative: its composite's)
        second = _run(torch, expression)
    mine = _run(engine, expression)
    _assert_close((mine[0], mine[1], []), (first[0], first[1], []))
    _assert_close(mine, second)


@pytest.mark.torch
def test_pytorchs_flash_node_refuses_a_second_derivative_and_the_engines_gives_it():
    torch = pytest.importorskip("torch")
    expression = GRAPHS[0][0]
    with pytest.raises(RuntimeError, match="_scaled_dot_product_flash_attention_for_cpu_backward is not implemented"):
        _run(torch, expression)
    q, k, v = _run(engine, expression)[2][:3]  # (the table's q, k and v: the first leaves)
    assert all(g is not None and np.abs(g).sum() > 0 for g in (q, k, v))


# --------------------------------------------------------------------------- by hand, without torch


def _reference(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T scale + mask) v in float64, a row that sees no key giving zeros."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    seen = np.isfinite(s).any(axis=-1, keepdims=True)
    e = np.exp(s - np.where(seen, s.max(axis=-1, keepdims=True), 0))
    p = np.where(seen, e / np.where(seen, e.sum(axis=-1, keepdims=True), 1), 0)
    return p @ v


RNG = np.random.default_rng(2)


@pytest.mark.parametrize("dtype,tol", [(engine.float64, 1e-12), (engine.float32, 2e-6)])
@pytest.mark.parametrize("rows,cols,causal", [(5, 5, True), (3, 7, True), (7, 3, True), (4, 6, False)])
@pytest.mark.parametrize("path", ["compiled", "python"])
def test_the_flash_node_is_the_formula(dtype, tol, rows, cols, causal, path):
    if path == "compiled" and kernels._ck is None:
        pytest.skip("engine/_ckernels.c is not built here")
    q, k, v = (RNG.standard_normal(s) for s in ((2, 3, rows, 4), (2, 3, cols, 4), (2, 3, cols, 4)))
    with python_paths() if path == "python" else nullcontext():
        tq, tk, tv = (engine.tensor(a, dtype=dtype, requires_grad=True) for a in (q, k, v))
        y = engine.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
        assert y.grad_fn.name() == FLASH and y.dtype == dtype
        y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), _reference(q, k, v, causal=causal), rtol=tol, atol=tol)
    # the gradient of the sum with respect to v: each key's total weight, broadcast over the head size
    p_total = _reference(q, k, np.eye(cols)[None, None].repeat(2, 0).repeat(3, 1), causal=causal).sum(axis=-2)
    np.testing.assert_allclose(tv.grad.numpy(), np.repeat(p_total[..., None], 4, -1), rtol=tol * 10, atol=tol * 10)



@pytest.mark.parametrize("path", ["compiled", "python"])
def test_a_query_that_sees_no_key_gives_zeros_and_no_gradient(path):
    if path == "compiled" and kernels._ck is None:
        pytest.skip("engine/_ckernels.c is not built here")
    mask = np.array([[True, False, True], [False, False, False], [True, True, True]])
    q, k, v = (RNG.standard_normal((1, 2, 3, 4)) for _ in range(3))
    for name, take in ((FLASH, lambda a: a), ("UnsafeViewBackward0", lambda a: a[0])):  # (3-D: the composite)
        with python_paths() if path == "python" else nullcontext():
            tq, tk, tv = (engine.tensor(take(a), requires_grad=True) for a in (q, k, v))
            y = engine.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=engine.tensor(mask))
            assert y.grad_fn.name() == name
            y.sum().backward()
        out = y.detach().numpy()
        assert not np.isnan(out).any()
        np.testing.assert_array_equal(out[..., 1, :], 0.0)
        np.testing.assert_array_equal(tq.grad.numpy()[..., 1, :], 0.0)
        np.testing.assert_allclose(out, _reference(tq.detach().numpy(), tk.detach().numpy(), tv.detach().numpy(),
                                                   mask=mask), rtol=1e-5, atol=1e-6)


def test_grouped_query_heads_are_the_keys_heads_repeated():
    q, k, v = RNG.standard_normal((2, 6, 5, 4)), RNG.standard_normal((2, 2, 5, 4)), RNG.standard_normal((2, 2, 5, 4))
    tq, tk, tv = (engine.tensor(a, requires_grad=True) for a in (q, k, v))
    y = engine.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
    assert y.grad_fn.name() == FLASH
    np.testing.assert_allclose(y.detach().numpy(), _reference(q, np.repeat(k, 3, 1), np.repeat(v, 3, 1)),
                               rtol=1e-12, atol=1e-12)
    y.sum().backward()
    rk, rv = (engine.tensor(np.repeat(a, 3, 1), requires_grad=True) for a in (k, v))
    tq2 = engine.tensor(q, requires_grad=True)
    engine.nn.functional.scaled_dot_product_attention(tq2, rk, rv).sum().backward()
    np.testing.assert_allclose(tk.grad.numpy(), rk.grad.numpy().reshape(2, 2, 3, 5, 4).sum(2), rtol=1e-12)
    np.testing.assert_allclose(tv.grad.numpy(), rv.grad.numpy().reshape(2, 2, 3, 5, 4).sum(2), rtol=1e-12)
    np.testing.assert_allclose(tq.grad.numpy(), tq2.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="must divide the number of heads"):
        engine.nn.functional.scaled_dot_product_attention(engine.randn(2, 5, 5, 4), engine.randn(2, 2, 5, 4),
                                                          engine.randn(2, 2, 5, 4), enable_gqa=True)


def test_the_flash_nodes_first_and_second_derivatives_are_finite_differences():
    q, k, v = (engine.tensor(RNG.standard_normal(s), requires_grad=True)
               for s in ((1, 2, 3, 4), (1, 1, 5, 4), (1, 1, 5, 4)))
    mask = engine.tensor(RNG.standard_normal((3, 5)))

    def f(a, b, c):
        return engine.nn.functional.scaled_dot_product_attention(a, b, c, attn_mask=mask, enable_gqa=True, scale=0.6)

    assert f(q, k, v).grad_fn.name() == FLASH
    assert engine.autograd.gradcheck(f, (q, k, v))
    assert engine.autograd.gradgradcheck(f, (q, k, v))


def test_half_precision_is_computed_in_float32_and_rounded_once():
    q, k, v = (RNG.standard_normal((1, 2, 4, 8)) for _ in range(3))
    y = engine.nn.functional.scaled_dot_product_attention(*(engine.tensor(a, dtype=engine.float16) for a in (q, k, v)),
                                                          is_causal=True)
    assert y.dtype == engine.float16
    expected = _reference(*(a.astype(np.float16).astype(np.float32) for a in (q, k, v)), causal=True)
    np.testing.assert_array_equal(y.numpy(), expected.astype(np.float16))


def test_each_device_gives_the_formula_the_cpu_by_the_flash_node_a_gpu_by_the_composite(device):
    q, k, v = (RNG.standard_normal((2, 2, 4, 3)) for _ in range(3))
    mask = RNG.random((4, 4)) > 0.3
    tq, tk, tv = (engine.tensor(a, device=device, requires_grad=True) for a in (q, k, v))
    y = engine.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=engine.tensor(mask, device=device))
    assert y.grad_fn.name() == (FLASH if device == "cpu" else "UnsafeViewBackward0")
    np.testing.assert_allclose(y.detach().cpu().numpy(), _reference(q, k, v, mask=mask), rtol=1e-12, atol=1e-12)
    y.sum().backward()
    cpu = [engine.tensor(a, requires_grad=True) for a in (q, k, v)]
    engine.nn.functional.scaled_dot_product_attention(*cpu, attn_mask=engine.tensor(mask)).sum().backward()
    for mine, ref in zip((tq, tk, tv), cpu):
        np.testing.assert_allclose(mine.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,message", [
    (lambda F, t: F.scaled_dot_product_attention(t(2, 3, 4), t(2, 3, 4).double(), t(2, 3, 4)),
     "Expected query, key, and value to have the same dtype, but got query.dtype: engine.float32 key.dtype: "
     "engine.float64 and value.dtype: engine.float32 instead."),
    (lambda F, t: F.scaled_dot_product_attention(t(4), t(4), t(4)),
     "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1"),
    (lambda F, t: F.scaled_dot_product_attention(t(3, 4), t(3, 4), t(3, 4), attn_mask=engine.ones(3, 3,
                                                                                                 dtype=engine.int64)),
     "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: engine.int64"),
    (lambda F, t: F.scaled_dot_product_attention(t(3, 4), t(3, 4), t(3, 4), attn_mask=engine.ones(3, 3,
                                                                                                 dtype=engine.bool),
                                                 is_causal=True),
     "Explicit attn_mask should not be set when is_causal=True"),
    (lambda F, t: F.scaled_dot_product_attention(t(3, 4), t(3, 4), t(3, 4), dropout_p=1.5),
     "dropout probability has to be between 0 and 1"),
])
def test_bad_arguments_are_refused_in_pytorchs_words(call, message):
    with pytest.raises((RuntimeError, ValueError)) as info:
        call(engine.nn.functional, lambda *s: engine.randn(*s))
    assert message in str(info.value)
