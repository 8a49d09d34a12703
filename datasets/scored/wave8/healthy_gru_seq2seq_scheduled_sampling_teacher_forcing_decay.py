"""A GRU encoder-decoder learns a string transduction (output = the source read in reverse with
every token shifted by +3 mod the vocabulary) with scheduled sampling (Bengio et al. 2015): the
probability of feeding the decoder its own previous (argmax) prediction instead of the gold token
rises linearly from 0 to 0.9 over the first 60% of the run. Looks alarming: the decoder input
distribution keeps shifting, the per-step loss is computed on inputs the model itself corrupted,
the forward pass is stochastic (its own seeded generator), and the loss curve stays high and
flattens while teacher forcing is withdrawn instead of dropping quickly. This is the intended
curriculum; the model still learns the mapping and the loss ends far below its start (Adam, no
numerical trouble)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Bengio et al. 2015 'Scheduled Sampling for Sequence Prediction with RNNs'; forum "
          "questions 'training loss increases when using scheduled sampling' (expected).")

V, E, H, L, BOS = 12, 32, 64, 7, 12


class Seq2Seq(nn.Module):
    def __init__(self, steps, seed):
        super().__init__()
        self.src_emb = nn.Embedding(V, E)
        self.tgt_emb = nn.Embedding(V + 1, E)
        self.encoder = nn.GRU(E, H, batch_first=True)
        self.decoder = nn.GRUCell(E, H)
        self.out = nn.Linear(H, V)
        self.total = steps
        self.calls = 0
        self.coin = torch.Generator().manual_seed(1000 + seed)

    def forward(self, src, tgt):
        p_model = 0.9 * min(1.0, self.calls / (0.6 * self.total))
        self.calls += 1
        _, h = self.encoder(self.src_emb(src))
        h = h[0]
        prev = torch.full((src.shape[0],), BOS, dtype=torch.long)
        logits = []
        for t in range(tgt.shape[1]):
            h = self.decoder(self.tgt_emb(prev), h)
            step_logits = self.out(h)
            logits.append(step_logits)
            use_model = torch.rand(src.shape[0], generator=self.coin) < p_model
            prev = torch.where(use_model, step_logits.argmax(-1).detach(), tgt[:, t])
        return torch.stack(logits, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 200
    model = Seq2Seq(steps, seed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = []
    for _ in range(steps):
        src = torch.randint(0, V, (64, L), generator=g)
        tgt = (src.flip(1) + 3) % V
        batches.append(((src, tgt), tgt))

    def loss_fn(out, y):
        return F.cross_entropy(out.reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
