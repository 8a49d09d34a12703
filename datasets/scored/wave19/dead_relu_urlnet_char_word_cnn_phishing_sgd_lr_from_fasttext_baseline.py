"""URLNet-style char+word CNN phishing-URL classifier trained with the fastText baseline's lr.

Mechanism: URLNet (Le et al. 2018) embeds a URL twice (characters and words), runs
Conv1d filter banks with ReLU and max-over-time pooling on each branch, concatenates the
two vectors and classifies them with a ReLU MLP. The user first had a fastText linear
baseline trained with plain SGD at lr 0.5-1.0 and reused that lr (with momentum 0.9) for the
CNN. The very first updates are enormous for a deep, norm-free network: the fully
connected layer after the concatenation is driven to pre-activations that are negative for
every URL, its ReLU outputs exact zeros, the classifier only sees its bias and no gradient
reaches the conv branches any more: the cross-entropy is stuck at the class-prior entropy
(~0.69) for the rest of the run.

ORIGIN: `fc.1`, the ReLU after the first fully connected layer on the concatenated features:
it is the layer whose units all die (100% exact zeros) and that cuts the gradient.

Fix: lr=0.02 (a CNN-sized SGD lr), same momentum, data and model.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "fc.1"
SOURCE = ("Le et al. 2018 'URLNet: learning a URL representation with deep learning for "
          "malicious URL detection' (char + word CNN branches, ReLU MLP); SGD lr reused from "
          "a fastText linear baseline -> dead ReLUs, accuracy stuck at the majority class")

CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%"
BRANDS = ["paypal", "apple", "microsoft", "amazon", "netflix", "chase", "wellsfargo",
          "dropbox", "office365", "outlook", "bankofamerica", "ebay", "instagram", "dhl"]
WORDS = ["login", "signin", "verify", "account", "secure", "update", "confirm", "webscr",
         "session", "billing", "support", "index", "home", "about", "products", "blog",
         "news", "help", "search", "docs", "cart", "images", "static", "en-us", "article"]
TLDS = ["com", "org", "net", "io", "co.uk", "de"]
BAD_TLDS = ["xyz", "top", "tk", "ml", "ga", "info", "ru"]


def _pick(g, seq):
    return seq[int(torch.randint(0, len(seq), (1,), generator=g))]


def _url(g, phish):
    brand = _pick(g, BRANDS)
    if not phish:
        path = "/".join(_pick(g, WORDS[10:]) for _ in range(int(torch.randint(1, 4, (1,), generator=g))))
        return f"https://www.{brand}.{_pick(g, TLDS)}/{path}"
    style = int(torch.randint(0, 3, (1,), generator=g))
    w1, w2 = _pick(g, WORDS[:10]), _pick(g, WORDS[:10])
    if style == 0:
        ip = ".".join(str(int(v)) for v in torch.randint(1, 255, (4,), generator=g))
        return f"http://{ip}/{brand}/{w1}/{w2}.php"
    if style == 1:
        return f"http://{brand}-{w1}-{w2}.{_pick(g, BAD_TLDS)}/{w1}?id={int(torch.randint(1000, 99999, (1,), generator=g))}"
    return f"https://{w1}.{brand}.com.{_pick(g, BAD_TLDS)}/{w2}/{brand}/{w1}.html"


def _encode_chars(url, L):
    ids = [CHARS.index(c) + 1 if c in CHARS else len(CHARS) + 1 for c in url.lower()[:L]]
    return ids + [0] * (L - len(ids))


def _encode_words(url, L, vocab):
    toks = [t for t in "".join(c if c.isalnum() else " " for c in url.lower()).split() if t]
    ids = [(sum(ord(c) * 31 ** i for i, c in enumerate(t)) % (vocab - 1)) + 1 for t in toks[:L]]
    return ids + [0] * (L - len(ids))


class URLNet(nn.Module):
    def __init__(self, emb, n_filters, kernels, hidden, word_vocab):
        super().__init__()
        self.char_emb = nn.Embedding(len(CHARS) + 2, emb, padding_idx=0)
        self.word_emb = nn.Embedding(word_vocab, emb, padding_idx=0)
        self.char_convs = nn.ModuleList([nn.Conv1d(emb, n_filters, k) for k in kernels])
        self.word_convs = nn.ModuleList([nn.Conv1d(emb, n_filters, k) for k in kernels[:2]])
        self.act = nn.ReLU()
        d = n_filters * (len(kernels) + 2)
        self.fc = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden // 2),
                                nn.ReLU(), nn.Linear(hidden // 2, 2))

    def forward(self, chars, words):
        c = self.char_emb(chars).transpose(1, 2)
        w = self.word_emb(words).transpose(1, 2)
        feats = [self.act(conv(c)).amax(dim=2) for conv in self.char_convs]
        feats += [self.act(conv(w)).amax(dim=2) for conv in self.word_convs]
        return self.fc(torch.cat(feats, dim=1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    cfg = [
        dict(emb=16, nf=32, kernels=(3, 4, 5), hidden=128, char_len=64, bs=32, lr=0.5, steps=80),
        dict(emb=24, nf=24, kernels=(3, 5, 7), hidden=96, char_len=80, bs=48, lr=0.8, steps=70),
        dict(emb=12, nf=40, kernels=(2, 3, 4), hidden=64, char_len=72, bs=24, lr=0.7, steps=100),
    ][seed % 3]
    word_vocab, word_len = 512, 12
    model = URLNet(cfg["emb"], cfg["nf"], cfg["kernels"], cfg["hidden"], word_vocab)
    batches = []
    for _ in range(cfg["steps"]):
        y = (torch.rand(cfg["bs"], generator=g) < 0.5).long()
        urls = [_url(g, bool(v)) for v in y]
        chars = torch.tensor([_encode_chars(u, cfg["char_len"]) for u in urls])
        words = torch.tensor([_encode_words(u, word_len, word_vocab) for u in urls])
        batches.append(((chars, words), y))
    lr = 0.02 if fixed else cfg["lr"]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=cfg["steps"])
