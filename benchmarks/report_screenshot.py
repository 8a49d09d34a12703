"""Reports of three runs (the demo's, a healthy run, a data-outlier run) opened in headless
Chromium, saved as full-page screenshots to look at by eye.

    make browser          # installs Debian's chromium when it is missing
    .venv/bin/python benchmarks/report_screenshot.py [--out docs/images]

Prints each report's path and size and each screenshot's path.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causal.html_report import write_report
from causal.schema.run import Run
from neuraldbg import NeuralDbg

WIDTH = 1100


def browser() -> str | None:
    """The Chromium executable, if one is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if (path := shutil.which(name)) is not None:
            return path
    return None


def screenshot(chromium: str, page: Path, png: Path, height: int = 6000) -> Path:
    """A full-page screenshot of `page` (a tall window, then the blank bottom cropped)."""
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--window-size={WIDTH},{height}",
                    f"--screenshot={png}", page.resolve().as_uri()],
                   check=True, capture_output=True, timeout=120)
    from PIL import Image, ImageChops

    image = Image.open(png).convert("RGB")
    blank = Image.new("RGB", image.size, (255, 255, 255))
    box = ImageChops.difference(image, blank).getbbox()
    if box is not None:
        image.crop((0, 0, image.width, min(image.height, box[3] + 24))).save(png)
    return png


def _train(path: Path, model: nn.Module, lr: float, steps: int, outlier_at: int | None) -> Run:
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    with NeuralDbg(model, path=path) as dbg:
        for step in range(steps):
            x = torch.randn(32, 8, generator=g)
            y = x[:, :1] * 0.5 - x[:, 1:2] * 0.25
            if step == outlier_at:
                x = x.clone()
                x[3] = 1e20  # one corrupt row
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    return dbg.run


def runs(folder: Path) -> dict[str, Run]:
    """The three runs: the demo's, a healthy MLP, an MLP hit by one corrupt batch."""
    from neuraldbg.suite.demo import run_demo

    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                        nn.Linear(32, 1))
    torch.manual_seed(0)
    twin = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 1))
    return {
        "demo": run_demo(path=str(folder / "demo.ndbg")),
        "healthy": _train(folder / "healthy.ndbg", mlp, 0.05, 200, None),
        "data-outlier": _train(folder / "outlier.ndbg", twin, 0.05, 200, 120),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/images", help="folder for the screenshots")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch threads: {torch.get_num_threads()}")
    chromium = browser()
    if chromium is None:
        sys.exit("no Chromium found: run `make browser` (installs Debian's chromium)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, run in runs(Path(tmp)).items():
            page = write_report(run, Path(tmp) / f"report-{name}.html")
            png = screenshot(chromium, page, out / f"report-{name}.png")
            print(f"{name}: report {page.stat().st_size / 1e3:.0f} kB, screenshot {png}")


if __name__ == "__main__":
    main()
