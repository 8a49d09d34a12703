"""Dimensional speech-emotion regressor (arousal, valence) fusing a transcript encoder (embedding
bag over word ids) with the 88 eGeMAPS acoustic functionals per utterance, trained with momentum
SGD on the sum of two MSE heads (dict output). The openSMILE functionals were fed in raw units:
formant frequencies and bandwidths in Hz (hundreds to ~3000), F0 in semitones (~20-40), HNR in dB,
alongside jitter/shimmer around 0.01-1 -- they were never z-scored with training-set statistics as
the eGeMAPS papers do. The first layer reading them (acoustic_proj) produces pre-activations in
the thousands, the initial loss is enormous and the first SGD steps (lr tuned for standardised
features) overshoot geometrically until the loss overflows to inf/NaN. Fixed: the same features
standardised with the training-set mean/std, nothing else changed."""
import torch, torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "acoustic_proj"
SOURCE = ("Eyben et al. 2016 eGeMAPS (features are standardised per speaker/corpus before modelling); "
          "forum threads 'regression on openSMILE features gives nan loss'")

V, E, A, H, T, B = 100, 16, 88, 32, 12, 32


class EmotionFusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = nn.EmbeddingBag(V, E, mode="mean")
        self.acoustic_proj = nn.Linear(A, H)
        self.trunk = nn.Sequential(nn.Linear(E + H, H), nn.ReLU())
        self.arousal = nn.Linear(H, 1)
        self.valence = nn.Linear(H, 1)

    def forward(self, words, feats):
        h = torch.cat([self.text(words), torch.relu(self.acoustic_proj(feats))], -1)
        h = self.trunk(h)
        return {"arousal": self.arousal(h).squeeze(-1), "valence": self.valence(h).squeeze(-1)}


def _feature_units(g):
    # per-feature typical scale/offset of raw eGeMAPS functionals (Hz, semitones, dB, ratios)
    scale = torch.ones(A)
    offset = torch.zeros(A)
    offset[0:10], scale[0:10] = 30.0, 4.0          # F0 semitone stats
    offset[10:16], scale[10:16] = 1.0, 0.5          # loudness
    offset[16:22], scale[16:22] = 0.02, 0.01        # jitter / shimmer
    offset[22:28], scale[22:28] = 8.0, 4.0          # HNR dB
    offset[28:40] = torch.tensor([550., 1500., 2500., 120., 180., 250.] * 2)   # F1-F3 freq/bandwidth Hz
    scale[28:40] = torch.tensor([80., 200., 250., 40., 60., 80.] * 2)
    offset[40:88], scale[40:88] = 0.0, 1.0 + 20 * torch.rand(48, generator=g)   # spectral slopes, MFCC stats, rates
    return scale, offset


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 21)
    model = EmotionFusion()
    scale, offset = _feature_units(g)
    w_ar = torch.randn(A, generator=g) / A ** 0.5
    w_va = torch.randn(A, generator=g) / A ** 0.5
    word_val = torch.randn(V, generator=g) * 0.5
    n_batches = 30
    data = []
    for _ in range(n_batches):
        z = torch.randn(B, A, generator=g)                        # standardised acoustic state
        words = torch.randint(0, V, (B, T), generator=g)
        ar = torch.tanh(z @ w_ar)
        va = torch.tanh(0.5 * (z @ w_va) + word_val[words].mean(1))
        raw = z * scale + offset                                  # what openSMILE writes to the CSV
        data.append([words, raw, ar, va])
    if fixed:
        allraw = torch.cat([d[1] for d in data])
        mu, sd = allraw.mean(0), allraw.std(0)
        for d in data:
            d[1] = (d[1] - mu) / sd
    steps = 150
    batches = [((d[0], d[1]), {"arousal": d[2], "valence": d[3]})
               for d in (data[i % n_batches] for i in range(steps))]
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)

    def loss_fn(out, y):
        return nn.functional.mse_loss(out["arousal"], y["arousal"]) + \
            nn.functional.mse_loss(out["valence"], y["valence"])

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
