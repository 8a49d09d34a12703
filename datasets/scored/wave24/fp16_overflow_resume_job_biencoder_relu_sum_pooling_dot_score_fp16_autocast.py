"""Resume <-> job-posting matcher: a bi-encoder whose towers embed tokens, apply a
Linear -> ReLU per token and SUM-pool over the document (a "bag of skills" encoder); the match
logit is 10 x a hand-written cosine, (u * v).sum(-1) / (|u| |v|); BCE-with-logits on
shortlisted labels, Adam, run under torch.autocast(float16) to save memory on long resumes --
with no GradScaler and nothing kept in float32.

Mechanism: post-ReLU token features are non-negative, so the sum-pooled document vectors grow
linearly with document length and all lie in the positive orthant. The cosine itself is
bounded, but its numerator (u * v).sum(-1) is ~ d * (L_resume * f) * (L_job * f) and is
computed in float16 under autocast (elementwise product and sum keep the input dtype; the
sum's float32 accumulator is cast back to float16 on output). With the short resumes of the
first batches it stays below 65504 and training is normal; as soon as a batch of long senior
resumes arrives (which step varies with the seed) the numerator exceeds 65504, becomes inf,
the "cosine" is inf and BCE-with-logits returns an inf / NaN loss.

ORIGIN: "resume_tower.act", the ReLU whose non-negative features the sum pooling accumulates
(its output is where float16 values start to grow toward the limit; the overflow itself
happens in the functional cosine numerator).

Fix: run the same autocast region in bfloat16 (float32 exponent range), i.e.
amp_dtype=torch.bfloat16; same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "resume_tower.act"
SOURCE = ("fp16 range overflow (max 65504) in un-normalised dot-product scores under AMP "
          "(PyTorch AMP docs, 'ops that can overflow in float16'; bf16 as the usual fix); "
          "bag-of-skills bi-encoders for resume-job matching (e.g. ConSultantBERT, JobBERT "
          "baselines)")


class Tower(nn.Module):
    def __init__(self, vocab, emb, d):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.proj = nn.Linear(emb, d)
        self.act = nn.ReLU()

    def forward(self, tok):
        h = self.act(self.proj(self.emb(tok)))
        return (h * tok.ne(0).unsqueeze(-1)).sum(1)


class ResumeJobBiEncoder(nn.Module):
    def __init__(self, vocab, emb, d):
        super().__init__()
        self.resume_tower = Tower(vocab, emb, d)
        self.job_tower = Tower(vocab, emb, d)
        self.bias = nn.Parameter(torch.zeros(()))
        self.inv_tau = 10.0

    def forward(self, resume, job):
        u, v = self.resume_tower(resume), self.job_tower(job)
        cos = (u * v).sum(-1) / (u.norm(dim=-1) * v.norm(dim=-1) + 1e-4)   # hand-written cosine
        return self.inv_tau * cos + self.bias


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    vocab, emb, steps = 1200, 32, 100
    d = [64, 80, 96][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    long_from = 10 + (7 * seed) % 25         # long senior resumes start arriving here
    torch.manual_seed(seed)
    model = ResumeJobBiEncoder(vocab, emb, d)
    skill_of = torch.randint(0, 40, (vocab,), generator=g)   # latent skill cluster per token
    batches = []
    for t in range(steps):
        Lr = int(torch.randint(50, 90, (1,), generator=g)) * (6 if t >= long_from else 1)
        Lj = int(torch.randint(40, 70, (1,), generator=g))
        job = torch.randint(1, vocab, (bs, Lj), generator=g)
        match = torch.rand(bs, generator=g) < 0.4
        resume = torch.randint(1, vocab, (bs, Lr), generator=g)
        # a matching resume reuses many tokens of the job's skill clusters
        k = Lr // 3
        src = job[torch.arange(bs)[:, None], torch.randint(0, Lj, (bs, k), generator=g)]
        resume[:, :k] = torch.where(match[:, None], src, resume[:, :k])
        batches.append(((resume, job), match.float()))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
