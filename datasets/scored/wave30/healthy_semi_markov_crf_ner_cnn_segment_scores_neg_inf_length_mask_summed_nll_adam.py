"""Semi-Markov CRF (segmental CRF) NER tagger with a CNN token encoder -- healthy.

Model: token embeddings -> Conv1d (`conv`, ReLU) -> Linear `emit` gives per-token label scores.
A segment (start, length <= Lmax, label) is scored as the sum of its tokens' scores for the
label plus a learned label-length bias, plus a label-transition score between consecutive
segments. The partition function runs the semi-Markov forward algorithm (logsumexp over the
previous label and the segment length); the gold score sums the gold segmentation.
Loss: the NLL summed over the sentences of the batch; optimiser Adam.

Why it looks alarming but is healthy:
- the segment lattice is padded: segments that would start before the sentence begins are
  filled with -inf before the logsumexp. Every logsumexp still has a finite entry (length-1
  segments are always possible), so the -inf entries just get zero weight and zero gradient;
  no -inf ever reaches the loss;
- the loss is summed over sentences and tokens, so it starts in the hundreds and its scale
  moves with sentence lengths and batch composition (batches vary in length by seed);
- the length-bias rows for lengths that rarely occur get (near) zero gradient for many steps.
It learns: the NLL per batch falls steadily.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Sarawagi & Cohen 2004 semi-Markov CRFs; Kong et al. 2016 segmental RNNs; "
          "implementations that pad the segment lattice with -inf and sum the NLL over the "
          "batch (e.g. pytorch-struct SemiMarkov)")

NEG_INF = float("-inf")


class SemiCRFTagger(nn.Module):
    def __init__(self, vocab, d, n_filt, n_labels, max_len):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.conv = nn.Conv1d(d, n_filt, 3, padding=1)
        self.act = nn.ReLU()
        self.emit = nn.Linear(n_filt, n_labels)
        self.len_bias = nn.Parameter(torch.zeros(n_labels, max_len))
        self.trans = nn.Parameter(torch.zeros(n_labels, n_labels))
        self.max_len = max_len

    def forward(self, words, lengths):
        h = self.act(self.conv(self.emb(words).transpose(1, 2))).transpose(1, 2)
        return self.emit(h), lengths                              # B x T x K


def make_loss(model: SemiCRFTagger):
    def semi_crf_nll(out, gold):
        em, lengths = out
        B, T, K = em.shape
        Lm = model.max_len
        cum = torch.cat([em.new_zeros(B, 1, K), em.cumsum(1)], dim=1)      # B x (T+1) x K
        # alpha[j]: log-sum of all segmentations of tokens [0, j) ending in each label
        alpha = [None] * (T + 1)
        start = em.new_zeros(B, K)
        for j in range(1, T + 1):
            cands = []
            for l in range(1, Lm + 1):
                i = j - l
                if i < 0:
                    cands.append(em.new_full((B, K), NEG_INF))        # padded lattice cell
                    continue
                seg = cum[:, j] - cum[:, i] + model.len_bias[:, l - 1]
                if i == 0:
                    cands.append(seg + start)
                else:
                    prev = torch.logsumexp(alpha[i].unsqueeze(2) + model.trans, dim=1)
                    cands.append(seg + prev)
            alpha[j] = torch.logsumexp(torch.stack(cands, 0), dim=0)
        alpha_t = torch.stack(alpha[1:], 1)                                # B x T x K
        log_z = torch.logsumexp(alpha_t[torch.arange(B), lengths - 1], dim=-1)
        # gold: list over batch of (start, end, label) segments, padded with end = 0
        s, e, y = gold[..., 0], gold[..., 1], gold[..., 2]
        valid = e > 0
        b_idx = torch.arange(B).unsqueeze(1).expand_as(s)
        seg = cum[b_idx, e, y] - cum[b_idx, s, y] + model.len_bias[y, (e - s - 1).clamp(min=0)]
        gold_score = (seg * valid).sum(1)
        prev_y, next_y = y[:, :-1], y[:, 1:]
        gold_score = gold_score + (model.trans[prev_y, next_y] * valid[:, 1:]).sum(1)
        return (log_z - gold_score).sum()
    return semi_crf_nll


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    vocab = 300
    n_types = [3, 4, 2][seed % 3]
    K = n_types + 1                                   # label 0 = outside (length-1 segments)
    max_len = [4, 3, 4][seed % 3]
    d = [32, 48, 24][seed % 3]
    n_filt = [48, 64, 32][seed % 3]
    batch = [16, 24, 12][seed % 3]
    t_min, t_max = [(10, 20), (12, 24), (8, 16)][seed % 3]
    steps = [100, 90, 120][seed % 3]
    lr = [5e-3, 3e-3, 5e-3][seed % 3]

    # each label has its own word distribution; entity-initial words come from a cue set
    label_words = torch.randint(10, vocab, (K, 25), generator=g)
    cue_words = torch.randint(10, vocab, (K, 5), generator=g)
    batches = []
    for _ in range(steps):
        lengths = torch.randint(t_min, t_max + 1, (batch,), generator=g)
        T = int(lengths.max())
        words = torch.zeros(batch, T, dtype=torch.long)
        segs = []
        for b in range(batch):
            pos, sb = 0, []
            n = int(lengths[b])
            while pos < n:
                if torch.rand(1, generator=g).item() < 0.3:
                    lab = int(torch.randint(1, K, (1,), generator=g))
                    ln = min(int(torch.randint(1, max_len + 1, (1,), generator=g)), n - pos)
                else:
                    lab, ln = 0, 1
                w = label_words[lab][torch.randint(0, 25, (ln,), generator=g)]
                if lab > 0:
                    w[0] = cue_words[lab][int(torch.randint(0, 5, (1,), generator=g))]
                words[b, pos:pos + ln] = w
                sb.append((pos, pos + ln, lab))
                pos += ln
            segs.append(sb)
        S = max(len(sb) for sb in segs)
        gold = torch.zeros(batch, S, 3, dtype=torch.long)
        for b, sb in enumerate(segs):
            gold[b, :len(sb)] = torch.tensor(sb)
        batches.append(((words, lengths), gold))

    model = SemiCRFTagger(vocab, d, n_filt, K, max_len)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(model), batches=batches,
                steps=steps)
