"""The benchmark's measures on hand-made rows (exact numbers), and a small end-to-end bench and
`suite verify` on a temporary suite: a NaN outlier, a healthy run and a broken file."""

from __future__ import annotations

import json
import math
import sys

import pytest
from helpers import write_suite

from causal.errors import NeuralDbgError
from causal.schema.run import Event, LayerGraph, LayerNode, Run, Series, Window
from neuraldbg.cli import main
from neuraldbg.suite import bench
from neuraldbg.suite.bench import (
    first_event_step,
    format_table,
    format_targets,
    grad_rule,
    loss_failure_step,
    origin_layers,
    origin_neighbors,
    run_bench,
)
from neuraldbg.suite.scoring import (
    brier,
    calibration_bins,
    ece,
    false_alarm_rate,
    latency,
    localization,
    localized,
    ranking,
    score,
    top1_confidence,
    top_k,
)
from neuraldbg.suite.verify import Failure, failure_of, parse_seeds, stall_ratio, verify


def row(cause, hyps=(), origin=None, neighbors=(), posteriors=None, lat=None, error=None):
    return {"scenario": "s", "seed": 0, "cause": cause, "origin": origin,
            "origin_neighbors": list(neighbors), "posteriors": posteriors, "latency": lat,
            "seconds": 0.01, "error": error,
            "hypotheses": [{"cause": c, "confidence": p, "layer": layer, "step": 0}
                           for c, p, *rest in hyps for layer in [rest[0] if rest else None]]}


# ---------------------------------------------------------------- measures


TOPK_ROWS = [
    row("lr_too_high", [("lr_too_high", 0.9), ("bad_init", 0.3)]),           # top-1, top-3
    row("bad_init", [("lr_too_high", 0.8), ("bad_init", 0.6)]),              # top-3 only
    row("healthy", [("dead_relu", 0.2)]),                                    # healthy: right
    row("healthy", [("dead_relu", 0.7)]),                                    # false alarm
    row("saturation", [("saturation", 0.4), ("dead_relu", 0.1)]),            # healthy, then it
    row("unsafe_op", [("a", 0.9), ("b", 0.8), ("c", 0.7), ("unsafe_op", 0.6)]),  # rank 4
    row("unsafe_op", error="RuntimeError: boom"),                            # not scored
]


def test_top_k_counts_healthy_only_when_predicted():
    assert ranking(TOPK_ROWS[4]) == ["healthy", "saturation", "dead_relu"]
    assert top_k(TOPK_ROWS, 1) == pytest.approx(2 / 6)
    assert top_k(TOPK_ROWS, 3) == pytest.approx(4 / 6)
    assert false_alarm_rate(TOPK_ROWS) == pytest.approx(1 / 2)
    assert false_alarm_rate(TOPK_ROWS[:2]) is None
    assert top_k([], 1) is None


LOC_ROWS = [
    row("saturation", [("saturation", 0.9, "net.1")], "net.1", ["net.0", "net.2"]),  # exact
    row("saturation", [("saturation", 0.9, "net.2")], "net.1", ["net.0", "net.2"]),  # one hop
    row("saturation", [("dead_relu", 0.9, "net.1")], "net.1", ["net.0", "net.2"]),   # cause wrong
    row("dead_relu", [("dead_relu", 0.3, "net.3")], "net.3", ["net.2"]),             # healthy
    row("data_outlier", [("data_outlier", 0.9, "<input>")]),                         # no ORIGIN
    row("saturation", [("saturation", 0.9, "net.4")], "net.1", ["net.0", "net.2"]),  # two hops
]


def test_localization_exact_and_within_one_hop():
    assert localization(LOC_ROWS) == pytest.approx(1 / 5)
    assert localization(LOC_ROWS, hop=True) == pytest.approx(2 / 5)
    # a rule that names no cause is checked on its layer alone
    assert localization(LOC_ROWS, require_cause=False) == pytest.approx(2 / 5)
    assert localization(LOC_ROWS, hop=True, require_cause=False) == pytest.approx(3 / 5)
    assert localization(LOC_ROWS[4:5]) is None


def test_origin_neighbors_follow_dag_edges_both_ways():
    nodes = tuple(LayerNode(f"net.{i}", f"net.{i}", "Linear", 1, order=i) for i in range(4))
    nodes += (LayerNode("net.1#1", "net.1", "Linear", 0, order=4),)
    dag = LayerGraph("fx", nodes, (("net.0", "net.1"), ("net.1", "net.2"), ("net.2", "net.3"),
                                   ("net.3", "net.1#1")))
    assert origin_neighbors(dag, "net.1") == ["net.0", "net.2", "net.3"]
    assert origin_neighbors(dag, "net.3") == ["net.1", "net.1#1", "net.2"]
    assert origin_neighbors(dag, None) == []


def test_a_container_origin_stands_for_the_layers_inside_it():
    """ORIGIN may name a container (`hyper`, `odefunc`): no layer can equal it, so a layer
    inside it is the right place, and its neighbours are those of the layers inside."""
    nodes = (LayerNode("enc", "enc", "Linear", 1, order=0),
             LayerNode("block.fc1", "block.fc1", "Linear", 1, order=1),
             LayerNode("block.fc2", "block.fc2", "Linear", 1, order=2),
             LayerNode("block.fc2#1", "block.fc2", "Linear", 0, order=3),
             LayerNode("blockade", "blockade", "Linear", 1, order=4),
             LayerNode("head", "head", "Linear", 1, order=5))
    dag = LayerGraph("fx", nodes, (("enc", "block.fc1"), ("block.fc1", "block.fc2"),
                                   ("block.fc2", "blockade"), ("blockade", "head")))
    assert origin_layers(dag, "block") == ["block.fc1", "block.fc2"]  # not "blockade"
    assert origin_layers(dag, "head") == ["head"] and origin_layers(dag, None) == []
    assert origin_neighbors(dag, "block") == ["blockade", "enc"]
    rows = [{**row("bad_init", [("bad_init", 0.9, layer)], origin="block"),
             "origin_layers": origin_layers(dag, "block"),
             "origin_neighbors": origin_neighbors(dag, "block")}
            for layer in ("block.fc2#1", "blockade", "head")]
    assert [localized(r) for r in rows] == [True, False, False]
    assert [localized(r, hop=True) for r in rows] == [True, True, False]


def test_ece_with_15_bins_and_healthy_confidence():
    rows = [
        row("a", [("a", 0.95)]),                                   # bin 14, right
        row("b", [("a", 0.95)]),                                   # bin 14, wrong
        row("a", [("a", 0.62)]),                                   # bin 9, right
        row("healthy", [("a", 0.2)], posteriors={"a": 0.2, "b": 0.05}),  # 1 - 0.2 = 0.8, bin 12
    ]
    assert top1_confidence(rows[3]) == pytest.approx(0.8)
    cells = calibration_bins(rows)
    assert len(cells) == 15
    assert [i for i, c in enumerate(cells) if c[0]] == [9, 12, 14]
    assert cells[14][0] == 2 and cells[14][2] == pytest.approx(0.5)
    assert ece(rows) == pytest.approx(2 / 4 * 0.45 + 1 / 4 * 0.38 + 1 / 4 * 0.2)
    # confidence 1.0 falls in the last bin; nothing reported and no posteriors: confidence 1
    lone = row("healthy")
    assert top1_confidence(lone) == 1.0
    assert calibration_bins([lone])[14][0] == 1
    assert ece([lone]) == 0.0
    assert ece([]) is None


def test_brier_is_one_vs_rest_over_causes():
    rows = [
        row("a", posteriors={"a": 0.8, "b": 0.1}),        # (0.04 + 0.01) / 2
        row("healthy", posteriors={"a": 0.2, "b": 0.0}),  # (0.04 + 0) / 2
        row("c", posteriors={"a": 0.5, "b": 0.5}),        # c is not registered: (.25+.25+1) / 3
        row("a"),                                         # no posteriors: not scored
    ]
    assert brier(rows) == pytest.approx((0.025 + 0.02 + 0.5) / 3)
    assert brier(rows[3:]) is None


def test_latency_is_the_median_over_failing_runs():
    rows = [row("a", lat=-3), row("b", lat=5), row("a", lat=1), row("healthy", lat=-100),
            row("a", lat=None)]
    assert latency(rows) == 1


def test_score_and_table_have_every_measure():
    result = score(TOPK_ROWS + LOC_ROWS)
    keys = {"runs", "top1", "top3", "localization", "ece", "brier", "false_alarm_rate"}
    assert keys <= set(result["summary"])
    assert result["summary"]["runs"] == 12 and result["summary"]["errors"] == 1
    assert list(result["per_cause"])[-1] == "healthy"
    assert result["per_cause"]["unsafe_op"]["runs"] == 1
    table = format_table(result)
    assert "| **overall** | 12 |" in table and "| healthy | 2 |" in table
    no_probs = score(LOC_ROWS, require_cause=False, probabilities=False)["summary"]
    assert no_probs["ece"] is None and no_probs["brier"] is None


def test_failing_runs_called_healthy_and_confident_mistakes_are_counted():
    """Issue 26's two counted targets: failing runs predicted healthy (and those with their
    own cause first), and wrong first answers above 0.95, a healthy verdict included."""
    rows = [*TOPK_ROWS,
            row("dead_relu", [("lr_too_high", 0.97)]),   # a confidently wrong cause
            row("bad_init", [("bad_init", 0.2)]),        # healthy at 0.8, its cause first
            row("saturation", [("saturation", 0.03)])]   # healthy at 0.97: both
    result = score(rows)
    s = result["summary"]
    assert (s["failing_runs"], s["called_healthy"], s["called_healthy_cause_first"]) == (7, 3, 3)
    assert s["confident_wrong"] == 2
    text = format_targets(result)
    assert text.startswith("failing runs called healthy: 3 of 7 (3 with their own cause first)")
    assert text.endswith("wrong first answers above 0.95: 2 of 9")
    assert score(TOPK_ROWS)["summary"]["confident_wrong"] == 0
    assert "confident_wrong" not in score(rows, probabilities=False)["summary"]


# ---------------------------------------------------------------- evidence from one run


def _chain(n):
    nodes = tuple(LayerNode(f"net.{i}", f"net.{i}", "Linear", 1, order=i) for i in range(n))
    return LayerGraph("fx", nodes, tuple((f"net.{i}", f"net.{i + 1}") for i in range(n - 1)))


def test_grad_rule_blames_the_first_layer_out_of_bounds():
    events = (Event(5, "net.2", "grad", "grad_healthy", "grad_exploding", 1e9),
              Event(5, "net.0", "grad_finite", "grad_finite", "grad_nan", 1.0))
    window = Window(4, (3, 4), ("net.3", "net.1"), ("grad_norm",),
                    (((1e-8,), (0.5,)), ((0.1,), (math.nan,))))
    run = Run(dag=_chain(4), events=events, windows=(window,))
    assert grad_rule(run) == ("net.3", 3)
    assert grad_rule(Run(dag=_chain(4), events=events)) == ("net.0", 5)  # forward order breaks ties
    assert grad_rule(Run(dag=_chain(4))) is None


def test_loss_failure_and_first_event_steps():
    events = (Event(1, "net.0", "grad", "grad_healthy", "grad_exploding", 1e9),
              Event(0, "net.0", "grad", "grad_exploding", "grad_healthy", 1.0))
    run = Run(events=events, series=Series((0, 1, 2, 3), {"loss": (1.0, 0.9, math.nan, math.nan)}))
    assert first_event_step(run) == 1
    assert loss_failure_step(run, []) == 2
    plateau = Run(events=(Event(7, "<loss>", "loss", "loss_steady", "loss_plateau", 1.0),))
    assert loss_failure_step(plateau, [1.0] * 9) == 7
    assert loss_failure_step(Run(), [1.0, math.inf]) == 1
    assert loss_failure_step(Run(), [1.0, 0.5]) is None


# ---------------------------------------------------------------- the failure criterion


def test_failure_of_nonfinite_stall_and_the_fixed_run():
    assert failure_of([1.0, 0.5, math.nan, math.nan]) == Failure("non-finite", step=2)
    assert failure_of([1.0] * 20) == Failure("stall", ratio=1.0)
    assert failure_of([1.0 - i / 40 for i in range(20)]) is None
    falling = [1.0 / (i + 1) for i in range(20)]
    assert failure_of([1.0] * 20, falling) == Failure("stall", ratio=1.0)
    assert failure_of([1.0] * 20, [1.0] * 20) is None  # the fixed run stalls as well
    assert stall_ratio([2.0] * 5 + [40.0] * 5) == 20.0
    assert str(Failure("stall", ratio=20.0)).startswith("diverged")
    assert parse_seeds("0, 2") == [0, 2]
    with pytest.raises(NeuralDbgError, match="--seeds"):
        parse_seeds("a")


# ---------------------------------------------------------------- end to end

@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("suite")
    files = {"outlier": ("data_outlier", True, ""),
             "calm": ("healthy", False, ""),
             "broken": ("lr_too_high", False, 'raise RuntimeError("boom in build")')}
    return write_suite(d, files)


@pytest.fixture(scope="module")
def result(suite_dir):
    return run_bench(suite_dir, [0], progress=False)


def test_bench_result_shape(result):
    assert {"summary", "per_cause", "runs", "baselines"} <= set(result)
    assert {"runs", "top1", "top3", "localization", "ece", "brier",
            "false_alarm_rate"} <= set(result["summary"])
    assert result["summary"]["runs"] == 2 and result["summary"]["errors"] == 1
    assert set(result["per_cause"]) == {"data_outlier", "healthy", "lr_too_high"}
    assert {"runs", "top1"} <= set(result["per_cause"]["healthy"])
    by_name = {r["scenario"]: r for r in result["runs"]}
    assert set(by_name) == {"outlier", "calm", "broken"}
    for r in result["runs"]:
        assert {"scenario", "seed", "cause", "origin", "hypotheses", "seconds"} <= set(r)
        for h in r["hypotheses"]:
            assert set(h) == {"cause", "confidence", "layer", "step"}
    assert "boom in build" in by_name["broken"]["error"]
    assert by_name["outlier"]["failure"] == "failed at step 5 (non-finite)"
    assert by_name["outlier"]["loss_failure_step"] == 5
    assert by_name["calm"]["failure"] is None and by_name["calm"]["seconds"] > 0
    for name in ("grad_threshold", "prior_only"):
        base = result["baselines"][name]
        assert base["summary"]["runs"] == 2 and len(base["runs"]) == 2
    assert result["baselines"]["grad_threshold"]["summary"]["ece"] is None
    # strict JSON, and a saved result rescores to the same numbers
    saved = json.loads(json.dumps(result, allow_nan=False))
    assert score(saved["runs"])["summary"] == result["summary"]


def test_bench_cli_writes_json_and_table(suite_dir, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "--suite", str(suite_dir), "--seeds", "0", "--json", str(out),
                 "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "| **overall** | 2 |" in printed.out
    assert "baseline: grad-norm rule" in printed.out and "baseline: prior only" in printed.out
    assert "boom in build" in printed.err
    assert json.loads(out.read_text())["summary"]["runs"] == 2


def test_bench_cli_names_suite_when_the_directory_is_missing(tmp_path, capsys):
    assert main(["bench", "--suite", str(tmp_path / "nope"), "--seeds", "0"]) == 2
    assert "--suite" in capsys.readouterr().err


def test_suite_verify_rows_and_cli(suite_dir, capsys):
    rows = {r.scenario: r for r in verify(suite_dir, [0])}
    assert rows["outlier"].valid and rows["outlier"].unfixed == "failed at step 5 (non-finite)"
    assert rows["outlier"].fixed.startswith("ok")
    assert rows["calm"].valid and rows["calm"].cause == "healthy"
    assert not rows["broken"].valid and "boom in build" in (rows["broken"].error or "")
    assert main(["suite", "verify", str(suite_dir), "--seeds", "0"]) == 1
    out = capsys.readouterr().out
    assert "2/3 valid" in out and "INVALID: RuntimeError: boom in build" in out


def test_plot_needs_matplotlib_and_says_how(result, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(NeuralDbgError, match="pip install matplotlib"):
        bench.plot_reliability(result, tmp_path / "r.png")


def test_plot_draws_a_reliability_diagram(result, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.png"
    bench.plot_reliability(result, out)
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_progress_falls_back_to_a_stderr_counter(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    from neuraldbg.suite.parallel import progress_bar

    bar = progress_bar(3, True)
    bar.set_description("calm seed 0")
    bar.update(1)
    bar.close()
    assert "run 1/3 calm seed 0" in capsys.readouterr().err


def test_scenario_files_recurse_and_reject_a_shared_family_name(tmp_path):
    from neuraldbg.suite.scenario import ScenarioError, scenario_files
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "one.py").write_text("")
    (tmp_path / "b" / "two.py").write_text("")
    (tmp_path / "b" / "_helper.py").write_text("")
    assert [p.stem for p in scenario_files(tmp_path)] == ["one", "two"]
    (tmp_path / "b" / "one.py").write_text("")
    with pytest.raises(ScenarioError, match="share the family name 'one'"):
        scenario_files(tmp_path)


def test_the_bundled_splits_share_no_family():
    from neuraldbg.errors import SuiteError
    from neuraldbg.suite.verify import bundled_suite, suite_files
    train = {p.stem for p in suite_files(None, split="train")}
    held = {p.stem for p in suite_files(None, split="validation")}
    probe = {p.stem for p in suite_files(None, split="probe")}
    scored = {p.stem for p in suite_files(None, split="scored")}
    try:
        blind = {p.stem for p in suite_files(None, split="blind")}
    except SuiteError:  # between a wave's scoring and the next wave's hand-over it is empty
        blind = set()
    splits = [train, held, probe, scored, blind]
    assert train and held and probe and scored  # blind holds the waves not scored yet
    assert all(not a & b for i, a in enumerate(splits) for b in splits[i + 1:])
    assert {p.stem for p in suite_files(bundled_suite())} == train | held | probe | scored | blind
