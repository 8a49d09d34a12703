"""Test-time adaptation (TENT-style entropy minimisation) of a fault classifier for hydraulic
test rigs: trained on one rig whose pressure transducers report gauge pressure, deployed on a
second rig whose transducers report absolute pressure (every channel offset by one atmosphere,
101.3 kPa).  The network is a learned input normaliser (BatchNorm1d) followed by tanh squashing
of sensor spikes and a ReLU MLP; as in TENT, only the BatchNorm affine parameters are adapted,
with Adam, by minimising the mean prediction entropy of each unlabelled test batch.

Mechanism: the deployed model had its BatchNorm converted to FrozenBatchNorm (fixed source
running statistics, affine parameters still trainable) when it was exported, so during
adaptation the input normaliser keeps using the *source* mean and variance.  The offset channels
arrive 50-200 source standard deviations above the source mean, and the tanh right after the
normaliser saturates at exactly +1 on every channel for every test sample: all samples produce
the same features and the same prediction, tanh' underflows to 0 so the BN affine parameters
(the only adapted ones) receive no gradient, and the entropy does not move (a stall, no
non-finite value).

ORIGIN = "net.0": the input FrozenBatchNorm is where the shift should have been removed and is
not; its output drives the tanh right after it (net.1) into saturation.

Fix: adapt with batch statistics, as TENT prescribes (BatchNorm re-estimates mean and variance on
each test batch instead of using frozen source statistics); the source weights, the adapted
parameters, optimiser, data and steps are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "net.0"
SOURCE = ("TENT (Wang et al. ICLR 2021) requires BatchNorm to use test-batch statistics; "
          "FrozenBatchNorm exports (detectron2/torchvision style) keep source statistics; "
          "gauge vs absolute pressure offsets between rigs; tanh saturation under shift.")


class FrozenBatchNorm1d(nn.Module):
    def __init__(self, bn):
        super().__init__()
        self.register_buffer("running_mean", bn.running_mean.clone())
        self.register_buffer("running_var", bn.running_var.clone())
        self.weight = nn.Parameter(bn.weight.detach().clone())
        self.bias = nn.Parameter(bn.bias.detach().clone())
        self.eps = bn.eps

    def forward(self, x):
        return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps) * self.weight + self.bias


def _source_net(d, hidden, n_classes):
    return nn.Sequential(
        nn.BatchNorm1d(d), nn.Tanh(),  # learned input normaliser + tanh squashing of spikes
        nn.Linear(d, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, n_classes),
    )


class Classifier(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(55 + seed)
    d = pick(1, [16, 20, 24])
    hidden = pick(2, [64, 96, 128])
    lr = pick(3, [5e-2, 3e-2, 4e-2])
    batch = pick(4, [64, 96, 128])
    steps = 120
    n_classes = 5

    # pressure transducer channels in kPa (gauge pressure on the source rig)
    centres = torch.randn(n_classes, d, generator=g) * 0.45
    mixing = torch.randn(d, d, generator=g) / d ** 0.5
    unit_mean = 200 + 300 * torch.rand(d, generator=g)  # kPa (gauge) on the source rig
    unit_std = 0.5 + 1.5 * torch.rand(d, generator=g)

    def draw(n, absolute):
        y = torch.randint(0, n_classes, (n,), generator=g)
        z = centres[y] + 1.0 * torch.randn(n, d, generator=g)
        z = z + 0.3 * torch.tanh(z @ mixing)
        x = unit_mean + unit_std * z
        if absolute:
            x = x + 101.3  # absolute pressure: gauge + 1 atm
        return x, y

    # ---- source training on rig A (done once, before deployment) ----
    net = _source_net(d, hidden, n_classes)
    opt_src = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(150):
        x, y = draw(128, absolute=False)
        opt_src.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt_src.step()

    # ---- deployment / test-time adaptation on rig B ----
    for i, m in enumerate(net):
        if isinstance(m, nn.BatchNorm1d):
            if fixed:
                bn = nn.BatchNorm1d(m.num_features, track_running_stats=False)
                bn.weight.data.copy_(m.weight.data)
                bn.bias.data.copy_(m.bias.data)
                net[i] = bn
            else:
                net[i] = FrozenBatchNorm1d(m)
    for p in net.parameters():
        p.requires_grad_(False)
    adapt = []
    for m in net.modules():
        if isinstance(m, (nn.BatchNorm1d, FrozenBatchNorm1d)):
            m.weight.requires_grad_(True)
            m.bias.requires_grad_(True)
            adapt += [m.weight, m.bias]
    model = Classifier(net)

    batches = []
    for _ in range(steps):
        x, y = draw(batch, absolute=True)
        batches.append((x, y))  # labels are never used by the loss

    def entropy_loss(logits, _unused_labels):
        logp = F.log_softmax(logits, -1)
        return -(logp.exp() * logp).sum(-1).mean()

    optimizer = torch.optim.Adam(adapt, lr=lr)
    return {"model": model, "optimizer": optimizer, "loss_fn": entropy_loss,
            "batches": batches, "steps": steps}
