"""Contract-provision classifier (LEDGAR-style labels: governing law, indemnification,
termination, confidentiality, ...): a small post-LN Transformer encoder over clause tokens,
mean-pooled, linear head, cross-entropy, AdamW.

Mechanism: the run uses a constant AdamW learning rate of 3e-2-5e-2 with no warmup -- the
value the team uses for its GRU/CNN text baselines. For a post-LN Transformer that is far too
large: every Adam step changes each weight by ~lr, i.e. update/weight ratios of ~0.1-1 on
the attention and feed-forward matrices from the first step. Attention logits and residual
activations jump around from step to step, the LayerNorms keep re-normalising a different
representation each time, and the loss does not settle below the class-prior level (it
hovers at or above log(n_classes)) while the same model with a sane learning rate learns the
provision types quickly. No value becomes non-finite; the run simply never learns.

ORIGIN: None -- an over-large step size affects every parameter at once; no single module is
where it starts.

Fix: lr = 1e-3 (same AdamW, model, data, steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Post-LN Transformers diverging / not learning without warmup at large learning rates "
          "(Xiong et al. 2020 'On Layer Normalization in the Transformer Architecture'; Liu et "
          "al. 2020 'Understanding the difficulty of training Transformers'); LEDGAR (Tuggener "
          "et al. 2020) provision classification")


class ProvisionEncoder(nn.Module):
    def __init__(self, vocab, d, layers, n_cls, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Embedding(max_len, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, n_cls)

    def forward(self, tok):
        pad = tok.eq(0)
        h = self.tok(tok) + self.pos(torch.arange(tok.shape[1]))[None]
        h = self.encoder(h, src_key_padding_mask=pad)
        keep = (~pad).float().unsqueeze(-1)
        return self.head((h * keep).sum(1) / keep.sum(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    vocab, n_cls, L, steps = 500, 8, 32, 120
    d = [48, 64, 64][seed % 3]
    layers = 2 + seed % 2
    bs = [32, 48, 40][seed % 3]
    lr = 1e-3 if fixed else [3e-2, 4e-2, 5e-2][seed % 3]
    torch.manual_seed(seed)
    model = ProvisionEncoder(vocab, d, layers, n_cls, L)
    cue = torch.randint(10, vocab, (n_cls, 6), generator=g)     # "governing", "indemnify", ...
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        tok = torch.randint(10, vocab, (bs, L), generator=g)
        pos = torch.randint(0, L, (bs, 4), generator=g)
        tok.scatter_(1, pos, cue[y][torch.arange(bs)[:, None], torch.randint(0, 6, (bs, 4), generator=g)])
        lens = torch.randint(L // 2, L + 1, (bs,), generator=g)
        tok[torch.arange(L)[None, :] >= lens[:, None]] = 0
        tok[:, 0] = 1                                           # [CLS]-like start token
        batches.append((tok, y))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
