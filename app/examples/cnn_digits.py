# A small convolutional net (two convolutions, each with a ReLU and a 2x2 max pool, then a linear layer), as a
# first image classifier is written after "What is torch.nn really?", trained on digits drawn here from a 5x7
# pixel font at random places on noise: nothing is downloaded, and the net must find the strokes wherever
# they are, which is what convolutions are for.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

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
    """n images of 16 x 16: a digit at a random place, on noise."""
    labels = torch.randint(0, 10, (n,), generator=generator)
    images = 0.2 * torch.randn(n, 1, 16, 16, generator=generator)
    rows = torch.randint(0, 16 - 7 + 1, (n,), generator=generator).tolist()
    cols = torch.randint(0, 16 - 5 + 1, (n,), generator=generator).tolist()
    for i, (r, c) in enumerate(zip(rows, cols)):
        images[i, 0, r:r + 7, c:c + 5] += GLYPHS[labels[i]]
    return images, labels


torch.manual_seed(0)
drawing = torch.Generator().manual_seed(1)
train = TensorDataset(*draw(2000, drawing))
test_x, test_y = draw(500, drawing)
loader = DataLoader(train, batch_size=64, shuffle=True)

model = nn.Sequential(
    nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 16 -> 16 maps of 8 x 8
    nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # -> 32 maps of 4 x 4
    nn.Flatten(), nn.Linear(32 * 4 * 4, 10),                                  # -> 10 scores
)
print(model)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for epoch in range(12):
    model.train()
    for xb, yb in loader:  # 32 mini-batches an epoch
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    with torch.no_grad():
        accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
    print(f"epoch {epoch + 1}: loss {loss.item():.4f}, held-out accuracy {accuracy:.1%}")
