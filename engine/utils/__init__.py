"""``engine.utils``: ``engine.utils.data`` (datasets and the DataLoader), as ``torch.utils``."""

from . import data

__all__ = ["data"]
