"""Pointer-generator summariser (See et al. 2017: BiLSTM encoder, LSTM decoder, Bahdanau attention, p_gen
mixing vocabulary and copy distributions) trained under float16 autocast, with the common hand-written
masked softmax exp(e) * mask / sum(exp(e) * mask). The energies e = v.tanh(W_h h + W_s s) leave a Linear
in float16, and exp of a float16 value above ~11.1 passes 65504 = inf; as attention sharpens for copying,
energies cross that line mid-run and inf/inf turns the attention (and the loss) into NaN.
fixed=True: the same masked softmax computed in float32 (energies cast with .float() before exp).
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "attention"
SOURCE = ("See et al. 2017 'Get To The Point' pointer-generator (abisee/pointer-generator, atulkum/"
          "pointer_summarizer) with the widespread 'masked_softmax = exp(x) * mask / sum' helper; "
          "mixed-precision reports of attention NaNs where exp overflows float16 (max 65504, exp(11.09))")

V = 400                     # in-vocabulary size; ids >= V are per-article OOVs (extended vocabulary)
PAD, UNK, BOS, EOS = 0, 1, 2, 3
MAX_OOV = 8
N_FACTS = 3
SRC_LEN = 32
BATCH = 16
EMB, HID = 32, 64


class BahdanauAttention(nn.Module):
    def __init__(self, fp32_softmax):
        super().__init__()
        self.W_h = nn.Linear(2 * HID, HID, bias=False)
        self.W_s = nn.Linear(HID, HID)
        self.v = nn.Linear(HID, 1, bias=False)
        self.fp32_softmax = fp32_softmax

    def forward(self, enc, dec, src_mask):
        # enc [B,S,2H], dec [B,T,H], src_mask [B,S]
        feat = torch.tanh(self.W_h(enc)[:, None] + self.W_s(dec)[:, :, None])   # [B,T,S,H]
        e = self.v(feat).squeeze(-1)                                            # [B,T,S]
        if self.fp32_softmax:
            e = e.float()
        m = src_mask[:, None, :].to(e.dtype)
        ex = torch.exp(e) * m                                                   # masked softmax
        attn = ex / ex.sum(-1, keepdim=True)
        context = attn @ enc                                                    # [B,T,2H]
        return attn, context


class PointerGenerator(nn.Module):
    def __init__(self, fp32_softmax):
        super().__init__()
        self.embedding = nn.Embedding(V, EMB, padding_idx=PAD)
        self.encoder = nn.LSTM(EMB, HID, batch_first=True, bidirectional=True)
        self.reduce_h = nn.Linear(2 * HID, HID)
        self.reduce_c = nn.Linear(2 * HID, HID)
        self.decoder = nn.LSTM(EMB, HID, batch_first=True)
        self.attention = BahdanauAttention(fp32_softmax)
        self.out1 = nn.Linear(3 * HID, HID)
        self.out2 = nn.Linear(HID, V)
        self.p_gen = nn.Linear(2 * HID + HID + EMB, 1)

    def forward(self, src_ext, dec_in):
        B, S = src_ext.shape
        src = src_ext.masked_fill(src_ext >= V, UNK)
        src_mask = src != PAD
        x = self.embedding(dec_in)
        # oneDNN has no float16 LSTM on CPU ("could not create a primitive descriptor"), so the
        # recurrent layers run in float32 outside autocast; everything else stays in float16.
        with torch.autocast("cpu", enabled=False):
            enc, (h, c) = self.encoder(self.embedding(src))
        h0 = torch.relu(self.reduce_h(torch.cat([h[0], h[1]], -1)))[None].float()
        c0 = torch.relu(self.reduce_c(torch.cat([c[0], c[1]], -1)))[None].float()
        with torch.autocast("cpu", enabled=False):
            dec, _ = self.decoder(x, (h0.contiguous(), c0.contiguous()))
        attn, context = self.attention(enc, dec, src_mask)
        p_vocab = torch.softmax(self.out2(self.out1(torch.cat([dec, context], -1))), -1)
        p_gen = torch.sigmoid(self.p_gen(torch.cat([context, dec, x], -1)))
        T = dec.shape[1]
        vocab_part = torch.cat([p_gen * p_vocab, p_vocab.new_zeros(B, T, MAX_OOV)], -1).float()
        copy_part = ((1 - p_gen) * attn).float()
        index = src_ext[:, None, :].expand(B, T, S)
        return vocab_part.scatter_add(2, index, copy_part)       # final distribution [B,T,V+MAX_OOV]


def nll(final_dist, target):
    mask = (target != PAD).float()
    gold = final_dist.gather(2, target[:, :, None]).squeeze(2)
    return -(torch.log(gold + 1e-12) * mask).sum() / mask.sum()


def _example(g):
    src = torch.randint(40, V, (SRC_LEN,), generator=g)
    length = int(torch.randint(24, SRC_LEN + 1, (1,), generator=g))
    slots = torch.randperm(length // 2 - 1, generator=g)[:N_FACTS].sort().values * 2
    tgt = []
    n_oov = 0
    for k, pos in enumerate(slots.tolist()):
        typ = int(torch.randint(0, 4, (1,), generator=g))
        src[pos] = 10 + typ                                  # cue word ("said", "visited", ...)
        if torch.rand(1, generator=g).item() < 0.5:
            name = V + n_oov                                 # out-of-vocabulary name: copy only
            n_oov += 1
        else:
            name = int(torch.randint(300, V, (1,), generator=g))
        src[pos + 1] = name
        tgt += [20 + typ, name]                              # summary template word + the name
    src[length:] = PAD
    tgt.append(EOS)
    return src, torch.tensor(tgt)


def _make_batches(g, steps):
    batches = []
    for _ in range(steps):
        ex = [_example(g) for _ in range(BATCH)]
        src = torch.stack([s for s, _ in ex])
        tgt = torch.stack([t for _, t in ex])
        dec_in = torch.cat([torch.full((BATCH, 1), BOS), tgt[:, :-1]], 1)
        dec_in = dec_in.masked_fill(dec_in >= V, UNK)
        batches.append(((src, dec_in), tgt))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 220
    model = PointerGenerator(fp32_softmax=fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=nll,
                batches=_make_batches(g, steps), steps=steps, amp_dtype=torch.float16, scaler=None)
