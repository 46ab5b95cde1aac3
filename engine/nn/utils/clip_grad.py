"""``torch.nn.utils.clip_grad``: where PyTorch defines its clipping functions (a script may import them from
here); the engine's are in :mod:`engine.nn.utils`."""

from . import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]
