"""A GPT-2 training step on the CPU, the engine against PyTorch: ``python -m benchmarks.gpt_step``

The model is GPT-2's as nanoGPT builds it (:func:`gpt2`: pre-norm blocks of causal self-attention through
``scaled_dot_product_attention`` and a GELU MLP, the token embedding tied to the head, a loss that ignores targets
of -1), at the size of nanoGPT's README command for a CPU (4 layers, 4 heads, 128 wide, 12 sequences of 64
characters, a vocabulary of 65). A step is forward, backward, ``clip_grad_norm_`` and AdamW with decay groups.
Both libraries with their default threads, float32, each in processes of its own (alternating), the median of
rounds; then the parts that the engine does in one pass (GELU, LayerNorm and causal attention, forward and
backward; a Linear on a batch of sequences) beside PyTorch's. Writes benchmarks/results/cpu-gpt-step.txt.
tests/engine/test_gpt2_parts.py trains the same model from PyTorch's weights and checks the losses agree.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

import engine

from . import paired

RESULTS = Path(__file__).resolve().parent / "results"
CPU_SIZE = {"vocab": 65, "block": 64, "n_embd": 128, "n_head": 4, "n_layer": 4, "batch": 12}


def gpt2(lib, vocab=13, block=8, n_embd=16, n_head=2, n_layer=2):
    """A GPT-2 model as nanoGPT builds one, written for ``lib`` (the engine or torch): blocks of pre-norm causal
    self-attention (one projection split into query, key and value, heads by view and transpose,
    scaled_dot_product_attention) and a GELU MLP, the token embedding tied to the output head, GPT-2's
    initialisation, and a loss that ignores targets of -1."""
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.size()  # noqa: N806 - nanoGPT's names
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(n_embd), Attention(), nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                                                  h=nn.ModuleList([Block() for _ in range(n_layer)]),
                                                  ln_f=nn.LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, (nn.Linear, nn.Embedding)):
                lib.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                lib.nn.init.zeros_(module.bias)

        def forward(self, idx, targets=None):
            t = idx.size(1)
            x = self.transformer.wte(idx) + self.transformer.wpe(lib.arange(0, t, dtype=lib.long))
            for b in self.transformer.h:
                x = b(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            if targets is None:
                return logits[:, [-1], :]
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    return GPT()


def adamw(lib, model, lr=3e-3):
    """AdamW with weight decay on the matrices only (nanoGPT's two groups)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return lib.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                           lr=lr, betas=(0.9, 0.95))


def _stepper(lib, size, idx, targets):
    lib.manual_seed(0)
    model = gpt2(lib, vocab=size["vocab"], block=size["block"], n_embd=size["n_embd"], n_head=size["n_head"],
                 n_layer=size["n_layer"])
    opt = adamw(lib, model)
    x, y = lib.tensor(idx), lib.tensor(targets)

    def step():
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    return step


def _median_ms(fns: dict, rounds: int, reps: int, warm: int = 3) -> dict:
    """Each of ``fns`` run ``warm`` times, then timed ``reps`` calls at a time in ``rounds`` rounds: the median of a
    call's time over the rounds, in milliseconds. (One warm call was too few: a CNN step's second and third calls
    still took 20-25% longer than the later ones, the allocator's arenas growing to the step's size.)"""
    times = {name: [] for name in fns}
    for fn in fns.values():
        for _ in range(warm):
            fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            started = time.perf_counter()
            for _ in range(reps):
                fn()
            times[name].append((time.perf_counter() - started) / reps * 1e3)
    return {name: statistics.median(t) for name, t in times.items()}


def _lib(name: str):
    if name == "engine":
        return engine
    import torch

    return torch


def _one_library(name: str, rounds: int, reps: int) -> dict:
    """The step's and the parts' medians (ms) for one library, timed in a process of its own (one library's idle
    threads would otherwise spin beside the other's work on a small machine, and slow it)."""
    lib, size = _lib(name), CPU_SIZE
    rng = np.random.default_rng(0)
    idx = rng.integers(0, size["vocab"], (size["batch"], size["block"]))
    targets = rng.integers(0, size["vocab"], (size["batch"], size["block"]))
    hidden = rng.standard_normal((size["batch"], size["block"], 4 * size["n_embd"])).astype(np.float32)
    weight = rng.standard_normal((4 * size["n_embd"], size["n_embd"])).astype(np.float32)
    h = lib.tensor(hidden, requires_grad=True)
    w = lib.tensor(weight, requires_grad=True)
    g = lib.ones(hidden.shape)
    heads, width = size["n_head"], size["n_embd"] // size["n_head"]
    qkv = [lib.tensor(rng.standard_normal((size["batch"], heads, size["block"], width)).astype(np.float32),
                      requires_grad=True) for _ in range(3)]
    g_att = lib.ones(qkv[0].shape)
    x = lib.tensor(rng.standard_normal((size["batch"], size["block"], size["n_embd"])).astype(np.float32),
                   requires_grad=True)
    norm, g_norm = lib.nn.LayerNorm(size["n_embd"]), lib.ones(x.shape)
    F = lib.nn.functional  # noqa: N806 - torch's name
    out = _median_ms({"step": _stepper(lib, size, idx, targets)}, rounds, reps)
    out |= _median_ms({"gelu": lambda: F.gelu(h).backward(g),
                       "linear": lambda: (h @ w).sum().backward(),
                       "layer_norm": lambda: norm(x).backward(g_norm),
                       "attention": lambda: F.scaled_dot_product_attention(*qkv, is_causal=True).backward(g_att)},
                      rounds, reps * 3)
    out["threads"] = lib.get_num_threads()
    out["version"] = getattr(lib, "__version__", "")
    return out


def measure(rounds: int = 5, reps: int = 3, processes: int = 2) -> list[str]:
    """Each library ``processes`` times in a child process of its own, alternating; the median of those."""
    runs = paired.children("benchmarks.gpt_step", rounds, processes)
    size = CPU_SIZE
    return [f"GPT-2 training step, CPU float32, {size['n_layer']} layers x {size['n_head']} heads x {size['n_embd']} "
            f"wide, {size['batch']} x {size['block']} tokens, vocabulary {size['vocab']}",
            f"(each library in its own process, {processes} processes each, alternating; in each the median of "
            f"{rounds} rounds)"] + paired.table(runs, (("step", "step (forward, backward, clip, AdamW)"),
                                                       ("gelu", "GELU forward+backward, 12x64x512"),
                                                       ("layer_norm", "LayerNorm(128) f+b, 12x64x128"),
                                                       ("attention", "causal attention f+b, 12x4x64x32"),
                                                       ("linear", "(12x64x512) @ (512x128) f+b")))


def main(argv=None) -> int:
    return paired.main(argv, "python -m benchmarks.gpt_step", __doc__, RESULTS / "cpu-gpt-step.txt", _one_library,
                       lambda rounds: measure(rounds))


if __name__ == "__main__":
    raise SystemExit(main())
