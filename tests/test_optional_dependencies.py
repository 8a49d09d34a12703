"""matplotlib, transformers, lightning and tensorboard stay optional: the capture and the
diagnosis run without them (the report and the integrations say what they need)."""

from __future__ import annotations


def test_capture_and_diagnosis_need_none_of_the_optional_packages(tmp_path) -> None:
    import subprocess
    import sys

    code = f"""
import sys
for name in ("matplotlib", "transformers", "lightning", "pytorch_lightning", "tensorboard"):
    sys.modules[name] = None
import torch
from torch import nn
from neuraldbg import NeuralDbg, diagnose
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with NeuralDbg(model, path={str(tmp_path / 'r.ndbg')!r}) as dbg:
    for step in range(20):
        opt.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        dbg.record_loss(loss)
        opt.step()
print("DIAGNOSED", diagnose(dbg.run).healthy)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "DIAGNOSED" in done.stdout
