"""Synthetic stand-ins for the data sets the examples download (MNIST, CIFAR, Wikitext-2, Cora),
made in code from their own generators, so that the global random state the programs seed is
left to the programs (model init, dropout, shuffling), as in the examples."""

from __future__ import annotations

import torch
import torch.nn.functional as F


class NoMonitor:
    """What `dbg_factory` gives for the plain run: a context manager whose `record_loss` does
    nothing."""

    def __enter__(self) -> NoMonitor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def record_loss(self, loss: object) -> None:
        return None


def _templates(g: torch.Generator, classes: int, channels: int, size: int) -> torch.Tensor:
    """One smooth random stroke pattern per class, in [0, 1]."""
    low = torch.randn(classes, channels, 7, 7, generator=g)
    up = F.interpolate(low, size=(size - 8, size - 8), mode="bilinear", align_corners=False)
    pat = (up - 0.6).clamp(min=0.0)
    pat = pat / pat.amax(dim=(1, 2, 3), keepdim=True).clamp(min=1e-6)
    return F.pad(pat, (4, 4, 4, 4))


def digits(n: int, seed: int, classes: int = 10, channels: int = 1, size: int = 28
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """MNIST-like images: `n` samples (n, channels, size, size), pixel values in [0, 1] (what
    torchvision's ToTensor gives), mostly background zeros; each class one stroke pattern,
    shifted by up to 3 pixels, scaled in intensity, with noise. Returns (images, labels)."""
    g = torch.Generator().manual_seed(seed)
    tmpl = _templates(g, classes, channels, size)
    y = torch.randint(0, classes, (n,), generator=g)
    x = tmpl[y]
    shifts = torch.randint(-3, 4, (n, 2), generator=g)
    x = torch.stack([torch.roll(img, (int(a), int(b)), dims=(1, 2))
                     for img, (a, b) in zip(x, shifts, strict=True)])
    x = x * (0.7 + 0.3 * torch.rand(n, 1, 1, 1, generator=g))
    x = x + 0.15 * torch.randn(x.shape, generator=g) * (x > 0)
    return x.clamp(0.0, 1.0), y


def markov_corpus(n_tokens: int, vocab: int, seed: int, successors: int = 3) -> torch.Tensor:
    """A token stream from a random first-order Markov chain: every word has `successors`
    possible next words (so the best a model can do is about log(successors) nats)."""
    g = torch.Generator().manual_seed(seed)
    nxt = torch.randint(0, vocab, (vocab, successors), generator=g).tolist()
    choice = torch.randint(0, successors, (n_tokens,), generator=g).tolist()
    out, w = [], 0
    for c in choice:
        out.append(w)
        w = nxt[w][c]
    return torch.tensor(out, dtype=torch.long)


def block_graph(n_nodes: int, classes: int, features: int, seed: int, p_in: float = 0.1,
                p_out: float = 0.01) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A random graph with community structure (a stochastic block model) and sparse binary
    bag-of-words features whose words depend on the node's class, row-normalised as the GAT
    example's Cora loader does. Returns (features, labels, adjacency with self-loops)."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, classes, (n_nodes,), generator=g)
    same = labels[:, None] == labels[None, :]
    p = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    a = (torch.rand(n_nodes, n_nodes, generator=g) < p).triu(1)
    adj = (a | a.T).float() + torch.eye(n_nodes)
    word_p = 0.01 + 0.08 * (torch.rand(classes, features, generator=g) < 0.15)
    feats = (torch.rand(n_nodes, features, generator=g) < word_p[labels]).float()
    scale = 1 / feats.sum(1)
    scale[scale == float("inf")] = 0
    return feats * scale[:, None], labels, adj
