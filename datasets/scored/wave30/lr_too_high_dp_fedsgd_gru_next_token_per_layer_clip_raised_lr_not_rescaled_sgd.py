"""Private next-token prediction across users with DP-FedSGD (user-level DP in the style of
McMahan et al. 2018): a GRU language model sees one round of users' typing sequences per step;
each parameter's gradient is clipped per layer (total norm S) and Gaussian noise with std
z * S / batch is added, both written into the model as gradient hooks, then plain SGD applies
the update.

Mechanism: the learning rate and the clipping norm were tuned together (lr 6-10 at S = 0.1,
where every gradient is clipped, so a step moves the model by at most lr * S = 0.6-1.0).  To
reduce clipping bias the norm was raised to S = 5 and the learning rate was kept.  With S = 5
almost nothing is clipped any more and the noise std grows with S, so the raw gradients plus
noise are applied with lr 6-10: every step overshoots, the GRU's gates and the output layer are
thrown to large weights and the loss climbs and hovers above its start instead of decreasing
(DP-SGD practice: the effective step is lr * S, so the learning rate must be rescaled whenever
the clip norm changes).  No value becomes non-finite.

ORIGIN = None: the step size is wrong for every parameter at once; no single module starts it.

Fix: rescale the learning rate with the clip norm, lr = lr_tuned * 0.1 / 5 (0.12-0.2), keeping
lr * S at its tuned value; clipping, noise, model, data and steps unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("DP-SGD / DP-FedAvg practice that lr and clip norm must be tuned jointly (McMahan et "
          "al. 2018 'Learning differentially private recurrent language models'; Kurakin et al. "
          "2022 and Opacus FAQ: changing max_grad_norm requires retuning the learning rate).")


class DPGRULM(nn.Module):
    def __init__(self, vocab, emb, hidden, clip, noise_mult, batch, seed):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        params = [p for p in self.parameters()]
        self._gen = torch.Generator().manual_seed(5000 + seed)
        per_layer = clip / len(params) ** 0.5  # per-layer clipping with total norm `clip`
        std = noise_mult * clip / batch
        for p in params:
            p.register_hook(self._make_hook(per_layer, std))

    def _make_hook(self, c, std):
        def hook(grad):
            norm = grad.norm()
            grad = grad * torch.clamp(c / (norm + 1e-12), max=1.0)
            return grad + std * torch.randn(grad.shape, generator=self._gen)
        return hook

    def forward(self, tokens):
        h, _ = self.gru(self.embed(tokens))
        return self.out(h)


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(321 + seed)
    vocab = pick(1, [24, 32, 28])
    emb = pick(2, [16, 24, 32])
    hidden = pick(3, [48, 64, 96])
    batch = pick(4, [128, 192, 256])
    lr_tuned = pick(5, [8.0, 6.0, 10.0])  # tuned at clip 0.1
    seq = 24
    steps = 150
    clip_tuned, clip = 0.1, 5.0
    lr = lr_tuned * clip_tuned / clip if fixed else lr_tuned

    model = DPGRULM(vocab, emb, hidden, clip, noise_mult=1.0, batch=batch, seed=seed)

    # users type from a shared sparse bigram model with personal preferences
    base = torch.randn(vocab, vocab, generator=g) * 3.0
    n_users = 50
    pref = torch.randn(n_users, vocab, generator=g) * 0.5

    def sentences(n):
        users = torch.randint(0, n_users, (n,), generator=g)
        tok = torch.randint(0, vocab, (n,), generator=g)
        seqs = [tok]
        for _ in range(seq):
            logits = base[tok] + pref[users]
            tok = torch.multinomial(F.softmax(logits, -1), 1, generator=g).squeeze(1)
            seqs.append(tok)
        s = torch.stack(seqs, 1)
        return s[:, :-1], s[:, 1:]

    batches = [sentences(batch) for _ in range(steps)]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, y: F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1)),
            "batches": batches, "steps": steps}
