"""Every Function of ``engine.functions`` (the package's own list), applied with a recorded graph, without one
(inputs that need no gradient) and under ``no_grad``: the same values each way, and a backward that runs where
the graph was recorded. A Function added to the package without an example here fails the first test."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import functions as F
from engine.backend import CPU
from engine.functions import conv, shape

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)


def _x(requires_grad, shape=(2, 3), low=0.2):
    rng = np.random.default_rng(7)
    return engine.tensor(rng.uniform(low, 1.5, shape), requires_grad=requires_grad)


def _z(requires_grad, shape=(2, 3)):
    rng = np.random.default_rng(8)
    return engine.tensor(rng.uniform(0.2, 1.5, shape) + 1j * rng.uniform(-1.0, 1.0, shape),
                         requires_grad=requires_grad)


# name -> (positional arguments as a function of requires_grad, keyword arguments)
EXAMPLES = {
    "ViewAsReal": (lambda g: (_z(g),), {}),
    "ViewAsComplex": (lambda g: (_x(g, (2, 3, 2)),), {}),
    "Complex": (lambda g: (_x(g), _x(g, (3,))), {}),
    "Polar": (lambda g: (_x(g), _x(g, low=-1.0)), {}),
    "Conj": (lambda g: (_z(g),), {"physical": True}),
    "Angle": (lambda g: (_z(g),), {}),
    "Sgn": (lambda g: (_z(g),), {}),
    "FFT": (lambda g: (_z(g),), {"kind": "c2c", "sizes": (4,), "axes": (1,), "norm": "ortho", "forward": False}),
    "Add": (lambda g: (_x(g), _x(g)), {}),
    "Activation": (lambda g: (_x(g, low=-1.0),), {"op": "elu", "params": (0.5, 1.2, 0.8)}),
    "AddScaled": (lambda g: (_x(g), _x(g), -0.5), {"subtract": True}),
    "Addmm": (lambda g: (_x(g, (2,)), _x(g, (3, 4)), _x(g, (4, 2))), {"beta": 0.5, "alpha": 2.0}),
    "Sub": (lambda g: (_x(g), _x(g)), {}),
    "Mul": (lambda g: (_x(g), 2.5), {}),
    "Div": (lambda g: (_x(g), _x(g)), {}),
    "DivRounded": (lambda g: (_x(g), _x(g, (3,)) * 0.3), {"mode": "floor"}),
    "NotImplementedDerivative": (lambda g: (_x(g), 2.0), {"value": np.ones((2, 3)), "op": "aten::floor_divide"}),
    "Pow": (lambda g: (_x(g), 3), {}),
    "Neg": (lambda g: (_x(g),), {}),
    "MatMul": (lambda g: (_x(g), _x(g, (3, 2))), {}),
    "Einsum": (lambda g: (_x(g), _x(g, (3, 2))), {"equation": "ij,jk->ik"}),
    "Exp": (lambda g: (_x(g),), {}),
    "Log": (lambda g: (_x(g),), {}),
    "Sin": (lambda g: (_x(g),), {}),
    "Cos": (lambda g: (_x(g),), {}),
    "Abs": (lambda g: (_x(g, low=-1.0),), {}),
    "Sqrt": (lambda g: (_x(g),), {}),
    "Clamp": (lambda g: (_x(g),), {"min": 0.5, "max": 1.0}),
    "ClampTensors": (lambda g: (_x(g), _x(g, (3,)) * 0.8, 1.0), {}),
    "ReLU": (lambda g: (_x(g, low=-1.0),), {}),
    "Sigmoid": (lambda g: (_x(g),), {}),
    "Tanh": (lambda g: (_x(g),), {}),
    "Maximum": (lambda g: (_x(g), engine.full((2, 3), 0.8)), {"mode": "max"}),
    "Where": (lambda g: (engine.tensor([[True, False, True], [False, True, False]]), _x(g), _x(g)), {}),
    "Rounding": (lambda g: (_x(g),), {"mode": "round", "decimals": 1}),
    "NativeBatchNorm": (lambda g: (_x(g, (4, 3, 2)), _x(g, (3,)), _x(g, (3,)), np.full(3, 0.8), np.full(3, 1.3)),
                        {"training": True, "eps": 1e-5}),
    "RegressionLoss": (lambda g: (_x(g), _x(g, low=-0.5)), {"op": "huber", "param": 0.4, "reduction": "mean"}),
    "BinaryCrossEntropyWithLogits": (lambda g: (_x(g, low=-1.5), engine.full((2, 3), 0.3)),
                                     {"weight": np.full((2, 3), 0.5), "pos_weight": np.full(3, 2.0),
                                      "reduction": "sum"}),
    "AMinMax": (lambda g: (_x(g, (3, 4)), 1, True), {}),
    "VarMean": (lambda g: (_x(g, (3, 4)),), {"axes": (1,), "correction": 1, "keepdim": False, "std": True}),
    "VarStd": (lambda g: (_x(g, (3, 4)),), {"axes": (1,), "correction": 1, "keepdim": False, "std": True}),
    "ConstantPad": (lambda g: (_x(g, (2, 3)), ((1, -1), (2, 0))), {"value": 0.5}),
    "Logsumexp": (lambda g: (_x(g, (3, 4)), (1,)), {"keepdim": False}),
    "Lerp": (lambda g: (_x(g), _x(g, low=-0.5), _x(g)), {}),
    "AddcOp": (lambda g: (_x(g), _x(g, (3,)), _x(g, low=0.5)), {"value": 0.5, "divide": True}),
    "NativeGroupNorm": (lambda g: (_x(g, (2, 4, 3)), _x(g, (4,)), _x(g, (4,))), {"groups": 2, "eps": 1e-5}),
    "Repeat": (lambda g: (_x(g), (2, 1, 3)), {}),
    "Trace": (lambda g: (_x(g, (3, 4)),), {}),
    "MseLoss": (lambda g: (_x(g), _x(g, low=-0.5)), {"reduction": "sum"}),
    "BinaryCrossEntropy": (lambda g: (_x(g, low=0.05) * 0.6, engine.full((2, 3), 0.3)), {}),
    "Sum": (lambda g: (_x(g),), {"dim": 1}),
    "Mean": (lambda g: (_x(g),), {"dim": 0, "keepdim": True}),
    "MaxMin": (lambda g: (_x(g),), {"mode": "min"}),
    "MaxMinDim": (lambda g: (_x(g), 1), {"mode": "max"}),
    "Reshape": (lambda g: (_x(g), (3, 2)), {}),
    "Transpose": (lambda g: (_x(g), 0, 1), {}),
    "Take": (lambda g: (_x(g), np.array([[5, 0], [5, 2]])), {}),
    "DiagEmbed": (lambda g: (_x(g, (2, 3)), 1, 0, 2), {}),
    "Diagonal": (lambda g: (_x(g, (2, 3, 4)), 1, 2, 0), {}),
    "AsStrided": (lambda g: (_x(g, (3, 4)), (3, 2), (1, 3), 1), {}),
    "CtcLoss": (lambda g: (_x(g, (5, 2, 3)).log_softmax(2),), {"targets": np.array([[1, 2], [2, 2]]),
                                                               "input_lengths": np.array([5, 4]),
                                                               "target_lengths": np.array([2, 1]), "blank": 0,
                                                               "zero_infinity": False}),
    "Permute": (lambda g: (_x(g), (1, 0)), {}),
    "Expand": (lambda g: (_x(g, (1, 3)), (4, 3)), {}),
    "GetItem": (lambda g: (_x(g),), {"index": (slice(None), 1)}),
    "WriteView": (lambda g: (_x(g), _x(g, (3,)) * 2), {"steps": (("swap", (0, 1)), ("index", (slice(None), 1)))}),
    "SetItem": (lambda g: (_x(g), _x(g, (2,))), {"index": (slice(None), 1)}),
    "Clone": (lambda g: (_x(g),), {}),
    "Cast": (lambda g: (_x(g), np.dtype(np.float32)), {}),
    "ToDevice": (lambda g: (_x(g), CPU, np.dtype(np.float32)), {}),
    "Stack": (lambda g: (_x(g), _x(g)), {"dim": 1}),
    "Cat": (lambda g: (_x(g), _x(g, (1, 3))), {"dim": 0}),
    "Resample": (lambda g: (_x(g, (1, 2, 3)),), {"axes": ((2, 3, (conv.resample_tap(np, [0, 0, 1, 2, 2], np.linspace(
        0.2, 0.8, 5), (1, 1, 5), np.float64), conv.resample_tap(np, [1, 1, 2, 2, 2], np.linspace(0.8, 0.2, 5),
        (1, 1, 5), np.float64))),), "name": "UpsampleLinear1DBackward0"}),
    "Pad": (lambda g: (_x(g, (2, 3)),), {"maps": (shape.pad_map(np, 1, 3, [1, 0, 1, 2, 1], 1),),
                                         "name": "ReflectionPad1DBackward0"}),
    "Split": (lambda g: (_x(g, (2, 4)), [1, 3], 1, "SplitWithSizesBackward0"), {}),
    "Glu": (lambda g: (_x(g, (2, 4), low=-1.0), 1), {}),
    "Convolution": (lambda g: (_x(g, (1, 2, 4, 4)), _x(g, (3, 2, 2, 2)), _x(g, (3,))),
                    {"stride": (1, 2), "padding": ((1, 1), (0, 0)), "dilation": (1, 1), "groups": 1}),
    "ConvTranspose": (lambda g: (_x(g, (1, 2, 3, 3)), _x(g, (2, 3, 2, 2)), _x(g, (3,))),
                      {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0), "dilation": (1, 1), "groups": 1}),
    "Im2Col": (lambda g: (_x(g, (1, 2, 4, 4)),), {"kernel": (2, 2), "dilation": (1, 1), "padding": (1, 0),
                                                   "stride": (2, 1)}),
    "MaxPool": (lambda g: (_x(g, (1, 2, 4, 4)),), {"kernel": (2, 2), "stride": (1, 1), "padding": (1, 0),
                                                  "dilation": (1, 1), "ceil_mode": True}),
    "AvgPool": (lambda g: (_x(g, (1, 2, 4, 4)),), {"kernel": (2, 2), "stride": (2, 2), "padding": (1, 1),
                                                  "count_include_pad": False}),
    "AdaptiveAvgPool": (lambda g: (_x(g, (1, 2, 5, 4)),), {"output_size": (3, 3)}),
    "AdaptiveMaxPool": (lambda g: (_x(g, (1, 2, 5, 4)),), {"out": (3, 2)}),
    "Embedding": (lambda g: (_x(g, (4, 3)), np.array([[0, 2], [2, 3]])), {"padding_idx": 3}),
    "Cumsum": (lambda g: (_x(g),), {"dim": 1}),
    "LogCumSumExp": (lambda g: (_x(g),), {"dim": 1}),
    "Nansum": (lambda g: (_x(g),), {"dim": 0}),
    "Cross": (lambda g: (_x(g), _x(g, (1, 3)) * 2), {"dim": 1}),
    "Rearrange": (lambda g: (_x(g, (1, 4, 2, 3)),), {"op": "pixel_shuffle", "args": (2,)}),
    "BlockDiag": (lambda g: (_x(g), _x(g, (3,))), {}),
    "CopyFrom": (lambda g: (_x(g), _x(g, (1, 3)) * 2), {}),
    "SoftMarginLoss": (lambda g: (_x(g), np.sign(np.arange(6.0).reshape(2, 3) - 2.5), "mean"), {}),
    "MultiMarginLoss": (lambda g: (_x(g), np.array([0, 2]), None, 1, 1.0, "sum"), {}),
    "MultilabelMarginLoss": (lambda g: (_x(g), np.array([[0, -1, 1], [2, 1, -1]]), "mean"), {}),
    "Renorm": (lambda g: (_x(g), 2.0, 0, 1.0), {}),
    "AffineGrid": (lambda g: (_x(g, (1, 2, 3)), (2, 2), False), {}),
    "MaxUnpool": (lambda g: (_x(g, (1, 1, 1, 2)), np.array([[[[0, 3]]]]), (2, 2)), {}),
    "Trilinear": (lambda g: (_x(g, (2, 3)), _x(g, (4, 3, 5)), _x(g, (2, 5))), {}),
    "MaskedScatter": (lambda g: (_x(g), np.array([True, False, True]), _x(g, (5,))), {}),
    "Put": (lambda g: (_x(g), np.array([0, 4]), _x(g, (2,)), False), {}),
    "Dist": (lambda g: (_x(g), _x(g, (1, 3)) * 2, 3.0), {}),
    "Cdist": (lambda g: (_x(g), _x(g, (4, 3)) * 2, 2.0), {}),
    "EuclideanDist": (lambda g: (_x(g), _x(g, (4, 3)) * 2), {}),
    "Pdist": (lambda g: (_x(g, (4, 3)), 1.5), {}),
    "FlashAttentionCpu": (lambda g: (_x(g, (1, 2, 3, 4)), _x(g, (1, 1, 5, 4)), _x(g, (1, 1, 5, 4))),
                          {"mask": np.zeros((3, 5)), "causal": True, "scale": 0.5}),
    "Prelu": (lambda g: (_x(g, low=-1.0), _x(g, (1, 3)) * 0.25), {}),
    "AddProduct": (lambda g: (_x(g, (2,)), _x(g, (2, 3)), _x(g, (3,)), "mv"), {"beta": 0.5, "alpha": 2.0}),
    "Cumprod": (lambda g: (_x(g),), {"dim": 0}),
    "Triangle": (lambda g: (_x(g, (2, 3, 3)),), {"side": "upper", "diagonal": 1}),
    "Gelu": (lambda g: (_x(g, low=-1.5),), {"approximate": "tanh"}),
    "NllLoss": (lambda g: (_x(g, (2, 3, 2)), np.array([[0, 2], [-100, 1]])), {"weight": np.array([1.0, 0.5, 2.0]),
                                                                             "reduction": "mean", "masked": True}),
    "NllLossGrad": (lambda g: (_x(g, ()), _x(g, (2, 3))), {"rows": np.arange(2), "target": np.array([2, 0]),
                                                          "scale": np.array([0.5, 1.5]), "shape": (2, 3), "classes": 3,
                                                          "dtype": np.dtype(np.float64)}),
    "TakeAlong": (lambda g: (_x(g), np.array([[1, 1], [0, 2]]), 1), {}),
    "Softmax": (lambda g: (_x(g), 1), {"log": True}),
    "NativeLayerNorm": (lambda g: (_x(g), _x(g, (3,)), _x(g, (3,))), {"nd": 1, "eps": 1e-5}),
    "Unary": (lambda g: (_x(g),), {"op": "log1p"}),
    "Binary": (lambda g: (_x(g), _x(g, (3,))), {"op": "atan2"}),
    "Prod": (lambda g: (_x(g),), {"dim": 1, "keepdim": True}),
    "IndexAdd": (lambda g: (_x(g), _x(g, (2, 2))), {"index": (slice(None), np.array([2, 2]))}),
    "Flip": (lambda g: (_x(g),), {"axes": (1,), "shift": (2,)}),
    "ScatterReduce": (lambda g: (_x(g), _x(g, (2, 2))), {"index": (np.array([[0], [1]]), np.array([[2, 2]])),
                                                         "reduce": "amax", "include_self": False}),
    "VectorNorm": (lambda g: (_x(g),), {"ord": 3.0, "dim": 1}),
    "AMaxMin": (lambda g: (_x(g, (2, 3, 2)),), {"dim": (0, 2), "mode": "min"}),
    "Inverse": (lambda g: (_x(g, (3, 3)) + engine.eye(3) * 3,), {}),
    "Det": (lambda g: (_x(g, (2, 3, 3)),), {}),
    "LogAbsDet": (lambda g: (_x(g, (3, 3)),), {}),
    "Solve": (lambda g: (_x(g, (3, 3)) + engine.eye(3) * 3, _x(g, (3, 2))), {}),
}


def test_every_function_of_the_package_has_an_example():
    assert sorted(EXAMPLES) == sorted(F.__all__)


def _values(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [o.detach().numpy() for o in outs if isinstance(o, engine.Tensor)]


@pytest.mark.parametrize("name", F.__all__)
def test_recorded_unrecorded_and_no_grad_give_the_same_values(name):
    fn = getattr(F, name)
    make, kwargs = EXAMPLES[name]
    recorded = fn.apply(*make(True), **kwargs)
    plain = fn.apply(*make(False), **kwargs)
    with engine.no_grad():
        unrecorded = fn.apply(*make(True), **kwargs)
    first = recorded[0] if isinstance(recorded, tuple) else recorded
    assert first.grad_fn is not None and first.requires_grad
    assert all(not o.requires_grad for o in ((plain,) if not isinstance(plain, tuple) else plain))
    assert (unrecorded[0] if isinstance(unrecorded, tuple) else unrecorded).grad_fn is None
    for a, b, c in zip(_values(recorded), _values(plain), _values(unrecorded)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    if name == "NotImplementedDerivative":  # (its backward refuses, by design)
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
            first.sum().backward()
    elif first.dtype.is_floating_point:
        first.sum().backward()  # the recorded graph runs back
    elif first.dtype.is_complex:
        first.abs().sum().backward()


def test_cat_without_a_graph():
    """The no-graph path once shared one ctx, and Cat's forward read back what it wrote there."""
    assert engine.cat([engine.ones(2, 3), engine.ones(2, 3)]).shape == (4, 3)
    with engine.no_grad():
        assert engine.cat([engine.ones(2, 3), engine.zeros(1, 3)], dim=0).tolist()[-1] == [0.0, 0.0, 0.0]
