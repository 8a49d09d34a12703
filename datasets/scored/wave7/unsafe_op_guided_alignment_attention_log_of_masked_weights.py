"""A small attention-based text-to-frames model (positional + conv token encoder, learned decoder queries, one
cross-attention layer with a key padding mask, linear frame predictor) is trained with a frame MSE
plus a guided-alignment loss: the cross-entropy between a known monotonic alignment and the
attention weights, -sum_i A*_ji log(attn_ji). The attention module returns log(attn) for that loss,
computed as torch.log(softmax(scores.masked_fill(pad, -inf))). Padded encoder positions have weight
exactly 0, log(0) = -inf, and the alignment target there is 0, so the loss contains 0 * (-inf) = NaN.
For the first 50 steps the curriculum feeds only full-length utterances (no padding) and the run is
calm; when variable-length utterances arrive the loss is NaN at the first padded batch and the NaN
gradients wipe the weights. Taking the log of the weights clamped to a small epsilon (1e-8) keeps
the masked terms at 0 and the run trains."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "attn"
SOURCE = ("guided attention / alignment supervision (Tachibana et al. 2018; attn_logprob in "
          "FastSpeech2/RAD-TTS style aligners): 0 * log(0) = NaN at masked positions")

V, D, T_IN, UP, F_OUT = 20, 32, 12, 2, 4
T_OUT = T_IN * UP


class CrossAttention(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.eps = eps

    def forward(self, queries, memory, mem_mask):
        s = self.q(queries) @ self.k(memory).transpose(1, 2) / math.sqrt(memory.shape[-1])
        s = s.masked_fill(~mem_mask.unsqueeze(1), float("-inf"))
        attn = torch.softmax(s, -1)
        log_attn = torch.log(attn.clamp_min(self.eps)) if self.eps > 0 else torch.log(attn)
        return attn @ self.v(memory), log_attn


class Aligner(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.pos = nn.Parameter(torch.randn(T_IN, D) * 0.5)
        self.enc = nn.Conv1d(D, D, kernel_size=3, padding=1)
        self.queries = nn.Parameter(torch.randn(T_OUT, D) * 0.5)
        self.attn = CrossAttention(D, eps)
        self.out = nn.Linear(D, F_OUT)

    def forward(self, ids, mask):
        mem = torch.relu(self.enc((self.emb(ids) + self.pos).transpose(1, 2))).transpose(1, 2)
        ctx, log_attn = self.attn(self.queries.expand(ids.shape[0], -1, -1), mem, mask)
        return {"frames": self.out(ctx), "log_attn": log_attn}


def loss_fn(out, y):
    frames, align, frame_mask = y["frames"], y["align"], y["frame_mask"]
    fm = frame_mask.unsqueeze(-1).float()
    mse = (((out["frames"] - frames) ** 2) * fm).sum() / (fm.sum() * F_OUT)
    ce = -(align * out["log_attn"]).sum(-1)                   # per output frame
    ce = (ce * frame_mask).sum() / frame_mask.sum()
    return mse + 0.1 * ce


def make_batch(g, codebook, bs, variable):
    lengths = torch.randint(6, T_IN + 1, (bs,), generator=g) if variable else torch.full((bs,), T_IN)
    mask = torch.arange(T_IN).unsqueeze(0) < lengths.unsqueeze(1)
    ids = torch.randint(1, V, (bs, T_IN), generator=g) * mask        # 0 = padding id
    src = torch.arange(T_OUT) // UP                                  # monotonic alignment
    frame_mask = src.unsqueeze(0) < lengths.unsqueeze(1)
    align = F.one_hot(src, T_IN).float().unsqueeze(0) * frame_mask.unsqueeze(-1)
    frames = codebook[ids.gather(1, src.unsqueeze(0).expand(bs, -1))] * frame_mask.unsqueeze(-1)
    return (ids, mask), {"frames": frames, "align": align, "frame_mask": frame_mask.float()}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Aligner(eps=1e-8 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    codebook = torch.randn(V, F_OUT, generator=g)
    steps, curriculum = 150, 50
    batches = [make_batch(g, codebook, 16, variable=step >= curriculum) for step in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
