"""``engine.linalg``: norms, the inverse, determinants, linear solves and the decompositions (``cholesky``, ``qr``,
``eigh``, ``svd``) of (batches of) matrices, as ``torch.linalg`` has them, with PyTorch's gradients; on NumPy's
LAPACK on the CPU and CuPy's cuSOLVER on a GPU.

The decompositions are Functions of several outputs whose backward is written in tensor ops (PyTorch's formulas,
FunctionsManual.cpp), so that ``create_graph=True`` differentiates them again. Each takes complex matrices too:
the formulas are written with ``^H`` (``mH``, the transpose of a real matrix), and where a complex decomposition
is defined only up to phases (eigenvectors, singular vectors), a loss that depends on them is refused in PyTorch's
words (``_phase_check``)."""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from . import dtypes as _dtypes
from . import functions as _fn
from .autograd.function import Function
from .autograd.grad_mode import no_grad as _no_grad
from .backend import to_host, xp_of
from .creation import cat as _cat
from .creation import eye as _eye
from .creation import zeros as _zeros
from .functions.linalg import check_floating as _floating
from .functions.linalg import check_square as _square
from .tensor import Tensor, _wrap

__all__ = ["vector_norm", "matrix_norm", "norm", "inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh",
           "eigvalsh", "eig", "eigvals", "svd", "svdvals", "pinv"]


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The ``ord``-norm of ``x``'s elements over ``dim`` (all of them by default), as :meth:`Tensor.norm`."""
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return x.norm(ord, dim, keepdim, dtype=dtype)


def matrix_norm(a: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """A matrix norm over the two ``dim``: ``'fro'`` (the default), 1 / -1 (the largest / smallest column sum of
    absolute values), inf / -inf (the same of the rows), ``'nuc'`` (the sum of the singular values), 2 / -2 (the
    largest / smallest singular value)."""
    if a.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    a = a.to(dtype) if dtype is not None else a
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    rows, cols = (d % a.dim() for d in dim)
    if rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return a.norm(2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):  # from the singular values: their sum, the largest, the smallest
        sv = svdvals(a.movedim((rows, cols), (-2, -1)))
        out = sv.sum(-1) if ord in ("nuc", 2) and not sv.shape[-1] else (
            sv.sum(-1) if ord == "nuc" else sv.amax(-1) if ord == 2 else sv.amin(-1))  # (an empty largest: 0)
        for d in sorted((rows, cols)) if keepdim else ():
            out = out.unsqueeze(d)
        return out
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    summed, over = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = a.abs().sum(summed, keepdim=True)
    if ord > 0 and not sums.shape[over]:  # (the largest of no sums: 0, as PyTorch's; the smallest refuses)
        out = sums.sum(over, keepdim=True)
    else:
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


# ---------------------------------------------------------------------------------------------------- decompositions

def _result(name: str, fields: tuple):
    """PyTorch's ``torch.return_types.<name>``: a named tuple, printed one field a line."""
    def __repr__(self):
        inner = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"engine.return_types.{name}(\n{inner})"

    return type(name, (namedtuple(name, fields),), {"__slots__": (), "__repr__": __repr__})


_SvdResult = _result("linalg_svd", ("U", "S", "Vh"))
_EighResult = _result("linalg_eigh", ("eigenvalues", "eigenvectors"))
_EigResult = _result("linalg_eig", ("eigenvalues", "eigenvectors"))
_QrResult = _result("linalg_qr", ("Q", "R"))


def _matrices(a: Tensor, fn: str) -> None:
    if a.dim() < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    _floating(a, fn)


def _diag_embed(v: Tensor) -> Tensor:
    """(..., n) -> (..., n, n) with ``v`` on the diagonal."""
    return v.unsqueeze(-1) * _eye(v.shape[-1], dtype=v.dtype, device=v.device)


def _off_diagonal(x: Tensor) -> Tensor:
    return x - _diag_embed(x.diagonal(0, -2, -1))


def _used(g: Tensor) -> bool:
    """Whether an output's gradient is more than the zeros the walk gives an output no path used (PyTorch's
    undefined gradient: its terms are left out, and with them the 0 / 0 of repeated singular values)."""
    return bool((g._data != 0).any())


class _Cholesky(Function):
    backward_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx, a, upper):
        try:
            lower = xp_of(a._data).linalg.cholesky(a._data)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.cholesky: The factorization could not be completed because the input is not "
                               "positive-definite.") from None
        if a._data.__class__ is not np.ndarray:  # CuPy raises nothing by default (cuSOLVER's info is not read): a
            # failed factorization leaves a diagonal element not positive or NaN; a host read, as PyTorch's check
            diag = lower.diagonal(axis1=-2, axis2=-1).real  # (a complex factor's diagonal is real)
            if not bool(((diag > 0) & xp_of(diag).isfinite(diag)).all()):
                raise RuntimeError("linalg.cholesky: The factorization could not be completed because the input is "
                                   "not positive-definite.")
        lower = _wrap(lower)
        out = lower.mH.contiguous() if upper else lower
        ctx.upper = upper
        ctx.save_for_backward(out)  # (the output itself: a second derivative follows it back to A)
        return out

    @staticmethod
    def backward(ctx, g):
        (lower,) = ctx.saved_tensors
        if ctx.upper:
            lower, g = lower.mH, g.mH
        # A = L L^H: gA = L^-H sym(tril(L^H gL)) L^-1, sym(X) = (X + X^H) / 2 on the strictly lower part, the
        # diagonal halved (PyTorch's cholesky_backward; ^H is ^T for a real matrix)
        t = (lower.mH @ g).tril()
        p = 0.5 * (t + t.tril(-1).mH)
        x = solve(lower.mH, p)  # L^-H P
        return solve(lower.mH, x.mH).mH, None  # (L^-H P) L^-1 (and nothing for the option)


class _Qr(Function):
    backward_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, a, mode):
        xp = xp_of(a._data)
        if mode == "r":
            return _wrap(xp.linalg.qr(a._data, mode="r"))
        q, r = xp.linalg.qr(a._data, mode=mode)
        q, r = _wrap(q), _wrap(r)
        ctx.mode = mode
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, gq, gr):
        q, r = ctx.saved_tensors
        m, n = q.shape[-2], r.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        # PyTorch's linalg_qr_backward (^H is ^T for a real matrix)
        x = gr @ r.mH - q.mH @ gq
        if m >= n:
            upper = x.triu()
            sym = upper + upper.mH  # (its diagonal real: 2 Re, halved to Re)
            sym = sym - 0.5 * _diag_embed(sym.diagonal(0, -2, -1))
            ga = q @ sym + gq
            return solve(r, ga.mH).mH, None  # ga R^-H
        skew = (-x + x.mH).tril()  # (its diagonal 2i Im, halved: zero for a real matrix)
        skew = skew - 0.5 * _diag_embed(skew.diagonal(0, -2, -1))
        ga = solve(r[..., :m], (q @ skew).mH).mH  # (Q skew) R_1^-H, R_1 R's first m columns
        zeros = _zeros(*ga.shape[:-1], n - m, dtype=ga.dtype, device=ga.device)
        return _cat([ga, zeros], -1) + q @ gr, None


class _Eigh(Function):
    backward_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, a, uplo):
        w, v = xp_of(a._data).linalg.eigh(a._data, UPLO=uplo)
        w, v = _wrap(w), _wrap(v)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        # PyTorch's linalg_eig_backward of a Hermitian matrix: gA = V (skew(V^H gV) / 2 / E + diag(gw)) V^H,
        # E_ij = w_j - w_i (the diagonal: the eigenvalues' own); ^H is ^T for a real matrix
        if not _used(gv):
            return (v * gw.unsqueeze(-2)) @ v.mH, None
        vg = v.mH @ gv
        if vg.is_complex():
            _phase_check(lambda: vg.diagonal(0, -2, -1).imag, None, "linalg_eigh_backward" + _EIGENVECTOR_PHASE)
        gap = w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(w.shape[-1], dtype=w.dtype, device=w.device)
        ga = 0.5 * (vg - vg.mH) / gap
        if _used(gw):  # (the diagonal is the eigenvalues' own gradient: PyTorch copies it in)
            ga = _off_diagonal(ga) + _diag_embed(gw)
        return v @ ga @ v.mH, None


class _Eig(Function):
    """The eigendecomposition of a general square matrix: complex eigenvalues and unit eigenvectors (LAPACK's
    geev: each vector's largest component real), always complex, as PyTorch's. The gradient is PyTorch's
    ``linalg_eig_backward``: ``V^-H (diag(gL) + P(V^H gV) / conj(E)) V^H``, ``E_ij = L_j - L_i``, ``P`` the
    projection that keeps the vectors of unit norm; a loss that depends on the phase of an eigenvector (which is
    only defined up to ``e^(i phi)``) is refused in PyTorch's words."""

    backward_name = "LinalgEigBackward0"

    @staticmethod
    def forward(ctx, a):
        data = a._data
        w, v = xp_of(data).linalg.eig(data)
        wide = _dtypes.complex_of(_dtypes.real_of(data.dtype))
        w, v = _wrap(w.astype(wide, copy=False)), _wrap(v.astype(wide, copy=False))
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        vh = v.mH
        if not _used(gv):
            return _solve_matrix(vh, gw.unsqueeze(-1) * vh), None
        vhgv = vh @ gv
        diag = vhgv.diagonal(0, -2, -1)
        _phase_check(lambda: diag.imag, None, "linalg_eig_backward" + _EIGENVECTOR_PHASE)
        vhgv = vhgv - vh @ (v * diag.real.unsqueeze(-2))
        wc = w.conj()
        gap = wc.unsqueeze(-2) - wc.unsqueeze(-1) + _eye(w.shape[-1], dtype=w.dtype, device=w.device)
        ga = vhgv / gap
        if _used(gw):  # (the diagonal is the eigenvalues' own gradient: PyTorch copies it in)
            ga = _off_diagonal(ga) + _diag_embed(gw)
        return _solve_matrix(vh, ga @ vh), None


_EIGENVECTOR_PHASE = (": The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The "
                      "specified loss function depends on this quantity, so it is ill-defined.")


def _phase_check(a, b, message: str) -> None:
    """PyTorch's check that a loss does not depend on the phase of a complex eigenvector or singular vector (only
    defined up to ``e^(i phi)``): ``allclose(a(), b(), rtol=1e-2, atol=1e-2)`` (``b`` None: zeros), else
    ``message``; ``a`` and ``b`` are computed unrecorded (a backward of ``create_graph`` records the rest)."""
    with _no_grad():
        a, b = a(), (None if b is None else b())
        bound = 1e-2 if b is None else 1e-2 + 1e-2 * b.abs()
        gap = a.abs() if b is None else (a - b).abs()
        if not bool((gap <= bound).all()):
            raise RuntimeError(message)


def _skew(x: Tensor) -> Tensor:
    return x - x.mH


def _solve_matrix(a: Tensor, b: Tensor) -> Tensor:
    return _fn.Solve.apply(a, b, vector=False)


class _Svd(Function):
    backward_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = (_wrap(t) for t in xp_of(a._data).linalg.svd(a._data, full_matrices=full_matrices))
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        # PyTorch's svd_backward (^H is ^T for a real matrix): of a complex matrix, a loss may not depend on the
        # phases of the singular vectors (U diag(e^(i phi)), V diag(e^(i phi)) serve as well), and the diagonal
        # has a term of their own
        u, s, vh = ctx.saved_tensors
        k = s.shape[-1]
        u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]  # a full factorization's extra
        m, n = u.shape[-2], vh.shape[-1]  # columns and rows say nothing of A
        use_u, use_v = _used(gu), _used(gvh)
        if not use_u and not use_v:
            return (u * gs.unsqueeze(-2)) @ vh, None
        uu = _skew(u.mH @ gu) if use_u else None
        vv = _skew(vh @ gvh.mH) if use_v else None
        if u.is_complex():
            _phase_check(lambda: uu.diagonal(0, -2, -1).imag if use_u else s * 0,
                         lambda: -vv.diagonal(0, -2, -1).imag if use_v else s * 0,
                         "svd_backward: The singular vectors in the complex case are specified up to multiplication "
                         "by e^{i phi}. The specified loss function depends on this phase term, making it "
                         "ill-defined.")
        s2 = s * s
        gap = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye(k, dtype=s.dtype, device=s.device)  # S_j^2 - S_i^2
        ga = _diag_embed(gs)
        if use_u:
            ga = ga + uu / gap * s.unsqueeze(-2)
        if use_v:
            ga = ga + s.unsqueeze(-1) * (vv / gap)
        if use_u and use_v and u.is_complex():
            ga = ga + _diag_embed(uu.diagonal(0, -2, -1) / (2 * s))
        if m > n and use_u:
            scaled = gu / s.unsqueeze(-2)
            return (u @ ga + scaled - u @ (u.mH @ scaled)) @ vh, None
        if m < n and use_v:
            scaled = gvh / s.unsqueeze(-1)
            return u @ (ga @ vh + scaled - (scaled @ vh.mH) @ vh), None
        return u @ ga @ vh, None


def cholesky(a: Tensor, *, upper: bool = False) -> Tensor:
    """``L`` with ``A = L L^T`` (``upper``: ``U`` with ``A = U^T U``) of a symmetric positive-definite ``A``; a matrix
    that is not positive-definite is refused by name."""
    _square(a, "cholesky")
    return _Cholesky.apply(a, upper)


def qr(a: Tensor, mode: str = "reduced"):
    """``(Q, R)`` with ``A = Q R``: ``mode`` ``'reduced'`` (Q of A's shape when it is tall), ``'complete'`` (Q
    square) or ``'r'`` (R alone, an empty Q; not differentiable, as in PyTorch)."""
    _matrices(a, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    if mode == "r":
        with _no_grad():
            r = _Qr.apply(a, "r")
        return _QrResult(a.new_zeros(0), r)
    return _QrResult(*_Qr.apply(a, mode))


def eigh(a: Tensor, UPLO: str = "L"):  # noqa: N803 - PyTorch's name
    """``(eigenvalues, eigenvectors)`` of a symmetric ``A`` (read from its ``UPLO`` triangle), ascending."""
    _square(a, "eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _EighResult(*_Eigh.apply(a, UPLO))


def eigvalsh(a: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803 - PyTorch's name
    return eigh(a, UPLO).eigenvalues


def eig(a: Tensor):
    """``(eigenvalues, eigenvectors)`` of a general square ``A`` (``A V = V diag(L)``), complex whatever ``A``'s
    dtype (complex64 for float32), the eigenvectors of unit norm; differentiable (``_Eig``)."""
    _square(a, "eig")
    return _EigResult(*_Eig.apply(a))


def eigvals(a: Tensor) -> Tensor:
    """The eigenvalues of a general square ``A`` (complex); their gradient needs the eigenvectors, so they are
    computed too (as PyTorch's)."""
    return eig(a).eigenvalues


def svd(a: Tensor, full_matrices: bool = True):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, S descending; ``full_matrices=False`` gives the reduced form."""
    _matrices(a, "svd")
    return _SvdResult(*_Svd.apply(a, full_matrices))


def pinv(a: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD: ``V diag(1/s) U^H`` over the singular values past
    ``max(atol, rtol * s_max)`` (PyTorch's default ``rtol``: ``eps * max(m, n)`` where neither is given), the others
    dropped; its gradient through the SVD's. ``hermitian``: A is read as Hermitian from its lower triangle, as
    PyTorch's (its eigh reads that one), whatever the upper triangle holds."""
    _matrices(a, "pinv")
    if hermitian:
        _square(a, "pinv")
        lower = a.tril(-1)
        diagonal = a.diagonal(0, -2, -1)
        a = lower + lower.mH + (diagonal.real if a.is_complex() else diagonal).diag_embed().to(a.dtype)
    return _Pinv.apply(a, atol, rtol)


class _Pinv(Function):
    """``pinv(A)`` from the SVD, its gradient PyTorch's ``pinv_backward`` (Golub and Pereyra's derivative of the
    pseudo-inverse at a constant rank: ``-P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A)``, P = pinv(A)),
    in Tensor ops: finite for a rank-deficient A too, where the SVD's gradient divides by the differences of equal
    (zero) singular values."""

    backward_name = "LinalgPinvBackward0"

    @staticmethod
    def forward(ctx, a, atol, rtol):
        with _no_grad():
            u, s, vh = svd(a, full_matrices=False)
            kept = s > _tolerance(a, s, atol, rtol)
            inverse = (s.where(kept, 1.0)).reciprocal().where(kept, 0.0)
            out = (vh.mH * inverse.unsqueeze(-2)) @ u.mH
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, p = ctx.saved_tensors
        ph, gh = p.mH, g.mH
        if a.shape[-2] <= a.shape[-1]:  # (ATen's order of products: the smallest matrices in between)
            k = gh @ p
            kph = k @ ph
            return -(p @ k).mH + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a), None, None
        k = p @ gh
        phk = ph @ k
        return -(k @ p).mH + (gh - a @ k) @ p @ ph + phk - phk @ p @ a, None, None


def _tolerance(a: Tensor, s: Tensor, atol, rtol) -> Tensor:
    """``max(atol, rtol * s_max)`` of singular values ``s``, kept as a dimension for comparing with ``s``. Each of
    ``atol`` and ``rtol`` a number or a tensor of one per matrix (the batch's shape, broadcast); PyTorch's default
    ``rtol``: ``eps * max(m, n)``, or 0 where ``atol`` is given and positive (elementwise, for a tensor of them)."""
    if rtol is None:
        default = float(np.finfo(a._data.dtype).eps) * max(a.shape[-2:])
        if isinstance(atol, Tensor):
            rtol = (atol > 0).logical_not().to(s.dtype) * default
        else:
            rtol = 0.0 if atol is not None and atol > 0 else default
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    atol, rtol = (t.unsqueeze(-1) if isinstance(t, Tensor) else t for t in (atol, rtol))
    tol = smax * rtol
    if atol is None:
        return tol
    return tol.maximum(atol.to(tol.dtype)) if isinstance(atol, Tensor) else tol.clamp(min=atol)


def svdvals(a: Tensor) -> Tensor:
    """The singular values, descending; their gradient ``U diag(g) Vh`` needs no singular vector's."""
    _matrices(a, "svdvals")
    return _Svd.apply(a, False)[1]



# ------------------------------------------------------------------------------ the rest of torch.linalg, composed

class LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError``: a matrix the operation cannot take (singular, not positive-definite)."""


_ExResult = namedtuple("linalg_ex", ("result", "info"))
_LstsqResult = _result("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def _ex(fn, a, check_errors, *args, **kwargs):
    """``(result, info)``: info 0, or 1 with NaN for the result where ``fn`` refused the matrix (``check_errors``:
    the refusal raised instead), as PyTorch's ``*_ex`` forms."""
    info = _zeros(*a.shape[:-2], dtype=np.int32, device=a.device)
    try:
        return _ExResult(fn(a, *args, **kwargs), info)
    except RuntimeError:
        if check_errors:
            raise
        return _ExResult(a.detach() * float("nan"), info + 1)


def inv_ex(a: Tensor, *, check_errors: bool = False):
    return _ex(inv, a, check_errors)


def cholesky_ex(a: Tensor, *, upper: bool = False, check_errors: bool = False):
    return _ex(cholesky, a, check_errors, upper=upper)


def solve_ex(a: Tensor, b: Tensor, *, left: bool = True, check_errors: bool = False):
    info = _zeros(*a.shape[:-2], dtype=np.int32, device=a.device)
    try:
        return _ExResult(solve(a, b, left=left), info)
    except RuntimeError:
        if check_errors:
            raise
        return _ExResult(b.detach() * float("nan"), info + 1)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a @ b


def matrix_power(a: Tensor, n: int) -> Tensor:
    return a.matrix_power(n)


def diagonal(a: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return a.diagonal(offset, dim1, dim2)


def cross(a: Tensor, b: Tensor, *, dim: int = -1) -> Tensor:
    return a.cross(b, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of ``x`` and ``y`` along ``dim`` (broadcast first), ``x`` conjugated as PyTorch's: ``x^H y``."""
    return ((x.conj() if x.is_complex() else x) * y).sum(dim)


def multi_dot(tensors) -> Tensor:
    """``A @ B @ C ...`` of two or more matrices, the first and last may be vectors (taken as a row and a column),
    multiplied in the order that costs the fewest multiplications, as ATen's: for three, the cheaper of ``(AB)C`` and
    ``A(BC)``; for more, the matrix-chain order (dynamic programming, the first split on ties). The result is viewed
    to its shape (``ViewBackward0``), PyTorch's refusals in its words."""
    given = list(tensors)
    n = len(given)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    shape = []
    if given[0].dim() == 1:
        first = given[0].unsqueeze(0)
    elif given[0].dim() == 2:
        first = given[0]
        shape.append(first.shape[0])
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {given[0].dim()}D")
    if given[-1].dim() == 1:
        last = given[-1].unsqueeze(-1)
    elif given[-1].dim() == 2:
        last = given[-1]
        shape.append(last.shape[1])
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {given[-1].dim()}D")
    for i in range(1, n - 1):
        if given[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {given[i].dim()}D")
    mats = [first, *given[1:-1], last]
    for i in range(1, n):
        if mats[i].dtype != mats[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{mats[0].dtype} and tensor {i} {mats[i].dtype}")
        if mats[i].device != mats[0].device:
            raise RuntimeError(f"multi_dot(): all tensors must be on the same device but tensor 0 is on "
                               f"{mats[0].device} and tensor {i} on {mats[i].device}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(given[i - 1].shape)} and "
                               f"{list(given[i].shape)} cannot be multiplied")
    if n == 2:
        return mats[0].mm(mats[1]).view(shape)
    if n == 3:
        a, b, c, d = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            return mats[0].mm(mats[1].mm(mats[2])).view(shape)
        return mats[0].mm(mats[1]).mm(mats[2]).view(shape)
    p = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k

    def chain(i, j):
        return mats[i] if i == j else chain(i, split[i][j]).mm(chain(split[i][j] + 1, j))

    return chain(0, n - 1).view(shape)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of ``x``'s last dimension: columns ``x ** 0, x ** 1, ..., x ** (N - 1)`` (of an integer
    x in int64, as PyTorch's)."""
    if x.dtype == _dtypes.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    if not (x.is_floating_point() or x.is_complex()):
        x = x.long()
    x = x.reshape(1) if x.dim() == 0 else x  # (a 0-d x, as PyTorch 2.13's: one point)
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = [x.unsqueeze(-1) ** 0, x.unsqueeze(-1)]
    for _ in range(2, n):
        powers.append(powers[-1] * x.unsqueeze(-1))
    return _cat(powers, dim=-1)


def matrix_rank(a: Tensor, *, atol=None, rtol=None, hermitian: bool = False, tol=None) -> Tensor:
    """How many singular values are past ``max(atol, rtol * s_max)`` (PyTorch's default ``rtol``: ``eps * max(m,
    n)`` where neither is given); int64, no gradient."""
    _matrices(a, "matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    with _no_grad():
        s = svdvals(a)
    return (s > _tolerance(a, s, atol, rtol)).sum(-1)


def cond(a: Tensor, p=None) -> Tensor:
    """The condition number in the ``p``-norm: ``s_max / s_min`` for ``None``/2 (``s_min / s_max`` for -2), else
    ``norm(A, p) * norm(inv(A), p)``."""
    _matrices(a, "cond")
    if p in (None, 2, -2):
        s = svdvals(a)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return matrix_norm(a, p) * matrix_norm(inv(a), p)


def solve_triangular(a: Tensor, b: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``) for a triangular ``A`` (its ``upper`` or lower triangle
    read, the rest ignored; ``unitriangular``: its diagonal taken as ones); the gradient reaches that triangle."""
    if a.dim() < 2 or b.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A must have at least 2 dimensions.")
    _square(a, "solve_triangular")
    t = a.triu() if upper else a.tril()
    if unitriangular:
        n = a.shape[-1]
        eye = _eye(n, dtype=a.dtype, device=a.device)
        t = t * (1 - eye) + eye
    if not left:
        return solve_triangular(t.mT, b.mT, upper=not upper).mT
    n = t.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                           f"({t.shape[-2]}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    # (B is always a matrix here, batched or not: never read as a batch of vectors, as linalg.solve may read it)
    batch = np.broadcast_shapes(tuple(t.shape[:-2]), tuple(b.shape[:-2]))
    return _fn.Solve.apply(t.expand(*batch, n, n), b.expand(*batch, n, b.shape[-1]), vector=False)


def lstsq(a: Tensor, b: Tensor, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (the minimum-norm one where ``A`` has not full rank), through the
    pseudo-inverse, differentiable; ``(solution, residuals, rank, singular_values)`` as PyTorch's CPU drivers give
    them (the default 'gelsy': the rank, no residuals or singular values; 'gelsd'/'gelss' add the singular values;
    residuals, the squared residual per column, where ``A`` is tall of full rank and the driver is not 'gelsy')."""
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    _matrices(a, "lstsq")
    vector = b.dim() == a.dim() - 1
    bb = b.unsqueeze(-1) if vector else b
    if bb.shape[-2] != a.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = a.shape[-2], a.shape[-1]
    rtol = rcond if rcond is not None else float(np.finfo(a._data.dtype).eps) * max(m, n)
    solution = pinv(a, rtol=rtol) @ bb
    empty = a.new_zeros(0, dtype=_dtypes.from_numpy_dtype(np.dtype(a._data.dtype.char.lower())))  # (real)
    rank = matrix_rank(a, rtol=rtol) if driver != "gels" else _zeros(0, dtype=np.int64, device=a.device)
    values = svdvals(a).detach() if driver in ("gelsd", "gelss") else empty
    residuals = empty
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        residuals = ((a @ solution - bb).abs() ** 2).sum(-2)
    if vector:
        solution = solution.squeeze(-1)
        residuals = residuals.squeeze(-1) if residuals.numel() else residuals
    return _LstsqResult(solution, residuals, rank, values)


def matrix_exp(a: Tensor) -> Tensor:
    """``exp(A)`` of (a batch of) square matrices: each scaled down by a power of two to 1-norm 1 or less, the
    Taylor series to degree 18 (its error under 1e-17), squared back up as often as that matrix needs; computed in
    double precision (float32 and complex64 too, rounded once at the end: within 4e-8 of the largest entry, where
    repeated squaring in float32 loses 1e-6 and more). Written in matrix products, so that its gradient is theirs
    (and ``create_graph`` differentiates it again). One read of the norms to the host, as PyTorch's."""
    _square(a, "matrix_exp")
    n = a.shape[-1]
    if n == 0 or a.numel() == 0:
        return a.clone()
    wide = {"c": _dtypes.complex128, "f": _dtypes.float64}.get(a._data.dtype.kind)
    x = a.to(wide) if wide is not None and a.dtype != wide else a
    with _no_grad():
        norms = to_host(x.abs().sum(-2).amax(-1)._data)  # (each matrix's 1-norm)
    finite = np.isfinite(norms) & (norms > 1)
    squarings = np.where(finite, np.ceil(np.log2(np.where(finite, norms, 1))), 0).astype(np.int64)
    most = int(squarings.max())
    if most:
        scale = np.ldexp(1.0, -squarings).reshape(squarings.shape + (1, 1))
        x = x * _wrap(xp_of(x._data).asarray(scale, dtype=x._data.real.dtype))
    eye = _eye(n, dtype=x.dtype, device=x.device)
    out, term = eye + x, x
    for k in range(2, 19):
        term = (term @ x) / k
        out = out + term
    uniform = bool((squarings == most).all())
    for j in range(most):
        square = out @ out
        if uniform:
            out = square
        else:  # (a matrix that needs fewer squarings keeps its value)
            out = square.where(_wrap(xp_of(x._data).asarray((j < squarings).reshape(squarings.shape + (1, 1)))), out)
    return out.to(a.dtype) if out.dtype != a.dtype else out


__all__ += ["LinAlgError", "inv_ex", "cholesky_ex", "solve_ex", "matmul", "matrix_power", "diagonal", "cross",
            "vecdot", "multi_dot", "vander", "matrix_rank", "cond", "solve_triangular", "lstsq", "matrix_exp",
            "householder_product"]


# ------------------------------------------------------- PyTorch's older top-level names, and Tensor's method forms

_OldSvd = _result("svd", ("U", "S", "V"))
_OldQr = _result("qr", ("Q", "R"))
_TriangularSolve = _result("triangular_solve", ("solution", "cloned_coefficient"))


def old_svd(a: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: ``(U, S, V)`` with ``A = U diag(S) V^H`` (V, not Vh); ``some``: the reduced form;
    ``compute_uv=False``: U and V zero-filled and square, S alone computed."""
    if not compute_uv:
        m, n = a.shape[-2], a.shape[-1]
        return _OldSvd(_zeros(*a.shape[:-2], m, m, dtype=a.dtype, device=a.device), svdvals(a),
                       _zeros(*a.shape[:-2], n, n, dtype=a.dtype, device=a.device))
    u, s, vh = svd(a, full_matrices=not some)
    return _OldSvd(u, s, vh.mH)


def old_qr(a: Tensor, some: bool = True):
    """``torch.qr``: :func:`qr` in ``'reduced'`` mode (``some``) or ``'complete'``."""
    q, r = qr(a, "reduced" if some else "complete")
    return _OldQr(q, r)


def _sum_to(g: Tensor, shape) -> Tensor:
    """``g`` summed over the batch dimensions it was broadcast along, down to ``shape``."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    extra = g.dim() - len(shape)
    if extra:
        g = g.sum(tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axes, keepdim=True) if axes else g


class _CholeskySolve(Function):
    """``X`` with ``L L^H X = B`` (``U^H U X = B``; ^H is ^T for a real matrix), one node as PyTorch's:
    ``gB = cholesky_solve(G, L)``, ``gL = -(gB X^H + X gB^H) L`` (``-U (...)``), the factor's gradient on the whole
    matrix as PyTorch's formula gives it (only a triangle is read)."""

    backward_name = "CholeskySolveBackward0"

    @staticmethod
    def forward(ctx, b, factor, upper):
        xp = xp_of(factor._data)
        with _no_grad():
            lower = (factor.mH if upper else factor).tril()._data  # (the triangle read, the rest ignored)
        # (the batch dimensions broadcast here, the gradients summed back in backward: CuPy's solve broadcasts none)
        batch = np.broadcast_shapes(lower.shape[:-2], b._data.shape[:-2])
        lower = xp.ascontiguousarray(xp.broadcast_to(lower, (*batch, *lower.shape[-2:])))
        rhs = xp.ascontiguousarray(xp.broadcast_to(b._data, (*batch, *b._data.shape[-2:])))
        y = _fn.linalg._lapack(lambda: xp.linalg.solve(lower, rhs), "cholesky_solve")
        upper_t = xp.swapaxes(lower, -1, -2)  # L^H
        upper_t = upper_t.conj() if upper_t.dtype.kind == "c" else upper_t
        x = _wrap(_fn.linalg._lapack(lambda: xp.linalg.solve(upper_t, y), "cholesky_solve"))
        ctx.upper = upper
        ctx.save_for_backward(factor, x)
        ctx.shapes = (tuple(b.shape), tuple(factor.shape))
        return x

    @staticmethod
    def backward(ctx, g):
        factor, x = ctx.saved_tensors
        need_b, need_factor = ctx.needs_input_grad[:2]
        gb = cholesky_solve(g, factor, ctx.upper)
        gf = None
        if need_factor:
            common = gb @ x.mH
            common = common + common.mH
            gf = _sum_to(-(factor @ common) if ctx.upper else -(common @ factor), ctx.shapes[1])
        return (_sum_to(gb, ctx.shapes[0]) if need_b else None), gf, None


class _CholeskyInverse(Function):
    """``(L L^H)^-1`` (``(U^H U)^-1``) from the factor, one node as PyTorch's: ``gL = -(A^-1 (G + G^H) A^-1) L``
    (``-U (...)``)."""

    backward_name = "CholeskyInverseBackward0"

    @staticmethod
    def forward(ctx, factor, upper):
        xp = xp_of(factor._data)
        n = factor.shape[-1]
        eye = xp.broadcast_to(xp.eye(n, dtype=factor._data.dtype), factor._data.shape)
        with _no_grad():
            inverse = _CholeskySolve.apply(_wrap(xp.ascontiguousarray(eye)), factor.detach(), upper)
        inverse = _wrap(inverse._data)
        ctx.upper = upper
        ctx.save_for_backward(factor, inverse)
        return inverse

    @staticmethod
    def backward(ctx, g):
        factor, inverse = ctx.saved_tensors
        common = inverse @ ((g + g.mH) @ inverse)
        return (-(factor @ common) if ctx.upper else -(common @ factor)), None


def cholesky_solve(b: Tensor, factor: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``A X = B``, given A's Cholesky factor (``A = L L^H``, or ``U^H U`` where ``upper``): two
    triangular solves in one node; the gradient reaches the factor and B."""
    from .dtypes import scalar_name

    for name, t in (("b", b), ("u", factor)):
        if t.dim() < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.dim()} dimensions instead")
    if b.dtype != factor.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_name(b._data.dtype)} and A of type {scalar_name(factor._data.dtype)} instead.")
    n = factor.shape[-1]
    if factor.shape[-2] != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {factor.shape[-2]} by {n} matrices")
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {b.shape[-2]} by {b.shape[-1]}")
    return _CholeskySolve.apply(b, factor, upper)


def cholesky_inverse(factor: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A = L L^H`` (``U^H U`` where ``upper``) from its Cholesky factor, one node."""
    if factor.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    if factor.shape[-1] != factor.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they are "
                           f"{factor.shape[-2]} by {factor.shape[-1]} matrices")
    return _CholeskyInverse.apply(factor, upper)


def triangular_solve(b: Tensor, a: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False):
    """``torch.triangular_solve``: ``(X, A.clone())`` with ``A X = B`` (``transpose``: ``A^T X = B``)."""
    t = a.mT if transpose else a
    solution = solve_triangular(t, b, upper=upper != transpose, unitriangular=unitriangular)
    return _TriangularSolve(solution, a.clone())


def householder_product(A: Tensor, tau: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The first ``n`` columns of ``H_1 ... H_k`` (``A`` of shape ``(..., m, n)``, ``tau`` of ``(..., k)``), each
    ``H_i = I - tau_i v_i v_i^H`` with ``v_i`` the ``i``-th column of A below its diagonal and 1 on it: LAPACK's
    ``orgqr``, the Q of a QR decomposition from :func:`geqrf`'s reflectors. Made of recorded ops, so the gradient
    reaches A and tau (and a second derivative)."""
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.householder_product: input must have at least 2 dimensions, got {A.ndim}")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    k = tau.shape[-1]
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if k == 0:  # (no reflectors: the identity's columns, in the graph as PyTorch's, A's and tau's gradients zeros)
        eye = _reflectors_product(A, tau)[..., :, :n]
        out = A.clone().copy_(eye) if A.requires_grad else eye
        return out + tau.sum(-1)[..., None, None] if tau.requires_grad else out  # (an empty sum: exactly 0)
    return _reflectors_product(A, tau)[..., :, :n]


def _reflectors_product(A, tau):  # noqa: N803
    """The whole ``(..., m, m)`` product ``H_1 ... H_k`` of A's reflectors (recorded ops)."""
    m, k = A.shape[-2], tau.shape[-1]
    rows = _wrap(xp_of(A._data).arange(m))
    Q = _eye(m, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], m, m)  # noqa: N806
    for i in range(k):
        v = A[..., :, i] * (rows > i).to(A.dtype) + (rows == i).to(A.dtype)
        Q = Q - tau[..., i, None, None] * ((Q @ v.unsqueeze(-1)) @ v.conj().unsqueeze(-2))  # noqa: N806
    return Q


orgqr = householder_product


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False) -> Tensor:  # noqa: A002
    """``other`` multiplied by the Q of :func:`geqrf`'s reflectors (``input``, ``tau``) without forming it apart:
    ``Q C`` (``left``) or ``C Q``, ``Q^H`` in its place with ``transpose``, as ``torch.ormqr``; differentiable (Q is
    made of recorded ops)."""
    if input.ndim < 2 or other.ndim < 2:
        raise RuntimeError("torch.ormqr: input and other must have at least 2 dimensions.")
    m = input.shape[-2]
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]")
    side = other.shape[-2] if left else other.shape[-1]
    if side != m:
        raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
    if tau.shape[-1] != min(side, input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{-2 if left else -1}], "
                           "input.shape[-1])")
    Q = _reflectors_product(input, tau)  # noqa: N806
    if transpose:  # (Q's conjugate transpose, as PyTorch's: its transpose for a real matrix)
        Q = Q.mH  # noqa: N806
    return Q @ other if left else other @ Q


def geqrf(a: Tensor):
    """``(a, tau)``: the QR decomposition in LAPACK's form (R on and above the diagonal, Householder reflectors
    below, and their scales), as ``torch.geqrf``; not differentiable (PyTorch's refuses the backward)."""
    _matrices(a, "geqrf")
    xp = xp_of(a._data)
    h, tau = xp.linalg.qr(a._data, mode="raw")
    return _GeqrfResult(_wrap(xp.ascontiguousarray(xp.swapaxes(h, -1, -2))), _wrap(tau))


_GeqrfResult = namedtuple("geqrf", ["a", "tau"])


# ------------------------------------------------------- LU

def _getrf(a, xp):
    """LAPACK's ``getrf`` on a batch of matrices (any shape ``(..., m, n)``), row by row with partial pivoting (the
    first largest magnitude): ``(LU packed, pivots 1-based int32, info)``; a zero pivot is left unscaled, as LAPACK
    leaves it, and noted in ``info`` (its column, 1-based)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = a.reshape((math.prod(batch), m, n)).copy()  # (a count, not -1: NumPy cannot infer it of empty matrices)
    count = lu.shape[0]
    piv = xp.empty((count, k), dtype=np.int32)
    info = xp.zeros(count, dtype=np.int32)
    rows = xp.arange(count)
    for j in range(k):
        column = lu[:, j:, j]  # (LAPACK's i?amax: a complex entry's size is |re| + |im|, not its modulus)
        p = j + xp.argmax(abs(column.real) + abs(column.imag) if column.dtype.kind == "c" else abs(column), axis=1)
        piv[:, j] = p + 1
        top, chosen = lu[rows, j, :].copy(), lu[rows, p, :].copy()
        lu[rows, p, :] = top
        lu[rows, j, :] = chosen
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = xp.where(zero & (info == 0), j + 1, info).astype(np.int32)
        factors = lu[:, j + 1:, j] / xp.where(zero, 1, pivot)[:, None]
        lu[:, j + 1:, j] = factors
        lu[:, j + 1:, j + 1:] -= factors[:, :, None] * lu[:, j, None, j + 1:]
    return lu.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _permutation(piv, m, xp):
    """The row order ``perm`` (``A[perm] = L U``) from LAPACK's sequential swaps."""
    batch = piv.shape[:-1]
    flat = piv.reshape((math.prod(batch), piv.shape[-1])) - 1
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        a, b = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = b, a
    return perm.reshape(batch + (m,))


class _LuFactor(Function):
    """``A = P L U`` packed (L's strictly lower part and U in one matrix). Its gradient is PyTorch's: for a square A
    ``P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H``; for a wide or tall one, that of its square block with the
    rest's gradient carried through (below)."""

    backward_name = "LinalgLuFactorExBackward0"

    @staticmethod
    def forward(ctx, a, box):
        xp = xp_of(a._data)
        lu, piv, info = _getrf(a._data, xp)
        box.update(pivots=_wrap(piv), info=_wrap(info))
        out = _wrap(lu)
        ctx.perm = _permutation(piv, a.shape[-2], xp)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (lu,) = ctx.saved_tensors
        m, n = lu.shape[-2:]
        eye = _eye(min(m, n), dtype=lu.dtype, device=lu.device)

        def square(lower, upper, phi):  # L^-H phi U^-H
            right = solve_triangular(upper, phi.mH, upper=True).mH  # phi U^-H = (U^-1 phi^H)^H
            return solve_triangular(lower.mH, right, upper=True, unitriangular=True)

        if m == n:
            lower, upper = lu.tril(-1) + eye, lu.triu()
            y = square(lower, upper, (lower.mH @ g.tril(-1)).tril(-1) + (g.triu() @ upper.mH).triu())
        elif m < n:
            # wide: A = P L [U1 U2], U1 square. U2's gradient reaches A's right block as L^-H gU2, and L's through
            # dU2 = L^-1 (dA2 - dL U2): the square formula with L^H gL - gU2 U2^H in place of L^H gL
            lower, u1, u2 = lu[..., :, :m].tril(-1) + eye, lu[..., :, :m].triu(), lu[..., :, m:]
            g1, g2 = g[..., :, :m], g[..., :, m:]
            phi = (lower.mH @ g1.tril(-1) - g2 @ u2.mH).tril(-1) + (g1.triu() @ u1.mH).triu()
            y = _cat([square(lower, u1, phi), solve_triangular(lower.mH, g2, upper=True, unitriangular=True)], -1)
        else:
            # tall: A = P [L1; L2] U, L1 square. L2's gradient reaches A's lower block as gL2 U^-H, and U's through
            # dL2 = (dA2 - L2 dU) U^-1: the square formula with gU U^H - L2^H gL2 in place of gU U^H
            l1, l2, upper = lu[..., :n, :].tril(-1) + eye, lu[..., n:, :], lu[..., :n, :].triu()
            g1, g2 = g[..., :n, :], g[..., n:, :]
            phi = (l1.mH @ g1.tril(-1)).tril(-1) + (g1.triu() @ upper.mH - l2.mH @ g2).triu()
            y = _cat([square(l1, upper, phi), solve_triangular(upper, g2.mH, upper=True).mH], -2)
        inverse = xp_of(lu._data).argsort(ctx.perm, axis=-1)  # P Y: row i of the result is row inverse[i] of Y
        return y.gather(-2, _wrap(inverse)[..., None].expand(*y.shape)), None


_LuFactorResult = _result("linalg_lu_factor", ("LU", "pivots"))
_LuFactorExResult = _result("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LuResult = _result("linalg_lu", ("P", "L", "U"))
_LuUnpackResult = _result("lu_unpack", ("P", "L", "U"))


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):  # noqa: N803 - PyTorch's name
    """``(LU, pivots, info)``: the LU decomposition with partial pivoting, packed as LAPACK's ``getrf`` (pivots
    1-based, int32; ``info`` the first zero pivot's column, 0 for none). Differentiable in LU (any shape)."""
    _matrices(A, "lu_factor_ex")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    box: dict = {}
    lu = _LuFactor.apply(A, box)
    info = box["info"]
    if check_errors:
        _check_lu(info, "lu_factor_ex")
    return _LuFactorExResult(lu, box["pivots"], info)


def _check_lu(info, fn):
    bad = info.reshape(-1).tolist()
    for index, value in enumerate(bad):
        if value > 0:
            where = f"(Batch element {index}): " if info.dim() else ""
            raise RuntimeError(f"torch.linalg.{fn}: {where}U[{value},{value}] is zero and using it on lu_solve "
                               "would result in a division by zero. If you still want to perform the factorization, "
                               "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A: Tensor, *, pivot: bool = True):  # noqa: N803
    """``(LU, pivots)`` of :func:`lu_factor_ex`; a singular A is refused, with PyTorch's message."""
    lu, pivots, info = lu_factor_ex(A, pivot=pivot)
    _check_lu(info, "lu_factor")
    return _LuFactorResult(lu, pivots)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True):  # noqa: N803
    """``(P, L, U)`` from a packed LU and its pivots: ``A = P L U``, L unit lower-triangular (m x k), U upper
    (k x n)."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = LU_data.new_zeros(0)
    if unpack_data:
        eye = _eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        lower = LU_data[..., :, :k].tril(-1) + eye
        upper = LU_data[..., :k, :].triu()
    else:
        lower = upper = empty
    if unpack_pivots:
        xp = xp_of(LU_data._data)
        perm = _permutation(LU_pivots._data, m, xp)
        batch = perm.shape[:-1]
        p = xp.zeros(batch + (m, m), dtype=LU_data._data.dtype)
        flat = p.reshape((math.prod(batch), m, m))
        rows = perm.reshape((math.prod(batch), m))
        flat[xp.arange(flat.shape[0])[:, None], rows, xp.arange(m)[None, :]] = 1
        permutation = _wrap(flat.reshape(batch + (m, m)))
    else:
        permutation = empty
    return _LuUnpackResult(permutation, lower, upper)


def lu(A: Tensor, *, pivot: bool = True):  # noqa: N803
    """``(P, L, U)`` with ``A = P L U`` (partial pivoting), differentiable (any shape)."""
    factor, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return _LuResult(*lu_unpack(factor, pivots))


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:  # noqa: N803
    """``X`` with ``A X = B`` from A's :func:`lu_factor` (``left=False``: ``X A = B``; ``adjoint``: with A's
    adjoint), differentiable in LU and B."""
    if not left:
        return lu_solve(LU, pivots, B.mH, left=True, adjoint=not adjoint).mH
    n = LU.shape[-1]
    permutation, lower, upper = lu_unpack(LU, pivots)
    if adjoint:  # A^H X = B: U^H L^H P^T X = B
        y = solve_triangular(upper.mH, B, upper=False)
        z = solve_triangular(lower.mH, y, upper=True, unitriangular=True)
        return permutation.to(z.dtype) @ z
    pb = permutation.mT.to(B.dtype) @ B
    y = solve_triangular(lower, pb, upper=False, unitriangular=True)
    return solve_triangular(upper[..., :n, :n], y, upper=True)


def _lu_old(A, pivot=True, get_infos=False):  # noqa: N803
    """``torch.lu`` (deprecated there for :func:`lu_factor`, with its warning): ``(LU, pivots)``, and ``infos`` with
    ``get_infos`` (otherwise a singular A is refused)."""
    import warnings

    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    factor, pivots, info = lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return factor, pivots, info
    _check_lu(info, "lu_factor")
    return factor, pivots


def _lu_solve_old(b, LU_data, LU_pivots):  # noqa: N803
    """``torch.lu_solve(B, LU, pivots)`` (deprecated there, with its warning, for :func:`lu_solve`)."""
    import warnings

    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                  "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                  "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
                  UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, b)


__all__ += ["lu", "lu_factor", "lu_factor_ex", "lu_solve"]


# Tensor's method forms of these (tensor_math, a core module, may not import this one: the import-cycle rule)
Tensor.lu = _lu_old
Tensor.lu_solve = _lu_solve_old
Tensor.householder_product = householder_product
Tensor.orgqr = householder_product
Tensor.geqrf = geqrf
Tensor.ormqr = ormqr
Tensor.matrix_exp = matrix_exp
Tensor.svd = old_svd
Tensor.qr = old_qr
Tensor.cholesky_solve = cholesky_solve
Tensor.cholesky_inverse = cholesky_inverse
Tensor.triangular_solve = triangular_solve
Tensor.pinverse = lambda self, rcond=1e-15: pinv(self, rtol=rcond)
_vector_norm_method = Tensor.norm


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    """``Tensor.norm`` (and ``torch.norm``), with PyTorch's ``p='nuc'``: the nuclear norm of the matrices over
    ``dim`` (all dimensions by default, so two of them: a matrix's), a sum of singular values."""
    if isinstance(p, str) and p == "nuc":
        return matrix_norm(self, "nuc", tuple(range(self.dim())) if dim is None else dim, keepdim, dtype=dtype)
    return _vector_norm_method(self, p, dim, keepdim, dtype)


_norm_method.__doc__ = f"{_vector_norm_method.__doc__}\n\n{_norm_method.__doc__}"
Tensor.norm = _norm_method
Tensor.cholesky = lambda self, upper=False: cholesky(self, upper=upper)


def tensorinv(a: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``a`` read as a linear map from its last dimensions (from ``ind``) to its first ``ind``:
    ``inv(a.reshape(n, n)).reshape(a.shape[ind:] + a.shape[:ind])``, as PyTorch's."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    end, start = tuple(a.shape[ind:]), tuple(a.shape[:ind])
    n_end, n_start = math.prod(end), math.prod(start)
    if n_end != n_start:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {n_end} != {n_start}")
    return inv(a.reshape(n_end, n_end)).reshape(*end, *start)


def tensorsolve(a: Tensor, b: Tensor, dims=None) -> Tensor:
    """``x`` with ``tensordot(a, x, x.ndim) == b``: ``a``'s dimensions ``dims`` (if given) moved to the end, then
    solved as one square system of ``prod(b.shape)`` unknowns, as PyTorch's."""
    if dims is not None:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        a = a.movedim(dims, tuple(range(-len(dims), 0)))
    result_shape = tuple(a.shape[b.dim():])
    n_result, n_b = math.prod(result_shape), math.prod(tuple(b.shape))
    if n_result != n_b:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n_result} != {n_b}")
    return solve(a.reshape(n_result, n_result), b.flatten()).reshape(*result_shape)


__all__ += ["tensorinv", "tensorsolve"]
