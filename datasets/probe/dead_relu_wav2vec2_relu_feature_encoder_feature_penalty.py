"""wav2vec 2.0-style self-supervised pretraining on raw waveforms: strided conv feature encoder (kaiming init,
conv bias), masked Transformer context network, Gumbel-softmax product quantizer, contrastive + diversity loss
+ the wav2vec 2.0 feature penalty 10 * features.pow(2).mean(). The encoder's activation was copied from wav2vec 1.0:
ReLU. The penalty gradient on the last conv layer always says 'smaller output' and its inputs are non-negative
(ReLU outputs), so under Adam every weight and bias of a unit drifts down together; within ~20 steps nearly every
unit of the last ReLU is negative for every frame: zero output, zero gradient, never recovers. The features
become constant, positives equal negatives and the contrastive loss sits at log(1 + K) for the rest of the run.
fixed=True: the encoder uses LeakyReLU(0.1), so units pushed below zero still get gradient; nothing else changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "feature_extractor.act3"
SOURCE = ("wav2vec 2.0 (Baevski et al. 2020, fairseq Wav2Vec2Model: features_pen, GumbelVectorQuantizer, "
          "contrastive + diversity loss) combined with the ReLU conv encoder of wav2vec 1.0; dying ReLU under "
          "an activation L2 penalty with Adam")

SR, N_SAMP = 8000, 4000
D_FEAT, D_MODEL, N_NEG, TEMP = 64, 64, 10, 0.1
GROUPS, VARS = 2, 16


class FeatureEncoder(nn.Module):
    def __init__(self, act):
        super().__init__()
        A = (lambda: nn.LeakyReLU(0.1)) if act == "leaky" else nn.ReLU
        self.conv1 = nn.Conv1d(1, D_FEAT, 10, stride=5, bias=True)
        self.norm1 = nn.GroupNorm(D_FEAT, D_FEAT)                    # wav2vec2 'default' mode: GN on layer 1 only
        self.act1 = A()
        self.conv2 = nn.Conv1d(D_FEAT, D_FEAT, 4, stride=4, bias=True)
        self.act2 = A()
        self.conv3 = nn.Conv1d(D_FEAT, D_FEAT, 4, stride=4, bias=True)
        self.act3 = A()
        for conv in (self.conv1, self.conv2, self.conv3):             # fairseq: kaiming_normal_ (conv_bias=True as in the lv60 configs)
            nn.init.kaiming_normal_(conv.weight)

    def forward(self, wav):
        x = self.act1(self.norm1(self.conv1(wav.unsqueeze(1))))
        x = self.act2(self.conv2(x))
        return self.act3(self.conv3(x))                              # B, C, T


class GumbelQuantizer(nn.Module):
    def __init__(self, dim, groups=GROUPS, num_vars=VARS, vq_dim=D_MODEL, tau=2.0):
        super().__init__()
        self.groups, self.num_vars, self.tau = groups, num_vars, tau
        self.weight_proj = nn.Linear(dim, groups * num_vars)
        nn.init.normal_(self.weight_proj.weight, std=1.0)
        nn.init.zeros_(self.weight_proj.bias)
        self.codevectors = nn.Parameter(torch.rand(1, groups * num_vars, vq_dim // groups))

    def forward(self, x):                                             # B, T, C
        B, T, _ = x.shape
        logits = self.weight_proj(x).view(B * T * self.groups, -1)
        avg_probs = torch.softmax(logits.view(B * T, self.groups, -1).float(), -1).mean(0)
        perplexity = torch.exp(-(avg_probs * torch.log(avg_probs + 1e-7)).sum(-1)).sum()
        onehot = F.gumbel_softmax(logits.float(), tau=self.tau, hard=True).type_as(x)
        onehot = onehot.view(B * T, self.groups * self.num_vars, 1)
        q = (onehot * self.codevectors).view(B * T, self.groups, self.num_vars, -1).sum(-2)
        return q.view(B, T, -1), perplexity


class Wav2Vec2Lite(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.feature_extractor = FeatureEncoder(act)
        self.layer_norm = nn.LayerNorm(D_FEAT)
        self.post_extract_proj = nn.Linear(D_FEAT, D_MODEL)
        self.mask_emb = nn.Parameter(torch.rand(D_MODEL))
        self.pos_conv = nn.Conv1d(D_MODEL, D_MODEL, 9, padding=4, groups=8)
        layer = nn.TransformerEncoderLayer(D_MODEL, 4, 128, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.quantizer = GumbelQuantizer(D_FEAT)
        self.project_q = nn.Linear(D_MODEL, D_MODEL)
        self.final_proj = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, wav, mask, neg_idx):
        feats = self.feature_extractor(wav)
        features_pen = feats.float().pow(2).mean()
        feats = self.layer_norm(feats.transpose(1, 2))                # B, T, C
        unmasked = feats
        x = self.post_extract_proj(feats)
        x = torch.where(mask[..., None], self.mask_emb.to(x.dtype), x)
        x = x + F.gelu(self.pos_conv(x.transpose(1, 2))).transpose(1, 2)
        c = self.final_proj(self.encoder(x))
        q, perplexity = self.quantizer(unmasked)
        q = self.project_q(q)
        B, T, Dm = q.shape
        negs = q[torch.arange(B)[:, None, None], neg_idx]                 # B, T, K, D
        targets = torch.cat([q.unsqueeze(2), negs], 2)                    # B, T, 1+K, D
        logits = F.cosine_similarity(c.unsqueeze(2), targets, dim=-1) / TEMP
        logits = logits[mask]                                             # only masked frames
        return dict(logits=logits, perplexity=perplexity, features_pen=features_pen)


def w2v_loss(out, _target=None):
    contrastive = F.cross_entropy(out["logits"].float(), torch.zeros(len(out["logits"]), dtype=torch.long))
    n_codes = GROUPS * VARS
    diversity = (n_codes - out["perplexity"]) / n_codes
    return contrastive + 0.1 * diversity + 10.0 * out["features_pen"]


def _utterance(g):
    t = torch.arange(N_SAMP) / SR
    y = torch.zeros(N_SAMP)
    pos = int(torch.randint(0, 300, (1,), generator=g))
    while pos < N_SAMP - 300:
        L = min(int(torch.randint(500, 1400, (1,), generator=g)), N_SAMP - pos)
        f0 = 90 + 160 * torch.rand(1, generator=g)
        F1 = 250 + 600 * torch.rand(1, generator=g)
        F2 = 900 + 1500 * torch.rand(1, generator=g)
        k = torch.arange(1, 30).float()[:, None]
        fk = k * f0
        amp = (torch.exp(-((fk - F1) / 120) ** 2) + torch.exp(-((fk - F2) / 160) ** 2) + 0.01) * (fk < 3800).float()
        s = (amp * torch.sin(2 * math.pi * fk * t[:L] + 2 * math.pi * torch.rand(k.shape, generator=g))).sum(0)
        y[pos:pos + L] += s * torch.hann_window(L) / s.abs().max() * (0.2 + 0.5 * torch.rand(1, generator=g))
        pos += L + int(torch.randint(0, 400, (1,), generator=g))
    return y + 0.003 * torch.randn(N_SAMP, generator=g)


def _n_frames():
    t = (N_SAMP - 10) // 5 + 1
    t = (t - 4) // 4 + 1
    return (t - 4) // 4 + 1


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    wavs = torch.stack([_utterance(g) for _ in range(64)])
    T = _n_frames()
    steps, bs = 200, 8
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(wavs), (bs,), generator=g)
        mask = torch.zeros(bs, T, dtype=torch.bool)
        for b in range(bs):                                           # span masking: p=0.65-ish, span 3
            starts = torch.nonzero(torch.rand(T, generator=g) < 0.2).flatten()
            for s in starts:
                mask[b, s:s + 3] = True
        # negatives: K other frames of the same utterance (never the positive itself)
        neg = torch.randint(0, T - 1, (bs, T, N_NEG), generator=g)
        neg = neg + (neg >= torch.arange(T)[None, :, None]).long()
        batches.append(((wavs[idx], mask, neg), torch.zeros(bs)))
    model = Wav2Vec2Lite("leaky" if fixed else "relu")
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=w2v_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
