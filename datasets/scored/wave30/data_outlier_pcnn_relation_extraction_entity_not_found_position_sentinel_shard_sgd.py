"""PCNN relation extraction (Zeng et al. 2015) with piecewise max pooling.

Model: each sentence is a sequence of (frozen, pre-computed) word vectors plus two numeric
position channels -- the token's signed distance to the head and to the tail entity, divided by
the maximum sentence length. A Conv1d `conv` (ReLU) runs over the sequence, the feature maps are
max-pooled separately over the three pieces cut by the two entities, and a Linear `classifier`
predicts the relation. Loss: cross-entropy; optimiser: SGD with momentum.

Mechanism: one preprocessing shard was built with an entity matcher that, when it could not
locate the tail mention in the sentence, stored the sentinel position 10_000 instead of
dropping the example. For the batch drawn from that shard (the step varies by seed) the tail
distance channel is about -10_000 / L ~ -280..-420 for every token. The convolution's
pre-activations are hundreds of times their usual size, the loss of that batch jumps, and its
gradient on `conv` and `classifier` is orders of magnitude above the normal one. The single
step, and the momentum it leaves behind for the following steps, throws the conv and
classifier weights to several (up to ~25) times their norm; the logits become huge and
confidently wrong, the cross-entropy goes to tens or hundreds and, with the inflated weights,
momentum SGD keeps oscillating instead of returning: the loss ends well above where it was
before the corrupt batch, while the fixed run keeps learning.

ORIGIN: `conv` -- the first layer the corrupt position channel reaches; the blow-up of its
pre-activations is where the damage starts.

Fix: sanitise the shard -- clamp the relative distances to [-L, L] (what the reference
preprocessing does), so the sentinel batch becomes an ordinary batch. Same model, optimiser and
steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "conv"
SOURCE = ("Zeng et al. 2015 PCNN; OpenNRE-style preprocessing where str.find / index lookups "
          "return a sentinel for an entity mention that is not found; reports of a single "
          "corrupt NYT-10 shard spiking the loss and ruining training")


class PCNN(nn.Module):
    def __init__(self, d_word, n_filt, n_rel, k):
        super().__init__()
        self.conv = nn.Conv1d(d_word + 2, n_filt, k, padding=k // 2)
        self.act = nn.ReLU()
        self.classifier = nn.Linear(3 * n_filt, n_rel)

    def forward(self, x, seg):
        # x: B x L x (d_word + 2); seg: B x L piece id (0, 1, 2)
        h = self.act(self.conv(x.transpose(1, 2)))                    # B x F x L
        pooled = []
        for p in range(3):
            m = (seg == p).unsqueeze(1)
            pooled.append(h.masked_fill(~m, float("-inf")).amax(dim=2))
        return self.classifier(torch.cat(pooled, dim=1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d_word = [32, 48, 24][seed % 3]
    n_filt = [64, 96, 48][seed % 3]
    k = [3, 3, 5][seed % 3]
    n_rel = [6, 8, 5][seed % 3]
    L = [30, 36, 24][seed % 3]
    batch = [32, 48, 40][seed % 3]
    steps = [140, 160, 120][seed % 3]
    lr = [0.03, 0.04, 0.03][seed % 3]
    bad_step = [45, 55, 30][seed % 3]

    vocab = 400
    wv = torch.randn(vocab, d_word, generator=g)
    triggers = torch.randperm(vocab, generator=g)[: n_rel * 4].view(n_rel, 4)
    batches = []
    for step in range(steps):
        words = torch.randint(0, vocab, (batch, L), generator=g)
        e1 = torch.randint(2, L // 2 - 1, (batch,), generator=g)
        e2 = torch.randint(L // 2 + 2, L - 3, (batch,), generator=g)
        rel = torch.randint(0, n_rel, (batch,), generator=g)
        # a trigger word of the relation sits between the two mentions
        off = (torch.rand(batch, generator=g) * (e2 - e1 - 1).float()).long() + 1
        trig = triggers[rel, torch.randint(0, 4, (batch,), generator=g)]
        words[torch.arange(batch), e1 + off] = trig
        pos = torch.arange(L).unsqueeze(0)
        tail = e2.clone()
        if step == bad_step:
            tail[:] = 10_000                                          # "mention not found"
        d1 = (pos - e1.unsqueeze(1)).float()
        d2 = (pos - tail.unsqueeze(1)).float()
        if fixed:
            d1, d2 = d1.clamp(-L, L), d2.clamp(-L, L)
        x = torch.cat([wv[words], (d1 / L).unsqueeze(2), (d2 / L).unsqueeze(2)], dim=2)
        seg = (pos > e1.unsqueeze(1)).long() + (pos > e2.unsqueeze(1)).long()
        batches.append(((x, seg), rel))

    model = PCNN(d_word, n_filt, n_rel, k)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
