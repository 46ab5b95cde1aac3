# The two-layer net with autograd: loss.backward() computes the gradients (each backward() is a step).
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

N, D_in, H, D_out = 64, 1000, 100, 10

x = torch.randn(N, D_in, device=device)
y = torch.randn(N, D_out, device=device)

# requires_grad=True: autograd computes the gradients of the loss with respect to these
w1 = torch.randn(D_in, H, device=device, requires_grad=True)
w2 = torch.randn(H, D_out, device=device, requires_grad=True)

learning_rate = 1e-6
for t in range(500):
    # Forward pass: no intermediate values kept by hand, autograd records what it needs
    y_pred = x.mm(w1).clamp(min=0).mm(w2)

    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # Backward pass: w1.grad and w2.grad receive the gradients
    loss.backward()

    # Update the weights by hand, without recording it; then zero the gradients
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
