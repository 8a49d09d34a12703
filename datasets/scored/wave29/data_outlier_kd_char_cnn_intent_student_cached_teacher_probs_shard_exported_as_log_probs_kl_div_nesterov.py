"""Offline knowledge distillation of a character-CNN intent classifier from cached
teacher soft labels (temperature T, Hinton et al. 2015: T^2 * KL(p_teacher || q_student/T)
plus a hard-label cross-entropy), trained with Nesterov SGD.

Mechanism: the teacher's soft labels were precomputed once and stored in shards.  One
shard was written by a different export script that saved ``log_softmax(teacher/T)``
instead of ``softmax(teacher/T)`` (same shape, same dtype, silently accepted).  When that
shard's batch arrives (its position in the stream varies with the seed) the "probabilities"
are all negative; ``F.kl_div`` evaluates target*log(target) on them, log of a negative
number is NaN, and the loss of that step is NaN.  Every other batch is clean and the run is
calm until then.

ORIGIN: None -- the corrupt values are targets that never pass through a module; the
first non-finite value appears inside the loss, not in any layer of the student.

Fix: sanitise the cached shard when it is loaded (rows that are not a probability vector,
i.e. negative entries, are log-probabilities and are exponentiated back), which is what
re-exporting that shard correctly gives.  Same student, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Offline KD with cached teacher outputs (Hinton et al. 2015; DistilBERT-style logit "
          "caches); known pattern: one cache shard stored log-probs instead of probs, "
          "kl_div(target<0) -> NaN (PyTorch kl_div expects probabilities unless log_target=True)")

VOCAB, SEQ = 40, 32


class CharCNN(nn.Module):
    def __init__(self, emb, ch, n_cls, kernels):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, emb)
        self.convs = nn.ModuleList([nn.Conv1d(emb, ch, k, padding=k // 2) for k in kernels])
        self.fc = nn.Linear(ch * len(kernels), n_cls)

    def forward(self, tok):
        h = self.emb(tok).transpose(1, 2)
        feats = [F.relu(c(h)).amax(dim=2) for c in self.convs]
        return self.fc(torch.cat(feats, dim=1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(3000 + seed)
    n_cls = 6
    T = [2.0, 4.0, 3.0][seed % 3]
    emb = [24, 32, 16][seed % 3]
    ch = [48, 64, 32][seed % 3]
    kernels = [(3, 5), (3, 5, 7), (2, 4)][seed % 3]
    lr = [0.05, 0.03, 0.08][seed % 3]
    bs = [64, 48, 80][seed % 3]
    steps = 160
    bad_step = [57, 94, 121][seed % 3]

    # "teacher": keyword-spotting rule over character bigram patterns (stands in for a large model)
    key_a = torch.randint(0, VOCAB, (n_cls, 3), generator=g)
    key_b = torch.randint(0, VOCAB, (n_cls, 3), generator=g)

    def teacher_logits(tok):
        sc = torch.zeros(tok.shape[0], n_cls)
        for c in range(n_cls):
            hit = ((tok[:, :-1].unsqueeze(2) == key_a[c]) & (tok[:, 1:].unsqueeze(2) == key_b[c]))
            sc[:, c] = hit.float().sum(dim=(1, 2))
        return 3.0 * sc + 0.3 * torch.randn(tok.shape[0], n_cls, generator=g)

    batches = []
    for step in range(steps):
        tok = torch.randint(0, VOCAB, (bs, SEQ), generator=g)
        lab = torch.randint(0, n_cls, (bs,), generator=g)
        # plant one keyword bigram of the labelled intent in each utterance
        pos = torch.randint(0, SEQ - 1, (bs,), generator=g)
        j = torch.randint(0, 3, (bs,), generator=g)
        tok[torch.arange(bs), pos] = key_a[lab, j]
        tok[torch.arange(bs), pos + 1] = key_b[lab, j]
        t_log = teacher_logits(tok)
        soft = F.softmax(t_log / T, dim=1)
        if step == bad_step:
            soft = F.log_softmax(t_log / T, dim=1)       # shard written by the other export script
        if fixed and (soft < 0).any():
            soft = soft.exp()                             # loader-side sanitisation of the shard
        y = torch.cat([soft, t_log.argmax(1, keepdim=True).float()], dim=1)
        batches.append((tok, y))

    torch.manual_seed(seed)
    model = CharCNN(emb, ch, n_cls, kernels)

    def loss_fn(out, y):
        p_t, hard = y[:, :n_cls], y[:, n_cls].long()
        kd = F.kl_div(F.log_softmax(out / T, dim=1), p_t, reduction="batchmean") * T * T
        return 0.7 * kd + 0.3 * F.cross_entropy(out, hard)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
