"""engine.cuda.CUDAGraph / engine.cuda.graph: capture once, replay, same numbers as running the code.

Runs on a real GPU (``gpu``) and on the CuPy stand-in (``sim``), whose capture has a real graph's semantics:
recorded, not run; replays compute into the captured buffers; host reads refuse (tests/fake_cupy.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import backend
from engine._cublas import prepare as real_prepare  # taken before the stand-in replaces it
from tests import fake_cupy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _host(t):
    return backend.to_host(t._data if isinstance(t, engine.Tensor) else t)


def test_capture_records_and_replay_computes_into_the_same_buffer(cuda_device):
    x = engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64, device=cuda_device)
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        y = x * 2 + 1
    if fake_cupy.active():  # on a GPU the buffer holds whatever was there; the stand-in says NaN
        assert np.isnan(_host(y)).all()
    g.replay()
    np.testing.assert_array_equal(_host(y), [3.0, 5.0, 7.0])
    x.copy_(engine.tensor([10.0, 20.0, 30.0], dtype=engine.float64))  # new input, same buffer
    g.replay()
    np.testing.assert_array_equal(_host(y), [21.0, 41.0, 61.0])
    assert g.replays == 2


def test_in_place_updates_run_on_replay_only(cuda_device):
    w = engine.tensor([1.0, 1.0], dtype=engine.float64, device=cuda_device)
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        w -= 0.25
    np.testing.assert_array_equal(_host(w), [1.0, 1.0])  # captured, not run
    for expected in (0.75, 0.5, 0.25):
        g.replay()
        np.testing.assert_array_equal(_host(w), [expected, expected])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_inside_a_capture_match_the_uncaptured_ones(cuda_device, dtype):
    rng = np.random.default_rng(0)
    a = engine.tensor(rng.standard_normal((7, 5)), dtype=getattr(engine, dtype), device=cuda_device)
    b = engine.tensor(rng.standard_normal((5, 3)), dtype=getattr(engine, dtype), device=cuda_device)
    c = engine.tensor(rng.standard_normal((3, 5)), dtype=getattr(engine, dtype), device=cuda_device)
    wide = engine.tensor(rng.standard_normal((5, 8)), dtype=getattr(engine, dtype), device=cuda_device)
    expected = [a.mm(b), a @ c.t(), a.t().mm(a), a.mm(wide[:, 2:5])]  # plain, transposed, both, a strided view
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        got = [a.mm(b), a @ c.t(), a.t().mm(a), a.mm(wide[:, 2:5])]
    g.replay()
    rtol = 1e-12 if dtype == "float64" else 1e-5
    for e, r in zip(expected, got):
        assert r.shape == e.shape and r.dtype == e.dtype
        fake_cupy.assert_same_numbers(_host(r), _host(e), rtol)


def _tutorial_step(x, y, w1, w2, lr):
    """The tutorial's autograd step (tutorial 4), returning the loss."""
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    with engine.no_grad():
        w1 -= lr * w1.grad
        w2 -= lr * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
    return loss.detach()


def _manual_step(x, y, w1, w2, lr):
    """The tutorial's hand-written backward pass (tutorial 2), with its boolean-mask assignment."""
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)
    loss = (y_pred - y).pow(2).sum()
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h = grad_y_pred.mm(w2.t()).clone()
    grad_h[h < 0] = 0
    grad_w1 = x.t().mm(grad_h)
    w1 -= lr * grad_w1
    w2 -= lr * grad_w2
    return loss


def _problem(device, requires_grad):
    rng = np.random.default_rng(3)
    put = lambda a, rg=False: engine.tensor(a, dtype=engine.float64, device=device, requires_grad=rg)  # noqa: E731
    return (put(rng.standard_normal((16, 40))), put(rng.standard_normal((16, 5))),
            put(rng.standard_normal((40, 12)), requires_grad), put(rng.standard_normal((12, 5)), requires_grad))


@pytest.mark.parametrize("step, grad", [(_tutorial_step, True), (_manual_step, False)], ids=["autograd", "manual"])
def test_a_captured_training_step_equals_the_uncaptured_one_over_100_steps(cuda_device, step, grad):
    """The issue's bar: float64, 1e-12 relative, 100 steps; losses and final weights."""
    lr = 1e-3
    ref = _problem(cuda_device, grad)
    ref_losses = [float(step(*ref, lr)) for _ in range(100)]

    x, y, w1, w2 = _problem(cuda_device, grad)
    losses = [float(step(x, y, w1, w2, lr)) for _ in range(3)]  # warm-up: kernels compiled, .grad made
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        loss = step(x, y, w1, w2, lr)
    for _ in range(97):
        g.replay()
        losses.append(float(loss))
    fake_cupy.assert_same_numbers(losses, ref_losses)
    fake_cupy.assert_same_numbers(_host(w1), _host(ref[2]))
    fake_cupy.assert_same_numbers(_host(w2), _host(ref[3]))
    assert losses[-1] < losses[0] / 10  # it trained


def test_a_host_read_inside_the_capture_is_refused_with_a_clear_error_and_nothing_breaks(cuda_device):
    x = engine.ones(4, device=cuda_device)
    g = engine.cuda.CUDAGraph()
    with pytest.raises(engine.cuda.GraphCaptureError, match="reads a value back to the host"):
        with engine.cuda.graph(g):
            y = x * 3
            float(y.sum())
    assert not g.captured
    assert not engine.cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="nothing to replay"):
        g.replay()
    np.testing.assert_array_equal(_host(x * 2), [2.0] * 4)  # the device works as before
    g2 = engine.cuda.CUDAGraph()  # and a new capture works
    with engine.cuda.graph(g2):
        z = x + 1
    g2.replay()
    np.testing.assert_array_equal(_host(z), [2.0] * 4)


def test_random_numbers_inside_the_capture_are_refused(cuda_device):
    g = engine.cuda.CUDAGraph()
    with pytest.raises(engine.cuda.GraphCaptureError, match="random numbers"):
        with engine.cuda.graph(g):
            engine.randn(3, device=cuda_device)


def test_a_graph_captures_once(cuda_device):
    x = engine.ones(2, device=cuda_device)
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        x * 2
    with pytest.raises(engine.cuda.GraphCaptureError, match="reset"):
        with engine.cuda.graph(g):
            x * 3
    g.reset()
    with engine.cuda.graph(g):
        y = x * 3
    g.replay()
    np.testing.assert_array_equal(_host(y), [3.0, 3.0])
    with pytest.raises(TypeError, match="CUDAGraph"):
        engine.cuda.graph(object())


def test_the_masked_assignment_does_not_read_the_mask_back(cuda_device):
    """grad_h[h < 0] = 0 on a GPU goes through copyto(where=): capturable, and equal to the CPU's."""
    host = np.array([[-1.0, 2.0], [3.0, -4.0]])
    t = engine.tensor(host, device=cuda_device)
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        t[t < 0] = 0
    g.replay()
    cpu = engine.tensor(host)
    cpu[cpu < 0] = 0
    np.testing.assert_array_equal(_host(t), cpu.numpy())


def test_memory_of_a_graph_is_given_back(cuda_device):
    """After reset() and the outputs gone, memory in use is back within 1 MiB of before."""
    engine.cuda.empty_cache()
    before = engine.cuda.memory_allocated()
    x = engine.ones((256, 256), device=cuda_device)
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        y = (x.mm(x) * 2).sum()
    g.replay()
    assert float(y) == 2 * 256**3
    if fake_cupy.active():
        assert g.pool_bytes() > 0  # what the capture made came from the graph's own pool
    assert engine.cuda.memory_allocated() > before
    g.reset()
    del y, x, g
    engine.cuda.empty_cache()
    assert abs(engine.cuda.memory_allocated() - before) <= 1 << 20


@pytest.fixture
def real_cupy():
    """CuPy on a real GPU (these tests check GPU code that the stand-in replaces)."""
    if not engine.cuda.is_available():
        pytest.skip(f"no usable CUDA device: {engine.cuda.unavailable_reason()}")
    return backend.get_cupy()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_direct_cublas_product_matches_cupys(real_cupy, dtype):
    """engine._cublas.matmul (what a capture uses) against CuPy's own product, uncaptured, on every layout."""
    from engine import _cublas

    cupy = real_cupy
    rng = np.random.default_rng(1)

    def put(*shape):
        return cupy.asarray(rng.standard_normal(shape).astype(dtype))

    a, b, c, wide, row, col = put(9, 6), put(6, 4), put(4, 6), put(6, 10), put(1, 6), put(6, 1)
    cases = [(a, b), (a, c.T), (a.T, a), (a, wide[:, 3:7]), (wide[:, 1:7].T, b), (row, b), (a, col), (row, col),
             (col, row)]
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for x, y in cases:
        got = _cublas.matmul(x, y)
        assert got.shape == (x.shape[0], y.shape[1]) and got.dtype == dtype
        np.testing.assert_allclose(got.get(), (x @ y).get(), rtol=rtol, atol=rtol)
    empty_k = _cublas.matmul(cupy.ones((3, 0), dtype), cupy.ones((0, 2), dtype))
    np.testing.assert_array_equal(empty_k.get(), np.zeros((3, 2)))
    assert _cublas.matmul(cupy.ones((0, 4), dtype), cupy.ones((4, 2), dtype)).shape == (0, 2)
    mixed = _cublas.matmul(a.astype(np.float32), b.astype(np.float64))
    assert mixed.dtype == np.float64
    with pytest.raises(NotImplementedError, match="float32 or float64"):
        _cublas.matmul(a.astype(np.float16), b.astype(np.float16))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        _cublas.matmul(a, a)


def test_a_product_that_cannot_be_prepared_refuses_the_capture(cuda_device, monkeypatch):
    from engine import _cublas

    def broken():
        raise _cublas.CublasError("the direct cuBLAS product disagrees with CuPy's (float32, F/C operands)")

    monkeypatch.setattr(_cublas, "prepare", broken)
    g = engine.cuda.CUDAGraph()
    with pytest.raises(engine.cuda.GraphCaptureError, match="matrix products cannot be captured here: the direct"):
        with engine.cuda.graph(g):
            pass
    assert not engine.cuda.is_current_stream_capturing()


def test_freeing_memory_waits_while_a_capture_goes_on(cuda_device):
    """A graph collected, or empty_cache() pressed, during another capture must not free device memory then."""
    x = engine.ones(8, device=cuda_device)
    old = engine.cuda.CUDAGraph()
    with engine.cuda.graph(old):
        kept = x * 2
    old.replay()
    g = engine.cuda.CUDAGraph()
    with engine.cuda.graph(g):
        old.reset()  # as a finalizer would, mid-capture
        engine.cuda.empty_cache()
        y = x + 1
    g.replay()  # the capture was not broken
    np.testing.assert_array_equal(_host(y), [2.0] * 8)
    np.testing.assert_array_equal(_host(kept), [2.0] * 8)
    from engine import _memory

    assert any(pool is not None for _, pool in _memory._retired)  # parked, to be swept later
    del kept
    g.reset()
    engine.cuda.empty_cache()
    assert all(pool.used_bytes() for _, pool in _memory._retired)  # what nothing uses is gone


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_fused_backward_kernels_equal_their_chains_bit_for_bit(real_cupy, dtype):
    from engine import kernels

    cupy = real_cupy
    rng = np.random.default_rng(2)
    gy = cupy.asarray(rng.standard_normal((64, 100)).astype(dtype))
    x = cupy.asarray(rng.standard_normal((64, 100)).astype(dtype))
    x[0, :3] = cupy.asarray(np.array([0.0, -0.0, np.nan], dtype))  # the edges of the comparison
    assert kernels._kernel("pow2_backward") and kernels._kernel("clamp_min_backward")  # fused, not the chain
    np.testing.assert_array_equal(kernels.pow2_backward(gy, x).get(), (gy * (x + x)).get())
    for lo in (0, 0.1, -1):
        fused = kernels.clamp_min_backward(gy, x, lo)
        assert fused.dtype == dtype
        np.testing.assert_array_equal(fused.get(), (gy * (x >= lo)).get())


@pytest.mark.sim
def test_prepare_lets_cupy_load_cublas_before_looking_for_it(simulated_gpu, monkeypatch):
    """The library is taken from the memory map; a CuPy product first makes sure CuPy's own one is there."""
    from engine import _cublas

    cupy = backend.get_cupy()
    events = []

    class Probe:
        def __matmul__(self, other):
            events.append("cupy product")
            return self

    def find():
        events.append("find library")
        raise _cublas.CublasError("stop here")

    monkeypatch.setattr(cupy, "ones", lambda *a, **k: Probe())
    monkeypatch.setattr(_cublas, "_lib", None)
    monkeypatch.setattr(_cublas, "_find_library", find)
    with pytest.raises(_cublas.CublasError, match="stop here"):
        real_prepare()
    assert events == ["cupy product", "find library"]
