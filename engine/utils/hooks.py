"""``engine.utils.hooks``: the handle ``register_forward_hook`` and its kin return, as ``torch.utils.hooks``."""

from __future__ import annotations

import weakref

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Removes the hook it was returned for: ``handle.remove()``, or a ``with`` block around the hook's use.
    Holds the module's hook table weakly, so a handle kept does not keep a module alive."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [] if extra_dict is None else [extra_dict] if isinstance(extra_dict, dict) else list(extra_dict)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            table = ref()
            if table is not None:
                table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
