"""``torch.accelerator`` as PyTorch 2.6+ has it: the one accelerator this engine knows is CUDA.

The tutorial of today picks its device with
``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``.
"""

from __future__ import annotations

from . import cuda
from .backend import cuda_device, device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]


def is_available() -> bool:
    """True when a CUDA device is usable."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """``device('cuda')`` when a CUDA device is usable, else None. (PyTorch answers for what its build supports
    even when no device is there; a CuPy import here says little, since the CPU set-up installs CuPy too, so
    the engine answers for what it can use, with or without ``check_available``.)"""
    return device("cuda") if cuda.is_available() else None


def device_count() -> int:
    return cuda.device_count() if cuda.is_available() else 0


def current_device_index() -> int:
    return cuda.current_device() if cuda.is_available() else -1


def set_device_index(index) -> None:
    cuda.set_device(index)


def synchronize(index=None) -> None:
    if cuda.is_available():
        cuda.synchronize(None if index is None else cuda_device(int(index)))
