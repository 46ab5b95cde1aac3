"""Autograd semantics and errors, as PyTorch gives them."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)


def test_gradients_accumulate_across_backward_calls(device):
    w = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    assert w.grad.tolist() == [6.0, 6.0]
    w.grad.zero_()
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_value_used_twice_accumulates(device):
    a = engine.tensor(3.0, device=device, requires_grad=True)
    b = a * a + a  # d/da = 2a + 1
    b.backward()
    assert a.grad.item() == 7.0


# A leaf reached twice, with another branch still on its way: Add's backward hands one array to both inputs, so
# the leaf's .grad (that array, given as it was) and the other branch's pending gradient were one array, and the
# leaf's second gradient, added in place, was added to the other branch too (x + w * w + x gave w.grad 4w)
X = [[1.0, -2.0, 3.0], [-0.5, 0.25, 2.0]]
W = [[0.5, 1.5, -1.0], [2.0, -3.0, 0.1]]
TWICE = {
    "x + w * w + x": (lambda lib, x, w: x + w * w + x, lambda x, w: (2 * np.ones_like(x), 2 * w)),
    "x + relu(w) + x": (lambda lib, x, w: x + (w * 1).relu() + x, lambda x, w: (2 * np.ones_like(x), 1.0 * (w > 0))),
    "w * 3 + x * 2 + x": (lambda lib, x, w: w * 3 + x * 2 + x, lambda x, w: (3 * np.ones_like(x), 3 * np.ones_like(w))),
    "x + outer(u, v) + x": (lambda lib, x, w: x + w[:, 0].outer(lib.ones(3, dtype=lib.float64, device=w.device)) + x,
                            lambda x, w: (2 * np.ones_like(x), np.array([[3.0, 0, 0], [3.0, 0, 0]]))),
    "x + w + x + w": (lambda lib, x, w: x + w + x + w, lambda x, w: (2 * np.ones_like(x), 2 * np.ones_like(w))),
    "x + (x + w.exp()) + x": (lambda lib, x, w: x + (x + w.exp()) + x, lambda x, w: (3 * np.ones_like(x), np.exp(w))),
}


@pytest.mark.parametrize("name", sorted(TWICE))
def test_a_leaf_reached_twice_leaves_the_other_branch_alone(name, device):
    f, expected = TWICE[name]
    x = engine.tensor(X, dtype=engine.float64, device=device, requires_grad=True)
    w = engine.tensor(W, dtype=engine.float64, device=device, requires_grad=True)
    f(engine, x, w).sum().backward()
    gx, gw = expected(np.array(X), np.array(W))
    np.testing.assert_allclose(x.grad.cpu().numpy(), gx, rtol=1e-12)
    np.testing.assert_allclose(w.grad.cpu().numpy(), gw, rtol=1e-12)
    with engine.no_grad():  # a second backward adds in place into the .grad arrays: still the sums
        x.grad.zero_()
    f(engine, x, w).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), 2 * gw, rtol=1e-12)
    np.testing.assert_allclose(x.grad.cpu().numpy(), gx, rtol=1e-12)


def test_shared_gradients_do_not_alias(device):
    """add's backward hands the same array to both inputs; zeroing one .grad must not zero the other."""
    a = engine.ones(3, device=device, requires_grad=True)
    b = engine.ones(3, device=device, requires_grad=True)
    (a + b).sum().backward()
    a.grad.zero_()
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_user_gradient_is_not_aliased(device):
    a = engine.ones(3, device=device, requires_grad=True)
    g = engine.tensor([1.0, 2.0, 3.0], device=device)
    (a * 1).backward(g)
    a.grad.zero_()
    assert g.tolist() == [1.0, 2.0, 3.0]


def test_deep_graph_has_no_recursion_limit():
    x = engine.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_retain_graph_allows_second_backward(device):
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_second_backward_through_freed_graph_raises(device):
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_backward_non_scalar_needs_gradient(device):
    x = engine.ones(2, 2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(engine.ones(2, 2, device=device))
    assert x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_backward_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        engine.ones(2).sum().backward()


def test_inplace_on_leaf_requiring_grad_raises_outside_no_grad(device):
    w = engine.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w -= 1.0
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w[0] = 5.0
    assert w.tolist() == [1.0, 1.0, 1.0]  # nothing half-done
    with engine.no_grad():
        w -= 1.0
    assert w.tolist() == [0.0, 0.0, 0.0]


def test_inplace_on_nonleaf_is_recorded(device):
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 2
    y += x * x  # y = 2x + x^2
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]


def test_requires_grad_on_integer_tensor_raises():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        engine.tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        engine.arange(3).requires_grad_()


def test_mm_shape_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"64x1000 and 100x10"):
        engine.randn(64, 1000).mm(engine.randn(100, 10))
    with pytest.raises(RuntimeError, match="^self must be a matrix$"):  # PyTorch's words
        engine.randn(3).mm(engine.randn(3, 2))


def test_unknown_device_string_raises():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type at start of device string: 'tpu'"):
        engine.device("tpu")
    with pytest.raises(RuntimeError, match="device string"):
        engine.zeros(2, device="gpu:0")


def test_different_devices_in_one_op_name_both(cuda_device):
    a = engine.ones(2)
    b = engine.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match=r"cpu and cuda:0"):
        a + b
    with pytest.raises(RuntimeError, match=r"cuda:0 and cpu"):
        b * a
    with pytest.raises(RuntimeError, match=r"cpu and cuda:0"):
        engine.ones(2, 2).mm(engine.ones(2, 2, device="cuda"))


def test_retain_grad_and_is_leaf(device):
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    assert x.is_leaf and not h.is_leaf
    assert h.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]


def test_detach_and_data_share_memory(device):
    x = engine.tensor([1.0, 2.0], device=device, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 7.0
    assert x.tolist()[0] == 7.0
    x.data -= 1.0  # the pre-no_grad tutorial spelling
    assert x.tolist() == [6.0, 1.0]


def test_autograd_grad_returns_without_touching_grad(device):
    x = engine.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    h = x * x
    y = (h * 2).sum()
    gx, gh = engine.autograd.grad(y, [x, h])
    assert gx.tolist() == [4.0, 8.0, 12.0]
    assert gh.tolist() == [2.0, 2.0, 2.0]
    assert x.grad is None
    z = engine.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="not have been used"):
        engine.autograd.grad((x * 2).sum(), [z])


def test_no_grad_context_and_decorator():
    x = engine.ones(2, requires_grad=True)
    assert (x**2).requires_grad
    with engine.no_grad():
        assert not (x**2).requires_grad
        with engine.enable_grad():
            assert (x**2).requires_grad
    assert engine.is_grad_enabled()

    @engine.no_grad()
    def f():
        return (x * 2).requires_grad

    assert f() is False
    assert engine.is_grad_enabled()


def test_grad_mode_decorators_without_parentheses_as_pytorch_2():
    x = engine.ones(2, requires_grad=True)

    @engine.no_grad
    def off():
        return (x * 2).requires_grad

    @engine.inference_mode
    def inferring():
        return (x * 2).requires_grad

    @engine.enable_grad
    def on():
        return (x * 2).requires_grad

    assert off() is False and inferring() is False and off.__name__ == "off"
    with engine.no_grad():
        assert on() is True
    assert engine.is_grad_enabled()


def test_grad_mode_is_per_thread():
    """The app trains in a worker thread: the GUI thread's no_grad must not leak into it, nor back."""
    x = engine.ones(2, requires_grad=True)
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def worker():
        seen["worker_initial"] = engine.is_grad_enabled()
        with engine.no_grad():
            inside.set()
            release.wait(5)
            seen["worker_tracked"] = (x * 2).requires_grad

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main_while_worker_no_grad"] = (x * 2).requires_grad
    with engine.no_grad():
        release.set()
        t.join(5)
    assert seen == {"worker_initial": True, "worker_tracked": False, "main_while_worker_no_grad": True}



def test_the_grad_mode_shortcut_holds_across_threads_and_after_a_thread_ends_switched_off():
    """Recorded ops read the mode through a shortcut (no thread off: on everywhere). Each op kind the step uses
    (operator, mm, pow, clamp, sum) must see the thread's own mode while another thread is off, and a thread that
    ends switched off must not switch anyone else off."""
    from engine.autograd import grad_mode

    x = engine.ones(2, 2, requires_grad=True)
    ops = (lambda: x * 2, lambda: x.mm(x), lambda: x.pow(2), lambda: x.clamp(min=0), lambda: x.sum())
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def off_and_stay_off():
        engine.set_grad_enabled(False)  # the function form: never switched back
        seen["worker"] = [op().requires_grad for op in ops]
        inside.set()
        release.wait(5)

    t = threading.Thread(target=off_and_stay_off)
    t.start()
    inside.wait(5)
    assert grad_mode._off  # the worker is off: the shortcut is not taken
    seen["main_while_worker_off"] = [op().requires_grad for op in ops]
    with engine.no_grad():
        seen["main_no_grad"] = [op().requires_grad for op in ops]
        seen["main_no_grad_enabled"] = engine.is_grad_enabled()
    release.set()
    t.join(5)
    seen["main_after"] = [op().requires_grad for op in ops]
    assert seen == {"worker": [False] * 5, "main_while_worker_off": [True] * 5, "main_no_grad": [False] * 5,
                    "main_no_grad_enabled": False, "main_after": [True] * 5}
    assert engine.is_grad_enabled()
    assert t.ident not in grad_mode._off  # it left when the thread ended: the shortcut is back

class MyReLU(engine.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


def test_custom_function_matches_builtin(device):
    x = engine.tensor([[-1.0, 2.0], [3.0, -4.0]], device=device, requires_grad=True)
    y = MyReLU.apply(x)
    assert y.grad_fn is not None and y.grad_fn.name() == "MyReLUBackward"
    (y * engine.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0], [3.0, 0.0]]


def test_custom_function_ctx_needs_input_grad_and_extra_args():
    class Scale(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            ctx.flags = ctx.needs_input_grad
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None

    x = engine.ones(3, requires_grad=True)
    y = Scale.apply(x, 4.0)
    y.sum().backward()
    assert y.grad_fn.flags == (True, False)
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_custom_function_wrong_gradient_count():
    class Bad(engine.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    a = engine.ones(2, requires_grad=True)
    b = engine.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(a, b).sum().backward()


def test_custom_function_saved_tensors_freed_after_backward():
    x = engine.ones(2, requires_grad=True)
    y = MyReLU.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        _ = y.grad_fn.saved_tensors


def test_multi_output_function():
    class Split(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = engine.ones(2, requires_grad=True)
    a, b = Split.apply(x)
    a.sum().backward()  # b's gradient is zero
    assert x.grad.tolist() == [2.0, 2.0]


def test_to_and_cast_are_differentiable():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    y = x.double() * 3
    assert y.dtype == engine.float64
    y.sum().backward()
    assert x.grad.dtype == engine.float32
    assert x.grad.tolist() == [3.0, 3.0]


def test_numpy_interop():
    x = engine.tensor([1.0, 2.0])
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.tolist() == [1.0, 2.0]
    assert isinstance(np.ones(2) * x, engine.Tensor)
    with pytest.raises(RuntimeError, match="detach"):
        engine.ones(2, requires_grad=True).numpy()
    shared = np.zeros(3)
    t = engine.from_numpy(shared)
    t += 1
    assert shared.tolist() == [1.0, 1.0, 1.0]


def test_fill_and_zero_in_the_graph_ignore_old_values(device):
    x = engine.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * engine.tensor([float("inf"), 1.0, 1.0], device=device)  # inf in the first element
    y.zero_()
    assert y.tolist() == [0.0, 0.0, 0.0] and y.requires_grad  # not NaN
    z = x * 2
    z.fill_(7.0)
    assert z.tolist() == [7.0, 7.0, 7.0]
    (z + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]  # only through "+ x": the overwritten values pass nothing back


def test_inplace_in_the_graph_keeps_the_dtype(device):
    x = engine.ones(3, device=device, requires_grad=True)
    y = x * 2  # float32, in the graph
    y += engine.ones(3, dtype=engine.float64, device=device)
    assert y.dtype == engine.float32 and y.tolist() == [3.0, 3.0, 3.0]
    y.sum().backward()
    assert x.grad.dtype == engine.float32 and x.grad.tolist() == [2.0, 2.0, 2.0]
    plain = engine.ones(2)
    plain += engine.ones(2, dtype=engine.float64)
    assert plain.dtype == engine.float32


@pytest.mark.parametrize(("a_shape", "b_shape"), [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                                                  ((4, 2, 3), (3,)), ((3,), (4, 3, 2)), ((4, 2, 3), (3, 5)),
                                                  ((2, 3), (4, 3, 5)), ((4, 2, 3), (4, 3, 5))])
def test_every_product_shape_has_its_gradient_and_keeps_its_name_after_backward(a_shape, b_shape):
    """``@`` with 1-D, 2-D and batched operands: gradients against central differences, and the node still named
    (printed) after backward has freed what it saved (``v @ v`` once raised in backward, and printing a product's
    output after backward raised in its name)."""
    rng = np.random.default_rng(0)
    a = engine.tensor(rng.normal(size=a_shape), requires_grad=True)
    b = engine.tensor(rng.normal(size=b_shape), requires_grad=True)
    assert engine.autograd.gradcheck(lambda a, b: a @ b, (a, b))
    out = a @ b
    name = out.grad_fn.name()
    (out * 1.5).sum().backward()
    assert out.grad_fn.name() == name and f"grad_fn=<{name}>" in repr(out)
    if len(a_shape) == len(b_shape) == 1:  # the dot product's gradients, worked by hand
        np.testing.assert_allclose(a.grad.numpy(), 1.5 * b.detach().numpy(), rtol=1e-15)
        np.testing.assert_allclose(b.grad.numpy(), 1.5 * a.detach().numpy(), rtol=1e-15)
