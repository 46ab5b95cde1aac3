"""The graph's two hot paths compiled (``_cgraph.c``): recording a built-in's node (``Function.apply``) and
``Tensor.backward()``'s walk. Built at install where a C compiler is at hand (setup.py; optional); where it is not,
or with ``GRADSCOPE_PURE_PYTHON=1`` in the environment, the engine runs the same steps in Python
(``function._apply``, ``graph._run``), which are the reference."""

from __future__ import annotations

import os

apply = walk = setup_apply = setup_walk = set_leaf_hooks = set_node_hooks = None
if os.environ.get("GRADSCOPE_PURE_PYTHON", "").strip() in ("", "0"):
    try:
        from ._cgraph import (  # noqa: F401  (the names this module gives)
            apply,
            set_leaf_hooks,
            setup_apply,
            setup_walk,
            walk,
        )
    except ImportError:  # not built: the Python paths
        pass
    try:
        from ._cgraph import set_node_hooks  # noqa: F401
    except ImportError:  # (not built, or a build older than nodes' own hooks: every walk runs in Python then)
        pass


def kind() -> str:
    """Which paths record and walk the graph: "compiled" (_cgraph.c) or "python" (not built, or
    GRADSCOPE_PURE_PYTHON=1)."""
    return "python" if walk is None else "compiled"
