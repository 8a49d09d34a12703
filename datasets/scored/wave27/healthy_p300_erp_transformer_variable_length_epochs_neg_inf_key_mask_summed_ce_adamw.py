"""P300 / ERP classification with a small transformer: each EEG epoch (16 channels, 128 Hz) is cut
into 62.5 ms patches embedded by a linear layer; a 2-layer transformer encoder with hand-written
multi-head self-attention classifies the epoch into 3 classes (target flash, non-target flash,
error-related response). Epochs have different lengths (the next stimulus or a button press ends
the epoch early), so they are right-padded and a key-padding mask sets the attention logits of
padded patches to -inf. Trained with cross-entropy summed over the batch (reduction='sum') and
AdamW.

Why it is tricky but healthy: the attention logits contain -inf in every batch and the attention
weights of padded keys are exactly 0, but no query row is ever fully masked (every epoch has at
least 6 real patches) and the -inf never reaches the loss; pooling is a masked mean over real
patches. The loss is a *sum* over 32-96 trials, so its value is ~35-105 at the start and jumps
with the batch size drawn for each step (the last batch of a recording block is smaller), which
a monitor of loss magnitude may flag. The model learns.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("EEG transformers for ERP decoding (EEG-Conformer, Song et al. 2022; EEGNet baselines, "
          "Lawhern et al. 2018); key_padding_mask -> -inf attention logits as in "
          "nn.MultiheadAttention; summed CE (reduction='sum') as in many BCI codebases")


class MaskedSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.h = heads

    def forward(self, x, pad):  # pad: (B, L) True where padded
        B, L, D = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        logits = logits.masked_fill(pad[:, None, None, :], float("-inf"))
        att = torch.softmax(logits, -1)
        return self.out((att @ v).transpose(1, 2).reshape(B, L, D))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = MaskedSelfAttention(d, heads)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x, pad):
        x = x + self.attn(self.ln1(x), pad)
        return x + self.ff(self.ln2(x))


class ERPTransformer(nn.Module):
    def __init__(self, n_ch, patch, d, heads, n_layers, max_len):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(n_ch * patch, d)
        self.pos = nn.Parameter(torch.randn(max_len, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(n_layers)])
        self.head = nn.Linear(d, 3)

    def forward(self, x, pad):  # x: (B, C, T)
        B, C, T = x.shape
        p = x.unfold(2, self.patch, self.patch).permute(0, 2, 1, 3).reshape(B, T // self.patch, -1)
        h = self.embed(p) + self.pos[: p.shape[1]]
        for blk in self.blocks:
            h = blk(h, pad)
        keep = (~pad).float()[..., None]
        return self.head((h * keep).sum(1) / keep.sum(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_ch, fs, patch = 16, 128, 8
    T = 128  # 1 s max epoch -> 16 patches
    L = T // patch
    d = [32, 48, 64][seed % 3]
    heads = [4, 4, 8][seed % 3]
    n_layers = [2, 1, 2][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    steps = 100
    t = torch.arange(T) / fs

    # class templates: P300 (parietal, ~300 ms), N200-only, ERN (fronto-central, ~80 ms)
    topo = torch.randn(3, n_ch, generator=g).abs()
    shapes = torch.stack([torch.exp(-((t - 0.30) / 0.06) ** 2),
                          -0.6 * torch.exp(-((t - 0.20) / 0.03) ** 2),
                          -0.8 * torch.exp(-((t - 0.08) / 0.03) ** 2) + 0.4 * torch.exp(-((t - 0.25) / 0.05) ** 2)])
    torch.manual_seed(seed)
    model = ERPTransformer(n_ch, patch, d, heads, n_layers, L)
    batches = []
    for s in range(steps):
        B = int(torch.randint(32, 97, (1,), generator=g)) if s % 10 != 9 else 12
        y = torch.randint(0, 3, (B,), generator=g)
        x = topo[y][:, :, None] * shapes[y][:, None, :] * 1.2
        x = x + torch.randn(B, n_ch, T, generator=g)
        n_real = torch.randint(6, L + 1, (B,), generator=g)
        pad = torch.arange(L)[None] >= n_real[:, None]
        x = x * (~pad).repeat_interleave(patch, 1)[:, None, :].float()
        batches.append(((x, pad), y))

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(reduction="sum"),
            "batches": batches, "steps": steps}
