"""``engine.save`` and ``engine.load``: a model's ``state_dict()`` (or any object of tensors, numbers, strings,
lists, tuples and dicts) to a file and back, as ``torch.save``/``torch.load`` are used in a training script.

The file is a pickle, written whole or not at all (a temporary file beside it, renamed over it when complete: a
full disk leaves the old file as it was). It is the engine's own format: PyTorch's ``.pt`` files are zip
archives of another layout, and ``load`` says so rather than failing on their bytes. As PyTorch's since 2.6,
``load`` reads only plain data unless told ``weights_only=False`` (a pickle can run code when it is read: load
whole objects only from files you trust). ``map_location`` moves what is read to another device
(``map_location="cpu"`` reads a GPU run's weights on a machine without one).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import pickle
import tempfile

from .backend import CudaUnavailableError
from .backend import device as _device

__all__ = ["save", "load"]

_ZIP_MAGIC = b"PK\x03\x04"

# what a weights-only load may build: tensors and parameters, NumPy arrays (how a tensor's values are kept), and
# plain containers (a Counter: MultiStepLR's milestones); anything else (a class of the script's, os.system) is
# refused by name
# the engine's own rebuilders, under the name it was imported by ("engine"; "torch" where a script's folder links
# that name to it): what its save() wrote in this process
_PACKAGE = __name__.rpartition(".")[0]
_REBUILDERS = {(f"{_PACKAGE}.tensor", "_rebuild"), (f"{_PACKAGE}.nn.modules", "_rebuild_parameter"),
               ("engine.tensor", "_rebuild"), ("engine.nn.modules", "_rebuild_parameter")}
_SAFE = {
    *_REBUILDERS,
    ("collections", "OrderedDict"), ("collections", "Counter"), ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"), ("_codecs", "encode"),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"), ("builtins", "slice"),
    ("builtins", "range"), ("builtins", "bytearray"),
}


def save(obj, f, pickle_protocol: int = pickle.HIGHEST_PROTOCOL) -> None:
    """Writes ``obj`` to ``f``: a path (written atomically) or a binary file object open for writing."""
    if hasattr(f, "write"):
        pickle.dump(obj, f, protocol=pickle_protocol)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")  # PyTorch's words
    fd, tmp = tempfile.mkstemp(prefix=".saving-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            pickle.dump(obj, out, protocol=pickle_protocol)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _mapper(map_location):
    """A function from the device a tensor was saved on (its name) to the device it is loaded onto."""
    if map_location is None:
        return lambda saved: saved
    if isinstance(map_location, dict):
        table = {str(_device(k)): str(_device(v)) for k, v in map_location.items()}
        return lambda saved: table.get(str(_device(saved)), saved)
    if isinstance(map_location, (str, _device)):
        target = str(_device(map_location))
        return lambda saved: target
    raise TypeError("map_location: give a device ('cpu', 'cuda:0', engine.device(...)) or a dict from saved to "
                    f"loaded devices, not {type(map_location).__name__}")


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, weights_only: bool, where, **pickle_load_args):
        super().__init__(file, **pickle_load_args)
        self.weights_only, self.where = weights_only, where

    def find_class(self, module, name):
        if self.weights_only and (module, name) not in _SAFE:
            raise pickle.UnpicklingError(
                f"Weights only load failed: the file holds {module}.{name}, which a weights-only load does not "
                "build (it reads tensors, numbers, strings and plain containers). If you trust the file, load it "
                "with weights_only=False.")
        if (module, name) in _REBUILDERS:
            rebuild = super().find_class(module, name)

            def placed(host, dev, requires_grad):
                try:
                    return rebuild(host, self.where(dev), requires_grad)
                except CudaUnavailableError as e:
                    raise CudaUnavailableError(f"a tensor in the file was saved on {dev}, and {e}; to read it on "
                                               "the CPU, load with map_location='cpu'") from None

            return placed
        return super().find_class(module, name)


def load(f, map_location=None, pickle_module=None, *, weights_only: bool = True, mmap=None, **pickle_load_args):
    """Reads what :func:`save` wrote, from a path or a binary file object open for reading. ``pickle_load_args``
    (``encoding``, ``errors``) go to the unpickler, as PyTorch's do."""
    if pickle_module is not None and pickle_module is not pickle:
        raise TypeError("load: the engine reads its files with Python's pickle only (pickle_module)")
    if mmap:
        raise ValueError("load: mmap=True maps PyTorch's zip archives; the engine's files are read whole")
    unknown = set(pickle_load_args) - {"encoding", "errors", "fix_imports"}
    if unknown:
        raise TypeError(f"load() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    where = _mapper(map_location)
    if hasattr(f, "read"):
        data = f.read()
        name = getattr(f, "name", "the file")
    else:
        name = os.fspath(f)
        with builtins.open(name, "rb") as src:
            data = src.read()
    if data[:4] == _ZIP_MAGIC:
        raise RuntimeError(f"{name} is a zip archive, the format of PyTorch's own torch.save; the engine reads only "
                           "files that engine.save wrote (save the state_dict's tensors from PyTorch as NumPy "
                           "arrays to carry them over)")
    try:
        return _Unpickler(io.BytesIO(data), weights_only, where, **pickle_load_args).load()
    except (pickle.UnpicklingError, EOFError, ValueError) as e:
        if isinstance(e, pickle.UnpicklingError) and str(e).startswith("Weights only load failed"):
            raise
        raise pickle.UnpicklingError(f"{name} is not a file that engine.save wrote, or it is damaged ({e})") from e
