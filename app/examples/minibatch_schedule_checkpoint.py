# Past the tutorial: the fit of sin(x) as a training script of one's own is often written, with mini-batches
# from a DataLoader, a learning-rate schedule, a held-out set, and a checkpoint saved and loaded back.
import math
import os
import tempfile

import torch
from torch import nn
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 2000).unsqueeze(1)
y = torch.sin(x)
train_set, test_set = random_split(TensorDataset(x, y), [0.9, 0.1])
loader = DataLoader(train_set, batch_size=100, shuffle=True)
test_x, test_y = next(iter(DataLoader(test_set, batch_size=len(test_set))))

model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = StepLR(optimizer, step_size=10, gamma=0.5)  # halve the rate every 10 epochs

for epoch in range(30):
    model.train()
    for xb, yb in loader:  # 18 shuffled mini-batches an epoch
        loss = loss_fn(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
    model.eval()
    with torch.no_grad():
        test_loss = loss_fn(model(test_x), test_y).item()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: train {loss.item():.6f}, held out {test_loss:.6f}, lr {scheduler.get_last_lr()[0]:g}")

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 30}, path)
    checkpoint = torch.load(path)
    again = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    again.load_state_dict(checkpoint["model"])
    with torch.no_grad():
        same = torch.equal(again(test_x), model(test_x))
    print(f"checkpoint of epoch {checkpoint['epoch']} loaded back: the same predictions: {same}")
