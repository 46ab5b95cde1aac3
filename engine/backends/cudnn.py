"""``engine.backends.cudnn``: the engine's CUDA work is CuPy's elementwise kernels and cuBLAS products, with no
cuDNN call (PyTorch uses cuDNN for convolutions and recurrent layers, which the engine has not). So cuDNN is not
available here, and ``benchmark``, ``deterministic`` and ``enabled`` keep what a script sets with PyTorch's
defaults and, as in PyTorch for a model without those layers, change nothing."""

from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None
