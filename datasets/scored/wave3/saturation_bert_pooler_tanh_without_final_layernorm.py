"""Tiny pre-LN BERT-style encoder for sentence classification through the BERT pooler (dense + tanh on
the [CLS] state).  The encoder is pre-LN but the final LayerNorm after the last block was dropped, and
token embeddings are multiplied by sqrt(d_model) as in the original Transformer; the residual stream
therefore reaches the pooler with an RMS of about sqrt(d_model): the pooler's pre-activations have a std
of ~4-5 and more than half of its tanh outputs are beyond +-0.99 from step 0.
With SGD the pooler and everything below it receive ~0 gradient and the classifier cannot separate the
classes: the loss stays at its starting level with no NaN.  Fixed: the final LayerNorm restored, so the
pooler's pre-activations have unit scale."""
import math, torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "pooler.dense"
SOURCE = "BERT pooler tanh on un-normalised [CLS] states (pre-LN encoders need a final LayerNorm; HF issues on pooler saturation / NSP head not learning)"


class Pooler(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense = nn.Linear(d, d)

    def forward(self, h):
        return torch.tanh(self.dense(h[:, 0]))


class TinyBert(nn.Module):
    def __init__(self, vocab, d, layers, final_ln):
        super().__init__()
        self.d = d
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(64, d)
        self.encoder = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
                                      for _ in range(layers)])
        self.final_ln = nn.LayerNorm(d) if final_ln else nn.Identity()
        self.pooler = Pooler(d)
        self.classifier = nn.Linear(d, 2)

    def forward(self, ids, pad_mask):
        h = self.tok(ids) * math.sqrt(self.d) + self.pos(torch.arange(ids.shape[1]))
        for layer in self.encoder:
            h = layer(h, src_key_padding_mask=pad_mask)
        return self.classifier(self.pooler(self.final_ln(h)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, layers, bs, lr, steps, seqlen = [(64, 1, 32, 0.1, 150, 24), (48, 2, 24, 0.08, 150, 20), (64, 2, 32, 0.1, 120, 28)][seed % 3]
    vocab = 200
    model = TinyBert(vocab, d, layers, final_ln=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, 2, (bs,), generator=g)
        # class 0 draws content words from ids 10-104, class 1 from ids 105-199; id 1 = [CLS], 0 = [PAD]
        ids = 10 + 95 * y[:, None] + torch.randint(0, 95, (bs, seqlen), generator=g)
        lens = torch.randint(seqlen // 2, seqlen + 1, (bs,), generator=g)
        pad = torch.arange(seqlen)[None] >= lens[:, None]
        ids = torch.where(pad, torch.zeros_like(ids), ids)
        ids[:, 0] = 1
        pad[:, 0] = False
        batches.append(((ids, pad), y))
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
