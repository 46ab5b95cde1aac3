"""The discrete Fourier transforms (``engine.fft`` is their door): one node per transform, as PyTorch's
``FftC2CBackward0`` (complex to complex), ``FftR2CBackward0`` (a real signal's half spectrum) and
``FftC2RBackward0`` (a half spectrum back to a real signal), on NumPy's and CuPy's ``fft`` modules.

Each transform is linear, so its gradient is its adjoint applied to the output's gradient (PyTorch's
``fft_*_backward``): the inverse transform with the dual normalization ("backward" and "forward" swap: the adjoint of
the unnormalized DFT is n times its inverse), zeros where the forward trimmed the input and the input's length where it
padded. A half spectrum's missing half is zeros going back (r2c); the half spectrum of a real signal's gradient counts
each frequency but the first and the Nyquist twice (c2r: each stands for itself and its mirror image).
"""

from __future__ import annotations

from ..autograd.function import Function
from ..backend import xp_of

__all__ = ["FFT", "DUAL_NORM", "resized"]

# the normalization of a transform's adjoint
DUAL_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_NAMES = {"c2c": "FftC2CBackward0", "r2c": "FftR2CBackward0", "c2r": "FftC2RBackward0"}


def resized(g, shape, axes):
    """``g`` cut or padded with zeros at the end of each of ``axes`` to ``shape``'s length there: the adjoint of
    the transform's own padding or cutting of its input to the signal's size."""
    xp = xp_of(g)
    for axis in axes:
        have, want = g.shape[axis], shape[axis]
        if have > want:
            g = g[(slice(None),) * axis + (slice(0, want),)]
        elif have < want:
            zeros = list(g.shape)
            zeros[axis] = want - have
            g = xp.concatenate((g, xp.zeros(tuple(zeros), dtype=g.dtype)), axis=axis)
    return g


class FFT(Function):
    """``kind`` "c2c" (``forward``: the DFT, else its inverse), "r2c" (the half spectrum of a real signal) or "c2r"
    (a real signal from its half spectrum) over ``axes``, each signal cut or padded to ``sizes`` (None: as it is;
    for "c2r" the output's sizes), normalized by ``norm`` ("backward": the inverse by 1/n, "forward": the forward
    by 1/n, "ortho": both by 1/sqrt(n))."""

    raw = True
    complex_ok = True

    def backward_name(self):  # (PyTorch's transform of a real signal along one axis is an r2c of both halves)
        return _NAMES["r2c" if self.kind == "c2c" and self.real_input and len(self.axes) == 1 else self.kind]

    @staticmethod
    def forward(ctx, x, kind, sizes, axes, norm, forward=True):
        xp = xp_of(x)
        ctx.kind, ctx.axes, ctx.norm, ctx.forward = kind, axes, norm, forward
        ctx.in_shape, ctx.real_input = x.shape, x.dtype.kind != "c"
        ctx.saved = None
        if kind == "c2c":
            out = (xp.fft.fftn if forward else xp.fft.ifftn)(x, s=sizes, axes=axes, norm=norm)
        elif kind == "r2c":
            out = xp.fft.rfftn(x, s=sizes, axes=axes, norm=norm)
        else:
            out = xp.fft.irfftn(x, s=sizes, axes=axes, norm=norm)
        ctx.out_shape = out.shape
        ctx.last = sizes[-1] if sizes is not None else None  # (r2c: the full length of the last axis)
        return out

    @staticmethod
    def backward(ctx, gy):
        xp = xp_of(gy)
        axes, norm = ctx.axes, DUAL_NORM[ctx.norm]
        if ctx.kind == "c2c":
            g = (xp.fft.ifftn if ctx.forward else xp.fft.fftn)(gy, axes=axes, norm=norm)
        elif ctx.kind == "r2c":  # the missing half of the spectrum is zeros; the inverse over all axes, its real part
            last = axes[-1]
            full = list(gy.shape)
            full[last] = ctx.last if ctx.last is not None else ctx.in_shape[last]
            g = xp.fft.ifftn(resized(gy, full, (last,)), axes=axes, norm=norm).real
        else:  # c2r: the half spectrum of the gradient, each frequency that stands for two counted twice
            g = xp.fft.rfftn(gy, axes=axes, norm=norm)
            last, n = axes[-1], gy.shape[axes[-1]]
            doubled = n - g.shape[last]  # (n - 1 - n // 2: not the first, nor the Nyquist frequency of an even n)
            if doubled > 0:
                index = (slice(None),) * last + (slice(1, 1 + doubled),)
                g[index] *= 2
        return resized(g, ctx.in_shape, axes)
