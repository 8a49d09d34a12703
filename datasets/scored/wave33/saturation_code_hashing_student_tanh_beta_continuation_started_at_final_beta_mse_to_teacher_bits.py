"""Hash-code distillation for fast code search (CoSHC / HashNet style relaxation): a small
student tower (bag of code sub-tokens -> MLP) produces K relaxed bits h = tanh(beta * z) that
are regressed (MSE) onto the +/-1 hash codes a large teacher encoder assigned to the same
functions (sign of an ITQ-rotated embedding).  SGD with momentum.

Mechanism: HashNet's continuation method starts with beta = 1 and raises beta towards its
final value (tens) only once the codes have organised; this implementation reads the *final*
beta from the config and uses it from step 0.  With beta = 30-60 and |z| of order 0.5-2 at
initialisation, essentially every bit is deep in tanh's flat region (tanh'(beta z) ~ 1e-12 ..
1e-40), so each bit is a fixed +/-1 that is right or wrong by chance; the MSE gradient of a
wrong bit, 2 (h - t) * beta * tanh'(beta z), is ~0 and the wrong half of the bits can never
flip.  The loss stays at 2 x (fraction of wrong bits) ~ 1.6-2, no inf/NaN, while the same student
with the continuation's starting beta learns.

ORIGIN: ``head.2`` -- the last Linear, whose outputs z are multiplied by beta and fed to the
saturated tanh; its pre-activations are the ones in the flat region.

Fix (fixed=True): beta = 1 (the continuation's initial value), i.e. tanh pre-activations in the
responsive range; same model, loss, optimiser, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head.2"
SOURCE = ("HashNet (Cao et al., ICCV 2017) tanh(beta z) continuation; CoSHC 'Accelerating code "
          "search with deep hashing and code classification' (Gu et al., ACL 2022); vanishing "
          "gradients of saturated tanh with a squared-error loss (LeCun et al. 'Efficient BackProp').")

N_CODE = 1500


class HashStudent(nn.Module):
    def __init__(self, dim, hidden, bits, beta):
        super().__init__()
        self.beta = beta
        self.bag = nn.EmbeddingBag(N_CODE, dim, mode="mean")
        self.head = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, bits))

    def forward(self, ids):
        return torch.tanh(self.beta * self.head(self.bag(ids)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    bits = [32, 64, 48][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    dim = [48, 64, 32][seed % 3]
    beta = 1.0 if fixed else [30.0, 45.0, 60.0][seed % 3]
    lr = [0.5, 0.8, 0.6][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = 150
    n_intent = 30

    torch.manual_seed(seed)
    model = HashStudent(dim, hidden, bits, beta)

    # the teacher's codes depend on the function's intent (+ a few function-specific flips);
    # code tokens are drawn from intent-specific vocabularies plus shared noise
    intent_code = torch.randint(0, 2, (n_intent, bits), generator=g).float() * 2 - 1
    code_vocab = torch.randint(0, N_CODE, (n_intent, 16), generator=g)
    rows = torch.arange(bs).unsqueeze(1)
    batches = []
    for _ in range(steps):
        it = torch.randint(0, n_intent, (bs,), generator=g)
        ids = torch.where(torch.rand(bs, 24, generator=g) < 0.7,
                          code_vocab[it][rows, torch.randint(0, 16, (bs, 24), generator=g)],
                          torch.randint(0, N_CODE, (bs, 24), generator=g))
        flip = torch.rand(bs, bits, generator=g) < 0.05
        teacher = torch.where(flip, -intent_code[it], intent_code[it])
        batches.append((ids, teacher))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(),
                batches=batches, steps=steps)
