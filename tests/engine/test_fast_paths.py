"""The no-grad fast paths (Tensor operators that skip Function.apply when nothing is recorded) give what the
recorded op gives, bit for bit, in the same dtype and shape; and the backward walk's order (newest node
first) waits for every gradient a node will receive."""

from __future__ import annotations

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "radd": lambda a, b: 1.5 + a,
    "rsub": lambda a, b: 1.5 - a,
    "rmul": lambda a, b: 2.0 * a,
    "rdiv": lambda a, b: 3.0 / a,
    "scalar right": lambda a, b: a * 3 - 0.25,
    "numpy scalar": lambda a, b: a * np.float64(0.5),
    "pow 2": lambda a, b: a**2,
    "pow 2.0": lambda a, b: a.pow(2.0),
    "pow 3": lambda a, b: a**3,
    "pow tensor": lambda a, b: a.abs() ** b,
    "mm": lambda a, b: a.mm(b.t()),
    "matmul": lambda a, b: a @ b.t(),
    "t": lambda a, b: a.t(),
    "clamp min": lambda a, b: a.clamp(min=0),
    "clamp max": lambda a, b: a.clamp(max=0.5),
    "clamp both": lambda a, b: a.clamp(-0.5, 0.5),
    "sum": lambda a, b: a.sum(),
    "sum dim": lambda a, b: a.sum(1),
    "clone": lambda a, b: a.clone(),
    "lt": lambda a, b: a < b,
    "ge scalar": lambda a, b: a >= 0,
}


def _pair(device, dtype, shape):
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, shape)
    b = rng.uniform(0.5, 2, shape)
    return a, b


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unrecorded_result_equals_the_recorded_one(device, name, dtype):
    fn = BINARY[name]
    a, b = _pair(device, dtype, (3, 4))
    dt = getattr(engine, dtype)
    plain = fn(engine.tensor(a, dtype=dt, device=device), engine.tensor(b, dtype=dt, device=device))
    recorded = fn(engine.tensor(a, dtype=dt, device=device, requires_grad=True),
                  engine.tensor(b, dtype=dt, device=device, requires_grad=True))
    assert plain.grad_fn is None and not plain.requires_grad
    assert plain.dtype == recorded.dtype
    assert plain.shape == recorded.shape
    np.testing.assert_array_equal(plain.cpu().numpy(), recorded.detach().cpu().numpy())


@pytest.mark.parametrize("name", ["add", "mul", "rsub", "pow 2", "sum", "clamp min"])
def test_zero_dim_results_are_zero_dim_tensors(device, name):
    fn = BINARY[name]
    a = engine.tensor(1.5, device=device)
    out = fn(a, engine.tensor(2.0, device=device))
    assert out.shape == () and out.dim() == 0
    assert isinstance(out.item(), float)


def test_integer_tensors_stay_integer():
    a = engine.tensor([1, 2, 3])
    assert (a * 2).dtype == engine.int64 and (a * 2).tolist() == [2, 4, 6]
    assert (a**2).dtype == engine.int64 and (a**2).tolist() == [1, 4, 9]
    assert a.sum().dtype == engine.int64 and a.sum().item() == 6


def test_inplace_updates_write_the_same_array(device):
    w = engine.tensor([1.0, 2.0, 3.0], device=device)
    before = w._data
    w -= 0.5 * engine.tensor([2.0, 2.0, 2.0], device=device)
    w += 1
    w *= 2
    w /= 4
    assert w._data is before
    assert w.tolist() == [0.5, 1.0, 1.5]
    s = engine.tensor(2.0, device=device)
    s -= 1.0  # a 0-d tensor too
    assert s.item() == 1.0


def test_inplace_keeps_dtype_and_refuses_unsafe_casts():
    w = engine.ones(3)
    w -= np.float64(0.25)
    assert w.dtype == engine.float32 and w.tolist() == [0.75, 0.75, 0.75]
    i = engine.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i -= 0.5  # PyTorch's refusal (NumPy's same_kind rule says the same, in its words)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i /= 2  # true division: a float result
    b = engine.tensor([True, False])
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        b += engine.tensor([1, 1])
    assert i.tolist() == [1, 2] and b.tolist() == [True, False]


def test_setitem_with_a_mask_tensor(device):
    g = engine.tensor([[1.0, -2.0], [3.0, -4.0]], device=device)
    g[g < 0] = 0
    assert g.tolist() == [[1.0, 0.0], [3.0, 0.0]]


# --------------------------------------------------------------------------- backward order


def test_uneven_paths_to_a_node_are_both_waited_for(device):
    """b reaches the loss directly and through a five-step chain; b's node must run once, after both."""
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = x * 2
    long = b
    for _ in range(5):
        long = long * 1.5
    (b + long).sum().backward()
    expected = 2 * (1 + 1.5**5)
    np.testing.assert_allclose(x.grad.cpu().numpy(), [expected, expected], rtol=1e-6)


def test_branch_recorded_but_not_differentiated(device):
    """y feeds two losses; backward of one must neither wait for the other nor touch it."""
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 2
    z1 = (y * 3).sum()
    z2 = (y * 5).sum()
    z1.backward(retain_graph=True)
    assert x.grad.tolist() == [6.0, 6.0]
    z2.backward()
    assert x.grad.tolist() == [16.0, 16.0]


def test_several_roots_and_a_later_graph_reusing_an_earlier_node(device):
    x = engine.tensor([1.0, -1.0], device=device, requires_grad=True)
    h = (x * 3).clamp(min=0)  # recorded first
    a = (h * h).sum()
    later = engine.tensor([2.0, 2.0], device=device, requires_grad=True)
    b = (h * later).sum()  # recorded after a, reuses h
    engine.autograd.backward([a, b])
    # d/dx: (2*h*3 + later*3) where x*3 > 0, else 0
    assert x.grad.tolist() == [2 * 3.0 * 3 + 2.0 * 3, 0.0]
    assert later.grad.tolist() == [3.0, 0.0]


def test_grad_of_an_intermediate_waits_for_all_its_consumers(device):
    x = engine.tensor(2.0, device=device, requires_grad=True)
    h = x * x
    out = h * 3 + (h * h) * 0.5 + h
    (g,) = engine.autograd.grad(out, h)
    assert g.item() == 3 + h.item() + 1
