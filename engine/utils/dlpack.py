"""``torch.utils.dlpack``: ``from_dlpack`` and ``to_dlpack``, the DLPack exchange of engine/compat.py (memory
shared with PyTorch, NumPy or CuPy, not copied)."""

from __future__ import annotations

from ..compat import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
