"""Transformer image captioner in the Annotated-Transformer style: a 1-2 layer encoder over a grid of
region features, a causal decoder with teacher forcing, token cross-entropy (pad ignored), and the
"Noam" optimiser wrapper (Adam, betas (0.9, 0.98), eps 1e-9) whose step() sets
lr = factor * d_model^-0.5 * min(t^-0.5, t * warmup^-1.5) before every update.

Mechanism: the config gives `warmup: 2` meaning two *epochs*, but the Noam wrapper counts *steps*.
With warmup = 2 the schedule has no warm-up at all: the first two updates use
lr = 2 * d^-0.5 * min(t^-0.5, t * 2^-1.5) ~ 0.07-0.2 (d = 48-96) and it decays only as t^-0.5, so
Adam still runs at lr > 1e-2 at the end of the run.  Every weight moves by ~lr per step -- update/weight ratios of 0.1-1 on
the attention and embedding matrices -- the attention logits blow up, the decoder collapses onto
the marginal word distribution (the same prediction at every position, whatever the image) and the
loss stays within a few % of its starting value.

ORIGIN: None -- the learning-rate schedule (an optimiser hyper-parameter) is the cause.

Fix: warmup = 800 steps (2 epochs x 400 steps, the intended value), which keeps lr <= ~3e-3 over this
run; same model, data, factor and optimiser.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Rush 2018 'The Annotated Transformer' NoamOpt (factor * d^-0.5 * min(step^-0.5, "
          "step * warmup^-1.5)); Vaswani et al. 2017 warmup_steps=4000; issue reports of transformer "
          "captioners stuck predicting 'a a a' when warmup was set too small")


class NoamAdam(torch.optim.Adam):
    """Adam whose step() first sets the Noam learning rate (Annotated Transformer's NoamOpt)."""

    def __init__(self, params, d_model, factor, warmup):
        super().__init__(params, lr=0.0, betas=(0.9, 0.98), eps=1e-9)
        self.d_model, self.factor, self.warmup, self._t = d_model, factor, warmup, 0

    def rate(self, t):
        return self.factor * self.d_model ** -0.5 * min(t ** -0.5, t * self.warmup ** -1.5)

    def step(self, closure=None):
        self._t += 1
        for group in self.param_groups:
            group["lr"] = self.rate(self._t)
        return super().step(closure)


class Captioner(nn.Module):
    def __init__(self, c_img, vocab, d, layers, max_len):
        super().__init__()
        self.img_proj = nn.Linear(c_img, d)
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(max_len, d) * 0.02)
        self.transformer = nn.Transformer(d, 4, layers, layers, 2 * d, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, vocab)
        self.d = d

    def forward(self, img, tokens_in):
        src = self.img_proj(img)
        L = tokens_in.shape[1]
        tgt = self.tok(tokens_in) * math.sqrt(self.d) + self.pos[:L]
        mask = nn.Transformer.generate_square_subsequent_mask(L)
        h = self.transformer(src, tgt, tgt_mask=mask)
        return self.out(h).transpose(1, 2)          # (B, vocab, L) for token cross-entropy


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [64, 96, 48][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [32, 24, 48][seed % 3]
    factor = 2.0
    c_img, G, steps = 16, 16, 200
    n_attr, n_val = 6, 12             # colour, shape, size, material, pose, place
    # vocab: 0 pad, 1 bos, 2 eos (unused: captions have a fixed template), then n_val words per attribute
    vocab = 3 + n_attr * n_val
    attr_vec = torch.randn(n_attr, n_val, c_img, generator=g) * 0.8
    batches = []
    for _ in range(steps):
        vals = torch.randint(0, n_val, (bs, n_attr), generator=g)
        img = 0.5 * torch.randn(bs, G, c_img, generator=g)
        cell = torch.randint(0, G, (bs,), generator=g)              # the captioned object
        for a in range(n_attr):
            img[torch.arange(bs), cell] += attr_vec[a][vals[:, a]]
        words = 3 + torch.arange(n_attr) * n_val + vals
        cap = torch.cat([torch.full((bs, 1), 1), words], 1)
        batches.append(((img, cap[:, :-1]), cap[:, 1:]))
    torch.manual_seed(seed)
    model = Captioner(c_img, vocab, d, layers, n_attr)
    opt = NoamAdam(model.parameters(), d, factor, 800 if fixed else 2)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(ignore_index=0),
                batches=batches, steps=steps)
