"""Ops that PyTorch writes from other ops (ATen's composite formulas, or torch.nn.functional's Python) record the
same nodes here, in the same order, so that a graph walked down ``next_functions`` is PyTorch's and so are the
values' last bits: ``outer`` reshapes then multiplies, ``kron`` views each operand beside a 1, ``multi_dot``
multiplies in the cheapest order, ``trapezoid`` is ATen's ``(sum - (first + last) * 0.5) * dx``, the margin losses
add their margin as a Scalar (``AddBackward1``), ``gaussian_nll_loss`` clamps a clone of the variance in place, and
so on. And ops PyTorch records as one node are one node here: ``logcumsumexp`` (it was a ``logaddexp`` node per
element), ``nansum``, ``linalg.cross``, ``addmv``, ``addr``, ``baddbmm``, ``addbmm``, ``pixel_shuffle``,
``pixel_unshuffle``, ``channel_shuffle``, ``rot90`` (a flipped copy, transposed: not contiguous for a quarter turn,
as PyTorch's), ``block_diag``, ``prelu`` (ATen's kernel, the weight viewed along dimension 1), ``sinc``,
``renorm``, ``masked_scatter``, ``put``; ``local_response_norm`` is torch.nn.functional's own composite (padded
squares average-pooled).

The expected graphs were printed by torch 2.13.0 (``Acc``: a leaf's AccumulateGrad; ``None``: an edge to what needs
no gradient). Where torch is installed each expression is also run by both: the graph, the value, the gradient of
a random weighting of the output and the second derivative (the gradient of the first gradients' sum of squares),
all in float64, to 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.engine.helpers import assert_same_run
from tests.engine.helpers import walk as _walk

pytestmark = pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")

GRAPHS = [
    ('torch.outer(v, u)', 'MulBackward0(ViewBackward0(Acc),Acc)'),
    ('torch.ger(v, u)', 'MulBackward0(ViewBackward0(Acc),Acc)'),
    ('torch.kron(a, b)', 'UnsafeViewBackward0(MulBackward0(UnsafeViewBackward0(Acc),UnsafeViewBackward0(Acc)))'),
    ('torch.kron(v, a)', 'UnsafeViewBackward0(MulBackward0(UnsafeViewBackward0(Acc),UnsafeViewBackward0(Acc)))'),
    ('torch.vdot(v, v)', 'VdotBackward0(Acc,Acc)'),
    ('torch.inner(a, b)', 'ViewBackward0(MmBackward0(ViewBackward0(PermuteBackward0(Acc)),ReshapeAliasBackward0(Permut'
                          'eBackward0(Acc))))'),
    ('torch.inner(v, a)', 'ViewBackward0(MmBackward0(ViewBackward0(PermuteBackward0(Acc)),ReshapeAliasBackward0(Permut'
                          'eBackward0(Acc))))'),
    ('torch.linalg.multi_dot([a, a.t(), a, v])', 'ViewBackward0(MmBackward0(Acc,MmBackward0(TBackward0(Acc),MmBackward'
                                                 '0(Acc,UnsqueezeBackward0(Acc)))))'),
    ('torch.linalg.multi_dot([v, a.t(), a])', 'ViewBackward0(MmBackward0(MmBackward0(UnsqueezeBackward0(Acc),TBackward'
                                              '0(Acc)),Acc))'),
    ('torch.linalg.multi_dot([a, m, m.t(), a.t()])', 'ViewBackward0(MmBackward0(Acc,MmBackward0(AddBackward0(Acc,None)'
                                                     ',MmBackward0(TBackward0(AddBackward0(Acc,None)),TBackward0(Acc))'
                                                     ')))'),
    ('torch.linalg.multi_dot([a, m])', 'ViewBackward0(MmBackward0(Acc,AddBackward0(Acc,None)))'),
    ('torch.linalg.multi_dot([v, v])', 'ViewBackward0(MmBackward0(UnsqueezeBackward0(Acc),UnsqueezeBackward0(Acc)))'),
    ('torch.chain_matmul(a, m, m)', 'ViewBackward0(MmBackward0(MmBackward0(Acc,AddBackward0(Acc,None)),AddBackward0(Ac'
                                    'c,None)))'),
    ('a.repeat_interleave(2, dim=1)', 'ViewBackward0(CloneBackward0(ExpandBackward0(UnsqueezeBackward0(Acc))))'),
    ('a.repeat_interleave(3)',
     'ViewBackward0(CloneBackward0(ExpandBackward0(UnsqueezeBackward0(ViewBackward0(Acc)))))'),
    ('a.repeat_interleave(torch.tensor([2]), dim=0)', 'IndexSelectBackward0(Acc)'),
    ('(a @ b.t()).add_(1.5)', 'AddBackward0(MmBackward0(Acc,TBackward0(Acc)),None)'),
    ('torch.matmul(a.unsqueeze(0) * 2, b.t()).mul_(a[0, 0])',  # (_unsafe_view makes no view: no CopySlices)
     'MulBackward0(UnsafeViewBackward0(MmBackward0(ViewBackward0(MulBackward0(UnsqueezeBackward0(Acc),None)),TBackwa'
     'rd0(Acc))),SelectBackward0(SelectBackward0(Acc)))'),
    ('torch.atleast_1d(v[0])', 'ViewBackward0(SelectBackward0(Acc))'),
    ('torch.atleast_2d(v[0])', 'ViewBackward0(SelectBackward0(Acc))'),
    ('torch.atleast_2d(v)', 'UnsqueezeBackward0(Acc)'),
    ('torch.atleast_3d(v)', 'UnsqueezeBackward0(UnsqueezeBackward0(Acc))'),
    ('torch.atleast_3d(a)', 'UnsqueezeBackward0(Acc)'),
    ('torch.cartesian_prod(v, u)', 'StackBackward0(UnsafeViewBackward0(CloneBackward0(ExpandBackward0(ViewBackward0(Ac'
                                   'c)))),UnsafeViewBackward0(CloneBackward0(ExpandBackward0(ViewBackward0(Acc)))))'),
    ("torch.meshgrid(v, u, indexing='xy')[0]", 'ExpandBackward0(ViewBackward0(Acc))'),
    ('torch.trapezoid(a)', 'MulBackward1(SubBackward0(SumBackward1(Acc),MulBackward1(AddBackward0(SelectBackward0(Acc)'
                           ',SelectBackward0(Acc)))))'),
    ('torch.trapezoid(a, dx=2.0, dim=0)', 'MulBackward1(SubBackward0(SumBackward1(Acc),MulBackward1(AddBackward0(Selec'
                                          'tBackward0(Acc),SelectBackward0(Acc)))))'),
    ('torch.trapezoid(a, x3[0])', 'DivBackward1(SumBackward1(MulBackward0(AddBackward0(SliceBackward0(Acc),SliceBackwa'
                                  'rd0(Acc)),None)))'),
    ('torch.cumulative_trapezoid(a)', 'CumsumBackward0(MulBackward1(AddBackward0(SliceBackward0(Acc),SliceBackward0(Ac'
                                      'c))))'),
    ('torch.cumulative_trapezoid(a, x3[0])', 'DivBackward1(CumsumBackward0(MulBackward0(AddBackward0(SliceBackward0(Ac'
                                             'c),SliceBackward0(Acc)),None)))'),
    ('m.logdet()', 'WhereBackward0(None,LinalgSlogdetBackward0(AddBackward0(Acc,None)))'),
    ('F.hinge_embedding_loss(a, torch.tensor([[1., -1, 1], [-1, 1, 1]]))', 'MeanBackward0(AddBackward0(WhereBackward0('
                                                                           'ClampMinBackward0(SubBackward0(None,Acc)),'
                                                                           'None),WhereBackward0(Acc,None)))'),
    ('F.margin_ranking_loss(v, u[:3], torch.tensor([1., -1, 1]), margin=0.5)',
     'MeanBackward0(ClampMinBackward0(AddBackward1(MulBackward0(None,SubBackward0(Acc,SliceBackward0(Acc))))))'),
    ('F.cosine_embedding_loss(a, b, torch.tensor([1., -1]), margin=0.1)', 'MeanBackward0(AddBackward0(WhereBackward0(S'
                                                                          'ubBackward0(None,DivBackward0(SumBackward1('
                                                                          'MulBackward0(Acc,Acc)),SqrtBackward0(MulBac'
                                                                          'kward0(AddBackward1(SumBackward1(MulBackwar'
                                                                          'd0(Acc,Acc))),AddBackward1(SumBackward1(Mul'
                                                                          'Backward0(Acc,Acc))))))),None),WhereBackwar'
                                                                          'd0(ClampMinBackward0(SubBackward1(DivBackwa'
                                                                          'rd0(SumBackward1(MulBackward0(Acc,Acc)),Sqr'
                                                                          'tBackward0(MulBackward0(AddBackward1(SumBac'
                                                                          'kward1(MulBackward0(Acc,Acc))),AddBackward1'
                                                                          '(SumBackward1(MulBackward0(Acc,Acc)))))))),'
                                                                          'None)))'),
    ('F.triplet_margin_loss(a, b, a * 2)', 'MeanBackward0(ClampMinBackward0(SubBackward0(AddBackward1(NormBackward1(Ad'
                                           'dBackward1(SubBackward0(Acc,Acc)))),NormBackward1(AddBackward1(SubBackward'
                                           '0(Acc,MulBackward0(Acc,None)))))))'),
    ('F.triplet_margin_loss(a, b, a * 2, swap=True, p=3)', 'MeanBackward0(ClampMinBackward0(SubBackward0(AddBackward1('
                                                           'NormBackward1(AddBackward1(SubBackward0(Acc,Acc)))),Minimu'
                                                           'mBackward0(NormBackward1(AddBackward1(SubBackward0(Acc,Mul'
                                                           'Backward0(Acc,None)))),NormBackward1(AddBackward1(SubBackw'
                                                           'ard0(Acc,MulBackward0(Acc,None))))))))'),
    ('F.pairwise_distance(a, b)', 'NormBackward1(AddBackward1(SubBackward0(Acc,Acc)))'),
    ('F.multilabel_soft_margin_loss(a, (b > 0.5).double())', 'MeanBackward0(DivBackward0(SumBackward1(NegBackward0(Add'
                                                             'Backward0(MulBackward0(None,LogSigmoidBackward0(Acc)),Mu'
                                                             'lBackward0(None,LogSigmoidBackward0(NegBackward0(Acc))))'
                                                             ')),None))'),
    ('F.gaussian_nll_loss(a, b, v[:1].expand(2, 3) + 1)', 'MeanBackward0(MulBackward0(AddBackward0(LogBackward0(CloneB'
                                                          'ackward0(AddBackward0(ExpandBackward0(SliceBackward0(Acc)),'
                                                          'None))),DivBackward0(PowBackward0(SubBackward0(Acc,Acc)),Cl'
                                                          'oneBackward0(AddBackward0(ExpandBackward0(SliceBackward0(Ac'
                                                          'c)),None)))),None))'),
    ("F.gaussian_nll_loss(a, b, v[:2], full=True, reduction='sum')", 'SumBackward0(AddBackward0(MulBackward0(AddBackwa'
                                                                     'rd0(LogBackward0(CloneBackward0(UnsqueezeBackwar'
                                                                     'd0(SliceBackward0(Acc)))),DivBackward0(PowBackwa'
                                                                     'rd0(SubBackward0(Acc,Acc)),CloneBackward0(Unsque'
                                                                     'ezeBackward0(SliceBackward0(Acc))))),None),None)'
                                                                     ')'),
    ('F.rms_norm(a, (3,), v)', 'MulBackward0(MulBackward0(Acc,RsqrtBackward0(AddBackward1(MeanBackward1(PowBackward0(A'
                               'cc))))),Acc)'),
    ('F.rms_norm(a, (2, 3), eps=1e-3)', 'MulBackward0(Acc,RsqrtBackward0(AddBackward1(MeanBackward1(PowBackward0(Acc))'
                                        ')))'),
    ('F.rrelu(a - 0.5, training=False)', 'RreluWithNoiseBackward0(SubBackward0(Acc,None))'),
    # one node each, as PyTorch's (they were several)
    ('a.logcumsumexp(1)', 'LogcumsumexpBackward0(Acc)'), ('(a * 300).logcumsumexp(-2)', 'LogcumsumexpBackward0('
                                                                                        'MulBackward0(Acc,None))'),
    ('a[0, 0].logcumsumexp(0)', 'LogcumsumexpBackward0(SelectBackward0(SelectBackward0(Acc)))'),
    ('a.nansum()', 'NansumBackward0(Acc)'), ('a.nansum((0, 1))', 'NansumBackward0(Acc)'),
    ('torch.nansum(a, 1, keepdim=True)', 'NansumBackward0(Acc)'),
    ('torch.linalg.cross(a, b)', 'LinalgCrossBackward0(Acc,Acc)'),
    ('torch.cross(a, b[:1], dim=1)', 'LinalgCrossBackward0(Acc,SliceBackward0(Acc))'),
    ('torch.linalg.cross(a, b.detach())', 'LinalgCrossBackward0(Acc,None)'),
    ('torch.addmv(v[:2], a, v)', 'AddmvBackward0(SliceBackward0(Acc),Acc,Acc)'),
    ('torch.addmv(u[:1], a, v, beta=0.5, alpha=2)', 'AddmvBackward0(SliceBackward0(Acc),Acc,Acc)'),
    ('torch.addr(a, v[:2], v, beta=0, alpha=-1.5)', 'AddrBackward0(Acc,SliceBackward0(Acc),Acc)'),
    ('v.addr(v, v)', 'AddrBackward0(Acc,Acc,Acc)'),
    ('torch.baddbmm(u, a[None], b.t()[None].expand(1, 3, 2)[..., :1].expand(1, 3, 4) * 1)',
     'BaddbmmBackward0(Acc,UnsqueezeBackward0(Acc),MulBackward0(ExpandBackward0(SliceBackward0(ExpandBackward0('
     'UnsqueezeBackward0(TBackward0(Acc))))),None))'),
    ('torch.addbmm(a[:, :2], a.reshape(3, 2, 1), b.reshape(3, 1, 2), beta=2)',
     'AddbmmBackward0(SliceBackward0(Acc),ViewBackward0(Acc),ViewBackward0(Acc))'),
    ('F.pixel_shuffle(torch.cat([a, b, a * 2, b]).reshape(2, 4, 3, 1), 2)',
     'PixelShuffleBackward0(ViewBackward0(CatBackward0(Acc,Acc,MulBackward0(Acc,None),Acc)))'),
    ('F.pixel_unshuffle(torch.cat([a, b]).reshape(1, 4, 3), 1)',
     'PixelUnshuffleBackward0(ViewBackward0(CatBackward0(Acc,Acc)))'),
    ('F.pixel_unshuffle(torch.cat([a, b]).reshape(1, 1, 4, 3)[..., :2], 2)',
     'PixelUnshuffleBackward0(SliceBackward0(ViewBackward0(CatBackward0(Acc,Acc))))'),
    ('F.channel_shuffle(torch.cat([a, b]).reshape(2, 6, 1), 3)',
     'ChannelShuffleBackward0(ViewBackward0(CatBackward0(Acc,Acc)))'),
    ('a.rot90()', 'Rot90Backward0(Acc)'), ('m.rot90(2)', 'Rot90Backward0(AddBackward0(Acc,None))'),
    ('a.rot90(-1, [1, 0])', 'Rot90Backward0(Acc)'), ('a.rot90(4)', 'Rot90Backward0(Acc)'),
    ('torch.block_diag(a, v, u[0])', 'BlockDiagBackward0(Acc,Acc,SelectBackward0(Acc))'),
    ('torch.block_diag(a, torch.ones(2, 2, dtype=torch.int64))', 'BlockDiagBackward0(Acc,None)'),
    ('F.prelu(a - 0.5, v[:1])', 'PreluKernelBackward0(SubBackward0(Acc,None),ViewBackward0(SliceBackward0(Acc)))'),
    ('F.prelu(a - 0.5, v)', 'PreluKernelBackward0(SubBackward0(Acc,None),ViewBackward0(Acc))'),
    ('F.prelu(torch.cat([a, b]).reshape(2, 3, 2) - 0.5, v)',
     'PreluKernelBackward0(SubBackward0(ViewBackward0(CatBackward0(Acc,Acc)),None),ViewBackward0(Acc))'),
    ('F.prelu(v - 0.5, u[0])', 'PreluKernelBackward0(SubBackward0(Acc,None),ViewBackward0(SelectBackward0(Acc)))'),
    ('(a * 3 - 2).sinc()', 'SincBackward0(SubBackward0(MulBackward0(Acc,None),None))'),
    ('torch.sinc(torch.cat([v, v * 0]))', 'SincBackward0(CatBackward0(Acc,MulBackward0(Acc,None)))'),
    ('a.renorm(2, 0, 1.0)', 'RenormBackward0(Acc)'),
    ('(a * 3).renorm(1, 1, 2.0)', 'RenormBackward0(MulBackward0(Acc,None))'),
    ('torch.renorm(a, 3, 0, 10.0)', 'RenormBackward0(Acc)'),
    ('a.masked_scatter(b > 0.5, u)', 'MaskedScatterBackward0(Acc,Acc)'),
    ('a.masked_scatter(torch.tensor([True, False, True]), torch.cat([u, v]))',
     'MaskedScatterBackward0(Acc,CatBackward0(Acc,Acc))'),
    ('a.put(torch.tensor([0, 4, -1]), v)', 'PutBackward0(Acc,Acc)'),
    ('a.put(torch.tensor([0, 4, 0]), v, accumulate=True)', 'PutBackward0(Acc,Acc)'),
    # bilinear: the batches flattened, one TrilinearBackward0 (ATen's)
    ('F.bilinear(a, b, torch.cat([a, b]).reshape(2, 3, 2)[..., :1].expand(2, 3, 3) * 1)',
     'ViewBackward0(TrilinearBackward0(ViewBackward0(Acc),MulBackward0(ExpandBackward0(SliceBackward0(ViewBackward0('
     'CatBackward0(Acc,Acc)))),None),ViewBackward0(Acc)))'),
    ('F.bilinear(a, b, (u[:2, None, None] * v[None, :, None]) * v, u[:2])',
     'AddBackward0(ViewBackward0(TrilinearBackward0(ViewBackward0(Acc),MulBackward0(MulBackward0(UnsqueezeBackward0('
     'UnsqueezeBackward0(SliceBackward0(Acc))),UnsqueezeBackward0(UnsqueezeBackward0(Acc))),Acc),ViewBackward0(Acc))'
     '),SliceBackward0(Acc))'),
    ('F.bilinear(v, v, (u[:2, None, None] * v[None, :, None]) * v)',
     'ViewBackward0(TrilinearBackward0(ViewBackward0(Acc),MulBackward0(MulBackward0(UnsqueezeBackward0(UnsqueezeBack'
     'ward0(SliceBackward0(Acc))),UnsqueezeBackward0(UnsqueezeBackward0(Acc))),Acc),ViewBackward0(Acc)))'),
    # local_response_norm: torch.nn.functional's composite, op for op
    ('F.local_response_norm(torch.cat([a, b]).reshape(1, 4, 3), 2)',
     'DivBackward0(ViewBackward0(CatBackward0(Acc,Acc)),PowBackward0(AddBackward0(MulBackward0(SqueezeBackward1(AvgP'
     'ool2DBackward0(ConstantPadNdBackward0(UnsqueezeBackward0(MulBackward0(ViewBackward0(CatBackward0(Acc,Acc)),Vie'
     'wBackward0(CatBackward0(Acc,Acc))))))),None),None)))'),
    ('F.local_response_norm(torch.cat([a, b]).reshape(1, 3, 2, 2), 3, alpha=0.1, k=2.0)',
     'DivBackward0(ViewBackward0(CatBackward0(Acc,Acc)),PowBackward0(AddBackward0(MulBackward0(ViewBackward0(Squeeze'
     'Backward1(AvgPool3DBackward0(ConstantPadNdBackward0(ViewBackward0(MulBackward0(ViewBackward0(CatBackward0(Acc,'
     'Acc)),ViewBackward0(CatBackward0(Acc,Acc)))))))),None),None)))'),
    # cov and corrcoef: ATen's formulas, node for node
    ('a.cov()',
     'SqueezeBackward0(DivBackward0(MmBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(Acc),N'
     'one))),TBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(Acc),None))))),None))'),
    ('torch.cov(v)',
     'SqueezeBackward0(DivBackward0(MmBackward0(SubBackward0(ViewBackward0(Acc),UnsqueezeBackward0(DivBackward0(SumB'
     'ackward1(ViewBackward0(Acc)),None))),TBackward0(SubBackward0(ViewBackward0(Acc),UnsqueezeBackward0(DivBackward'
     '0(SumBackward1(ViewBackward0(Acc)),None))))),None))'),
    ('torch.cov(a, correction=0, aweights=v)',
     'SqueezeBackward0(DivBackward0(MmBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(MulBac'
     'kward0(Acc,Acc)),SumBackward0(Acc)))),TBackward0(MulBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0'
     '(SumBackward1(MulBackward0(Acc,Acc)),SumBackward0(Acc)))),Acc))),SumBackward0(Acc)))'),
    ('torch.cov(a, fweights=torch.tensor([1, 0, 2]), aweights=v, correction=2)',
     'SqueezeBackward0(DivBackward0(MmBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(MulBac'
     'kward0(Acc,MulBackward0(None,Acc))),SumBackward0(MulBackward0(None,Acc))))),TBackward0(MulBackward0(SubBackwar'
     'd0(Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(MulBackward0(Acc,MulBackward0(None,Acc))),SumBackward0(Mul'
     'Backward0(None,Acc))))),MulBackward0(None,Acc)))),SubBackward0(SumBackward0(MulBackward0(None,Acc)),DivBackwar'
     'd0(MulBackward1(SumBackward0(MulBackward0(MulBackward0(None,Acc),Acc))),SumBackward0(MulBackward0(None,Acc))))'
     '))'),
    ('torch.corrcoef(a)',
     'ClampBackward1(DivBackward0(DivBackward0(SqueezeBackward0(DivBackward0(MmBackward0(SubBackward0(Acc,UnsqueezeB'
     'ackward0(DivBackward0(SumBackward1(Acc),None))),TBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(Su'
     'mBackward1(Acc),None))))),None)),ViewBackward0(SqrtBackward0(DiagonalBackward0(SqueezeBackward0(DivBackward0(M'
     'mBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(Acc),None))),TBackward0(SubBackward0('
     'Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(Acc),None))))),None)))))),ViewBackward0(SqrtBackward0(Diagona'
     'lBackward0(SqueezeBackward0(DivBackward0(MmBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(SumBackw'
     'ard1(Acc),None))),TBackward0(SubBackward0(Acc,UnsqueezeBackward0(DivBackward0(SumBackward1(Acc),None))))),None'
     ')))))))'),
]



def _names(torch):
    rs = np.random.RandomState(3)

    def leaf(*shape):
        return torch.tensor(rs.rand(*shape) + 0.1, dtype=torch.float64, requires_grad=True)

    return {"torch": torch, "F": torch.nn.functional, "a": leaf(2, 3), "b": leaf(2, 3), "v": leaf(3), "u": leaf(4),
            "m": leaf(3, 3) + torch.eye(3, dtype=torch.float64) * 2, "x3": torch.tensor([[0.0, 1.0, 3.0]],
                                                                                         dtype=torch.float64)}


@pytest.mark.parametrize(("expression", "graph"), GRAPHS, ids=[e for e, _ in GRAPHS])
def test_the_graph_is_pytorchs(expression, graph):
    assert _walk(eval(expression, _names(engine)).grad_fn) == graph  # noqa: S307 - the table's own expressions


def _run(torch, expression):
    names = _names(torch)
    out = eval(expression, names)  # noqa: S307 - the table's own expressions
    leaves = [t for k, t in names.items() if k in "abvum" and isinstance(t, torch.Tensor) and t.requires_grad
              and k in expression]
    rs = np.random.RandomState(5)
    weights = torch.tensor(rs.rand(*out.shape), dtype=torch.float64)
    grads = torch.autograd.grad(out, leaves, weights, create_graph=True, allow_unused=True)
    used = [g for g in grads if g is not None]
    squares = sum((g * g).sum() for g in used)
    second = (torch.autograd.grad(squares, leaves, allow_unused=True)
              if isinstance(squares, torch.Tensor) and squares.requires_grad else [None] * len(leaves))
    def as_array(t):
        return None if t is None else t.detach().numpy()

    return (_walk(out.grad_fn), out.detach().numpy(), [as_array(g) for g in grads], [as_array(g) for g in second])


@pytest.mark.torch
@pytest.mark.parametrize("expression", [e for e, _ in GRAPHS], ids=[e for e, _ in GRAPHS])
def test_graph_values_and_derivatives_are_torchs(expression):
    torch = pytest.importorskip("torch")
    assert_same_run(_run(engine, expression), _run(torch, expression))
