"""Speaker-verification encoder (bias-free Conv1d + ReLU frame layers on a magnitude spectrogram,
temporal average pooling, bias-free projection) followed by a hand-written L2 normalisation
`e / e.norm(dim=1, keepdim=True)` and a cosine-softmax (normalised-weight) speaker classifier. The run
is calm until a batch contains an all-digital-silence utterance (zero-padded clip): its spectrogram
is exactly 0, every bias-free layer maps 0 to 0, the embedding is the zero vector and the
normalisation computes 0/0 = NaN in the forward pass; the NaN reaches the loss and the gradients, so
every later step is NaN. ORIGIN is the normalisation module. Fix: an epsilon
(`e / e.norm(...).clamp_min(1e-6)`, as in F.normalize)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "l2norm"
SOURCE = "GE2E / AAM-softmax speaker encoders with a hand-rolled L2 norm; NaN on silent or zero-padded utterances"

class L2Norm(nn.Module):
    def __init__(self, eps):
        super().__init__(); self.eps = eps
    def forward(self, e):
        n = e.norm(dim=1, keepdim=True)
        return e / (n.clamp_min(self.eps) if self.eps > 0 else n)

class SpeakerEncoder(nn.Module):
    def __init__(self, n_freq, ch, emb, n_spk, depth, eps):
        super().__init__()
        layers, c = [], n_freq
        for i in range(depth):
            layers += [nn.Conv1d(c, ch, 3, padding=1, bias=False), nn.ReLU()]
            c = ch
        self.frames = nn.Sequential(*layers)
        self.proj = nn.Linear(ch, emb, bias=False)
        self.l2norm = L2Norm(eps)
        self.classifier = nn.Linear(emb, n_spk, bias=False)
        self.scale = 10.0
    def forward(self, spec):
        e = self.proj(self.frames(spec).mean(-1))
        e = self.l2norm(e)
        w = F.normalize(self.classifier.weight, dim=1)
        return self.scale * e @ w.t()

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    cfg = [dict(ch=32, emb=16, depth=2, bs=16, T=50, lr=1e-3, steps=90, bad=51),
           dict(ch=24, emb=24, depth=3, bs=12, T=40, lr=2e-3, steps=70, bad=33),
           dict(ch=16, emb=12, depth=2, bs=20, T=60, lr=1e-3, steps=120, bad=88)][seed % 3]
    n_freq, n_spk = 24, 8
    protos = torch.rand(n_spk, n_freq, 1, generator=g)
    def batch():
        y = torch.randint(0, n_spk, (cfg["bs"],), generator=g)
        x = (protos[y] + 0.3 * torch.randn(cfg["bs"], n_freq, cfg["T"], generator=g)).abs()
        return x, y
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    x, y = batch()
    x[3] = 0.0                      # digital-silence clip (same data in both runs)
    batches[cfg["bad"]] = (x, y)
    model = SpeakerEncoder(n_freq, cfg["ch"], cfg["emb"], n_spk, cfg["depth"], 1e-6 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=None, scaler=None)
