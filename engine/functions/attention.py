"""Scaled dot-product attention as one node, as PyTorch runs it on the CPU where its flash kernel applies
(``ScaledDotProductFlashAttentionForCpuBackward0``): engine/nn/functional.py's ``scaled_dot_product_attention``
chooses it by PyTorch's rules and runs ATen's composite (the math backend) elsewhere."""

from __future__ import annotations

import math

import numpy as np

from .. import kernels
from ..autograd.function import Function
from ..backend import xp_of

_causal_masks: dict = {}  # (L, S) -> the bool mask of the positions a causal query may not see (above the diagonal)


def causal_hidden(rows: int, cols: int) -> np.ndarray:
    key = (rows, cols)
    hidden = _causal_masks.get(key)
    if hidden is None:
        hidden = np.triu(np.ones((rows, cols), dtype=bool), 1)
        hidden.flags.writeable = False
        if len(_causal_masks) < 64:
            _causal_masks[key] = hidden
    return hidden


def _repeat_heads(a, groups: int):
    """Grouped-query attention's keys or values, each head repeated for its ``groups`` query heads."""
    return a if groups == 1 else xp_of(a).repeat(a, groups, axis=1)


def sum_heads(g, groups: int):
    """The gradient of :func:`_repeat_heads`: each head's copies summed (an array, or a Tensor in the recorded
    backward)."""
    if groups == 1:
        return g
    b, h, s, e = g.shape
    return g.reshape(b, h // groups, groups, s, e).sum(axis=2)


def attention_weights(q, k, mask, causal: bool, scale: float):
    """``softmax(q k^T scale + mask)`` over the keys, as an array of (B, H, L, S): causal hides the keys after each
    query's position (top left aligned, as PyTorch's), ``mask`` (an additive float array, or None) is added, and a
    row that sees no key (all -inf) gives zeros, as PyTorch's kernel writes it."""
    xp = xp_of(q)
    s = xp.matmul(q, k.swapaxes(-1, -2))
    if mask is None and kernels.attention_softmax(s, scale, s.shape[-2] if causal else 0):
        return s  # (C, where built: one pass per row)
    s *= s.dtype.type(scale)
    if mask is not None:
        s += mask
    if causal:
        hidden = causal_hidden(s.shape[-2], s.shape[-1])
        xp.copyto(s, s.dtype.type(-np.inf), where=hidden if xp is np else xp.asarray(hidden))
    top = s.max(axis=-1, keepdims=True)
    top[top == -np.inf] = 0  # (a row of -inf: exp gives zeros, not NaN)
    s -= top
    xp.exp(s, out=s)
    total = s.sum(axis=-1, keepdims=True)
    total[total == 0] = 1
    s /= total
    return s


class FlashAttentionCpu(Function):
    """``softmax(q k^T * scale + mask) v`` for 4-D (batch, heads, sequence, head size) query, key and value, one
    node as PyTorch's CPU flash attention records it, with its three edges (the mask is a constant: PyTorch takes
    this route only when the mask needs no gradient). Keys and values of fewer heads (grouped-query attention) serve
    ``heads / their heads`` query heads each. Keeps the attention weights for the backward, which is PyTorch's:
    ``dV = P^T dO``, ``dS = P (dO V^T - rowsum(dO V^T P))``, ``dQ = dS K scale``, ``dK = dS^T Q scale``. Half
    precision is computed in float32 and rounded once, as PyTorch's accumulates."""

    raw = True
    backward_name = "ScaledDotProductFlashAttentionForCpuBackward0"

    @staticmethod
    def forward(ctx, q, k, v, mask=None, causal=False, scale=None):
        ctx.op_label = "ScaledDotProductAttention"
        dtype = q.dtype
        if dtype.itemsize < 4:
            q, k, v = (a.astype(np.float32) for a in (q, k, v))
            mask = None if mask is None else mask.astype(np.float32)
        groups = q.shape[1] // k.shape[1]
        scale = 1 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
        keys, values = _repeat_heads(k, groups), _repeat_heads(v, groups)
        p = attention_weights(q, keys, mask, causal, scale)
        out = xp_of(q).matmul(p, values)
        ctx.saved = (q, k, v, p)
        ctx.meta = (groups, scale, dtype, mask, causal)
        return out.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, gy):
        q, k, v, p = ctx.saved
        groups, scale, dtype, _, _ = ctx.meta
        keys, values = _repeat_heads(k, groups), _repeat_heads(v, groups)
        need_q, need_k, need_v = ctx.needs_input_grad
        xp = xp_of(gy)
        gy = gy.astype(p.dtype, copy=False)
        gq = gk = gv = None
        if need_v:
            gv = sum_heads(xp.matmul(p.swapaxes(-1, -2), gy), groups).astype(dtype, copy=False)
        if need_q or need_k:
            ds = xp.matmul(gy, values.swapaxes(-1, -2))
            if not kernels.attention_softmax_backward(ds, p, scale):
                ds -= (ds * p).sum(axis=-1, keepdims=True)
                ds *= p
                ds *= ds.dtype.type(scale)
            if need_q:
                gq = xp.matmul(ds, keys).astype(dtype, copy=False)
            if need_k:
                gk = sum_heads(xp.matmul(ds.swapaxes(-1, -2), q), groups).astype(dtype, copy=False)
        return gq, gk, gv
