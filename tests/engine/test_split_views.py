"""``split``, ``chunk``, ``unbind`` and their ``unsafe_`` forms as PyTorch records them: one node whose outputs are
views of the input's pieces (``SplitBackward0``, ``SplitWithSizesBackward0``, ``UnbindBackward0``,
``UnsafeSplitBackward0``), whose backward joins the pieces' gradients in one array (zeros for a piece no path
used); PyTorch's refusal of an in-place write into a piece or a view of one, and of a piece's gradient once its
base was written. Then ``view``, which refuses a shape the strides cannot show, and ``reshape``'s three nodes
(``ViewBackward0``; ``ReshapeAliasBackward0`` for a view of a non-contiguous tensor; ``CloneBackward0`` and
``UnsafeViewBackward0`` for a copy); and ``glu``, one ``GluBackward0``.

The expected values are worked out here; each torch-marked test also runs the same code in torch 2.13 and compares.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

TAIL = ("This view is the output of a function that returns multiple views. Such functions do not allow the output "
        "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


def _torch():
    return pytest.importorskip("torch")


def _x(m, shape=(2, 3)):
    """A leaf of 1, 2, 3, ... and a non-leaf made from it (``x * 1``), in the module ``m`` (engine or torch)."""
    x = m.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=True)
    return x, x * 1


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and words are what is compared
        return type(e).__name__, str(e)
    return None


# ---------------------------------------------------------------------------------------------- one node, views

NODES = [  # (expression on a (2, 3) non-leaf ``a``, the node's name, how many pieces)
    ("a.split(1)", "SplitBackward0", 2), ("a.split(2, 1)", "SplitBackward0", 2),
    ("a.split(5, 1)", "SplitBackward0", 1), ("a.split([1, 2], 1)", "SplitWithSizesBackward0", 2),
    ("engine.split(a, (2, 0, 1), 1)", "SplitWithSizesBackward0", 3), ("a.chunk(2, 1)", "SplitBackward0", 2),
    ("a.chunk(3)", "SplitBackward0", 2), ("a.split_with_sizes([1, 1])", "SplitWithSizesBackward0", 2),
    ("a.unbind(1)", "UnbindBackward0", 3), ("a.unbind()", "UnbindBackward0", 2),
    ("a.unsafe_chunk(3, 1)", "UnsafeSplitBackward0", 3), ("a.unsafe_split(2, 1)", "UnsafeSplitBackward0", 2),
    ("a.unsafe_split_with_sizes([2, 1], 1)", "UnsafeSplitWithSizesBackward0", 2),
]


@pytest.mark.parametrize(("expression", "name", "count"), NODES, ids=[e for e, _, _ in NODES])
def test_the_pieces_are_views_made_by_one_node(expression, name, count):
    _, a = _x(engine)
    pieces = eval(expression)  # noqa: S307 - the table's own expressions
    assert len(pieces) == count
    node = pieces[0].grad_fn
    assert node.name() == name and all(p.grad_fn is node for p in pieces)
    assert [p._out_index for p in pieces] == list(range(count))
    assert node.next_functions == ((a.grad_fn, 0),)
    # a consumer's edge names the piece it took: (node, index)
    assert (pieces[-1] * 2).grad_fn.next_functions[0] == (node, count - 1)
    for p in pieces:  # each piece is a view of a's memory
        assert np.shares_memory(p.detach().numpy(), a.detach().numpy()) or p.numel() == 0


@pytest.mark.torch
@pytest.mark.parametrize(("expression", "name", "count"), NODES, ids=[e for e, _, _ in NODES])
def test_the_nodes_are_torchs(expression, name, count):
    torch = _torch()
    _, a = _x(torch)
    pieces = eval(expression.replace("engine.", "torch."))  # noqa: S307 - the table's own expressions
    assert (pieces[0].grad_fn.name(), len(pieces)) == (name, count)
    assert [tuple(p.shape) for p in pieces] == [tuple(p.shape) for p in eval(expression, {"a": _x(engine)[1],  # noqa: S307
                                                                                               "engine": engine})]


def test_backward_joins_the_pieces_gradients_with_zeros_for_an_unused_one():
    x, a = _x(engine, (3, 5))
    p, q, r = a.split([1, 3, 1], 1)
    (p * 2 + r * 3).sum().backward()  # q unused: zeros where it was
    want = np.zeros((3, 5))
    want[:, 0], want[:, 4] = 2.0, 3.0
    np.testing.assert_array_equal(x.grad.numpy(), want)
    x, a = _x(engine, (3, 5))
    rows = a.unbind(0)
    (rows[0] * 1 + rows[2] * engine.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0] * 5, [0.0] * 5, [1.0, 2.0, 3.0, 4.0, 5.0]])


def test_a_piece_used_twice_and_a_hook_on_a_piece():
    x, a = _x(engine)
    p, q = a.chunk(2, 1)  # (2, 2) and (2, 1)
    p.retain_grad()
    q.register_hook(lambda g: g * 10)
    (p * p).sum().backward(retain_graph=True)
    np.testing.assert_array_equal(p.grad.numpy(), 2 * p.detach().numpy())
    x.grad = None
    (p.sum() + q.sum() + q.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 1.0, 20.0], [1.0, 1.0, 20.0]])


def test_second_derivatives_through_the_join():
    x, a = _x(engine)
    p, q = a.split([2, 1], 1)
    (g,) = engine.autograd.grad((p ** 3).sum() + (q ** 2).sum(), x, create_graph=True)
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), np.concatenate([3 * xs[:, :2] ** 2, 2 * xs[:, 2:]], 1))
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.concatenate([6 * xs[:, :2], np.full((2, 1), 2.0)], 1))
    x2, a2 = _x(engine)
    u = a2.unbind(1)
    (g2,) = engine.autograd.grad((u[0] * u[2]).sum(), x2, create_graph=True)
    np.testing.assert_array_equal(g2.detach().numpy()[:, 1], [0.0, 0.0])
    g2.pow(2).sum().backward()  # d/dx of sum(x2^2 + x0^2) over the rows
    np.testing.assert_array_equal(x2.grad.numpy(), 2 * x2.detach().numpy() * [1, 0, 1])


@pytest.mark.torch
def test_gradients_and_second_derivatives_are_torchs():
    torch = _torch()

    def run(m):
        x, a = _x(m, (4, 6))
        p, q, r = a.split([1, 3, 2], 1)
        rows = a.unbind(0)
        c = a.chunk(4)
        loss = (p * q[:, :1]).sum() + (r ** 3).sum() + (rows[1] * rows[3]).sum() + c[2].exp().sum()
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return g.detach().numpy(), gg.numpy()

    for mine, theirs in zip(run(engine), run(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


# ------------------------------------------------------------------------------------------------ in-place writes

def _splits():
    x, a = _x(engine)
    p, q = a.split(1)
    return x, a, p, q


WRITES = [  # (what is written in place, the message's "Output i of Op")
    ("p.add_(1)", "Output 0 of Split"), ("q.mul_(2)", "Output 1 of Split"), ("p.zero_()", "Output 0 of Split"),
    ("p.view(3).mul_(2)", "Output 0 of View"), ("p.t().mul_(2)", "Output 0 of T"),
    ("p[0, 1:].mul_(2)", "Output 0 of Slice"), ("p.exp_()", "Output 0 of Split"),
    ("p.copy_(q)", "Output 0 of Split"), ("p.clamp_(0, 1)", "Output 0 of Split"),
    ("p.__setitem__((0, 0), 1.0)", "Output 0 of Select"), ("p.__setitem__((slice(None), slice(1, None)), 1.0)",
                                                           "Output 0 of Slice"),
    ("p.__setitem__((0, [0, 1]), 1.0)", "Output 0 of Select"), ("p.__setitem__(Ellipsis, 1.0)", "Output 0 of Split"),
]


@pytest.mark.parametrize(("write", "output"), WRITES, ids=[w for w, _ in WRITES])
def test_a_piece_or_a_view_of_one_is_not_written_in_place(write, output):
    x, a, p, q = _splits()
    before = a.detach().numpy().copy()
    with pytest.raises(RuntimeError) as e:
        eval(write)  # noqa: S307 - the table's own expressions
    assert str(e.value) == f"{output} is a view and is being modified inplace. {TAIL}"
    np.testing.assert_array_equal(a.detach().numpy(), before)  # nothing written
    (p.sum() + 2 * q.sum()).backward()  # and the graph is as it was: the refused write noted nothing
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0] * 3, [2.0] * 3])


@pytest.mark.torch
@pytest.mark.parametrize(("write", "output"), WRITES, ids=[w for w, _ in WRITES])
def test_the_refusals_are_torchs(write, output):
    torch = _torch()
    x, a = _x(torch)
    p, q = a.split(1)
    assert _error(lambda: eval(write, {"p": p, "q": q})) == (  # noqa: S307 - the table's own expressions
        "RuntimeError", f"{output} is a view and is being modified inplace. {TAIL}")


def test_the_pieces_of_a_leaf_are_refused_too():
    x = engine.ones(2, 3, requires_grad=True)
    p, _ = x.split(1)
    assert _error(lambda: p.mul_(2)) == ("RuntimeError", f"Output 0 of Split is a view and is being modified "
                                                         f"inplace. {TAIL}")


REBASED = "is a view and its base or another view of its base has been modified inplace"


@pytest.mark.parametrize("write", ["a.mul_(2)", "a.__setitem__((0, 0), 7.0)", "a[1].mul_(2)", "a.t().add_(1)"])
def test_a_piece_has_no_gradient_once_its_base_was_written(write):
    """The piece shows the written values, which its node cannot account for: PyTorch refuses its gradient (at
    ``grad_fn``; here at backward), and so does the engine, for a view made from the piece too."""
    x, a = _x(engine)
    p, q = a.split(1)
    v = p[0]
    eval(write)  # noqa: S307 - the table's own expressions
    for t, output in ((p, "Output 0 of Split"), (q, "Output 1 of Split"), (v, "Output 0 of Select")):
        assert _error(lambda: t.sum().backward()) == ("RuntimeError", f"{output} {REBASED}. {TAIL}")  # noqa: B023
    a.sum().backward()  # the base itself still has its gradient
    assert x.grad is not None


@pytest.mark.torch
def test_the_refusal_after_a_write_into_the_base_is_torchs():
    torch = _torch()
    x, a = _x(torch)
    p, q = a.split(1)
    v = p[0]
    a.mul_(2)
    for t, output in ((p, "Output 0 of Split"), (q, "Output 1 of Split"), (v, "Output 0 of Select")):
        assert _error(lambda: t.grad_fn) == ("RuntimeError", f"{output} {REBASED}. {TAIL}")  # noqa: B023


def test_unrecorded_pieces_and_unsafe_ones_are_written_into_the_base():
    y = engine.ones(2, 3)  # nothing requires grad: plain views, written through
    p, _ = y.split(1)
    p.mul_(2)
    np.testing.assert_array_equal(y.numpy(), [[2.0] * 3, [1.0] * 3])
    x, a = _x(engine)
    with engine.no_grad():
        p, _ = a.split(1)
        p.add_(1)
    np.testing.assert_array_equal(a.detach().numpy(), [[2.0, 3.0, 4.0], [4.0, 5.0, 6.0]])
    u, _ = a.unsafe_chunk(2)  # PyTorch leaves what a write does to the gradient to the caller
    u.add_(1)
    assert u.grad_fn.name() == "AddBackward0"
    np.testing.assert_array_equal(a.detach().numpy(), [[3.0, 4.0, 5.0], [4.0, 5.0, 6.0]])


# ------------------------------------------------------------------------------------------------ sizes, refusals

EDGES = [
    "engine.zeros(0).split(1)", "engine.zeros(0).split(0)", "engine.zeros(0, 2).unbind()", "engine.zeros(0).chunk(2)",
    "engine.zeros(3).split(5)", "engine.zeros(5).chunk(3)", "engine.zeros(6).chunk(4)", "engine.zeros(2, 0).split(1)",
    "engine.zeros(7).split([3, 0, 4])", "engine.zeros(6).split(2, -1)", "engine.zeros(2, 3).unbind(-1)",
]
ERRORS = [
    "engine.zeros(6).split(0)", "engine.zeros(6).split(-1)", "engine.zeros(0).split(-1)", "engine.zeros(6).split(2, 1)",
    "engine.zeros(6).split([2, 3])", "engine.zeros(6).split([7, -1])", "engine.zeros(6).split([8, -1])",
    "engine.zeros(6).chunk(0)", "engine.zeros(6).unbind(1)", "engine.tensor(1.0).split(1)",
    "engine.tensor(1.0).unbind()", "engine.tensor(1.0).chunk(1)", "engine.zeros(6).split(2.0)",
    "engine.zeros(6).split([2.0, 4])", "engine.zeros(6).chunk(2, 3)", "engine.zeros(6).unsafe_split([2, 4])",
]
EDGE_SIZES = [[[0]], [[0]], [], [[0], [0]], [[3]], [[2], [2], [1]], [[2], [2], [2]], [[1, 0], [1, 0]], [[3], [0], [4]],
              [[2], [2], [2]], [[2], [2], [2]]]
ERROR_WORDS = [
    ("RuntimeError", "split_size can only be 0 if dimension size is 0, but got dimension size of 6"),
    ("RuntimeError", "split expects split_size be non-negative, but got split_size=-1"),
    ("RuntimeError", "split expects split_size be non-negative, but got split_size=-1"),
    ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("RuntimeError", "split_with_sizes expects split_sizes to sum exactly to 6 (input tensor's size at dimension 0), "
                     "but got split_sizes=[2, 3]"),
    ("RuntimeError", "split_with_sizes expects split_sizes have only non-negative entries, but got "
                     "split_sizes=[7, -1]"),
    ("RuntimeError", "split_with_sizes expects split_sizes have only non-negative entries, but got "
                     "split_sizes=[8, -1]"),
    ("RuntimeError", "chunk expects `chunks` to be greater than 0, got: 0"),
    ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("RuntimeError", "split expects at least a 1-dimensional tensor"),
    ("IndexError", "Dimension specified as 0 but tensor has no dimensions"),
    ("RuntimeError", "chunk expects at least a 1-dimensional tensor"),
    ("TypeError", "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not float"),
    ("TypeError", "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, but found element "
                  "of type float at pos 0"),
    ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 3)"),
    ("TypeError", "unsafe_split(): argument 'split_size' (position 1) must be int, not list"),
]


@pytest.mark.parametrize(("expression", "sizes"), list(zip(EDGES, EDGE_SIZES)), ids=EDGES)
def test_the_pieces_of_empty_and_short_dimensions(expression, sizes):
    assert [list(p.shape) for p in eval(expression)] == sizes  # noqa: S307 - the table's own expressions


@pytest.mark.parametrize(("expression", "words"), list(zip(ERRORS, ERROR_WORDS)), ids=ERRORS)
def test_bad_sizes_are_refused_in_pytorchs_words(expression, words):
    assert _error(lambda: eval(expression)) == words  # noqa: S307 - the table's own expressions


@pytest.mark.torch
@pytest.mark.parametrize("expression", EDGES + ERRORS)
def test_the_sizes_and_refusals_are_torchs(expression):
    torch = _torch()
    mine = _error(lambda: [list(p.shape) for p in eval(expression)])  # noqa: S307 - the table's own expressions
    theirs = _error(lambda: [list(p.shape) for p in eval(expression.replace("engine.", "torch."),  # noqa: S307
                                                         {"torch": torch})])
    assert mine == theirs
    if mine is None:
        assert [list(p.shape) for p in eval(expression)] == [  # noqa: S307
            list(p.shape) for p in eval(expression.replace("engine.", "torch."), {"torch": torch})]  # noqa: S307


# ------------------------------------------------------------------------------------------------ view and reshape

RESHAPES = [  # (expression on a (4, 6) non-leaf ``a``, the node, whether the result shares a's memory)
    ("a.reshape(6, 4)", "ViewBackward0", True), ("a.reshape(4, 6)", "ViewBackward0", True),
    ("a[1:3].reshape(12)", "ViewBackward0", True), ("a[:, :1].reshape(4)", "ReshapeAliasBackward0", True),
    ("a[:, 2:4].reshape(4, 2, 1)", "ReshapeAliasBackward0", True),
    ("a.t().reshape(3, 2, 4)", "ReshapeAliasBackward0", True),
    ("a.t().reshape(6, 4)", "ReshapeAliasBackward0", True), ("a.t().reshape(6, 1, 4)", "ReshapeAliasBackward0", True),
    ("a.t().reshape(24)", "UnsafeViewBackward0", False), ("a[:, :2].flatten()", "UnsafeViewBackward0", False),
    ("a[::2].reshape(12)", "UnsafeViewBackward0", False), ("a.t().reshape(-1, 2)", "UnsafeViewBackward0", False),
    ("a[:, :1].view(4)", "ViewBackward0", True), ("a.t().view(6, 2, 2)", "ViewBackward0", True),
    ("a[:, 1:3].view(2, 2, 2)", "ViewBackward0", True), ("a.t().flatten().view(24)", "ViewBackward0", False),
]
NOT_VIEWS = ["a.t().view(24)", "a[:, :2].view(8)", "a[::2].view(-1)", "a.t().view(2, 12)", "a[:, 1:3].view(2, 4)"]
VIEW_REFUSAL = ("RuntimeError", "view size is not compatible with input tensor's size and stride (at least one "
                                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


@pytest.mark.parametrize(("expression", "name", "shares"), RESHAPES, ids=[e for e, _, _ in RESHAPES])
def test_reshape_views_where_it_can_and_copies_where_it_must(expression, name, shares):
    _, a = _x(engine, (4, 6))
    out = eval(expression)  # noqa: S307 - the table's own expressions
    assert out.grad_fn.name() == name
    assert np.shares_memory(out.detach().numpy(), a.detach().numpy()) == shares
    if name == "UnsafeViewBackward0":  # a copy, made contiguous by one CloneBackward0
        assert out.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    with engine.no_grad():
        np.testing.assert_array_equal(out.detach().numpy(), eval(expression).numpy())  # noqa: S307 - unrecorded


@pytest.mark.parametrize("expression", NOT_VIEWS)
def test_view_refuses_what_its_strides_cannot_show(expression):
    _, a = _x(engine, (4, 6))
    assert _error(lambda: eval(expression, {"a": a})) == VIEW_REFUSAL  # noqa: S307 - the table's own expressions
    with engine.no_grad():  # whether it records or not
        assert _error(lambda: eval(expression, {"a": a})) == VIEW_REFUSAL  # noqa: S307


@pytest.mark.torch
def test_view_and_reshape_are_torchs():
    torch = _torch()
    for expression, _, shares in RESHAPES:
        a = torch.tensor(np.arange(24.0).reshape(4, 6), requires_grad=True) * 1
        out = eval(expression)  # noqa: S307 - the table's own expressions
        mine = eval(expression, {"a": _x(engine, (4, 6))[1]})  # noqa: S307
        assert (out.grad_fn.name(), tuple(out.shape)) == (mine.grad_fn.name(), tuple(mine.shape)), expression
        assert (out.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()) == shares, expression
    for expression in NOT_VIEWS:
        a = torch.ones(4, 6, requires_grad=True) * 1
        assert _error(lambda: eval(expression, {"a": a})) == VIEW_REFUSAL  # noqa: S307, B023 - run here, at once


def test_a_write_through_a_reshape_reaches_the_base_only_where_it_viewed():
    _, a = _x(engine, (4, 6))
    a[:, :1].reshape(4).mul_(0)  # a view: written into a
    a.t().reshape(24).mul_(0)  # a copy: a keeps its values
    want = np.arange(1.0, 25.0).reshape(4, 6)
    want[:, 0] = 0
    np.testing.assert_array_equal(a.detach().numpy(), want)


# ------------------------------------------------------------------------------------------------ glu

def test_glu_is_one_node_with_atens_formulas():
    rs = np.random.default_rng(5)
    xd = rs.standard_normal((3, 4))
    x = engine.tensor(xd, requires_grad=True)
    y = engine.nn.functional.glu(x, 1)
    assert y.grad_fn.name() == "GluBackward0" and y.grad_fn.next_functions[0][0].variable is x
    a, b = xd[:, :2], xd[:, 2:]
    s = 1 / (1 + np.exp(-b))
    np.testing.assert_array_equal(y.detach().numpy(), a * s)
    gy = rs.standard_normal((3, 2))
    y.backward(engine.tensor(gy))
    np.testing.assert_array_equal(x.grad.numpy(), np.concatenate([s * gy, (1 - s) * s * a * gy], 1))
    assert _error(lambda: engine.nn.functional.glu(engine.ones(2, 3))) == (
        "RuntimeError", "Halving dimension must be even, but dimension 1 is size 3")
    assert _error(lambda: engine.nn.functional.glu(engine.ones(2, 4), 2)) == (
        "IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    assert _error(lambda: engine.nn.functional.glu(engine.ones(2, 4, dtype=engine.long))) == (
        "NotImplementedError", "\"glu_cpu\" not implemented for 'Long'")


@pytest.mark.torch
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_and_its_second_derivative_are_torchs(dim):
    torch = _torch()
    rs = np.random.default_rng(6)
    xd, gd = rs.standard_normal((4, 2, 6)), rs.standard_normal(6)

    def run(m):
        x = m.tensor(xd, requires_grad=True)
        y = m.nn.functional.glu(x, dim)
        g = m.tensor(np.resize(gd, tuple(y.shape)))
        (gx,) = m.autograd.grad(y, x, g, create_graph=True)
        (gg,) = m.autograd.grad((gx * gx).sum(), x)
        return y.detach().numpy(), gx.detach().numpy(), gg.numpy()

    for mine, theirs in zip(run(engine), run(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-13, atol=1e-15)
    assert _error(lambda: torch.nn.functional.glu(torch.ones(2, 4), 2)) == _error(
        lambda: engine.nn.functional.glu(engine.ones(2, 4), 2))


# ------------------------------------------------------------------------------------------------ view(dtype)

VIEW_DTYPES = [  # (expression, its shape and dtype, or the refusal's words)
    ("engine.tensor([1.0, -2.0]).view(engine.int32)", ((2,), "int32")),
    ("engine.ones(2, 3).view(engine.float16)", ((2, 6), "float16")),
    ("engine.ones(2, 4, dtype=engine.float16).view(engine.float32)", ((2, 2), "float32")),
    ("engine.ones(2, 3).view(dtype=engine.uint8)", ((2, 12), "uint8")),
    ("engine.ones(2, 3).t().view(engine.int32)", ((3, 2), "int32")),
    ("engine.arange(16, dtype=engine.uint8).reshape(2, 8)[:, 4:8].view(engine.int32)", ((2, 1), "int32")),
    ("engine.ones(2, 3).view(engine.float64)", "self.size(-1) must be divisible by 2 to view Float as Double "
                                               "(different element sizes), but got 3"),
    ("engine.ones(2, 3).t().view(engine.float16)", "self.stride(-1) must be 1 to view Float as Half (different "
                                                   "element sizes), but got 3"),
    ("engine.tensor(1.0).view(engine.float16)", "self.dim() cannot be 0 to view Float as Half (different element "
                                                "sizes)"),
    ("engine.arange(8, dtype=engine.uint8)[1:5].view(engine.float32)", "self.storage_offset() must be divisible by "
                                                                       "4 to view Byte as Float (different element "
                                                                       "sizes), but got 1"),
    ("engine.arange(12, dtype=engine.uint8).reshape(2, 6)[:, :4].view(engine.int32)",
     "self.stride(0) must be divisible by 4 to view Byte as Int (different element sizes), but got 6"),
]


@pytest.mark.parametrize(("expression", "want"), VIEW_DTYPES, ids=[e for e, _ in VIEW_DTYPES])
def test_view_reads_the_bytes_as_another_dtype(expression, want):
    if isinstance(want, str):
        assert _error(lambda: eval(expression)) == ("RuntimeError", want)  # noqa: S307 - the table's own expressions
        return
    out = eval(expression)  # noqa: S307 - the table's own expressions
    assert (tuple(out.shape), str(out.dtype)) == (want[0], f"engine.{want[1]}")


def test_a_dtype_view_shares_memory_and_takes_no_gradient():
    assert engine.tensor([1.0]).view(engine.int32).item() == 1065353216  # float32 1.0's bits
    x = engine.zeros(4, requires_grad=True)
    bits = (x * 1).view(engine.int32)
    assert not bits.requires_grad and bits.grad_fn is None  # (PyTorch's view.dtype is not differentiable)
    plain = engine.zeros(4)
    plain.view(engine.int32)[0] = 1065353216
    assert plain.tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.torch
def test_dtype_views_are_torchs():
    torch = _torch()
    for expression, _ in VIEW_DTYPES:
        mine = _error(lambda: eval(expression).tolist())  # noqa: S307, B023 - the table's own expressions, at once
        theirs = _error(lambda: eval(expression.replace("engine.", "torch."), {"torch": torch}).tolist())  # noqa: S307, B023
        assert mine == theirs, expression
        if mine is None:
            assert eval(expression).tolist() == eval(  # noqa: S307
                expression.replace("engine.", "torch."), {"torch": torch}).tolist()  # noqa: S307


def test_splitting_one_base_again_and_again_holds_no_dead_pieces():
    """Each split notes its pieces on the base (weakly, for a later write into it); the dead ones are dropped as the
    list grows, as every view's are: a loop that splits the same tensor does not grow it without end."""
    _, a = _x(engine, (4, 3))
    for _ in range(2000):
        a.split(1)
    assert len(a._views) < 64
