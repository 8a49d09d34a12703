"""Residual 1-D conv time-stepper (PDE surrogate) for periodic advection-diffusion, weights
initialised with torch.nn.init.trunc_normal_ at its default std of 1.

Mechanism: the surrogate learns u(t+dt) = u(t) + N(u(t)) with N a stack of circular Conv1d
layers (kernel 5, GELU).  The init helper calls nn.init.trunc_normal_(m.weight) without an
std argument, expecting the ViT-style 0.02, but torch's default is std=1 (truncated at +-2).
With a fan-in of C*5 = 120-240 every conv multiplies the activation scale by ~sqrt(fan_in)*0.6,
i.e. by ~7-9, so after 4-6 convs the update N(u) is 1e4-1e6 times the field itself.  The
huge first residual turns into an equally huge weight gradient for every conv (the chain of
std-1 weights amplifies it at each layer), the first SGD steps throw the weights far out
and the following forward passes overflow: the L1 loss goes inf/NaN within a few steps.

ORIGIN: "net.0", the first conv of the residual branch.  The blow-up is geometric over the
whole stack, but it starts at the first layer whose std-1 weights multiply a unit-scale field
by its fan-in; every later layer repeats it.

Fix: initialise the convs with trunc_normal_(std = sqrt(2 / fan_in)) (Kaiming scale for the
fan-in), biases zero.  Seeds change the channel width, the depth, the learning rate and the
batch size.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("PyTorch docs: nn.init.trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0); known "
          "pitfall of calling it without std=.02 (timm/ViT init ports, e.g. discussions in "
          "pytorch-image-models issues) applied to a learned PDE time-stepper as in "
          "PDEBench/PDEArena 1-D baselines.")

NX = 64


def _fields(n, g, nu, c, dt):
    k = torch.fft.rfftfreq(NX, d=1.0 / NX)
    amp = torch.randn(n, 6, generator=g) / torch.arange(1, 7).float()
    ph = 2 * math.pi * torch.rand(n, 6, generator=g)
    x = torch.linspace(0, 2 * math.pi, NX + 1)[:-1]
    u0 = sum(amp[:, m:m + 1] * torch.sin((m + 1) * x + ph[:, m:m + 1]) for m in range(6))
    uh = torch.fft.rfft(u0)
    prop = torch.exp((-nu * k ** 2 - 1j * c * k) * dt)
    u1 = torch.fft.irfft(uh * prop, n=NX)
    return u0.unsqueeze(1).float(), u1.unsqueeze(1).float()


class ConvStepper(nn.Module):
    def __init__(self, ch, depth):
        super().__init__()
        layers = [nn.Conv1d(1, ch, 5, padding=2, padding_mode="circular"), nn.GELU()]
        for _ in range(depth):
            layers += [nn.Conv1d(ch, ch, 5, padding=2, padding_mode="circular"), nn.GELU()]
        layers += [nn.Conv1d(ch, 1, 5, padding=2, padding_mode="circular")]
        self.net = nn.Sequential(*layers)

    def forward(self, u):
        return u + self.net(u)


def build(seed: int, fixed: bool = False) -> dict:
    ch = [32, 24, 48][seed % 3]
    depth = [3, 4, 2][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    bs = [16, 32, 24][seed % 3]
    steps = 100
    torch.manual_seed(seed)
    model = ConvStepper(ch, depth)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                fan_in = m.in_channels * m.kernel_size[0]
                nn.init.trunc_normal_(m.weight, std=math.sqrt(2.0 / fan_in))
            else:
                nn.init.trunc_normal_(m.weight)        # default std=1.0 (!)
            nn.init.zeros_(m.bias)
    g = torch.Generator().manual_seed(2000 + seed)
    nu, c, dt = 0.05, 1.0, 0.2
    batches = [_fields(bs, g, nu, c, dt) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
