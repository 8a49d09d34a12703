"""Frame-level phone classifier on MFCCs (13 cepstra x context frames) with a small ReLU MLP, trained
with SGD+momentum. The features are fed raw, without cepstral mean and variance normalisation (CMVN):
c0 (log energy summed over the filterbank) sits at 150-300 with a large per-utterance offset, c1-c2
are in the tens, the higher cepstra in units. The first layer (`frontend`) therefore sees inputs whose
scale is ~100x the others. The output layer is zero-initialised (loss starts at log(n_phones)), but
the hidden activations are in the hundreds, so the first SGD step on the output layer is enormous:
the logits jump to huge values, the loss spikes (up to 1e11 in some seeds), the c0 column dominates every
later update and the run oscillates/sticks at or above chance level; the phonetic information in the
small cepstra is never used (a stall, no NaN needed). ORIGIN: frontend, the first layer to read the unscaled features. Fix: CMVN
(standardise each coefficient with training-set statistics)."""
import torch, torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "frontend"
SOURCE = "Kaldi/TIMIT-style MFCC frame classifiers trained without CMVN; raw c0 dominating the input"

class PhoneMLP(nn.Module):
    def __init__(self, d_in, width, n_ph):
        super().__init__()
        self.frontend = nn.Linear(d_in, width)
        self.hidden = nn.Linear(width, width)
        self.out = nn.Linear(width, n_ph)
        nn.init.zeros_(self.out.weight); nn.init.zeros_(self.out.bias)   # start at the uniform prior
    def forward(self, x):
        return self.out(torch.relu(self.hidden(torch.relu(self.frontend(x)))))

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11000 + seed)
    cfg = [dict(ctx=5, width=64, bs=64, lr=0.02, steps=120, n_ph=10),
           dict(ctx=3, width=96, bs=32, lr=0.03, steps=100, n_ph=8),
           dict(ctx=7, width=48, bs=48, lr=0.01, steps=150, n_ph=12)][seed % 3]
    n_cep = 13
    scale = torch.tensor([60.0, 20.0, 12.0] + [4.0] * (n_cep - 3))
    offset = torch.tensor([220.0, -15.0, 8.0] + [0.0] * (n_cep - 3))
    protos = torch.randn(cfg["n_ph"], n_cep, generator=g) * 0.8
    def raw_batch():
        y = torch.randint(0, cfg["n_ph"], (cfg["bs"],), generator=g)
        z = protos[y].unsqueeze(1) + 0.6 * torch.randn(cfg["bs"], cfg["ctx"], n_cep, generator=g)
        utt_gain = torch.randn(cfg["bs"], 1, 1, generator=g) * torch.tensor([1.0] + [0.0] * (n_cep - 1))
        return offset + scale * (z + utt_gain), y
    raw = [raw_batch() for _ in range(10)]
    allx = torch.cat([x for x, _ in raw]).reshape(-1, n_cep)
    mu, sd = allx.mean(0), allx.std(0)
    data = [((((x - mu) / sd) if fixed else x).flatten(1), y) for x, y in raw]
    batches = [data[i % 10] for i in range(cfg["steps"])]
    model = PhoneMLP(cfg["ctx"] * n_cep, cfg["width"], cfg["n_ph"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=None, scaler=None)
