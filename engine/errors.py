"""Error texts the engine gives in more than one place, as PyTorch words them. A leaf: imports nothing."""

from __future__ import annotations

FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def shapes_error(a, b) -> RuntimeError:
    """PyTorch's error for a matrix product of arrays whose shapes do not fit."""
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(a.shape)} and {_shape_text(b.shape)})"
    )


def _shape_text(shape):
    return "x".join(str(n) for n in shape) if shape else "scalar"
