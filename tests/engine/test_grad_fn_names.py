"""A node's name is PyTorch's: ``y.grad_fn.name()`` and a printed tensor's ``grad_fn=<...>`` read as PyTorch 2.13
prints them for the same expression (``MulBackward0``, ``SumBackward1`` with a dim, ``SelectBackward0`` for
``x[0]``), and ``next_functions`` leads to an ``AccumulateGrad`` for a leaf, as PyTorch's does.

The graph itself is PyTorch's too, walked down ``next_functions`` to the leaves: one edge per Tensor argument of
PyTorch's schema (none for the 3 of ``a ** 3`` or the dims of ``a.t()``; one, empty, for the wrapped 2 of
``a * 2``), ``nn.Linear`` one ``AddmmBackward0`` and ``MSELoss`` one ``MseLossBackward0``.

The expected names were printed by torch 2.13.0; where torch is installed every expression is also run by both and
the names and whole graphs compared. A matrix product past two dimensions folds or expands through views into
``mm``/``bmm``, as PyTorch's matmul (tests/engine/test_matmul_routes.py has the rest). An index of a slice and an
index array (``a[1:, [0, 2]]``) slices, then indexes, as PyTorch's; a basic index of several parts (``a[0, 1]``)
applies them in turn, as PyTorch's: two ``SelectBackward0``.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.engine.helpers import walk as _walk

pytestmark = pytest.mark.filterwarnings("ignore:Using a target size")  # mse_loss of two shapes, on purpose

# (expression, torch 2.13.0's name); a, b: (2, 3); c: (2, 1, 3); w: (3, 2); v: (3,); a3: (4, 2, 3); b3: (4, 3, 5);
# im: (2, 3, 6, 6) images; cv: Conv2d(3, 4, 3)
NAMES = [
    ("a + b", "AddBackward0"), ("a + 1", "AddBackward0"), ("1 + a", "AddBackward0"),
    ("a.add(b, alpha=2)", "AddBackward0"),
    ("a - b", "SubBackward0"), ("a - 1", "SubBackward0"), ("1 - a", "RsubBackward1"),
    ("np.float64(2) - a", "RsubBackward1"), ("a * b", "MulBackward0"), ("2 * a", "MulBackward0"),
    ("a / b", "DivBackward0"), ("a / 2", "DivBackward0"), ("a ** 3", "PowBackward0"), ("a.pow(3)", "PowBackward0"),
    ("a.square()", "PowBackward0"), ("a ** b", "PowBackward1"), ("torch.tensor(2.) ** a", "PowBackward1"),
    ("2 ** a", "PowBackward2"), ("torch.pow(2, a)", "PowBackward2"), ("-a", "NegBackward0"),
    ("a @ w", "MmBackward0"), ("a.mm(w)", "MmBackward0"), ("v @ v", "DotBackward0"), ("a @ v", "MvBackward0"),
    ("v @ w", "SqueezeBackward4"), ("a3 @ w", "UnsafeViewBackward0"), ("a3 @ b3", "UnsafeViewBackward0"),
    ("a3 @ v", "UnsafeViewBackward0"), ("a @ b3", "CloneBackward0"),
    ("a.reshape(6)", "ViewBackward0"), ("a.view(3, 2)", "ViewBackward0"), ("a.flatten()", "ViewBackward0"),
    ("a.unsqueeze(-1)", "UnsqueezeBackward0"), ("c.squeeze()", "SqueezeBackward0"),
    ("c.squeeze(1)", "SqueezeBackward1"),
    ("c.squeeze((0, 1))", "SqueezeBackward2"), ("a.squeeze()", "SqueezeBackward0"),
    ("a.t()", "TBackward0"), ("v.t()", "TBackward0"), ("a.T", "PermuteBackward0"),
    ("a.transpose(0, 1)", "TransposeBackward0"), ("a.permute(1, 0)", "PermuteBackward0"),
    ("a.expand(4, 2, 3)", "ExpandBackward0"), ("a.clone()", "CloneBackward0"), ("a.double()", "ToCopyBackward0"),
    ("a.to(torch.float64)", "ToCopyBackward0"), ("torch.stack([a, b])", "StackBackward0"),
    ("torch.cat([a, b])", "CatBackward0"),
    ("a[0]", "SelectBackward0"), ("a[-1]", "SelectBackward0"), ("a[:, 1]", "SelectBackward0"),
    ("a[0, 1]", "SelectBackward0"), ("a[torch.tensor(0)]", "SelectBackward0"), ("a[0:1]", "SliceBackward0"),
    ("a[:]", "SliceBackward0"), ("a[0, 0:1]", "SliceBackward0"), ("a[0:1, 0]", "SelectBackward0"),
    ("a[:, 0:3]", "AliasBackward0"), ("a[...]", "AliasBackward0"), ("a[None]", "UnsqueezeBackward0"),
    ("a[..., None]", "UnsqueezeBackward0"), ("a[0, None, 1]", "SelectBackward0"), ("a[:, None, 1:]", "SliceBackward0"),
    ("a[[0, 1]]", "IndexBackward0"), ("a[a > 0.5]", "IndexBackward0"), ("a[1:, [0, 2]]", "IndexBackward0"),
    ("a.sum()", "SumBackward0"), ("a.sum(0)", "SumBackward1"), ("a.sum(dim=1, keepdim=True)", "SumBackward1"),
    ("a.mean()", "MeanBackward0"), ("a.mean(0)", "MeanBackward1"), ("a.max()", "MaxBackward1"),
    ("a.min()", "MinBackward1"), ("a.max(0)[0]", "MaxBackward0"), ("a.min(dim=1).values", "MinBackward0"),
    ("torch.maximum(a, b)", "MaximumBackward0"), ("torch.minimum(a, b)", "MinimumBackward0"),
    ("a.max(b)", "MaximumBackward0"), ("torch.where(a > 0.5, a, b)", "WhereBackward0"),
    ("a.exp()", "ExpBackward0"), ("a.sin()", "SinBackward0"), ("a.cos()", "CosBackward0"), ("a.log()", "LogBackward0"),
    ("a.abs()", "AbsBackward0"), ("a.sqrt()", "SqrtBackward0"), ("a.sigmoid()", "SigmoidBackward0"),
    ("a.tanh()", "TanhBackward0"), ("a.clamp(min=0)", "ClampBackward1"), ("a.clamp(max=1)", "ClampBackward1"),
    ("a.clamp(0, 1)", "ClampBackward1"), ("a.clamp(min=torch.zeros(3))", "ClampBackward0"),
    ("a.relu()", "ReluBackward0"), ("torch.nn.functional.relu(a)", "ReluBackward0"),
    ("torch.nn.ReLU()(a)", "ReluBackward0"), ("torch.nn.Tanh()(a)", "TanhBackward0"),
    ("torch.nn.Flatten(0, 1)(a)", "ViewBackward0"), ("a.detach() * b", "MulBackward0"),
    ("a3.unflatten(1, (1, 2))", "ViewBackward0"), ("cv(im)", "ConvolutionBackward0"), ("cv(im[0])", "SqueezeBackward1"),
    ("torch.nn.functional.conv1d(a3, c, groups=2)", "ConvolutionBackward0"),
    ("torch.nn.functional.max_pool2d(im, 2)", "MaxPool2DWithIndicesBackward0"),
    ("torch.nn.functional.max_pool3d(im, 2)", "MaxPool3DWithIndicesBackward0"),
    ("torch.nn.functional.avg_pool2d(im, 2)", "AvgPool2DBackward0"),
    ("torch.nn.functional.adaptive_avg_pool2d(im, 1)", "MeanBackward1"),
    ("torch.nn.functional.adaptive_avg_pool2d(im, 4)", "AdaptiveAvgPool2DBackward0"),
    ("torch.nn.functional.max_pool1d(a3, 2)", "SqueezeBackward1"),
    ("torch.nn.AvgPool1d(2)(a3)", "SqueezeBackward1"),
    ("a.cumsum(1)", "CumsumBackward0"), ("torch.cumsum(a, 0)", "CumsumBackward0"),
    ("torch.nn.functional.embedding(torch.tensor([1, 0, 1]), a)", "EmbeddingBackward0"),
    ("a.tril()", "TrilBackward0"), ("torch.triu(a, 1)", "TriuBackward0"),
    ("lin(a)", "AddmmBackward0"), ("lin(a3)", "ViewBackward0"), ("lin(v)", "ViewBackward0"),
    ("torch.addmm(b, a, w @ a)", "AddmmBackward0"), ("b.addmm(a, w @ a, beta=0.5, alpha=2)", "AddmmBackward0"),
    ("torch.nn.functional.linear(a, w.t())", "MmBackward0"),
    ("torch.nn.MSELoss(reduction='sum')(a, b)", "MseLossBackward0"),
    ("torch.nn.functional.mse_loss(a, c)", "MseLossBackward0"),
    ("a.sub(b, alpha=3)", "SubBackward0"), ("a.add(2, alpha=3)", "AddBackward0"),
]

# the graphs, down to the leaves (Acc: a leaf's AccumulateGrad; None: an edge to a tensor that needs no gradient),
# as torch 2.13.0 prints them with _walk below
GRAPHS = [
    ("a ** 3", "PowBackward0(Acc)"), ("2 ** a", "PowBackward2(Acc)"), ("1 - a", "RsubBackward1(Acc)"),
    ("2 * a", "MulBackward0(Acc,None)"), ("2 / a", "MulBackward0(ReciprocalBackward0(Acc),None)"),
    ("np.float64(2) / a", "MulBackward0(ReciprocalBackward0(Acc),None)"),
    ("1 + a", "AddBackward0(Acc,None)"), ("a - 1", "SubBackward0(Acc,None)"),
    ("a.add(b, alpha=2)", "AddBackward0(Acc,Acc)"), ("a.sub(b.detach(), alpha=2)", "SubBackward0(Acc,None)"),
    ("a.div(b, rounding_mode='floor')", "DivBackward2(Acc,Acc)"),
    ("a.div(2, rounding_mode='trunc')", "DivBackward2(Acc,None)"),
    ("a // 2", "torch::autograd::NotImplemented(Acc)"), ("b.detach() // a", "torch::autograd::NotImplemented(Acc)"),
    ("torch.add(a, b, alpha=2)", "AddBackward0(Acc,Acc)"), ("torch.sub(a, b, alpha=0.5)", "SubBackward0(Acc,Acc)"),
    ("a.t()", "TBackward0(Acc)"), ("a.reshape(6)", "ViewBackward0(Acc)"), ("a.expand(4, 2, 3)", "ExpandBackward0(Acc)"),
    ("a.max(0)[0]", "MaxBackward0(Acc)"), ("torch.where(a > 0.5, a, b)", "WhereBackward0(Acc,Acc)"),
    ("torch.where(a > 0.5, a, 0.0)", "WhereBackward0(Acc,None)"),
    ("a.clamp(min=torch.zeros(3))", "ClampBackward0(Acc,None,None)"),
    ("torch.nn.functional.conv1d(a3, c, groups=2)", "ConvolutionBackward0(Acc,Acc,None)"),
    ("torch.nn.functional.embedding(torch.tensor([1, 0, 1]), a)", "EmbeddingBackward0(Acc)"),
    ("a.clamp_min(0.3)", "ClampMinBackward0(Acc)"), ("a.clamp_max(b)", "ClampMaxBackward1(Acc,Acc)"),
    ("torch.clamp_min(a, b.detach())", "ClampMinBackward1(Acc,None)"),
    ("torch.nn.functional.layer_norm(a, (3,))", "NativeLayerNormBackward0(Acc,None,None)"),
    ("torch.nn.functional.normalize(a)", "DivBackward0(Acc,ExpandBackward0(ClampMinBackward0("
                                         "LinalgVectorNormBackward0(Acc))))"),
    ("torch.nn.functional.silu(a)", "SiluBackward0(Acc)"), ("torch.nn.functional.selu(a)", "EluBackward0(Acc)"),
    ("torch.nn.functional.leaky_relu(a, 0.1)", "LeakyReluBackward0(Acc)"),
    ("torch.nn.functional.relu6(a)", "HardtanhBackward0(Acc)"),
    ("torch.nn.BatchNorm1d(3)(a)", "NativeBatchNormBackward0(Acc,Acc,Acc)"),
    ("torch.nn.functional.batch_norm(im, None, None, training=True)", "NativeBatchNormBackward0(Acc,None,None)"),
    ("a.median(1)[0]", "MedianBackward1(Acc)"), ("a.nanmedian(0, keepdim=True)[0]", "NanmedianBackward1(Acc)"),
    ("a.mode(1)[0]", "ModeBackward0(Acc)"), ("a.kthvalue(2, 1)[0]", "KthvalueBackward0(Acc)"),
    ("a.cummax(1)[0]", "CummaxBackward0(Acc)"), ("a.cummin(0)[0]", "CumminBackward0(Acc)"),
    ("a[0][0].median(0)[0]", "MedianBackward1(SelectBackward0(SelectBackward0(Acc)))"),
    # matmul past two dimensions, and a vector times a matrix, as ATen's _matmul_impl records them
    ("v @ w", "SqueezeBackward4(MmBackward0(UnsqueezeBackward0(Acc),Acc))"),
    ("a3 @ w", "UnsafeViewBackward0(MmBackward0(ViewBackward0(Acc),Acc))"),
    ("a3 @ b3", "UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(Acc)),ViewBackward0(ExpandBackward0("
                "Acc))))"),
    ("a3 @ v", "UnsafeViewBackward0(MvBackward0(ViewBackward0(Acc),Acc))"),
    ("a @ b3", "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0(UnsafeViewBackward0(CloneBackward0("
               "TransposeBackward0(Acc))),TBackward0(Acc)))))"),
    ("a3 @ w.detach()", "UnsafeViewBackward0(MmBackward0(ViewBackward0(Acc),None))"),
    ("a3.transpose(0, 1) @ w.detach()", "UnsafeViewBackward0(BmmBackward0(ReshapeAliasBackward0(ExpandBackward0("
                                        "TransposeBackward0(Acc))),None))"),
    ("a3[None] @ b3[:1]", "UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(UnsqueezeBackward0(Acc))),"
                          "ReshapeAliasBackward0(ExpandBackward0(SliceBackward0(Acc)))))"),
    ("b3[:1] @ b3.transpose(1, 2)", "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0(ViewBackward0("
                                    "TransposeBackward0(TransposeBackward0(Acc))),TBackward0(SqueezeBackward1("
                                    "SliceBackward0(Acc)))))))"),
    ("v @ b3", "UnsafeViewBackward0(MvBackward0(UnsafeViewBackward0(CloneBackward0(TransposeBackward0(Acc))),Acc))"),
    ("v.detach() @ b3", "UnsafeViewBackward0(BmmBackward0(None,ViewBackward0(ExpandBackward0(Acc))))"),
    ("torch.bmm(a3, b3[:, :3, :2])", "BmmBackward0(Acc,SliceBackward0(Acc))"),
    # in-place fills and copies: PyTorch's nodes (a number is no edge of fill_; copy_'s CopyBackwards has two)
    ("(a * 2).zero_()", "ZeroBackward0(MulBackward0(Acc,None))"),
    ("(a * 2).fill_(3.)", "FillBackward2(MulBackward0(Acc,None))"),
    ("(a * 2).fill_(torch.tensor(3.))", "FillBackward3(MulBackward0(Acc,None),None)"),
    ("(a * 2).fill_(b[0, 0])", "FillBackward3(MulBackward0(Acc,None),SelectBackward0(SelectBackward0(Acc)))"),
    ("torch.zeros_like(a).copy_(b)", "torch::autograd::CopyBackwards(None,Acc)"),
    ("(a * 2).copy_(w.t().double())",
     "torch::autograd::CopyBackwards(MulBackward0(Acc,None),ToCopyBackward0(TBackward0(Acc)))"),
    ("torch.zeros(2, 3).copy_(v)", "torch::autograd::CopyBackwards(None,Acc)"),
    # an index array with basic parts: those first (a slice short of its dimension, None), then the arrays
    ("a3[None, [1]]", "IndexBackward0(UnsqueezeBackward0(Acc))"),
    ("a3[..., 1:, [True, False, True]]", "IndexBackward0(SliceBackward0(Acc))"),
    ("a3[0:1, [0], 0:2]", "IndexBackward0(SliceBackward0(SliceBackward0(Acc)))"),
    ("a3[0:9, [0]]", "IndexBackward0(Acc)"), ("a3[:, None, [1, 0]][..., 1:3]",
                                             "SliceBackward0(IndexBackward0(UnsqueezeBackward0(Acc)))"),
    ("a.scatter(0, torch.tensor([[1, 0, 1]]), 2.0)", "ScatterBackward1(Acc)"),
    ("a.scatter(0, torch.tensor([[1, 0, 1]]), b)", "ScatterBackward0(Acc,Acc)"),
    ("a.scatter_add(1, torch.tensor([[0, 0], [2, 1]]), b.detach())", "ScatterAddBackward0(Acc,None)"),
    ("a.index_copy(0, torch.tensor([1, 0]), b.t().t())", "IndexCopyBackward0(Acc,TBackward0(TBackward0(Acc)))"),
    ("a.index_fill(1, torch.tensor([1]), 2.0)", "IndexFillBackward0(Acc)"),
    ("a.index_fill(0, torch.tensor([1]), v[0])", "IndexFillBackward1(Acc,SelectBackward0(Acc))"),
    ("a.take(torch.tensor([[0, 5], [-1, 2]]))", "TakeBackward0(Acc)"), ("a.diag_embed(1)", "DiagEmbedBackward0(Acc)"),
    ("torch.diag_embed(a, -1, 0, 2)", "DiagEmbedBackward0(Acc)"),
    ("torch.var_mean(a, 1)[1]", "VarMeanBackward0(Acc)"), ("a.aminmax(dim=0).max", "AminmaxBackward0(Acc)"),
    ("torch.std_mean(a)[0]", "StdMeanBackward0(Acc)"),
    ("a.var(1)", "VarBackward0(Acc)"), ("a.std()", "StdBackward0(Acc)"), ("a.logsumexp(1)", "LogsumexpBackward0(Acc)"),
    ("a.lerp(b, 0.3)", "LerpBackward0(Acc,Acc)"), ("a.lerp(b, c[0])", "LerpBackward1(Acc,Acc,SelectBackward0(Acc))"),
    ("torch.addcmul(a, b, c[0], value=2)", "AddcmulBackward0(Acc,Acc,SelectBackward0(Acc))"),
    ("torch.addcdiv(a, b.detach(), b)", "AddcdivBackward0(Acc,None,Acc)"),
    ("torch.nn.functional.pad(a, (1, 2))", "ConstantPadNdBackward0(Acc)"),
    ("a3.bmm(b3)", "BmmBackward0(Acc,Acc)"), ("a.index_select(1, torch.tensor([0, 2]))", "IndexSelectBackward0(Acc)"),
    ("a.masked_fill(a > 0.5, 0.0)", "MaskedFillBackward0(Acc)"),
    ("a.masked_fill(a > 0.5, v[0])", "MaskedFillBackward1(Acc,SelectBackward0(Acc))"),
    ("a.masked_select(a > 0.5)", "MaskedSelectBackward0(Acc)"),
    ("torch.nn.functional.smooth_l1_loss(a, b)", "SmoothL1LossBackward0(Acc,Acc)"),
    ("torch.nn.functional.huber_loss(a, b.detach(), reduction='sum')", "HuberLossBackward0(Acc,None)"),
    ("torch.nn.functional.binary_cross_entropy(a.sigmoid(), b.detach().sigmoid())",
     "BinaryCrossEntropyBackward0(SigmoidBackward0(Acc),None)"),
    ("torch.nn.functional.binary_cross_entropy_with_logits(a, b.detach().sigmoid())",
     "BinaryCrossEntropyWithLogitsBackward0(Acc,None)"),
    ("torch.nn.RNNCell(3, 4)(a)", "TanhBackward0(AddBackward0(AddmmBackward0(Acc,None,TBackward0(Acc)),"
                                  "AddmmBackward0(Acc,Acc,TBackward0(Acc))))"),
    ("torch.nn.LSTMCell(3, 2)(a)[1]",  # (the cell state: the gates one UnsafeSplitBackward0, as ATen's lstm_cell)
     "AddBackward0(MulBackward0(SigmoidBackward0(UnsafeSplitBackward0(AddBackward0(AddmmBackward0(Acc,None,"
     "TBackward0(Acc)),AddmmBackward0(Acc,Acc,TBackward0(Acc))))),None),MulBackward0(SigmoidBackward0("
     "UnsafeSplitBackward0(AddBackward0(AddmmBackward0(Acc,None,TBackward0(Acc)),AddmmBackward0(Acc,Acc,TBackward0("
     "Acc))))),TanhBackward0(UnsafeSplitBackward0(AddBackward0(AddmmBackward0(Acc,None,TBackward0(Acc)),"
     "AddmmBackward0(Acc,Acc,TBackward0(Acc)))))))"),
    ("torch.nn.GRUCell(3, 2)(a)",  # (ATen's gru_cell: (h - n) * z + n)
     "AddBackward0(MulBackward0(SubBackward0(None,TanhBackward0(AddBackward0(UnsafeSplitBackward0(AddmmBackward0("
     "Acc,Acc,TBackward0(Acc))),MulBackward0(UnsafeSplitBackward0(AddmmBackward0(Acc,None,TBackward0(Acc))),"
     "SigmoidBackward0(AddBackward0(UnsafeSplitBackward0(AddmmBackward0(Acc,None,TBackward0(Acc))),"
     "UnsafeSplitBackward0(AddmmBackward0(Acc,Acc,TBackward0(Acc))))))))),SigmoidBackward0(AddBackward0("
     "UnsafeSplitBackward0(AddmmBackward0(Acc,None,TBackward0(Acc))),UnsafeSplitBackward0(AddmmBackward0(Acc,Acc,"
     "TBackward0(Acc)))))),TanhBackward0(AddBackward0(UnsafeSplitBackward0(AddmmBackward0(Acc,Acc,TBackward0(Acc))),"
     "MulBackward0(UnsafeSplitBackward0(AddmmBackward0(Acc,None,TBackward0(Acc))),SigmoidBackward0(AddBackward0("
     "UnsafeSplitBackward0(AddmmBackward0(Acc,None,TBackward0(Acc))),UnsafeSplitBackward0(AddmmBackward0(Acc,Acc,"
     "TBackward0(Acc)))))))))"),
    ("a.split(1)[1]", "SplitBackward0(Acc)"), ("a.chunk(2, 1)[1] * 2", "MulBackward0(SplitBackward0(Acc),None)"),
    ("torch.cat(a.split([1, 2], 1), 1)", "CatBackward0(SplitWithSizesBackward0(Acc),SplitWithSizesBackward0(Acc))"),
    ("torch.stack(a3.unbind(), 2)", "StackBackward0(UnbindBackward0(Acc),UnbindBackward0(Acc),UnbindBackward0(Acc),"
                                    "UnbindBackward0(Acc))"),
    ("a.unsafe_chunk(3, 1)[0]", "UnsafeSplitBackward0(Acc)"), ("a.tensor_split(2, 1)[1]", "SliceBackward0(Acc)"),
    ("a.reshape(6).split(4)[1]", "SplitBackward0(ViewBackward0(Acc))"),
    ("a.t().reshape(6)", "UnsafeViewBackward0(CloneBackward0(TBackward0(Acc)))"),
    ("a.t().flatten()", "UnsafeViewBackward0(CloneBackward0(TBackward0(Acc)))"),
    ("a[:, :1].reshape(2)", "ReshapeAliasBackward0(SliceBackward0(Acc))"),
    ("a3.transpose(1, 2).reshape(4, 6)", "UnsafeViewBackward0(CloneBackward0(TransposeBackward0(Acc)))"),
    ("torch.nn.functional.glu(a3, 1)", "GluBackward0(Acc)"),
    ("a3[None, 1, None]", "UnsqueezeBackward0(SelectBackward0(UnsqueezeBackward0(Acc)))"),
    ("a3[1, 0:1, None, -1]", "SelectBackward0(UnsqueezeBackward0(SliceBackward0(SelectBackward0(Acc))))"),
    ("a3[0, ..., 1:]", "SliceBackward0(SelectBackward0(Acc))"), ("a3[:, :, :]", "AliasBackward0(Acc)"),
    ("torch.nn.functional.pad(a, (1, 1), mode='reflect')", "ReflectionPad1DBackward0(Acc)"),
    ("torch.nn.functional.adaptive_max_pool2d(im, (2, 4))", "AdaptiveMaxPool2DBackward0(Acc)"),
    ("torch.nn.functional.adaptive_max_pool1d(a3, 2)", "SqueezeBackward1(AdaptiveMaxPool2DBackward0("
                                                       "UnsqueezeBackward0(Acc)))"),
    ("torch.nn.functional.pad(im, (1, 1, 2, 0), mode='replicate')", "ReplicationPad2DBackward0(Acc)"),
    ("torch.nn.functional.interpolate(im, scale_factor=2)", "UpsampleNearest2DBackward0(Acc)"),
    ("torch.nn.functional.interpolate(im * 1, size=(3, 9), mode='bicubic')", "UpsampleBicubic2DBackward0(MulBackward0("
                                                                             "Acc,None))"),
    ("torch.nn.functional.interpolate(a3, scale_factor=1.5, mode='linear', align_corners=True)",
     "UpsampleLinear1DBackward0(Acc)"),
    ("torch.nn.GroupNorm(3, 3)(im)", "NativeGroupNormBackward0(Acc,Acc,Acc)"),
    ("torch.nn.InstanceNorm2d(3, affine=True)(im)",
     "ViewBackward0(NativeBatchNormBackward0(ViewBackward0(Acc),RepeatBackward0(Acc),RepeatBackward0(Acc)))"),
    ("torch.nn.functional.instance_norm(im.transpose(2, 3))",
     "ViewBackward0(NativeBatchNormBackward0(ViewBackward0(CloneBackward0(TransposeBackward0(Acc))),None,None))"),
    ("torch.nn.functional.group_norm(im, 1)", "NativeGroupNormBackward0(Acc,None,None)"),
    ("a.repeat(2, 1, 3)", "RepeatBackward0(Acc)"), ("a.tile(2)", "RepeatBackward0(Acc)"),
    ("a.trace()", "TraceBackward0(Acc)"),
    ("a.nan_to_num()", "NanToNumBackward0(Acc)"), ("torch.fmax(a, b)", "FmaxBackward0(Acc,Acc)"),
    ("torch.fmin(a, b.detach())", "FminBackward0(Acc,None)"),
    ("torch.nn.functional.cosine_similarity(a, b)", "SumBackward1(MulBackward0(DivBackward0(Acc,CloneBackward0("
                                                    "LinalgVectorNormBackward0(Acc))),DivBackward0(Acc,CloneBackward0("
                                                    "LinalgVectorNormBackward0(Acc)))))"),
    ("lin(a)", "AddmmBackward0(Acc,Acc,TBackward0(Acc))"),
    ("lin(a.detach())", "AddmmBackward0(Acc,None,TBackward0(Acc))"),
    ("lin(a3)", "ViewBackward0(AddmmBackward0(Acc,ViewBackward0(Acc),TBackward0(Acc)))"),
    ("lin(v)", "ViewBackward0(AddmmBackward0(Acc,ViewBackward0(Acc),TBackward0(Acc)))"),
    ("torch.nn.functional.linear(a, w.t())", "MmBackward0(Acc,TBackward0(TBackward0(Acc)))"),
    ("torch.nn.MSELoss(reduction='sum')(a, b)", "MseLossBackward0(Acc,Acc)"),
    ("torch.nn.functional.mse_loss(a, c[0])", "MseLossBackward0(Acc,ExpandBackward0(SelectBackward0(Acc)))"),
    ("(a.mm(w).clamp(min=0).mm(w.t()) - b).pow(2).sum()",  # the tutorial's autograd step
     "SumBackward0(PowBackward0(SubBackward0(MmBackward0(ClampBackward1(MmBackward0(Acc,Acc)),TBackward0(Acc)),Acc)))"),
    ("torch.nn.functional.mse_loss(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))"
     "(a.detach()), b.detach(), reduction='sum')",  # the tutorial's nn step
     "MseLossBackward0(AddmmBackward0(Acc,ReluBackward0(AddmmBackward0(Acc,None,TBackward0(Acc))),TBackward0(Acc)),"
     "None)"),
]


def _names(torch):
    rs = np.random.RandomState(0)

    def leaf(*shape):
        return torch.tensor(rs.rand(*shape) + 0.1, dtype=torch.float32, requires_grad=True)

    torch.manual_seed(0)
    return {"torch": torch, "np": np, "a": leaf(2, 3), "b": leaf(2, 3), "c": leaf(2, 1, 3), "w": leaf(3, 2),
            "v": leaf(3), "a3": leaf(4, 2, 3), "b3": leaf(4, 3, 5), "lin": torch.nn.Linear(3, 2),
            "im": leaf(2, 3, 6, 6), "cv": torch.nn.Conv2d(3, 4, 3)}


def _name(torch, expression):
    out = eval(expression, _names(torch))  # noqa: S307 - the table's own expressions
    return out.grad_fn.name()


@pytest.mark.parametrize(("expression", "name"), NAMES, ids=[e for e, _ in NAMES])
def test_the_node_is_named_as_pytorch_names_it(expression, name):
    assert _name(engine, expression) == name


@pytest.mark.parametrize(("expression", "name"), NAMES, ids=[e for e, _ in NAMES])
def test_the_name_outlives_backward(expression, name):
    """backward frees what each node saved; the node is still named, and the output still prints."""
    out = eval(expression, _names(engine))  # noqa: S307 - the table's own expressions
    out.sum().backward()
    assert out.grad_fn.name() == name and repr(out).endswith(f"grad_fn=<{name}>)")


@pytest.mark.torch
@pytest.mark.parametrize(("expression", "torch_name"), NAMES, ids=[e for e, _ in NAMES])
def test_the_expected_names_are_torchs(expression, torch_name):
    torch = pytest.importorskip("torch")
    assert _name(torch, expression) == torch_name


@pytest.mark.parametrize(("expression", "graph"), GRAPHS, ids=[e for e, _ in GRAPHS])
def test_the_graph_down_to_the_leaves_is_pytorchs(expression, graph):
    assert _walk(eval(expression, _names(engine)).grad_fn) == graph  # noqa: S307 - the table's own expressions


@pytest.mark.torch
@pytest.mark.parametrize("expression", [e for e, _ in GRAPHS] + [e for e, _ in NAMES],
                         ids=[e for e, _ in GRAPHS] + [e for e, _ in NAMES])
def test_the_whole_graph_is_torchs(expression):
    """Every expression of both tables, walked in both: the same nodes, edges and leaves."""
    torch = pytest.importorskip("torch")
    mine = _walk(eval(expression, _names(engine)).grad_fn)  # noqa: S307 - the table's own expressions
    assert mine == _walk(eval(expression, _names(torch)).grad_fn)  # noqa: S307


def test_a_printed_tensor_shows_the_name():
    a = engine.tensor([1.0, -2.0], requires_grad=True)
    assert repr((a * 2).sum()) == "tensor(-2., grad_fn=<SumBackward0>)"
    assert repr(a[0]) == "tensor(1., grad_fn=<SelectBackward0>)"


def test_a_users_function_is_named_by_its_class_as_in_pytorch():
    from tests.engine.test_autograd import MyReLU  # the tutorial's

    y = MyReLU.apply(engine.tensor([1.0, -1.0], requires_grad=True))
    assert y.grad_fn.name() == "MyReLUBackward"
    assert repr(y) == "tensor([1., 0.], grad_fn=<MyReLUBackward>)"


def test_nothing_to_flatten_or_squeeze_still_behaves_as_pytorch():
    a = engine.ones(2, 3, requires_grad=True)
    assert a.flatten(1) is a and a.flatten(0, 0) is a  # PyTorch returns the tensor itself
    s = a.squeeze()  # a new tensor, recorded, though nothing was squeezed
    assert s is not a and s.shape == (2, 3) and s.grad_fn.name() == "SqueezeBackward0"
    s.sum().backward()
    assert a.grad.tolist() == [[1.0] * 3] * 2


# ----------------------------------------------------------------------------- next_functions and AccumulateGrad

def test_next_functions_lead_to_a_leafs_accumulate_grad():
    a = engine.tensor([1.0, 2.0], requires_grad=True)
    b = engine.tensor([3.0, 4.0])  # needs no gradient
    loss = (a * b).sum()
    (mul, index), = loss.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and index == 0
    acc, none = mul.next_functions
    assert none == (None, 0)
    node, index = acc
    assert type(node).__name__ == "AccumulateGrad" and index == 0
    assert node.variable is a and node.name() == "torch::autograd::AccumulateGrad"
    assert node.next_functions == ()
    assert repr(node).startswith("<AccumulateGrad object at 0x")
    assert mul.next_functions[0][0] is node  # the same node each time it is asked for, as PyTorch's


def test_a_shared_weight_is_one_accumulate_grad():
    w = engine.tensor([2.0], requires_grad=True)
    y = w * w
    (left, _), (right, _) = y.grad_fn.next_functions
    assert left is right and left.variable is w


def test_walking_next_functions_visits_the_tutorials_graph():
    """The autograd recipe's loss, walked as the PyTorch blitz walks it, names every node in order."""
    engine.manual_seed(0)
    x, y = engine.randn(4, 3), engine.randn(4, 2)
    w1, w2 = engine.randn(3, 5, requires_grad=True), engine.randn(5, 2, requires_grad=True)
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    seen, node = [], loss.grad_fn
    while node is not None and node.next_functions:
        seen.append(node.name())
        node = next((n for n, _ in node.next_functions if n is not None and n.next_functions), None)
    assert seen == ["SumBackward0", "PowBackward0", "SubBackward0", "MmBackward0", "ClampBackward1", "MmBackward0"]
    leaves = [n.variable for n, _ in loss.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
              .next_functions if n is not None and not n.next_functions]
    assert len(leaves) == 1 and leaves[0] is w2
