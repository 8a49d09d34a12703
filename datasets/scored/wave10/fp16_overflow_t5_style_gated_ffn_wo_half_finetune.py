"""Mixed-precision (float16 autocast, no GradScaler) fine-tuning of a small T5-style encoder
block loaded from a "pretrained checkpoint" for a ticket-routing classifier. The block is the T5
recipe: scale-only RMSNorm with a learned gain, a bias-free gated-GELU FFN (wi_0, wi_1, wo) and a
residual stream that is not renormalised until the final norm. Pretrained T5 checkpoints are
known to carry large norm gains and large FFN weights, so the gated product gelu(x wi_0) * (x wi_1)
is in the thousands and the down projection `wo` sums 128 such terms: under fp16 autocast the
output of `wo` exceeds 65504 for some tokens and becomes inf, the residual stream and the pooled
features turn into inf/NaN and the loss is non-finite from the first steps. Fixed: exactly what the
Hugging Face T5 port does (`_keep_in_fp32_modules = ["wo"]`): the `wo` projection runs in fp32
(autocast disabled for that op); everything else stays in fp16 autocast.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "block.ffn.wo"
SOURCE = ("huggingface/transformers T5 fp16 NaN/inf reports (T5 FFN activations overflow in fp16; fix: "
          "clamp / _keep_in_fp32_modules=['wo']); Sun et al. 2024 'Massive Activations in LLMs'")

VOCAB, D, D_FF, L, N_CLS = 500, 64, 128, 12, 4


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        x32 = x.float()
        return self.weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6))


class GatedFFN(nn.Module):
    def __init__(self, keep_wo_fp32):
        super().__init__()
        self.wi_0 = nn.Linear(D, D_FF, bias=False)
        self.wi_1 = nn.Linear(D, D_FF, bias=False)
        self.wo = nn.Linear(D_FF, D, bias=False)
        self.keep_wo_fp32 = keep_wo_fp32

    def forward(self, x):
        h = F.gelu(self.wi_0(x), approximate="tanh") * self.wi_1(x)
        if self.keep_wo_fp32:
            with torch.autocast("cpu", enabled=False):
                return self.wo(h.float())
        return self.wo(h)


class T5Block(nn.Module):
    def __init__(self, keep_wo_fp32):
        super().__init__()
        self.norm = RMSNorm(D)
        self.ffn = GatedFFN(keep_wo_fp32)

    def forward(self, x):
        return x + self.ffn(self.norm(x))


class TicketRouter(nn.Module):
    def __init__(self, keep_wo_fp32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.block = T5Block(keep_wo_fp32)
        self.final_norm = RMSNorm(D)
        self.classifier = nn.Linear(D, N_CLS)

    def forward(self, ids, mask):
        x = self.final_norm(self.block(self.embed(ids)))
        m = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1)
        return self.classifier(pooled)


def load_pretrained_like(model, g):
    # stand-in for a checkpoint: magnitudes typical of a trained T5 block (large norm gains / FFN weights)
    with torch.no_grad():
        model.embed.weight.copy_(torch.randn(VOCAB, D, generator=g) * 4.0)
        model.block.norm.weight.copy_(6.0 + torch.rand(D, generator=g) * 4.0)
        model.block.ffn.wi_0.weight.copy_(torch.randn(D_FF, D, generator=g) * 0.7)
        model.block.ffn.wi_1.weight.copy_(torch.randn(D_FF, D, generator=g) * 0.7)
        model.block.ffn.wo.weight.copy_(torch.randn(D, D_FF, generator=g) * 1.0)


def loss_fn(out, y):
    return F.cross_entropy(out, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TicketRouter(keep_wo_fp32=fixed)
    load_pretrained_like(model, g)
    keywords = torch.randperm(VOCAB, generator=g)[: N_CLS * 10].view(N_CLS, 10)
    steps, bs = 100, 32
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLS, (bs,), generator=g)
        ids = torch.randint(0, VOCAB, (bs, L), generator=g)
        kw = keywords[y][torch.arange(bs).unsqueeze(1), torch.randint(0, 10, (bs, 3), generator=g)]
        ids[:, :3] = kw
        ids = ids[:, torch.randperm(L, generator=g)]
        lengths = torch.randint(L // 2, L + 1, (bs,), generator=g)
        mask = torch.arange(L).unsqueeze(0) < lengths.unsqueeze(1)
        batches.append(((ids, mask), y))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
