"""``engine.amp``: PyTorch's mixed-precision helpers, as far as the engine goes.

``GradScaler`` is PyTorch's: the loss multiplied by a scale before ``backward()`` (so that small float16
gradients do not underflow), the gradients divided by it before the step, a step with an infinite or NaN gradient
skipped and the scale halved, and the scale doubled after ``growth_interval`` clean steps. Built on the CUDA
device while CUDA cannot be used it disables itself with PyTorch's warning, as PyTorch's does (nanoGPT makes
one on a laptop without a GPU).

``autocast`` is accepted and changes nothing: the engine has no mixed precision, so the block runs in its
tensors' own dtypes (float32 stays float32: slower and more exact than PyTorch's float16 products). It says so
once, with a warning.
"""

from __future__ import annotations

import functools
import math
import warnings

from . import backend, creation
from .autograd import no_grad

__all__ = ["GradScaler", "autocast"]

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"
_warned_autocast = False


class autocast:  # noqa: N801 - PyTorch's name
    """``with autocast(device_type, dtype):`` (or as a decorator): the block runs as it would without it."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device, self.fast_dtype, self._enabled = device_type, dtype, enabled

    def __enter__(self):
        global _warned_autocast
        if self._enabled and not _warned_autocast:
            _warned_autocast = True
            warnings.warn("autocast: the engine has no mixed precision; the block runs in its tensors' own dtypes "
                          "(float32 stays float32)", UserWarning, stacklevel=2)
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return run


class GradScaler:
    """PyTorch's dynamic loss scaling (``torch.amp.GradScaler``): ``scale(loss).backward()``, then ``step(opt)``
    (which unscales first, unless ``unscale_(opt)`` did, say before clipping) and ``update()``."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not backend.cuda_status()[0]:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict = {}
        self._scaled = False  # scale() was called (PyTorch makes its scale tensor then)

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def scale(self, outputs):
        """``outputs`` (a tensor, or a list or tuple of them) times the scale; themselves when disabled."""
        if not self._enabled:
            return outputs
        self._scaled = True
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def unscale_(self, optimizer) -> None:
        """Divides the gradients of ``optimizer``'s parameters by the scale, in place, noting whether any is
        infinite or NaN (read at ``step``: on a GPU, not waited for here)."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = 1.0 / self._scale
        found = []
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype.name == "float16":
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    p.grad.mul_(inverse)
                    found.append((~p.grad.isfinite()).any())
        # one flag for the optimizer, so that step() and update() wait for the device once each, as PyTorch's
        state["found_inf"] = [creation.stack(found).any()] if found else []
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient was infinite or NaN (then skipped: None is returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None
        if not any(bool(f.item()) for f in state["found_inf"]):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """The next scale: ``new_scale`` if given; else halved (``backoff_factor``) after a skipped step, and
        doubled (``growth_factor``) after ``growth_interval`` steps in a row without one."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        else:
            if not self._scaled:
                raise AssertionError("Attempted update but _scale is None.  This may indicate your script did not use "
                                     "scaler.scale(loss or outputs) earlier in the iteration.")
            if all(s["found_inf"] is None for s in self._per_optimizer.values()):
                raise AssertionError("No inf checks were recorded prior to update.")
            found = [f for s in self._per_optimizer.values() for f in (s["found_inf"] or ())]
            if any(bool(f.item()) for f in found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
            if math.isinf(self._scale):
                self._scale = float("inf")
        self._per_optimizer = {}

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
