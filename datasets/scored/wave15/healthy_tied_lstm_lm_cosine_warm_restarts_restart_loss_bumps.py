"""Healthy: a word-level LSTM language model with tied input/output embeddings
(Press & Wolf 2017; the decoder reuses `encoder.weight`) trained with Adam and
CosineAnnealingWarmRestarts (SGDR, T_0 = 20-30 iterations, stepped per iteration
through an optimizer step post-hook).

What looks alarming: at every restart the lr jumps from ~0 back to its peak and the
loss bumps up for a few steps; the tied weight receives gradients from two places
(embedding lookup and softmax) and its gradient norm is much larger than the LSTM's.
It is fine: the bumps recover within a few iterations and each cycle ends lower than
the previous one.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Press & Wolf 2017 'Using the output embedding'; PyTorch word_language_model "
          "example (--tied); Loshchilov & Hutter SGDR warm restarts.")


class TiedLSTMLM(nn.Module):
    def __init__(self, vocab, d, layers):
        super().__init__()
        self.encoder = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, d, layers, batch_first=True)
        self.decoder = nn.Linear(d, vocab)
        self.decoder.weight = self.encoder.weight            # weight tying
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)

    def forward(self, tokens):
        out, _ = self.rnn(self.encoder(tokens))
        return self.decoder(out)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, layers=1, bs=16, T=20, lr=1e-2, T0=25, steps=100),
           dict(d=48, layers=2, bs=12, T=16, lr=5e-3, T0=30, steps=90),
           dict(d=32, layers=1, bs=24, T=24, lr=1e-2, T0=20, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    vocab = 24
    # sparse first-order Markov "grammar": each word has 3 likely successors
    succ = torch.stack([torch.randperm(vocab, generator=g)[:3] for _ in range(vocab)])
    model = TiedLSTMLM(vocab, cfg["d"], cfg["layers"])
    batches = []
    for _ in range(cfg["steps"]):
        seq = torch.empty(cfg["bs"], cfg["T"] + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, vocab, (cfg["bs"],), generator=g)
        for t in range(cfg["T"]):
            pick = torch.randint(0, 3, (cfg["bs"],), generator=g)
            noise = torch.rand(cfg["bs"], generator=g) < 0.05
            nxt = succ[seq[:, t], pick]
            seq[:, t + 1] = torch.where(noise, torch.randint(0, vocab, (cfg["bs"],), generator=g), nxt)
        batches.append((seq[:, :-1], seq[:, 1:]))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=cfg["T0"], eta_min=1e-5)
    opt.register_step_post_hook(lambda *_: sched.step())
    ce = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: ce(out.reshape(-1, out.shape[-1]), y.reshape(-1)),
                batches=batches, steps=cfg["steps"])
