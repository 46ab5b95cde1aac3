# A denoising autoencoder: the digits of the CNN example (a 5x7 pixel font, drawn here: nothing is downloaded), each
# under heavy noise, squeezed by two strided convolutions into 4 x 4 maps, then grown back by two transposed
# convolutions ("deconvolutions", as an image generator grows its pictures) into a clean 16 x 16 digit. The loss
# is how far the rebuilt picture is from the clean one; the held-out line prints a rebuilt digit as text.
import torch
from torch import nn
from torch.nn import functional as F

FONT = {  # 5 columns x 7 rows, a row per string
    0: ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
    1: ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
    2: ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    3: ["11111", "00010", "00100", "00010", "00001", "10001", "01110"],
    4: ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
    5: ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
    6: ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
    7: ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    8: ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
    9: ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
}
GLYPHS = torch.tensor([[[float(c) for c in row] for row in FONT[d]] for d in range(10)])  # (10, 7, 5)


def draw(n, generator):
    """n clean 16 x 16 images of a digit at a random place, and the same under noise."""
    labels = torch.randint(0, 10, (n,), generator=generator)
    clean = torch.zeros(n, 1, 16, 16)
    rows = torch.randint(0, 16 - 7 + 1, (n,), generator=generator).tolist()
    cols = torch.randint(0, 16 - 5 + 1, (n,), generator=generator).tolist()
    for i, (r, c) in enumerate(zip(rows, cols)):
        clean[i, 0, r:r + 7, c:c + 5] = GLYPHS[labels[i]]
    return clean, clean + 0.6 * torch.randn(n, 1, 16, 16, generator=generator)


torch.manual_seed(0)
drawing = torch.Generator().manual_seed(2)
clean, noisy = draw(1200, drawing)
test_clean, test_noisy = draw(200, drawing)

model = nn.Sequential(
    nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),      # 16 x 16 -> 16 maps of 8 x 8
    nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),     # -> 32 maps of 4 x 4: the squeeze
    nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),  # -> 16 maps of 8 x 8
    nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1),        # -> one 16 x 16 picture
)
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=12 * 18)

for epoch in range(12):
    order = torch.randperm(len(clean))
    for start in range(0, len(clean) - 63, 64):  # 18 mini-batches of 64
        batch = order[start:start + 64]
        loss = F.mse_loss(model(noisy[batch]), clean[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    with torch.no_grad():
        held_out = F.mse_loss(model(test_noisy), test_clean).item()
    print(f"epoch {epoch + 1}: loss {loss.item():.4f}, held-out {held_out:.4f} (the noise alone: "
          f"{F.mse_loss(test_noisy, test_clean).item():.4f})")

with torch.no_grad():
    rebuilt = model(test_noisy[:1])[0, 0]
for row in range(16):  # the first held-out digit, rebuilt from its noise
    print("".join("#" if v > 0.5 else "." for v in rebuilt[row].tolist()))
