"""The special functions PyTorch has and NumPy does not (no SciPy here): ``lgamma``, ``digamma``, ``polygamma``,
``erfc`` and ``erfinv``, written with NumPy's (or CuPy's) ufuncs, so they run on either device. Each computes in
float64 and returns its input's float dtype; each is within a few units in the last place of float32 against
``math.lgamma``, ``math.erfc`` and PyTorch's own (tests/engine/test_special.py), and keeps PyTorch's values at the
poles (``lgamma`` inf at 0 and the negative integers, ``digamma`` -inf at +0, inf at -0, NaN at the negative
integers, ``erfinv`` +-inf at +-1, NaN past them)."""

from __future__ import annotations

import math

import numpy as np

# Lanczos' approximation, g = 7, n = 9 (Numerical Recipes / Godfrey's coefficients): Gamma to ~1e-15 relative
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
            12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)

# Bernoulli numbers B2, B4, ..., B20: the asymptotic series of digamma and of Hurwitz's zeta
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)


def _f64(x):
    return x.astype(np.float64) if x.dtype != np.float64 else x


def _sin_pi(xp, x):
    """sin(pi x), exact at the integers (sin(pi * 3.0) is 3.7e-16 in floats)."""
    r = x - xp.round(x)
    return xp.sin(math.pi * r) * xp.where(xp.round(x) % 2 == 0, 1.0, -1.0)


def lgamma(xp, x):
    """log |Gamma(x)|: Lanczos for x >= 0.5, the reflection log(pi / |sin(pi x)|) - lgamma(1 - x) below."""
    v = _f64(x)
    reflect = v < 0.5
    z = xp.where(reflect, 1 - v, v) - 1
    a = _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], start=1):
        a = a + c / (z + i)
    t = z + _LANCZOS_G + 0.5
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        right = _HALF_LOG_2PI + (z + 0.5) * xp.log(t) - t + xp.log(a)
        left = math.log(math.pi) - xp.log(abs(_sin_pi(xp, v))) - right
        out = xp.where(reflect, left, right)
        out = xp.where((v <= 0) & (v == xp.floor(v)), np.inf, out)  # the poles (-0.0 too)
        out = xp.where(xp.isinf(v), np.inf, out)
    return out.astype(x.dtype)


def digamma(xp, x):
    """d/dx lgamma: shifted up past 10 by psi(x) = psi(x + 1) - 1/x, then its asymptotic series; the reflection
    psi(1 - x) - pi / tan(pi x) below 0."""
    v = _f64(x)
    reflect = v < 0
    z = xp.where(reflect, 1 - v, v)
    acc = xp.zeros_like(z)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(10):
            low = z < 10
            acc = acc + xp.where(low, 1 / z, 0.0)
            z = xp.where(low, z + 1, z)
        inv2 = 1 / (z * z)
        series = 0.0  # sum of B2k / (2k z^2k), by Horner's rule in 1 / z^2
        for k in range(len(_B2K), 0, -1):
            series = (series + _B2K[k - 1] / (2 * k)) * inv2
        psi = xp.log(z) - 0.5 / z - series - acc
        r = v - xp.round(v)
        cot = xp.cos(math.pi * r) / xp.sin(math.pi * r)  # cot(pi x), exact near the integers
        out = xp.where(reflect, psi - math.pi * cot, psi)
        integer = (v == xp.floor(v)) & (v <= 0)
        out = xp.where(integer, xp.where(v == 0, xp.where(xp.signbit(v), np.inf, -np.inf), np.nan), out)
        out = xp.where(xp.isposinf(v), np.inf, xp.where(xp.isneginf(v), np.nan, out))
    return out.astype(x.dtype)


def polygamma(xp, n: int, x):
    """The n-th derivative of digamma (n >= 1): (-1)^(n+1) n! zeta(n + 1, x), Hurwitz's zeta summed directly up
    past 10 and then by its Euler-Maclaurin tail; inf (times the sign) at 0 and the negative integers."""
    if n == 0:
        return digamma(xp, x)
    v = _f64(x)
    s = n + 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lowest = float(v.min()) if v.size else 10.0  # (on a GPU, a read back: polygamma is not a step's op)
        steps = int(min(max(math.ceil(10 - lowest), 10), 4096)) if math.isfinite(lowest) else 10
        z = v.copy()
        acc = xp.zeros_like(z)
        for _ in range(steps):
            low = z < 10
            acc = acc + xp.where(low, z ** -s, 0.0)
            z = xp.where(low, z + 1, z)
        tail = z ** (1 - s) / (s - 1) + 0.5 * z ** -s
        rising = float(s)  # s (s+1) ... (s + 2k - 2)
        fact = 2.0  # (2k)!
        power = z ** (-s - 1)
        for k, b in enumerate(_B2K, start=1):
            tail = tail + b / fact * rising * power
            rising *= (s + 2 * k - 1) * (s + 2 * k)
            fact *= (2 * k + 1) * (2 * k + 2)
            power = power / (z * z)
        zeta = acc + tail
        out = (-1.0) ** (n + 1) * math.factorial(n) * zeta
        pole = (v <= 0) & (v == xp.floor(v))
        out = xp.where(pole, (-1.0) ** (n + 1) * np.inf, out)
        out = xp.where(z < 10, np.nan, out)  # (past 4,096 steps below 10: not summed)
        out = xp.where(xp.isposinf(v), 0.0, out)
    return out.astype(x.dtype)


# Cephes' erfc (ndtr.c): exp(-x^2) P(x)/Q(x) on [1, 8), R(x)/S(x) past 8; 1 - erf(x) below 1; 2 - erfc(-x) for x < 0
_ERFC_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0, 4.86371970985681366614E1,
           1.96520832956077098242E2, 5.26445194995477358631E2, 9.34528527171957607540E2, 1.02755188689515710272E3,
           5.57535335369399327526E2)
_ERFC_Q = (1.0, 1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
           9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3, 1.65666309194161350182E3,
           5.57535340817727675546E2)
_ERFC_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0, 6.16021097993053585195E0,
           7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC_S = (1.0, 2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
           1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)


def _horner(x, coefficients):
    out = coefficients[0]
    for c in coefficients[1:]:
        out = out * x + c
    return out


def erfc(xp, x, erf):
    """1 - erf(x) without its cancellation: Cephes' fits (``erf``: the engine's erf of an array)."""
    v = _f64(x)
    a = abs(v)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        mid = xp.clip(a, 1.0, 8.0)
        far = xp.clip(a, 8.0, 30.0)
        ex = xp.exp(-a * a)
        tail = xp.where(a < 8, _horner(mid, _ERFC_P) / _horner(mid, _ERFC_Q), _horner(far, _ERFC_R)
                        / _horner(far, _ERFC_S)) * ex
        tail = xp.where(a > 27.3, 0.0, tail)  # (past float64's smallest subnormal)
        positive = xp.where(a < 1, 1 - erf(xp.clip(v, -1.0, 1.0)), xp.where(v < 0, 2 - tail, tail))
    return positive.astype(x.dtype)


def erfinv(xp, x, erf):
    """The inverse of erf on (-1, 1): Giles' single-precision approximation ("Approximating the erfinv function",
    2010; erfc's asymptotic form past its range), then four Newton steps on erf (on log erfc near +-1) in float64;
    +-inf at +-1, NaN past them."""
    v = _f64(x)
    return _erfinv(xp, v, 1 - abs(v), erf).astype(x.dtype)


def ndtri(xp, x, erf):
    """The standard normal's quantile, ``sqrt(2) erfinv(2p - 1)``, with the tail ``2 min(p, 1 - p)`` kept exact
    (``2p - 1`` is -1 in floats for p below 1e-17)."""
    p = _f64(x)
    lower = p < 0.5
    tail = xp.where(lower, 2 * p, 2 * (1 - p))
    return (math.sqrt(2) * _erfinv(xp, 2 * p - 1, tail, erf)).astype(x.dtype)


def _erfinv(xp, v, tail, erf):
    """erfinv(v), given ``tail`` = 1 - |v| (exact where the caller has it so)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = -xp.log(tail * (2 - tail))
        small = w < 5
        ws = w - 2.5
        p_small = _horner(ws, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                               -0.00125372503, -0.00417768164, 0.246640727, 1.50140941))
        wl = xp.sqrt(xp.maximum(w, 5.0)) - 3
        p_large = _horner(wl, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
        y = xp.where(small, p_small, p_large) * v
        # past Giles' range (1 - |v| below ~1e-7), erfc(y) ~ exp(-y^2) / (y sqrt(pi)) solved once for y instead
        big = -xp.log(xp.where(w > 16, tail, 1e-8))
        y = xp.where(w > 16, xp.sign(v) * xp.sqrt(big - xp.log(math.sqrt(math.pi) * xp.sqrt(big))), y)
        near_one = tail <= 0.5
        log_tail = xp.log(tail)
        for _ in range(4):
            # Newton on erf(y) = v in the middle; near +-1 on log(erfc(|y|)) = log(1 - |v|), which is nearly a
            # parabola in y (erf(y) - v cancels there, and erfc's own steps crawl: ~1 / 2y each)
            slope = 2 / math.sqrt(math.pi) * xp.exp(-y * y)
            erfc_y = erfc(xp, xp.where(near_one, abs(y), 0.0), erf)
            step_tail = xp.sign(v) * (xp.log(erfc_y) - log_tail) * erfc_y / slope
            y = y - xp.where(near_one, -step_tail, (erf(y) - v) / slope)
        y = xp.where(tail == 0, xp.sign(v) * np.inf, y)
        y = xp.where((tail < 0) | xp.isnan(tail), np.nan, y)
    return y


_MACHEP = 1.11022302462515654042e-16
_BIG = 4.503599627370496e15
_BIGINV = 2.22044604925031308085e-16


def _igam_prefactor(xp, a, x):
    """``x^a e^-x / Gamma(a)``, in logs."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return xp.exp(a * xp.log(x) - x - lgamma(xp, a))


def _igam_series(xp, a, x):
    """P(a, x) by its power series (x below a, or below 1): ``x^a e^-x / Gamma(a + 1) sum x^n / ((a+1)...(a+n))``,
    summed until the terms fall under machine epsilon (every element at once; at most 2000 terms)."""
    r, c, ans = a.copy(), xp.ones_like(x), xp.ones_like(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(2000):
            r = r + 1
            c = c * (x / r)
            ans = ans + c
            if not bool((c > _MACHEP * ans).any()):
                break
        return ans * _igam_prefactor(xp, a, x) / a


def _igamc_fraction(xp, a, x):
    """Q(a, x) by its continued fraction (x above a and above 1), Cephes' ``igamc`` evaluated for every element at
    once (at most 2000 steps)."""
    y = 1 - a
    z = x + y + 1
    c = xp.zeros_like(x)
    pkm2, qkm2 = xp.ones_like(x), x.copy()
    pkm1, qkm1 = x + 1, z * x
    ans = pkm1 / qkm1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(2000):
            c = c + 1
            y = y + 1
            z = z + 2
            yc = y * c
            pk = pkm1 * z - pkm2 * yc
            qk = qkm1 * z - qkm2 * yc
            nonzero = qk != 0
            r = xp.where(nonzero, pk / xp.where(nonzero, qk, 1), ans)
            t = xp.where(nonzero, xp.abs((ans - r) / r), 1.0)
            ans = r
            pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
            big = xp.abs(pk) > _BIG
            pkm2, pkm1 = xp.where(big, pkm2 * _BIGINV, pkm2), xp.where(big, pkm1 * _BIGINV, pkm1)
            qkm2, qkm1 = xp.where(big, qkm2 * _BIGINV, qkm2), xp.where(big, qkm1 * _BIGINV, qkm1)
            if not bool((t > _MACHEP).any()):
                break
        return ans * _igam_prefactor(xp, a, x)


def gammainc(xp, a, x, upper: bool = False):
    """The regularized incomplete gamma function P(a, x) (``upper``: Q = 1 - P), as PyTorch's ``igamma`` /
    ``igammac``: the series where x is below a or below 1, the continued fraction elsewhere (Cephes' split), in
    float64; NaN for a negative argument or at a = x = 0, PyTorch's values at 0 and infinity."""
    a64, x64 = _f64(a), _f64(x)
    a64, x64 = xp.broadcast_arrays(a64, x64)
    safe_a = xp.where((a64 > 0) & xp.isfinite(a64), a64, 1.0)
    safe_x = xp.where((x64 > 0) & xp.isfinite(x64), x64, 1.0)
    use_fraction = (safe_x > 1.0) & (safe_x > safe_a)
    series_a = xp.where(use_fraction, 1.0, safe_a)
    series_x = xp.where(use_fraction, 0.5, safe_x)
    fraction_a = xp.where(use_fraction, safe_a, 1.0)
    fraction_x = xp.where(use_fraction, safe_x, 2.0)
    p_series = _igam_series(xp, series_a, series_x)
    q_fraction = _igamc_fraction(xp, fraction_a, fraction_x)
    out = xp.where(use_fraction, q_fraction if upper else 1.0 - q_fraction, 1.0 - p_series if upper else p_series)
    lower_value = lambda p: (1.0 - p) if upper else p  # noqa: E731 - the value P = p gives, lower or upper
    out = xp.where(xp.isposinf(x64), lower_value(1.0), out)
    out = xp.where(xp.isposinf(a64), lower_value(0.0), out)
    out = xp.where(xp.isposinf(a64) & xp.isposinf(x64), np.nan, out)
    out = xp.where(x64 == 0, lower_value(0.0), out)
    out = xp.where(a64 == 0, xp.where(x64 > 0, lower_value(1.0), np.nan), out)
    out = xp.where((a64 < 0) | (x64 < 0) | xp.isnan(a64) | xp.isnan(x64), np.nan, out)
    return out.astype(np.result_type(a.dtype, x.dtype))


def gammainc_grad_x(xp, a, x):
    """dP/dx = x^(a-1) e^-x / Gamma(a)."""
    a64, x64 = _f64(a), _f64(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return xp.exp((a64 - 1) * xp.log(x64) - x64 - lgamma(xp, a64))


def erfcx(xp, x, erf):
    """exp(x^2) erfc(x) without its overflow: Cephes' erfc fits without their exp(-x^2) factor from 1 on, the
    continued fraction of Faddeeva's package past 50 (PyTorch's), 1/(x sqrt(pi)) past 5e7; below 0,
    2 exp(x^2) - erfcx(-x), inf below -26.7."""
    v = _f64(x)
    a = abs(v)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        mid = xp.clip(a, 1.0, 8.0)
        far = xp.clip(a, 8.0, 50.0)
        beyond = xp.clip(a, 50.0, 5e7)
        near = xp.minimum(a, 1.0)
        isp = 0.56418958354775628694807945156  # 1 / sqrt(pi)
        b2 = beyond * beyond
        scaled = xp.where(a < 1, xp.exp(near * near) * (1 - erf(near)),
                          xp.where(a < 8, _horner(mid, _ERFC_P) / _horner(mid, _ERFC_Q),
                                   xp.where(a <= 50, _horner(far, _ERFC_R) / _horner(far, _ERFC_S),
                                            isp * (b2 * (b2 + 4.5) + 2) / (beyond * (b2 * (b2 + 5) + 3.75)))))
        scaled = xp.where(a > 5e7, isp / a, scaled)
        twice = 2 * xp.exp(v * v)
        negative = xp.where(v < -6.1, twice, twice - scaled)
        out = xp.where(v >= 0, scaled, xp.where(v < -26.7, np.inf, negative))
        out = xp.where(xp.isnan(v), v, out)
    return out.astype(x.dtype)


# Cephes' zeta.c: the Euler-Maclaurin coefficients (2k)! / B_2k
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
           -7.1661652561756670113e18)


def zeta(xp, x, q):
    """Hurwitz's zeta, sum over k >= 0 of (k + q)^-x, as Cephes' (and PyTorch's): the terms summed directly until
    the base passes 9 (at least nine of them), then the Euler-Maclaurin tail; inf at x = 1 and at q a non-positive
    integer, NaN for x below 1 and for a negative q with a non-integer x."""
    x64, q64 = xp.broadcast_arrays(_f64(xp.asarray(x)), _f64(xp.asarray(q)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        lowest = float(q64.min()) if q64.size else 9.0  # (on a GPU, a read back: zeta is not a step's op)
        direct = int(min(max(math.ceil(9 - lowest) + 1, 9), 1 << 20)) if math.isfinite(lowest) else 9
        s = q64 ** -x64
        a = q64.copy()
        b = xp.zeros_like(s)
        for i in range(direct):
            more = (a <= 9) | (i < 9)
            a = xp.where(more, a + 1, a)
            b = xp.where(more, a ** -x64, b)
            s = xp.where(more, s + b, s)
        w = a
        s = s + b * w / (x64 - 1) - 0.5 * b
        rising, k = xp.ones_like(s), 0.0
        for coefficient in _ZETA_A:
            rising = rising * (x64 + k)
            b = b / w
            s = s + rising * b / coefficient
            k += 1
            rising = rising * (x64 + k)
            b = b / w
            k += 1
        out = s
        integer_q = q64 == xp.floor(q64)
        out = xp.where((q64 <= 0) & ~integer_q & (x64 != xp.floor(x64)), np.nan, out)
        out = xp.where((q64 <= 0) & integer_q, np.inf, out)
        out = xp.where(x64 < 1, np.nan, out)
        out = xp.where(x64 == 1, np.inf, out)
        out = xp.where(xp.isnan(x64) | xp.isnan(q64), np.nan, out)
    return out
