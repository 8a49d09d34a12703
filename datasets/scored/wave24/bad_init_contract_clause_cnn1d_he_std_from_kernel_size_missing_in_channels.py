"""Contract-clause type classifier (LEDGAR-style provision labels): token embedding ->
stack of Conv1d+ReLU blocks (no normalisation) -> max-over-time -> linear head.

Mechanism: the project's `init_weights` ported the classic He recipe
`std = sqrt(2 / n)` from a 2-D vision codebase, but for Conv1d computed
`n = m.kernel_size[0]` instead of `kernel_size * in_channels`. With 3-tap kernels
std becomes sqrt(2/3) ~= 0.82 instead of sqrt(2/(3*C)) ~= 0.07, so every conv layer multiplies
the activation scale by ~sqrt(C) (~8-11x). After 5-7 blocks the pooled features and logits
are 1e5-1e8 at step 0; cross-entropy is enormous and the first SGD step with gradients of
the same order pushes the weights to inf/NaN.

ORIGIN: "convs.0", the first Conv1d: it is the first layer initialised with the wrong std and
where the activation scale starts growing geometrically (every later conv repeats it).

Fix: use the correct fan-in, n = kernel_size * in_channels (kaiming_normal_, relu gain).
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "convs.0"
SOURCE = ("He-normal `math.sqrt(2. / n)` init copied from torchvision/VGG-era 2-D code into a "
          "Conv1d text CNN with n computed from kernel_size only (fan-in missing in_channels); "
          "LEDGAR / CUAD clause-classification baselines")


class ClauseCNN(nn.Module):
    def __init__(self, vocab, emb, ch, depth, n_cls):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        convs, c_in = [], emb
        for _ in range(depth):
            convs.append(nn.Conv1d(c_in, ch, 3, padding=1))
            c_in = ch
        self.convs = nn.ModuleList(convs)
        self.act = nn.ReLU()
        self.head = nn.Linear(ch, n_cls)

    def forward(self, tok):
        h = self.emb(tok).transpose(1, 2)
        for c in self.convs:
            h = self.act(c(h))
        return self.head(h.max(dim=2).values)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 5 + seed % 3
    ch = [64, 80, 96][seed % 3]
    lr = [0.01, 0.015, 0.008][seed % 3]
    bs = [32, 48, 40][seed % 3]
    vocab, emb, n_cls, L, steps = 400, 48, 6, 32, 150
    torch.manual_seed(seed)
    model = ClauseCNN(vocab, emb, ch, depth, n_cls)
    nn.init.normal_(model.emb.weight, 0.0, 1.0)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                n = m.kernel_size[0] * m.in_channels
            else:
                n = m.kernel_size[0]          # BUG: fan-in without in_channels
            m.weight.data.normal_(0, math.sqrt(2.0 / n))
            m.bias.data.zero_()
    # each clause type has a few trigger tokens ("indemnify", "governing law", ...)
    triggers = torch.randint(50, vocab, (n_cls, 4), generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        tok = torch.randint(0, vocab, (bs, L), generator=g)
        pos = torch.randint(0, L, (bs, 6), generator=g)
        pick = triggers[y][torch.arange(bs).unsqueeze(1), torch.randint(0, 4, (bs, 6), generator=g)]
        tok.scatter_(1, pos, pick)
        batches.append((tok, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
