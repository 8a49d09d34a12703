"""Curriculum learning of a small post-LN Transformer encoder that classifies event sequences
(which of several event types dominates a session): the data loader follows a length curriculum,
short sessions first and longer ones later, and the model is trained with AdamW.

Mechanism: the model used to be trained with SGD at lr 0.05-0.1; when the optimiser was switched
to AdamW the learning rate was kept.  Adam moves every weight by ~lr per step regardless of the
gradient scale, so from the first step on each update changes every weight by 0.05-0.1, far more
than the weights themselves (~0.1): the attention logits and the residual stream jump by O(1)
each update, the post-LN LayerNorms re-normalise the damage, and the model falls into
predicting the class prior for every session.  The loss stays at log(C) (the zero-initialised
head's starting value) while the same run at an Adam-scale learning rate learns the task (Liu et
al. 2020, 'Understanding the difficulty of training Transformers').  No value becomes non-finite.

ORIGIN = None: the update size is too large for every parameter at once; no module starts it.

Fix: an Adam-scale learning rate (100x lower, 5e-4 to 1e-3); model, data order and steps
unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Keeping the SGD learning rate when switching to Adam/AdamW (a frequent forum report: "
          "'loss stuck after changing SGD to Adam'); post-LN Transformer instability at large Adam "
          "steps (Liu et al. 2020); length curriculum as in Platanios et al. 2019.")


class SessionTransformer(nn.Module):
    def __init__(self, vocab, d_model, n_layers, n_heads, n_classes, max_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=2 * d_model,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, n_classes)
        nn.init.zeros_(self.head.weight)  # zero-initialised head, as in the original ViT code
        nn.init.zeros_(self.head.bias)

    def forward(self, tokens):
        pos = torch.arange(tokens.shape[1])
        h = self.encoder(self.embed(tokens) + self.pos(pos)[None])
        return self.head(h.mean(1))


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2024 + seed)
    d_model = pick(1, [32, 48, 64])
    n_layers = pick(2, [2, 3, 2])
    n_heads = 4
    batch = pick(3, [32, 48, 64])
    lr = pick(4, [0.1, 0.05, 0.08])
    if fixed:
        lr = lr / 100
    steps = 160
    n_classes, n_noise = 4, 12
    vocab = n_classes + n_noise
    max_len = 48

    model = SessionTransformer(vocab, d_model, n_layers, n_heads, n_classes, max_len)

    batches = []
    for s in range(steps):
        length = int(8 + (max_len - 8) * s / (steps - 1))  # length curriculum: short -> long
        y = torch.randint(0, n_classes, (batch,), generator=g)
        tok = torch.randint(n_classes, vocab, (batch, length), generator=g)  # background events
        # signal events: the labelled type appears most often among the event-type tokens
        n_sig = max(3, length // 3)
        probs = torch.full((batch, n_classes), 0.4 / (n_classes - 1))
        probs[torch.arange(batch), y] = 0.6
        sig = torch.multinomial(probs, n_sig, replacement=True, generator=g)
        where = torch.argsort(torch.rand(batch, length, generator=g), 1)[:, :n_sig]
        tok.scatter_(1, where, sig)
        batches.append((tok, y))

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, y: F.cross_entropy(out, y),
            "batches": batches, "steps": steps}
