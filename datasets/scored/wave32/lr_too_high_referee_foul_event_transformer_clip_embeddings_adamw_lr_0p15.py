"""Referee-decision event detection from video: a transformer encoder over a window of per-frame
clip embeddings (pre-extracted appearance/motion features) classifies the window as no-event /
foul / offside / handball / penalty (5 classes), cross-entropy, AdamW.

Mechanism: AdamW at lr 0.12-0.2 (copied from a linear-probe recipe) on a transformer.  Every
step moves every weight by ~lr; the attention logits and the pre-LayerNorm residual stream jump
around from step to step, so the classifier never settles: the loss bounces around (and often
above) log(5) ~ 1.61 for the whole run instead of falling - a stall, with all values finite
(LayerNorm keeps the activations bounded).

ORIGIN: None - an optimiser setting, not a module; every layer receives oversized updates.

Fix: lr 5e-4 (same model, optimiser type, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: transformers trained with Adam(W) at lr >= 1e-2 fail to train / "
          "plateau at chance (Popel & Bojar 2018 'Training Tips for the Transformer'; Liu et al. "
          "2020 'Understanding the Difficulty of Training Transformers'; SoccerNet action "
          "spotting baselines use lr ~1e-3 or lower).")


class FoulEventTransformer(nn.Module):
    def __init__(self, d_feat, d_model, n_layers, T, n_cls=5):
        super().__init__()
        self.proj = nn.Linear(d_feat, d_model)
        self.pos = nn.Parameter(0.02 * torch.randn(1, T, d_model))
        layer = nn.TransformerEncoderLayer(d_model, 4, 2 * d_model, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.cls = nn.Linear(d_model, n_cls)

    def forward(self, x):
        h = self.encoder(self.proj(x) + self.pos)
        return self.cls(h.mean(1))


def _data(g, n, T, d_feat, n_cls=5):
    y = torch.randint(0, n_cls, (n,), generator=g)
    protos = torch.randn(n_cls, d_feat, generator=g)
    x = 0.8 * torch.randn(n, T, d_feat, generator=g)
    # the event happens in a short burst somewhere in the window
    centre = torch.randint(3, T - 3, (n,), generator=g)
    t = torch.arange(T).unsqueeze(0)
    bump = torch.exp(-((t - centre.unsqueeze(1)).float() / 2.0) ** 2)
    x = x + bump.unsqueeze(-1) * protos[y].unsqueeze(1) * 1.2
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8000 + seed)
    d_model = [32, 48, 64][seed % 3]
    n_layers = [2, 2, 3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = 5e-4 if fixed else [0.2, 0.12, 0.15][seed % 3]
    steps = 120
    T, d_feat = 16, 24
    model = FoulEventTransformer(d_feat, d_model, n_layers, T)
    x, y = _data(g, bs * steps, T, d_feat)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
