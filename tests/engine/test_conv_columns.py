"""The columns of a 1-D or 2-D convolution in C (``engine/_ckernels.c``'s im2col2d and col2im2d, where it was
built): the same columns as the NumPy spelling they replace (a strided slice of a zero-padded copy per kernel
offset) and the same gradient bit for bit (the padded sums in kernel-offset order, the padding then cut away),
over kernels, strides, padding (even and uneven: "same" with an even kernel), dilation, 1-D and 2-D, float32 and
float64, through every op that uses them: the convolution, the transposed one, unfold and fold. Then torch 2.13's
values where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import kernels
from engine.functions import conv

pytestmark = pytest.mark.skipif(kernels.implementation() != "compiled", reason="engine/_ckernels.c is not built")

CASES = [  # (spatial size, kernel, stride, pads ((lo, hi) per dimension), dilation)
    ((9, 10), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),  # "same", stride 1: the run copied whole
    ((7, 12), (3, 5), (1, 1), ((1, 1), (2, 2)), (1, 1)),  # "same", an oblong kernel
    ((8, 8), (4, 4), (1, 1), ((1, 2), (1, 2)), (1, 1)),  # "same" with an even kernel: uneven padding
    ((9, 10), (3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2)),  # "same" by dilation
    ((9, 10), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),
    ((11, 6), (5, 2), (2, 3), ((2, 2), (0, 0)), (1, 2)),
    ((5, 5), (3, 3), (1, 1), ((4, 4), (3, 3)), (1, 1)),  # padding wider than the kernel: whole rows of zeros
    ((6, 7), (1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1)),
    ((12,), (3,), (1,), ((1, 1),), (1,)),  # 1-D: a plane of one row
    ((12,), (4,), (3,), ((2, 1),), (2,)),
]


def _out(size, kernel, stride, pads, dilation):
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, (lo, hi), d in zip(size, kernel, stride, pads, dilation))


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.fixture(params=[1, 3], ids=["one thread", "three threads"])
def c_threads(request):
    """The C passes on one thread and cut across three (each range the same loop: the same bits)."""
    before = kernels.threads()
    kernels.set_threads(request.param)
    yield request.param
    kernels.set_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_the_columns_and_their_sums_are_the_numpy_spellings_bit_for_bit(case, dtype, c_threads):
    size, kernel, stride, pads, dilation = case
    rs = np.random.default_rng(len(size) * 100 + sum(kernel))
    # (a batch large enough that the 2-D passes are cut across three threads)
    x = rs.standard_normal((256, 4) + size).astype(dtype)
    x.reshape(-1)[::7] = -0.0  # (the sign of a zero is kept, and the padding's zeros are +0.0)
    out = _out(size, kernel, stride, pads, dilation)
    mine = kernels.im2col(x, pads, kernel, dilation, stride, out)
    theirs = conv._columns(np, conv._pad(np, x, pads, 0), kernel, dilation, stride, out)
    assert mine.shape == theirs.shape == (4,) + kernel + (256,) + out
    np.testing.assert_array_equal(_bits(mine), _bits(theirs))

    cols = rs.standard_normal(theirs.shape).astype(dtype)
    mine = kernels.col2im(cols, x.shape, pads, kernel, dilation, stride, out)
    theirs = conv._unpad(conv._add_columns(np, cols, conv._padded(x.shape, pads), kernel, dilation, stride, out), pads)
    assert mine.shape == theirs.shape == x.shape and mine.flags.c_contiguous
    np.testing.assert_array_equal(_bits(mine), _bits(theirs))


def test_a_non_contiguous_input_is_read_as_its_values():
    x = np.random.default_rng(3).standard_normal((5, 4, 9, 8)).astype(np.float32).swapaxes(0, 1)  # (4, 5, 9, 8)
    pads, kernel, one = ((1, 1), (1, 1)), (3, 3), (1, 1)
    np.testing.assert_array_equal(kernels.im2col(x, pads, kernel, one, one, (9, 8)),
                                  conv._columns(np, conv._pad(np, x, pads, 0), kernel, one, one, (9, 8)))


@pytest.mark.parametrize("arr", [np.ones((2, 3, 4, 4), np.int64), np.ones((2, 3, 4, 4, 4), np.float32)],
                         ids=["an integer array", "3-D"])
def test_what_the_c_pass_does_not_cover_is_left_to_numpy(arr):
    kernel = (2,) * (arr.ndim - 2)
    pads, one = ((0, 0),) * len(kernel), (1,) * len(kernel)
    out = tuple(n - 1 for n in arr.shape[2:])
    assert kernels.im2col(arr, pads, kernel, one, one, out) is None
    assert kernels.col2im(np.ones((3,) + kernel + (2,) + out, arr.dtype), arr.shape, pads, kernel, one, one,
                          out) is None
    # and the op still runs, through the NumPy spelling
    cols = conv._im2col(np, arr, pads, kernel, one, one, out)
    np.testing.assert_array_equal(cols, np.ones_like(cols))


@pytest.mark.parametrize("call, message", [
    (lambda: kernels._ck.im2col2d(np.empty(9, np.float32), np.empty(10, np.float32), 1, 1, 2, 5, 2, 5, 1, 1, 1, 1,
                                  0, 0, 1, 1), "geometry's sizes"),
    (lambda: kernels._ck.im2col2d(np.empty(10, np.float32), np.empty(10, np.float64), 1, 1, 2, 5, 2, 5, 1, 1, 1, 1,
                                  0, 0, 1, 1), "one dtype"),
    (lambda: kernels._ck.col2im2d(np.empty(10, np.float32), np.empty(10, np.float32), 1, 1, 2, 5, 2, 5, 1, 1, 0, 1,
                                  0, 0, 1, 1), "out of range"),
    (lambda: kernels._ck.col2im2d(np.empty(10, np.float32), np.empty(10, np.float32), 1, 1, 2, 5),
     r"col2im2d\(out, in,"),
])
def test_the_c_entry_points_refuse_arrays_that_do_not_fit_the_geometry(call, message):
    """(engine.kernels always passes fitting ones: this is the C side's own guard against writing out of bounds)"""
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def _ops(lib, dtype, seed):
    """Each op that reads columns, forward and backward, its outputs and gradients as NumPy arrays."""
    F = lib.nn.functional
    rs = np.random.default_rng(seed)

    def t(*shape, grad=True):
        return lib.tensor(rs.standard_normal(shape).astype(dtype), requires_grad=grad)

    results = []
    for args in [(t(2, 4, 9, 10), t(6, 4, 3, 3), t(6), 1, 1, 1, 1), (t(2, 4, 9, 10), t(6, 2, 2, 3), None, 2, 1, 2, 2),
                 (t(2, 4, 8, 8), t(6, 4, 4, 4), None, 1, "same", 1, 1)]:
        y = F.conv2d(*args)
        y.backward(t(*y.shape, grad=False))
        results += [y, args[0].grad, args[1].grad]
    x, w = t(2, 4, 12), t(6, 4, 3)
    y = F.conv1d(x, w, padding=2, dilation=2)
    y.backward(t(*y.shape, grad=False))
    results += [y, x.grad, w.grad]
    x, w = t(2, 4, 5, 6), t(4, 3, 3, 3)
    y = F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
    y.backward(t(*y.shape, grad=False))
    results += [y, x.grad, w.grad]
    x = t(2, 3, 7, 8)
    u = F.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    u.backward(t(*u.shape, grad=False))
    results += [u, x.grad]
    c = t(2, 12, 28)
    f = F.fold(c, (6, 7), 2, padding=1, stride=(1, 2))
    f.backward(t(*f.shape, grad=False))
    results += [f, c.grad]
    return [r.detach().numpy() for r in results]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_ops_give_the_bits_they_gave_in_numpy(dtype, monkeypatch):
    mine = _ops(engine, dtype, 5)
    monkeypatch.setattr(kernels, "_ck", None)
    theirs = _ops(engine, dtype, 5)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(_bits(a), _bits(b))


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # (torch's note on its own copy)
def test_the_ops_are_torchs():
    import torch
    for a, b in zip(_ops(engine, np.float64, 6), _ops(torch, np.float64, 6)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
