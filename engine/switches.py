"""The process-wide switches a script sets once at its top, as PyTorch's: ``torch.set_float32_matmul_precision``
and ``torch.use_deterministic_algorithms``. Each keeps what it is told, with PyTorch's checks and defaults, and
changes nothing in the engine: its float32 products are always full float32 (NumPy's BLAS; cuBLAS in its default
math mode, never TF32), and its CPU ops give the same bits run after run."""

from __future__ import annotations

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled"]

_precision = "highest"
_deterministic = {"mode": False, "warn_only": False}


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's "highest", "high" or "medium" (which would allow TF32 or bfloat16 sums on a GPU); the engine's
    products stay full float32 whichever is set."""
    global _precision
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision}: expected one of highest, high, medium")
    _precision = precision


def get_float32_matmul_precision() -> str:
    return _precision


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Kept, as PyTorch's flag; the engine's CPU ops are deterministic either way (on a GPU the backward of an
    indexing adds with atomics, whose float sums may differ in their last bits from run to run)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    _deterministic.update(mode=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic["warn_only"]
