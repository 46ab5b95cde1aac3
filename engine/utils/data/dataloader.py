"""``torch.utils.data.dataloader``: the loader and its collation (``from torch.utils.data.dataloader import
default_collate``)."""

from . import DataLoader, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
