"""``engine.backends.mps``: Apple's Metal GPUs, which the engine does not drive (NumPy on the CPU, CuPy on CUDA):
not available and not built, so a script's ``"mps" if torch.backends.mps.is_available() else "cpu"`` picks the
CPU."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
