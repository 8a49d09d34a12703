"""Network tomography / traffic-matrix estimation: an MLP maps per-router ingress/egress counter
summaries to the origin-destination (OD) flow matrix (in Mbps, softplus output), and a fixed
routing matrix R (links x OD pairs) inside the model turns the OD flows into per-link loads,
which are compared with the SNMP link counters (MSE on loads expressed in Gbps).  Trained under
``torch.autocast(float16)`` to save memory, no GradScaler.

Mechanism: under autocast the routing matmul ``R @ flows`` runs in float16.  Core links carry
the sum of 100+ OD flows.  At initialisation the predicted flows are small and the run looks
calm, but as they grow toward the true few-hundred-Mbps values (after 10-25 steps) the core
link load in Mbps passes 65504 and becomes inf in half precision; the division to Gbps happens
afterwards, too late, and the loss is inf.

ORIGIN: ``routing`` -- the module whose float16 matmul output overflows.

Fix: run the routing matmul in float32 (autocast disabled for that op, inputs cast to float);
same model, data, lr, steps and autocast for the rest.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "routing"
SOURCE = ("Traffic-matrix estimation from link counts (Zhang et al., SIGMETRICS 2003 tomogravity; "
          "NN-based TM estimation, e.g. Jiang et al. 2011); fp16 matmul accumulating Mbps sums "
          "past 65504 -- the PyTorch AMP docs' 'ops that can overflow in float16' caveat")


class Routing(nn.Module):
    def __init__(self, R, fp32):
        super().__init__()
        self.register_buffer("R", R)
        self.fp32 = fp32

    def forward(self, flows):  # flows: (B, n_od) in Mbps
        if self.fp32:
            with torch.autocast(device_type=flows.device.type, enabled=False):
                return flows.float() @ self.R.float().t()
        return flows @ self.R.t()


class TMEstimator(nn.Module):
    def __init__(self, n_in, n_od, hidden, R, fp32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_od))
        self.routing = Routing(R, fp32)

    def forward(self, x):
        flows = 300.0 * nn.functional.softplus(self.net(x))  # OD flows in Mbps
        return self.routing(flows) / 1000.0  # link loads in Gbps


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_nodes = [12, 14, 16][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 80
    n_od = n_nodes * (n_nodes - 1)
    n_links = 3 * n_nodes

    # routing matrix: edge links carry few OD pairs, the core links carry many
    R = (torch.rand(n_links, n_od, generator=g) < 0.08).float()
    R[:4] = (torch.rand(4, n_od, generator=g) < 0.8).float()  # core links
    torch.manual_seed(seed)
    model = TMEstimator(2 * n_nodes, n_od, hidden, R, fp32=fixed)
    gravity_in = torch.rand(n_nodes, generator=g)
    batches = []
    for _ in range(steps):
        scale = 0.5 + torch.rand(bs, 1, generator=g)
        out_tot = gravity_in.unsqueeze(0) * scale * (1 + 0.2 * torch.rand(bs, n_nodes, generator=g))
        in_tot = gravity_in.flip(0).unsqueeze(0) * scale * (1 + 0.2 * torch.rand(bs, n_nodes, generator=g))
        od = (out_tot.unsqueeze(2) * in_tot.unsqueeze(1))
        mask = ~torch.eye(n_nodes, dtype=torch.bool)
        od = 1500.0 * od[:, mask]  # Mbps
        loads = od @ R.t() / 1000.0
        x = torch.cat([out_tot, in_tot], 1)
        batches.append((x, loads))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
