"""``torch.jit`` as scripts use it for speed (``script``, ``trace`` and their kin hand back what they were given,
computing the same; ``save``/``load`` of a TorchScript archive refused with the way out), ``torch.utils.dlpack``,
and ``nn.utils.convert_conv2d_weight_memory_format``/``convert_conv3d_weight_memory_format``."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.engine.helpers import HAVE_TORCH


@engine.jit.script
def _fused_gelu(x):
    return x * 0.5 * (1.0 + engine.erf(x / 1.41421))


class _Block(engine.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = engine.nn.Linear(3, 3)

    @engine.jit.ignore
    def debug(self):
        return "kept"

    @engine.jit.unused
    def helper(self):
        return "also kept"

    def forward(self, x):
        if engine.jit.is_scripting():  # (the scripted branch: not taken, as outside script)
            return x
        return self.lin(x).relu()


def test_scripted_and_traced_code_computes_what_it_did():
    x = engine.randn(4, 3)
    np.testing.assert_array_equal(_fused_gelu(x).numpy(), (x * 0.5 * (1.0 + engine.erf(x / 1.41421))).numpy())
    block = _Block()
    scripted, traced = engine.jit.script(block), engine.jit.trace(block, (x,))
    assert scripted is block and traced is block and not isinstance(block, engine.jit.ScriptModule)
    np.testing.assert_array_equal(traced(x).detach().numpy(), block.lin(x).relu().detach().numpy())
    assert block.debug() == "kept" and block.helper() == "also kept"
    assert engine.jit.ignore(drop=True)(len) is len and engine.jit.annotate(list, [1]) == [1]
    assert engine.jit.freeze(block) is block and not engine.jit.is_tracing()
    future = engine.jit.fork(lambda a, b: a + b, 2, b=3)
    assert engine.jit.wait(future) == 5 and future.done()


@pytest.mark.parametrize("call", [lambda: engine.jit.save(_Block(), "m.pt"), lambda: engine.jit.load("m.pt")])
def test_saving_a_torchscript_archive_is_refused_with_the_way_out(call):
    with pytest.raises(RuntimeError, match=r"no TorchScript .* torch.save\(model.state_dict\(\), path\)"):
        call()


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is the other side of the exchange")
def test_dlpack_shares_memory_with_torch_both_ways():
    import torch

    from engine.utils.dlpack import from_dlpack, to_dlpack

    t = torch.arange(4.0)
    e = from_dlpack(t)
    t[0] = 7.0
    assert e.tolist() == [7.0, 1.0, 2.0, 3.0]
    back = torch.utils.dlpack.from_dlpack(to_dlpack(e))
    e[1] = 9.0
    assert back.tolist() == [7.0, 9.0, 2.0, 3.0]


def test_convolution_weights_laid_out_channels_last_in_place():
    nn = engine.nn
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Sequential(nn.ConvTranspose2d(4, 2, 3)), nn.Linear(2, 2),
                          nn.Conv3d(2, 2, 1))
    weight = model[0].weight
    before = [p.detach().numpy().copy() for p in model.parameters()]
    assert nn.utils.convert_conv2d_weight_memory_format(model, engine.channels_last) is model
    assert model[0].weight is weight and isinstance(weight, nn.Parameter)  # (the same parameter: an optimizer holds it)
    assert model[0].weight.stride() == (27, 1, 9, 3) and model[1][0].weight.stride() == (18, 1, 6, 2)
    assert model[2].weight.stride() == (2, 1) and model[3].weight.is_contiguous()
    nn.utils.convert_conv3d_weight_memory_format(model, engine.channels_last_3d)
    assert model[3].weight.is_contiguous(memory_format=engine.channels_last_3d)
    for a, p in zip(before, model.parameters()):
        np.testing.assert_array_equal(a, p.detach().numpy())
    if HAVE_TORCH:
        import torch

        theirs = torch.nn.utils.convert_conv2d_weight_memory_format(torch.nn.ConvTranspose2d(4, 2, 3),
                                                                    torch.channels_last)
        assert theirs.weight.stride() == (18, 1, 6, 2)
