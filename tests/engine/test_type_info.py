"""``finfo``, ``iinfo``, ``promote_types``, ``result_type`` and ``can_cast`` (missing before: a script reading
``torch.finfo(x.dtype).eps`` for a safe log raised AttributeError), held to PyTorch 2.13's answers."""

from __future__ import annotations

import pytest

import engine

FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int32", "int64"]
ALL = FLOATS + INTS + ["bool"]

FINFO = {  # PyTorch 2.13's reprs
    "float16": "finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, smallest_normal=6.10352e-05, "
               "tiny=6.10352e-05, dtype=float16)",
    "float32": "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
               "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)",
    "float64": "finfo(resolution=1e-15, min=-1.79769e+308, max=1.79769e+308, eps=2.22045e-16, "
               "smallest_normal=2.22507e-308, tiny=2.22507e-308, dtype=float64)",
}
IINFO = {"uint8": "iinfo(min=0, max=255, dtype=uint8)",
         "int32": "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)",
         "int64": "iinfo(min=-9.22337e+18, max=9.22337e+18, dtype=int64)"}


def _facts(lib):
    """Every answer of the five functions over the dtypes both libraries have, as plain values."""
    def name(d):
        return str(d).rsplit(".", 1)[1]

    out = {}
    for n in FLOATS:
        f = lib.finfo(getattr(lib, n))
        out[f"finfo {n}"] = (repr(f), f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype)
    out["finfo default"] = repr(lib.finfo())
    for n in INTS:
        i = lib.iinfo(getattr(lib, n))
        out[f"iinfo {n}"] = (repr(i), i.bits, i.max, i.min, i.dtype)
    for a in ALL:
        for b in ALL:
            out[f"promote {a} {b}"] = name(lib.promote_types(getattr(lib, a), getattr(lib, b)))
            out[f"can_cast {a} {b}"] = lib.can_cast(getattr(lib, a), getattr(lib, b))
    operands = {"i32 vector": lambda: lib.ones(2, dtype=lib.int32), "f32 vector": lambda: lib.ones(2),
                "f64 0-d": lambda: lib.tensor(1.0, dtype=lib.float64),
                "u8 vector": lambda: lib.ones(2, dtype=lib.uint8),
                "bool 0-d": lambda: lib.tensor(True), "2.5": lambda: 2.5, "3": lambda: 3, "True": lambda: True}
    for a, fa in operands.items():
        for b, fb in operands.items():
            out[f"result_type {a} {b}"] = name(lib.result_type(fa(), fb()))
    return out


def test_the_answers_are_pytorchs():
    facts = _facts(engine)
    for n in FLOATS:
        assert facts[f"finfo {n}"][0] == FINFO[n]
    assert facts["finfo default"] == FINFO["float32"]
    for n in INTS:
        assert facts[f"iinfo {n}"][0] == IINFO[n]
    assert engine.finfo(engine.float32).eps == 2.0 ** -23 and engine.iinfo(engine.int64).max == 2 ** 63 - 1
    assert facts["promote int64 float16"] == "float16" and facts["promote uint8 bool"] == "uint8"
    assert facts["can_cast float64 int32"] is False and facts["can_cast int64 float16"] is True
    assert facts["can_cast int32 bool"] is False and facts["can_cast bool uint8"] is True
    assert facts["result_type i32 vector 2.5"] == "float32" and facts["result_type f32 vector f64 0-d"] == "float32"
    assert facts["result_type 3 True"] == "int64" and facts["result_type u8 vector 3"] == "uint8"


@pytest.mark.torch
def test_every_answer_is_what_pytorch_says():
    torch = pytest.importorskip("torch")
    assert _facts(engine) == _facts(torch)


def test_the_refusals_are_pytorchs():
    with pytest.raises(TypeError, match=r"torch.finfo\(\) requires a floating point input type"):
        engine.finfo(engine.int64)
    with pytest.raises(TypeError, match=r"torch.iinfo\(\) requires an integer input type"):
        engine.iinfo(engine.float32)
    with pytest.raises(TypeError, match="torch.bool is not supported by torch.iinfo"):
        engine.iinfo(engine.bool)
    with pytest.raises(TypeError, match=r"promote_types\(\): argument 'type2' must be torch.dtype, not str"):
        engine.promote_types(engine.float32, "x")


def test_a_safe_log_as_scripts_write_it():
    p = engine.tensor([0.0, 0.5, 1.0])
    eps = engine.finfo(p.dtype).eps
    assert engine.log(p.clamp(min=eps)).tolist()[0] == pytest.approx(-15.942385, rel=1e-6)
