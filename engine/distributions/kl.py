"""``torch.distributions.kl``: the Kullback-Leibler divergence between two distributions of one kind."""

from __future__ import annotations

from ..nn.functional import softplus
from ..tensor import Tensor
from .families import Bernoulli, Categorical, Distribution, Normal, Uniform

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
    raise NotImplementedError(f"kl_divergence({type(p).__name__}, {type(q).__name__}): PyTorch's, but the engine "
                              "has the divergence of two distributions of one kind (Normal, Categorical, Bernoulli, "
                              "Uniform) only")
