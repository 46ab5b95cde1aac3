"""Random numbers: one generator for the CPU (NumPy's PCG64) and CuPy's per-device generators."""

from __future__ import annotations

import os
import threading

import numpy as np

from . import _deferred, backend

_lock = threading.Lock()
# as PyTorch's: a fresh 64-bit seed per process until manual_seed(), and initial_seed() says which
_initial_seed = int.from_bytes(os.urandom(8), "little")
_cpu = np.random.Generator(np.random.PCG64(_initial_seed))


def manual_seed(seed: int):
    """Seed the CPU generator and, when CUDA is in use, every CUDA device's generator."""
    global _cpu, _initial_seed
    seed = int(seed)
    if seed < 0:
        raise RuntimeError(f"manual_seed: the seed must be non-negative, got {seed}")
    with _lock:
        _cpu = np.random.Generator(np.random.PCG64(seed))
        _initial_seed = seed
    if backend._cupy is not None:
        seed_cuda_all(seed)
    return default_generator


class Generator:
    """A random-number generator of its own (NumPy's PCG64), as ``torch.Generator``: ``generator=`` of ``randn``,
    ``rand``, ``randint``, ``randperm``, ``normal``, ``random_split`` and ``DataLoader`` draws from it and leaves the
    global generator (``manual_seed``) alone, so one stream (a dataset's split) does not move another (the
    weights' start). CPU only: a CUDA tensor's draws come from its device's generator (``engine.cuda.manual_seed``)."""

    def __init__(self, device="cpu"):
        dev = device if isinstance(device, backend.device) else backend.device(device)
        if dev.type != "cpu":
            raise RuntimeError("engine.Generator makes CPU generators only; a CUDA device's generator is seeded with "
                               "engine.cuda.manual_seed")
        self.device = dev
        self.manual_seed(int.from_bytes(os.urandom(8), "little"))

    def manual_seed(self, seed) -> Generator:
        seed = int(seed)
        if seed < 0:
            raise RuntimeError(f"manual_seed: the seed must be non-negative, got {seed}")
        self._seed = seed
        self._np = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        """Seeds it from the operating system's randomness; returns the seed."""
        seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def __repr__(self):
        return f"<engine.Generator object at {id(self):#x}>"


class _DefaultGenerator(Generator):
    """``torch.default_generator``: the global CPU generator (``manual_seed``'s, which returns it) as a Generator:
    seeding it, reading its state or passing it as ``generator=`` acts on the draws of ``randn`` and the rest
    without a generator. Seeding it leaves the CUDA devices' generators alone, as PyTorch's does."""

    def __init__(self):
        self.device = backend.device("cpu")

    @property
    def _np(self):
        return _cpu

    @_np.setter
    def _np(self, value):
        global _cpu
        _cpu = value

    @property
    def _seed(self):
        return _initial_seed

    @_seed.setter
    def _seed(self, value):
        global _initial_seed
        _initial_seed = value

    def manual_seed(self, seed) -> Generator:
        with _lock:
            return super().manual_seed(seed)


default_generator = _DefaultGenerator()


def _cpu_source(generator, dev):
    """The NumPy generator to draw from on ``dev``: the given Generator's, the global one, or None (a GPU's)."""
    if generator is None:
        return _cpu if dev.type == "cpu" else None
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an engine.Generator, not {type(generator).__name__}")
    if dev.type != "cpu":
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found 'cpu'")
    return generator._np


def initial_seed() -> int:
    """The seed the CPU generator started from: the last ``manual_seed``, or the process's own random seed."""
    return _initial_seed


def cpu_generator() -> np.random.Generator:
    return _cpu


def seed_cuda(seed: int, index: int | None = None) -> None:
    cupy = backend.get_cupy()
    with cupy.cuda.Device(backend.current_cuda_index() if index is None else index):
        cupy.random.seed(seed)


def seed_cuda_all(seed: int) -> None:
    cupy = backend.get_cupy()
    _, _, count = backend.cuda_status()
    for i in range(count):
        with cupy.cuda.Device(i):
            cupy.random.seed(seed)


def _float_dtype(np_dtype):
    return np_dtype if np_dtype in (np.float32, np.float64) else np.float64


def standard_normal(shape, np_dtype, dev, generator=None):
    source = _cpu_source(generator, dev)
    if source is not None:
        out = source.standard_normal(shape, dtype=_float_dtype(np_dtype))
        return out if out.dtype == np_dtype else out.astype(np_dtype)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        return cupy.random.standard_normal(shape, dtype=_float_dtype(np_dtype)).astype(np_dtype, copy=False)


def uniform(shape, np_dtype, dev, low=0.0, high=1.0, generator=None):
    source = _cpu_source(generator, dev)
    if source is not None:
        out = source.random(shape, dtype=_float_dtype(np_dtype))
        if low != 0.0 or high != 1.0:
            out = out * (high - low) + low
        return out.astype(np_dtype, copy=False)
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        out = cupy.random.random(shape, dtype=_float_dtype(np_dtype))
        if low != 0.0 or high != 1.0:
            out = out * (high - low) + low
        return out.astype(np_dtype, copy=False)


def integers(low, high, shape, np_dtype, dev, generator=None):
    source = _cpu_source(generator, dev)
    if source is not None:
        if np.dtype(np_dtype).kind in "iub":
            return source.integers(low, high, size=shape, dtype=np_dtype)
        return source.integers(low, high, size=shape).astype(np_dtype)  # randint(..., dtype=float32), as PyTorch
    cupy = backend.get_cupy()
    with cupy.cuda.Device(dev.index):
        return cupy.random.randint(low, high, size=shape).astype(np_dtype, copy=False)


def permutation(n: int, generator=None) -> np.ndarray:
    """A random order of ``range(n)`` on the host, from ``generator`` or the global CPU generator."""
    return _cpu_source(generator, backend.CPU).permutation(n)


def normal_like(array, mean, std, generator=None):
    dev = backend.device_of_array(array)
    return standard_normal(array.shape, array.dtype, dev, generator) * std + mean


def uniform_like(array, a, b, generator=None):
    dev = backend.device_of_array(array)
    return uniform(array.shape, array.dtype, dev, a, b, generator)


def multinomial(data, num_samples, replacement, dev, generator=None):
    """Indices drawn from each row of ``data`` (1-D, or 2-D rows of weights), each index with the chance its
    weight's share of the row's sum (the weights need not sum to 1): ``num_samples`` per row, int64, with or
    without replacement, from the engine's generator (``manual_seed``) or ``generator``, as PyTorch's
    ``multinomial``. Without replacement the draw is the exponential race (each category's exponential time
    over its weight; the first ``num_samples`` to finish), which gives sequential sampling's odds; with it, each
    uniform number is placed in the row's cumulative sums."""
    if data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (got num_samples={num_samples!r})")
    k, n = int(num_samples), data.shape[-1]
    if not replacement and k > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    xp = backend.xp_of(data)
    rows = data.reshape(-1, n).astype(np.float64)
    if data.__class__ is np.ndarray:  # checked at once on the CPU; on a GPU at the next host read (_deferred)
        if not np.isfinite(rows).all() or (rows < 0).any():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=1) <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    elif rows.size:
        _deferred.check(~xp.isfinite(rows) | (rows < 0), RuntimeError,
                        "probability tensor contains either `inf`, `nan` or element < 0")
        _deferred.check(rows.sum(axis=1) <= 0, RuntimeError,
                        "invalid multinomial distribution (sum of probabilities <= 0)")
    m = rows.shape[0]
    if replacement:
        cdf = rows.cumsum(axis=1)
        cdf = cdf / cdf[:, -1:]  # the last exactly 1: every u in [0, 1) falls in a category
        u = uniform((m, k), np.float64, dev, generator=generator)
        # the index is how many cumulative sums are <= u: a category of weight 0 adds a sum equal to the one
        # before it, so u never lands in it
        out = (cdf[:, None, :] <= u[:, :, None]).sum(axis=2).astype(np.int64)
    else:
        u = uniform((m, n), np.float64, dev, generator=generator)
        with np.errstate(divide="ignore"):  # a weight of 0 never finishes: its time is infinite
            times = -xp.log(1.0 - u) / rows
        picks = []
        taken = xp.arange(m)
        for _ in range(k):
            first = times.argmin(axis=1)
            picks.append(first)
            times[taken, first] = np.inf
        out = xp.stack(picks, axis=1).astype(np.int64)
    return out.reshape(k) if data.ndim == 1 else out


_STATE_BYTES = 45  # PCG64's 128-bit state and increment, its buffered 32 bits and flag, and the initial seed


def _state_of(gen: np.random.Generator, seed: int) -> bytes:
    st = gen.bit_generator.state
    return (int(st["state"]["state"]).to_bytes(16, "little") + int(st["state"]["inc"]).to_bytes(16, "little")
            + int(st["uinteger"]).to_bytes(4, "little") + bytes([int(st["has_uint32"])])
            + int(seed).to_bytes(8, "little"))


def _generator_from(data: bytes) -> tuple:
    if len(data) != _STATE_BYTES:
        raise RuntimeError(f"RNG state is wrong size: the engine's is {_STATE_BYTES} bytes (PCG64), got {len(data)} "
                           "(a state of PyTorch's Mersenne twister cannot be loaded)")
    bits = np.random.PCG64()
    bits.state = {"bit_generator": "PCG64",
                  "state": {"state": int.from_bytes(data[:16], "little"), "inc": int.from_bytes(data[16:32], "little")},
                  "has_uint32": data[36], "uinteger": int.from_bytes(data[32:36], "little")}
    return np.random.Generator(bits), int.from_bytes(data[37:45], "little")


def get_state_bytes(generator=None) -> bytes:
    """The CPU generator's state (or ``generator``'s), to put back with :func:`set_state_bytes`."""
    if generator is not None:
        return _state_of(generator._np, generator._seed)
    with _lock:
        return _state_of(_cpu, _initial_seed)


def set_state_bytes(data: bytes, generator=None) -> None:
    global _cpu, _initial_seed
    gen, seed = _generator_from(bytes(data))
    if generator is not None:
        generator._np, generator._seed = gen, seed
        return
    with _lock:
        _cpu, _initial_seed = gen, seed


def reseed() -> int:
    """``torch.seed()``: the CPU generator seeded from the operating system's randomness; that seed returned."""
    seed = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(seed)
    return seed
