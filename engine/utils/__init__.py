"""``engine.utils``: ``engine.utils.data`` (datasets and the DataLoader) and ``engine.utils.hooks`` (the handle a
module's hook registration returns), as ``torch.utils``."""

from . import data, hooks

__all__ = ["data", "hooks"]
