"""``engine.utils``: ``engine.utils.data`` (datasets and the DataLoader), ``engine.utils.hooks`` (the handle a
module's hook registration returns), ``engine.utils.checkpoint`` (activation checkpointing) and
``engine.utils.dlpack``, as ``torch.utils``."""

from . import checkpoint, data, dlpack, hooks

__all__ = ["checkpoint", "data", "dlpack", "hooks"]
