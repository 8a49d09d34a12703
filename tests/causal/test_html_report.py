"""`neuraldbg report RUN`: one self-contained HTML file, every section present, no external URL,
valid SVG; for failing, healthy, killed and crafted runs alike; small for a long run."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch
from helpers import train_monitored
from torch import nn

from causal.html_report import render, write_report
from causal.html_report.page import SECTIONS
from causal.schema.run import Event, LayerGraph, LayerNode, Run, Series, StepStat
from causal.schema.run_file import RunWriter, load_run
from neuraldbg.cli import main as cli_main


class _Page(HTMLParser):
    """Sections, external references and the inline SVG documents of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.external: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if tag == "section" and name == "id" and value:
                self.sections.append(value)
            if name in ("src", "href", "xlink:href") and value \
                    and not value.startswith(("#", "data:")):  # inline: fine
                self.external.append(value)


def _checked(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    assert page.sections == list(SECTIONS)
    assert not page.external, page.external
    assert not {"script", "link", "img", "iframe"} & page.tags  # nothing loaded from elsewhere
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", text)
    svgs = re.findall(r"<svg.*?</svg>", text, flags=re.S)
    for svg in svgs:
        ET.fromstring(svg)  # well-formed XML
    return page


def _failing_run(path: str) -> Run:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 1))

    def outlier(step: int, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (x * 1e30 if step == 40 else x), y

    run = train_monitored(model, 50, path, make_batch=outlier)
    assert run is not None
    return run


def test_a_failing_runs_report_has_every_part(run_path, tmp_path: Path) -> None:
    run = load_run(_failing_run(run_path()).path)
    out = write_report(run, tmp_path / "report.html")
    text = out.read_text()
    page = _checked(text)
    assert len(re.findall(r"<svg", text)) == 4  # loss, timeline, graph, recorder
    assert "data_outlier" in text.split('id="loss"')[0]  # the verdict names the cause
    assert "First fix:" in text
    assert page.sections[0] == "verdict"


def test_a_healthy_run_and_a_run_in_memory(run_path) -> None:
    torch.manual_seed(0)

    def learnable(step: int, x: torch.Tensor, y: torch.Tensor):
        return x, x[:, :1] * 0.5 - x[:, 1:2] * 0.25

    run = train_monitored(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)), 60,
                          run_path(), lr=0.1, make_batch=learnable)
    text = render(run)
    _checked(text)
    assert '<div class="verdict healthy"><div class="big">Healthy</div>' in text
    with pytest.raises(Exception, match="pass out="):
        write_report(Run(meta={"model_class": "Toy"}))


def test_names_from_a_crafted_file_are_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>\x1b[2J"
    path = tmp_path / "evil.ndbg"
    w = RunWriter(path, {"model_class": "<b>Toy</b>"})
    for step in range(30):
        w.add_step(step, {"loss": 1.0 if step < 20 else math.inf})
    w.set_dag(LayerGraph("autograd", (LayerNode(evil, evil, "Linear", 10, order=0, ran=True),),
                         ()))
    w.add_events([Event(20, evil, "activation_finite", "activation_finite", "activation_inf",
                        1.0)])
    w.close(status="finished")
    text = render(load_run(path))
    _checked(text)
    assert "<script>" not in text and "<b>Toy</b>" not in text


def test_a_long_run_stays_small(tmp_path: Path) -> None:
    steps = 20_000
    run = Run(meta={"model_class": "Long"},
              series=Series(tuple(range(steps)),
                            {StepStat.LOSS.value: tuple(1.0 / (1 + s % 977) for s in
                                                        range(steps))}))
    out = write_report(run, tmp_path / "long.html")
    _checked(out.read_text())
    assert out.stat().st_size < 2_000_000


def test_report_cli_and_a_killed_runs_file(run_path, tmp_path: Path, capsys) -> None:
    path = Path(run_path())
    child = Path(__file__).resolve().parents[1] / "_train_child.py"
    proc = subprocess.Popen([sys.executable, str(child), str(path)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("STEP 40"):
            break
    proc.kill()
    proc.wait()
    proc.stdout.close()
    assert cli_main(["report", str(path), "-o", str(tmp_path / "killed.html")]) == 0
    assert "report written to" in capsys.readouterr().out
    _checked((tmp_path / "killed.html").read_text())


@pytest.mark.browser
def test_a_report_opens_in_headless_chromium(run_path, tmp_path: Path) -> None:
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "report_screenshot.py"
    spec = importlib.util.spec_from_file_location("report_screenshot", script)
    assert spec is not None and spec.loader is not None
    shots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shots)
    chromium = shots.browser()
    if chromium is None:
        pytest.skip("no Chromium installed (make browser)")
    page = write_report(load_run(_failing_run(run_path()).path), tmp_path / "r.html")
    png = shots.screenshot(chromium, page, tmp_path / "r.png")
    from PIL import Image

    image = Image.open(png)
    assert image.width == shots.WIDTH and image.height > 1500  # every section was laid out
    grey = image.convert("L").resize((64, 64))
    assert len({grey.getpixel((x, y)) for x in range(64) for y in range(64)}) > 20  # not blank


def test_without_matplotlib_the_report_says_how_to_get_it(run_path, tmp_path: Path) -> None:
    path = _failing_run(run_path()).path
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from neuraldbg.cli import main\n"
            f"sys.exit(main(['report', {path!r}, '-o', {str(tmp_path / 'r.html')!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install matplotlib" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "r.html").exists()
