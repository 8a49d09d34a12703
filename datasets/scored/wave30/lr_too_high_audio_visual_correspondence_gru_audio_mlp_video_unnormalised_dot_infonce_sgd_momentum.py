"""Audio-visual correspondence pre-training: a GRU audio tower over log-mel frames and an
MLP video tower over per-clip frame features, trained with symmetric InfoNCE on raw
(un-normalised) dot products between the two embeddings, SGD with momentum 0.9.

Mechanism: the SGD learning rate (0.4-0.8) was taken from a recipe that L2-normalises the
embeddings and divides by a temperature; here the scores are raw dot products a_i . v_j.
The gradient on each tower is proportional to the size of the *other* tower's embedding, so
every over-sized step enlarges both embeddings and makes the next step larger still: the
projection weights and the logits grow geometrically (update/weight ratios >> 1e-3), the
logits pass the float32 range within a few dozen steps and the loss becomes inf/NaN.

ORIGIN: None - the overshoot is a global step-size problem; both towers' projections blow
up together.

Fix: lr 0.04 (the same SGD-momentum, model, data and steps).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Audio-visual correspondence / AVID-style InfoNCE (Arandjelovic & Zisserman 2017, "
          "Morgado et al. 2021); reports of 'contrastive loss goes to NaN' after copying the "
          "lr of a normalised-embedding recipe to un-normalised dot-product scores")


class AVNet(nn.Module):
    def __init__(self, n_mels, vid_dim, hid, emb):
        super().__init__()
        self.audio_rnn = nn.GRU(n_mels, hid, batch_first=True)
        self.audio_proj = nn.Linear(hid, emb)
        self.video = nn.Sequential(nn.Linear(vid_dim, hid), nn.ReLU(), nn.Linear(hid, emb))

    def forward(self, mel, vid):
        _, h = self.audio_rnn(mel)
        a = self.audio_proj(h[-1])
        v = self.video(vid)
        return a @ v.T


def sym_infonce(logits, target):
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hid = [48, 64, 32][seed % 3]
    emb = [32, 24, 48][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.5, 0.8, 0.4][seed % 3]
    if fixed:
        lr = 0.04
    steps = 150
    n_mels, T, vid_dim, n_lat = 16, 20, 32, 6
    mel_basis = torch.randn(n_lat, n_mels, generator=g)
    vid_basis = torch.randn(n_lat, vid_dim, generator=g) / n_lat ** 0.5
    t = torch.linspace(0, 1, T).view(1, T, 1)
    batches = []
    for _ in range(steps):
        lat = torch.randn(bs, n_lat, generator=g)
        onset = torch.rand(bs, 1, 1, generator=g) * 0.6
        env = torch.exp(-((t - onset - 0.2) ** 2) / 0.02)
        mel = env * (lat @ mel_basis).unsqueeze(1) + 0.3 * torch.randn(bs, T, n_mels, generator=g)
        vid = torch.tanh(lat @ vid_basis) + 0.2 * torch.randn(bs, vid_dim, generator=g)
        batches.append(((mel, vid), torch.arange(bs)))
    model = AVNet(n_mels, vid_dim, hid, emb)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=sym_infonce, batches=batches, steps=steps)
