"""The engine's own CUDA kernels, compiled as CuPy would compile them on a GPU, here without one.

A fused kernel's body is C++ that only a CUDA compiler reads. The stand-in runs it as a NumPy expression, so a body
that NVRTC would refuse (an undeclared name, a cast C++ does not allow, a missing semicolon) passes every sim test
and raises at the first backward() on a GPU. Here:

1. the engine's kernel calls are recorded on the stand-in, from a tutorial training step on 'cuda' and from each
   fused backward called with contiguous and with strided arrays of float32 and float64;
2. for each call, the installed CuPy wheel's own code generation (``cupy._core._kernel``: its type decision, its
   argument layouts, its source template) writes the source CuPy would compile for that call;
3. the CUDA toolkit's ``nvcc`` compiles it to a cubin for the H100 (sm_90), with CuPy's headers and options
   (``cupy.cuda.compiler.compile_using_nvcc``; a GPU's CuPy compiles the same source with NVRTC).

Where no nvcc is installed the compile tests skip, visibly. This proves the sources compile; what they compute is
tested on the stand-in (test_fake_cupy_contract) and on a GPU (make gpu-check).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from tests import fake_cupy

pytestmark = pytest.mark.sim

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # CuPy warns at import on some machines (no CUDA path); not ours
    import cupy as real_cupy
    from cupy._core import _kernel as cupy_kernel
    from cupy._core import _scalar as cupy_scalar
    from cupy._core import core as cupy_core
    from cupy.cuda import compiler as cupy_compiler

ARCH = "90"  # the H100's compute capability, the GPU this project is checked on
_ARRAY, _INDEXER, _SCALAR = 1, 2, 3  # cupy/_core/_kernel.pxd: _ArgKind (ARG_KIND_NDARRAY = 1, ...)
_INT32_MAX = 2**31 - 1  # arrays smaller than this are indexed in 32 bits (CIndexer<ndim, 1>)


def _nvcc_or_skip():
    path = real_cupy.cuda.get_nvcc_path()
    if not path:
        pytest.skip("no nvcc (the CUDA toolkit) on this machine: the engine's kernel sources are not compiled here")
    return path


# ----------------------------------------------------------------------------- recording on the stand-in

class _Recorder:
    """Wraps the stand-in's ElementwiseKernel: each call's kernel (its four defining strings) and its arguments
    (an array's dtype, shape and C-contiguity; a scalar's type)."""

    def __init__(self, monkeypatch):
        self.calls = []
        init, call = fake_cupy.ElementwiseKernel.__init__, fake_cupy.ElementwiseKernel.__call__
        recorder = self

        def recording_init(kernel, in_params, out_params, operation, name="kernel", *args, **kwargs):
            init(kernel, in_params, out_params, operation, name, *args, **kwargs)
            kernel._defined_by = (in_params, out_params, operation, name, kwargs.get("preamble", ""))

        def recording_call(kernel, *args):
            recorder.calls.append((kernel._defined_by, tuple(_describe(a) for a in args)))
            return call(kernel, *args)

        monkeypatch.setattr(fake_cupy.ElementwiseKernel, "__init__", recording_init)
        monkeypatch.setattr(fake_cupy.ElementwiseKernel, "__call__", recording_call)


def _describe(arg):
    if isinstance(arg, fake_cupy.ndarray):
        return ("array", arg.dtype, arg.shape, bool(arg.flags.c_contiguous))
    return ("scalar", type(arg))


def _record_the_engines_calls(monkeypatch):
    from engine import backend, kernels

    cupy = backend.get_cupy()  # the stand-in
    monkeypatch.setattr(kernels, "_kernels", {})  # made anew, under the recording constructor
    recorder = _Recorder(monkeypatch)
    # the tutorial's autograd step on the GPU: whatever kernels the engine runs in training
    for dtype in (engine.float32, engine.float64):
        x = engine.randn(8, 5, device="cuda", dtype=dtype)
        y = engine.randn(8, 3, device="cuda", dtype=dtype)
        w1 = engine.randn(5, 6, device="cuda", dtype=dtype, requires_grad=True)
        w2 = engine.randn(6, 3, device="cuda", dtype=dtype, requires_grad=True)
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
    # each fused backward with contiguous and with strided (transposed) arrays, and a bound other than 0
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        gy = cupy.asarray(rng.standard_normal((6, 4)).astype(dtype))
        a = cupy.asarray(rng.standard_normal((6, 4)).astype(dtype))
        kernels.pow2_backward(gy, a)
        kernels.pow2_backward(gy.T, a.T)
        kernels.clamp_min_backward(gy, a, 0)
        kernels.clamp_min_backward(gy.T, a.T, 0.5)
    return recorder.calls


# ----------------------------------------------------------------------------- CuPy's source for a call

def _cupy_source(defined_by, args) -> str:
    """The CUDA source the real CuPy 14 generates for this ElementwiseKernel call (``ElementwiseKernel.__call__``:
    scalars become CScalars of the parameter's type, contiguous arrays of one shape are reduced to one dimension,
    an output array of the broadcast shape is allocated C-contiguous, an indexer is appended), with the headers
    ``compile_with_cache`` puts in front."""
    missing = [n for n in ("_get_elementwise_kernel_code", "_ArgInfo", "_TypeMap") if not hasattr(cupy_kernel, n)]
    if missing:  # CuPy's code generation is reached through these (private) names; a new CuPy may move them
        pytest.fail(f"CuPy {real_cupy.__version__} has no {missing} in cupy._core._kernel: update this test to "
                    "where it now writes an ElementwiseKernel's source")
    in_params, out_params, operation, name, preamble = defined_by
    kernel = real_cupy.ElementwiseKernel(in_params, out_params, operation, name, preamble=preamble)
    assert len(args) == kernel.nin, f"{name}: called with {len(args)} arguments, it takes {kernel.nin}"
    in_dtypes = tuple(a[1] if a[0] == "array" else None for a in args)
    in_types, out_types, type_map = kernel._decide_params_type(in_dtypes, ())
    arrays = [a for a in args if a[0] == "array"]
    shape = np.broadcast_shapes(*(a[2] for a in arrays))
    size = int(np.prod(shape))
    contiguous = all(a[3] and a[2] == shape for a in arrays)
    ndim = min(len(shape), 1) if contiguous else len(shape)
    small = size <= _INT32_MAX
    infos = []
    for a, t in zip(args, in_types):
        if a[0] == "array":
            infos.append(cupy_kernel._ArgInfo(_ARRAY, real_cupy.ndarray, np.dtype(t), ndim, contiguous or a[3], small))
        else:
            infos.append(cupy_kernel._ArgInfo(_SCALAR, cupy_scalar.CScalar, np.dtype(t), 0, True, True))
    for t in out_types:
        infos.append(cupy_kernel._ArgInfo(_ARRAY, real_cupy.ndarray, np.dtype(t), ndim, True, small))
    infos.append(cupy_kernel._ArgInfo(_INDEXER, real_cupy._core._carray.Indexer, None, ndim, True, small))
    code = cupy_kernel._get_elementwise_kernel_code(
        tuple(infos), type_map, kernel.params, kernel.operation, kernel.name, kernel.preamble)
    return "".join(f"#include <{h}>\n" for h in cupy_core._cupy_header_list) + code


def _compile(source: str) -> bytes:
    options = cupy_core.assemble_cupy_compiler_options(())
    return cupy_compiler.compile_using_nvcc(source, options=options, arch=ARCH, code_type="cubin")


# ----------------------------------------------------------------------------- the tests

def test_every_kernel_call_of_the_engine_compiles_with_cupys_source_and_nvcc(simulated_gpu, monkeypatch):
    _nvcc_or_skip()
    calls = _record_the_engines_calls(monkeypatch)
    names = {defined_by[3] for defined_by, _ in calls}
    # both fused backwards ran, in the training step too: a renamed or dropped kernel fails here, not silently
    assert {"engine_pow2_backward", "engine_clamp_min_backward"} <= names, names
    sources = {}
    for defined_by, args in calls:
        source = _cupy_source(defined_by, args)
        sources.setdefault(source, (defined_by[3], args))
    # float32 and float64, contiguous (one dimension) and strided (two), for each kernel
    assert len(sources) >= 2 * 2 * len(names), len(sources)
    for source, (name, args) in sources.items():
        try:
            cubin = _compile(source)
        except cupy_compiler.CompileException as exc:
            pytest.fail(f"{name} called with {args} does not compile as CuPy would compile it:\n{exc}\n{source}")
        assert cubin[:4] == b"\x7fELF", f"{name}: nvcc gave no cubin"
        assert name.encode() in cubin  # the entry point CuPy looks up by name


def test_the_source_is_cupys_own_for_the_call(simulated_gpu, monkeypatch):
    """What the compile test compiles is what CuPy would: T bound to the arrays' type, the scalar bound
    converted to T, the reduced dimension, the indexer, and the engine's expression as written."""
    calls = _record_the_engines_calls(monkeypatch)
    clamp = next((d, a) for d, a in calls if d[3] == "engine_clamp_min_backward" and a[0][1] == np.float32
                 and a[0][3])
    source = _cupy_source(*clamp)
    assert "typedef float T;" in source
    assert "#include <cupy/carray.cuh>" in source
    assert ("engine_clamp_min_backward(const CArray<float, 1, 1, 1> _raw_gy, const CArray<float, 1, 1, 1> _raw_x, "
            "const float lo, CArray<float, 1, 1, 1> _raw_gx, CIndexer<1, 1> _ind)") in source
    assert "gx = x >= lo ? gy : (T)0;" in source
    strided = next((d, a) for d, a in calls if d[3] == "engine_pow2_backward" and a[0][1] == np.float64
                   and not a[0][3])
    source = _cupy_source(*strided)
    assert "typedef double T;" in source
    assert "const CArray<double, 2, 0, 1> _raw_gy" in source and "CIndexer<2, 1> _ind" in source


def test_a_kernel_nvcc_refuses_fails_the_compile_check():
    """The check can fail: a body with an undeclared name, which the stand-in would have run as a NumPy expression
    had the name been in its environment, is refused by nvcc."""
    _nvcc_or_skip()
    f32 = np.dtype(np.float32)
    defined_by = ("T gy, T x, T lo", "T gx", "gx = x >= lo ? gy : (T)zero", "engine_broken", "")
    args = (("array", f32, (4,), True), ("array", f32, (4,), True), ("scalar", np.float32))
    with pytest.raises(cupy_compiler.CompileException, match='identifier "zero" is undefined'):
        _compile(_cupy_source(defined_by, args))
