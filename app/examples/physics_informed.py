# A physics-informed network: nobody gives it a single value of the function it learns. Its loss is an equation,
# u'' + u = 0 on [0, 2 pi], with u(0) = 0 and u'(0) = 1, whose one solution is sin(x). The derivatives u' and u''
# of the network's output by its input come from autograd.grad with create_graph=True, so that they are themselves
# part of the graph the loss's backward() walks: gradients of gradients. The held-out line compares the network
# with sin(x), which it never saw.
import math

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=300, gamma=0.5)
zero = torch.zeros(1, 1, requires_grad=True)
check = torch.linspace(0, 2 * math.pi, 101).reshape(-1, 1)

for step in range(1200):
    x = (torch.rand(64, 1) * 2 * math.pi).requires_grad_()  # fresh points of the interval each step
    u = model(x)
    du, = torch.autograd.grad(u.sum(), x, create_graph=True)    # u'(x), kept differentiable
    d2u, = torch.autograd.grad(du.sum(), x, create_graph=True)  # u''(x)
    u0 = model(zero)
    du0, = torch.autograd.grad(u0.sum(), zero, create_graph=True)
    loss = ((d2u + u) ** 2).mean() + (u0 ** 2).sum() + ((du0 - 1) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    schedule.step()
    if step % 100 == 99:
        with torch.no_grad():
            error = (model(check) - torch.sin(check)).abs().max().item()
        print(f"step {step + 1}: equation loss {loss.item():.5f}, largest distance from sin(x) {error:.4f}")

with torch.no_grad():
    for v in (0.0, math.pi / 2, math.pi, 3 * math.pi / 2):
        print(f"u({v:.3f}) = {model(torch.tensor([[v]])).item():+.4f}   sin = {math.sin(v):+.4f}")
