"""PyTorch's error inputs of its OpInfo database (``op.error_inputs``: bad arguments PyTorch refuses, each with the
exception type and the words its own tests expect) given to the engine's ops: where PyTorch refuses one, the engine
must refuse it too (never compute on it), with PyTorch's exception type. Its words are PyTorch's where a test below
or test_op_db_edges.py holds them; they are not asserted here (the engine names the op and the values in its own).

What the engine still does otherwise is listed in KNOWN with the reason; an entry that agrees fails, so the list
cannot go stale.
"""

from __future__ import annotations

import re
import warnings

import pytest

from tests.engine import opinfo

if opinfo.OP_DB is None:
    pytest.skip(opinfo.SKIP_REASON, allow_module_level=True)

torch = opinfo.torch
pytestmark = pytest.mark.torch

# (op, error input's index) -> why the engine differs
_ALIASED = ("an out= that is an expanded tensor or shares the input's memory: the sample's aliasing is lost when "
            "PyTorch's tensors are copied into the engine's (the engine refuses both: test_error_input_findings.py)")
KNOWN = {
    **{key: _ALIASED for key in (("cat", 0), ("cat", 6), ("cat", 8), ("gather", 5), ("gather", 6), ("gather", 7),
                                 ("kthvalue", 0), ("index_select", 0), ("take", 0), ("take", 1), ("take", 2))},
    ("arange", 6): "a float step that an int64 out= truncates to 0: torch 2.13 raises ValueError there and "
                   "RuntimeError for a step of 0; the engine RuntimeError for both",
    **{(name, k): "a tensor of 65 dimensions: NumPy holds at most 64, so the input cannot be made (ValueError)"
       for name in ("amax", "amin", "aminmax") for k in (1, 2)},
    ("narrow_copy", 1): "a dimension out of range: torch 2.13's narrow_copy raises its internal assertion "
                        "(RuntimeError), its narrow an IndexError; the engine raises narrow's",
    ("gradient", 3): "a tensor on the meta device (spacing): the engine has no meta device",
    ("gradient", 10): "a tensor on the meta device (spacing): the engine has no meta device",
    ("gradient", 17): "a tensor on the meta device (spacing): the engine has no meta device",
}


def _cases():
    out = []
    for op in opinfo.OP_DB or ():
        if op.name.startswith(("_", "sparse", "masked", "signal")) or any(r in op.name for r in opinfo.RANDOM):
            continue
        if opinfo.resolve(op.name) is None or op.error_inputs_func is None:
            continue
        label = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        out.append(pytest.param(op, id=label))
    return out


@pytest.mark.parametrize("op", _cases())
def test_the_engine_refuses_what_pytorch_refuses_with_its_exception_type(op):
    fn = opinfo.function(op)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors = list(op.error_inputs("cpu"))
    checked, differed, known = 0, [], []
    for k, error in enumerate(errors):
        sample = error.sample_input
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                op(sample.input, *sample.args, **sample.kwargs)
                theirs = None
            except Exception as exc:  # noqa: BLE001 - the refusal under test
                theirs = exc
            if not (isinstance(theirs, error.error_type) and re.search(error.error_regex, str(theirs))):
                continue  # (the table's entry is not what PyTorch does here)
            try:
                opinfo.run(fn, sample, "cpu", False)
                ours = None
            except opinfo.Unconvertible:
                continue
            except Exception as exc:  # noqa: BLE001
                ours = exc
        checked += 1
        problem = ("the engine computes" if ours is None else None if isinstance(ours, error.error_type)
                   else f"the engine's {type(ours).__name__}: {ours}"[:200])
        key = (op.name, k)
        if key in KNOWN:
            known.append((key, problem))
        elif problem:
            differed.append(f"error input {k} ({error.error_type.__name__}: {error.error_regex!r}): {problem}")
    stale = [key for key, problem in known if problem is None]
    assert not stale, f"{stale} agree now: take them off KNOWN"
    assert not differed, "\n".join(differed)
    if not checked:
        pytest.skip("PyTorch refuses none of its error inputs here")
