"""TabTransformer house-price regressor trained with float16 autocast and a GradScaler.
The price head predicts a log-price and returns torch.exp(...) so prices stay positive;
under fp16 autocast the head's Linear and the exp run in half precision, so once the
learned log-price passes ln(65504) = 11.09 (a $65.5k house) the prediction becomes inf,
the MSLE loss is inf and the GradScaler skips every following step (the overflow is in the
forward, which no loss scale can fix). fixed=True runs only the price head in float32.
"""
import math

import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "head"
SOURCE = ("fp16 range limit (max 65504) for outputs in natural units: HF transformers upcasts heads / "
          "keeps modules in fp32 (_keep_in_fp32_modules, logits.float()); PyTorch AMP docs on ops that "
          "must run in float32; TabTransformer (Huang et al. 2020) on tabular price data with an exp "
          "link and a Keras-style mean-squared-log-error loss")

N_CAT = 6
CARD = [12, 5, 8, 4, 20, 6]  # neighbourhood, house type, condition, garage, zip, heating ...
N_CONT = 4                    # standardised living area, lot size, age, rooms
D = 32


class PriceHead(nn.Module):
    """log-price -> price (positive). fp32=True keeps this head out of half precision."""

    def __init__(self, d_in, fp32):
        super().__init__()
        self.proj = nn.Linear(d_in, 1)
        self.fp32 = fp32

    def forward(self, h):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return torch.exp(self.proj(h.float())).squeeze(-1)
        return torch.exp(self.proj(h)).squeeze(-1)


class TabTransformer(nn.Module):
    def __init__(self, fp32_head):
        super().__init__()
        self.cat_emb = nn.ModuleList([nn.Embedding(c, D) for c in CARD])
        self.col_emb = nn.Parameter(torch.randn(N_CAT, D) * 0.02)
        layer = nn.TransformerEncoderLayer(D, nhead=4, dim_feedforward=64, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.cont_norm = nn.LayerNorm(N_CONT)
        self.mlp = nn.Sequential(nn.Linear(N_CAT * D + N_CONT, 64), nn.ReLU(),
                                 nn.Linear(64, 32), nn.ReLU())
        self.head = PriceHead(32, fp32_head)

    def forward(self, x_cat, x_cont):
        tok = torch.stack([emb(x_cat[:, i]) for i, emb in enumerate(self.cat_emb)], 1) + self.col_emb
        h = self.encoder(tok).flatten(1)
        h = torch.cat([h, self.cont_norm(x_cont).to(h.dtype)], -1)
        return self.head(self.mlp(h))


def msle(pred, price):
    # Keras-style mean squared logarithmic error on prices in dollars
    return ((torch.log1p(pred) - torch.log1p(price)) ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 150, 64
    cat_eff = [torch.randn(c, generator=g) * 0.25 for c in CARD]
    cont_w = torch.randn(N_CONT, generator=g) * 0.15
    base = 12.3 + 0.1 * torch.rand(1, generator=g).item()  # median price ~ $220-250k
    batches = []
    for _ in range(steps):
        x_cat = torch.stack([torch.randint(0, c, (bs,), generator=g) for c in CARD], 1)
        x_cont = torch.randn(bs, N_CONT, generator=g)
        logp = base + sum(cat_eff[i][x_cat[:, i]] for i in range(N_CAT)) + x_cont @ cont_w
        logp = logp + 0.1 * torch.randn(bs, generator=g)
        batches.append(((x_cat, x_cont), torch.exp(logp)))
    model = TabTransformer(fp32_head=fixed)
    lr = 1e-3 * (1.0 + 0.25 * torch.rand(1, generator=g).item())
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=msle, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
