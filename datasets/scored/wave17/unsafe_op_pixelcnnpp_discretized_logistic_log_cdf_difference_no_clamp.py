"""PixelCNN++-style model (masked-conv stack with ELU, per-pixel mean and log-scale heads) with a
discretised logistic likelihood over 8-bit pixels rescaled to [-1, 1], Adam.

Mechanism: the likelihood is written the naive way: log(cdf_plus - cdf_min) with
cdf = sigmoid((x -+ 1/255 - mu) / s) for every pixel, without PixelCNN++'s safeguards (log-CDF for
the edge bins, log_pdf_mid fallback, clamp(min=1e-12)). The run is calm at first; as the model
becomes confident (log_scale falls) a mispredicted pixel lands >~17 scales from its mean, both
sigmoids round to exactly 0 or 1 in float32, the difference is 0 and log(0) = -inf: the loss
becomes inf and backward yields NaN. ORIGIN: the likelihood head (logistic) that evaluates
the CDF difference. Fix: torch.log(torch.clamp(cdf_plus - cdf_min, min=1e-12)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "logistic"
SOURCE = "openai/pixel-cnn discretized_logistic_mix_loss safeguards (log_cdf_plus, log_one_minus_cdf_min, clamp 1e-12) dropped in re-implementations; NaN/inf loss mid-training"


class MaskedConv2d(nn.Conv2d):
    def __init__(self, cin, cout, k, mask_type):
        super().__init__(cin, cout, k, padding=k // 2)
        m = torch.ones_like(self.weight)
        c = k // 2
        m[:, :, c, c + (mask_type == "B"):] = 0
        m[:, :, c + 1:] = 0
        self.register_buffer("mask", m)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class DiscretizedLogistic(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.safe = safe

    def forward(self, params, x):
        mu, log_s = params.chunk(2, 1)
        log_s = log_s.clamp(min=-7.0)
        inv_s = torch.exp(-log_s)
        cdf_plus = torch.sigmoid(inv_s * (x + 1 / 255 - mu))
        cdf_min = torch.sigmoid(inv_s * (x - 1 / 255 - mu))
        p = cdf_plus - cdf_min
        if self.safe:
            p = p.clamp(min=1e-12)
        return torch.log(p)


class PixelCNNpp(nn.Module):
    def __init__(self, c, n_layers, safe):
        super().__init__()
        layers = [MaskedConv2d(1, c, 5, "A"), nn.ELU()]
        for _ in range(n_layers):
            layers += [MaskedConv2d(c, c, 3, "B"), nn.ELU()]
        layers += [nn.Conv2d(c, 2, 1)]
        self.net = nn.Sequential(*layers)
        self.logistic = DiscretizedLogistic(safe)

    def forward(self, x):
        return self.logistic(self.net(x), x)


def build(seed, fixed=False):
    cfg = [dict(c=16, L=3, lr=3e-3, bs=16), dict(c=24, L=2, lr=2e-3, bs=24), dict(c=12, L=4, lr=4e-3, bs=12)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PixelCNNpp(cfg["c"], cfg["L"], safe=fixed)
    steps = 150
    batches = []
    for _ in range(steps):
        rows = torch.randint(0, 2, (cfg["bs"], 1, 8, 1), generator=g).float()
        img = rows.expand(-1, -1, -1, 8) * 200 + 20
        flip = torch.rand(cfg["bs"], 1, 8, 8, generator=g) < 0.01
        img = torch.where(flip, 255 - img, img)
        x = img / 127.5 - 1
        batches.append((x, None))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=lambda logp, _: -logp.sum((1, 2, 3)).mean(), batches=batches, steps=steps)
