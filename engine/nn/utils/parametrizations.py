"""``engine.nn.utils.parametrizations``, as ``torch.nn.utils.parametrizations``: ``weight_norm`` (a weight as a
magnitude times a direction), ``spectral_norm`` (a weight divided by its largest singular value, estimated by power
iteration, as a GAN's discriminator keeps it 1-Lipschitz) and ``orthogonal`` (a weight kept orthogonal through the
matrix exponential, the Cayley map or Householder reflections), each registered with :mod:`.parametrize`."""

from __future__ import annotations

from enum import Enum, auto

from ... import creation
from ... import linalg as _linalg
from ...autograd import no_grad
from ...tensor import Tensor
from ...type_info import finfo
from .. import functional as F
from ..modules import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002 - PyTorch's name
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as a tensor of ``v``'s rank with 1 in the
    others (``dim=-1``: over all of it, a 0-d tensor), as ``torch.norm_except_dim``."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.ndim
    moved = v.movedim(dim, 0)
    norms = moved.reshape(moved.shape[0], -1).norm(pow, dim=1)
    shape = [1] * v.ndim
    shape[dim] = v.shape[dim]
    return norms.reshape(shape)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)``, the norm over every dimension but ``dim`` (all of them for -1)."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name>`` as ``g * v / ||v||`` (Salimans and Kingma, 2016): two parameters,
    ``parametrizations.<name>.original0`` (the magnitude ``g``, one per slice along ``dim``; ``dim=None``: one for the
    whole tensor) and ``original1`` (the direction ``v``), starting at the weight's own values."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # (u and v start near the singular vectors)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """``u`` and ``v`` moved toward the first left and right singular vectors, in place (so that a copy of the
        module made for another device shares the update, as PyTorch's)."""
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.mH @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # (a second forward's update must not change the first's graph)
        sigma = (u.conj() * (weight_mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """``module.<name>`` divided by its spectral norm (largest singular value), estimated by ``n_power_iterations``
    of the power method at each forward in training (buffers ``_u`` and ``_v`` of the parametrization; 15 at
    registration). ``dim``: the output dimension (1 for a transposed convolution, else 0)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(Q, eps=None):  # noqa: N803
    n, k = Q.shape[-2], Q.shape[-1]
    eye = creation.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * float(finfo(Q.dtype).eps) if eps is None else eps
    return bool((Q.mH @ Q).isclose(eye, rtol=0.0, atol=eps).all())


def _make_orthogonal(A):  # noqa: N803
    """The Q of A's QR decomposition with R's diagonal made positive (one orthogonal matrix near A)."""
    Q, R = _linalg.qr(A)  # noqa: N806
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X, (n, k) = X.mT, (k, n)  # noqa: N806
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # noqa: N806
            if n != k:
                X = creation.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)  # noqa: N806
            A = X - X.mH  # noqa: N806 - skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _linalg.matrix_exp(A)  # noqa: N806
            else:  # the Cayley retraction (I + A/2)(I - A/2)^-1
                eye = creation.eye(n, dtype=A.dtype, device=A.device)
                Q = _linalg.solve(eye - 0.5 * A, eye + 0.5 * A)  # noqa: N806
            if n != k:
                Q = Q[..., :k]  # noqa: N806
        else:
            A = X.tril(diagonal=-1)  # noqa: N806
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _linalg.householder_product(A, tau)  # noqa: N806
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().int().unsqueeze(-2)  # noqa: N806 - X's diagonal: ±1
        if "base" in self._buffers and self.base is not None:
            Q = self.base @ Q  # noqa: N806
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803
        with no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of "
                                 f"shape {Q.shape}.")
            q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q, (n, k) = Q.mT, (k, n)  # noqa: N806
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A, tau = _linalg.geqrf(Q)  # noqa: N806
                diag = A.diagonal(dim1=-2, dim2=-1)
                diag.sign_()
                diag.copy_(creation.where(tau == 0.0, -diag, diag))
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)  # noqa: N806
            else:  # completed into a full n x n orthogonal matrix
                extra = creation.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(creation.cat([Q, extra], dim=-1))  # noqa: N806
            self.base = Q
            neg_id = creation.zeros_like(q_init)  # (householder(0) is then the identity's first columns)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """``module.<name>`` kept orthogonal (its columns or rows orthonormal), through ``orthogonal_map``:
    ``"matrix_exp"`` (the default for a square or complex weight), ``"cayley"`` or ``"householder"`` (the default
    otherwise). With ``use_trivialization`` the weight starts at the orthogonal matrix nearest its value (the buffer
    ``base``), and assigning to it works for every map."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1] or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
