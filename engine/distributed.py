"""``engine.distributed``: the engine trains in one process on one device, so PyTorch's multi-process training
(``torchrun``, ``init_process_group``) is not here. The names are, so that a script that imports them at its
top (nanoGPT's ``train.py``) runs in one process; calling one that would start or join a group is refused by
name."""

from __future__ import annotations

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size"]


def _refusal(name: str) -> RuntimeError:
    return RuntimeError(f"torch.distributed.{name}: multi-process training is PyTorch's, not the engine's (it trains "
                        "in one process, on one device); run the script without torchrun")


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def init_process_group(*args, **kwargs):
    raise _refusal("init_process_group")


def destroy_process_group(*args, **kwargs):
    raise _refusal("destroy_process_group")


def get_rank(group=None) -> int:
    raise _refusal("get_rank")


def get_world_size(group=None) -> int:
    raise _refusal("get_world_size")
