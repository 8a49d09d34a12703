"""Ithemal-style basic-block throughput model: an LSTM reads the opcode tokens of an x86
basic block and regresses its measured throughput (cycles per 100 iterations, divided by 100
as in the Ithemal/BHive preprocessing), trained with MSE and plain SGD.

Mechanism: the timing harness writes 0xFFFFFFFF (uint32 max = 4294967295 cycles) when a block
faults or the measurement times out, and the export script does not drop those rows.  One
shard contains a handful of them; after the /100 normalisation those targets are ~4.3e7
while every real target is ~0.5-6.  That single batch's MSE is ~1e14 and the SGD update on
the regression head and the LSTM is ~1e7 times larger than any normal one: the LSTM gate
pre-activations are driven deep into saturation and the head weights become huge, so the loss
jumps from ~0.2 to 1e12-1e16 and never comes back (it wanders around 1e9-1e13 for the rest
of the run) while the filtered run keeps converging.  All other batches are clean; the
failing step depends on where the shard lands in the epoch (seed).

ORIGIN: None -- the corruption is in the targets, so no module produces it; the first module
whose parameters are wrecked is the regression head, but the root is the batch itself.

Fix (fixed=True): the same batches with the sentinel rows filtered out before training
(rows with cycles >= 2**32-1 are dropped), as the BHive cleaning scripts do.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Ithemal (Mendis et al., ICML 2019) / BHive (Chen et al., IISWC 2019) throughput "
          "datasets, where failed or timed-out measurements must be filtered; common pattern of "
          "uint32-max / -1 sentinels from profiling harnesses leaking into regression targets.")

N_OPCODES = 64
SENTINEL = float(2 ** 32 - 1)


class ThroughputLSTM(nn.Module):
    def __init__(self, emb, hidden):
        super().__init__()
        self.emb = nn.Embedding(N_OPCODES, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, ops):
        h, _ = self.lstm(self.emb(ops))
        return self.head(h[:, -1]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 48][seed % 3]
    lr = [0.05, 0.03, 0.08][seed % 3]
    bs = [32, 48, 24][seed % 3]
    bad_step = [37, 22, 58][seed % 3]
    n_bad = [3, 2, 4][seed % 3]
    steps = 160
    seq = 10

    torch.manual_seed(seed)
    model = ThroughputLSTM(32, hidden)

    latency = torch.rand(N_OPCODES, generator=g) * 0.6 + 0.05      # per-opcode cost, /100 units
    port_heavy = (torch.rand(N_OPCODES, generator=g) < 0.25).float()
    batches = []
    for step in range(steps):
        ops = torch.randint(0, N_OPCODES, (bs, seq), generator=g)
        y = latency[ops].sum(1) * 0.5 + 0.4 * port_heavy[ops].sum(1).clamp(max=3.0)
        if step == bad_step:
            idx = torch.randperm(bs, generator=g)[:n_bad]
            y[idx] = SENTINEL / 100.0
            if fixed:
                keep = y < SENTINEL / 100.0
                ops, y = ops[keep], y[keep]
        batches.append((ops, y))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(),
                batches=batches, steps=steps)
