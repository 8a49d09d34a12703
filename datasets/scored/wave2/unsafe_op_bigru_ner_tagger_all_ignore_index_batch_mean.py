"""BiGRU named-entity tagger trained with token-level cross-entropy where only the first sub-word
of each word carries a label and everything else (padding, continuation pieces) is set to
ignore_index=-100. The loss uses F.cross_entropy(..., ignore_index=-100, reduction='mean'), i.e.
sum of token losses divided by the number of labelled tokens. Mid-run the loader yields a batch of
weakly-labelled / truncated documents in which every token is -100; the mean is then 0/0 = NaN,
its backward produces NaN gradients in the classifier and everything below, and the weights are
NaN from the next step on. The fixed run only guards the denominator (sum / clamp_min(count, 1)),
which gives that batch a loss and gradient of 0."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "classifier"
SOURCE = "huggingface/transformers issues: token-classification / causal-LM loss is NaN when all labels in a batch are -100 (CrossEntropyLoss mean over zero targets)"


class Tagger(nn.Module):
    def __init__(self, vocab, emb, h, n_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.encoder = nn.GRU(emb, h, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(2 * h, n_tags)

    def forward(self, ids):
        return self.classifier(self.encoder(self.embed(ids))[0])


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = [200, 300, 150][seed % 3]
    n_tags = [5, 7, 9][seed % 3]
    h = [32, 24, 40][seed % 3]
    T = [16, 20, 12][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = [100, 120, 80][seed % 3]
    bad_step = [57, 33, 70][seed % 3]
    lr = [3e-3, 2e-3, 3e-3][seed % 3]
    tag_of = torch.randint(1, n_tags, (vocab,), generator=g)
    tag_of[: vocab // 2] = 0            # half of the vocabulary is "O"
    batches = []
    for s in range(steps):
        lens = torch.randint(T // 2, T + 1, (bs,), generator=g)
        ids = torch.randint(1, vocab, (bs, T), generator=g)
        pad = torch.arange(T).unsqueeze(0) >= lens.unsqueeze(1)
        ids = ids.masked_fill(pad, 0)
        # previous-token context shifts the tag for B-/I- style dependence
        tags = tag_of[ids].clone()
        tags[:, 1:] = torch.where((tags[:, 1:] > 0) & (tags[:, :-1] > 0),
                                  (tags[:, 1:] % (n_tags - 1)) + 1, tags[:, 1:])
        cont = torch.rand(bs, T, generator=g) < 0.25   # continuation sub-words: unlabelled
        labels = tags.masked_fill(pad | cont, -100)
        if s == bad_step:
            labels = torch.full_like(labels, -100)      # weakly-labelled documents: no gold tags
        batches.append((ids, labels))
    model = Tagger(vocab, 32, h, n_tags)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(logits, labels):
        flat, lab = logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)
        if fixed:
            n = (lab != -100).sum().clamp_min(1)
            return F.cross_entropy(flat, lab, ignore_index=-100, reduction="sum") / n
        return F.cross_entropy(flat, lab, ignore_index=-100)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
