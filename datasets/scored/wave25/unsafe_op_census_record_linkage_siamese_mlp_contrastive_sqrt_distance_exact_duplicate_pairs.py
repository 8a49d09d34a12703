"""Census record linkage: siamese MLP on hashed name bigrams with a contrastive (Hadsell) loss.

Domain: linking individuals between two census enumerations (or a census and a post-enumeration
survey). Each record is encoded as hashed character-bigram indicators of given name and surname,
standardised age at enumeration, sex and county one-hot. A shared MLP encoder maps both records of a
candidate pair to an embedding; the model returns their Euclidean distance, and the contrastive
loss pulls true matches together (d^2) and pushes non-matches beyond a margin (max(0, m - d)^2).
Trained with Adam; the run is calm for its first steps.

Mechanism: the distance is written as torch.sqrt(((za - zb) ** 2).sum(-1)). Cross-enumeration pairs
never coincide exactly (ages differ by the ten-year gap), so the run is calm. But when the
candidate generator also emits within-file pairs whose two records are byte-identical --
households keyed twice, a duplicated enumeration block, routine in historical and modern census
files -- the shared encoder gives identical embeddings
and the squared distance is exactly 0. The loss value is fine (d^2 = 0), but backward goes through
sqrt at 0: d(sqrt)/dx = inf, multiplied by the upstream 0 gives NaN. The NaN gradient flows into
every encoder weight, Adam writes NaN into the parameters, and from the next step the loss is NaN.
The batch carrying the duplicated block arrives at a seed-dependent step.

ORIGIN: "dist" -- the module computing the Euclidean distance, where sqrt(0) is taken in backward.

Fix: take the square root of the clamped squared distance (clamp_min(1e-12)), as in
F.pairwise_distance's eps; the data, model and loss are otherwise unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "dist"
SOURCE = ("Hadsell, Chopra & LeCun 2006 contrastive loss; the sqrt-at-zero NaN gradient of "
          "hand-written Euclidean distances (pytorch/pytorch issues on torch.norm / sqrt backward "
          "at 0 giving NaN); duplicate records in census linkage (e.g. IPUMS MLP linking notes)")

N_HASH = 48


class EuclideanDistance(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed

    def forward(self, za, zb):
        sq = ((za - zb) ** 2).sum(-1)
        if self.fixed:
            sq = sq.clamp_min(1e-12)
        return torch.sqrt(sq)


class SiameseLinker(nn.Module):
    def __init__(self, d_in, width, depth, emb, fixed):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, emb))
        self.encoder = nn.Sequential(*layers)
        self.dist = EuclideanDistance(fixed)

    def forward(self, a, b):
        return self.dist(self.encoder(a), self.encoder(b))


def contrastive_loss(d, same, margin=1.0):
    return (same * d ** 2 + (1 - same) * torch.relu(margin - d) ** 2).mean()


def _people(g, n, n_county):
    given = (torch.rand(n, N_HASH, generator=g) < 0.08).float()
    surname = (torch.rand(n, N_HASH, generator=g) < 0.08).float()
    year = torch.randn(n, 1, generator=g)
    sex = torch.randint(0, 2, (n,), generator=g)
    county = torch.randint(0, n_county, (n,), generator=g)
    return given, surname, year, sex, county


def _encode(given, surname, year, sex, county, n_county):
    return torch.cat([given, surname, year, nn.functional.one_hot(sex, 2).float(),
                      nn.functional.one_hot(county, n_county).float()], -1)


def _transcribe(g, given, surname, year):
    # the same person ten years later: age + 10 (standardised: +0.5) with age-heaping noise,
    # plus clerical / OCR noise on the name bigrams
    flip_g = (torch.rand(given.shape, generator=g) < 0.03).float()
    flip_s = (torch.rand(surname.shape, generator=g) < 0.03).float()
    return ((given + flip_g) % 2, (surname + flip_s) % 2,
            year + 0.5 + 0.05 * torch.randint(-1, 2, year.shape, generator=g).float())


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [128, 96, 64][seed % 3]
    depth = [2, 3, 2][seed % 3]
    emb = [32, 24, 16][seed % 3]
    batch = [64, 48, 80][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    n_county = 10
    steps = 120
    dup_step = [37, 61, 24][seed % 3]

    batches = []
    for s in range(steps):
        gv, sn, yr, sx, ct = _people(g, batch, n_county)
        same = (torch.rand(batch, generator=g) < 0.5).float()
        a = _encode(gv, sn, yr, sx, ct, n_county)
        gv2, sn2, yr2 = _transcribe(g, gv, sn, yr)
        o_gv, o_sn, o_yr, o_sx, o_ct = _people(g, batch, n_county)
        m = same.bool()
        b_match = _encode(gv2, sn2, yr2, sx, ct, n_county)
        b_other = _encode(o_gv, o_sn, o_yr, o_sx, o_ct, n_county)
        b = torch.where(m[:, None], b_match, b_other)
        if s == dup_step:
            # a duplicated enumeration block: records keyed twice, byte-identical
            k = batch // 8
            b[:k] = a[:k]
            same[:k] = 1.0
        batches.append(((a, b), same))

    model = SiameseLinker(2 * N_HASH + 1 + 2 + n_county, width, depth, emb, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=contrastive_loss, batches=batches, steps=steps)
