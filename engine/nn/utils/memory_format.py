"""``torch.nn.utils.memory_format``: a model's convolution weights laid out channels last (engine._layouts)."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weights of ``module``'s ``Conv2d`` and ``ConvTranspose2d`` layers (itself and those inside) laid out
    as ``memory_format`` says (``channels_last``), in place; the module back."""
    from ..modules import Conv2d, ConvTranspose2d

    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """As :func:`convert_conv2d_weight_memory_format`, for ``Conv3d`` and ``ConvTranspose3d`` (``channels_last_3d``)."""
    from ..modules import Conv3d, ConvTranspose3d

    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
