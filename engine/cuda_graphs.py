"""CUDA graphs: capture a fixed-shape piece of GPU work once, replay it with one launch (``torch.cuda.CUDAGraph``).

::

    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):        # the Python runs once, here; the GPU records instead of running
        loss = step()
    for _ in range(n):
        g.replay()                    # the recorded kernels run again, on the same buffers
        ...                           # loss now holds this replay's value

As in PyTorch:

* Capture records, it does not run: after the ``with`` block nothing has been computed; the first
  ``replay()`` does the work. Arrays made during the capture are the graph's: every replay writes into the
  same memory, so read (or copy) outputs after each replay.
* What was captured is fixed: shapes, Python scalars (a learning rate), and every decision the Python made.
  A host read inside the block (``.item()``, ``float(t)``, printing a tensor, a boolean-mask index in CuPy)
  cannot be captured, and the block raises :class:`GraphCaptureError` naming it.
* Warm up first (a few uncaptured runs of the same code), so that kernels are compiled and lazily created
  buffers (``.grad``) exist before capture.
* Memory made during capture comes from a pool of the graph's own, so nothing outside the graph can be handed
  a block that a replay writes to. :meth:`CUDAGraph.reset` (or dropping the graph and its outputs) gives it back.

2-D matrix products inside the block go through :mod:`engine._cublas` (CuPy refuses cuBLAS during capture).
"""

from __future__ import annotations

from . import _capture, _cublas, _memory, backend
from ._capture import GraphCaptureError

__all__ = ["CUDAGraph", "graph", "GraphCaptureError", "is_current_stream_capturing"]


def is_current_stream_capturing() -> bool:
    """True while this thread captures (``torch.cuda.is_current_stream_capturing``)."""
    return _capture.here()


class CUDAGraph:
    """A captured graph of GPU work. Capture with :class:`graph`; run with :meth:`replay`."""

    def __init__(self):
        self._graph = None
        self._pool = None
        self._stream = None
        self._contexts = []
        self._capturing = False
        self._device = None
        self.replays = 0

    # ------------------------------------------------------------------ capture
    def capture_begin(self, stream=None) -> None:
        if self._capturing:
            raise GraphCaptureError("this CUDAGraph is capturing already")
        if self._graph is not None:
            raise GraphCaptureError("this CUDAGraph holds a capture already; call reset() before capturing again")
        cupy = backend.get_cupy()
        _capture.wait_until_idle("capture_begin")
        try:
            _cublas.prepare()  # library, handle and a checked product, before anything is captured
        except Exception as exc:
            raise GraphCaptureError(f"matrix products cannot be captured here: {exc}") from exc
        _capture.claim()  # one capture at a time: each one's synchronisation below would break another's capture
        self._capturing = True
        try:
            cupy.cuda.runtime.deviceSynchronize()  # work queued before the capture is done before it
        except Exception:
            self._leave()
            raise
        self._pool = cupy.cuda.MemoryPool()
        self._device = backend.current_cuda_index()
        _memory.register_pool(self._device, self._pool)
        self._stream = stream if stream is not None else cupy.cuda.Stream(non_blocking=True)
        contexts = [self._stream, cupy.cuda.using_allocator(_memory.allocator_of(self._pool))]
        for ctx in contexts:
            ctx.__enter__()
            self._contexts.append(ctx)
        _capture.activate()
        try:
            self._stream.begin_capture()
        except Exception as exc:
            self._leave()
            raise GraphCaptureError(f"the stream could not begin capturing: {exc}") from exc

    def capture_end(self) -> None:
        if not self._capturing:
            raise GraphCaptureError("this CUDAGraph is not capturing")
        try:
            self._graph = self._stream.end_capture()
        except Exception as exc:
            self._graph = None
            raise GraphCaptureError(f"the capture failed: {exc}") from exc
        finally:
            self._leave()

    def _abandon(self) -> None:
        """End a capture whose block raised: leave capture mode, keep nothing."""
        try:
            self._stream.end_capture()
        except Exception:
            pass  # an invalidated capture says so as it ends; the block's own error is the one to report
        finally:
            self._leave()
            self._graph = None

    def _leave(self) -> None:
        if self._capturing:
            _capture.release()
            self._capturing = False
        while self._contexts:
            self._contexts.pop().__exit__(None, None, None)
        _cublas.release_pending()  # handles of ended threads, held back while this capture went on

    # ------------------------------------------------------------------ use
    def replay(self) -> None:
        """Run the captured work again on the current stream (asynchronously, like any kernel launch)."""
        if self._graph is None:
            raise RuntimeError("this CUDAGraph has nothing to replay: capture it first (with engine.cuda.graph(g))")
        self._graph.launch()
        self.replays += 1

    def reset(self) -> None:
        """Drop the graph and give back its pool's unused memory. Arrays made during the capture that are still
        referenced (a ``.grad`` made there, an output) keep theirs: the pool stays until the last of them goes
        (a CuPy pool that dies frees the blocks of the arrays it lent), and ``_memory.sweep`` then lets it go."""
        # while some thread captures, a synchronisation or a cudaFree would break that capture: then the pool
        # only moves to the retired list, and a later sweep frees it
        quiet = _capture.count > 0
        if self._pool is not None and not quiet:
            try:
                backend.get_cupy().cuda.runtime.deviceSynchronize()  # no replay still running on that memory
            except Exception:
                pass
        self._graph = None
        if self._pool is not None:
            if not quiet:
                self._pool.free_all_blocks()
            _memory.retire_pool(self._device, self._pool)
            self._pool = None
        _memory.sweep()

    def pool_bytes(self) -> int:
        """Bytes of this graph's pool in use by arrays (its outputs and the memory its replays write to)."""
        return int(self._pool.used_bytes()) if self._pool is not None else 0

    @property
    def captured(self) -> bool:
        return self._graph is not None

    def __del__(self):
        try:
            self.reset()
        except Exception:
            pass


class graph:  # noqa: N801 - torch.cuda.graph's name
    """``with engine.cuda.graph(g):`` captures the block into ``g`` (a :class:`CUDAGraph`)."""

    def __init__(self, cuda_graph: CUDAGraph, stream=None):
        if not isinstance(cuda_graph, CUDAGraph):
            raise TypeError(f"graph() needs an engine.cuda.CUDAGraph, got {type(cuda_graph).__name__}")
        self.cuda_graph = cuda_graph
        self.stream = stream

    def __enter__(self):
        self.cuda_graph.capture_begin(self.stream)
        return self.cuda_graph

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.cuda_graph.capture_end()
            return False
        self.cuda_graph._abandon()
        if isinstance(exc, GraphCaptureError) or not isinstance(exc, Exception):
            return False  # KeyboardInterrupt and the like go on as they are
        raise GraphCaptureError(f"this step cannot be captured as a CUDA graph: {_describe(exc)}") from exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, backend.CaptureTransferError):
        return text
    if "cuRAND" in text:
        return "it draws random numbers on the GPU (draw them before the capture)"
    if "StreamCapture" in text or "capturing" in text:
        return f"it waits for the GPU or copies between host and device ({type(exc).__name__}: {text})"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
