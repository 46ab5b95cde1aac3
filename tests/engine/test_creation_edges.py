"""Making tensors at the edges, as PyTorch 2.13 answers: ``tensor([2**63])`` overflows (NumPy made it uint64 and the
engine wrapped it to -2**63), ``tensor(None)`` cannot infer a dtype (it was a NaN), ragged lists name the dimension
where they differ, ``randperm(-1)`` and ``normal`` with a negative std refuse (they gave an empty tensor and
flipped samples), and ``arange``/``linspace``/``eye``/``randint``/``*_like`` refuse in PyTorch's words. Answers
printed by torch 2.13.0, and held to the torch installed where there is one."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from tests.engine.helpers import table_tests

CASES = [
    # a number into a narrow integer dtype: PyTorch's range check (a negative int wraps into an unsigned dtype)
    ("engine.full((2,), -9, dtype=engine.uint8)", ((2,), "uint8", [247, 247])),
    ("engine.full((2,), 300, dtype=engine.int8)", ("RuntimeError", "value cannot be converted to type int8_t without "
                                                                   "overflow")),
    ("engine.full((1,), -1.5, dtype=engine.uint8)", ("RuntimeError", "value cannot be converted to type uint8_t")),
    ("engine.full((1,), 2**40, dtype=engine.int32)", ("RuntimeError", "value cannot be converted to type int without")),
    ("engine.tensor([1, -3], dtype=engine.uint8)", ((2,), "uint8", [1, 253])),
    ("engine.tensor([[1], [128]], dtype=engine.int8)", ("RuntimeError", "value cannot be converted to type int8 "
                                                                       "without overflow")),
    ("engine.tensor([1.5, -2.7], dtype=engine.uint8)", ("RuntimeError", "value cannot be converted to type uint8")),
    ("engine.tensor([1.7, -2.9], dtype=engine.int8)", ((2,), "int8", [1, -2])),
    ("engine.scalar_tensor(-5, dtype=engine.uint8)", ((), "uint8", [251])),
    ("engine.ones(1, dtype=engine.int8).new_full((1,), 200)", ("RuntimeError", "value cannot be converted to type "
                                                                              "int8_t")),
    ("engine.full_like(engine.zeros(2, dtype=engine.uint8), -9)", ((2,), "uint8", [247, 247])),
    ("engine.tensor([2**63])", ("ValueError", "Overflow when unpacking long long")),
    ("engine.tensor(2**63)", ("ValueError", "Overflow when unpacking long long")),
    ("engine.tensor([-2**63 - 1])", ("ValueError", "Overflow when unpacking long long")),
    ("engine.tensor([2**63 - 1]) == 2**63 - 1", ((1,), "bool", [True])),
    ("engine.tensor([-2**63]) == -2**63", ((1,), "bool", [True])),
    ("engine.tensor([2**63], dtype=engine.float64)", ((1,), "float64", [2.0**63])),
    ("engine.tensor(None)", ("RuntimeError", "Could not infer dtype of NoneType")),
    ("engine.tensor([1.0, None])", ("RuntimeError", "Could not infer dtype of NoneType")),
    ("engine.tensor({1: 2})", ("RuntimeError", "Could not infer dtype of dict")),
    ("engine.tensor('a')", ("TypeError", "new(): invalid data type 'str'")),
    ("engine.tensor([[1, 2], [3]])", ("ValueError", "expected sequence of length 2 at dim 1 (got 1)")),
    ("engine.tensor([[[1], [2]], [[3]]])", ("ValueError", "expected sequence of length 2 at dim 1 (got 1)")),
    ("engine.tensor([[1, 2], 3])", ("TypeError", "not a sequence")),
    ("engine.tensor([[1, 2], (3, 4.5)])", ((2, 2), "float32", [1, 2, 3, 4.5])),
    ("engine.tensor(range(3))", ((3,), "int64", [0, 1, 2])),
    ("engine.randperm(-1)", ("RuntimeError", "Trying to create tensor with negative dimension -1: [-1]")),
    ("engine.randperm(0)", ((0,), "int64", [])),
    ("engine.normal(0.0, -1.0, (2,))", ("RuntimeError", "normal expects std >= 0.0, but found std -1")),
    ("engine.randint(5, 5, (3,))",
     ("RuntimeError", "random_ expects 'from' to be less than 'to', but got from=5 >= to=5")),
    ("engine.arange(float('inf'))", ("RuntimeError", "unsupported range: 0 -> inf")),
    ("engine.arange(float('nan'))", ("RuntimeError", "unsupported range: 0 -> nan")),
    ("engine.arange(5, dtype=engine.bool)", ("NotImplementedError", "\"arange_cpu\" not implemented for 'Bool'")),
    ("engine.linspace(0, 1, -1)", ("RuntimeError", "number of steps must be non-negative")),
    ("engine.logspace(0, 1, -2)", ("RuntimeError", "number of steps must be non-negative")),
    ("engine.linspace(0, 1, 0)", ((0,), "float32", [])),
    ("engine.linspace(engine.tensor(1.0), engine.tensor(3), 3)", ((3,), "float32", [1.0, 2.0, 3.0])),
    ("engine.logspace(engine.tensor(0), 2.0, 3, base=2.0)", ((3,), "float32", [1.0, 2.0, 4.0])),
    ("engine.linspace(engine.tensor([1.0, 2.0]), engine.tensor(2.0), 3)",
     ("RuntimeError", "linspace only supports 0-dimensional start and end tensors, but got start with 1 dimension(s) "
                      "and end with 0 dimension(s).")),
    ("engine.logspace(engine.tensor(1.0), engine.tensor([2.0]), 3)",
     ("RuntimeError", "logspace only supports 0-dimensional start and end tensors, but got start with 0 dimension(s) "
                      "and end with 1 dimension(s).")),
    ("engine.eye(-1)", ("RuntimeError", "n must be greater or equal to 0, got -1")),
    ("engine.eye(2, -3)", ("RuntimeError", "m must be greater or equal to 0, got -3")),
    ("engine.eye(0)", ((0, 0), "float32", [])),
    ("engine.ones_like([1, 2])", ("TypeError", "ones_like(): argument 'input' (position 1) must be Tensor, not list")),
    ("engine.zeros_like(3)", ("TypeError", "zeros_like(): argument 'input' (position 1) must be Tensor, not int")),
]


def _env(lib):
    return {"engine": lib}


test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env)


def test_linspace_and_logspace_take_0d_tensors_of_a_gpu(cuda_device):
    """Their bounds as tensors on the device: read back as numbers (they were read as NumPy arrays, and raised)."""
    start, end = engine.tensor(1.0, device=cuda_device), engine.tensor(3.0, device=cuda_device)
    assert engine.linspace(start, end, 3, device=cuda_device).cpu().tolist() == [1.0, 2.0, 3.0]
    assert engine.logspace(start, end, 3, base=2.0).tolist() == [2.0, 4.0, 8.0]


def test_linspace_is_pytorchs_value_for_value():
    """The tutorial's x = linspace(-pi, pi, 2000): NumPy's linspace rounds 604 of its float32 values an ulp away
    from PyTorch's (which computes start + step * i in one fused multiply-add, from both ends); the engine's are
    PyTorch's bit for bit (the sum of their bit patterns, and cases printed by torch 2.13)."""
    x = engine.linspace(-math.pi, math.pi, 2000).numpy()
    assert x.dtype == np.float32 and int(x.view(np.uint32).astype(np.uint64).sum()) == 4280706486574
    y = engine.linspace(0.37719064950942993, -0.3963145911693573, 5).numpy()
    assert y.view(np.uint32).tolist() == [1052843810, 1044134356, 3155995104, 3192901390, 3200969151]
    z = engine.linspace(-1.4434574789660584, 6.2618064548110395, 33, dtype=engine.float64).numpy()
    assert z[:4].tolist() == [-1.4434574789660584, -1.202667981035524, -0.9618784831049898, -0.7210889851744554]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64", "complex128", "float16"])
def test_linspace_equals_torchs_bit_for_bit(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    largest = 1e3 if dtype == "float16" else 1e5
    for _ in range(500):
        lo, hi = (float(v) for v in rng.standard_normal(2) * rng.choice([1, 3, 100, largest]))
        n = int(rng.integers(0, 80))
        if "complex" in dtype:
            lo, hi = complex(lo, hi), complex(hi, -lo)
        expected = torch.linspace(lo, hi, n, dtype=getattr(torch, dtype)).numpy()
        got = engine.linspace(lo, hi, n, dtype=getattr(engine, dtype)).numpy()
        assert np.array_equal(got, expected), (lo, hi, n)
