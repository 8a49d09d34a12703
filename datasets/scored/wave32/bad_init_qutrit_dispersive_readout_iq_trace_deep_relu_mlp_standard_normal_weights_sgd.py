"""Qutrit dispersive-readout discriminator: a deep ReLU MLP classifies demodulated I/Q time traces
of the readout resonator into |0>, |1>, |2>. The practitioner initialises every Linear with
nn.init.normal_(weight, 0, 1) ("standard normal weights", as in many old NumPy-era tutorials)
instead of a fan-in-scaled init.

Mechanism: with N(0,1) weights each ReLU layer multiplies the activation scale by about
sqrt(fan_in/2) (~5-8 here), so the logits are already ~1e5-1e8 at step 0, growing geometrically
with depth. Cross-entropy on such logits is enormous, the gradients are of the same scale, and
the first SGD steps blow the weights up until the loss becomes inf/NaN.

ORIGIN: "net.0", the first Linear: the scale error starts there (every layer repeats it, and the
geometric growth is measured from the first layer's output onwards).
Fix: Kaiming-normal (fan_in, relu) weights and zero biases; everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("He et al. 2015 (activation variance grows by fan_in*Var(w)/2 per ReLU layer); "
          "CS231n 'weight initialization' notes: N(0,1) weights make deep nets explode; "
          "superconducting-qubit readout ML discriminators (Lienhard et al. 2022)")


def _traces(g, bs, t_len):
    y = torch.randint(0, 3, (bs,), generator=g)
    t = torch.linspace(0, 1, t_len)
    # state-dependent resonator response: different steady-state IQ points + ring-up
    centres = torch.tensor([[1.0, 0.2], [0.3, 1.0], [-0.6, 0.5]])
    ring = 1 - torch.exp(-t / 0.15)
    c = centres[y]
    # T1 decay during readout for some |1>/|2> shots
    decay = (torch.rand(bs, generator=g) < 0.08) & (y > 0)
    tdec = torch.rand(bs, generator=g)[:, None]
    w = torch.where(decay[:, None] & (t[None, :] > tdec), torch.zeros(1), torch.ones(1))
    i = ring * (c[:, :1] * w + centres[0, 0] * (1 - w))
    q = ring * (c[:, 1:] * w + centres[0, 1] * (1 - w))
    iq = torch.stack([i, q], 1) + 0.35 * torch.randn(bs, 2, t_len, generator=g)
    return iq.flatten(1), y


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(100 + seed)
    depth = [6, 7, 8][seed % 3]
    width = [128, 96, 64][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    t_len, steps = 50, 100
    layers, d = [], 2 * t_len
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 3))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_traces(g, bs, t_len) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
