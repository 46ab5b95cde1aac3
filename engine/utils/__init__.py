"""``engine.utils``: ``engine.utils.data`` (datasets and the DataLoader), ``engine.utils.hooks`` (the handle a
module's hook registration returns) and ``engine.utils.checkpoint`` (activation checkpointing), as
``torch.utils``."""

from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
