"""``a @ b`` takes PyTorch's routes (ATen's ``_matmul_impl``), so that its graph, its refusals and its gradients are
PyTorch's for every pair of dimensions:

- two matrices, a matrix and a vector, two vectors: one node (``MmBackward0``, ``MvBackward0``, ``DotBackward0``);
  a vector times a matrix: ``unsqueeze``, ``mm``, then ``squeeze_`` (``SqueezeBackward4``);
- past two dimensions, with a matrix or a vector on one side: the larger operand's batch folded into its rows, one
  ``mm``/``mv``, where the fold copies nothing or the smaller operand requires grad (a matrix on the left: the
  product of the transposes, transposed back and made contiguous);
- else both expanded to the broadcast batch, reshaped to three dimensions, one ``bmm``; a batch of one that requires
  grad, facing a larger one, is squeezed first;
- the result reshaped to its shape (``UnsafeViewBackward0``).

A refusal is the one of the product PyTorch calls on that route, in its words (the folded shapes in ``mm``'s). The
expected texts and graphs below were printed by torch 2.13.0; where torch is installed, a sweep of shapes, strides and
which operand requires grad is run by both and compared: graph, values, gradients, second derivatives, refusals.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import engine
from tests.engine.helpers import assert_same_run
from tests.engine.helpers import walk as _walk

# (shape of a, shape of b, a requires grad, PyTorch's refusal of a @ b); float32 both
REFUSALS = [
    ((2, 5, 3), (4, 2), False, "mat1 and mat2 shapes cannot be multiplied (10x3 and 4x2)"),
    ((2, 5, 3), (2, 4, 4), False, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: "
                                  "[2, 4]."),
    ((2, 5, 3), (3, 3, 4), True, "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                                 "dimension 0"),
    ((5, 3), (2, 4, 4), False, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: "
                               "[2, 4]."),
    ((5, 3), (2, 4, 4), True, "mat1 and mat2 shapes cannot be multiplied (8x4 and 3x5)"),  # folded: a requires grad
    ((3,), (2, 4, 4), False, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."),
    ((3,), (2, 4, 4), True, "size mismatch, got input (8), mat (8x4), vec (3)"),
    ((2, 5, 3), (4,), False, "size mismatch, got input (10), mat (10x3), vec (4)"),
    ((4,), (3, 2), True, "mat1 and mat2 shapes cannot be multiplied (1x4 and 3x2)"),
    ((3,), (4,), False, "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
                        "elements, but got 3 and 4 elements respectively"),
    ((2, 3), (4,), True, "size mismatch, got input (2), mat (2x3), vec (4)"),
    ((3,), (), False, "both arguments to matmul need to be at least 1D, but they are 1D and 0D"),
    ((), (3,), True, "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
]

# (shape of a (float32), shape of b (float64), PyTorch's refusal of a @ b, then of b @ a); neither requires grad
DTYPE_REFUSALS = [
    ((3,), (3,), "dot : expected both vectors to have same dtype, but found Float and Double",
     "dot : expected both vectors to have same dtype, but found Double and Float"),
    ((2, 3), (3,), "addmv input tensors must have the same dtype, but got Double, Float, and Double",
     "mat1 and mat2 shapes cannot be multiplied (1x3 and 2x3)"),
    ((2, 3), (3, 2), "expected m1 and m2 to have the same dtype, but got: float != double",
     "expected m1 and m2 to have the same dtype, but got: double != float"),
    ((2, 3), (4, 2), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)",  # the shapes before the dtypes
     "expected m1 and m2 to have the same dtype, but got: double != float"),
    ((2, 5, 3), (3, 2), "expected m1 and m2 to have the same dtype, but got: float != double",
     "Expected size for first two dimensions of batch2 tensor to be: [2, 2] but got: [2, 5]."),
    ((2, 5, 3), (2, 3, 4), "expected scalar type Float but found Double",
     "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."),
    ((3,), (2, 3, 4), "expected scalar type Float but found Double",
     "size mismatch, got input (6), mat (6x4), vec (3)"),
]


def _pair(torch, shape_a, shape_b, grad_a, dtype_b=None):
    a = torch.ones(*shape_a, requires_grad=grad_a) if shape_a else torch.tensor(1.0, requires_grad=grad_a)
    b = torch.ones(*shape_b, dtype=dtype_b or torch.float32) if shape_b else torch.tensor(2.0)
    return a, b


@pytest.mark.parametrize(("shape_a", "shape_b", "grad", "words"), REFUSALS, ids=[str(r[:3]) for r in REFUSALS])
def test_a_product_that_does_not_fit_is_refused_in_the_words_of_the_product_pytorch_calls(shape_a, shape_b, grad,
                                                                                           words):
    a, b = _pair(engine, shape_a, shape_b, grad)
    with pytest.raises(RuntimeError) as caught:
        a @ b
    assert str(caught.value) == words
    with engine.no_grad(), pytest.raises(RuntimeError) as caught:  # the same route: requires_grad, not grad mode
        a @ b
    assert str(caught.value) == words


@pytest.mark.parametrize(("shape_a", "shape_b", "words", "reversed_words"), DTYPE_REFUSALS,
                         ids=[str(r[:2]) for r in DTYPE_REFUSALS])
def test_two_dtypes_are_refused_as_pytorch_refuses_them(shape_a, shape_b, words, reversed_words):
    a, b = _pair(engine, shape_a, shape_b, False, engine.float64)
    for x, y, expected in ((a, b, words), (b, a, reversed_words)):
        with pytest.raises(RuntimeError) as caught:
            x @ y
        assert str(caught.value) == expected


@pytest.mark.torch
@pytest.mark.parametrize(("shape_a", "shape_b", "grad", "words"), REFUSALS, ids=[str(r[:3]) for r in REFUSALS])
def test_the_expected_refusals_are_torchs(shape_a, shape_b, grad, words):
    torch = pytest.importorskip("torch")
    a, b = _pair(torch, shape_a, shape_b, grad)
    with pytest.raises(RuntimeError) as caught:
        a @ b
    assert str(caught.value) == words


@pytest.mark.torch
@pytest.mark.parametrize(("shape_a", "shape_b", "words", "reversed_words"), DTYPE_REFUSALS,
                         ids=[str(r[:2]) for r in DTYPE_REFUSALS])
def test_the_expected_dtype_refusals_are_torchs(shape_a, shape_b, words, reversed_words):
    torch = pytest.importorskip("torch")
    a, b = _pair(torch, shape_a, shape_b, False, torch.float64)
    for x, y, expected in ((a, b, words), (b, a, reversed_words)):
        with pytest.raises(RuntimeError) as caught:
            x @ y
        assert str(caught.value) == expected


def test_the_methods_refuse_what_they_do_not_take_in_pytorchs_words():
    m, v = engine.ones(2, 3), engine.ones(3)
    cases = [(lambda: m.mm(3), TypeError, "mm(): argument 'mat2' (position 1) must be Tensor, not int"),
             (lambda: engine.ones(2, 2, 3).mm(m), RuntimeError, "self must be a matrix"),
             (lambda: m.mm(v), RuntimeError, "mat2 must be a matrix"),
             (lambda: v.dot(3), TypeError, "dot(): argument 'tensor' (position 1) must be Tensor, not int"),
             (lambda: v.dot(m), RuntimeError, "1D tensors expected, but got 1D and 2D tensors"),
             (lambda: engine.ones(2, 2, 3).mv(v), RuntimeError, "vector + matrix @ vector expected, got 1, 3, 1"),
             (lambda: m.mv(2.0), TypeError, "mv(): argument 'vec' (position 1) must be Tensor, not float"),
             (lambda: engine.ones(2, 3, 2).bmm(m), RuntimeError, "batch2 must be a 3D tensor"),
             (lambda: engine.ones(2, 3, 2).bmm(engine.ones(2, 3, 3, dtype=engine.float64)), RuntimeError,
              "Expected size for first two dimensions of batch2 tensor to be: [2, 2] but got: [2, 3]."),
             (lambda: engine.ones(2, 3, 2).bmm(engine.ones(2, 2, 3, dtype=engine.float64)), RuntimeError,
              "expected scalar type Float but found Double"),
             (lambda: m.float().mm(engine.ones(4, 2, dtype=engine.float64)), RuntimeError,
              "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)")]
    for call, kind, words in cases:
        with pytest.raises(kind) as caught:
            call()
        assert str(caught.value) == words


def test_a_number_is_no_operand_of_the_product():
    x = engine.ones(2, 2, requires_grad=True)
    for number in (2, 2.0, np.float64(2)):
        with pytest.raises(TypeError, match="unsupported operand type"):
            x @ number
        with pytest.raises(TypeError, match="unsupported operand type"):
            number @ x


@pytest.mark.parametrize(("shape_a", "shape_b"), [((4, 2, 3), (3, 5)), ((2, 3), (4, 3, 5)), ((3,), (4, 3, 5)),
                                                  ((4, 2, 3), (3,)), ((2, 1, 2, 3), (4, 3, 5)),
                                                  ((1, 2, 3), (4, 3, 5)), ((4, 2, 3), (1, 3, 5))])
def test_the_values_and_gradients_are_the_products_whatever_the_route(shape_a, shape_b, device):
    """Each route (folded, transposed, expanded, squeezed) gives numpy.matmul's product, and the gradients of
    sum(g * (a @ b)): g @ b^T summed over a's broadcast batch, and a^T @ g over b's (here in float64, to 1e-12), on
    each device."""
    rs = np.random.RandomState(1)
    an, bn = rs.standard_normal(shape_a), rs.standard_normal(shape_b)
    want = np.matmul(an, bn)
    gn = rs.standard_normal(want.shape)
    for grads in ((True, False), (False, True), (True, True)):
        a = engine.tensor(an, requires_grad=grads[0], device=device)
        b = engine.tensor(bn, requires_grad=grads[1], device=device)
        y = a @ b
        assert y.shape == want.shape and np.allclose(y.detach().cpu().numpy(), want, rtol=0, atol=1e-12)
        y.backward(engine.tensor(gn, device=device))
        a2 = an[None, :] if an.ndim == 1 else an
        b2 = bn[:, None] if bn.ndim == 1 else bn
        g2 = gn.reshape(np.matmul(a2, b2).shape)
        if grads[0]:
            ga = np.matmul(g2, np.swapaxes(b2, -1, -2))
            ga = ga.reshape((-1,) + a2.shape).sum(0) if ga.ndim > a2.ndim else ga
            extra = tuple(i for i in range(a2.ndim) if a2.shape[i] == 1 and ga.shape[i] != 1)
            ga = ga.sum(extra, keepdims=True).reshape(an.shape)
            assert np.allclose(a.grad.cpu().numpy(), ga, rtol=0, atol=1e-12)
        if grads[1]:
            gb = np.matmul(np.swapaxes(a2, -1, -2), g2)
            gb = gb.reshape((-1,) + b2.shape).sum(0) if gb.ndim > b2.ndim else gb
            extra = tuple(i for i in range(b2.ndim) if b2.shape[i] == 1 and gb.shape[i] != 1)
            gb = gb.sum(extra, keepdims=True).reshape(bn.shape)
            assert np.allclose(b.grad.cpu().numpy(), gb, rtol=0, atol=1e-12)
        with engine.no_grad():  # the unrecorded product: the same values
            assert np.allclose((a @ b).cpu().numpy(), want, rtol=0, atol=1e-12)


def test_the_fold_reads_the_batchs_strides_as_aten_does():
    """A batch whose rows run on in memory folds into one mm (a view); a transposed batch does not (a bmm), unless
    the matrix requires grad, when PyTorch folds through a copy."""
    w = engine.ones(3, 5)
    a = engine.ones(4, 2, 3, requires_grad=True)
    assert (a @ w).grad_fn.next_functions[0][0].name() == "MmBackward0"
    t = engine.ones(2, 4, 3, requires_grad=True).transpose(0, 1)
    assert (t @ w).grad_fn.next_functions[0][0].name() == "BmmBackward0"
    assert (t @ w.requires_grad_()).grad_fn.next_functions[0][0].name() == "MmBackward0"
    s = engine.ones(2, 4, 6, requires_grad=True)[..., ::2]  # rows strided, still one run per batch: folds
    assert (s @ w.detach()).grad_fn.next_functions[0][0].name() == "MmBackward0"



_SHAPES_A = [(3,), (4, 3), (2, 4, 3), (1, 4, 3), (2, 1, 4, 3), (3, 2, 4, 3), (0, 4, 3), (2, 0, 3)]
_SHAPES_B = [(3,), (3, 5), (2, 3, 5), (1, 3, 5), (2, 1, 3, 5), (3, 1, 3, 5), (3, 0), (2, 3, 0)]
_SWEEP = [(sa, sb, ga, gb, tr) for sa, sb in itertools.product(_SHAPES_A, _SHAPES_B)
          for ga, gb in ((True, False), (False, True), (True, True)) for tr in (False, True) if not tr or len(sa) >= 3]


def _run(torch, shape_a, shape_b, grad_a, grad_b, transposed):
    """graph, product, gradients, second derivatives (of the gradients' sum of squares), or the refusal's words."""
    rs = np.random.RandomState(abs(hash((shape_a, shape_b))) % 2**31)
    an, bn = rs.rand(*shape_a), rs.rand(*shape_b)
    if transposed:  # a batch that does not run on in memory
        leaf_a = torch.tensor(np.swapaxes(an, 0, 1).copy(), requires_grad=grad_a)
        a = leaf_a.transpose(0, 1)
    else:
        leaf_a = a = torch.tensor(an, requires_grad=grad_a)
    b = torch.tensor(bn, requires_grad=grad_b)
    try:
        y = a @ b
    except RuntimeError as e:
        return str(e)
    leaves = [x for x, r in ((leaf_a, grad_a), (b, grad_b)) if r]
    grads = torch.autograd.grad(y, leaves, torch.tensor(rs.rand(*y.shape)), create_graph=True)
    squares = sum((g * g).sum() for g in grads)
    second = torch.autograd.grad(squares, leaves, allow_unused=True) if squares.requires_grad else ()
    return (_walk(y.grad_fn), y.detach().numpy(), [g.detach().numpy() for g in grads],
            [None if g is None else g.numpy() for g in second])


@pytest.mark.torch
@pytest.mark.parametrize("case", _SWEEP, ids=[str(c) for c in _SWEEP])
def test_every_route_is_torchs(case):
    torch = pytest.importorskip("torch")
    mine, theirs = _run(engine, *case), _run(torch, *case)
    if isinstance(theirs, str):  # (a refusal: the same words)
        assert mine == theirs
        return
    assert_same_run(mine, theirs)
