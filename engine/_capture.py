"""Whether a CUDA graph is being captured: by some thread (``count``) and by this one (:func:`here`).

A leaf that imports nothing of the engine, so the modules that must behave differently during a capture (the
products, the cuBLAS handles, memory, host copies) can ask without importing :mod:`engine.cuda_graphs`.
Captures are made one at a time: the synchronisation before each would break another's capture.
"""

from __future__ import annotations

import threading

count = 0  # > 0 while some thread captures
_local = threading.local()
_idle = threading.Condition()  # notified when a capture ends


class GraphCaptureError(RuntimeError):
    """The block could not be captured as a CUDA graph; the message names the operation that stopped it."""


def here() -> bool:
    """True while this thread captures."""
    return count > 0 and getattr(_local, "active", False)


def claim() -> None:
    """Wait until no other capture goes on, then count this thread's (it is not active until :func:`activate`)."""
    global count
    with _idle:
        while count:
            _idle.wait(0.5)
        count += 1


def activate() -> None:
    _local.active = True


def release() -> None:
    """This thread's capture has ended (or never began): let waiting threads go on."""
    global count
    with _idle:
        count -= 1
        _idle.notify_all()
    _local.active = False


def wait_until_idle(what: str) -> None:
    """Block while another thread captures a graph: a device synchronisation (or freeing device memory) then
    would break that capture. In the capturing thread itself it cannot wait: :class:`GraphCaptureError`."""
    if not count:
        return
    if getattr(_local, "active", False):
        raise GraphCaptureError(f"{what} inside a CUDA-graph capture: it waits for the GPU, which a capture cannot "
                                "hold")
    with _idle:
        while count:
            _idle.wait(0.5)
