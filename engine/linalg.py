"""``engine.linalg``: norms, the inverse, determinants and linear solves of (batches of) square matrices, as
``torch.linalg`` has them, with PyTorch's gradients; on NumPy's LAPACK on the CPU and CuPy's cuSOLVER on a GPU.
The decompositions (``svd``, ``eigh``, ``qr``, ``cholesky``) are PyTorch's but not the engine's."""

from __future__ import annotations

import math

from . import functions as _fn
from .functions.linalg import check_square as _square
from .tensor import Tensor

__all__ = ["vector_norm", "matrix_norm", "norm", "inv", "det", "slogdet", "solve"]


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The ``ord``-norm of ``x``'s elements over ``dim`` (all of them by default), as :meth:`Tensor.norm`."""
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return x.norm(ord, dim, keepdim, dtype=dtype)


def matrix_norm(a: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """A matrix norm over the two ``dim``: ``'fro'`` (the default), or 1 / -1 (the largest / smallest column sum of
    absolute values), inf / -inf (the same of the rows)."""
    if a.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    a = a.to(dtype) if dtype is not None else a
    rows, cols = (d % a.dim() for d in dim)
    if ord == "fro":
        return a.norm(2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):
        raise NotImplementedError(f"linalg.matrix_norm(ord={ord!r}) needs singular values: PyTorch's, but not the "
                                  "engine's")
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    summed, over = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = a.abs().sum(summed, keepdim=True)
    out = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
    return out if keepdim else out.reshape([n for i, n in enumerate(out.shape) if i not in (rows, cols)])


def norm(a: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """``vector_norm`` of a vector or of every element (``ord`` None: 2), ``matrix_norm`` of a matrix with an
    ``ord`` given (or two ``dim``), as ``torch.linalg.norm``."""
    if ord is None:
        return vector_norm(a, 2, dim, keepdim, dtype=dtype) if dim is None or isinstance(dim, int) or len(dim) == 1 \
            else matrix_norm(a, "fro", dim, keepdim, dtype=dtype)
    if dim is None:
        if a.dim() == 1:
            return vector_norm(a, ord, None, keepdim, dtype=dtype)
        if a.dim() == 2:
            return matrix_norm(a, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{a.dim()}D.")
    if isinstance(dim, int) or len(dim) == 1:
        return vector_norm(a, ord, dim, keepdim, dtype=dtype)
    return matrix_norm(a, ord, dim, keepdim, dtype=dtype)


def inv(a: Tensor) -> Tensor:
    """The inverse of (a batch of) square matrices; a singular one is refused by name."""
    return a.inverse()


def det(a: Tensor) -> Tensor:
    return a.det()


def slogdet(a: Tensor):
    """``(sign, log |det A|)``: the determinant without its overflow; the gradient flows through the second."""
    return a.slogdet()


def solve(a: Tensor, b: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``), ``B`` a vector or a matrix (batched or not)."""
    _square(a, "solve")
    if not left:
        return solve(a.mT, b.mT).mT
    vector = b.dim() == 1 or (b.dim() == a.dim() - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    if b.shape[-2 if not vector else -1] != a.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a.shape[-2]}x{a.shape[-1]} and {'x'.join(map(str, b.shape))})")
    return _fn.Solve.apply(a, b, vector=vector)
