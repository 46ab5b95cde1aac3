"""``engine.fft``: PyTorch's ``torch.fft``, the discrete Fourier transforms and their helpers, differentiable.

``fft``/``ifft`` (and ``fft2``, ``fftn``, their inverses) take real or complex tensors to complex ones; ``rfft`` (and
``rfft2``, ``rfftn``) a real signal to the half of its spectrum that is not redundant, ``irfft`` back to a real
signal; ``hfft``/``ihfft`` the pair for a signal whose spectrum is real (a Hermitian one). ``norm`` is "backward" (the
default: the inverse divides by n), "forward" (the forward does) or "ortho" (each by sqrt(n)); ``n`` or ``s`` cut or
pad the signal with zeros first. ``fftfreq``/``rfftfreq`` give each bin's frequency, ``fftshift``/``ifftshift`` move
the zero frequency to the middle and back. Integer and bool inputs are taken as the default float dtype, float32
as complex64, float64 as complex128, as PyTorch takes them; float16 is refused by name, as PyTorch's CPU refuses it.
The transforms run on NumPy's ``numpy.fft`` (pocketfft) on the CPU and CuPy's ``cupy.fft`` (cuFFT) on a GPU.
"""

from __future__ import annotations

import numpy as np

from . import creation
from . import dtypes as _dtypes
from .functions.spectral import FFT
from .tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "forward", "ortho")


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _signal(x, fn: str, real: bool = False) -> Tensor:
    """The input as the transform takes it: a Tensor of a float or complex dtype (integers and bools as the default
    float dtype); ``real``: a complex one refused, as PyTorch's rfft and ihfft refuse it."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    kind = x._data.dtype.kind
    if kind == "c" and real:
        raise RuntimeError(f"{fn} expects a real input tensor, but got {_dtypes.scalar_name(x._data.dtype)}")
    if kind in "biu":
        return x.to(_dtypes.get_default_dtype())
    if x._data.dtype == np.float16:
        raise RuntimeError("Unsupported dtype Half")
    return x


def _axis(x, dim) -> int:
    nd = x._data.ndim
    if nd == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}")
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    return int(dim) % nd


def _points(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"argument 'n' must be int, not {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return int(n)


def _shape_and_axes(x, s, dim):
    """PyTorch's reading of an n-dimensional transform's ``s`` and ``dim`` (its canonicalize_fft_shape_and_dim_args):
    both given, the same length; only ``s``, the last ``len(s)`` dimensions; neither, every dimension; -1 in ``s``
    the input's own length. (axes, sizes: a tuple, or None where ``s`` is)."""
    nd = x._data.ndim
    if dim is not None:
        dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        axes = tuple(_axis(x, d) for d in dims)
        if len(set(axes)) != len(axes):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if isinstance(s, (int, np.integer)) else tuple(s)
        if dim is None:
            if len(s) > nd:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
            axes = tuple(range(nd - len(s), nd))
        elif len(s) != len(axes):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        sizes = tuple(x._data.shape[a] if n == -1 else _points(n) for a, n in zip(axes, s))
        return axes, sizes
    if dim is None:
        if nd == 0:
            raise IndexError("Dimension specified as -1 but tensor has no dimensions")
        axes = tuple(range(nd))
    for a in axes:
        if x._data.shape[a] < 1:
            raise RuntimeError(f"Invalid number of data points ({x._data.shape[a]}) specified")
    return axes, None


def _one(x, n, dim):
    """A one-dimensional transform's axes and sizes."""
    axis = _axis(x, dim)
    if n is None:
        if x._data.shape[axis] < 1:
            raise RuntimeError(f"Invalid number of data points ({x._data.shape[axis]}) specified")
        return (axis,), None
    return (axis,), (_points(n),)


def _c2c(x, axes, sizes, norm, forward):
    return FFT.apply(x, kind="c2c", sizes=sizes, axes=axes, norm=_norm(norm), forward=forward)


def _c2r_sizes(x, axes, sizes):
    """The real output's sizes of a half spectrum's inverse: the last axis 2 (m - 1) unless given."""
    if sizes is None:
        sizes = tuple(x._data.shape[a] for a in axes[:-1]) + (2 * (x._data.shape[axes[-1]] - 1),)
    if sizes[-1] < 1:
        raise RuntimeError(f"Invalid number of data points ({sizes[-1]}) specified")
    return sizes


def _c2r(x, axes, sizes, norm):
    return FFT.apply(x, kind="c2r", sizes=_c2r_sizes(x, axes, sizes), axes=axes, norm=_norm(norm))


# ---------------------------------------------------------------------------------------------- complex to complex

def fft(input, n=None, dim=-1, norm=None):  # noqa: A002 - PyTorch's names
    """The discrete Fourier transform along ``dim`` (``n`` points: the signal cut or padded with zeros)."""
    x = _signal(input, "fft")
    return _c2c(x, *_one(x, n, dim), norm, True)


def ifft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The inverse of :func:`fft`."""
    x = _signal(input, "ifft")
    return _c2c(x, *_one(x, n, dim), norm, False)


def fftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The transform over ``dim`` (every dimension by default, the last ``len(s)`` with ``s``)."""
    x = _signal(input, "fftn")
    return _c2c(x, *_shape_and_axes(x, s, dim), norm, True)


def ifftn(input, s=None, dim=None, norm=None):  # noqa: A002
    x = _signal(input, "ifftn")
    return _c2c(x, *_shape_and_axes(x, s, dim), norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    return ifftn(input, s, dim, norm)


# ---------------------------------------------------------------------------------------------- real signals

def rfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The first ``n // 2 + 1`` frequencies of a real signal's transform (the others are their conjugates)."""
    x = _signal(input, "rfft", real=True)
    axes, sizes = _one(x, n, dim)
    return FFT.apply(x, kind="r2c", sizes=sizes, axes=axes, norm=_norm(norm))


def irfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The real signal of ``n`` points (by default ``2 (m - 1)``) whose :func:`rfft` is ``input``; the imaginary
    parts of the zero frequency (and of the Nyquist one, for an even ``n``) do not count."""
    x = _signal(input, "irfft")
    return _c2r(x, *_one(x, n, dim), norm)


def rfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """:func:`fftn` of a real signal, halved along the last of ``dim``."""
    x = _signal(input, "rfftn", real=True)
    axes, sizes = _shape_and_axes(x, s, dim)
    return FFT.apply(x, kind="r2c", sizes=sizes, axes=axes, norm=_norm(norm))


def irfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    x = _signal(input, "irfftn")
    return _c2r(x, *_shape_and_axes(x, s, dim), norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    return irfftn(input, s, dim, norm)


# ---------------------------------------------------------------------------------------------- Hermitian signals

def hfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The (real) transform of a signal whose first half is ``input`` and second half its mirror image's
    conjugate: :func:`irfft` of the conjugate, with the dual normalization."""
    x = _signal(input, "hfft")
    return _c2r(x.conj(), *_one(x, n, dim), _dual(norm))


def ihfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The inverse of :func:`hfft`: the conjugate of :func:`rfft`, with the dual normalization."""
    x = _signal(input, "ihfft", real=True)
    axes, sizes = _one(x, n, dim)
    return FFT.apply(x, kind="r2c", sizes=sizes, axes=axes, norm=_dual(norm)).conj()


def hfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    x = _signal(input, "hfftn")
    return _c2r(x.conj(), *_shape_and_axes(x, s, dim), _dual(norm))


def ihfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The inverse of :func:`hfftn`: as PyTorch's, the conjugate half spectrum along the last of ``dim``, then the
    inverse transform along the others."""
    x = _signal(input, "ihfftn", real=True)
    axes, sizes = _shape_and_axes(x, s, dim)
    half = FFT.apply(x, kind="r2c", sizes=sizes[-1:] if sizes else None, axes=axes[-1:], norm=_dual(norm))
    half = half.conj_physical()
    if len(axes) == 1:
        return half
    return FFT.apply(half, kind="c2c", sizes=sizes[:-1] if sizes else None, axes=axes[:-1], norm=_norm(norm),
                     forward=False)


def hfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    return ihfftn(input, s, dim, norm)


def _dual(norm):
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[_norm(norm)]


# ---------------------------------------------------------------------------------------------- helpers

def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The frequency of each bin of an ``n``-point transform, for samples ``d`` apart: ``[0, 1, ..., -2, -1] / (d
    n)``, the non-negative ones first."""
    n = _points(n) if n != 0 else 0
    k = np.concatenate((np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0))) if n else np.zeros(0)
    return _frequencies(k, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The frequencies of :func:`rfft`'s bins: ``[0, 1, ..., n // 2] / (d n)``."""
    n = _points(n) if n != 0 else 0
    return _frequencies(np.arange(0, n // 2 + 1), n, d, dtype, device, requires_grad)


def _frequencies(k, n, d, dtype, device, requires_grad):
    values = k / (d * n) if n else k.astype(np.float64)
    return creation.tensor(values, dtype=dtype or _dtypes.get_default_dtype(), device=device,
                           requires_grad=requires_grad)


def fftshift(input, dim=None):  # noqa: A002
    """The zero frequency moved to the middle of ``dim`` (every dimension by default): a roll by half."""
    axes = tuple(range(input.dim())) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return input.roll(tuple(input.shape[a] // 2 for a in axes), axes)


def ifftshift(input, dim=None):  # noqa: A002
    """The inverse of :func:`fftshift`."""
    axes = tuple(range(input.dim())) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return input.roll(tuple(-(input.shape[a] // 2) for a in axes), axes)



# ---------------------------------------------------------------------------------------------- short-time transforms

def _type_text(t) -> str:
    """How PyTorch names a tensor in stft's and istft's messages: ``torch.FloatTensor[2, 9]``."""
    return f"torch.{t.dtype.legacy_name}[{', '.join(map(str, t.shape))}]"


def _window(window, win_length, n_fft, like, fn, what):
    """The window, padded with zeros on both sides to ``n_fft`` (centred, as PyTorch pads it); a rectangular one,
    with PyTorch's warning, where none is given."""
    if window is None:
        import warnings

        warnings.warn(f"A window was not provided. A rectangular window will be applied,{what}To suppress this "
                      f"warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
                      f"device=<device>)`.", UserWarning, stacklevel=3)
        window = creation.ones(win_length, dtype=like.real.dtype if like.is_complex() else like.dtype,
                               device=like.device)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{fn} : expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or n_fft - win_length - left:
        window = creation.cat([window.new_zeros(left), window, window.new_zeros(n_fft - win_length - left)])
    return window


def _window_text(window) -> str:
    if window is None:
        return "None"
    return f"torch.{window.dtype.legacy_name}{{[{', '.join(map(str, window.shape))}]}}"


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",  # noqa: A002
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform of a signal ``(L,)`` or a batch ``(B, L)``: ``(freq, frames)`` (``(B, freq,
    frames)``), frame ``m`` the transform of ``window * input[m hop : m hop + n_fft]`` (``center``: the signal first
    padded by ``n_fft // 2`` at each end, reflected); ``onesided`` (the default for real signals) keeps the first
    ``n_fft // 2 + 1`` frequencies. As PyTorch's, from its ops: differentiable in the signal and the window."""
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    complex_ = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None and not complex_:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = _signal(input, "stft")
    one = x.dim() == 1
    if center and x.dim():
        pad = n_fft // 2
        x = _pad_signal(x, pad, pad_mode)
    window_text = _window_text(window)
    fn = (f"stft({_type_text(x)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={window_text}, "
          f"normalized={int(bool(normalized))}, onesided={'None' if onesided is None else int(bool(onesided))}, "
          f"return_complex={int(bool(return_complex)) if return_complex is not None else 'None'}, "
          f"align_to_window=None)")
    if x.dim() not in (1, 2):
        raise RuntimeError(f"{fn} : expected a 1D or 2D tensor")
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{fn} : expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{fn} : expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{fn} : expected 0 < win_length <= n_fft, but got win_length={win}")
    if onesided is None:
        onesided = not complex_
    elif onesided and complex_:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    w = _window(window, win, n_fft, x, fn, "which is known to cause spectral leakage. Other windows such as "
                "torch.hann_window or torch.hamming_window are recommended to reduce spectral leakage.")
    frames = (x if not one else x.unsqueeze(0)).unfold(-1, n_fft, hop) * w  # (B, frames, n_fft)
    spec = rfft(frames, dim=-1) if onesided else fft(frames, dim=-1)
    if normalized:
        spec = spec * (n_fft ** -0.5)
    spec = spec.transpose(-1, -2)
    if one:
        spec = spec.squeeze(0)
    if return_complex is False:
        import warnings

        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
        return _view_as_real(spec)
    return spec


def _pad_signal(x, pad, mode):
    from .nn import functional as F

    rows = x.reshape(1, -1, x.shape[-1])  # (PyTorch's view for its pad: (1, everything else, L))
    return F.pad(rows, (pad, pad), mode=mode).reshape(*x.shape[:-1], x.shape[-1] + 2 * pad)


def _view_as_real(t):
    from .compat import view_as_real

    return view_as_real(t)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,  # noqa: A002
          onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft`: each frame's inverse transform, windowed and added where frames overlap, divided
    by the overlapping windows' sum of squares (which must be nonzero everywhere: PyTorch's NOLA check), the
    ``center`` padding cut off (to ``length`` where given)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    window_text = _window_text(window)
    fn = (f"istft(CPU{input.dtype.legacy_name[:-6]}Type[{', '.join(map(str, input.shape))}], n_fft={n_fft}, "
          f"hop_length={hop}, win_length={win}, window={window_text}, center={int(bool(center))}, "
          f"normalized={int(bool(normalized))}, onesided={'None' if onesided is None else int(bool(onesided))}, "
          f"length={length}, return_complex={int(bool(return_complex))})")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{fn}: expected a tensor with a 2 or 3 dimensions of complex dtype, but got "
                           f"{input.dim()}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{fn}: expected 0 < win_length <= n_fft, but got win_length={win}")
    if hop <= 0:
        raise RuntimeError(f"{fn}: expected hop_length > 0, but got hop_length={hop}")
    if onesided is None:
        onesided = input.shape[-2] != n_fft
    if onesided and return_complex:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    expected = n_fft // 2 + 1 if onesided else n_fft
    if input.shape[-2] != expected:
        raise RuntimeError(f"{fn}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {input.shape[-2]}" if onesided else
                           f"{fn}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {input.shape[-2]}")
    w = _window(window, win, n_fft, input, fn, "Please provide the same window used by stft to make the inversion "
                "lossless.")
    one = input.dim() == 2
    spec = (input.unsqueeze(0) if one else input).transpose(-1, -2)  # (B, frames, freq)
    if normalized:
        spec = spec * (n_fft ** 0.5)
    if return_complex:
        frames = ifft(spec, n=n_fft, dim=-1)
    else:  # (as PyTorch's: a real signal from the first n_fft // 2 + 1 bins, a two-sided input's taken as Hermitian)
        frames = irfft(spec if onesided else spec[..., :n_fft // 2 + 1], n=n_fft, dim=-1)
    frames = frames * w
    count = frames.shape[-2]
    total = n_fft + hop * (count - 1)
    y = _overlap_add(frames, hop, total)
    envelope = _overlap_add((w * w).expand(1, count, n_fft), hop, total)[0]  # (a learned window: its gradient too)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y, envelope = y[..., start:end], envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(f"{fn} window overlap add min: 1")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        import warnings

        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        y = creation.cat([y, y.new_zeros(*y.shape[:-1], length - y.shape[-1])], dim=-1)
    return y.squeeze(0) if one else y


def _overlap_add(frames, hop, total):
    """``(B, frames, n)`` frames added into ``(B, total)`` signals, frame m starting at ``m * hop`` (a fold, as
    PyTorch's istft folds); complex frames part by part."""
    from .nn import functional as F

    if frames.is_complex():
        from .compat import complex as _complex

        return _complex(_overlap_add(frames.real, hop, total), _overlap_add(frames.imag, hop, total))
    n = frames.shape[-1]
    folded = F.fold(frames.transpose(-1, -2), output_size=(1, total), kernel_size=(1, n), stride=(1, hop))
    return folded.reshape(frames.shape[0], total)


def _tensor_stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
                 normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform (:func:`stft`)."""
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex,
                align_to_window)


def _tensor_istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
                  onesided=None, length=None, return_complex=False):
    """The inverse short-time Fourier transform (:func:`istft`)."""
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)


Tensor.stft = _tensor_stft
Tensor.istft = _tensor_istft
