"""Structure-prototype classification from composition alone, CrabNet-style: each element of a
formula is a token (element embedding + a sinusoidal encoding of its molar fraction), a small
post-LN TransformerEncoder mixes them, fraction-weighted pooling and a linear head give logits
over prototype classes (rock-salt, perovskite, spinel, fluorite, wurtzite, ...).
Cross-entropy, Adam.

Mechanism: the Adam lr was set to 0.5 - 1.0 (the value used by the group's Adagrad-style
sparse linear baseline on element one-hot features, and ~1000x the 1e-4 - 1e-3 that transformer
recipes use, with no warmup). Every Adam step moves every weight by ~lr regardless of gradient
size, so after one step the attention, FFN and head weights (init scale ~0.05-0.1) are an
order of magnitude larger than at init: the logits explode (loss jumps to 10-70), then the
post-LN residual stream and the huge, oscillating weights leave the net able to do no better
than the class prior; the loss drifts back down to ~ln(n_classes) and stays there, never
below its first-steps value. No NaN / inf.

ORIGIN: None (lr_too_high): the overshoot is in every parameter's update, not in one module.

Fix: lr 1e-3 (same Adam, model, data, steps).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: transformers trained with Adam at a too-high lr without warmup fail to "
          "learn / collapse to the prior (Liu et al. 2020 'Understanding the difficulty of "
          "training transformers'; Xiong et al. 2020 on post-LN warmup); CrabNet composition "
          "transformer (Wang et al. 2021, npj Comput. Mater.).")

N_ELEM = 60


class FracEncoding(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_buffer("freq", torch.exp(torch.arange(0, d, 2).float() * (-math.log(50.0) / d)))

    def forward(self, frac):
        a = frac.unsqueeze(-1) * 50.0 * self.freq
        return torch.cat([torch.sin(a), torch.cos(a)], -1)


class CompositionTransformer(nn.Module):
    def __init__(self, d, layers, n_cls):
        super().__init__()
        self.embed = nn.Embedding(N_ELEM + 1, d, padding_idx=0)
        self.frac_enc = FracEncoding(d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, n_cls)

    def forward(self, elem, frac):
        pad = elem == 0
        h = self.embed(elem) + self.frac_enc(frac)
        h = self.encoder(h, src_key_padding_mask=pad)
        w = frac.masked_fill(pad, 0.0).unsqueeze(-1)
        return self.head((h * w).sum(1) / w.sum(1))


def _formulas(g, n, n_cls, max_el=4):
    # each prototype has characteristic stoichiometry and element "families"
    elem = torch.zeros(n, max_el, dtype=torch.long)
    frac = torch.zeros(n, max_el)
    y = torch.randint(0, n_cls, (n,), generator=g)
    stoich = [[1, 1], [1, 1, 3], [1, 2, 4], [1, 2], [1, 1], [2, 3], [1, 1, 1], [3, 1]]
    for i in range(n):
        c = int(y[i])
        st = stoich[c % len(stoich)]
        for j, s in enumerate(st):
            fam = (c * 7 + j * 13) % (N_ELEM - 8)
            elem[i, j] = 1 + fam + int(torch.randint(0, 8, (1,), generator=g))
            frac[i, j] = s
        frac[i] = frac[i] / frac[i].sum()
    return elem, frac, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [32, 64, 48][seed % 3]
    layers = [2, 2, 3][seed % 3]
    lr = [0.5, 1.0, 0.8][seed % 3]
    if fixed:
        lr = 1e-3
    bs = [32, 48, 64][seed % 3]
    n_cls = 8
    steps = 150
    torch.manual_seed(seed)
    model = CompositionTransformer(d, layers, n_cls)
    elem, frac, y = _formulas(g, 2000, n_cls)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, elem.shape[0], (bs,), generator=g)
        batches.append(((elem[idx], frac[idx]), y[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
