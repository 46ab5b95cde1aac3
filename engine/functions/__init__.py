"""The built-in ops: each a :class:`engine.autograd.Function` with ``raw = True`` (array in, array out).

Only primitives carry derivative code; composites (``-x``, ``x / y`` with scalars, ``log_softmax``,
``mse_loss``) are written from them elsewhere.
"""

from .activation import Activation, Glu
from .arithmetic import (
    Add,
    AddcOp,
    Addmm,
    AddScaled,
    Div,
    DivRounded,
    Einsum,
    Lerp,
    MatMul,
    Mul,
    Neg,
    NotImplementedDerivative,
    Pow,
    Sub,
)
from .conv import AdaptiveAvgPool, AdaptiveMaxPool, AvgPool, Convolution, ConvTranspose, Im2Col, MaxPool, Resample
from .elementwise import (
    Abs,
    Binary,
    BinaryCrossEntropy,
    Clamp,
    ClampTensors,
    Cos,
    Exp,
    Gelu,
    Log,
    Maximum,
    ReLU,
    Rounding,
    Sigmoid,
    Sin,
    Sqrt,
    Tanh,
    Unary,
    Where,
)
from .linalg import Det, Inverse, LogAbsDet, Solve
from .loss import BinaryCrossEntropyWithLogits, CtcLoss, MseLoss, NllLoss, RegressionLoss
from .reduction import (
    AMaxMin,
    Logsumexp,
    MaxMin,
    MaxMinDim,
    Mean,
    NativeBatchNorm,
    NativeGroupNorm,
    NativeLayerNorm,
    Prod,
    Softmax,
    Sum,
    VarMean,
    VarStd,
    VectorNorm,
)
from .shape import (
    AsStrided,
    Cast,
    Cat,
    Clone,
    ConstantPad,
    Cumprod,
    Cumsum,
    Diagonal,
    Embedding,
    Expand,
    Flip,
    GetItem,
    IndexAdd,
    Pad,
    Permute,
    Repeat,
    Reshape,
    ScatterReduce,
    SetItem,
    Split,
    Stack,
    TakeAlong,
    ToDevice,
    Trace,
    Transpose,
    Triangle,
    WriteView,
)

__all__ = [
    "Activation", "Glu", "Add", "AddcOp", "Lerp", "AddScaled", "Addmm", "Sub", "Mul", "Div", "DivRounded",
    "NotImplementedDerivative", "Pow", "Neg", "MatMul", "Einsum", "Exp", "Log", "Sin", "Cos", "Abs", "Sqrt", "Clamp",
    "ClampTensors", "ReLU", "Sigmoid", "Tanh", "Maximum", "Where", "Rounding", "BinaryCrossEntropy", "Gelu",
    "MseLoss", "NllLoss", "RegressionLoss", "BinaryCrossEntropyWithLogits", "Unary", "Binary", "Sum", "Mean",
    "MaxMin", "MaxMinDim", "Softmax", "NativeBatchNorm", "NativeLayerNorm", "Prod", "VectorNorm", "AMaxMin",
    "VarStd", "ConstantPad", "Logsumexp", "NativeGroupNorm", "Repeat", "Trace", "Reshape", "Transpose", "Permute",
    "Diagonal", "Expand", "GetItem", "SetItem", "WriteView", "Clone", "Cast", "ToDevice", "Stack", "Cat", "Split",
    "Convolution", "ConvTranspose", "MaxPool", "AvgPool", "AdaptiveAvgPool", "Embedding", "Cumsum", "Cumprod",
    "Im2Col", "Triangle", "TakeAlong", "IndexAdd", "ScatterReduce", "Flip", "Inverse", "Det", "LogAbsDet", "Solve",
    "AsStrided", "CtcLoss", "Resample", "Pad", "AdaptiveMaxPool", "VarMean",
]
