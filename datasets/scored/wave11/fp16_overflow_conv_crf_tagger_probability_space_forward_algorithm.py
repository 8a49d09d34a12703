"""Sequence-labelling model (embedding + Conv1d encoder + linear-chain CRF) whose CRF partition
function is computed with the textbook forward algorithm in probability space: alpha_t =
(alpha_{t-1} @ exp(T)) * exp(emit_t), Z = sum(alpha_L). For the short sentences of this corpus the
unnormalised alphas stay far below the fp32 limit (log alpha ~20-60), so the fp32 run and a bf16 run
(same 8-bit exponent) train normally. Turning on float16 autocast without a GradScaler makes the
emission matmul and the alpha recursion run in half precision: after a handful of positions alpha
exceeds 65504, becomes inf, log(Z) = inf and the NLL is non-finite from the first step. The fix
keeps the same code but autocasts to bfloat16 (fp32 range)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "crf"
SOURCE = ("Probability-space CRF / HMM forward algorithm (Rabiner 1989 warns alphas over/underflow "
          "without scaling) in hand-written BiLSTM-CRF/CNN-CRF taggers; enabling fp16 mixed precision "
          "without loss scaling, range 65504 vs bf16's fp32 exponent")

VOCAB, NTAG, TMAX = 200, 6, 8


class LinearChainCRF(nn.Module):
    def __init__(self, ntag):
        super().__init__()
        self.trans = nn.Parameter(torch.zeros(ntag, ntag))
        self.start = nn.Parameter(torch.zeros(ntag))

    def nll(self, emit, tags, mask):
        # emit: [B, T, K], tags: [B, T] long, mask: [B, T] bool (prefix masks)
        B, T, K = emit.shape
        # partition function, probability space
        alpha = torch.exp(self.start + emit[:, 0])                     # [B, K]
        E = torch.exp(self.trans)
        for t in range(1, T):
            nxt = (alpha @ E) * torch.exp(emit[:, t])
            alpha = torch.where(mask[:, t:t + 1], nxt, alpha)
        log_z = torch.log(alpha.sum(-1))
        # score of the gold path (log space)
        gold = self.start[tags[:, 0]] + emit[:, 0].gather(1, tags[:, :1]).squeeze(1)
        for t in range(1, T):
            step = self.trans[tags[:, t - 1], tags[:, t]] + emit[:, t].gather(1, tags[:, t:t + 1]).squeeze(1)
            gold = gold + step * mask[:, t].to(step.dtype)
        return (log_z - gold).mean()


class ConvCRFTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.conv1 = nn.Conv1d(32, 64, 3, padding=1)
        self.conv2 = nn.Conv1d(64, 64, 3, padding=1)
        self.emit = nn.Linear(64, NTAG)
        self.crf = LinearChainCRF(NTAG)

    def forward(self, ids, mask):
        h = self.embed(ids).transpose(1, 2)
        h = F.relu(self.conv1(h))
        h = F.relu(self.conv2(h)).transpose(1, 2)
        return self.emit(h), mask


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    tok_class = torch.randint(0, 4, (VOCAB,), generator=g)
    steps, B = 90, 24
    batches = []
    for _ in range(steps):
        ids = torch.randint(1, VOCAB, (B, TMAX), generator=g)
        lens = torch.randint(5, TMAX + 1, (B,), generator=g)
        mask = torch.arange(TMAX)[None, :] < lens[:, None]
        c = tok_class[ids]
        tags = c.clone()
        # "inside" tags: a class-1 token followed by a class-2/3 token continues the entity
        cont = (c[:, 1:] >= 2) & (c[:, :-1] == 1)
        tags[:, 1:][cont] = 4
        tags[:, 1:][(c[:, 1:] == 0) & (c[:, :-1] == 0)] = 5
        ids = ids.masked_fill(~mask, 0)
        tags = tags.masked_fill(~mask, 0)
        batches.append(((ids, mask), tags))
    model = ConvCRFTagger()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def loss_fn(out, tags):
        emit, mask = out
        return model.crf.nll(emit, tags, mask)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
