"""The compiled recording and walk (engine/autograd/_cgraph.c): built where they can be, the same results as the
Python they stand for (function._apply, graph._run), their own error paths, and no references kept or lost (a C
function's reference counts are its own to get right)."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import engine
from engine import kernels
from engine.autograd import _compiled, function, graph
from engine.functions import arithmetic
from tests.engine.helpers import python_paths

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "engine" / "autograd" / "_cgraph.c"


@pytest.mark.parametrize("module, source", [("engine.autograd._cgraph", SOURCE),
                                            ("engine._ckernels", ROOT / "engine" / "_ckernels.c")])
def test_the_build_is_not_older_than_its_source(graph_core, module, source):
    if graph_core != "compiled":
        pytest.skip("about the build")
    built = Path(sys.modules[module].__file__)
    # an edited C file and an old build would test old code: `make setup` rebuilds when the source changes
    assert built.stat().st_mtime >= source.stat().st_mtime, f"{built.name} is older than {source.name}: make setup"


def test_a_machine_with_a_compiler_builds_it():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the engine walks in Python")
    if os.environ.get("GRADSCOPE_PURE_PYTHON", "").strip() not in ("", "0"):
        pytest.skip("GRADSCOPE_PURE_PYTHON is set")
    assert _compiled.kind() == "compiled", "a C compiler is here, but engine/autograd/_cgraph.c was not built"
    assert "engine._ckernels" in sys.modules, "a C compiler is here, but engine/_ckernels.c was not built"


def test_the_environment_variable_keeps_the_python_paths():
    code = ("import engine; from engine.autograd import graph; "
            "print(engine.autograd.implementation(), graph._cwalk, engine.kernels.implementation())")
    env = {**os.environ, "GRADSCOPE_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "python None python"


def test_the_paths_in_use_are_the_ones_asked_for(graph_core):
    compiled = graph_core == "compiled"
    assert (graph._cwalk is not None) == compiled
    assert (kernels._ck is not None) == compiled
    assert (function.Function.__dict__["apply"].__func__ is function._apply) == (not compiled)


def _net(seed=0):
    rng = np.random.default_rng(seed)
    x = engine.tensor(rng.standard_normal((8, 5)), dtype=engine.float64)
    w1 = engine.tensor(rng.standard_normal((5, 4)), dtype=engine.float64, requires_grad=True)
    w2 = engine.tensor(rng.standard_normal((4, 3)), dtype=engine.float64, requires_grad=True)
    return x, w1, w2


def test_the_tutorial_step_gives_the_hand_written_gradients():
    x, w1, w2 = _net()
    y = engine.tensor(np.arange(24.0).reshape(8, 3) / 10, dtype=engine.float64)
    for _ in range(3):  # the second and third steps take the zero_()'d buffers' place (the lazy zeros)
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        xd, w1d, w2d = x.numpy(), w1.detach().numpy(), w2.detach().numpy()
        h = xd @ w1d
        hr = np.maximum(h, 0)
        g = 2 * (hr @ w2d - y.numpy())
        gw2 = hr.T @ g
        gh = g @ w2d.T
        gh[h < 0] = 0
        np.testing.assert_allclose(w1.grad.numpy(), xd.T @ gh, rtol=1e-12)
        np.testing.assert_allclose(w2.grad.numpy(), gw2, rtol=1e-12)
        with engine.no_grad():
            w1 -= 1e-3 * w1.grad
            w2 -= 1e-3 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()


def test_many_pending_nodes_at_once_run_newest_first():
    """A hundred branches from one leaf, all pending together: the walk's heap grows past its first block."""
    x = engine.tensor(np.linspace(-1, 1, 7), dtype=engine.float64, requires_grad=True)
    branches = [(x * float(k)).sin() for k in range(1, 101)]
    total = branches[0]
    for b in branches[1:]:
        total = total + b
    total.sum().backward()
    xs = np.linspace(-1, 1, 7)
    expected = sum(k * np.cos(k * xs) for k in range(1, 101))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_broadcasting_and_mixed_dtypes_are_undone_per_input():
    a = engine.tensor(np.ones((3, 4)), dtype=engine.float32, requires_grad=True)
    b = engine.tensor(np.arange(4.0), dtype=engine.float64, requires_grad=True)
    ((a * b) * 2.0).sum().backward()
    assert a.grad.dtype == engine.float32 and b.grad.dtype == engine.float64
    np.testing.assert_array_equal(a.grad.numpy(), np.tile(np.arange(4.0) * 2, (3, 1)).astype(np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(4, 6.0))


class Boom(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, gy):
        raise ValueError("boom in backward")


def test_an_error_in_a_backward_comes_out_as_it_was_raised():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    loss = (Boom.apply(x * 3) + x).sum()
    with pytest.raises(ValueError, match="boom in backward"):
        loss.backward()


def test_the_second_backward_through_a_freed_graph_names_retain_graph():
    _, w1, w2 = _net()
    loss = w1.mm(w2).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        loss.backward()


def test_no_reference_is_kept_or_lost():
    """After backward and the loss dropped, the graph is gone (no node held by the walk), and .grad's array is
    held by .grad alone."""
    x, w1, w2 = _net()
    for _ in range(3):
        loss = x.mm(w1).clamp(min=0).mm(w2).pow(2).sum()
        node = weakref.ref(loss.grad_fn)
        loss.backward()
        del loss
        gc.collect()
        assert node() is None
        arr = w1.grad._data
        assert sys.getrefcount(arr) == 3  # .grad, arr, getrefcount's argument
        del arr
        with engine.no_grad():
            w1.grad.zero_()
            w2.grad.zero_()
    before = len(gc.get_objects())
    for _ in range(50):
        x.mm(w1).clamp(min=0).mm(w2).pow(2).sum().backward()
    gc.collect()
    assert len(gc.get_objects()) - before < 20


def test_a_recorded_node_is_what_the_python_apply_makes(graph_core):
    """Each field the walk and describe() read, for the one- and two-input built-ins, keywords included."""
    x = engine.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)
    c = engine.tensor([[0.5, 0.5], [2.0, 2.0]])
    h = x.clamp(min=0)  # one input, keywords
    node = h.grad_fn
    assert type(node).__name__ == "Clamp" and node._inputs == (x,) and node.needs_input_grad == (True,)
    assert h.requires_grad and h.is_leaf is False and isinstance(node._seq, int)
    d = h - c  # two inputs, the second needs no gradient
    assert d.grad_fn._inputs == (h, None) and d.grad_fn.needs_input_grad == (True, False)
    assert d.grad_fn._seq > node._seq
    s = (2.0 - d).sum()  # a Python number first: no edge (needs_input_grad None), as PyTorch's rsub
    node = s.grad_fn._inputs[0].grad_fn
    assert node._inputs[1] is d and node._inputs[0] is None and node.needs_input_grad == (None, True)
    assert node.next_functions == ((d.grad_fn, 0),) and node.name() == "RsubBackward1"
    np.testing.assert_array_equal(s.detach().numpy(), np.float32(4 * 2 - (1.0 - 0.5 + 0 - 0.5 + 3 - 2 + 0 - 2)))
    m = 2.0 * d  # recorded as d * 2.0, as PyTorch's: the number is the second edge, wrapped
    assert m.grad_fn._inputs[0] is d and m.grad_fn.needs_input_grad == (True, None)
    assert m.grad_fn.next_functions == ((d.grad_fn, 0), (None, 0))
    assert s.shape == () and s.dtype == engine.float32  # a NumPy scalar from the reduction became a 0-d array


def test_nothing_is_recorded_under_no_grad_or_without_a_tensor_that_requires_grad(graph_core):
    w = engine.tensor([1.0, 2.0], requires_grad=True)
    with engine.no_grad():
        y = w * 3.0
    assert y.grad_fn is None and not y.requires_grad
    z = engine.tensor([1.0, 2.0]) * 3.0
    assert z.grad_fn is None and not z.requires_grad
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])


def test_an_error_in_a_forward_comes_out_as_numpy_raised_it(graph_core):
    """Same device, shapes that do not broadcast: NumPy's ValueError, not the engine's device message."""
    a = engine.tensor([[1.0, 2.0]], requires_grad=True)
    b = engine.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="broadcast"):
        arithmetic.Add.apply(a, b)


def test_the_profiler_still_times_each_op_and_each_apply(graph_core):
    x = engine.tensor(np.ones((4, 3)), requires_grad=True)
    w = engine.tensor(np.ones((3, 2)), requires_grad=True)
    with engine.profiler.profile() as prof:
        loss = arithmetic.Add.apply(x.mm(w).clamp(min=0), 1.0).sum()  # Add.apply: through the profiler's hook
        loss.backward()
    ops = [(r.op, r.phase) for r in prof.records]
    for op in ("MatMul", "Clamp", "Add", "Sum"):
        assert (op, "forward") in ops and (f"{op} backward", "backward") in ops, ops
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 2), 4.0))


class _Token:
    pass


class _Observer:
    """The profiler's side of the walk, written down: each node_begin's node and token, each node_end's."""

    def __init__(self, fail_at=None):
        self.calls, self.fail_at = [], fail_at

    def node_begin(self, node):
        if type(node).__name__ == self.fail_at:
            raise KeyError("the observer failed")
        token = _Token()
        self.calls.append(("begin", type(node).__name__, token))
        return token

    def node_end(self, node, token):
        self.calls.append(("end", type(node).__name__, token))


def _observed_step(observer):
    x = engine.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    w = engine.tensor([[0.5, -1.0], [2.0, 1.5]], requires_grad=True)
    graph._observer = observer
    try:
        x.mm(w).clamp(min=0).sub(1.0).pow(2).sum().backward()
    finally:
        graph._observer = None
    return x.grad.numpy(), w.grad.numpy()


def test_the_walk_tells_the_observer_of_each_node_in_order_with_its_token(graph_core):
    """What the profiler counts on, from either walk: node_begin before each node's backward, node_end after it
    with node_begin's token, newest node first; and no token kept (the C walk owns its references)."""
    observer = _Observer()
    grads = _observed_step(observer)
    names = ["Sum", "Pow", "Sub", "Clamp", "MatMul"]
    assert [(kind, name) for kind, name, _ in observer.calls] == [(k, n) for n in names for k in ("begin", "end")]
    assert all(end[2] is begin[2] for begin, end in zip(observer.calls[::2], observer.calls[1::2]))
    tokens = [weakref.ref(token) for _, _, token in observer.calls[::2]]
    observer.calls.clear()
    gc.collect()
    assert all(ref() is None for ref in tokens)
    np.testing.assert_array_equal(grads[1], _observed_step(None)[1])  # the same gradients as unobserved


def test_an_observer_that_raises_and_a_backward_that_raises_come_out_of_backward(graph_core):
    with pytest.raises(KeyError, match="the observer failed"):
        _observed_step(_Observer(fail_at="Clamp"))
    observer = _Observer()
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    loss = Boom.apply(x).sum()
    graph._observer = observer
    try:
        with pytest.raises(ValueError, match="boom in backward"):
            loss.backward()
    finally:
        graph._observer = None
    # the failing node was begun and never ended, as the Python walk does it
    assert [(kind, name) for kind, name, _ in observer.calls] == [("begin", "Sum"), ("end", "Sum"), ("begin", "Boom")]


def test_under_the_profiler_backward_walks_compiled(graph_core, monkeypatch):
    """A profile times the walk the step runs unprofiled: the compiled one, with the profiler as its observer."""
    if graph_core != "compiled":
        pytest.skip("about the compiled walk")
    seen = []
    real = graph._cwalk

    def counting(node, grad, retain_graph, observer, retained, *writes):
        seen.append(observer)
        return real(node, grad, retain_graph, observer, retained, *writes)

    monkeypatch.setattr(graph, "_cwalk", counting)
    x = engine.tensor(np.ones((4, 3)), requires_grad=True)
    w = engine.tensor(np.ones((3, 2)), requires_grad=True)
    with engine.profiler.profile() as prof:
        x.mm(w).clamp(min=0).sum().backward()
    assert len(seen) == 1 and seen[0] is not None
    assert sorted(r.op for r in prof.records if r.phase == "backward") == [
        "Clamp backward", "MatMul backward", "Sum backward"]
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 2), 4.0))


def test_retained_gradients_of_non_leaf_tensors_arrive_and_accumulate(graph_core):
    """retain_grad() on intermediate results, one of them broadcast into a larger one: their .grad as PyTorch
    gives it (checked against the formulas), and added to on a second backward of a kept graph."""
    xs = np.array([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]])
    ws = np.array([[0.5, -1.0], [2.0, 1.5], [-0.5, 1.0]])
    x = engine.tensor(xs, requires_grad=True)
    w = engine.tensor(ws, requires_grad=True)
    h = x.mm(w)
    h.retain_grad()
    r = h.clamp(min=0)
    r.retain_grad()
    row = r.sum(0, keepdim=True)  # (1, 2), broadcast back over r's rows below
    row.retain_grad()
    loss = (r * row).sum()
    loss.backward(retain_graph=True)
    hs = xs @ ws
    rs = np.maximum(hs, 0)
    g_row = rs.sum(0, keepdims=True)  # d loss / d row: summed over the rows it was broadcast to
    g_r = g_row + g_row  # from r * row, and from row = sum(r)
    np.testing.assert_allclose(row.grad.numpy(), g_row)
    np.testing.assert_allclose(r.grad.numpy(), np.broadcast_to(g_r, rs.shape))
    np.testing.assert_allclose(h.grad.numpy(), g_r * (hs >= 0))
    np.testing.assert_allclose(w.grad.numpy(), xs.T @ (g_r * (hs >= 0)))
    assert h.retains_grad and not x.retains_grad and loss.grad is None
    loss.backward()
    np.testing.assert_allclose(h.grad.numpy(), 2 * g_r * (hs >= 0))
    np.testing.assert_allclose(w.grad.numpy(), 2 * xs.T @ (g_r * (hs >= 0)))


def test_a_retain_grad_anywhere_leaves_later_walks_compiled(graph_core, monkeypatch):
    """retain_grad() once in a process (a test, the app's look inside, a user's script) sent every later
    backward() to the Python walk; the compiled one now hands the retained gradients over itself."""
    if graph_core != "compiled":
        pytest.skip("about the compiled walk")
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    assert graph._retaining
    calls = []
    real = graph._cwalk
    monkeypatch.setattr(graph, "_cwalk", lambda *args: calls.append(args[4]) or real(*args))
    (h * h).sum().backward()
    assert calls == [graph._deliver_retained]
    assert h.grad.tolist() == [6.0, 12.0] and x.grad.tolist() == [18.0, 36.0]
    y = engine.tensor([1.0, 2.0], requires_grad=True)
    (y * y).sum().backward()  # a graph with nothing retained, walked with the hand-over at the ready
    assert len(calls) == 2 and y.grad.tolist() == [2.0, 4.0]


# ------------------------------------------------------------------------- the two kinds against each other

UNARY = {"relu": lambda t: t.clamp(min=0), "sin": lambda t: t.sin(), "exp": lambda t: (t * 0.1).exp(),
         "pow2": lambda t: t.pow(2), "neg": lambda t: -t, "sum_rows": lambda t: t.sum(0, keepdim=True) + t,
         "tanh": lambda t: t.tanh()}
BINARY = {"add": lambda a, b, row: a + b, "sub": lambda a, b, row: a - b, "mul": lambda a, b, row: a * b,
          "mm": lambda a, b, row: a.mm(b) * 0.1, "add_row": lambda a, b, row: a + row,
          "mul_scalar": lambda a, b, row: 2.5 * a}


def _random_graph(seed: int, dtype):
    """A random graph over three leaves, shared subexpressions and broadcasting included, from ``seed``: the same
    graph every call, so the compiled and the Python paths can each record and walk it."""
    rng = np.random.default_rng(seed)
    n = 4
    leaves = [engine.tensor(rng.standard_normal((n, n)), dtype=dtype, requires_grad=True) for _ in range(2)]
    row = engine.tensor(rng.standard_normal((1, n)), dtype=dtype, requires_grad=True)
    const = engine.tensor(rng.standard_normal((n, n)), dtype=dtype)  # needs no gradient
    pool = [*leaves, const]
    for _ in range(int(rng.integers(3, 12))):
        if rng.random() < 0.5:
            op = list(UNARY)[int(rng.integers(len(UNARY)))]
            out = UNARY[op](pool[int(rng.integers(len(pool)))])
        else:
            a, b = (pool[int(i)] for i in rng.integers(len(pool), size=2))  # may be the same tensor twice
            out = BINARY[list(BINARY)[int(rng.integers(len(BINARY)))]](a, b, row)
        pool.append(out)
    loss = sum(t.pow(2).sum() for t in pool if t.requires_grad)  # each result used again: accumulation
    return loss, [*leaves, row]


@pytest.mark.parametrize("dtype", [engine.float32, engine.float64])
@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_give_the_same_gradients_bit_for_bit_either_way(seed, dtype):
    if _compiled.kind() != "compiled":
        pytest.skip("the compiled paths are not built here")
    loss, leaves = _random_graph(seed, dtype)
    loss.backward()
    compiled = [None if t.grad is None else t.grad.numpy().copy() for t in leaves]
    with python_paths():
        loss_py, leaves_py = _random_graph(seed, dtype)
        loss_py.backward()
    np.testing.assert_array_equal(loss.detach().numpy(), loss_py.detach().numpy())
    for g, t in zip(compiled, leaves_py):
        if g is None:
            assert t.grad is None
        else:
            assert t.grad.dtype == dtype
            np.testing.assert_array_equal(g, t.grad.numpy())
