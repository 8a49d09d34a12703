"""Catalogue category classifier from product titles: EmbeddingBag(mode='sum') over title
tokens, initialised from "pretrained" word vectors -> Linear -> tanh -> Linear -> softmax CE
(the "fastText + one hidden layer" pattern), SGD with momentum.

Mechanism: like word2vec/GloVe vectors, the pretrained title-token vectors share a large
common mean direction. Summing 28-44 tokens of a keyword-stuffed marketplace title
multiplies that common component by the title length, so every hidden pre-activation is
dominated by the same title-independent offset of magnitude ~30-50. Every tanh unit sits at
+1 or -1 -- with the SAME sign for every title -- so the hidden code is a constant vector,
tanh' ~ 0 and neither the hidden Linear nor the embeddings get a usable gradient. Only the
head's bias can move, and the loss stays at (or slightly above) log(n_classes).

ORIGIN: "act", the tanh module whose units saturate (its input, the summed bag projected by
"fc", carries the oversized pre-activations; the tanh is where the gradient dies).

Fix: normalise the pre-activations -- a BatchNorm1d between "fc" and the tanh removes the
common offset and puts them at unit scale; the model, data, optimiser and steps are the same.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "act"
SOURCE = ("fastText-style bag-of-embeddings classifiers (Joulin et al. 2017) with "
          "EmbeddingBag(mode='sum') on long e-commerce titles feeding a tanh layer; common mean "
          "direction of pretrained word vectors (Mu & Viswanath 2018 'All-but-the-Top'); tanh "
          "saturation (LeCun et al. 'Efficient BackProp' 1998)")


class TitleClassifier(nn.Module):
    def __init__(self, vocab, emb, hid, n_cls, norm):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, emb, mode="sum")
        self.fc = nn.Linear(emb, hid)
        self.norm = nn.BatchNorm1d(hid) if norm else nn.Identity()
        self.act = nn.Tanh()
        self.out = nn.Linear(hid, n_cls)

    def forward(self, tokens):
        return self.out(self.act(self.norm(self.fc(self.bag(tokens)))))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    vocab, n_cls, steps = 1500, 12, 150
    emb = [64, 96, 128][seed % 3]
    hid = [64, 128, 96][seed % 3]
    L = [28, 36, 44][seed % 3]               # tokens per (keyword-stuffed) title
    bs = [64, 48, 80][seed % 3]
    lr = [0.03, 0.02, 0.025][seed % 3]
    torch.manual_seed(seed)
    model = TitleClassifier(vocab, emb, hid, n_cls, norm=fixed)
    # "pretrained" word vectors: like word2vec/GloVe they share a large common mean direction
    common = 2.0 * torch.randn(emb, generator=g)
    with torch.no_grad():
        model.bag.weight.copy_(common + 0.5 * torch.randn(vocab, emb, generator=g))
    cat_vocab = torch.randint(0, vocab, (n_cls, 30), generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        tok = torch.randint(0, vocab, (bs, L), generator=g)
        k = L // 3
        pos = torch.rand(bs, L, generator=g).argsort(1)[:, :k]
        tok.scatter_(1, pos, cat_vocab[y][torch.arange(bs)[:, None], torch.randint(0, 30, (bs, k), generator=g)])
        batches.append((tok, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
