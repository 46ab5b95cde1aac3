"""The engine: PyTorch's Tensor and autograd API over NumPy (CPU) and CuPy (CUDA GPU).

The tutorial's programs run with one changed line, ``import engine as torch``.
"""

import math as _math
import warnings as _warnings

from . import (
    _malloc,
    accelerator,
    amp,
    autograd,
    backends,
    compat,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    functional,
    jit,
    linalg,
    nn,
    optim,
    profiler,
    special,
    switches,
    testing,
    utils,
)
from . import random as _random_module
from ._layouts import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from .amp import autocast
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd import functional as _autograd_functional  # noqa: F401 - torch.autograd.functional
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.anomaly_mode import set_detect_anomaly as _set_detect_anomaly
from .autograd.grad_mode import is_inference_mode_enabled
from .backend import CudaUnavailableError, device, get_default_device, set_default_device
from .compat import *  # noqa: F403 - torch.batch_norm, torch.range, torch.gradient, torch.hann_window, ...
from .creation import (
    arange,
    as_tensor,
    cat,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    multinomial,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    stack,
    tensor,
    where,
    zeros,
    zeros_like,
)
from .dtypes import (
    bfloat16,
    complex32,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    layout,
    set_default_dtype,
    strided,
    uint8,
)
from .dtypes import bool_ as bool  # noqa: A001 - PyTorch's name
from .fft import istft, stft
from .functional import *  # noqa: F403 - torch.mm, torch.exp, ...
from .legacy import CPU_TYPES as _CPU_TYPES
from .printing import set_printoptions
from .random import Generator, default_generator, initial_seed, manual_seed
from .serialization import load, save
from .switches import *  # noqa: F403 - set_float32_matmul_precision, use_deterministic_algorithms, ...
from .tensor import Size, Tensor, is_tensor
from .threads import get_num_threads, set_num_threads
from .type_info import can_cast, finfo, iinfo, promote_types, result_type

# PyTorch says nothing when a tensor's math meets log(0), 0 / 0 or an overflow: the result is -inf, nan or inf, and
# the loss shows it. NumPy warns, from the engine's own lines, once per line: noise a learner would read as the
# engine's fault, and a CUDA run (CuPy checks nothing) would not print. Only those warnings, raised from the
# engine's modules, are let pass; NumPy code of one's own still warns as it always did.
_warnings.filterwarnings("ignore", message=r"(divide by zero|invalid value|overflow|underflow) encountered",
                         category=RuntimeWarning, module=r"engine\.")
_malloc.keep_step_memory()  # a step's arrays stay mapped between steps (engine/_malloc.py says why)

float = float32  # noqa: A001
double = float64
half = float16
cfloat = complex64
cdouble = complex128
chalf = complex32
long = int64
int = int32  # noqa: A001
short = int16

FloatTensor = _CPU_TYPES["FloatTensor"]
DoubleTensor = _CPU_TYPES["DoubleTensor"]
HalfTensor = _CPU_TYPES["HalfTensor"]
LongTensor = _CPU_TYPES["LongTensor"]
IntTensor = _CPU_TYPES["IntTensor"]
ShortTensor = _CPU_TYPES["ShortTensor"]
CharTensor = _CPU_TYPES["CharTensor"]
ByteTensor = _CPU_TYPES["ByteTensor"]
BoolTensor = _CPU_TYPES["BoolTensor"]

__version__ = "0.1.0"

# PyTorch's constants (torch.pi in place of math.pi, torch.inf in a mask's fill, x[:, torch.newaxis])
pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None


def get_rng_state():
    """The CPU generator's state as a uint8 tensor (PCG64's: the numbers differ from PyTorch's Mersenne twister, so
    one's state does not load into the other), for :func:`set_rng_state` (a checkpoint that resumes the draws)."""
    return tensor(list(_random_module.get_state_bytes()), dtype=uint8)


def set_rng_state(new_state) -> None:
    if not isinstance(new_state, Tensor) or new_state.dtype != uint8:
        raise TypeError("set_rng_state expects a torch.ByteTensor (a uint8 tensor from get_rng_state)")
    _random_module.set_state_bytes(bytes(new_state.cpu().numpy().astype("uint8")))


def _generator_get_state(self):
    """Its state as a uint8 tensor (PCG64's, 45 bytes), for :meth:`set_state`."""
    return tensor(list(_random_module.get_state_bytes(self)), dtype=uint8)


def _generator_set_state(self, new_state):
    if not isinstance(new_state, Tensor) or new_state.dtype != uint8:
        raise TypeError("Generator.set_state expects a torch.ByteTensor (a uint8 tensor from get_state)")
    _random_module.set_state_bytes(bytes(new_state.cpu().numpy().astype("uint8")), self)
    return self


# given to Generator here, where tensors can be made (engine.random is a leaf below engine.tensor)
Generator.get_state, Generator.set_state = _generator_get_state, _generator_set_state


def seed() -> int:
    """Seeds the CPU generator from the operating system's randomness and returns that seed, as ``torch.seed()``."""
    return _random_module.reseed()


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """PyTorch's ``torch.compile`` makes a model faster and computes the same; the engine runs eagerly and has no
    compiler, so it hands back what it was given (as a decorator too): the same results, at the engine's speed."""
    if model is None:
        return lambda fn: fn
    return model


OutOfMemoryError = cuda.OutOfMemoryError  # (PyTorch's torch.OutOfMemoryError is torch.cuda's)
vmap = func.vmap  # (torch.vmap is torch.func.vmap)
GradScaler = amp.GradScaler  # (torch.GradScaler is torch.amp.GradScaler)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Anomaly detection on or off (``torch.set_anomaly_enabled``; ``autograd.set_detect_anomaly`` as a call)."""
    _set_detect_anomaly(enabled, check_nan)


__all__ = [
    "Tensor", "Size", "tensor", "as_tensor", "from_numpy", "randn", "rand", "randint", "randperm", "multinomial",
    "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "randn_like", "rand_like", "stack", "cat", "where", "dtype", "float", "float32", "double",
    "float64", "layout", "strided",
    "half", "float16", "long", "int64", "int", "int32", "uint8", "bool", "device", "manual_seed",
    "initial_seed", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled",
    "autograd", "backends", "cuda", "nn", "optim", "profiler", "utils",
    "CudaUnavailableError", "is_tensor",
    "get_default_dtype", "set_default_dtype", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "int8", "int16", "short",
    "accelerator", "get_default_device", "set_default_device",
    "get_num_threads", "set_num_threads", "set_printoptions", "save", "load", "Generator", "amp", "autocast",
    "distributed", "func", "bfloat16", "compile", "linalg", "distributions", "testing", "special", "get_rng_state",
    "set_rng_state",
    "seed", "logspace", "randint_like", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    "finfo", "iinfo", "promote_types", "result_type", "can_cast", "OutOfMemoryError", "vmap", "GradScaler",
    "pi", "e", "inf", "nan", "newaxis", "memory_format", "contiguous_format", "preserve_format", "channels_last",
    "channels_last_3d", "default_generator", "jit", "fft", "stft", "istft", "complex64", "complex128", "cfloat",
    "cdouble", "complex32",
    "chalf",
    *switches.__all__, *functional.__all__,
    *compat.__all__,
]


def _take_out() -> None:
    """PyTorch's ``out=`` on the top-level ops whose engine forms lack it (engine/_out.py): ``torch.sin(x, out=y)``,
    ``torch.zeros(3, out=t)``."""
    import inspect

    from ._out import OUT_FORMS, with_out

    space = globals()
    for name in OUT_FORMS:
        fn = space.get(name)
        if fn is None:
            continue
        try:
            parameters = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if "out" not in parameters:
            space[name] = with_out(fn, name)


_take_out()
del _take_out
