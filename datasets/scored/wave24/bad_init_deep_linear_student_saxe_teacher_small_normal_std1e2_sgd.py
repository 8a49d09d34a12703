"""Deep linear student learning a low-rank linear teacher (Saxe, McClelland & Ganguli 2014 setup).

Mechanism: the student is a product of L bias-free nn.Linear layers (no nonlinearity, the standard
model for analysing learning dynamics). The author followed a "small random initialisation"
recipe, nn.init.normal_(w, std=1e-2), on every layer. For a width-H layer this is a per-layer gain
of ~std*sqrt(H) ~ 0.07-0.1, so the end-to-end map shrinks geometrically with depth
(~0.08**L ~ 1e-5 .. 1e-7 at step 0). The gradient of every layer is the product of all the
*other* layers, so it is just as small: the run sits on the saddle at W=0 (the famous plateau of
deep linear networks, whose escape time grows like 1/u0**(L-2)) and the loss stays at the
teacher's output variance for the whole budget. Nothing becomes non-finite; it stalls.

ORIGIN = "layers.0": all layers share the bad init, but the activation scale starts shrinking at
the first layer (the input is whitened), and every later layer compounds it; layers.0 is where
the geometric decay begins.

Fix: orthogonal initialisation (Saxe et al.'s recommended dynamical-isometry init), which keeps
the end-to-end gain at ~1 for any depth. Same data, depth, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Saxe, McClelland & Ganguli 2014 'Exact solutions to the nonlinear dynamics of learning in "
          "deep linear neural networks' (small-init plateaus vs orthogonal init); common "
          "nn.init.normal_(std=0.01) recipe carried over from shallow nets")


class DeepLinearStudent(nn.Module):
    def __init__(self, d_in, width, d_out, depth):
        super().__init__()
        dims = [d_in] + [width] * (depth - 1) + [d_out]
        self.layers = nn.Sequential(*[nn.Linear(dims[i], dims[i + 1], bias=False) for i in range(depth)])

    def forward(self, x):
        return self.layers(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    depth = [4, 5, 6][seed % 3]
    width = [48, 64, 96][seed % 3]
    lr = [0.03, 0.02, 0.015][seed % 3]
    bs = [64, 32, 128][seed % 3]
    d_in, d_out, steps = 32, 16, 200

    # low-rank teacher with decaying singular values (hierarchical structure)
    U, _ = torch.linalg.qr(torch.randn(d_out, d_out, generator=g))
    V, _ = torch.linalg.qr(torch.randn(d_in, d_in, generator=g))
    s = torch.zeros(d_out)
    r = 6
    s[:r] = torch.linspace(3.0, 0.8, r)
    W_teacher = U @ torch.diag(s) @ V[:d_out]

    torch.manual_seed(seed)
    model = DeepLinearStudent(d_in, width, d_out, depth)
    for lin in model.layers:
        if fixed:
            nn.init.orthogonal_(lin.weight)
        else:
            nn.init.normal_(lin.weight, std=1e-2)

    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d_in, generator=g)
        y = x @ W_teacher.T + 0.05 * torch.randn(bs, d_out, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
