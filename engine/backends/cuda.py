"""``engine.backends.cuda``: ``torch.backends.cuda.matmul.allow_tf32`` and its neighbours, which a script sets
once at its top. The engine's CUDA products are cuBLAS's in its default math mode (CuPy's, and PyTorch's
default): full float32, never TF32 or reduced-precision sums. So these keep what a script sets, with PyTorch's
defaults, and change nothing (a script that turns TF32 on gets exact float32 products: slower on an Ampere or
later GPU than PyTorch's would be, not less exact)."""

from __future__ import annotations

from types import SimpleNamespace

__all__ = ["matmul", "is_built"]

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                         allow_bf16_reduced_precision_reduction=True)


def is_built() -> bool:
    """Whether the engine can use CUDA at all here: CuPy is installed (a GPU may still be missing)."""
    import importlib.util

    return importlib.util.find_spec("cupy") is not None
