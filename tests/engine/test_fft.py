"""``engine.fft``, as PyTorch 2.13's ``torch.fft``: the transforms' values against NumPy's ``numpy.fft`` and torch's,
their dtypes and node names torch's, their gradients (each transform's adjoint: the inverse with the dual
normalization, a half spectrum's missing half zeros going back, each doubled frequency counted twice) against central
differences of the engine's own forward and against torch, second derivatives against torch; the refusals in torch's
words (a table printed by torch 2.13.0, held to the torch installed where there is one); the same numbers on a GPU
(the CuPy stand-in's cupy.fft, held to CuPy 14.2's parameters)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from tests.engine.helpers import table_tests

pytestmark = pytest.mark.usefixtures("graph_core")  # compiled and Python recording and walk (conftest.py)


def _env(lib):
    return {"engine": lib, "x": lib.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])}


CASES = [
    ('engine.fft.fft(x)',
     ((2, 3),
      'complex64',
      [(3+0j),
       (-1.5+0.8660253882408142j),
       (-1.5-0.8660253882408142j),
       (12+0j),
       (-1.5+0.8660253882408142j),
       (-1.5-0.8660253882408142j)])),
    ('engine.fft.fft(x).dtype == engine.complex64', ((), 'bool', [True])),
    ('engine.fft.fft(x.double()).dtype == engine.complex128', ((), 'bool', [True])),
    ('engine.fft.fft(engine.arange(4))', ((4,), 'complex64', [(6+0j), (-2+2j), (-2+0j), (-2-2j)])),
    ('engine.fft.fft(engine.tensor([True, False]))', ((2,), 'complex64', [(1+0j), (1+0j)])),
    ('engine.fft.fft(x, n=4)',
     ((2, 4), 'complex64', [(3+0j), (-2-1j), (1+0j), (-2+1j), (12+0j), (-2-4j), (4+0j), (-2+4j)])),
    ("engine.fft.fft(x, dim=0, norm='ortho')",
     ((2, 3),
      'complex64',
      [(2.1213202476501465+0j),
       (3.535533905029297+0j),
       (4.949747562408447+0j),
       (-2.1213202476501465+0j),
       (-2.1213202476501465+0j),
       (-2.1213202476501465+0j)])),
    ('engine.fft.ifft(engine.fft.fft(x))', ((2, 3), 'complex64', [0j, (1+0j), (2+0j), (3+0j), (4+0j), (5+0j)])),
    ('engine.fft.fft2(x)',
     ((2, 3), 'complex64', [(15+0j), (-3+1.7320507764816284j), (-3-1.7320507764816284j), (-9+0j), 0j, 0j])),
    ('engine.fft.fftn(x, s=(2,))', ((2, 2), 'complex64', [(1+0j), (-1+0j), (7+0j), (-1+0j)])),
    ('engine.fft.rfft(x)',
     ((2, 2), 'complex64', [(3+0j), (-1.5+0.8660253882408142j), (12+0j), (-1.5+0.8660253882408142j)])),
    ("engine.fft.rfft(x, norm='forward')",
     ((2, 2), 'complex64', [(1+0j), (-0.5+0.28867512941360474j), (4+0j), (-0.5+0.28867512941360474j)])),
    ('engine.fft.irfft(engine.fft.rfft(x), n=3)', ((2, 3), 'float32', [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])),
    ('engine.fft.irfft(engine.tensor([1 + 0j, 2 - 1j, 0.5j]))', ((4,), 'float32', [1.25, 0.75, -0.75, -0.25])),
    ('engine.fft.irfftn(engine.fft.rfftn(x), s=(2, 3))', ((2, 3), 'float32', [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])),
    ('engine.fft.hfft(engine.tensor([1 + 0j, 2 - 1j, 0.5j]))', ((4,), 'float32', [5.0, -1.0, -3.0, 3.0])),
    ('engine.fft.ihfft(x[0])', ((2,), 'complex64', [(1-0j), (-0.5-0.28867512941360474j)])),
    ('engine.fft.hfft2(x * 1j).shape == (2, 4)', ((), 'bool', [True])),
    ('engine.fft.ihfft2(x).shape == (2, 2)', ((), 'bool', [True])),
    ('engine.fft.fftfreq(5)',
     ((5,), 'float32', [0.0, 0.20000000298023224, 0.4000000059604645, -0.4000000059604645, -0.20000000298023224])),
    ('engine.fft.fftfreq(4, d=0.5)', ((4,), 'float32', [0.0, 0.5, -1.0, -0.5])),
    ('engine.fft.fftfreq(4, dtype=engine.float64)', ((4,), 'float64', [0.0, 0.25, -0.5, -0.25])),
    ('engine.fft.rfftfreq(6, 0.5)', ((4,), 'float32', [0.0, 0.3333333432674408, 0.6666666865348816, 1.0])),
    ('engine.fft.rfftfreq(1)', ((1,), 'float32', [0.0])),
    ('engine.fft.fftshift(engine.arange(5))', ((5,), 'int64', [3, 4, 0, 1, 2])),
    ('engine.fft.ifftshift(engine.arange(6).reshape(2, 3))', ((2, 3), 'int64', [4, 5, 3, 1, 2, 0])),
    ('engine.fft.fftshift(engine.arange(6).reshape(2, 3), dim=1)', ((2, 3), 'int64', [2, 0, 1, 5, 3, 4])),
    ('engine.fft.fft(engine.tensor(1.0))', ('IndexError', 'Dimension specified as -1 but tensor has no dimensions')),
    ('engine.fft.fft(x, n=0)', ('RuntimeError', 'Invalid number of data points (0) specified')),
    ('engine.fft.fft(x, dim=2)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 2)')),
    ("engine.fft.fft(x, norm='xyz')", ('RuntimeError', 'Invalid normalization mode: "xyz"')),
    ('engine.fft.rfft(x * 1j)', ('RuntimeError', 'rfft expects a real input tensor, but got ComplexFloat')),
    ('engine.fft.ihfft(x * 1j)', ('RuntimeError', 'ihfft expects a real input tensor, but got ComplexFloat')),
    ('engine.fft.fftn(x, dim=(0, 0))', ('RuntimeError', 'FFT dims must be unique')),
    ('engine.fft.fft(x.half())', ('RuntimeError', 'Unsupported dtype Half')),
    ('engine.fft.fftn(x, s=(2, 3, 4))',
     ('RuntimeError', 'Got shape with 3 values but input tensor only has 2 dimensions.')),
    ('engine.fft.fftn(x, s=(2, 3), dim=(0,))',
     ('RuntimeError', 'When given, dim and shape arguments must have the same length')),
    ('engine.fft.irfft(x * 1j, n=0)', ('RuntimeError', 'Invalid number of data points (0) specified')),
    ('engine.fft.rfft(x, n=-1)', ('RuntimeError', 'Invalid number of data points (-1) specified')),
    ('engine.fft.fft(engine.zeros(0))', ('RuntimeError', 'Invalid number of data points (0) specified')),
    ('engine.fft.fft2(engine.ones(3))',
     ('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got -2)')),
    ('engine.fft.fft([1.0, 2.0])',
     ('TypeError', "fft_fft(): argument 'input' (position 1) must be Tensor, not list")),

]

test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env)

_RNG = np.random.default_rng(0)
_LEAVES = {"z": _RNG.normal(size=(4, 6)) + 1j * _RNG.normal(size=(4, 6)), "x": _RNG.normal(size=(4, 6)),
           "y": _RNG.normal(size=(3, 4, 5))}


def _transforms(norm):
    n = f", norm={norm!r}" if norm else ""
    return [f"fft.fft(z{n})", f"fft.fft(x{n})", f"fft.ifft(z{n})", f"fft.fft(z, n=4{n})", f"fft.fft(z, n=9, dim=0{n})",
            f"fft.fft2(z{n})", f"fft.ifft2(x, s=(3, 8){n})", f"fft.fftn(y{n})",
            f"fft.ifftn(y, s=(2, 7), dim=(0, 2){n})",
            f"fft.rfft(x{n})", f"fft.rfft(x, n=5{n})", f"fft.rfft(x, n=8, dim=0{n})", f"fft.irfft(z{n})",
            f"fft.irfft(z, n=7{n})", f"fft.irfft(z, n=12{n})", f"fft.irfft(z, n=4, dim=0{n})", f"fft.irfft(x{n})",
            f"fft.rfft2(x{n})", f"fft.irfft2(z{n})", f"fft.rfftn(y{n})", f"fft.irfftn(z, s=(5, 9){n})",
            f"fft.hfft(z{n})", f"fft.hfft(z, n=7{n})", f"fft.ihfft(x{n})", f"fft.ihfft(x, n=9{n})",
            f"fft.hfft2(z{n})", f"fft.ihfft2(x{n})", f"fft.hfftn(z, s=(3, 6){n})", f"fft.ihfftn(y{n})"]


TRANSFORMS = [*_transforms(None), *_transforms("forward"), *_transforms("ortho"), "fft.fftshift(z)",
              "fft.ifftshift(x, dim=1)", "fft.fftshift(fft.fft(x), dim=(0, 1))"]


def _run(lib, expr, arrays=_LEAVES):
    """The transform's value, each leaf's gradient of a fixed real loss of it, and its node's name."""
    env = {"fft": lib.fft, **{k: lib.tensor(a, requires_grad=True) for k, a in arrays.items()}}
    out = eval(expr, env)  # noqa: S307 - the test's own expressions
    shape = tuple(out.shape)
    c = np.random.default_rng(1).normal(size=shape)
    if out.is_complex():
        c = c + 1j * np.random.default_rng(2).normal(size=shape)
    loss = (out * lib.tensor(c)).real.sum() if out.is_complex() else (out * lib.tensor(c)).sum()
    loss.backward()
    return _host(out), {k: None if env[k].grad is None else _host(env[k].grad) for k in arrays}, out.grad_fn.name()


def _host(t):
    return t.detach().cpu().resolve_conj().numpy()


_NUMPY = {"fft.fft(z)": lambda a: np.fft.fft(a["z"]), "fft.rfft(x, n=5)": lambda a: np.fft.rfft(a["x"], n=5),
          "fft.irfft(z, n=7)": lambda a: np.fft.irfft(a["z"], n=7),
          "fft.ifftn(y, s=(2, 7), dim=(0, 2))": lambda a: np.fft.ifftn(a["y"], s=(2, 7), axes=(0, 2)),
          "fft.hfft(z, n=7)": lambda a: np.fft.hfft(a["z"], n=7), "fft.ihfft(x)": lambda a: np.fft.ihfft(a["x"]),
          "fft.irfftn(z, s=(5, 9), norm='ortho')": lambda a: np.fft.irfftn(a["z"], s=(5, 9), axes=(0, 1), norm="ortho"),
          "fft.rfft2(x, norm='forward')": lambda a: np.fft.rfft2(a["x"], norm="forward"),
          "fft.fftshift(z)": lambda a: np.fft.fftshift(a["z"])}


@pytest.mark.parametrize("expr", sorted(_NUMPY))
def test_transforms_are_numpys(expr):
    value = _run(engine, expr)[0]
    expected = _NUMPY[expr](_LEAVES)
    assert value.dtype == expected.dtype and value.shape == expected.shape
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)


def _finite_differences(expr, name, eps=1e-6):
    def loss(arrays):
        with engine.no_grad():
            env = {"fft": engine.fft, **{k: engine.tensor(a) for k, a in arrays.items()}}
            out = eval(expr, env)  # noqa: S307
            c = np.random.default_rng(1).normal(size=tuple(out.shape))
            if out.is_complex():
                c = c + 1j * np.random.default_rng(2).normal(size=tuple(out.shape))
            return float((out * engine.tensor(c)).real.sum() if out.is_complex() else (out * engine.tensor(c)).sum())

    base = _LEAVES[name]
    grad = np.zeros(base.shape, dtype=base.dtype)
    for k in range(base.size):
        for step in ((1.0, 1j) if base.dtype.kind == "c" else (1.0,)):
            values = []
            for sign in (1, -1):
                a = base.copy()
                a.reshape(-1)[k] += sign * eps * step
                values.append(loss({**_LEAVES, name: a}))
            grad.reshape(-1)[k] += step * (values[0] - values[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("expr", [*_transforms(None), "fft.fftshift(fft.fft(x), dim=(0, 1))",
                                  "fft.irfft(z, n=7, norm='ortho')", "fft.rfftn(y, norm='forward')"])
def test_transform_gradients_are_finite_differences_of_the_forward(expr):
    _, grads, _ = _run(engine, expr)
    assert any(g is not None for g in grads.values())
    for name, g in grads.items():
        if g is not None:
            assert g.dtype == _LEAVES[name].dtype, name
            np.testing.assert_allclose(g, _finite_differences(expr, name), rtol=1e-6, atol=1e-6, err_msg=name)


@pytest.mark.torch
@pytest.mark.parametrize("expr", TRANSFORMS)
def test_transforms_values_gradients_and_nodes_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    (value, grads, name), (t_value, t_grads, t_name) = _run(engine, expr), _run(torch, expr)
    assert value.dtype == t_value.dtype and value.shape == t_value.shape and name == t_name
    np.testing.assert_allclose(value, t_value, rtol=1e-10, atol=1e-10)
    for leaf in _LEAVES:
        assert (grads[leaf] is None) == (t_grads[leaf] is None), leaf
        if grads[leaf] is not None:
            assert grads[leaf].dtype == t_grads[leaf].dtype, leaf
            np.testing.assert_allclose(grads[leaf], t_grads[leaf], rtol=1e-9, atol=1e-10, err_msg=leaf)


@pytest.mark.torch
@pytest.mark.parametrize("expr", ["fft.fft(z)", "fft.rfft(x, n=9)", "fft.irfft(z, norm='ortho')",
                                  "fft.rfftn(y)", "fft.hfft(z, n=5)"])
def test_single_precision_transforms_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    single = {k: a.astype(np.complex64 if a.dtype.kind == "c" else np.float32) for k, a in _LEAVES.items()}
    (value, grads, _), (t_value, t_grads, _) = _run(engine, expr, single), _run(torch, expr, single)
    assert value.dtype == t_value.dtype
    np.testing.assert_allclose(value, t_value, rtol=1e-4, atol=1e-5)
    for leaf in single:
        if grads[leaf] is not None:
            assert grads[leaf].dtype == single[leaf].dtype == t_grads[leaf].dtype
            np.testing.assert_allclose(grads[leaf], t_grads[leaf], rtol=1e-4, atol=1e-4, err_msg=leaf)


SECOND = ["fft.fft(z * z).abs().sum()", "fft.fft(x.sin(), n=9).abs().pow(2).sum()",
          "fft.rfft(x * x, norm='ortho').abs().sum()", "fft.irfft(z * z, n=7).pow(2).sum()",
          "fft.irfft(z.exp(), n=12, dim=0).sin().sum()", "fft.fft2(z * x).real.pow(2).sum()",
          "fft.ihfft(x.exp()).abs().sum()", "fft.hfft(z * z, n=5).pow(2).sum()",
          "fft.rfftn(x.tanh(), s=(3, 8)).abs().sum()", "fft.ihfftn(x * x).imag.pow(2).sum()",
          "fft.ifftn(z * z, s=(5, 5), norm='forward').abs().sum()"]


@pytest.mark.torch
@pytest.mark.parametrize("expr", SECOND)
def test_second_derivatives_through_transforms_are_pytorchs(expr):
    torch = pytest.importorskip("torch")

    def run(lib):
        leaves = {k: lib.tensor(_LEAVES[k], requires_grad=True) for k in "zx"}
        loss = eval(expr, {"fft": lib.fft, **leaves})  # noqa: S307
        grads = lib.autograd.grad(loss, list(leaves.values()), create_graph=True, allow_unused=True)
        sum((g.abs() ** 2).sum() for g in grads if g is not None).backward()
        return [None if t.grad is None else t.grad.detach().numpy() for t in leaves.values()]

    for got, theirs in zip(run(engine), run(torch), strict=True):
        assert (got is None) == (theirs is None)
        if got is not None:
            np.testing.assert_allclose(got, theirs, rtol=1e-8, atol=1e-9)


def test_parsevals_theorem_and_the_round_trips():
    """Energy is kept by the orthonormal transform; each inverse undoes its transform (an even and an odd length)."""
    x = engine.tensor(_LEAVES["y"])
    z = engine.tensor(_LEAVES["z"])
    assert np.isclose(float(engine.fft.fftn(x, norm="ortho").abs().pow(2).sum()), float(x.pow(2).sum()), rtol=1e-12)
    np.testing.assert_allclose(engine.fft.ifft(engine.fft.fft(z)).numpy(), z.numpy(), atol=1e-12)
    for n in (5, 6):
        signal = engine.tensor(_LEAVES["x"][:, :n])
        np.testing.assert_allclose(engine.fft.irfft(engine.fft.rfft(signal), n=n).numpy(), signal.numpy(), atol=1e-12)
        np.testing.assert_allclose(engine.fft.hfft(engine.fft.ihfft(signal), n=n).numpy(), signal.numpy(), atol=1e-12)


def test_a_spectral_filter_learns_by_gradient_descent():
    """The filter whose product with a signal's spectrum gives a target: found by descent through rfft and irfft."""
    rng = np.random.default_rng(5)
    signal = engine.tensor(rng.normal(size=(16, 64)))
    true = np.exp(-np.arange(33) / 6.0)
    target = engine.fft.irfft(engine.fft.rfft(signal) * engine.tensor(true), n=64)
    w = engine.zeros(33, dtype=engine.float64, requires_grad=True)
    opt = engine.optim.Adam([w], lr=0.05)
    for _ in range(400):
        opt.zero_grad()
        loss = (engine.fft.irfft(engine.fft.rfft(signal) * w, n=64) - target).pow(2).mean()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), true, atol=2e-3)


@pytest.mark.parametrize("expr", ["fft.fft(z)", "fft.rfft(x, n=5, norm='ortho')", "fft.irfft(z, n=7)",
                                  "fft.fftn(y)", "fft.hfft(z)", "fft.ihfftn(y)", "fft.fftshift(z)"])
def test_transforms_on_a_gpu_are_the_cpus(expr, device):
    def run(dev):
        env = {"fft": engine.fft, **{k: engine.tensor(a, requires_grad=True, device=dev) for k, a in _LEAVES.items()}}
        out = eval(expr, env)  # noqa: S307
        out.abs().sum().backward() if out.is_complex() else out.pow(2).sum().backward()
        return [out.detach().cpu().numpy()] + [None if env[k].grad is None else env[k].grad.cpu().numpy()
                                               for k in _LEAVES]

    for a, b in zip(run(device), run("cpu"), strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ the short-time transform and its inverse


def _stft_env(lib):
    return {"engine": lib, "s": lib.arange(20.0)}


STFT_CASES = [
    ('engine.stft(s, 8)',
     ('RuntimeError',
      'stft requires the return_complex parameter be given for real inputs, and will further require that '
      'return_complex=True in a future PyTorch release.')),
    ('engine.stft(s, 8, window=engine.ones(8), return_complex=True).shape == (5, 11)', ((), 'bool', [True])),
    ('engine.stft(s, 8, window=engine.ones(8), center=False, return_complex=True).shape == (5, 7)',
     ((), 'bool', [True])),
    ("engine.stft(s, 8, window=engine.ones(8), pad_mode='constant', return_complex=True)[0, :3]",
     ((3,), 'complex64', [(6+0j), (15+0j), (28+0j)])),
    ('engine.stft(s.double(), 8, hop_length=3, win_length=6, window=engine.hann_window(6, dtype=engine.float64), '
     'return_complex=True, center=False)[:, 0]',
     ((5,),
      'complex128',
      [(12.000000000000002+0j),
       (-8.242640687119286+2.0606601717798245j),
       (1.9999999999999982-1.5000000000000013j),
       (0.24264068711928566+0.060660171779820304j),
       (1.7763568394002505e-15+0j)])),
    ('engine.stft(s, 64, window=engine.ones(64), return_complex=True)',
     ('RuntimeError',
      'Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (32, 32) '
      'at dimension 2 of input [1, 1, 20]')),
    ('engine.stft(s, 8, window=engine.ones(5), return_complex=True)',
     ('RuntimeError',
      'stft(torch.FloatTensor[28], n_fft=8, hop_length=2, win_length=8, window=torch.FloatTensor{[5]}, '
      'normalized=0, onesided=None, return_complex=1, align_t')),
    ('engine.stft(s, 8, hop_length=0, window=engine.ones(8), return_complex=True)',
     ('RuntimeError',
      'stft(torch.FloatTensor[28], n_fft=8, hop_length=0, win_length=8, window=torch.FloatTensor{[8]}, '
      'normalized=0, onesided=None, return_complex=1, align_t')),
    ('engine.stft(s, 8, win_length=10, return_complex=True)',
     ('RuntimeError',
      'stft(torch.FloatTensor[28], n_fft=8, hop_length=2, win_length=10, window=None, normalized=0, onesided=None, '
      'return_complex=1, align_to_window=None) : ')),
    ('engine.stft(s * 1j, 8, onesided=True, window=engine.ones(8), return_complex=True)',
     ('RuntimeError', 'Cannot have onesided output if window or input is complex')),
    ('engine.stft(engine.zeros(2, 2, 5), 4, window=engine.ones(4), return_complex=True)',
     ('RuntimeError',
      'stft(torch.FloatTensor[2, 2, 9], n_fft=4, hop_length=1, win_length=4, window=torch.FloatTensor{[4]}, '
      'normalized=0, onesided=None, return_complex=1, al')),
    ('engine.istft(engine.stft(s, 8, window=engine.hann_window(8), return_complex=True).real, 8)',
     ('RuntimeError',
      'istft requires a complex-valued input tensor matching the output from stft with return_complex=True.')),
    ('engine.istft(engine.zeros(5, 11, dtype=engine.cfloat), 8, window=engine.zeros(8))',
     ('RuntimeError',
      'istft(CPUComplexFloatType[5, 11], n_fft=8, hop_length=2, win_length=8, window=torch.FloatTensor{[8]}, '
      'center=1, normalized=0, onesided=None, length=No')),
    ('engine.istft(engine.zeros(8, 11, dtype=engine.cfloat), 8, window=engine.ones(8)).shape == (20,)',
     ((), 'bool', [True])),
    ('engine.istft(engine.zeros(8, 11, dtype=engine.cfloat), 8, window=engine.ones(8), return_complex=True).dtype '
     '== engine.complex64',
     ((), 'bool', [True])),
    ('engine.istft(engine.zeros(5, 11, dtype=engine.cfloat), 8, window=engine.ones(8), return_complex=True)',
     ('RuntimeError', 'Cannot have onesided output if window or input is complex')),
    ('engine.istft(engine.stft(s, 8, window=engine.hann_window(8), return_complex=True), 8, '
     'window=engine.hann_window(8), length=18)',
     ((18,),
      'float32',
      [-2.3841858265427618e-08,
       1.0,
       2.0,
       2.999999523162842,
       4.0,
       4.999999523162842,
       6.0,
       6.999999046325684,
       8.0,
       9.0,
       10.0,
       10.999998092651367,
       12.0,
       13.0,
       14.0,
       14.999999046325684,
       16.0,
       16.999998092651367])),

]

test_stft_answers_as_pytorch, test_the_stft_table_is_pytorchs = table_tests(STFT_CASES, _stft_env)

_SIGNALS = {"x": _RNG.normal(size=(2, 40)), "w": np.hanning(12) + 0.1, "w16": np.hanning(16) + 0.05,
            "w8": np.hanning(8) + 0.1, "z": _RNG.normal(size=40) + 1j * _RNG.normal(size=40)}
STFTS = [
    "lib.stft(x, 16, window=w16, return_complex=True)",
    "lib.stft(x[0], 16, hop_length=5, win_length=12, window=w, return_complex=True)",
    "lib.stft(x, 16, hop_length=3, window=w16, center=False, return_complex=True, normalized=True)",
    "lib.stft(x, 16, window=w16, pad_mode='constant', return_complex=True, onesided=False)",
    "lib.stft(z, 8, window=w8, return_complex=True)",
    "x.stft(16, window=w16, return_complex=True, pad_mode='replicate')",
    "lib.istft(lib.stft(x, 16, window=w16, return_complex=True), 16, window=w16)",
    "lib.istft(lib.stft(x, 16, hop_length=5, win_length=12, window=w, return_complex=True), 16, hop_length=5, "
    "win_length=12, window=w, length=38)",
    "lib.istft(lib.stft(x[0], 16, window=w16, return_complex=True, normalized=True, center=False), 16, window=w16, "
    "normalized=True, center=False)",
    "lib.istft(lib.stft(x, 16, window=w16, return_complex=True, onesided=False), 16, window=w16, onesided=False, "
    "return_complex=True)",
    "lib.istft(lib.stft(x, 16, window=w16, return_complex=True) * 1.5, 16, window=w16, length=50)",
]


def _run_stft(lib, expr, device="cpu"):
    env = {"lib": lib, **{k: lib.tensor(a, requires_grad=True, device=device) for k, a in _SIGNALS.items()}}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The length of signal is shorter than the length parameter")
        out = eval(expr, env)  # noqa: S307
    shape = tuple(out.shape)
    c = np.random.default_rng(1).normal(size=shape)
    if out.is_complex():
        c = c + 1j * np.random.default_rng(2).normal(size=shape)
    c = lib.tensor(c, device=device)
    ((out * c).real.sum() if out.is_complex() else (out * c).sum()).backward()
    return [_host(out)] + [None if env[k].grad is None else _host(env[k].grad) for k in _SIGNALS]


@pytest.mark.torch
@pytest.mark.parametrize("expr", STFTS)
def test_stft_and_istft_values_and_gradients_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    for got, theirs in zip(_run_stft(engine, expr), _run_stft(torch, expr), strict=True):
        assert (got is None) == (theirs is None)
        if got is not None:
            assert got.shape == theirs.shape and got.dtype == theirs.dtype
            np.testing.assert_allclose(got, theirs, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("hop", "win", "center"), [(4, 16, True), (5, 12, True), (3, 16, False)])
def test_istft_undoes_stft(hop, win, center):
    x = engine.tensor(_SIGNALS["x"])
    window = engine.hann_window(win, dtype=engine.float64) + 0.1
    spec = engine.stft(x, 16, hop, win, window, center=center, return_complex=True)
    n = x.shape[-1] if center else 16 + hop * (spec.shape[-1] - 1)
    back = engine.istft(spec, 16, hop, win, window, center=center, length=n)
    np.testing.assert_allclose(back.numpy(), x.numpy()[..., :n], atol=1e-12)


def test_istft_past_the_signal_pads_with_zeros_and_warns_as_pytorch():
    spec = engine.stft(engine.arange(20.0), 8, window=engine.hann_window(8), return_complex=True)
    with pytest.warns(UserWarning, match="The length of signal is shorter than the length parameter"):
        back = engine.istft(spec, 8, window=engine.hann_window(8), length=30)
    # (past the signal, what its reflected padding gave back, then zeros past the frames)
    assert back.shape == (30,) and back[24:].tolist() == [0.0] * 6
    np.testing.assert_allclose(back[20:24].numpy(), [18.0, 17.0, 16.0, 15.0], atol=1e-5)
    np.testing.assert_allclose(back[:20].numpy(), np.arange(20.0), atol=1e-5)


def test_stft_without_a_window_warns_as_pytorch():
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will be applied"):
        spec = engine.stft(engine.arange(20.0), 8, return_complex=True)
    with pytest.warns(UserWarning, match="Please provide the same window used by stft"):
        engine.istft(spec, 8)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        assert engine.stft(engine.arange(20.0), 8, window=engine.ones(8), return_complex=False).shape == (5, 11, 2)


@pytest.mark.parametrize("expr", [STFTS[0], STFTS[6], STFTS[9]])
def test_stft_on_a_gpu_is_the_cpus(expr, device):
    for got, on_cpu in zip(_run_stft(engine, expr, device), _run_stft(engine, expr), strict=True):
        assert (got is None) == (on_cpu is None)
        if got is not None:
            np.testing.assert_allclose(got, on_cpu, rtol=1e-9, atol=1e-9)
