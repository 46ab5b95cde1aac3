"""The chunked path of ``F.linear_cross_entropy`` and its ``nn.LinearCrossEntropyOptions`` (PyTorch 2.13): the
cross entropy of ``input @ linear_weight.T (+ linear_bias)`` batch chunk by chunk, so the ``(N, C)`` logits are
never held whole (a language model's vocabulary head). The forward computes each chunk's loss and, for
``'mean'``/``'sum'``, its gradients too, which backward then scales (a second backward refused unless
``allow_retain_graph``); for ``'none'`` backward recomputes them chunk by chunk. The options' checks and their
"auto" resolution are PyTorch's; ``acc_policy``/``acc_dtype`` are accepted and validated (the engine accumulates
in the input's dtype, float32 for float16). Imports nothing of ``engine.nn`` (nn.functional calls it)."""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import dtypes as _dtypes
from ..autograd import Function, is_grad_enabled
from ..backend import xp_of

__all__ = ["LinearCrossEntropyOptions"]

_AUTO_DEFAULTS = {("cpu", "float16"): ("accurate", "aspect_ratio"), ("cuda", "float16"): ("compact", "aspect_ratio:2")}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How the chunked path runs: ``batch_chunk_size`` rows per chunk, or ``chunking_method`` to pick it
    (``"aspect_ratio[:N]"``: a chunk's logits as large as the input, divided by N; ``"auto"``); ``acc_policy`` and
    ``acc_dtype`` (PyTorch's precision/memory trade-offs for float16 and bfloat16); ``allow_retain_graph`` keeps
    the gradients for a second backward."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                   and not isinstance(self.batch_chunk_size, bool)
                                                   and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32,
                                                                 _dtypes.float64):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None) -> int:
        """``"aspect_ratio[:N]"``: the next power of 2 from ``ceil(num_batches / ceil(num_classes /
        in_features))``, divided by N, at most ``num_batches``."""
        method = str(method if method is not None else self.chunking_method)
        if not method.startswith("aspect_ratio"):
            raise AssertionError(f"unhandled chunking_method: {method!r}")
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        per_input = -(-num_classes // in_features)
        target = -(-num_batches // per_input)
        chunk = 1 << (target - 1).bit_length()
        return min(chunk // factor, num_batches)

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """The options with "auto" resolved for this call (PyTorch's steps): a concrete chunk size, policy and
        accumulation dtype; a ``batch_chunk_size`` that disagrees with ``chunking_method`` refused."""
        policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if policy == "auto" or method == "auto":
            key = (getattr(device, "type", "cpu"), str(dtype).rsplit(".", 1)[-1])
            auto_policy, auto_method = _AUTO_DEFAULTS.get(key, _AUTO_FALLBACK) if device is not None \
                else _AUTO_FALLBACK
            policy = auto_policy if policy == "auto" else policy
            method = auto_method if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                                 f"different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        acc = self.acc_dtype
        if acc is None:
            acc = _dtypes.float32 if (self.acc_policy == "auto" and dtype in (_dtypes.float16, _dtypes.bfloat16)) \
                else dtype
        return dataclasses.replace(self, acc_policy=policy, chunking_method=method, batch_chunk_size=max(1, size),
                                   acc_dtype=acc)


def _chunk_grads(x, w, b, t, class_w, ignore, start, stop, compute, row_scale):
    """One chunk's logits and, when asked, d(loss)/d(logits) scaled per row: (per-row loss, its weight,
    dlogits)."""
    xp = xp_of(x)
    xc, tc = x[start:stop], t[start:stop]
    logits = xc @ w.T.astype(compute, copy=False)
    if b is not None:
        logits = logits + b.astype(compute, copy=False)
    top = logits.max(axis=1, keepdims=True)
    shifted = logits - top
    lse = xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
    kept = tc != ignore
    safe_t = xp.where(kept, tc, 0)
    picked = xp.take_along_axis(shifted, safe_t[:, None], axis=1)[:, 0]
    wt = (class_w[safe_t] if class_w is not None else xp.ones(tc.shape, dtype=compute)) * kept
    loss = (lse[:, 0] - picked) * wt
    if row_scale is None:
        return loss, wt, None
    probs = xp.exp(shifted - lse)
    probs[xp.arange(len(tc)), safe_t] -= 1
    return loss, wt, probs * (wt * row_scale)[:, None]


def _run_chunks(xw, ws, b, target, cw, ignore, chunk, compute, row_scale, grads):
    """Every chunk in turn: the summed loss, and where ``row_scale`` (each row's factor) is given, the gradients
    added into ``grads`` (x's, W's, b's; None for one not wanted)."""
    gx, gw, gb = grads
    total = xp_of(xw).zeros((), dtype=compute)
    n = xw.shape[0]
    for s in range(0, n, chunk):
        e = min(s + chunk, n)
        loss, _, dlogits = _chunk_grads(xw, ws, b, target, cw, ignore, s, e, compute,
                                        None if row_scale is None else row_scale[s:e])
        total = total + loss.sum()
        if dlogits is None:
            continue
        if gx is not None:
            gx[s:e] = dlogits @ ws
        if gw is not None:
            gw += dlogits.T @ xw[s:e]
        if gb is not None:
            gb += dlogits.sum(axis=0)
    return total


class _ChunkedLinearCrossEntropy(Function):
    """The chunked path as one node (raw arrays)."""

    raw = True
    backward_name = "LinearCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, w, b, target, class_w, ignore, reduction, chunk, retain, needs):
        xp = xp_of(x)
        n = x.shape[0]
        compute = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        xw = x.astype(compute, copy=False)
        ws = w.astype(compute, copy=False)
        cw = None if class_w is None else class_w.astype(compute, copy=False)
        classes = w.shape[0]
        bad = (target != ignore) & ((target < 0) | (target >= classes))
        if bool(bad.any()):
            raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")
        ctx.meta = (reduction, chunk, retain, ignore, compute)
        ctx.dtypes = (x.dtype, w.dtype, None if b is None else b.dtype)
        if reduction == "none":
            losses = [_chunk_grads(xw, ws, b, target, cw, ignore, s, min(s + chunk, n), compute, None)[0]
                      for s in range(0, n, chunk)]
            ctx.saved = (x, w, b, target, class_w)
            return xp.concatenate(losses).astype(x.dtype) if losses else xp.zeros(0, dtype=x.dtype)
        # 'mean' / 'sum': the loss and, where asked, the gradients now, chunk by chunk
        total_w = None
        if reduction == "mean":
            kept = target != ignore
            total_w = (cw[xp.where(kept, target, 0)] * kept).sum() if cw is not None else kept.sum().astype(compute)
        gx = xp.zeros(xw.shape, dtype=compute) if needs[0] else None
        gw = xp.zeros(ws.shape, dtype=compute) if needs[1] else None
        gb = xp.zeros(classes, dtype=compute) if (b is not None and needs[2]) else None
        scale = None if not any(needs) else (1 / total_w if reduction == "mean" else 1.0)
        total = _run_chunks(xw, ws, b, target, cw, ignore, chunk, compute,
                            None if scale is None else xp.full(n, scale, dtype=compute), (gx, gw, gb))
        out = total / total_w if reduction == "mean" else total
        ctx.saved = (gx, gw, gb)
        return xp.asarray(out, dtype=x.dtype)

    @staticmethod
    def backward(ctx, gy):
        reduction, chunk, retain, ignore, compute = ctx.meta
        if reduction != "none":
            if ctx.saved is None or ctx.saved == ():
                raise RuntimeError("linear_cross_entropy chunked backward called twice; retain_graph=True / double "
                                   "backward are not supported.")
            gx, gw, gb = ctx.saved
            if not retain:
                ctx.saved = ()
            g = gy.astype(compute, copy=False)
            return tuple(None if a is None else (a * g).astype(dt) for a, dt in
                         zip((gx, gw, gb), ctx.dtypes))
        x, w, b, target, class_w = ctx.saved
        xp = xp_of(x)
        xw, ws = x.astype(compute, copy=False), w.astype(compute, copy=False)
        cw = None if class_w is None else class_w.astype(compute, copy=False)
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        gx = xp.zeros(xw.shape, dtype=compute) if need_x else None
        gw = xp.zeros(ws.shape, dtype=compute) if need_w else None
        gb = xp.zeros(w.shape[0], dtype=compute) if (b is not None and need_b) else None
        _run_chunks(xw, ws, b, target, cw, ignore, chunk, compute, gy.astype(compute, copy=False), (gx, gw, gb))
        return tuple(None if a is None else a.astype(dt) for a, dt in zip((gx, gw, gb), ctx.dtypes))


def chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options):  # noqa: A002
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)  # noqa: A001
    n, d = input.shape
    opts = options._adjust(n, d, linear_weight.shape[0], input.dtype, input.device)
    out = _ChunkedLinearCrossEntropy.apply(
        input, linear_weight, linear_bias, target=target._data, class_w=None if weight is None else weight._data,
        ignore=int(ignore_index), reduction=reduction, chunk=int(opts.batch_chunk_size),
        retain=bool(opts.allow_retain_graph),
        needs=tuple(t is not None and t.requires_grad and is_grad_enabled()
                    for t in (input, linear_weight, linear_bias)))
    return out.squeeze(0) if unbatched and reduction == "none" else out
