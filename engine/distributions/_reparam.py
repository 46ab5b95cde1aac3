"""Reparameterised draws of the gamma and Dirichlet distributions, with PyTorch's implicit gradients.

A gamma draw ``x`` of shape ``alpha`` has no formula ``x = f(alpha, noise)`` to differentiate, but it moves with
``alpha`` as its quantile does: ``dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha)`` (F the CDF, f the density;
Figurnov, Mohamed and Mnih, "Implicit reparameterization gradients", 2018). PyTorch computes that ratio by the
approximations of Jankowiak and Obermeyer ("Pathwise derivatives beyond the reparameterization trick", 2018): a
series for small ``x``, a saddle-point expansion for large ``alpha``, and a fitted rational function between them;
a Dirichlet draw's (and so a Beta's) by the same authors' approximations for the Beta's CDF. They are written out
here, elementwise over arrays, so that the engine's gradients are PyTorch's for the same draw.

The draws themselves are made on the host from the engine's generator (``manual_seed`` repeats them), as the
other families' gamma draws are."""

from __future__ import annotations

import numpy as np

from .. import random as _random
from ..autograd.function import Function
from ..backend import xp_of
from ..functions.special import digamma as _digamma

__all__ = ["standard_gamma", "dirichlet"]

# the fitted rational function of log(x / alpha) and log(alpha) (Jankowiak and Obermeyer, 2018): rows by power of
# u = log(x / alpha), columns p0..p3 then q0..q3 (numerator and denominator, by power of v = log(alpha))
_GAMMA_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])


def standard_gamma_grad(xp, alpha, x):
    """``dx/dalpha`` for draws ``x`` of Gamma(``alpha``, 1), elementwise (float64 arrays)."""
    with np.errstate(all="ignore"):
        # small x: F = x^a sum_k (-x)^k / (k! (a + k)), its derivative in a term by term
        numer = xp.ones_like(x)
        denom = alpha.copy()
        series1 = numer / denom
        series2 = numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = x ** alpha
        pdf = x ** (alpha - 1) * xp.exp(-x)
        cdf = pow_x_alpha * series1
        cdf_alpha = (xp.log(x) - _digamma(xp, alpha)) * cdf - pow_x_alpha * series2
        small = -cdf_alpha / pdf
        small = xp.where(xp.isnan(small), 0.0, small)

        # large alpha: Rice's saddle-point expansion, with its form at x near alpha
        near_numer = (1 + 24 * alpha * (1 + 12 * alpha)) * (
            1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x))
        near = near_numer / (1244160 * alpha ** 4)
        root = xp.sqrt(8 * alpha)
        term2 = root / (alpha - x)
        term3 = (x - alpha - alpha * xp.log(x / alpha)) ** -1.5
        term23 = xp.where(x < alpha, term2 - term3, term2 + term3)
        term1 = xp.log(x / alpha) * term23 - xp.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        far = -stirling * x * term1 / root
        large = xp.where((0.9 * alpha <= x) & (x <= 1.1 * alpha), near, far)

        # between: the fitted rational function
        u, v = xp.log(x / alpha), xp.log(alpha)
        c = [_GAMMA_UV[0, i] + u * (_GAMMA_UV[1, i] + u * _GAMMA_UV[2, i]) for i in range(8)]
        p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
        q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
        middle = xp.exp(p / q)
        return xp.where(x < 0.8, small, xp.where(alpha > 8.0, large, middle))


def _beta_grad_alpha_small(xp, x, alpha, beta):
    factor = _digamma(xp, alpha) - _digamma(xp, alpha + beta) - xp.log(x)
    numer = xp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return xp.where(xp.isnan(result), 0.0, result)


def _beta_grad_beta_small(xp, x, alpha, beta):
    factor = _digamma(xp, alpha + beta) - _digamma(xp, beta)
    numer, betas, dbetas = xp.ones_like(x), xp.ones_like(x), xp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return xp.where(xp.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(xp, x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = xp.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * beta ** 4 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * beta ** 3 + alpha * (
            3 * (59 + 180 * beta - 90 * x) * beta ** 2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha ** 3 * beta ** 2 * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / xp.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = ((2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * beta * beta)
             / (xp.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx))
    term2 = 0.5 * xp.log(alpha / (total * x))
    term3 = xp.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * xp.log(beta / (total * (1 - x))) + alpha * xp.log(alpha / (total * x))) ** -1.5
    far = stirling * prefactor * (term1 + term2 * (term3 + xp.where(x < mean, term4, -term4)))
    return xp.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


# the rational correction for the Beta's reparameterised gradient (Jankowiak and Obermeyer, 2018):
# [numerator, denominator][power of u][power of a][power of b]
_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])


def dirichlet_grad(xp, x, alpha, total):
    """``-(dF/dalpha)(x; alpha, total - alpha) / f(x; ...) / (1 - x)`` for Beta draws ``x`` (the scaled gradient a
    Dirichlet draw's is made of), elementwise (float64 arrays)."""
    with np.errstate(all="ignore"):
        beta = total - alpha
        boundary = total * x * (1 - x)
        small_alpha = _beta_grad_alpha_small(xp, x, alpha, beta)
        small_beta = -_beta_grad_beta_small(xp, 1 - x, beta, alpha)
        mid = _beta_grad_alpha_mid(xp, x, alpha, beta)
        u = xp.log(x)
        a = xp.log(alpha) - u
        b = xp.log(total) - a
        p = xp.zeros_like(x)
        q = xp.zeros_like(x)
        for i, pu in enumerate((1.0, u, u * u)):
            for j, pa in enumerate((1.0, a, a * a)):
                cp, cq = _DIRICHLET_C[0, i, j], _DIRICHLET_C[1, i, j]
                p = p + pu * pa * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
                q = q + pu * pa * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
        approx = x * (_digamma(xp, total) - _digamma(xp, alpha)) / beta
        rational = p / q * approx
        return xp.where((x <= 0.5) & (boundary < 2.5), small_alpha,
                        xp.where((x >= 0.5) & (boundary < 0.75), small_beta,
                                 xp.where((alpha > 6) & (beta > 6), mid, rational)))


def _host_gamma(alpha_arr):
    """Gamma(alpha, 1) draws of alpha's shape, from the engine's generator, as float64 on the host."""
    host = alpha_arr if alpha_arr.__class__ is np.ndarray else alpha_arr.get()
    return _random.cpu_generator().standard_gamma(host.astype(np.float64))


class _StandardGamma(Function):
    """A Gamma(alpha, 1) draw for each element of ``alpha`` (already of the sample's shape); its gradient in alpha
    is the implicit one (:func:`standard_gamma_grad`)."""

    raw = True
    backward_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, alpha):
        xp = xp_of(alpha)
        x = xp.asarray(_host_gamma(alpha)).astype(alpha.dtype)
        tiny = np.finfo(alpha.dtype).tiny
        x = xp.maximum(x, tiny)  # (a draw that underflowed to 0: PyTorch's clamp)
        ctx.alpha, ctx.x = alpha, x
        return x

    @staticmethod
    def backward(ctx, g):
        xp = xp_of(g)
        grad = standard_gamma_grad(xp, ctx.alpha.astype(np.float64), ctx.x.astype(np.float64))
        return (g * grad.astype(g.dtype),)


class _Dirichlet(Function):
    """A Dirichlet draw along the last dimension of ``concentration`` (of the sample's shape): gammas normalised; its
    gradient PyTorch's, ``grad * (g - sum(x g))`` with ``grad`` from :func:`dirichlet_grad`."""

    raw = True
    backward_name = "DirichletBackward"

    @staticmethod
    def forward(ctx, concentration):
        xp = xp_of(concentration)
        gammas = _host_gamma(concentration)
        x = gammas / gammas.sum(-1, keepdims=True)
        tiny = np.finfo(concentration.dtype).tiny
        x = xp.asarray(np.clip(x, tiny, 1 - np.finfo(concentration.dtype).eps)).astype(concentration.dtype)
        ctx.alpha, ctx.x = concentration, x
        return x

    @staticmethod
    def backward(ctx, g):
        xp = xp_of(g)
        alpha, x = ctx.alpha.astype(np.float64), ctx.x.astype(np.float64)
        total = xp.broadcast_to(alpha.sum(-1, keepdims=True), alpha.shape)
        grad = dirichlet_grad(xp, x, alpha, total).astype(g.dtype)
        return (grad * (g - (ctx.x * g).sum(-1, keepdims=True)),)


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws, differentiable in ``alpha`` (a tensor of the sample's shape)."""
    return _StandardGamma.apply(alpha)


def dirichlet(concentration):
    """Dirichlet draws, differentiable in ``concentration`` (a tensor of the sample's shape)."""
    return _Dirichlet.apply(concentration)

