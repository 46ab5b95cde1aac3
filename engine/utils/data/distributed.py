"""``torch.utils.data.distributed``: ``DistributedSampler``."""

from . import DistributedSampler

__all__ = ["DistributedSampler"]
