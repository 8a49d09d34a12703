"""HEALTHY hard negative: a Tacotron-2-style text-to-mel model (conv + BiGRU encoder,
location-sensitive attention, prenet + attention-GRU + decoder-GRU, reduction factor r,
mel and stop-token heads) whose loss is SUMMED over frames and mel bins.

What looks alarming. The mel loss is `sum over frames and bins of squared error / batch`
(as in several Tacotron ports that follow the "per-utterance" convention), so the reported
loss is in the thousands at step 0 and the gradient norms are 100-1000x what a mean-reduced
loss would give - the signature one would expect from unnormalised targets. The stop-token
BCE carries a pos_weight (rare "stop" frames), the attention energies go through tanh, and the
loss is noisy from batch to batch because utterance lengths (and so the summed loss) vary.

Why it is benign. The targets are properly normalised (log-mel mapped to [-4, 4], padding at
the silence value -4), the inputs are token ids, and the optimiser is Adam, which is invariant
to the overall scale of the loss: the update/weight ratios are the ordinary ~1e-3 of lr 1e-3.
The model learns the text-to-mel mapping and the summed loss falls steadily, roughly
halving within the run (per frame and bin from about 5 to about 2.5). There is nothing to
fix: `fixed` builds the identical run.

ORIGIN = None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Tacotron 2 (Shen et al. 2018) with location-sensitive attention and a gate/stop head with "
          "pos_weight, as in NVIDIA/Rayhane-mamah ports; mel loss summed per utterance so the loss "
          "reads in the thousands while Adam trains normally.")

PAD_MEL = -4.0


class Encoder(nn.Module):
    def __init__(self, n_sym, dim):
        super().__init__()
        self.embed = nn.Embedding(n_sym, dim)
        self.convs = nn.ModuleList([nn.Conv1d(dim, dim, 5, padding=2) for _ in range(2)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(dim) for _ in range(2)])
        self.rnn = nn.GRU(dim, dim // 2, batch_first=True, bidirectional=True)

    def forward(self, text):
        x = self.embed(text).transpose(1, 2)
        for c, n in zip(self.convs, self.norms):
            x = F.relu(n(c(x)))
        return self.rnn(x.transpose(1, 2))[0]          # (B, L, dim)


class LocationAttention(nn.Module):
    def __init__(self, q_dim, k_dim, a_dim, n_filt=8, k=15):
        super().__init__()
        self.query = nn.Linear(q_dim, a_dim, bias=False)
        self.keys = nn.Linear(k_dim, a_dim, bias=False)
        self.loc_conv = nn.Conv1d(2, n_filt, k, padding=k // 2, bias=False)
        self.loc_proj = nn.Linear(n_filt, a_dim, bias=False)
        self.v = nn.Linear(a_dim, 1)

    def forward(self, q, pkeys, memory, prev, cum):
        loc = self.loc_proj(self.loc_conv(torch.stack([prev, cum], 1)).transpose(1, 2))
        e = self.v(torch.tanh(self.query(q).unsqueeze(1) + pkeys + loc)).squeeze(2)
        w = torch.softmax(e, dim=1)
        return torch.bmm(w.unsqueeze(1), memory).squeeze(1), w


class Decoder(nn.Module):
    def __init__(self, n_mels, r, enc_dim, pre_dim, att_rnn, dec_rnn, a_dim):
        super().__init__()
        self.n_mels, self.r = n_mels, r
        self.prenet = nn.Sequential(nn.Linear(n_mels, pre_dim), nn.ReLU(), nn.Linear(pre_dim, pre_dim), nn.ReLU())
        self.att_rnn = nn.GRUCell(pre_dim + enc_dim, att_rnn)
        self.attention = LocationAttention(att_rnn, enc_dim, a_dim)
        self.dec_rnn = nn.GRUCell(att_rnn + enc_dim, dec_rnn)
        self.mel_out = nn.Linear(dec_rnn + enc_dim, n_mels * r)
        self.stop_out = nn.Linear(dec_rnn + enc_dim, r)

    def forward(self, memory, mel_in):                 # teacher forcing; mel_in (B, T, n_mels)
        B, L, E = memory.shape
        steps = mel_in.shape[1] // self.r
        go = torch.full((B, 1, self.n_mels), PAD_MEL)
        prev_frames = torch.cat([go, mel_in[:, self.r - 1:-1:self.r]], 1)[:, :steps]   # last frame of previous group
        pre = self.prenet(prev_frames)
        pkeys = self.attention.keys(memory)
        h_att = memory.new_zeros(B, self.att_rnn.hidden_size)
        h_dec = memory.new_zeros(B, self.dec_rnn.hidden_size)
        ctx = memory.new_zeros(B, E)
        w = memory.new_zeros(B, L)
        w[:, 0] = 1.0
        cum = w.clone()
        mels, stops = [], []
        for s in range(steps):
            h_att = self.att_rnn(torch.cat([pre[:, s], ctx], 1), h_att)
            ctx, w = self.attention(h_att, pkeys, memory, w, cum)
            cum = cum + w
            h_dec = self.dec_rnn(torch.cat([h_att, ctx], 1), h_dec)
            o = torch.cat([h_dec, ctx], 1)
            mels.append(self.mel_out(o).view(B, self.r, self.n_mels))
            stops.append(self.stop_out(o))
        return torch.cat(mels, 1), torch.cat(stops, 1)


class Tacotron(nn.Module):
    def __init__(self, n_sym, n_mels, r, dim):
        super().__init__()
        self.encoder = Encoder(n_sym, dim)
        self.decoder = Decoder(n_mels, r, dim, pre_dim=64, att_rnn=dim, dec_rnn=dim, a_dim=64)

    def forward(self, text, mel_in):
        return self.decoder(self.encoder(text), mel_in)


class TacoLoss(nn.Module):
    def __init__(self, pos_weight):
        super().__init__()
        self.pos_weight = torch.tensor(pos_weight)

    def forward(self, out, target):
        mel, stop = out
        mel_t, stop_t = target
        mel_loss = ((mel - mel_t) ** 2).sum() / mel.shape[0]            # summed per utterance
        stop_loss = F.binary_cross_entropy_with_logits(stop, stop_t, pos_weight=self.pos_weight)
        return mel_loss + stop_loss


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2024 + seed)
    n_sym = [20, 28, 24][seed % 3]
    n_mels = [20, 24, 32][(seed + 1) % 3]
    r = 2 if seed % 2 else 3
    dim = [64, 48, 64][seed % 3]
    L = [8, 10, 12][seed % 3]
    bs = [6, 8][seed % 2]
    steps = 100 + 10 * (seed % 3)
    protos = torch.rand(n_sym, n_mels, generator=g) * 6 - 3       # per-symbol spectral shape
    smooth = torch.tensor([0.25, 0.5, 0.25]).view(1, 1, 3)
    batches = []
    for _ in range(steps):
        text = torch.randint(1, n_sym, (bs, L), generator=g)
        durs = torch.randint(2, 5, (bs, L), generator=g)
        lens = durs.sum(1)
        T = int(math.ceil((int(lens.max()) + 2) / r) * r)
        mel = torch.full((bs, T, n_mels), PAD_MEL)
        stop = torch.zeros(bs, T)
        for b in range(bs):
            frames = torch.repeat_interleave(protos[text[b]], durs[b], dim=0)
            frames = F.conv1d(F.pad(frames.t().unsqueeze(1), (1, 1), mode="replicate"), smooth).squeeze(1).t()
            frames = frames + 0.1 * torch.randn(frames.shape, generator=g)
            n = frames.shape[0]
            mel[b, :n] = frames.clamp(-4, 4)
            stop[b, n - 1:] = 1.0
        batches.append(((text, mel), (mel, stop)))
    model = Tacotron(n_sym, n_mels, r, dim)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=1e-6)
    return dict(model=model, optimizer=opt, loss_fn=TacoLoss(5.0 + seed % 3), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
