"""The engine's compiled parts, twice: the engine's autograd tests (the modules that use the ``graph_core``
fixture) run with the compiled recording and walk (engine/autograd/_cgraph.c) and the CPU backward's masked writes
in C (engine/_ckernels.c), and with the Python they stand for (function._apply, graph._run, NumPy's ufuncs in
engine/kernels.py), which must agree."""

from __future__ import annotations

import pytest

from engine import kernels
from engine.autograd import _compiled
from tests.engine.helpers import python_paths


@pytest.fixture(scope="module", params=["compiled", "python"])
def graph_core(request):
    """Module-scoped (hypothesis's tests take no function-scoped fixture): each module runs once per kind."""
    if request.param == "compiled":
        if _compiled.kind() != "compiled" or kernels.implementation() != "compiled":
            pytest.skip("the compiled paths are not built here (no C compiler at install, or GRADSCOPE_PURE_PYTHON=1)")
        yield request.param
    else:
        with python_paths():
            yield request.param
