"""The CuPy stand-in (tests/fake_cupy.py) held to the real CuPy's API.

The real CuPy wheel imports on a machine without a GPU, so its API can be read here: every name the stand-in
serves must exist in it (with the same parameters where both can be introspected), and what NumPy has and CuPy
has not must be missing from the stand-in too. Then the stand-in's model of what CuPy does differently from
NumPy: host synchronisations counted, the device per thread, pools per device, ElementwiseKernel.
"""

from __future__ import annotations

import inspect
import threading
import warnings

import numpy as np
import pytest

from tests import fake_cupy

pytestmark = pytest.mark.sim


def _real_cupy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CuPy warns at import on some machines (no CUDA path); not ours
        try:
            import cupy
            import cupyx
        except ImportError as exc:
            pytest.fail(f"the real CuPy must be installed in the test environment (make setup does it): {exc}")
    return cupy, cupyx


REAL, REALX = _real_cupy()
FAKE, FAKEX = fake_cupy._make_module()


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def _params(fn):
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None  # a Cython function without a signature


def test_the_real_cupy_is_the_version_the_stand_in_models():
    assert REAL.__version__.startswith("14."), REAL.__version__
    assert fake_cupy.VERSION.startswith("14.")


@pytest.mark.parametrize("path", ["", "cuda", "cuda.runtime", "random", "cuda.graph", "linalg", "lib",
                                  "lib.stride_tricks", "fft"])
def test_every_module_name_the_stand_in_serves_is_in_cupy(path):
    fake, real = FAKE, REAL
    for part in filter(None, path.split(".")):
        fake, real = getattr(fake, part), getattr(real, part)
    missing = sorted(_public(fake) - _public(real))
    assert not missing, f"cupy.{path}: the stand-in serves names CuPy has not: {missing}"


def test_every_cupyx_name_is_in_cupyx():
    assert not sorted(_public(FAKEX) - _public(REALX))


@pytest.mark.parametrize("name", ["MemoryPool", "Stream", "Device", "Event"])
def test_every_method_of_the_cuda_classes_is_in_cupy(name):
    fake, real = getattr(FAKE.cuda, name), getattr(REAL.cuda, name)
    assert not sorted(_public(fake) - _public(real))


def test_every_ndarray_attribute_the_stand_in_serves_is_in_cupy():
    served = (_public(fake_cupy.ndarray) | set(fake_cupy._METHODS) | set(fake_cupy._PROPERTIES))
    assert not sorted(served - _public(REAL.ndarray))


def test_numpy_attributes_that_cupy_lacks_are_missing_from_the_stand_in_too():
    x = FAKE.ones((2, 3))
    numpy_only = sorted(_public(np.ndarray) - _public(REAL.ndarray))
    assert "tofile" not in numpy_only and "setflags" in numpy_only  # the comparison itself is sound
    for name in numpy_only:
        with pytest.raises(AttributeError):
            getattr(x, name)


def test_flags_are_cupys_three():
    assert _public(FAKE.ones(3).flags) == _public(REAL._core.flags.Flags)
    with pytest.raises(AttributeError):
        FAKE.ones(3).flags.writeable  # noqa: B018 - NumPy has it, CuPy has not (the first backward() on CUDA)


@pytest.mark.parametrize("name", sorted(fake_cupy.SIGNATURES))
def test_keyword_table_matches_cupys_signatures(name):
    real = getattr(REAL, name)
    expected = fake_cupy.SIGNATURES[name]
    if expected is None:
        assert isinstance(real, REAL.ufunc), f"cupy.{name} is not a ufunc"
        return
    got = _params(real)
    assert got is not None and got == expected, f"cupy.{name}: CuPy's parameters are {got}"


@pytest.mark.parametrize("path", ["asarray", "array", "copyto", "ascontiguousarray", "asfortranarray", "einsum",
                                  "random.seed", "random.standard_normal", "random.random", "random.randint",
                                  "cuda.using_allocator", "linalg.inv", "linalg.det", "linalg.slogdet",
                                  "linalg.solve", "linalg.svd", "linalg.eig", "linalg.eigvals",
                                  "lib.stride_tricks.as_strided", "fft.fft", "fft.ifft",
                                  "fft.rfft", "fft.irfft", "fft.hfft", "fft.ihfft", "fft.fftn", "fft.ifftn",
                                  "fft.rfftn", "fft.irfftn", "fft.fft2", "fft.ifft2", "fft.rfft2", "fft.irfft2",
                                  "fft.fftshift", "fft.ifftshift", "histogram"])
def test_functions_written_out_in_the_stand_in_take_cupys_parameters(path):
    fake, real = FAKE, REAL
    for part in path.split("."):
        fake, real = getattr(fake, part), getattr(real, part)
    assert _params(fake) == _params(real), path


def test_cupyx_functions_take_cupys_parameters():
    for name in ("scatter_add", "allow_synchronize"):
        assert _params(getattr(FAKEX, name)) == _params(getattr(REALX, name)), name


def test_add_at_takes_cupys_parameters():
    """The engine adds up repeated integer indices with ``cupy.add.at`` (CuPy's ufunc.at)."""
    assert _params(FAKE.add.at) == ("a", "indices", "b")
    assert "ufunc.at(self, a, indices, b=None)" in REAL.add.at.__doc__


def test_add_at_with_an_integer_index_refuses_the_dtypes_cupys_atomic_add_lacks(sim):
    """CuPy 14.2's ``add.at`` with an integer-array index adds by atomicAdd, which CuPy has for int32, int64,
    float16, float32, float64, uint32 and uint64 only: the others, complex among them, raise TypeError
    (cupy/_core/_routines_indexing.pyx at v14.2.0, _scatter_op_single; the values are cast to the array's dtype
    first, so the array's counts). A boolean mask, or plain slices, add elementwise whatever the dtype."""
    where = sim.asarray([0, 0, 2])
    for dtype in (np.complex64, np.complex128, np.int8, np.int16, np.uint8, np.uint16, np.bool_):
        with pytest.raises(TypeError, match="cupy.add.at only supports int32, int64, float16, float32, float64, "
                                            "uint32, uint64 as data type"):
            sim.add.at(sim.zeros(3, dtype=dtype), where, sim.ones(3, dtype=dtype))
        with pytest.raises(TypeError, match="cupy.add.at only supports"):
            sim.add.at(sim.zeros((3, 2), dtype=dtype), (where, 1), 1)
    for dtype in (np.int32, np.int64, np.float16, np.float32, np.float64, np.uint32, np.uint64):
        a = sim.zeros(3, dtype=dtype)
        sim.add.at(a, where, sim.ones(3, dtype=np.complex64 if dtype == np.float64 else dtype).real)
        assert a.get().tolist() == [2, 0, 1]
    z = sim.zeros(3, dtype=np.complex128)
    sim.add.at(z, sim.asarray([True, False, True]), 1j)
    sim.add.at(z, slice(0, 2), 1)
    assert z.get().tolist() == [1 + 1j, 1, 1j]


def test_add_reduceat_takes_cupys_parameters():
    """interpolate's backward sums runs of taps with ``cupy.add.reduceat`` (CuPy's ufunc.reduceat)."""
    assert _params(FAKE.add.reduceat) == ("array", "indices", "axis", "dtype", "out")
    assert "ufunc.reduceat(self, array, indices, axis=0, dtype=None, out=None)" in REAL.add.reduceat.__doc__
    sums = FAKE.add.reduceat(FAKE.asarray(np.arange(6.0).reshape(2, 3)), FAKE.asarray([0, 2]), axis=1)
    assert isinstance(sums, FAKE.ndarray) and sums.get().tolist() == [[1.0, 2.0], [7.0, 5.0]]


def test_scatter_add_warns_deprecated_as_cupy_14_does():
    a = FAKE.zeros(3)
    with pytest.warns(DeprecationWarning, match="scatter_add"):
        FAKEX.scatter_add(a, FAKE.asarray([0, 0]), FAKE.ones(2))
    assert a.get().tolist() == [2.0, 0.0, 0.0]


# ------------------------------------------------------------------ ufuncs: their methods and their loops


def _doc_params(method):
    """A Cython method's parameters, read from the signature CuPy embeds in its docstring's first line."""
    first = method.__doc__.strip().splitlines()[0]
    inside = first[first.index("(") + 1:first.rindex(")")]
    return tuple(p.split("=")[0].strip().lstrip("*") for p in inside.split(",") if p.strip())[1:]  # (less self)


def test_the_stand_ins_ufuncs_are_cupy_ufuncs_with_cupys_methods():
    assert isinstance(REAL.maximum, REAL.ufunc) and isinstance(FAKE.maximum, FAKE.ufunc)
    assert not sorted(_public(FAKE.ufunc) - _public(REAL.ufunc))
    for method in ("reduce", "accumulate", "reduceat", "at", "outer"):
        fake = _params(getattr(FAKE.maximum, method))
        assert fake == _doc_params(getattr(REAL.ufunc, method))[:len(fake)], method
    for name in (n for n, p in fake_cupy.SIGNATURES.items() if p is None):
        fake, real = getattr(FAKE, name), getattr(REAL, name)
        assert (fake.name, fake.nin, fake.nout, fake.nargs) == (real.name, real.nin, real.nout, real.nargs), name


def _outcome(ufunc, method, *args):
    try:
        getattr(ufunc, method)(*args)
    except NotImplementedError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - the method went past its name check (to work it needs a GPU)
        return "computes"
    return "computes"


@pytest.mark.parametrize("method", ["reduce", "accumulate", "reduceat", "at"])
def test_ufunc_methods_refuse_where_cupys_do(method):
    """CuPy 14.2 reduces and accumulates with add and multiply only (their sum and product kernels), reduces at
    with add only, and has ``at`` for the ufuncs with a scatter kernel: every other ufunc raises
    NotImplementedError where NumPy computes (``cupy.maximum.accumulate``: cummax once called it). The real
    ufuncs' refusals come before any GPU work, so they are read here from the real CuPy, for every ufunc served."""
    x = np.zeros(3)
    args = {"reduce": (x,), "accumulate": (x,), "reduceat": (x, np.zeros(1, np.int64)), "at": (x, np.array([0]))}
    for name in sorted(n for n, p in fake_cupy.SIGNATURES.items() if p is None):
        if method in ("reduce", "accumulate", "reduceat") and getattr(np, name).nin != 2:
            continue
        real = _outcome(getattr(REAL, name), method, *args[method])
        fake = _outcome(getattr(FAKE, name), method, *(FAKE.asarray(a) for a in args[method]))
        if real != "computes":
            assert fake == real, (name, method)
        else:
            assert fake == "computes" or "does not model" in fake, (name, method, fake)


def test_ufunc_methods_compute_what_numpy_does_where_cupy_has_them():
    x = FAKE.asarray(np.array([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]]))
    assert FAKE.add.accumulate(x, axis=1).get().tolist() == [[3, 4, 8], [1, 6, 15]]
    assert FAKE.multiply.accumulate(x, axis=1).get().tolist() == [[3, 3, 12], [1, 5, 45]]
    assert FAKE.add.reduce(x, axis=0).get().tolist() == [4, 6, 13]
    assert FAKE.multiply.reduce(x, axis=1).get().tolist() == [12, 45]
    assert FAKE.subtract.outer(FAKE.arange(2), FAKE.arange(3)).get().tolist() == [[0, -1, -2], [1, 0, -1]]


_DTYPES = [np.dtype(c) for c in "?bhilBefdFD"]


def _cupy_loop(name, in_types, weaks=None):
    """The output dtypes of the loop the real CuPy 14.2 picks for ``in_types`` (its own resolver, which runs
    without a GPU), or None where it has no loop or refuses the combination (subtract of two bools)."""
    op = getattr(REAL, name)._ops._guess_routine_from_in_types(tuple(in_types), weaks)
    if op is None or op.error_func is not None:
        return None
    return tuple(np.dtype(t) for t in op.out_types)


def _stand_in_loop(name, *operands):
    try:
        out = getattr(FAKE, name)(*operands)
    except TypeError:
        return None
    return tuple(o.dtype for o in (out if isinstance(out, tuple) else (out,)))


@pytest.mark.parametrize("name", sorted(n for n, p in fake_cupy.SIGNATURES.items() if p is None))
def test_each_ufunc_answers_in_cupys_dtype_or_refuses_as_cupy_does(name):
    """For every ufunc the stand-in serves and every dtype (pair) of the engine's: where the stand-in (NumPy's
    loops) computes, CuPy has a loop and it gives the same dtype; where CuPy has none, the stand-in refuses. NumPy
    and CuPy differ in a few loops the engine does not use (CuPy's arctan2, hypot and nextafter take complex
    numbers, its sign a bool): there the stand-in is the stricter, which hides nothing."""
    nin = getattr(np, name).nin
    pairs = [(d,) for d in _DTYPES] if nin == 1 else [(a, b) for a in _DTYPES for b in _DTYPES]
    for types in pairs:
        got = _stand_in_loop(name, *(FAKE.ones(2, dtype=t) for t in types))
        if got is not None:
            assert got == _cupy_loop(name, types), (name, types, got)


def _weak_loop(name, array_dtype, scalar, position):
    """CuPy 14.2's loop for an array and a Python scalar: the scalar weak (NEP 50) unless its kind is above the
    array's (cupy/_core/_kernel.pyx, _check_should_use_weak_scalar: bool < int < float = complex); a Python bool is
    a strong bool."""
    kind = {bool: 0, int: 1, float: 2, complex: 2}
    scalar_type = {bool: np.dtype("?"), int: np.dtype("int64"), float: np.dtype("float64"),
                   complex: np.dtype("complex128")}[type(scalar)]
    array_kind = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 2}[array_dtype.kind]
    types = [array_dtype, array_dtype]
    types[position] = scalar_type
    weaks = [False, False]
    weaks[position] = type(scalar) if type(scalar) is not bool else False
    use = any(weaks) and kind[type(scalar)] <= array_kind
    return _cupy_loop(name, types, tuple(weaks) if use else None)


@pytest.mark.parametrize("name", sorted(n for n, p in fake_cupy.SIGNATURES.items() if p is None
                                        and getattr(np, n).nin == 2))
def test_an_array_and_a_python_number_give_cupys_dtype(name):
    """``x * 2.5`` and its kind: a float32 array times a Python float stays float32, an int8 array plus a Python
    float goes to float64, a float32 array times 1j gives complex64, in CuPy 14 as in NumPy 2."""
    for dtype in _DTYPES:
        for scalar in (True, 2, 2.5, 1 + 1j):
            for position in (0, 1):
                operands = [FAKE.ones(2, dtype=dtype), FAKE.ones(2, dtype=dtype)]
                operands[position] = scalar
                got = _stand_in_loop(name, *operands)
                if got is not None:
                    assert got == _weak_loop(name, dtype, scalar, position), (name, dtype, scalar, position, got)


# ------------------------------------------------------------------ functions CuPy writes its own way


def test_histogram_refuses_counts_and_reads_back_as_cupys(sim):
    """cupy/_statistics/histogram.py at v14.2.0: no complex data, no host array, counts in int64 and weighted sums
    in float64 whatever the weights' width; bin edges given as an array are checked for order on the host, and a
    range taken from the data is read back."""
    x = sim.asarray(np.array([0.5, 1.5, 1.7, 3.0], dtype=np.float32))
    with fake_cupy.count_syncs() as seen:
        counts, edges = sim.histogram(x, bins=3, range=(0.0, 3.0))
    assert seen == [] and counts.dtype == np.int64 and counts.get().tolist() == [1, 2, 1]
    with fake_cupy.count_syncs() as seen:
        sim.histogram(x, bins=3)
        sim.histogram(x, bins=sim.asarray(np.array([0.0, 1.0, 3.0])))
    assert len(seen) == 2
    sums, _ = sim.histogram(x, bins=2, range=(0.0, 4.0), weights=sim.ones(4, dtype=np.float32))
    assert sums.dtype == np.float64 and sums.get().tolist() == [3.0, 1.0]
    with pytest.raises(NotImplementedError, match="complex number is not supported"):
        sim.histogram(sim.ones(2, dtype=np.complex64))
    with pytest.raises(ValueError, match="x must be a cupy.ndarray"):
        sim.histogram(np.ones(2))


def test_ascontiguousarray_gives_a_0d_array_one_dimension_as_cupy_does(sim):
    """cupy/_core/core.pyx (ascontiguousarray, asfortranarray): a 0-dimensional array comes back raveled, shape
    (1,), as NumPy's; the engine once returned a 0-dimensional polynomial's value with that extra dimension."""
    for f in (sim.ascontiguousarray, sim.asfortranarray):
        assert f(sim.asarray(2.0)).shape == (1,)
        assert f(sim.asarray(2.0), dtype=np.float32).shape == (1,)
        assert f(sim.ones((2, 3))).shape == (2, 3)
    assert np.ascontiguousarray(np.float64(2.0)).shape == (1,)


def test_sort_knows_one_kind_and_unravel_index_checks_on_the_host(sim):
    x = sim.asarray(np.array([[3, 1, 2], [0, 5, 4]]))
    assert sim.sort(x, axis=1).get().tolist() == [[1, 2, 3], [0, 4, 5]]
    assert sim.argsort(x, axis=1, kind="stable").get().tolist() == [[1, 2, 0], [0, 2, 1]]
    for f in (sim.sort, sim.argsort):
        with pytest.raises(ValueError, match="kind can only be None or 'stable'"):
            f(x, kind="quicksort")
    with fake_cupy.count_syncs() as seen:
        rows, cols = sim.unravel_index(sim.asarray(np.array([4, 1])), (2, 3))
    assert seen == ["cupy.unravel_index"] and rows.get().tolist() == [1, 0] and cols.get().tolist() == [1, 1]


def test_a_keyword_cupy_does_not_take_is_refused():
    with pytest.raises(TypeError, match="unexpected keyword argument 'initial'"):
        FAKE.sum(FAKE.ones(3), initial=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):  # CuPy's ufuncs take no where=
        FAKE.add(FAKE.ones(3), FAKE.ones(3), where=FAKE.ones(3) > 0)


# ------------------------------------------------------------------ what CuPy does that NumPy does not


@pytest.fixture
def sim(simulated_gpu):
    from engine import backend

    return backend.get_cupy()


def test_host_synchronisations_are_counted(sim):
    x = sim.arange(6, dtype=np.float64).reshape(2, 3)
    with fake_cupy.count_syncs() as seen:
        y = (x * 2 + 1).sum(axis=0)  # kernels only
        sim.copyto(x, y[0])
    assert seen == []
    with fake_cupy.count_syncs() as seen:
        y.get()
        float(y[0])
        bool(y[1] > 0)
        y.item() if y.size == 1 else y.tolist()
        x[x > 2]
        x[x > 2] = 0
        sim.cuda.runtime.deviceSynchronize()
    assert seen == ["ndarray.get()", "float(ndarray)", "bool(ndarray)", "ndarray.tolist()", "boolean-mask indexing",
                    "boolean-mask assignment", "cudaDeviceSynchronize"]


def test_a_views_base_is_the_one_array_that_owns_its_memory_as_in_cupy(sim):
    """CuPy's ``_view`` sets ``v.base = self.base if self.base is not None else self``: every view, and a view of a
    view, names the same owner object, which it keeps alive (the engine notes in-place writes against it)."""
    import gc

    x = sim.arange(12, dtype=np.float64)
    assert x.base is None and x.flags.owndata
    a, b = x[2:], x.reshape(3, 4)
    c = a[1:]
    assert a.base is x and b.base is x and c.base is x and b.T.base is x
    assert c.base is c.base
    y = sim.ones((2, 3))
    v = y[0]
    del y
    gc.collect()
    assert v.base is not None and v.base.shape == (2, 3) and v.base is v[1:].base
    assert (x + 1).base is None and x.copy().base is None


def test_as_strided_makes_a_header_without_a_base_on_the_same_memory_as_in_cupy(sim):
    """CuPy's ``lib.stride_tricks.as_strided`` is ``ndarray(shape, dtype, memptr=x.data, strides)``: it shares x's
    memory (the same ``data.mem``, its first element where x's is) but has no ``base``, as a view would."""
    import inspect as _inspect

    source = _inspect.getsource(REAL.lib.stride_tricks.as_strided)
    assert "memptr=x.data" in source and "base" not in source.split('"""')[-1]
    x = sim.arange(12, dtype=np.float32)
    v = x[2:]
    s = sim.lib.stride_tricks.as_strided(v, (3, 2), (8, 4))
    assert s.base is None and s.data.mem is x.data.mem and s.data.ptr == v.data.ptr
    s[0, 1] = 100
    assert float(x[3]) == 100 and s.shape == (3, 2) and s.strides == (8, 4)


def test_fill_with_a_device_scalar_synchronises_as_cupy_14_does(sim):
    out = sim.empty((3, 4), dtype=np.float32)
    with fake_cupy.count_syncs() as seen:
        out.fill(2.5)
        out.fill(0)
    assert seen == []
    with fake_cupy.count_syncs() as seen:
        out.fill(sim.ones((), dtype=np.float64) * 3)
    assert seen == ["bool(ndarray)"]  # CuPy's `value == 0` on a device array
    np.testing.assert_array_equal(out.get(), np.full((3, 4), 3, np.float32))
    with fake_cupy.count_syncs() as seen:
        sim.copyto(out, sim.ones((), dtype=np.float32) * 4)
    assert seen == []


def test_allow_synchronize_false_raises_on_a_sync_in_that_thread_only(sim):
    x = sim.ones(3)
    with sim.cuda.Device(0), FAKEX.allow_synchronize(False):
        with pytest.raises(FAKEX.DeviceSynchronized):
            x.get()
        other = []
        t = threading.Thread(target=lambda: other.append(x.get()))
        t.start()
        t.join()
        assert len(other) == 1
    x.get()


def test_the_current_device_is_per_thread(sim):
    sim.cuda.Device(1).use()
    seen = []
    t = threading.Thread(target=lambda: seen.append(sim.cuda.Device().id))
    t.start()
    t.join()
    assert seen == [0] and sim.cuda.Device().id == 1
    sim.cuda.Device(0).use()


def test_pools_count_per_device_and_give_memory_back(sim):
    pool = sim.get_default_memory_pool()
    with sim.cuda.Device(1):
        before1 = pool.used_bytes()
        a = sim.zeros(1000, dtype=np.float64)
        assert pool.used_bytes() == before1 + 8192  # 8000 bytes, in blocks of 512
    before0 = pool.used_bytes()
    view = a[:10]
    del a
    with sim.cuda.Device(1):
        assert pool.used_bytes() == before1 + 8192  # the view keeps its buffer
        del view
        assert pool.used_bytes() == before1
        assert pool.total_bytes() >= 8192  # cached until free_all_blocks
        pool.free_all_blocks()
        assert pool.total_bytes() == pool.used_bytes()
    assert pool.used_bytes() == before0


def test_a_capture_refuses_host_syncs_and_a_device_sync_from_another_thread_breaks_it(sim):
    s = sim.cuda.Stream(non_blocking=True)
    x = sim.ones(3)
    with s:
        s.begin_capture()
        with pytest.raises(fake_cupy.CUDARuntimeError, match="ndarray.get"):
            x.get()
        with pytest.raises(fake_cupy.CUDARuntimeError):
            s.end_capture()
    with s:
        s.begin_capture()
        t = threading.Thread(target=lambda: pytest.raises(fake_cupy.CUDARuntimeError,
                                                          sim.cuda.runtime.deviceSynchronize))
        t.start()
        t.join()
        with pytest.raises(fake_cupy.CUDARuntimeError, match="invalidated by cudaDeviceSynchronize"):
            s.end_capture()


def test_elementwise_kernels_of_the_engine_run_and_match_the_unfused_ops(sim):
    from engine import kernels

    kernels._kernels.clear()
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        gy = sim.asarray(rng.standard_normal((8, 5)).astype(dtype))
        x = sim.asarray(rng.standard_normal((8, 5)).astype(dtype))
        assert kernels._kernel("pow2_backward") and kernels._kernel("clamp_min_backward")
        fused = kernels.pow2_backward(gy, x)
        assert isinstance(fused, fake_cupy.ndarray) and fused.dtype == dtype
        np.testing.assert_array_equal(fused.get(), (gy * (x + x)).get())
        for lo in (0, 0.1, -1):
            fused = kernels.clamp_min_backward(gy, x, lo)
            assert fused.dtype == dtype
            np.testing.assert_array_equal(fused.get(), np.where(x.get() >= lo, gy.get(), dtype(0)))
        # C's conditional, as CuPy compiles it: an inf or NaN gradient where the mask is false gives +0.0
        special = sim.asarray(np.array([np.inf, -np.inf, np.nan, -0.0, 2.0], dtype=dtype))
        at = sim.asarray(np.array([-1.0, -1.0, -1.0, -1.0, 1.0], dtype=dtype))
        fused = kernels.clamp_min_backward(special, at, 0)
        assert fused.get().tobytes() == np.array([0, 0, 0, 0, 2.0], dtype=dtype).tobytes()
    kernels._kernels.clear()


def test_like_cupy_the_stand_in_raises_no_floating_point_warnings(simulated_gpu):
    """CuPy's kernels compute log(0) = -inf and 0/0 = NaN without a word; NumPy warns (an error under this suite's
    filterwarnings). Code that is quiet on a GPU must be quiet on the stand-in."""
    cupy = __import__("cupy")  # the stand-in, installed by the fixture
    zero = cupy.zeros(2, dtype=cupy.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isneginf(cupy.log(zero).get()).all()
        assert np.isnan((zero / zero).get()).all()
        assert np.isposinf((1 / zero).get()).all()
