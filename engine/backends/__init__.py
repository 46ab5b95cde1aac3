"""``engine.backends``: the switches a script reads while choosing its device (``torch.backends.mps.is_available()``)
or sets once at its top (``torch.backends.cudnn.benchmark = True``), as PyTorch's modules of those names."""

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
