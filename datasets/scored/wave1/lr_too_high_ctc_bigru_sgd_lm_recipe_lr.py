"""Small CTC acoustic model (frame projection -> 2-layer bidirectional GRU -> per-frame log-softmax
over blank + 8 phone-like symbols) trained with nn.CTCLoss on variable-length utterances (inputs
are (features, lengths), the model returns (log_probs, lengths), targets are a dict of padded
labels and label lengths). The optimizer settings were copied from the classic PTB LSTM
language-model recipe (SGD, lr = 1.0) but with momentum 0.9 added and without that recipe's
gradient clipping, so the effective step is lr / (1 - 0.9) = 10. The first updates overshoot, the
GRU states and the output logits grow, the per-frame log-probabilities of the reference path
become very negative and the CTC loss rises to hundreds instead of falling (still finite: CTCLoss
works in log space). The fixed run uses lr = 0.05, nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ('Zaremba et al. 2014 PTB LSTM recipe (SGD lr=1 with gradient clipping) reused for a CTC '
          'acoustic model with momentum and without clipping; Graves et al. 2006 CTC')

NF, NSYM, TMAX = 16, 8, 48


class CTCModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(NF, 32)
        self.rnn = nn.GRU(32, 32, num_layers=2, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(64, NSYM + 1)

    def forward(self, feats, lengths):
        h = torch.relu(self.proj(feats))
        h, _ = self.rnn(h)
        logp = self.classifier(h).log_softmax(-1).transpose(0, 1)   # (T, B, C) for CTCLoss
        return logp, lengths


def ctc_loss_fn():
    ctc = nn.CTCLoss(blank=0)

    def loss_fn(out, tgt):
        logp, in_lens = out
        return ctc(logp, tgt["labels"], in_lens, tgt["label_lengths"])
    return loss_fn


def _make_batch(g, protos, n):
    feats = torch.zeros(n, TMAX, NF)
    lengths = torch.zeros(n, dtype=torch.long)
    labels = torch.zeros(n, 6, dtype=torch.long)
    label_lengths = torch.zeros(n, dtype=torch.long)
    for i in range(n):
        k = int(torch.randint(3, 7, (1,), generator=g))
        syms = torch.randint(1, NSYM + 1, (k,), generator=g)
        t = 0
        for s in syms.tolist():
            dur = int(torch.randint(4, 8, (1,), generator=g))
            feats[i, t:t + dur] = protos[s] + 0.3 * torch.randn(dur, NF, generator=g)
            t += dur
            gap = int(torch.randint(0, 2, (1,), generator=g))
            feats[i, t:t + gap] = 0.3 * torch.randn(gap, NF, generator=g)
            t += gap
        lengths[i] = t
        labels[i, :k] = syms
        label_lengths[i] = k
    return (feats, lengths), {"labels": labels, "label_lengths": label_lengths}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(NSYM + 1, NF, generator=g)
    batches = [_make_batch(g, protos, 16) for _ in range(12)]
    model = CTCModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 1.0, momentum=0.9)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=ctc_loss_fn(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
