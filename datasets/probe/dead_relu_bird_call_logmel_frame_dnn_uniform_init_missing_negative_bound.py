"""Bird-call species classifier: a frame-stacking DNN on log-mel patches (context of
+-k frames flattened, 3 ReLU hidden layers, softmax over species).  The features are
librosa-style `power_to_db(S, ref=np.max)` divided by top_db=80, i.e. every value lies
in [-1, 0] (0 = loudest bin of the clip).

Bug: a hand-written init loop meant to reproduce "uniform(-b, b)" was typed as
`nn.init.uniform_(m.weight, 0, b)` (biases zeroed).  With non-negative weights and
non-positive inputs, every first-layer pre-activation is <= 0 for every patch, so the
first ReLU layer outputs exact zeros from step 0; the deeper layers then see only their
(zero) biases and are dead as well.  No gradient reaches any weight; only the output
bias learns, i.e. the class prior -- with balanced species the cross entropy stays at
ln(n_species) for the whole run.

ORIGIN: `net.1` -- the first ReLU, dead for every input from the first forward pass.

Fix: the intended symmetric init, uniform(-b, b) with b = sqrt(6 / fan_in) (He-uniform).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("frame-stacking DNN bird/animal call classifiers on librosa power_to_db(ref=max) "
          "features (BirdCLEF-style baselines); the uniform_(0, b) vs uniform_(-b, b) init "
          "typo; dying-ReLU 'loss stuck at log(num_classes)' reports")


def _clips(g, n, n_mels, ctx, n_classes, templates):
    y = torch.randint(0, n_classes, (n,), generator=g)
    frames = 2 * ctx + 1
    pat = templates[y]  # (n, n_mels, frames) in dB relative to clip max
    db = pat + 4.0 * torch.randn(n, n_mels, frames, generator=g)
    db = db - db.amax(dim=(1, 2), keepdim=True)  # ref = max of the clip
    db = db.clamp(min=-80.0) / 80.0              # top_db = 80 -> [-1, 0]
    return db.flatten(1), y


class FrameDNN(nn.Module):
    def __init__(self, din, widths, n_classes):
        super().__init__()
        layers, d = [], din
        for w in widths:
            layers += [nn.Linear(d, w), nn.ReLU()]
            d = w
        layers.append(nn.Linear(d, n_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n_mels=32, ctx=3, widths=(256, 256, 128), bs=64, lr=1e-3, steps=80),
           dict(n_mels=40, ctx=2, widths=(512, 256, 256), bs=32, lr=5e-4, steps=90),
           dict(n_mels=24, ctx=4, widths=(128, 128, 64), bs=128, lr=2e-3, steps=70)][seed % 3]
    n_classes = 8
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    frames = 2 * cfg["ctx"] + 1
    # species templates: a chirp/whistle track in a species-specific mel band
    templates = torch.full((n_classes, cfg["n_mels"], frames), -60.0)
    for c in range(n_classes):
        lo = int(c * cfg["n_mels"] / n_classes)
        slope = (c % 3) - 1
        for f in range(frames):
            b = min(max(lo + slope * (f - cfg["ctx"]) // 2, 0), cfg["n_mels"] - 1)
            templates[c, b, f] = -5.0
            if b + 2 < cfg["n_mels"]:
                templates[c, b + 2, f] = -20.0  # harmonic
    model = FrameDNN(cfg["n_mels"] * frames, cfg["widths"], n_classes)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            b = math.sqrt(6.0 / m.in_features)
            if fixed:
                nn.init.uniform_(m.weight, -b, b)
            else:
                nn.init.uniform_(m.weight, 0.0, b)  # typo: lower bound should be -b
            nn.init.zeros_(m.bias)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = [_clips(g, cfg["bs"], cfg["n_mels"], cfg["ctx"], n_classes, templates)
               for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
