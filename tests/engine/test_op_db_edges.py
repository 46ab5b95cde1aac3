"""Edge cases PyTorch's own sample inputs (its OpInfo database) found in the engine, as a table of torch 2.13.0's
answers (printed by it, and held to the torch installed where there is one), so that they stay fixed on a machine
without PyTorch too; and the gradients that were wrong, against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.engine.helpers import table_tests

CASES = [
    ("engine.nn.functional.cosine_similarity(engine.ones(2, 2, dtype=engine.complex64), engine.ones(2, 2))",
     ("RuntimeError", "expected common dtype to be floating point, yet common dtype is ComplexFloat")),
    ("engine.nn.functional.cosine_similarity(engine.ones(2, 3, dtype=engine.int64), "
     "engine.ones(2, 3, dtype=engine.int64))",
     ("RuntimeError", "expected common dtype to be floating point, yet common dtype is Long")),
    ("engine.isin(engine.ones(2), engine.ones(2, dtype=engine.complex64))",
     ("RuntimeError", "Unsupported input type encountered for isin(): ComplexFloat")),
    ("engine.searchsorted(engine.tensor([1 + 0j, 2 + 0j]), engine.tensor([1.5 + 0j]))",
     ("NotImplementedError", "\"searchsorted_out_cpu\" not implemented for 'ComplexFloat'")),
    ("engine.bucketize(engine.tensor([1.5 + 0j]), engine.tensor([1 + 0j, 2 + 0j]))",
     ("NotImplementedError", "\"searchsorted_out_cpu\" not implemented for 'ComplexFloat'")),
    ("engine.corrcoef(engine.tensor([[1 + 1j, 2j, 3 + 0j], [3 + 0j, 1 - 1j, 2 + 2j]]))",
     ((2, 2), "complex64", [1 + 0j, -0.30000001192092896 - 0.8500000834465027j,
                            -0.30000001192092896 + 0.8500000834465027j, 1 + 0j])),
    ("engine.logcumsumexp(engine.tensor([[1 + 2j, complex(float('-inf'), 0), -0.5 + 1j], [3 - 1j, 0.25j, 2 + 0j]]), 1)",
     ((2, 3), "complex64", [1 + 2j, 1 + 2j, 1.1276707649230957 + 1.8339849710464478j, 3 - 1j,
                            3.016657829284668 - 0.9535166025161743j, 3.2357003688812256 - 0.7142430543899536j])),
    ("engine.logaddexp(engine.tensor([complex(float('-inf'), 1), 1 + 2j, complex(float('inf'), 0.5), 3 - 1j]), "
     "engine.tensor([complex(float('-inf'), 2), -0.5 + 1j, complex(float('inf'), 0.25), complex(float('nan'), 0)]))",
     ((4,), "complex64", [complex(float("-inf"), 2), 1.1276707649230957 + 1.8339849710464478j,
                          complex(float("inf"), 0.7853981852531433), complex(float("nan"), float("nan"))])),
    ('engine.isreal(engine.tensor([1 + 0j, 2 - 1j, -0.0 + 0j, 1e-300j]))',
     ((4,), 'bool', [True, False, True, True])),
    ('engine.istft(engine.tensor([[1 + 1j, 2 - 1j], [0.5j, 1 + 0j], [2 + 0j, -1j], [1 - 1j, 0.5 + 0j]], '
     'dtype=engine.complex128), 4, center=False)',
     ((5,), 'float64', [0.75, 0.25, 0.625, 0.0, 0.5])),
    ('engine.linalg.lu_factor(engine.tensor([[1.3 + 0j, 1.0], [0.9 + 0.9j, 2.0]], dtype=engine.complex128)).pivots',
     ((2,), 'int32', [2, 2])),
    ('engine.erfc(engine.tensor(-4.826984902407649, dtype=engine.float64))',
     ((), 'float64', [1.999999999991292])),
    ('engine.special.ndtri(engine.tensor(0.975, dtype=engine.float64))',
     ((), 'float64', [1.959963984540054])),
    ('engine.arange(1.0, 5.000001, 2.0, dtype=engine.int64)',
     ((2,), 'int64', [1, 3])),
    ('engine.arange(-2.5, 2.5, 1.5, dtype=engine.int32)',
     ((4,), 'int32', [-2, -1, 0, 1])),
    ('engine.arange(0, 5, 0.5, dtype=engine.int16)',
     ((10,), 'int16', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
    ('engine.linspace(4.3, 0, 8, dtype=engine.int64)',
     ((8,), 'int64', [4, 3, 2, 2, 1, 1, 0, 0])),
    ('engine.logspace(1.5, 3.7, 5, base=2.5, dtype=engine.int64)',
     ((5,), 'int64', [2, 3, 6, 9, 15])),
    ('engine.addmm(engine.ones(2, 2, dtype=engine.int64), engine.ones(2, 2, dtype=engine.int64), '
     'engine.ones(2, 2, dtype=engine.int64), beta=1.7, alpha=2.9)',
     ((2, 2), 'int64', [5, 5, 5, 5])),
    ('engine.addbmm(engine.ones(2, 2, dtype=engine.int64), engine.ones(3, 2, 2, dtype=engine.int64), '
     'engine.ones(3, 2, 2, dtype=engine.int64), alpha=2.9)',
     ((2, 2), 'int64', [13, 13, 13, 13])),
    ('engine.addr(engine.ones(2, 2, dtype=engine.int64), engine.ones(2, dtype=engine.int64), '
     'engine.ones(2, dtype=engine.int64), alpha=2.9)',
     ('RuntimeError', 'For integral input tensors, argument alpha must not be a floating point number.')),
    ('engine.index_add(engine.tensor(2.0), 0, engine.tensor([0]), engine.tensor(3.0), alpha=2)',
     ((), 'float32', [8.0])),
    ('engine.index_fill(engine.tensor(2.0), 0, engine.tensor([0]), 5.0)',
     ((), 'float32', [5.0])),
    ('engine.index_copy(engine.tensor(2.0), 0, engine.tensor([0]), engine.tensor(4.0))',
     ((), 'float32', [4.0])),
    ('engine.scatter(engine.tensor(2.0), 0, engine.tensor(0), 7.0)',
     ((), 'float32', [7.0])),
    ('engine.scatter_add(engine.tensor(2.0), 0, engine.tensor(0), engine.tensor(3.0))',
     ((), 'float32', [5.0])),
    ("engine.scatter_reduce(engine.tensor(2.0), 0, engine.tensor(0), engine.tensor(3.0), 'prod')",
     ((), 'float32', [6.0])),
    ('engine.gather(engine.tensor(2.0), 0, engine.tensor([0, 0]))',
     ((2,), 'float32', [2.0, 2.0])),
    ('engine.quantile(engine.tensor(2.0), 0.5, dim=0, keepdim=True)',
     ((), 'float32', [2.0])),
    ("engine.tensor([[0, 1], [2, 3]]).scatter_reduce(0, engine.tensor([[1, 1]]), engine.tensor([[7, -3]]), "
     "'amin', include_self=False)",
     ((2, 2), 'int64', [0, 1, 7, -3])),
    ('engine.searchsorted(engine.zeros(2, 0), engine.zeros(2, 3))',
     ((2, 3), 'int64', [0, 0, 0, 0, 0, 0])),
    ('engine.linalg.lu_solve(*engine.linalg.lu_factor(engine.zeros(0, 0)), engine.zeros(0, 4))',
     ((0, 4), 'float32', [])),
    ('engine.linalg.matrix_norm(engine.zeros(3, 0), 1)',
     ((), 'float32', [0.0])),
    ('engine.linalg.matrix_norm(engine.zeros(0, 3), -1)',
     ((), 'float32', [0.0])),
    ("engine.linalg.matrix_norm(engine.zeros(2, 3, 3), 'nuc', dim=(0, 1, 2))",
     ('RuntimeError', 'linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2')),
    ("engine.norm(engine.tensor([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]], dtype=engine.float64), p='nuc')",
     ((), 'float64', [7.892038472249226])),
    ('engine.linalg.matrix_rank(engine.ones(2, 4, 4), atol=engine.tensor([0.0, 5.0]))',
     ((2,), 'int64', [1, 0])),
    ('engine.linalg.matrix_rank(engine.ones(2, 4, 4), rtol=engine.tensor([0.5, 2.0]))',
     ((2,), 'int64', [1, 0])),
    ('engine.flip(engine.arange(4).reshape(2, 2), dims=(0,))',
     ((2, 2), 'int64', [2, 3, 0, 1])),
    ('engine.gradient(engine.arange(5.0) ** 2, spacing=None, dim=None)[0]',
     ((5,), 'float32', [1.0, 2.0, 4.0, 6.0, 7.0])),
    ('engine.diff(engine.arange(5.0), n=0, append=engine.arange(3.0))',
     ((5,), 'float32', [0.0, 1.0, 2.0, 3.0, 4.0])),
    ('engine.combinations(engine.tensor([1.0, 2.0]), r=3)',
     ((0, 3), 'float32', [])),
    ('engine.combinations(engine.tensor([1.0, 2.0]), r=-1)',
     ('RuntimeError', 'Expect a non-negative number, but got -1')),
    ('engine.unique_consecutive(engine.tensor([[1, 1, 2], [1, 1, 2], [3, 1, 2], [1, 1, 2]]), dim=0)',
     ((3, 3), 'int64', [1, 1, 2, 3, 1, 2, 1, 1, 2])),
    ('engine.unique_consecutive(engine.tensor([[1, 1, 2], [1, 1, 2], [3, 1, 2], [1, 1, 2]]), '
     'return_counts=True, dim=1)[1]',
     ((3,), 'int64', [1, 1, 1])),
    ('engine.unique_consecutive(engine.zeros(0, 3), dim=1)',
     ('RuntimeError', "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")),
    ('engine.aminmax(engine.ones(5, 0, 5), dim=0).max',
     ((0, 5), 'float32', [])),
    ('engine.aminmax(engine.ones(5, 0, 5), dim=1)',
     ('IndexError', 'aminmax: Expected reduction dim 1 to have non-zero size.')),
    ('engine.linalg.vander(engine.tensor(2.0), N=3)',
     ((1, 3), 'float32', [1.0, 2.0, 4.0])),
    ('engine.linalg.lstsq(engine.eye(3, dtype=engine.complex128), engine.ones(3, 1, '
     'dtype=engine.complex128)).residuals',
     ((0,), 'float64', [])),
    ('engine.linalg.pinv(engine.tensor([[2.0, 7.0], [1.0, 3.0]], dtype=engine.float64), hermitian=True)',
     ((2, 2), 'float64', [0.6, -0.2, -0.2, 0.4])),
    ('engine.linalg.pinv(engine.tensor([[2.0 + 5j, 7.0], [1.0 - 1j, 3.0]], dtype=engine.complex128), hermitian=True)',
     ((2, 2), 'complex128', [(0.75+0j), (-0.25-0.25j), (-0.25+0.25j), (0.5+0j)])),
    # the mean of an int64 window: truncated towards zero; the other integer dtypes refused
    ('engine.nn.functional.avg_pool1d(engine.tensor([[[-7, 2, 5, -3, 8]]]), 3, stride=1, padding=1, '
     'count_include_pad=False)',
     ((1, 1, 5), 'int64', [-2, 0, 1, 3, 2])),
    ('engine.nn.functional.avg_pool2d(engine.tensor([[[[-7, 2, 5], [-3, 8, 1], [4, 4, -9]]]]), 2, stride=1)',
     ((1, 1, 2, 2), 'int64', [0, 4, 3, 1])),
    ('engine.nn.functional.avg_pool2d(engine.tensor([[[[-7, 2, 5], [-3, 9, 1], [4, 4, -9]]]]), 2, '
     'divisor_override=-3)',
     ((1, 1, 1, 1), 'int64', [0])),
    ('engine.nn.functional.avg_pool3d(engine.tensor([[[[[-7, 2], [-3, 1]], [[5, -9], [2, 2]]]]]), (2, 1, 2))',
     ((1, 1, 1, 2, 1), 'int64', [-2, 0])),
    ('engine.nn.functional.local_response_norm(engine.tensor([[[-7, 2, 5], [-3, 8, 1], [4, 4, -9]]]), 2)',
     ((1, 3, 3), 'float32', [-6.987426280975342, 1.9997000694274902, 4.995504856109619, -2.9934914112091064,
                             7.979660511016846, 0.9990261793136597, 3.9964041709899902, 3.988041877746582,
                             -8.972423553466797])),
    ('engine.nn.functional.avg_pool2d(engine.ones(1, 1, 2, 2, dtype=engine.int32), 2)',
     ('NotImplementedError', '"avg_pool2d" not implemented for \'Int\'')),
    ('engine.nn.functional.avg_pool3d(engine.ones(1, 1, 2, 2, 2, dtype=engine.bool), 2)',
     ('NotImplementedError', '"avg_pool3d_out_frame" not implemented for \'Bool\'')),
    ('engine.take_along_dim(engine.arange(10.0).reshape(2, 5), engine.tensor([[-1, -5], [0, 4]]), 1)',
     ((2, 2), 'float32', [4.0, 0.0, 5.0, 9.0])),
    ('engine.gather(engine.arange(5.0), 0, engine.zeros(2, 0, dtype=engine.uint8))',
     ((2, 0), 'float32', [])),
    ('engine.gather(engine.arange(5.0), 0, engine.ones(1, dtype=engine.uint8))',
     ('RuntimeError', 'gather(): Expected dtype int32/int64 for index')),
    ('engine.tensordot(engine.tensor([[1.0], [2.0]]), engine.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), '
     'dims=([1], [0]))',
     ((2, 3), 'float32', [5.0, 7.0, 9.0, 10.0, 14.0, 18.0])),
    ('engine.tensordot(engine.ones(2, 3), engine.ones(4, 3), dims=([1], [0]))',
     ('RuntimeError', 'contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 '
                      'in dim 0')),
    ('engine.nn.functional.multi_margin_loss(engine.tensor(0.7), engine.tensor(0), reduction="none")',
     ((), 'float32', [0.0])),
    ('engine.nn.functional.multi_margin_loss(engine.ones(2, 3), engine.tensor(0))',
     ('RuntimeError', 'multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples '
                      '(batch size). Expected target size [2], but got []. Input has shape [2, 3].')),
    ('engine.nn.functional.multi_margin_loss(engine.tensor([0.2, 0.9, -0.4]), engine.tensor(1))',
     ((), 'float32', [0.10000000149011612])),
    ('engine.nn.functional.multilabel_margin_loss(engine.tensor(0.7), engine.tensor([0]), reduction="none")',
     ((), 'float32', [0.0])),
    ('engine.nn.functional.multilabel_margin_loss(engine.tensor(1.0), engine.tensor([[0]]))',
     ('RuntimeError', 'inconsistent target size: [1, 1] for input of size: []')),
    ('engine.tensor(True).sum_to_size(())', ((), 'int64', [1])),
    ('engine.tensor([[True, False], [True, True]]).sum_to_size(2, 2)', ((2, 2), 'bool', [True, False, True, True])),
    ('engine.tensor([[True, False], [True, True]]).sum_to_size(1, 2)', ((1, 2), 'int64', [2, 1])),
    ('(lambda x: (engine.addmv_(x, engine.ones(3, 2), engine.ones(2)), x)[1])(engine.zeros(3))',
     ((3,), 'float32', [2.0, 2.0, 2.0])),
    ('(lambda z: (engine.conj_physical_(z), z)[1])(engine.tensor([1 + 2j]))', ((1,), 'complex64', [1 - 2j])),
    ('engine.resize_as_(engine.arange(6.0), engine.zeros(2, 2))', ((2, 2), 'float32', [0.0, 1.0, 2.0, 3.0])),
    # histogramdd: a point on an inner edge in the bin to its right, on the last edge in the last bin
    ('engine.histogramdd(engine.tensor([[0.0, 1.0], [1.0, 2.0], [2.0, 2.0], [0.5, 1.5]]), bins=[2, 3]).hist',
     ((2, 3), 'float32', [1.0, 1.0, 0.0, 0.0, 0.0, 2.0])),
    ('engine.histogramdd(engine.tensor([[0.0, 1.0], [1.0, 2.0], [2.0, 2.0], [0.5, 1.5]]), bins=2, '
     'range=[0.0, 1.0, 0.0, 4.0], weight=engine.tensor([1.0, 2.0, 3.0, 4.0])).hist',
     ((2, 2), 'float32', [1.0, 0.0, 4.0, 2.0])),
    ('engine.histogramdd(engine.tensor([[0.0, 1.0], [1.0, 2.0], [2.0, 2.0], [0.5, 1.5]]), '
     'bins=[engine.tensor([0.0, 1.0, 3.0]), engine.tensor([1.0, 1.5, 2.0])], density=True).hist',
     ((2, 2), 'float32', [0.5, 0.5, 0.0, 0.5])),
    ('engine.histogramdd(engine.ones(3, 2), bins=2).bin_edges[0]', ((3,), 'float32', [0.5, 1.0, 1.5])),
    ('engine.histogramdd(engine.tensor([[float("nan"), 1.0]]), bins=2)',
     ('RuntimeError', "torch.histogramdd: dimension 0's range [nan, nan] is not finite")),
    ('engine.histogramdd(engine.ones(2, 2), bins=[2])',
     ('RuntimeError', 'histogramdd: The size of bins must be equal to the innermost dimension of the input.')),
    # integer dtypes through reductions and products, as ATen's
    ('engine.trace(engine.tensor([[100, 1], [1, 100]], dtype=engine.int8))', ((), 'int64', [200])),
    ('engine.trace(engine.ones(2, 2, dtype=engine.bool))',
     ('NotImplementedError', '"trace" not implemented for \'Bool\'')),
    ('engine.addbmm(engine.ones(2, 2, dtype=engine.int32), engine.ones(3, 2, 2, dtype=engine.int32), '
     'engine.ones(3, 2, 2, dtype=engine.int32))', ((2, 2), 'int32', [7, 7, 7, 7])),
    ('engine.nn.functional.bilinear(engine.ones(1, 2, dtype=engine.int32), engine.ones(1, 3, dtype=engine.int32), '
     'engine.ones(1, 2, 3, dtype=engine.int32))', ((1, 1), 'int32', [6])),
    ('engine.einsum("ij->j", engine.ones(2, 3, dtype=engine.int32))', ((3,), 'int64', [2, 2, 2])),
    ('engine.einsum("ii->", engine.ones(3, 3, dtype=engine.int32))', ((), 'int64', [3])),
    ('engine.einsum("ij,jk->ik", engine.ones(2, 3, dtype=engine.int32), engine.ones(3, 1, dtype=engine.int32))',
     ((2, 1), 'int32', [3, 3])),
    ('engine.einsum("ii->i", engine.ones(2, 2, dtype=engine.int32))', ((2,), 'int32', [1, 1])),
    ('engine.linalg.vander(engine.tensor([1, 2], dtype=engine.int32))', ((2, 2), 'int64', [1, 1, 1, 2])),
    ('engine.linalg.vander(engine.tensor([True, False]))',
     ('RuntimeError', 'linalg.vander supports floating point, complex, and integer tensors, but got Bool')),
    ('engine.tensordot(engine.ones(2, 1, dtype=engine.int32), engine.ones(2, 3, dtype=engine.int32), '
     'dims=([1], [0]))', ((2, 3), 'int32', [2, 2, 2, 2, 2, 2])),
    ('engine.ones(2, 3, 4, 5).double(memory_format=engine.channels_last).stride() == (60, 1, 15, 3)',
     ((), 'bool', [True])),
    ('engine.ones(2, 3).to("cpu", engine.float64, False, True).dtype == engine.float64', ((), 'bool', [True])),
    # float16 worked out in float32 and rounded once, as ATen's half kernels (erf's fit overflowed float16: NaN)
    ('engine.erf(engine.tensor([-4.0, -3.5, 3.5, 4.0], dtype=engine.float16))',
     ((4,), 'float16', [-1.0, -1.0, 1.0, 1.0])),
    ('engine.nn.functional.gelu(engine.tensor([-2.0, -3.0, 1.0], dtype=engine.float16))',
     ((3,), 'float16', [-0.045501708984375, -0.00405120849609375, 0.84130859375])),
    ('engine.linalg.vector_norm(engine.full((400,), 300.0, dtype=engine.float16))', ((), 'float16', [6000.0])),
    ('engine.nn.functional.rms_norm(engine.tensor([[300.0, -600.0]], dtype=engine.float16), [2])',
     ((1, 2), 'float16', [0.63232421875, -1.2646484375])),
    # ATen's lower-level names
    ('engine.empty_permuted((2, 3, 4), (0, 2, 1)).stride() == (12, 1, 3)', ((), 'bool', [True])),
    ('engine.empty_permuted((2, 3), (0, 0))', ('RuntimeError', 'Duplicate dim not allowed')),
    ('engine.grid_sampler(engine.arange(9.0).reshape(1, 1, 3, 3), engine.tensor([[[[0.25, -0.5]]]]), 2, 2, False)',
     ((1, 1, 1, 1), 'float32', [2.04443359375])),
    ('engine.native_layer_norm(engine.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]]), [3], None, None, 1e-5)[2]',
     ((2, 1), 'float32', [0.8017810583114624, 0.7071049809455872])),
    ('engine.native_layer_norm(engine.tensor([[1.0, 2.0, 4.0]], requires_grad=True), [3], None, None, 1e-5)[1]'
     '.requires_grad',
     ((), 'bool', [False])),
    ('engine.native_batch_norm(engine.ones(2, 3), None, None, engine.zeros(3), engine.ones(3), False, 0.1, 1e-5)[1]',
     ((0,), 'float32', [])),
    ('engine.native_batch_norm(engine.tensor([[1.0, 2.0], [3.0, 6.0]]), None, None, None, None, True, 0.1, 1e-5)[1]',
     ((2,), 'float32', [2.0, 4.0])),
    # (group norm's statistics have their gradient; torch 2.13 drops the mean's unless rstd's is asked for too)
    ('(lambda x: (sum(t.sum() for t in engine.native_group_norm(x, None, None, 1, 4, 1, 2, 1e-5)).backward(), '
     'x.grad)[1])(engine.tensor([[[1.0], [2.0], [4.0], [0.0]]], requires_grad=True))',
     ((1, 4, 1), 'float32', [2.499879837036133, -1.4998798370361328, 0.3750004768371582, 0.6249995231628418])),
    # results that PyTorch keeps in the graph, and their gradients
    ('(lambda x: (engine.frexp(x).mantissa.backward(engine.ones(5, dtype=engine.float64)), x.grad)[1])('
     'engine.tensor([3.0, 5e-324, float("inf"), 0.0, -6.0], dtype=engine.float64, requires_grad=True))',
     ((5,), 'float64', [0.25, float('inf'), 1.0, 1.0, 0.125])),
    ('(lambda a, b: (engine.nextafter(a, b).sum().backward(), [a.grad, b.grad])[1])('
     'engine.tensor([[1.0, 2.0]], dtype=engine.float64, requires_grad=True), '
     'engine.tensor([[3.0], [0.0]], dtype=engine.float64, requires_grad=True))',
     [((1, 2), 'float64', [2.0, 2.0]), ((2, 1), 'float64', [0.0, 0.0])]),
    ('(lambda x, v: (engine.fill(x, v).sum().backward(), [x.grad, v.grad])[1])('
     'engine.tensor([1.0, float("nan")], requires_grad=True), engine.tensor(2.0, requires_grad=True))',
     [((2,), 'float32', [0.0, 0.0]), ((), 'float32', [2.0])]),
    ('engine.fill(engine.ones(2, requires_grad=True), 3.0).grad_fn.name()', 'FillBackward0'),
    ('engine.fill(engine.ones(2, requires_grad=True), engine.tensor(3.0)).grad_fn.name()', 'FillBackward1'),
    ('(lambda x: (engine.combinations(x, r=3).sum().backward(), x.grad)[1])('
     'engine.tensor([1.0, 2.0], requires_grad=True))',
     ((2,), 'float32', [0.0, 0.0])),
    ('(lambda a: (engine.linalg.matrix_power(a, 0).sum().backward(), a.grad)[1])('
     'engine.ones(2, 2, 2, requires_grad=True))',
     ((2, 2, 2), 'float32', [0.0] * 8)),
    ('(lambda a: (engine.linalg.matrix_power(a, 0).sum().backward(), a.grad)[1])('
     'engine.ones(0, 2, 2, requires_grad=True))',
     ((0, 2, 2), 'float32', [])),
    ('(lambda x, w, b: (engine.nn.functional.group_norm(x, 2, w, b).sum().backward(), [w.grad, b.grad])[1])('
     'engine.ones(0, 4, 3), engine.ones(4, requires_grad=True), engine.ones(4, requires_grad=True))',
     [((4,), 'float32', [0.0] * 4), ((4,), 'float32', [0.0] * 4)]),
    ('(lambda x, q: (engine.quantile(x, q).sum().backward(), [q.grad, x.grad])[1])('
     'engine.tensor([1.0, 5.0, 2.0, 9.0], dtype=engine.float64, requires_grad=True), '
     'engine.tensor([0.3, 0.5], dtype=engine.float64, requires_grad=True))',
     [((2,), 'float64', [3.0, 9.0]), ((4,), 'float64', [0.1, 0.5, 1.4, 0.0])]),
    ('(lambda x, q: (engine.nanquantile(x, q, dim=1).sum().backward(), q.grad)[1])('
     'engine.tensor([[1.0, float("nan"), 2.0, 9.0], [4.0, 3.0, 0.0, 1.0]], dtype=engine.float64), '
     'engine.tensor(0.25, dtype=engine.float64, requires_grad=True))',
     ((), 'float64', [5.0])),
]


def _env(lib):
    return {"engine": lib}


test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env)


def _central(f, x, eps=1e-6):
    """Central differences of the real function ``f`` at ``x`` (a complex x: d/dre + i d/dim, PyTorch's
    convention for the gradient of a real loss)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for step in ((1.0, 1j) if np.iscomplexobj(x) else (1.0,)):
            up, down = x.copy(), x.copy()
            up[i] += eps * step
            down[i] -= eps * step
            g[i] += step * (f(up) - f(down)) / (2 * eps)
    return g


def test_the_sign_of_a_complex_determinant_carries_its_phase_gradient():
    """slogdet's sign was a constant: logdet of a complex matrix lost the gradient of its imaginary part (the
    phase), and any loss of the sign had none. Now one node of two outputs, as PyTorch's."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))

    def loss(m, lib=engine):
        t = lib.tensor(m, requires_grad=lib is engine)
        sign, logabs = lib.linalg.slogdet(t)
        ld = lib.logdet(t)
        return t, (logabs + 2 * sign.real + 3 * sign.imag + ld.imag)

    t, out = loss(a)
    out.backward()
    expected = _central(lambda m: loss(m)[1].item(), a)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-7)
    assert engine.linalg.slogdet(engine.tensor(a.real, requires_grad=True)).sign.grad_fn.name() == \
        "LinalgSlogdetBackward0"


def test_clamp_between_crossed_bounds_gives_the_gradient_to_the_upper_one():
    """Where min > max the clamp is max everywhere, so the gradient goes to max, as PyTorch's (it went to min)."""
    x = engine.tensor([0.5, 2.0, -1.0], dtype=engine.float64, requires_grad=True)
    lo = engine.tensor([1.0, 1.0, 0.0], dtype=engine.float64, requires_grad=True)
    hi = engine.tensor([0.8, 0.8, 3.0], dtype=engine.float64, requires_grad=True)
    out = engine.clamp(x, lo, hi)
    out.backward(engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64))
    assert out.tolist() == [0.8, 0.8, 0.0]
    assert x.grad.tolist() == [0.0, 0.0, 0.0] and lo.grad.tolist() == [0.0, 0.0, 3.0]
    assert hi.grad.tolist() == [1.0, 2.0, 0.0]


def test_index_fill_counts_a_place_named_twice_once_in_the_values_gradient():
    x = engine.zeros(3, 4, dtype=engine.float64, requires_grad=True)
    v = engine.tensor(2.0, dtype=engine.float64, requires_grad=True)
    out = engine.index_fill(x, 1, engine.tensor([1, 3, 1]), v)
    out.backward(engine.ones(3, 4, dtype=engine.float64))
    assert v.grad.item() == 6.0 and x.grad[0].tolist() == [1.0, 0.0, 1.0, 0.0]


def test_the_determinant_of_empty_matrices_has_an_empty_gradient():
    x = engine.zeros(2, 0, 0, dtype=engine.float64, requires_grad=True)
    engine.linalg.det(x).sum().backward()
    assert x.grad.shape == (2, 0, 0)


@pytest.mark.parametrize("shape", [(1,), (2, 3)])
def test_erfc_and_the_normal_functions_of_a_float64_stay_on_the_cpu(shape):
    """A 0-d float64's erfc went to a CUDA kernel (NumPy handed back a scalar, which the engine took for CuPy's)."""
    x = engine.tensor(np.full(shape, -4.826984902407649))
    assert engine.erfc(x[(0,) * len(shape)]).item() == pytest.approx(1.999999999991292, rel=1e-15)
    assert engine.special.ndtr(x).shape == shape


def test_complex_logaddexp_has_pytorchs_gradient():
    """g / conj(1 + exp(b - a)) and g / conj(1 + exp(a - b)): the gradient of a real loss, against central
    differences."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    b = rng.standard_normal(4) + 1j * rng.standard_normal(4)

    def loss(x, y):
        out = engine.logaddexp(x, y)
        return (2 * out.real + 3 * out.imag).sum()

    x, y = engine.tensor(a, requires_grad=True), engine.tensor(b, requires_grad=True)
    loss(x, y).backward()
    np.testing.assert_allclose(x.grad.numpy(), _central(lambda m: loss(engine.tensor(m), engine.tensor(b)).item(), a),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(y.grad.numpy(), _central(lambda m: loss(engine.tensor(a), engine.tensor(m)).item(), b),
                               rtol=1e-6, atol=1e-8)


def test_complex_logcumsumexp_has_pytorchs_gradient():
    """conj(exp(reverse_logcumsumexp(log(conj g) - out) + x)), PyTorch's: against central differences."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))

    def loss(x):
        out = x.logcumsumexp(1)
        return (2 * out.real + 3 * out.imag).sum()

    x = engine.tensor(a, requires_grad=True)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), _central(lambda m: loss(engine.tensor(m)).item(), a), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
def test_complex_renorm_scales_by_the_moduli_norm_with_pytorchs_gradient(p):
    rng = np.random.default_rng(5)
    a = 2 * (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)))

    def loss(x):
        out = x.renorm(p, 0, 2.5)
        return (2 * out.real + 3 * out.imag).sum()

    x = engine.tensor(a, requires_grad=True)
    out = x.renorm(p, 0, 2.5)
    norms = np.linalg.norm(np.abs(a), ord=p, axis=1)
    expected = a * np.where(norms > 2.5, 2.5 / (norms + 1e-7), 1.0)[:, None]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), _central(lambda m: loss(engine.tensor(m)).item(), a), rtol=1e-5,
                               atol=1e-7)



def test_in_place_writes_into_empty_tensors_are_not_overlapping_writes():
    """NumPy gives an empty array zero strides; a write into it was refused as into an expanded tensor (and
    ``matrix_power(a, 0)`` of an empty batch that needs a gradient raised)."""
    for leaf in (engine.zeros(0, 2, 2), engine.zeros(0, 2, 2, requires_grad=True)):
        x = leaf.clone()
        x.copy_(engine.ones(0, 2, 2)).add_(1).mul_(2).fill_(3).clamp_(0, 1)
        assert x.shape == (0, 2, 2)
        if leaf.requires_grad:
            x.sum().backward()
            assert leaf.grad.shape == (0, 2, 2)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        engine.zeros(1, 2).expand(3, 2).add_(1)


def test_frexps_mantissa_and_nextafter_have_first_order_gradients_only():
    x = engine.tensor([3.0, -0.75], dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(engine.frexp(x).mantissa.sum(), x, create_graph=True)
    assert g.tolist() == [0.25, 1.0] and not g.requires_grad
    assert engine.frexp(x).mantissa.grad_fn.name() == "FrexpBackward0"
    assert not engine.frexp(x).exponent.requires_grad
    y = engine.nextafter(x, engine.zeros(2, dtype=engine.float64))
    assert y.grad_fn.name() == "NextafterBackward0" and y.tolist() == [np.nextafter(3.0, 0.0), np.nextafter(-0.75, 0.0)]


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 3, 4), (1, 4), (4, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_the_lu_factors_of_a_wide_or_tall_matrix_have_their_gradient(shape, dtype):
    """The gradient of P, L and U (and of the packed factors) of a matrix that is not square: it was refused; now
    PyTorch's (the square block's, with the rest carried through), against central differences."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype is np.complex128 else 0)
    k = min(shape[-2:])
    wl = rng.standard_normal(shape[:-1] + (k,)) + 0.5j
    wu = rng.standard_normal(shape[:-2] + (k, shape[-1])) - 0.25j

    def loss(m):
        t = engine.tensor(m, requires_grad=True)
        _, lower, upper = engine.linalg.lu(t)
        packed = engine.linalg.lu_factor(t).LU
        out = ((lower * engine.tensor(wl)).sum() + (upper * engine.tensor(wu)).sum() + (packed ** 2).sum()).real
        return t, out

    t, out = loss(a)
    out.backward()
    expected = _central(lambda m: loss(m)[1].item(), a)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_take_along_dim_refuses_an_index_past_either_end_by_its_own_value():
    """torch 2.13 wraps these round (5 of 5 reads element 0, -6 element 4); the engine names them, as gather does."""
    x = engine.arange(10.0).reshape(2, 5)
    for bad in (5, -6):
        with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 1 with size 5"):
            engine.take_along_dim(x, engine.tensor([[bad]]), 1)


def _symmetric_expm(m):
    """exp of a symmetric matrix from its eigendecomposition (float64): the reference."""
    w, v = np.linalg.eigh(m.astype(np.float64))
    return (v * np.exp(w)) @ v.T


def test_matrix_exp_of_float32_keeps_float32s_accuracy_through_the_squarings():
    """Squaring back up in float32 lost up to 3e-7 of the largest entry (torch 2.13's loses 3e-6 on its own
    samples); computed in float64 and rounded once, 4e-8."""
    rng = np.random.default_rng(5)
    mats = []
    for d in ([11.0, 3.0, -2.0, 0.5, 7.0], [9.5, -4.0, 1.0, 2.0, 6.0]):
        q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
        m = q @ np.diag(d) @ q.T
        mats.append(((m + m.T) / 2).astype(np.float32))
    got = engine.linalg.matrix_exp(engine.tensor(np.stack(mats)))
    assert got.dtype == engine.float32
    exact = np.stack([_symmetric_expm(m) for m in mats])
    error = np.abs(got.numpy() - exact) / np.abs(exact).max(axis=(-1, -2), keepdims=True)
    assert error.max() < 1e-7


def test_matrix_exp_squares_each_matrix_of_a_batch_as_often_as_it_needs():
    """One scaling for the whole batch (by its largest norm) squared a small matrix back up as often as the
    largest needed: 1e-14 off where its own scaling gives 2e-16."""
    rng = np.random.default_rng(0)
    small, large = rng.standard_normal((4, 4)) * 0.01, rng.standard_normal((4, 4)) * 6
    small, large = (small + small.T) / 2, (large + large.T) / 2
    got = engine.linalg.matrix_exp(engine.tensor(np.stack([small, large]), dtype=engine.float64)).numpy()
    for g, m in zip(got, (small, large)):
        exact = _symmetric_expm(m)
        assert np.abs(g - exact).max() / np.abs(exact).max() < 1e-15 * (1 if m is small else 100)


@pytest.mark.parametrize("shape", [(50, 1, 50), (50, 2, 50)])
def test_the_pseudo_inverse_of_a_rank_deficient_matrix_has_a_finite_gradient(shape):
    """pinv's gradient went through the SVD's, which divides by differences of singular values: NaN or wild for a
    matrix of lower rank (PyTorch's own samples: pinv(a @ b.mT)). Now Golub and Pereyra's derivative at a constant
    rank, as PyTorch's: against central differences along perturbations that keep the rank (of the factors)."""
    rng = np.random.default_rng(4)
    m, k, n = shape
    a, b = rng.standard_normal((m, k)), rng.standard_normal((n, k))
    w = rng.standard_normal((n, m))

    def loss(fa, fb, lib=engine):
        return (lib.linalg.pinv(fa @ fb.mT) * lib.tensor(w)).sum()

    ta, tb = engine.tensor(a, requires_grad=True), engine.tensor(b, requires_grad=True)
    loss(ta, tb).backward()
    assert np.isfinite(ta.grad.numpy()).all() and np.isfinite(tb.grad.numpy()).all()
    np.testing.assert_allclose(ta.grad.numpy(), _central(lambda x: loss(engine.tensor(x), engine.tensor(b)).item(), a),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tb.grad.numpy(), _central(lambda x: loss(engine.tensor(a), engine.tensor(x)).item(), b),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(20, 12), (12, 20), (2, 15, 9)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_svd_lowrank_recovers_a_low_rank_matrix_and_pca_its_centred_one(shape, dtype):
    """torch.svd_lowrank and pca_lowrank (Halko et al.'s randomised range finder, as PyTorch's): a matrix of rank 4
    with q = 6 comes back whole, its singular values the SVD's; pca_lowrank's are those of the centred matrix."""
    rng = np.random.default_rng(2)
    *batch, m, n = shape
    left, right = rng.standard_normal((*batch, m, 4)), rng.standard_normal((*batch, 4, n))
    if dtype is np.complex128:
        left, right = left + 1j * rng.standard_normal(left.shape), right + 1j * rng.standard_normal(right.shape)
    a = left @ right
    u, s, v = engine.svd_lowrank(engine.tensor(a), q=6)
    assert tuple(u.shape) == (*batch, m, 6) and tuple(s.shape) == (*batch, 6) and tuple(v.shape) == (*batch, n, 6)
    np.testing.assert_allclose(((u * s.unsqueeze(-2).to(u.dtype)) @ v.mH).numpy(), a, atol=1e-10)
    np.testing.assert_allclose(s.numpy()[..., :4], np.linalg.svd(a, compute_uv=False)[..., :4], rtol=1e-10)
    centred = a - a.mean(-2, keepdims=True)
    _, s, _ = engine.pca_lowrank(engine.tensor(a))
    np.testing.assert_allclose(s.numpy()[..., :4], np.linalg.svd(centred, compute_uv=False)[..., :4], rtol=1e-10)
    shift = rng.standard_normal((*batch, 1, n)).astype(a.dtype)  # (M: a mean taken away without forming A - M)
    u, s, v = engine.svd_lowrank(engine.tensor(a + shift), q=6, M=engine.tensor(shift))
    np.testing.assert_allclose(((u * s.unsqueeze(-2).to(u.dtype)) @ v.mH).numpy(), a, atol=1e-10)
    with pytest.raises(ValueError, match="must be non-negative integer and not greater than min"):
        engine.pca_lowrank(engine.tensor(a), q=min(m, n) + 1)


def test_svd_lowranks_singular_values_have_the_svds_gradient_for_a_fixed_seed():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((9, 3)) @ rng.standard_normal((3, 7))

    def top(m):
        engine.manual_seed(0)
        t = engine.tensor(m, requires_grad=True)
        return t, engine.svd_lowrank(t, q=3)[1].sum()

    t, out = top(a)
    out.backward()
    np.testing.assert_allclose(t.grad.numpy(), _central(lambda m: top(m)[1].item(), a), rtol=1e-5, atol=1e-6)
