"""A beginner's bag-of-n-grams text classifier (nn.EmbeddingBag over hashed integer n-gram ids with
per-example offsets, then a small MLP) is trained with the cross-entropy *summed* over the batch
(reduction='sum') and SGD, with the tutorial trick of clamping every parameter gradient to [-1, 1]
through tensor hooks. The loss is in the hundreds at the start and the raw gradients are large,
and many embedding rows get exactly zero gradient on a step (ids not in the batch), all of which
look alarming; but the clamped updates are sane and the summed loss falls steadily. Healthy."""
import torch, torch.nn as nn
CAUSE = "healthy"
ORIGIN = None
SOURCE = "PyTorch text-classification tutorial (EmbeddingBag with offsets); gradient value clipping via register_hook (PyTorch forums)"

class BagClassifier(nn.Module):
    def __init__(self, vocab, dim, k):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, k))
    def forward(self, ids, offsets):
        return self.mlp(self.bag(ids, offsets))

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    V = [500, 800, 600][seed % 3]; dim = [32, 24, 16][seed % 3]; k = 4
    model = BagClassifier(V, dim, k)
    for p in model.parameters():
        p.register_hook(lambda gr: gr.clamp(-1.0, 1.0))
    topic_ids = [torch.randint(0, V, (40,), generator=g) for _ in range(k)]
    steps = [120, 150, 100][seed % 3]; bs = [64, 96, 128][seed % 3]
    batches = []
    for _ in range(steps):
        y = torch.randint(0, k, (bs,), generator=g)
        docs, offs, o = [], [], 0
        for lab in y.tolist():
            n = int(torch.randint(5, 30, (1,), generator=g))
            own = topic_ids[lab][torch.randint(0, 40, (n,), generator=g)]
            noise = torch.randint(0, V, (n,), generator=g)
            doc = torch.cat([own, noise]); docs.append(doc); offs.append(o); o += len(doc)
        batches.append(((torch.cat(docs), torch.tensor(offs)), y))
    opt = torch.optim.SGD(model.parameters(), lr=[0.02, 0.01, 0.015][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(reduction="sum"), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
