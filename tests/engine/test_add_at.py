"""``out[where] += values`` with repeated places summed (``engine.backend.add_at``), on either device.

CuPy 14.2's ``add.at`` with an integer-array index adds by atomicAdd, which it has for int32, int64, float16,
float32, float64, uint32 and uint64 only (the stand-in refuses the rest as CuPy does: test_fake_cupy_contract.py).
The engine's gradients of indexing, gathering and embedding, and its index_add, scatter_add, index_put and put
with accumulate, go through add_at, which adds a complex array as its parts and a bool or small integer array
through an int64 copy: on a GPU they give the CPU's values (they raised TypeError for complex tensors)."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import backend

pytestmark = pytest.mark.usefixtures("graph_core")

_WHERE = [
    np.array([0, 0, 2, 0]),  # repeats on the first dimension
    (np.array([0, 1, 1]), np.array([2, 2, 2])),  # one element, three times
    (Ellipsis, np.array([1, 1])),  # the last dimension, after an Ellipsis
    (slice(None), np.array([0, 0])),
    np.array([[True, False, True], [False, False, True], [True, True, True]]),  # a mask: no repeats
]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.int8, np.int16, np.uint8, np.bool_, np.float32,
                                   np.int64])
@pytest.mark.parametrize("where", range(len(_WHERE)))
def test_add_at_sums_repeated_places_as_numpy_on_every_device(device, dtype, where):
    rng = np.random.default_rng(where)
    base = rng.integers(0, 5, size=(3, 3)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        base = base + 1j * rng.integers(-3, 3, size=(3, 3)).astype(dtype)
    index = _WHERE[where]
    shape = base[index].shape
    values = rng.integers(1, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        values = values * (1 - 2j)
    expected = base.copy()
    np.add.at(expected, index, values)

    xp = backend.array_module(engine.device(device))
    out = xp.asarray(base.copy())
    on_device = tuple(xp.asarray(i) if isinstance(i, np.ndarray) else i for i in index) \
        if isinstance(index, tuple) else xp.asarray(index)
    backend.add_at(out, on_device, xp.asarray(values))
    got = backend.to_host(out)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, expected)


def test_add_at_of_a_complex_scalar_and_of_a_strided_complex_array(device):
    xp = backend.array_module(engine.device(device))
    out = xp.zeros((4, 3), dtype=np.complex128)
    backend.add_at(out, xp.asarray([1, 1, 3]), 2 - 1j)  # (a number, broadcast to the rows it names)
    assert backend.to_host(out).tolist()[1] == [4 - 2j] * 3 and backend.to_host(out)[3, 0] == 2 - 1j
    columns = out.T  # (strided along its last dimension: the parts are a strided view too)
    backend.add_at(columns, xp.asarray([0, 0]), xp.asarray([[1j, 1j, 1j, 1j], [1, 1, 1, 1]]))
    assert backend.to_host(out)[:, 0].tolist() == [1 + 1j, 5 - 1j, 1 + 1j, 3]


_COMPLEX_INDEXING = [
    "z[L.tensor([0, 2, 0], device=d)]", "z[L.tensor([0, 2, 0], device=d), 1]",
    "z.index_select(0, L.tensor([1, 1], device=d))", "z.gather(1, L.tensor([[0, 0], [1, 2], [2, 2]], device=d))",
    "z.take(L.tensor([0, 4, 4], device=d))", "z.index_add(0, L.tensor([0, 0], device=d), w[:2])",
    "z.scatter_add(0, L.tensor([[0, 1, 0]], device=d), w[:1])",
    "z.index_put((L.tensor([0, 0], device=d),), w[:2], accumulate=True)",
    "z.put(L.tensor([0, 0], device=d), w[0, :2], accumulate=True)", "z.unfold(0, 2, 1)",
    "z.as_strided((2, 2), (1, 1))", "L.nn.functional.embedding(L.tensor([0, 2, 0], device=d), z)",
]


@pytest.mark.parametrize("expr", _COMPLEX_INDEXING)
def test_complex_indexing_and_its_gradients_on_a_gpu_are_the_cpus(expr, device):
    rng = np.random.default_rng(5)
    arrays = {k: rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)) for k in "zw"}

    def run(d):
        leaves = {k: engine.tensor(a, device=d, requires_grad=True) for k, a in arrays.items()}
        out = eval(expr, {"L": engine, "d": d, **leaves})  # noqa: S307 - the test's own expressions
        weights = engine.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)) * (1 + 0.5j), device=d)
        (out * weights).real.sum().backward()
        return [out.detach().cpu().numpy()] + [None if t.grad is None else t.grad.cpu().numpy()
                                               for t in leaves.values()]

    for got, expected in zip(run(device), run("cpu"), strict=True):
        assert (got is None) == (expected is None)
        if got is not None:
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "bool"])
def test_small_integer_and_bool_accumulation_on_a_gpu_is_the_cpus(dtype, device):
    def run(d):
        kind = getattr(engine, dtype)
        base = engine.tensor([1, 0, 3, 1], dtype=kind, device=d)
        index = engine.tensor([0, 0, 2], device=d)
        values = engine.tensor([1, 1, 1], dtype=kind, device=d)
        return [base.index_add(0, index, values).cpu().tolist(),
                base.scatter_add(0, index, values).cpu().tolist(),
                base.index_put((index,), values, accumulate=True).cpu().tolist(),
                base.put(index, values, accumulate=True).cpu().tolist()]

    assert run(device) == run("cpu")


def test_add_at_of_a_complex_array_at_a_0d_index_on_every_device(device):
    """The gradient of ``take`` of a 0-dimensional complex tensor: its values went through CuPy's ascontiguousarray,
    which (as NumPy's) gives a 0-dimensional array one dimension, and CuPy's add.at refused the shapes."""
    x = engine.tensor(2.0 - 1.0j, device=device, requires_grad=True)
    y = engine.take(x, engine.tensor(0, device=device))
    (y * (3.0 + 4.0j)).real.backward()
    assert x.grad.cpu().item() == 3.0 - 4.0j


# ------------------------------------------------------------------ running extremes (cummax, cummin)

_RUNS = [
    np.array([[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], [2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0]]),
    np.array([[1.0, np.nan, 3.0, 0.0, np.nan, 7.0], [-np.inf, -1.0, np.inf, 2.0, 2.0, np.nan]]),
    np.array([[5, 5, 2, 7, 7, 1, 9]], dtype=np.int64),
    np.array([[False, True, False, True, True]]),
]


@pytest.mark.parametrize("case", range(len(_RUNS)))
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_running_extremes_are_numpys_accumulate_on_every_device(device, case, axis, op):
    """engine.backend.running: NumPy's maximum.accumulate on the CPU; on a GPU, where CuPy 14.2 has no
    maximum.accumulate (the stand-in refuses it as CuPy does), a doubling scan with the same numbers, NaN carried."""
    data = _RUNS[case]
    expected = getattr(np, op).accumulate(data, axis=axis)
    got = backend.to_host(backend.running(op, engine.tensor(data, device=device)._data, axis))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", ["cummax", "cummin"])
def test_cummax_and_cummin_on_every_device_match_pytorch(device, mode):
    torch = pytest.importorskip("torch")
    data = np.array([[1.0, 3.0, 3.0, np.nan, 2.0, 5.0, 5.0], [4.0, 2.0, 2.0, 6.0, 1.0, 6.0, 0.5]])
    x = engine.tensor(data, device=device, requires_grad=True)
    values, indices = getattr(x, mode)(1)
    (values * engine.arange(7.0, device=device)).sum().backward()
    t = torch.tensor(data, requires_grad=True)
    tv, ti = getattr(t, mode)(1)
    (tv * torch.arange(7.0)).sum().backward()
    np.testing.assert_array_equal(values.detach().cpu().numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(indices.cpu().numpy(), ti.numpy())
    np.testing.assert_array_equal(x.grad.cpu().numpy(), t.grad.numpy())


def test_writing_through_an_integer_index_first_reads_nothing_back_on_a_gpu(simulated_gpu):
    """``x[idx, 1:] = v`` lays out its places with unravel_index, which in CuPy checks them on the host (two reads
    back); the engine works the coordinates out on the device instead (engine.backend.unravel)."""
    x = engine.zeros(4, 3, device="cuda")
    idx = engine.tensor([2, 0], device="cuda")
    with simulated_gpu.count_syncs() as seen:
        x[idx, 1:] = engine.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    assert "cupy.unravel_index" not in seen
    assert x.cpu().tolist() == [[0, 3, 4], [0, 0, 0], [0, 1, 2], [0, 0, 0]]
    places = simulated_gpu.ndarray(np.array([[0, 5], [11, 7]]))
    rows, cols = backend.unravel(places, (4, 3))
    assert rows.get().tolist() == [[0, 1], [3, 2]] and cols.get().tolist() == [[0, 2], [2, 1]]
