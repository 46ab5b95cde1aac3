"""BLAS threads for the engine's own matrix products on the CPU: ``torch.set_num_threads`` and
``torch.get_num_threads``, and a size below which a product runs on one thread.

NumPy's BLAS (OpenBLAS) chooses its threads itself: one thread below a product size of its own, all cores
above. Where that choice is wrong for a machine (a busy or shared one, where a spinning helper thread takes the
core the Python needs), the engine can choose per product, as PyTorch chooses its intra-op parallelism:
``set_parallel_threshold(n)`` runs products of fewer than n multiply-adds on one thread, and
``set_num_threads(k)`` gives the larger ones k threads. Both act on the engine's products only: the BLAS thread
count is set around each product and put back, so what the user's own NumPy does elsewhere in the process does
not change (threadpoolctl, the well-kept library for this, finds the BLAS and sets its threads).

Measured on the 2-core CI-class machine (2026-11-23, ``python -m benchmarks.blas_threads``, written to
benchmarks/results/cpu-threads.txt): below ~8e5 multiply-adds OpenBLAS already runs a product on one thread (two
threads time the same, 0.94-1.04), and from there two threads win for every product of the nets' steps (0.50-0.86
of one thread's time; the tutorial's whole NumPy step 0.64). The crossing is where the library already switches,
so the default leaves the choice to it and costs nothing. ``GRADSCOPE_PARALLEL_THRESHOLD`` sets the threshold at
import, for a machine where it lies elsewhere.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["get_num_threads", "parallel_threshold", "set_num_threads", "set_parallel_threshold"]

active = False  # read on every CPU product: False leaves the choice to the BLAS (the default, no cost)
_threads: int | None = None  # set_num_threads: the engine's products' threads
_threshold = 0  # multiply-adds below which a product runs on one thread (0: the library decides)
_blas = None  # the threadpoolctl controllers of NumPy's BLAS


def _controllers():
    global _blas
    if _blas is None:
        try:
            import threadpoolctl
        except ImportError:  # pragma: no cover - a dependency; said in words if it is missing
            raise RuntimeError("choosing BLAS threads needs threadpoolctl (pip install threadpoolctl)") from None
        _blas = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
    return _blas


def _update() -> None:
    global active, dot
    active = _threads is not None or _threshold > 0
    dot = _dot_threads if active else _product


def set_num_threads(n: int) -> None:
    """The number of threads the engine's CPU matrix products use (PyTorch's torch.set_num_threads), and its long
    compiled passes (GELU, layer norm: engine/_ckernels.c cuts them across this many)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise RuntimeError(f"set_num_threads: the number of threads must be a positive integer, got {n!r}")
    global _threads
    _controllers()
    _threads = int(n)
    _update()
    from . import kernels

    kernels.set_threads(_threads)


def get_num_threads() -> int:
    """The threads the engine's larger CPU products use: set_num_threads's, else the BLAS library's own."""
    if _threads is not None:
        return _threads
    libs = _controllers()
    return max((lib.num_threads for lib in libs), default=os.cpu_count() or 1)


def set_parallel_threshold(multiply_adds: int) -> None:
    """Products of fewer multiply-adds (m * k * n) than this run on one thread; 0 leaves it to the library."""
    if isinstance(multiply_adds, bool) or not isinstance(multiply_adds, (int, np.integer)) or multiply_adds < 0:
        raise ValueError(f"set_parallel_threshold: expected a count of multiply-adds >= 0, got {multiply_adds!r}")
    global _threshold
    if multiply_adds:
        _controllers()
    _threshold = int(multiply_adds)
    _update()


def parallel_threshold() -> int:
    return _threshold


# From this many output elements a 2-D product of a BLAS type runs as np.matmul, below as ndarray.dot. NumPy's dot
# zero-fills its output before the BLAS overwrites it (the product is computed with beta = 0): 12-25 us of the
# tutorial's 1000 x 100 float32 gradient, ~2 ms of a 2000 x 2000 output. matmul skips that pass and costs ~1.5 us
# more per call. On the 2-core machine (2026-11-23, the dot/matmul tables in benchmarks/results/cpu-threads.txt,
# two runs) matmul takes 1.0-1.7x dot's time up to 6400 outputs, 0.85-1.15x (run-to-run noise) from 10000 to
# 65536, and 0.89-0.94x from 100000: the gradients of the tutorial's w1 and of the larger nets.
MATMUL_FROM = 16384
_matmul = np.matmul


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The engine's 2-D CPU product ``a @ b`` (the same BLAS call either way, bit for bit): ndarray.dot for a
    small output, np.matmul for a large one of a BLAS type."""
    if a.shape[0] * b.shape[1] < MATMUL_FROM or a.dtype.char not in "fdFD":
        return a.dot(b)
    return _matmul(a, b)


def _dot_threads(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    size = a.shape[0] * a.shape[-1] * b.shape[-1]
    want = 1 if size < _threshold else _threads
    if want is None:
        return _product(a, b)
    libs = _controllers()
    before = [lib.num_threads for lib in libs]
    if all(n == want for n in before):
        return _product(a, b)
    for lib in libs:
        lib.set_num_threads(want)
    try:
        return _product(a, b)
    finally:  # the user's NumPy elsewhere keeps its own threads
        for lib, n in zip(libs, before):
            lib.set_num_threads(n)


dot = _product  # the engine's 2-D CPU product: _product, or _dot_threads while the engine chooses threads


def _from_environment() -> None:
    text = os.environ.get("GRADSCOPE_PARALLEL_THRESHOLD", "").strip()
    if text:
        try:
            set_parallel_threshold(int(float(text)))
        except (ValueError, RuntimeError):
            pass  # a bad value leaves the library's choice


_from_environment()
