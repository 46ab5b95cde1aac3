"""PyTorch's legacy tensor types (``FloatTensor``, ``cuda.FloatTensor``), as the older tutorials use them:
``x = torch.randn(N, D).type(torch.cuda.FloatTensor)``.

A table over :mod:`engine.dtypes` only, so that ``Tensor.type()`` can read it without an import circle; what a
type does when called (make a tensor) and what it recognises (``isinstance``) are bound by :mod:`engine.creation`,
which knows tensors, through :func:`bind`."""

from __future__ import annotations

from . import dtypes


class LegacyTensorType:
    """A (dtype, CPU or CUDA) pair that ``Tensor.type()`` accepts and that builds tensors when called:
    ``FloatTensor(2, 3)`` (uninitialised) or ``FloatTensor([1, 2])`` (from data)."""

    def __init__(self, dtype: dtypes.dtype, is_cuda: bool):
        self.dtype = dtype
        self.is_cuda = is_cuda

    @property
    def name(self) -> str:
        return ("torch.cuda." if self.is_cuda else "torch.") + self.dtype.legacy_name

    def __repr__(self):
        return f"<class '{self.name}'>"

    def __call__(self, *args):
        device = "cuda" if self.is_cuda else "cpu"
        if len(args) == 1 and not isinstance(args[0], int):
            return _bound["tensor"](args[0], dtype=self.dtype, device=device)
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        return _bound["empty"](*args, dtype=self.dtype, device=device)

    def __instancecheck__(self, obj):
        return isinstance(obj, _bound["Tensor"]) and obj.dtype is self.dtype and obj.is_cuda == self.is_cuda


_bound: dict = {}


def bind(tensor_class, tensor, empty) -> None:
    """Give the types their Tensor class and factories (engine.creation does, as it is imported)."""
    _bound.update(Tensor=tensor_class, tensor=tensor, empty=empty)


def _make(is_cuda):
    return {
        d.legacy_name: LegacyTensorType(d, is_cuda)
        for d in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16, dtypes.int32,
                  dtypes.int64, dtypes.uint8, dtypes.bool_)
    }


CPU_TYPES = _make(False)
CUDA_TYPES = _make(True)


def parse_legacy_name(name: str) -> LegacyTensorType:
    text = name.removeprefix("torch.").removeprefix("engine.")
    table = CPU_TYPES
    if text.startswith("cuda."):
        table, text = CUDA_TYPES, text[5:]
    found = table.get(text)
    if found is None:
        raise TypeError(f"invalid type: {name!r}")
    return found
