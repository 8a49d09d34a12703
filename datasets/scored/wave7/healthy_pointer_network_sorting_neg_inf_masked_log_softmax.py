"""A pointer network (Vinyals et al. 2015) learns to sort sets of up to 10 real numbers, trained with
teacher forcing. An LSTM encoder reads the (padded, masked) set, an LSTM decoder is fed the
previously pointed element, and at every decoding step additive attention scores over the inputs are
masked with -inf for padding and for elements that were already pointed to, then turned into
log-probabilities with log_softmax; the loss is the NLL of the target index, averaged over valid
decoding steps. The log-probabilities are full of -inf, the masked scores' gradients are exactly 0,
and the last decoding step of every sequence has a single allowed choice (loss exactly 0), all of
which can look alarming, but the fused log_softmax never produces NaN, the NLL only reads finite
entries, and the run trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Vinyals, Fortunato & Jaitly 2015 'Pointer Networks' (sorting task); masked log_softmax "
          "pointer decoding as in common PyTorch implementations")

N_MAX, H = 10, 32


class PointerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(1, H)
        self.encoder = nn.LSTM(H, H, batch_first=True)
        self.decoder = nn.LSTMCell(H, H)
        self.start = nn.Parameter(torch.zeros(H))
        self.W_enc = nn.Linear(H, H, bias=False)
        self.W_dec = nn.Linear(H, H, bias=False)
        self.v = nn.Linear(H, 1, bias=False)

    def forward(self, values, mask, target_order):
        B, N = values.shape
        e = self.embed(values.unsqueeze(-1))
        enc, (h, c) = self.encoder(e)
        h, c = h.squeeze(0), c.squeeze(0)
        enc_proj = self.W_enc(enc)
        n = mask.sum(1, keepdim=True)
        taken = torch.zeros_like(mask)
        inp = self.start.expand(B, H)
        logps = []
        for step in range(N):
            h, c = self.decoder(inp, (h, c))
            scores = self.v(torch.tanh(enc_proj + self.W_dec(h).unsqueeze(1))).squeeze(-1)
            # already pointed-to elements, and padding while real elements remain, are unavailable
            blocked = taken | (~mask & (step < n))
            scores = scores.masked_fill(blocked, float("-inf"))
            logp = F.log_softmax(scores, -1)
            logps.append(logp)
            idx = target_order[:, step]                    # teacher forcing
            taken = taken | F.one_hot(idx, N).bool()
            inp = e[torch.arange(B), idx]
        return {"log_probs": torch.stack(logps, 1)}        # (B, N_steps, N)


def loss_fn(out, y):
    order, step_mask = y
    lp = out["log_probs"].gather(-1, order.unsqueeze(-1)).squeeze(-1)
    lp = torch.where(step_mask, lp, torch.zeros_like(lp))  # padded steps may be -inf: drop them
    return -(lp.sum() / step_mask.sum())


def make_batch(g, bs):
    n = torch.randint(4, N_MAX + 1, (bs,), generator=g)
    mask = torch.arange(N_MAX).unsqueeze(0) < n.unsqueeze(1)
    values = torch.rand(bs, N_MAX, generator=g) * mask
    key = values.masked_fill(~mask, 2.0)                   # padding sorts last
    order = key.argsort(1)
    return (values, mask, order), (order, mask)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PointerNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    steps = 150
    batches = [make_batch(g, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
