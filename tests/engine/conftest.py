"""The backward walk, twice: the engine's autograd tests (the modules that use the ``backward_walk`` fixture) run
through the compiled walk (engine/autograd/_cwalk.c) and through graph.py's own, which must agree."""

from __future__ import annotations

import pytest

from engine.autograd import graph


@pytest.fixture(scope="module", params=["compiled", "python"])
def backward_walk(request):
    """Module-scoped (hypothesis's tests take no function-scoped fixture): each module runs once per walk."""
    compiled = graph._cwalk
    if request.param == "compiled" and compiled is None:
        pytest.skip("the compiled walk is not built here (no C compiler at install, or GRADSCOPE_PYTHON_WALK=1)")
    graph._cwalk = compiled if request.param == "compiled" else None
    yield request.param
    graph._cwalk = compiled
