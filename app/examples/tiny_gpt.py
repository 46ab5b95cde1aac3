# A small GPT, built the way GPT-2 is (and nanoGPT after it), that learns to write like the short text below one
# character at a time: token and position embeddings, blocks of causal self-attention (several heads, through
# F.scaled_dot_product_attention) and a GELU feed-forward net, each behind a LayerNorm and added back, the token
# embedding shared with the output layer, AdamW with weight decay on the matrices only, a warm-up and cosine
# learning rate, clipped gradients, dropout; then it writes, sampling each next character from the 5 likeliest
# (top-k). A step takes ~20 ms on a laptop's CPU.
import math

import torch
from torch import nn
from torch.nn import functional as F

TEXT = """a network learns by a loop. it makes a guess, it measures how wrong the guess was, and it moves each of
its weights a little in the direction that makes the guess less wrong. the measure of wrong is the loss. the
direction is the gradient, and backward finds it for every weight at once, walking the graph of the step from the
loss back to the weights. the size of the move is the learning rate. too small and the loss creeps down; too large
and it jumps about or runs away. a step is a forward pass, a backward pass and an update, and a run is many steps.
the loss falls fast at first and then slowly, and the weights settle where the guesses are good. a held out set
that the network never learns from says whether it learned the pattern or only the examples. then it can write:
it guesses the next letter, keeps it, and guesses again.
a model that reads text reads it as numbers. each letter is a row of a table, and the rows are weights too, so the
loop moves them as it moves the rest. the model looks back along the text it has read so far: each position asks
the ones before it which of them matter, and mixes what they hold by how much they matter. that is attention.
between the looks it thinks alone, each position through the same small net. the last layer gives a score to
every letter that could come next, and the loss asks for a high score on the letter that did come next. at the
start every guess is as good as any other, and the loss is the log of the number of letters. soon the model knows
which letters are common, then which follow which, then whole words, and the loss falls with each thing it knows.
when it writes, it does not take the likeliest letter each time, for then it would say the same thing over and
over. it draws a letter at random, the likely ones more often, from the few that are likeliest of all."""

chars = sorted(set(TEXT))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in TEXT])
split = int(0.9 * len(data))
train_data, val_data = data[:split], data[split:]

block_size, n_embd, n_head, n_layer, batch_size, dropout = 32, 64, 4, 2, 16, 0.2


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(n_embd, 3 * n_embd)   # the queries, keys and values of every head, in one product
        self.proj = nn.Linear(n_embd, n_embd)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))  # (B, heads, T, size)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # each position sees itself and the ones before
        return self.drop(self.proj(y.transpose(1, 2).contiguous().view(B, T, C)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(n_embd), SelfAttention()
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.tok.weight = self.head.weight  # one table: a character in, and a score for it out
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, new_tokens, temperature=0.8, top_k=5):
        for _ in range(new_tokens):
            logits = self(idx[:, -block_size:])[:, -1, :] / temperature
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float("inf")  # only the top_k likeliest may come next
            idx = torch.cat((idx, torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)), dim=1)
        return idx


def batch(source):
    ix = torch.randint(len(source) - block_size, (batch_size,))
    x = torch.stack([source[i:i + block_size] for i in ix])
    y = torch.stack([source[i + 1:i + 1 + block_size] for i in ix])
    return x, y


torch.manual_seed(1337)
model = GPT(len(chars))
decay = [p for p in model.parameters() if p.dim() >= 2]  # weight decay on the matrices, not on biases and norms
no_decay = [p for p in model.parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                              lr=3e-3, betas=(0.9, 0.99))
steps, warmup = 400, 20  # past ~250 steps the held-out loss stops falling: the text is short, and the
# model goes on to learn this text rather than text like it (overfitting, which the held-out set is there to show)
print(f"{sum(p.numel() for p in model.parameters()):,} parameters, {len(chars)} characters")

for step in range(steps):
    lr = 3e-3 * (step + 1) / warmup if step < warmup else \
        3e-4 + 0.5 * (3e-3 - 3e-4) * (1 + math.cos(math.pi * (step - warmup) / (steps - warmup)))
    for group in optimizer.param_groups:
        group["lr"] = lr
    x, y = batch(train_data)
    loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if step % 100 == 0 or step == steps - 1:
        model.eval()
        with torch.no_grad():
            held_out = model(*batch(val_data)).item()
        model.train()
        print(f"step {step}: loss {loss.item():.4f}, held-out {held_out:.4f}, lr {lr:.2e}")

start = torch.tensor([[stoi[c] for c in "a network "]])
print("".join(itos[i] for i in model.generate(start, 200)[0].tolist()))
