"""nn.MultiheadAttention and nn.Transformer (encoder, decoder and their layers) against torch 2.13: from the same
weights the same outputs, attention weights and every gradient, over the masks (bool: True is not allowed; float;
per head; causal; key padding), layouts (batch_first, unbatched), separate key and value sizes, bias, an added key
and value (``add_bias_kv``, ``add_zero_attn``); the same
parameter names and reprs; refusals in torch's words; and on the CuPy stand-in an encoder step without host
syncs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import engine
from engine import nn

pytestmark = [  # torch's own notes on its fast paths and a deprecation, not the engine's
    pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask and attn_mask is deprecated"),
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
]


def _copy(torch_module, engine_module):
    engine_module.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in torch_module.state_dict().items()})
    return engine_module


_MHA = [c for c in itertools.product([False, True], [False, True], [False, True],
                                     [None, "bool", "float", "3d", "causal"], [False, True], [False, True])
        if not (c[1] and (c[2] or c[3] == "3d"))]  # unbatched: no per-batch masks


@pytest.mark.torch
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
def test_multihead_attention_gives_torchs_outputs_weights_and_gradients(need_weights, average):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    L, S, N = 4, 6, 3
    for batch_first, unbatched, padded, mask_kind, kv_dims, bias in _MHA:
        kw = dict(batch_first=batch_first, bias=bias, **(dict(kdim=5, vdim=3) if kv_dims else {}))
        theirs = torch.nn.MultiheadAttention(8, 2, **kw).double()
        mine = _copy(theirs, nn.MultiheadAttention(8, 2, **kw).double())

        def shape(length, dim, unbatched=unbatched, batch_first=batch_first):
            return (length, dim) if unbatched else ((N, length, dim) if batch_first else (length, N, dim))

        arrays = [rng.standard_normal(shape(L, 8)), rng.standard_normal(shape(S, 5 if kv_dims else 8)),
                  rng.standard_normal(shape(S, 3 if kv_dims else 8))]
        pad = rng.random((N, S)) < 0.3
        pad[:, 0] = False
        masks = {"bool": rng.random((L, S)) < 0.3, "float": rng.standard_normal((L, S)),
                 "3d": rng.standard_normal((N * 2, L, S)), "causal": np.triu(np.full((L, S), -np.inf), 1)}
        if mask_kind == "bool":
            masks["bool"][:, 0] = False
        results = []
        for lib, module in ((engine, mine), (torch, theirs)):
            q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
            call = dict(need_weights=need_weights, average_attn_weights=average)
            if padded:
                call["key_padding_mask"] = lib.tensor(pad)
            if mask_kind is not None:
                call["attn_mask"] = lib.tensor(masks[mask_kind])
                call["is_causal"] = mask_kind == "causal"
            out, weights = module(q, k, v, **call)
            ((out * out).sum() + ((weights * weights).sum() if weights is not None else 0)).backward()
            results.append([out.detach().numpy()] + ([weights.detach().numpy()] if weights is not None else [])
                           + [t.grad.numpy() for t in (q, k, v)] + [p.grad.numpy() for p in module.parameters()])
        assert len(results[0]) == len(results[1])
        for a, b in zip(*results):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=str((kw, unbatched, padded, mask_kind)))


@pytest.mark.torch
@pytest.mark.parametrize(("add_bias_kv", "add_zero_attn"), [(True, False), (False, True), (True, True)])
def test_an_added_key_and_value_are_torchs(add_bias_kv, add_zero_attn):
    """``add_bias_kv`` (a learned key and value appended to every sequence's) and ``add_zero_attn`` (a key and value
    of zeros, after the heads are split), with every mask: the masks let every query see them."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    L, S, N = 3, 5, 2
    cases = itertools.product([False, True], [False, True], [False, True], [None, "bool", "float", "3d"],
                              [False, True])
    for batch_first, unbatched, padded, mask_kind, kv_dims in cases:
        if unbatched and (padded or mask_kind == "3d"):
            continue
        kw = dict(batch_first=batch_first, add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn,
                  **(dict(kdim=5, vdim=3) if kv_dims else {}))
        theirs = torch.nn.MultiheadAttention(4, 2, **kw).double()
        mine = nn.MultiheadAttention(4, 2, **kw).double()
        assert list(mine.state_dict()) == list(theirs.state_dict()) and repr(mine) == repr(theirs)
        _copy(theirs, mine)

        def shape(length, dim, unbatched=unbatched, batch_first=batch_first):
            return (length, dim) if unbatched else ((N, length, dim) if batch_first else (length, N, dim))

        arrays = [rng.standard_normal(shape(L, 4)), rng.standard_normal(shape(S, 5 if kv_dims else 4)),
                  rng.standard_normal(shape(S, 3 if kv_dims else 4))]
        pad = rng.random((N, S)) < 0.4
        masks = {"bool": rng.random((L, S)) < 0.4, "float": rng.standard_normal((L, S)),
                 "3d": rng.standard_normal((N * 2, L, S))}
        results = []
        for lib, module in ((engine, mine), (torch, theirs)):
            q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
            call = {"key_padding_mask": lib.tensor(pad)} if padded else {}
            if mask_kind is not None:
                call["attn_mask"] = lib.tensor(masks[mask_kind])
            out, weights = module(q, k, v, **call)
            ((out * out).sum() + (weights * weights).sum()).backward()
            results.append([out.detach().numpy(), weights.detach().numpy()] + [t.grad.numpy() for t in (q, k, v)]
                           + [p.grad.numpy() for p in module.parameters()])
        assert len(results[0]) == len(results[1])
        for a, b in zip(*results):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12,
                                       err_msg=str((kw, unbatched, padded, mask_kind)))


@pytest.mark.torch
@pytest.mark.parametrize(("norm_first", "activation", "batch_first"),
                         list(itertools.product([False, True], ["relu", "gelu"], [False, True])))
def test_a_transformer_gives_torchs_outputs_and_gradients(norm_first, activation, batch_first):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0,
              activation=activation, norm_first=norm_first, batch_first=batch_first)
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(**kw).double()
    mine = nn.Transformer(**kw).double()
    assert list(mine.state_dict()) == list(theirs.state_dict()) and repr(mine) == repr(theirs)
    _copy(theirs, mine)
    src = rng.standard_normal((3, 5, 8) if batch_first else (5, 3, 8))
    tgt = rng.standard_normal((3, 4, 8) if batch_first else (4, 3, 8))
    pad = rng.random((3, 5)) < 0.3
    pad[:, 0] = False
    results = []
    for lib, model in ((engine, mine), (torch, theirs)):
        s, t = lib.tensor(src, requires_grad=True), lib.tensor(tgt, requires_grad=True)
        causal = lib.nn.Transformer.generate_square_subsequent_mask(4, dtype=lib.float64)
        out = model(s, t, tgt_mask=causal, src_key_padding_mask=lib.tensor(pad),
                    memory_key_padding_mask=lib.tensor(pad), tgt_is_causal=True)
        (out * out).sum().backward()
        results.append([out.detach().numpy(), s.grad.numpy(), t.grad.numpy(), causal.numpy()]
                       + [p.grad.numpy() for p in model.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    # the encoder alone, as the language-model tutorial uses it, with its own LayerNorm at the end
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation, batch_first=batch_first, norm_first=norm_first)
    theirs = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False).double()
    mine = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation, batch_first=batch_first,
                                                            norm_first=norm_first), 2, norm=nn.LayerNorm(8)).double()
    _copy(theirs, mine)
    outs = [model(lib.tensor(src), mask=lib.nn.Transformer.generate_square_subsequent_mask(src.shape[1 if batch_first
                                                                                           else 0], dtype=lib.float64))
            for lib, model in ((engine, mine), (torch, theirs))]
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.torch
def test_layers_are_copies_with_torchs_names_and_reprs():
    torch = pytest.importorskip("torch")
    for make in (lambda lib: lib.nn.MultiheadAttention(8, 2), lambda lib: lib.nn.MultiheadAttention(8, 2, kdim=5),
                 lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16),
                 lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, norm_first=True, bias=False)):
        mine, theirs = make(engine), make(torch)
        assert repr(mine) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 3)
    weights = [layer.linear1.weight for layer in encoder.layers]
    assert weights[0] is not weights[1] and weights[0].allclose(weights[1])  # deep copies, as torch's


def test_attention_refuses_what_torch_refuses():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    mha = nn.MultiheadAttention(8, 2)
    x = engine.randn(4, 3, 8)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(4, 5\), but should be \(4, 4\)."):
        mha(x, x, x, attn_mask=engine.zeros(4, 5))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        nn.Transformer(8, 2, 1, 1, 16)(engine.randn(5, 3, 8), engine.randn(4, 3, 6))


def test_an_encoder_step_on_the_gpu_gives_the_cpus_values_without_host_syncs(cuda_device):
    from tests import fake_cupy

    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3, 8))
    pad = np.zeros((3, 5), dtype=bool)
    pad[1, 3:] = True

    def run(dev):
        engine.manual_seed(4)
        encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2).double().to(dev)
        with fake_cupy.count_syncs() as seen:
            mask = nn.Transformer.generate_square_subsequent_mask(5, device=dev, dtype=engine.float64)
            out = encoder(engine.tensor(x, device=dev), mask=mask, src_key_padding_mask=engine.tensor(pad, device=dev))
            out.sum().backward()
        if fake_cupy.active():
            assert seen == [], seen
        return [out.detach().cpu().numpy()] + [p.grad.cpu().numpy() for p in encoder.parameters()]

    # (the CPU's attention is PyTorch's CPU flash node, a GPU's the composite, as PyTorch's devices differ: the same
    # values but for the last bits; some gradients here are sums that cancel to ~1e-17)
    for a, b in zip(run("cpu"), run(cuda_device)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_the_functional_form_with_static_keys_and_values_gives_what_their_projections_give():
    """F.multi_head_attention_forward (the module's computation, PyTorch's function): precomputed keys and values
    (``static_k``/``static_v``, one row per batch element and head) stand in for the projected ones."""
    F = engine.nn.functional
    rng = np.random.default_rng(1)
    L, S, N, E, H = 3, 5, 2, 4, 2
    t = {name: engine.tensor(rng.standard_normal(shape), dtype=engine.float64) for name, shape in
         (("q", (L, N, E)), ("k", (S, N, E)), ("v", (S, N, E)), ("w", (3 * E, E)), ("b", (3 * E,)),
          ("ow", (E, E)), ("ob", (E,)))}
    args = (E, H, t["w"], t["b"], None, None, False, 0.0, t["ow"], t["ob"])
    out, weights = F.multi_head_attention_forward(t["q"], t["k"], t["v"], *args)
    w_k, w_v = t["w"][E:2 * E], t["w"][2 * E:]
    b_k, b_v = t["b"][E:2 * E], t["b"][2 * E:]

    def rows(x, w, b):  # (S, N, E) projected -> (N * H, S, E / H)
        return F.linear(x, w, b).reshape(S, N * H, E // H).transpose(0, 1)

    static = {"static_k": rows(t["k"], w_k, b_k), "static_v": rows(t["v"], w_v, b_v)}
    got, got_weights = F.multi_head_attention_forward(t["q"], t["k"] * 0, t["v"] * 0, *args, **static)
    np.testing.assert_allclose(got.numpy(), out.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_weights.numpy(), weights.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(AssertionError, match="expecting static_k.size\\(0\\) of 4, but got 2"):
        F.multi_head_attention_forward(t["q"], t["k"], t["v"], *args, static_k=static["static_k"][:2])
    with pytest.raises(AssertionError, match="bias cannot be added to static key."):
        bias = engine.zeros(1, 1, E, dtype=engine.float64)
        F.multi_head_attention_forward(t["q"], t["k"], t["v"], E, H, t["w"], t["b"], bias, bias, False, 0.0,
                                       t["ow"], t["ob"], **static)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 6, but got 4"):
        F.multi_head_attention_forward(t["q"], t["k"], t["v"], 6, *args[1:])
    with pytest.raises(AssertionError, match="embed_dim 4 not divisible by num_heads 3"):
        F.multi_head_attention_forward(t["q"], t["k"], t["v"], E, 3, *args[2:])
