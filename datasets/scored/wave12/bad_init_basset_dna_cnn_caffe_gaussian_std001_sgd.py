"""Basset-style multi-task CNN on one-hot DNA (4 x 100 bp) predicting the presence of four
transcription-factor motifs (per-task BCE on logits), trained with SGD + momentum.  The weights
were initialised as in the Caffe prototxt the model was ported from (`weight_filler { type:
"gaussian" std: 0.01 }` on every conv and dense layer) instead of a fan-in-scaled init.  With
fan-ins of 44, 224, 160 and 32 units, each layer shrinks the activation scale by roughly 10-50x,
so the pooled conv features are ~1e-7 and the logits ~1e-9 at step 0; backwards, the gradient that
reaches conv1/conv2 is multiplied by the same tiny weights.  Only the head biases receive a
usable gradient and the label prior is already 0.5, so the loss sits at ln 2 = 0.693 for the whole
run: a silent stall, no NaN, no spike.  Fixed: kaiming-normal (fan_in, relu) init for the convs
and xavier-normal for the dense head, nothing else changed."""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "conv1"
SOURCE = ("Kelley et al. 2016 Basset / DeepSEA-style one-hot DNA CNNs ported from Caffe prototxts with "
          "gaussian std=0.01 weight fillers; the known 'loss stuck at 0.693' symptom of deep nets "
          "initialised with a fixed small std (Glorot & Bengio 2010, He et al. 2015)")


class BassetLite(nn.Module):
    def __init__(self, n_tasks=4, ch=32):
        super().__init__()
        self.conv1 = nn.Conv1d(4, ch, 11, padding=5)
        self.conv2 = nn.Conv1d(ch, ch, 7, padding=3)
        self.conv3 = nn.Conv1d(ch, ch, 5, padding=2)
        self.pool = nn.MaxPool1d(4)
        self.act = nn.ReLU()
        self.head = nn.Linear(ch, n_tasks)

    def forward(self, x):
        h = self.pool(self.act(self.conv1(x)))
        h = self.pool(self.act(self.conv2(h)))
        h = self.act(self.conv3(h))
        return self.head(h.amax(dim=-1))


def make_data(g, n, L, motifs, p=0.5):
    idx = torch.randint(0, 4, (n, L), generator=g)
    labels = (torch.rand(n, len(motifs), generator=g) < p).float()
    for t, m in enumerate(motifs):
        k = m.numel()
        pos = torch.randint(0, L - k, (n,), generator=g)
        rows = labels[:, t].nonzero().squeeze(-1)
        cols = pos[rows].unsqueeze(1) + torch.arange(k).unsqueeze(0)
        idx[rows.unsqueeze(1), cols] = m.unsqueeze(0)
    x = torch.nn.functional.one_hot(idx, 4).permute(0, 2, 1).float()
    return x, labels


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_tasks, L, bs, steps = 4, 100, 64, 220
    motifs = [torch.randint(0, 4, (8,), generator=g) for _ in range(n_tasks)]
    X, Y = make_data(g, 1536, L, motifs)

    model = BassetLite(n_tasks)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                if isinstance(m, nn.Conv1d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                else:
                    nn.init.xavier_normal_(m.weight)
            else:
                nn.init.normal_(m.weight, mean=0.0, std=0.01)   # caffe gaussian filler
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    bce = nn.BCEWithLogitsLoss()

    def loss_fn(out, target):
        return bce(out, target)

    batches = []
    for s in range(steps):
        i = torch.randint(0, X.shape[0], (bs,), generator=g)
        batches.append((X[i], Y[i]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
