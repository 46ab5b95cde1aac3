# A spectral layer, the heart of a Fourier neural operator, learns how heat spreads. Given the temperature around a
# ring, u0(x), it predicts the temperature a moment t later. Heat damps each Fourier mode k of the profile by
# exp(-k^2 t), so a layer that multiplies each mode of its input's spectrum (torch.fft.rfft) by a learned complex
# weight, then goes back (torch.fft.irfft), can learn that operator exactly. Its weights are complex parameters
# (dtype=torch.cfloat); their gradient is dL/d(real) + i dL/d(imag), and Adam steps each weight's two parts. The
# lines at the end set the weights it learned beside exp(-k^2 t), which it was never told. (Mode 0's imaginary part
# stays where it started: a real profile's mean has none, and irfft leaves it out, so no gradient reaches it.)
import math

import torch
from torch import nn

torch.manual_seed(0)
n, modes, t = 64, 12, 0.02  # points around the ring, Fourier modes learned, time elapsed
k = torch.arange(n // 2 + 1, dtype=torch.float32)
decay = torch.exp(-k**2 * t)  # what heat does to mode k (the answer, kept for the check and for making data)


def profiles(batch):
    """Random smooth temperature profiles: a few random Fourier modes, the higher ones weaker."""
    spectrum = torch.zeros(batch, n // 2 + 1, dtype=torch.cfloat)
    spectrum[:, 1:modes] = torch.randn(batch, modes - 1, dtype=torch.cfloat) / torch.arange(1, modes)
    spectrum[:, 0] = torch.randn(batch)  # (the mean temperature: a real number)
    return torch.fft.irfft(spectrum, n=n, norm="forward")


def heat(u0):
    """The exact answer: each mode damped by exp(-k^2 t)."""
    return torch.fft.irfft(torch.fft.rfft(u0) * decay, n=n)


class SpectralLayer(nn.Module):
    """Multiplies the first `modes` Fourier modes of its input by learned complex weights, drops the others."""

    def __init__(self, modes):
        super().__init__()
        self.modes = modes
        self.weight = nn.Parameter(0.1 * torch.randn(modes, dtype=torch.cfloat))

    def forward(self, u):
        spectrum = torch.fft.rfft(u)
        out = torch.zeros_like(spectrum)
        out[:, : self.modes] = spectrum[:, : self.modes] * self.weight
        return torch.fft.irfft(out, n=u.shape[-1])


model = SpectralLayer(modes)
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
held_out = profiles(256)
for step in range(400):
    u0 = profiles(32)
    loss = ((model(u0) - heat(u0)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 100 == 99:
        with torch.no_grad():
            error = (model(held_out) - heat(held_out)).norm() / heat(held_out).norm()
        print(f"step {step + 1}: loss {loss.item():.2e}, held-out relative error {error.item():.2e}")

with torch.no_grad():
    print("mode  learned weight          exp(-k^2 t)")
    for mode in range(0, modes, 2):
        w = model.weight[mode].item()
        print(f"{mode:4d}  {w.real:+.4f} {w.imag:+.4f}j      {math.exp(-mode**2 * t):.4f}")
