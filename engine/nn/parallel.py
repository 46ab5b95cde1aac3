"""``engine.nn.parallel``: the engine trains on one device, so PyTorch's wrappers that spread a model over
several (``DataParallel``, ``DistributedDataParallel``) are named here, for a script that imports them at its
top, and refused by name when made."""

from __future__ import annotations

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel:
    def __init__(self, module=None, *args, **kwargs):
        raise RuntimeError(f"torch.nn.parallel.{type(self).__name__}: training on several devices is PyTorch's, not "
                           "the engine's (it trains on one); use the model itself")


class DistributedDataParallel(DataParallel):
    pass
