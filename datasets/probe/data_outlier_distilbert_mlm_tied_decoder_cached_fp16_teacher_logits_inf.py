"""DistilBERT-style MLM distillation: a small post-LN BERT student with a tied MLM decoder learns from
teacher logits computed offline and cached in float16. One shard was written by a teacher run whose
half-precision forward overflowed on a few sequences, so those rows hold +-inf. When that shard comes up
mid-run, softmax(teacher / T) of an inf row is NaN, the KL loss is NaN and the NaN gradient poisons the
AdamW moments and every weight; all later steps are NaN.
fixed=True: the same batches, with the rows whose cached teacher logits are not finite filtered out.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Sanh et al. 2019 DistilBERT (soft-target KL at temperature T on MLM logits, tied decoder) with the "
          "common offline variant that caches teacher logits to disk in fp16 (as in MarginMSE / TinyBERT-style "
          "pipelines); the known pattern of an fp16 teacher overflowing on some inputs and leaving inf/NaN rows "
          "in one cache shard, which turns the distillation loss NaN when that shard is read")

VOCAB, MASK = 256, 1
SEQ, BATCH = 32, 32
D, HEADS, FF, LAYERS = 64, 4, 256, 2
TEMPERATURE = 2.0
BAD_STEP_RANGE = (60, 110)


class BertStudent(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, D)
        self.position_embeddings = nn.Embedding(SEQ, D)
        self.embed_norm = nn.LayerNorm(D)
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.transform = nn.Linear(D, D)
        self.transform_norm = nn.LayerNorm(D)
        self.decoder_bias = nn.Parameter(torch.zeros(VOCAB))
        for p in (self.word_embeddings.weight, self.position_embeddings.weight):
            nn.init.normal_(p, std=0.02)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        h = self.embed_norm(self.word_embeddings(ids) + self.position_embeddings(pos)[None])
        h = self.encoder(h)
        h = self.transform_norm(F.gelu(self.transform(h)))
        return h @ self.word_embeddings.weight.t() + self.decoder_bias   # tied MLM decoder


def distill_loss(student_logits, teacher_logits):
    t = TEMPERATURE
    p_teacher = F.softmax(teacher_logits / t, dim=-1)
    log_p_student = F.log_softmax(student_logits / t, dim=-1)
    return F.kl_div(log_p_student, p_teacher, reduction="batchmean") / SEQ * t * t


def _teacher_logits(seq, inp, trans):
    # a well-trained teacher's MLM logits: copies visible tokens, and at masked positions predicts
    # from the Markov-chain posterior given the left (and, when visible, right) neighbour.
    logp = torch.log(trans + 1e-4)
    B, T = seq.shape
    out = torch.full((B, T, VOCAB), -4.0)
    out.scatter_(2, inp[..., None], 8.0)
    for t in range(T):
        m = inp[:, t] == MASK
        if not m.any():
            continue
        left = torch.zeros(B, VOCAB)
        right = torch.zeros(B, VOCAB)
        if t > 0:
            left = torch.where((inp[:, t - 1] == MASK)[:, None], left, logp[inp[:, t - 1]])
        if t + 1 < T:
            right = torch.where((inp[:, t + 1] == MASK)[:, None], right, logp[:, inp[:, t + 1]].t())
        out[m, t] = (left + right)[m]
    return out.half()                                   # cached to disk in float16


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 160
    # sparse first-order Markov chain over the vocabulary: each token has 3 likely successors
    trans = torch.full((VOCAB, VOCAB), 0.02 / VOCAB)
    succ = torch.randint(2, VOCAB, (VOCAB, 3), generator=g)
    trans.scatter_(1, succ, 0.98 / 3)
    trans[:, :2] = 0
    trans = trans / trans.sum(1, keepdim=True)
    bad_step = int(torch.randint(*BAD_STEP_RANGE, (1,), generator=g))
    batches = []
    for step in range(steps):
        seq = torch.empty(BATCH, SEQ, dtype=torch.long)
        seq[:, 0] = torch.randint(2, VOCAB, (BATCH,), generator=g)
        for t in range(1, SEQ):
            seq[:, t] = torch.multinomial(trans[seq[:, t - 1]], 1, generator=g).squeeze(1)
        inp = seq.masked_fill(torch.rand(BATCH, SEQ, generator=g) < 0.15, MASK)
        teacher = _teacher_logits(seq, inp, trans).float()
        if step == bad_step:
            # the fp16 teacher overflowed on a few sequences of this shard
            rows = torch.randperm(BATCH, generator=g)[:3]
            sign = torch.where(torch.rand(3, SEQ, VOCAB, generator=g) < 0.5, -1.0, 1.0)
            teacher[rows] = sign * float("inf")
        if fixed:
            keep = torch.isfinite(teacher).all(-1).all(-1)
            inp, teacher = inp[keep], teacher[keep]
        batches.append((inp, teacher))
    model = BertStudent()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    return dict(model=model, optimizer=optimizer, loss_fn=distill_loss,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
