"""KitNET (Kitsune NIDS) autoencoder ensemble fed a NaN jitter feature from a 1-packet flow.

Mechanism: Kitsune (Mirsky et al., NDSS 2018) extracts damped incremental statistics per
host/channel/socket, min-max normalises them and feeds feature clusters to an ensemble of
small sigmoid autoencoders; the RMSEs of the ensemble are reconstructed by an output
autoencoder. Here it is trained mini-batch in PyTorch with the summed reconstruction losses.
The offline feature extractor computes the inter-arrival jitter with an unbiased std
(ddof=1); for a flow that has a single packet this is 0/0 = NaN. Benign captures almost
never contain such flows, but one shard does: the batch that contains it yields a NaN loss,
the NaN gradient is written into every ensemble member and the output layer, and every
later loss is NaN.

ORIGIN: None: the model and the optimiser are fine, a single corrupt feature row is the cause.

Fix: the same row with the jitter of a one-packet flow defined as 0 (what the reference
Kitsune AfterImage does), i.e. the corrupt value removed; the run is otherwise identical.
"""
import math

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Mirsky et al. 2018 'Kitsune: an ensemble of autoencoders for online network "
          "intrusion detection' (KitNET ensemble + output AE); NaN from std(ddof=1) of a "
          "single-packet flow in an offline feature extractor")


class SigmoidAE(nn.Module):
    def __init__(self, d, ratio=0.75):
        super().__init__()
        h = max(1, int(math.ceil(ratio * d)))
        self.enc = nn.Linear(d, h)
        self.dec = nn.Linear(h, d)

    def forward(self, x):
        return torch.sigmoid(self.dec(torch.sigmoid(self.enc(x))))


class KitNET(nn.Module):
    def __init__(self, clusters):
        super().__init__()
        self.clusters = clusters
        self.ensemble = nn.ModuleList([SigmoidAE(len(c)) for c in clusters])
        self.output = SigmoidAE(len(clusters))

    def forward(self, x):
        errs, recon_losses = [], []
        for idx, ae in zip(self.clusters, self.ensemble):
            xi = x[:, idx]
            ri = ae(xi)
            se = ((xi - ri) ** 2).mean(dim=1)
            recon_losses.append(se.mean())
            errs.append(torch.sqrt(se + 1e-12))
        rmse = torch.stack(errs, dim=1)
        out = self.output(rmse.detach())
        out_loss = ((rmse.detach() - out) ** 2).mean()
        return torch.stack(recon_losses).sum() + out_loss


def kitnet_loss(total, _target):
    return total


def _flows(g, n, n_feat, mix):
    z = torch.randn(n, mix.shape[0], generator=g)
    # damped packet-size / rate statistics are heavy tailed: after min-max normalisation
    # most benign values sit close to 0
    x = torch.sigmoid(z @ mix - 3.0 + 0.1 * torch.randn(n, n_feat, generator=g))
    return x


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    cfg = [
        dict(n_feat=40, max_cluster=10, bs=64, lr=0.5, steps=90, bad=37),
        dict(n_feat=48, max_cluster=8, bs=32, lr=0.4, steps=80, bad=53),
        dict(n_feat=30, max_cluster=6, bs=128, lr=0.8, steps=70, bad=18),
    ][seed % 3]
    F = cfg["n_feat"]
    perm = torch.randperm(F, generator=g)
    clusters = [perm[i:i + cfg["max_cluster"]] for i in range(0, F, cfg["max_cluster"])]
    model = KitNET(clusters)
    mix = torch.randn(5, F, generator=g)
    jitter_col = int(perm[3])

    batches = []
    for step in range(cfg["steps"]):
        x = _flows(g, cfg["bs"], F, mix)
        if step == cfg["bad"]:
            row = int(torch.randint(0, cfg["bs"], (1,), generator=g))
            # flow with a single packet: std(ddof=1) of one inter-arrival -> 0/0
            iat = torch.tensor([0.013])
            if fixed:
                jitter = torch.tensor(0.0)
            else:
                jitter = ((iat - iat.mean()) ** 2).sum() / (iat.numel() - 1)
            x[row, jitter_col] = jitter
        batches.append((x, x))

    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.5)
    return dict(model=model, optimizer=optimizer, loss_fn=kitnet_loss, batches=batches,
                steps=cfg["steps"])
