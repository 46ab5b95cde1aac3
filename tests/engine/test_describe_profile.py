"""engine.autograd.describe (the graph backward() walks) and engine.profiler (where a step's time goes)."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

import engine as torch
from engine.autograd.describe import describe, tensor_stats
from engine.profiler import UNDO_BROADCAST, category_of, profile
from tests.engine.helpers import python_paths


def _two_layer(seed=0):
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.standard_normal((16, 6)))
    y = torch.from_numpy(rng.standard_normal((16, 3)))
    w1 = torch.from_numpy(rng.standard_normal((6, 8))).requires_grad_()
    w2 = torch.from_numpy(rng.standard_normal((8, 3))).requires_grad_()
    return x, y, w1, w2


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):  # noqa: A002
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors  # noqa: A001
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


# ---------------------------------------------------------------------------------------------------- describe
def test_the_tutorial_graph_is_described_node_by_node_with_edges_shapes_and_named_leaves():
    x, y, w1, w2 = _two_layer()
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    g = describe(loss, {"w1": w1, "w2": w2})
    assert [(n.op, n.kind, n.shape, n.name) for n in g.nodes] == [
        ("Sum", "op", (), None), ("Pow", "op", (16, 3), None), ("Sub", "op", (16, 3), None),
        ("MatMul", "op", (16, 3), None), ("Clamp", "op", (16, 8), None), ("AccumulateGrad", "leaf", (8, 3), "w2"),
        ("MatMul", "op", (16, 8), None), ("AccumulateGrad", "leaf", (6, 8), "w1")]
    assert set(g.edges) == {(1, 0), (2, 1), (3, 2), (4, 3), (5, 3), (6, 4), (7, 6)}
    assert [n.depth for n in g.nodes] == [0, 1, 2, 3, 4, 4, 5, 6]
    assert all(n.dtype == "float64" and n.device == "cpu" for n in g.nodes)
    assert [n.name for n in g.leaves] == ["w2", "w1"]
    assert g.root_shape == () and g.root_dtype == "float64"
    assert g.to_dict()["nodes"][3]["inputs"] == [4, 5]  # the product takes h_relu, then w2: argument order
    # each node also carries the name print(loss.grad_fn) shows, as PyTorch's
    assert [n.grad_fn for n in g.nodes] == ["SumBackward0", "PowBackward0", "SubBackward0", "MmBackward0",
                                            "ClampBackward1", None, "MmBackward0", None]
    assert g.to_dict()["nodes"][0]["grad_fn"] == "SumBackward0" == loss.grad_fn.name()


def test_stats_show_the_relu_mask_as_zeros_of_the_gradient_and_leave_the_graph_usable():
    x, y, w1, w2 = _two_layer(1)
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    g = describe(loss, {"w1": w1, "w2": w2}, stats=True)
    h = x.numpy() @ w1.detach().numpy()
    first_product = g.nodes[6]
    assert first_product.op == "MatMul" and first_product.shape == (16, 8)
    assert first_product.grad["zeros"] == pytest.approx(np.mean(h < 0))  # the ReLU's mask, made visible
    assert first_product.output["min"] == pytest.approx(h.min())
    assert g.nodes[4].output["zeros"] == pytest.approx(np.mean(h <= 0))  # the clamp's output
    assert g.nodes[0].grad["max"] == 1.0  # d loss / d loss
    loss.backward()  # describe(stats=True) kept the graph
    h_relu = np.maximum(h, 0)
    grad_y = 2 * (h_relu @ w2.detach().numpy() - y.numpy())
    np.testing.assert_allclose(w2.grad.numpy(), h_relu.T @ grad_y, rtol=1e-12)
    assert g.nodes[5].grad["norm"] == pytest.approx(np.linalg.norm(h_relu.T @ grad_y))


def test_a_user_function_is_a_node_of_its_own_kind():
    x, y, w1, w2 = _two_layer()
    loss = (MyReLU.apply(x.mm(w1)).mm(w2) - y).pow(2).sum()
    g = describe(loss)
    relu = g.by_op("MyReLU")
    assert len(relu) == 1 and relu[0].kind == "function" and relu[0].shape == (16, 8)
    assert [n.op for n in g.nodes if n.kind == "op"] == ["Sum", "Pow", "Sub", "MatMul", "MatMul"]
    assert all(n.name is None for n in g.leaves)  # no names given


def test_a_shared_weight_is_one_leaf_with_one_edge_per_use():
    """The dynamic net's e multiplies x^4 and x^5: one leaf, two consumers, and depth below both."""
    x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    e = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    a = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    loss = (a + e * x ** 4 + e * x ** 5).pow(2).sum()
    g = describe(loss, {id(e): "e", id(a): "a"})
    (leaf_e,) = [n for n in g.leaves if n.name == "e"]
    consumers = [n for n in g.nodes if leaf_e.id in n.inputs]
    assert [c.op for c in consumers] == ["Mul", "Mul"]
    assert leaf_e.depth > max(c.depth for c in consumers)
    assert len([edge for edge in g.edges if edge[0] == leaf_e.id]) == 2


def test_the_poly_family_graph_has_one_leaf_per_coefficient():
    x = torch.linspace(-3, 3, 50, dtype=torch.float32)
    c = [torch.tensor(v, dtype=torch.float32, requires_grad=True) for v in (0.1, 0.2, 0.3, 0.4)]
    loss = (c[0] + c[1] * x + c[2] * x ** 2 + c[3] * x ** 3 - torch.sin(x)).pow(2).sum()
    g = describe(loss, dict(zip("abcd", c)))
    assert sorted(n.name for n in g.leaves) == ["a", "b", "c", "d"]
    assert all(n.shape == () and n.dtype == "float32" for n in g.leaves)
    assert len(g.by_op("Mul")) == 3 and len(g.by_op("Add")) == 3


def test_describe_refuses_what_has_no_graph():
    with pytest.raises(RuntimeError, match="no recorded graph"):
        describe(torch.ones(3).sum())
    with pytest.raises(TypeError, match="takes a Tensor"):
        describe(np.ones(3))


def test_tensor_stats():
    s = tensor_stats(np.array([[0.0, 3.0], [-4.0, 0.0]], dtype=np.float32))
    assert s == {"norm": 5.0, "min": -4.0, "max": 3.0, "mean": -0.25, "zeros": 0.5, "size": 4}


# ---------------------------------------------------------------------------------------------------- profile
def _autograd_step(x, y, w1, w2):
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w1 -= 1e-4 * w1.grad
        w2 -= 1e-4 * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
    return loss.detach()


def test_a_step_is_profiled_op_by_op_forward_and_backward():
    args = _two_layer()
    with profile() as prof:
        _autograd_step(*args)
    prof.finish(1.0)
    ops = [(r.phase, r.op) for r in prof.records]
    assert ops == [
        ("forward", "MatMul"), ("forward", "Clamp"), ("forward", "MatMul"), ("forward", "Sub"), ("forward", "Pow"),
        ("forward", "Sum"),
        ("backward", "Sum backward"), ("backward", "Pow backward"), ("backward", "Sub backward"),
        ("backward", "MatMul backward"), ("backward", "Clamp backward"), ("backward", "MatMul backward"),
        ("forward", "Mul"), ("forward", "Sub_"), ("forward", "Mul"), ("forward", "Sub_"), ("forward", "Zero_"),
        ("forward", "Zero_"), ("forward", "Detach")]
    assert all(r.cpu_s > 0 and r.gpu_s is None for r in prof.records)
    assert prof.walk_s > 0
    # the rows and the rest add up to the step the caller measured
    assert sum(prof.by_category().values()) == pytest.approx(1.0)
    assert {row["op"]: row["calls"] for row in prof.by_op()}["MatMul backward"] == 2


def test_a_call_inside_a_timed_call_belongs_to_it():
    """mm applies MatMul; a user's backward runs clone and __setitem__: one entry each, never two."""
    x, y, w1, w2 = _two_layer()
    with profile() as prof:
        loss = (MyReLU.apply(x.mm(w1)).mm(w2) - y).pow(2).sum()
        loss.backward()
    names = [r.op for r in prof.records]
    assert names.count("MatMul") == 2 and "mm" not in names
    assert names.count("MyReLU") == 1 and "Clamp" not in names
    assert "MyReLU backward" in names and "Clone" not in names and "SetItem" not in names


def test_a_users_function_bound_before_the_block_is_timed_under_its_own_name():
    """The tutorial writes ``relu = MyReLU.apply`` before its loop: the profile must still see MyReLU, not the
    clamp inside it."""
    x, y, w1, w2 = _two_layer()
    relu = MyReLU.apply
    with profile() as prof:
        loss = (relu(x.mm(w1)).mm(w2) - y).pow(2).sum()
        loss.backward()
    prof.finish(1.0)
    names = [r.op for r in prof.records]
    assert names[:2] == ["MatMul", "MyReLU"] and "Clamp" not in names
    # clamp in MyReLU's forward; clone, < and []= in its backward: inside timed calls, counted, not timed
    assert prof.passes == {"nested call": 4, "apply": 1, "backward": 1}


def test_the_profiles_own_cost_is_each_way_through_it_times_its_measured_cost():
    args = _two_layer()
    with profile() as prof:
        _autograd_step(*args)
    prof.finish(1.0)
    assert set(prof.cost_s) == {"call", "apply", "node", "backward", "nested call"}
    # (each a median of differences, floored at 0: the nested call's, a few ns, can measure 0 on a busy machine)
    assert all(0 <= c < 1e-4 for c in prof.cost_s.values()), prof.cost_s
    nodes = sum(r.phase == "backward" for r in prof.records)
    assert nodes == 6 and prof.passes == {"nested call": 0, "apply": 0, "backward": 1}
    c = prof.cost_s
    expected = c["node"] * 6 + c["call"] * (len(prof.records) - 6) + c["backward"]
    assert prof.own_s == pytest.approx(expected)
    assert prof.outside_s == pytest.approx(1.0 - prof.engine_s - expected)


def test_the_methods_and_the_walk_are_as_they_were_after_the_block_even_after_an_error():
    before = {name: torch.Tensor.__dict__[name] for name in ("mm", "backward", "__sub__", "zero_")}
    apply = torch.autograd.Function.__dict__["apply"]
    with pytest.raises(ZeroDivisionError), profile():
        raise ZeroDivisionError
    assert {name: torch.Tensor.__dict__[name] for name in before} == before
    assert torch.autograd.Function.__dict__["apply"] is apply
    from engine.autograd import function, graph
    assert graph._observer is None and function._hook is None
    with profile():
        with pytest.raises(RuntimeError, match="another profile"), profile():
            pass


def test_another_threads_engine_work_is_not_in_the_profile():
    x, y, w1, w2 = _two_layer()
    w = w1.detach()
    done = threading.Event()

    def other():
        for _ in range(50):
            (x + x).sum()
        done.set()

    with profile() as prof:
        t = threading.Thread(target=other)
        t.start()
        t.join()
        x.mm(w)
    assert done.is_set()
    assert [r.op for r in prof.records] == ["MatMul"]


def test_an_optimizer_step_is_one_update_entry():
    x, y, w1, w2 = _two_layer()
    opt = torch.optim.Adam([w1, w2], lr=1e-3)
    with profile() as prof:
        (x.mm(w1).mm(w2) - y).pow(2).sum().backward()
        opt.step()
        opt.zero_grad()
    prof.finish(1.0)
    rows = {r.op: r.category for r in prof.records}
    assert rows["Adam.step"] == "update" and rows["Optimizer.zero_grad"] == "update"


@pytest.mark.parametrize("paths", ["compiled", "python"])
def test_the_walks_sums_that_undo_broadcasting_are_rows_of_their_own(paths):
    """The fit's coefficients are 0-d: each gets the sum of 50 points' gradients, summed by the walk. Those sums
    are work, and were counted as the walk's bookkeeping (a quarter of the poly-function step)."""
    xs = np.linspace(-1.0, 1.0, 50)
    x = torch.from_numpy(xs)
    a = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    with python_paths() if paths == "python" else contextlib.nullcontext(), profile() as prof:
        (a + b * x).pow(2).sum().backward()
    prof.finish(1.0)
    rows = [r for r in prof.records if r.op == UNDO_BROADCAST]
    assert len(rows) == 2 and all(r.phase == "backward" and r.cpu_s > 0 for r in rows)  # a's and b's, 50 -> ()
    assert rows[0].category == "elementwise"
    np.testing.assert_allclose(a.grad.numpy(), np.sum(2 * (0.5 + 2.0 * xs)))
    np.testing.assert_allclose(b.grad.numpy(), np.sum(2 * (0.5 + 2.0 * xs) * xs))
    assert sum(prof.by_category().values()) == pytest.approx(1.0)
    with profile() as prof:  # no broadcast, no such row
        (b * b).sum().backward()
    assert UNDO_BROADCAST not in [r.op for r in prof.records]


def test_categories():
    assert category_of("MatMul") == "matrix product" and category_of("MatMul backward") == "matrix product"
    assert category_of("Sub_") == "update" and category_of("SGD.step") == "update"
    assert category_of("Transpose") == "shape" and category_of("Clamp backward") == "elementwise"
    assert category_of("MyReLU") == "elementwise"


def test_on_a_gpu_each_entry_has_its_event_time_read_after_one_synchronisation(cuda_device, simulated_gpu):
    x, y, w1, w2 = (t.detach().to("cuda") for t in _two_layer())
    w1.requires_grad_()
    w2.requires_grad_()
    simulated_gpu.syncs.clear()
    with profile("cuda") as prof:
        (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum().backward()
        assert simulated_gpu.syncs == []  # events record, nothing waits while the step runs
    prof.finish(1.0)
    assert simulated_gpu.syncs == ["cudaEventSynchronize"]
    assert len(prof.records) == 12
    assert all(r.gpu_s is not None and r.gpu_s >= 0 for r in prof.records)
    assert prof.gpu_total_s == pytest.approx(sum(r.gpu_s for r in prof.records))
    assert "GPU ms" in prof.table() and "GPU busy" in prof.table()


def test_on_a_gpu_a_users_function_is_one_entry_with_its_event_time(cuda_device, simulated_gpu):
    x, y, w1, w2 = (t.detach().to("cuda") for t in _two_layer())
    w1.requires_grad_()
    relu = MyReLU.apply
    with profile("cuda") as prof:
        (relu(x.mm(w1)).mm(w2) - y).pow(2).sum().backward()
    prof.finish(1.0)
    names = [r.op for r in prof.records]
    assert names[:2] == ["MatMul", "MyReLU"] and "Clamp" not in names and "Clone" not in names
    assert "MyReLU backward" in names and prof.passes["apply"] == 1
    with profile("cuda") as prof:
        (x.sum(1, keepdim=True) * w1[0]).sum().backward()  # w1[0] broadcast over x's rows: its gradient summed
    prof.finish(1.0)
    (row,) = [r for r in prof.records if r.op == UNDO_BROADCAST]
    assert row.phase == "backward" and row.gpu_s is not None and row.gpu_s >= 0
    assert all(r.gpu_s is not None and r.gpu_s >= 0 for r in prof.records)
