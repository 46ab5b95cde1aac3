"""``torch.distributions.kl``: the Kullback-Leibler divergence between two distributions of one kind."""

from __future__ import annotations

import numpy as np

from ..nn.functional import softplus
from ..tensor import Tensor
from .families import (
    Bernoulli,
    Beta,
    Binomial,
    Categorical,
    Cauchy,
    Distribution,
    Exponential,
    Gamma,
    Geometric,
    Gumbel,
    HalfNormal,
    Independent,
    Laplace,
    LogNormal,
    MultivariateNormal,
    Normal,
    OneHotCategorical,
    Poisson,
    Uniform,
)

__all__ = ["kl_divergence"]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) for two Normals, two Categoricals, two Bernoullis or two Uniforms, as PyTorch computes it."""
    if isinstance(p, Normal) and isinstance(q, Normal):
        var_ratio = (p.scale / q.scale) ** 2
        t1 = ((p.loc - q.loc) / q.scale) ** 2
        return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        t = p.probs * (p.logits - q.logits)
        return t.masked_fill((q.probs == 0).expand_as(t), float("inf")).masked_fill((p.probs == 0).expand_as(t),
                                                                                    0.0).sum(-1)
    if isinstance(p, Bernoulli) and isinstance(q, Bernoulli):
        t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
        t1 = t1.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0.0)
        t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
        t2 = t2.masked_fill(q.probs == 1, float("inf")).masked_fill(p.probs == 1, 0.0)
        return t1 + t2
    if isinstance(p, Uniform) and isinstance(q, Uniform):
        result = ((q.high - q.low) / (p.high - p.low)).log()
        return result.masked_fill((q.low > p.low) | (q.high < p.high), float("inf"))
    kind = type(p) if type(p) is type(q) else None
    if kind is Exponential:
        ratio = q.rate / p.rate
        return ratio - ratio.log() - 1
    if kind is Laplace:  # PyTorch's formula
        scale_ratio = p.scale / q.scale
        loc_abs_diff = (p.loc - q.loc).abs()
        t1 = -scale_ratio.log()
        t2 = loc_abs_diff / q.scale
        t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
        return t1 + t2 + t3 - 1
    if kind is Cauchy:
        return (((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2).log() - (4 * p.scale * q.scale).log())
    if kind is Gumbel:
        ct1 = p.scale / q.scale
        ct2 = q.loc / q.scale
        ct3 = p.loc / q.scale
        t1 = -ct1.log() - ct2 + ct3
        t2 = ct1 * Gumbel._EULER
        t3 = (ct2 + (ct1 + 1).lgamma() - ct3).exp()
        return t1 + t2 + t3 - (1 + Gumbel._EULER)
    if kind is HalfNormal:
        return kl_divergence(Normal(p.scale * 0, p.scale, validate_args=False),
                             Normal(q.scale * 0, q.scale, validate_args=False))
    if kind is LogNormal:
        return kl_divergence(p.base_dist, q.base_dist)
    if kind is Poisson:
        return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)
    if kind is Geometric:
        return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits
    if isinstance(p, Gamma) and type(p) is type(q):  # (Chi2 too)
        t1 = q.concentration * (p.rate / q.rate).log()
        t2 = q.concentration.lgamma() - p.concentration.lgamma()
        t3 = (p.concentration - q.concentration) * p.concentration.digamma()
        t4 = (q.rate - p.rate) * (p.concentration / p.rate)
        return t1 + t2 + t3 + t4
    if kind is Beta:
        sum_p = p.concentration1 + p.concentration0
        sum_q = q.concentration1 + q.concentration0
        t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
        t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
        t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
        t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
        t5 = (sum_q - sum_p) * sum_p.digamma()
        return t1 - t2 + t3 + t4 + t5
    if kind is Binomial:
        if bool((p.total_count < q.total_count).any()):
            raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
        kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
        return kl.masked_fill(p.total_count > q.total_count, float("inf"))
    if kind is OneHotCategorical:
        return kl_divergence(p._categorical, q._categorical)
    if isinstance(p, Independent) and isinstance(q, Independent):
        if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
            raise NotImplementedError("kl_divergence of two Independent with different reinterpreted_batch_ndims")
        return p._summed(kl_divergence(p.base_dist, q.base_dist))
    if isinstance(p, MultivariateNormal) and isinstance(q, MultivariateNormal):
        from .. import linalg

        if p.event_shape != q.event_shape:
            raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                             "computed")
        lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
        n = p.event_shape[0]
        shape = np.broadcast_shapes(tuple(lp.shape[:-2]), tuple(lq.shape[:-2]), tuple(p.batch_shape),
                                    tuple(q.batch_shape))
        lqe = lq.expand(*shape, n, n)
        term = linalg.solve_triangular(lqe, lp.expand(*shape, n, n), upper=False).pow(2).sum((-2, -1))
        diff = linalg.solve_triangular(lqe, (q.loc - p.loc).expand(*shape, n).unsqueeze(-1), upper=False)
        return q._half_log_det() - p._half_log_det() + 0.5 * (term + diff.pow(2).sum((-2, -1)) - n)
    raise NotImplementedError(f"kl_divergence({type(p).__name__}, {type(q).__name__}): PyTorch's, but the engine "
                              "has the divergence of two distributions of one kind only")
