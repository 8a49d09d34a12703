"""Crystal-system classifier (7 systems) for simulated powder X-ray diffraction patterns: a plain
stack of Conv1d+ReLU layers, adaptive average pooling to 8 positions (peak positions matter), a flattened Linear head with LogSoftmax + NLLLoss.
The author ported a TensorFlow script and re-initialises EVERY conv/linear weight with
normal(std=0.01) (the old tf.random_normal_initializer(stddev=0.01) default), biases zero.

Mechanism: with fan_in = channels*kernel ~ 60-160, std 0.01 gives a per-layer gain of
sqrt(fan_in/2)*0.01 ~ 0.06-0.09, so the signal shrinks geometrically with depth: after 5-7 conv
layers the pooled features are ~1e-7 of the input scale, the logits are all ~0 (loss = ln 7),
and the backward signal to every layer is scaled by the product of the other layers' tiny
weights. Plain SGD-momentum cannot escape this flat region in the run: the loss stays at ln 7.

ORIGIN: "features.0", the first Conv1d: the shrinkage starts at the first layer and compounds
through every following one.
Fix: Kaiming-normal (fan_in, relu) init for the convs and PyTorch's default for the head.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Glorot & Bengio 2010 / He et al. 2015 on vanishing activations with too-small init; "
          "TF1 random_normal_initializer(stddev=0.01) ports; XRD crystal-system CNNs "
          "(Park et al. 2017, IUCrJ)")

N_BINS, N_CLS = 256, 7


def _patterns(g, bs):
    tt = torch.linspace(10, 80, N_BINS)                  # 2-theta in degrees
    y = torch.randint(0, N_CLS, (bs,), generator=g)
    a = 3.9 + 0.3 * torch.rand(bs, generator=g)
    # each crystal system: its own set of allowed (h^2+k^2+l^2)-like multipliers
    mult = torch.tensor([[1, 2, 3, 4, 5, 6], [1, 2, 4, 5, 8, 9], [3, 4, 8, 11, 12, 16],
                         [1, 3, 4, 7, 9, 12], [2, 4, 6, 8, 10, 12], [1, 4, 5, 9, 10, 13],
                         [2, 3, 5, 7, 11, 13]]).float()
    m = mult[y]
    s = torch.sqrt(m) * 1.5406 / (2 * a[:, None])         # sin(theta) = lambda*sqrt(N)/(2a)
    two_theta = 2 * torch.rad2deg(torch.asin(s.clamp(max=0.99)))
    amp = 0.3 + torch.rand(bs, m.shape[1], generator=g)
    pat = (amp[:, :, None] * torch.exp(-((tt - two_theta[:, :, None]) / 0.4) ** 2)).sum(1)
    pat = pat / pat.amax(1, keepdim=True) + 0.02 * torch.randn(bs, N_BINS, generator=g)
    return pat.unsqueeze(1), y


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(200 + seed)
    depth = [5, 6, 7][seed % 3]
    ch = [16, 24, 32][seed % 3]
    k = [5, 5, 3][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = [0.02, 0.03, 0.01][seed % 3]
    steps = 150
    layers, c = [], 1
    for i in range(depth):
        layers += [nn.Conv1d(c, ch, k, padding=k // 2, stride=2 if i % 2 else 1), nn.ReLU()]
        c = ch
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(*layers))
    model.add_module("pool", nn.AdaptiveAvgPool1d(8))
    model.add_module("flat", nn.Flatten())
    model.add_module("head", nn.Linear(8 * c, N_CLS))
    model.add_module("logp", nn.LogSoftmax(dim=1))
    for name, m in model.named_modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                if isinstance(m, nn.Conv1d):
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_patterns(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.NLLLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
