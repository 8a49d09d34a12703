"""Fitting the network's tables and calibration map (`causal.calibration.fit`) on synthetic
observations (no
torch, no training), the family split, the JSON record, `apply` on a registry, and one small
end-to-end `neuraldbg fit` on a temporary suite."""

from __future__ import annotations

import copy
import itertools
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path
from types import MappingProxyType

import pytest
from helpers import write_suite
from hypothesis import given, settings
from hypothesis import strategies as st

from causal.calibration.fit import (
    SCHEMA_VERSION,
    Calibration,
    FitError,
    FittedParameters,
    Observation,
    fit_calibration,
    fit_parameters,
    load_observations,
    log_loss,
    split_families,
    top_cause,
)
from causal.diagnose import builtin_registry
from causal.network import CausalNetwork, get_network
from causal.registry import Registry

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reg() -> Registry:
    """A private registry with the built-ins (the global one is left alone)."""
    return builtin_registry(Registry())


def quiet(reg: Registry, **over: dict[str, float]) -> dict[str, dict[str, float]]:
    """Every symptom in its first (normal) state, except the ones given."""
    ev = {n: s.hard(s.states[0]) for n, s in reg.symptoms().items()}
    ev.update(over)
    return ev


def hard(reg: Registry, symptom: str, state: str) -> dict[str, float]:
    return reg.symptoms()[symptom].hard(state)


def ob(reg: Registry, family: str, seed: int, cause: str, **over: dict[str, float]
       ) -> Observation:
    return Observation(family, family, seed, cause, quiet(reg, **over))


def update_ratio_table(reg: Registry) -> list[Observation]:
    """lr_too_high: 6 x very_high, 3 x high, 1 x soft {normal .5, high .5} (normal or high, the
    symptom cannot say which); healthy: 8 x normal, 2 x high. Counts: healthy (8, 2, 0) of 10;
    lr (0, 4, 6) of 10 as the prior's weight goes to 0 (EM gives the soft run to the state its
    label's other runs show), and (3 + q, 6) + (1 - q, 0, 0) otherwise."""
    obs = [ob(reg, "lr_a", i, "lr_too_high", update_ratio=hard(reg, "update_ratio", "very_high"))
           for i in range(6)]
    obs += [ob(reg, "lr_b", i, "lr_too_high", update_ratio=hard(reg, "update_ratio", "high"))
            for i in range(3)]
    obs.append(ob(reg, "lr_b", 9, "lr_too_high",
                  update_ratio={"normal": 0.5, "high": 0.5, "very_high": 0.0}))
    obs += [ob(reg, "calm", i, "healthy") for i in range(8)]
    obs += [ob(reg, "calm_b", i, "healthy", update_ratio=hard(reg, "update_ratio", "high"))
            for i in range(2)]
    return obs


LR_COUNTS = {"normal": 0.0, "high": 4.0, "very_high": 6.0}  # with a vanishing prior weight
HEALTHY_COUNTS = {"normal": 8.0, "high": 2.0, "very_high": 0.0}


# ---------------------------------------------------------------- tables


def test_small_ess_recovers_the_empirical_frequencies(reg):
    fp = fit_parameters(update_ratio_table(reg), reg, ess=1e-6, calibration="none")
    lik = fp.likelihoods["lr_too_high"]["update_ratio"]
    leak = fp.leaks["update_ratio"]
    for state in LR_COUNTS:
        assert lik[state] == pytest.approx(LR_COUNTS[state] / 10, abs=1e-6)
        assert leak[state] == pytest.approx(HEALTHY_COUNTS[state] / 10, abs=1e-6)
    # every lr run showed a steady loss: the fitted table follows the data there too
    assert fp.likelihoods["lr_too_high"]["loss_pattern"]["steady"] == pytest.approx(1, abs=1e-6)


def test_the_fit_is_the_dirichlet_posterior_mean_with_soft_evidence_counted_by_em(reg):
    """Each column is the Dirichlet posterior mean of its runs' state posteriors, and a soft
    run's posterior is its evidence times that same column, normalised (EM's fixed point)."""
    ess = 10.0
    fp = fit_parameters(update_ratio_table(reg), reg, ess=ess, calibration="none")
    hand = reg.causes()["lr_too_high"].likelihoods["update_ratio"]
    hand_leak = reg.symptoms()["update_ratio"].leak_distribution()
    col = fp.likelihoods["lr_too_high"]["update_ratio"]
    q = col["high"] / (col["normal"] + col["high"])  # the soft run's share of "high"
    counts = {"normal": 1.0 - q, "high": 3.0 + q, "very_high": 6.0}
    for state in LR_COUNTS:
        assert col[state] == pytest.approx((ess * hand[state] + counts[state]) / (ess + 10),
                                           rel=1e-9)
        assert fp.leaks["update_ratio"][state] == pytest.approx(
            (ess * hand_leak[state] + HEALTHY_COUNTS[state]) / (ess + 10), rel=1e-12)
    # counted as a distribution, the soft run would have given "normal" half a run
    assert col["normal"] < (ess * hand["normal"] + 0.5) / (ess + 10)
    assert fp.runs["lr_too_high"] == 10 and fp.runs["healthy"] == 10 and fp.runs["bad_init"] == 0


def test_a_signal_no_run_could_read_leaves_its_column_where_the_readable_runs_put_it(reg):
    """Runs that could not read a symptom (every state alike) move no table: the column is
    what the runs that read it say, however many cannot."""
    sym = reg.symptoms()["update_ratio"]
    readable = update_ratio_table(reg)[:9]  # the nine hard lr runs
    unread = [ob(reg, "lr_c", i, "lr_too_high", update_ratio=sym.unobserved())
              for i in range(40)]
    alone = fit_parameters(readable, reg, ess=3.0, calibration="none")
    both = fit_parameters(readable + unread, reg, ess=3.0, calibration="none")
    assert both.likelihoods["lr_too_high"]["update_ratio"] == pytest.approx(
        alone.likelihoods["lr_too_high"]["update_ratio"], abs=1e-6)


def _soft_table(reg: Registry) -> list[Observation]:
    """update_ratio_table plus soft evidence on a second symptom of two causes."""
    obs = update_ratio_table(reg)
    obs += [ob(reg, "init_a", i, "bad_init",
               init_depth_trend={"flat": 0.5, "growing": 0.5 - 0.1 * i, "shrinking": 0.1 * i})
            for i in range(3)]
    return obs


@pytest.mark.parametrize("ess", [0.5, 3.0, 30.0])
def test_the_closed_form_fit_equals_pgmpys_estimator(reg, ess):
    from causal.calibration.fit import fit_tables, fit_tables_pgmpy

    (lik, leak), (lik_pg, leak_pg) = (fit_tables(_soft_table(reg), reg, ess),
                                      fit_tables_pgmpy(_soft_table(reg), reg, ess))
    assert lik.keys() == lik_pg.keys() and leak.keys() == leak_pg.keys()
    for cause, table in lik.items():
        for sym, dist in table.items():
            assert dist == pytest.approx(lik_pg[cause][sym], abs=1e-12)
    for sym, dist in leak.items():
        assert dist == pytest.approx(leak_pg[sym], abs=1e-12)


def test_each_cross_fitted_fold_is_the_fit_without_that_family(reg):
    from causal.calibration.fit import cross_fitted, fit_tables

    obs = _soft_table(reg)
    folds = list(cross_fitted(obs, reg, 3.0))
    assert [mine[0].family for mine, _ in folds] == sorted({o.family for o in obs})
    for mine, fold in folds:
        lik, leak = fit_tables([o for o in obs if o.family != mine[0].family], reg, 3.0)
        for cause, node in fold.causes().items():
            for sym, dist in node.likelihoods.items():
                assert dict(dist) == pytest.approx(lik[cause][sym], abs=1e-12)
        for sym, node in fold.symptoms().items():
            assert node.leak_distribution() == pytest.approx(leak[sym], abs=1e-12)


def test_huge_ess_and_causes_without_runs_keep_the_hand_set_tables(reg):
    obs = update_ratio_table(reg)
    fp = fit_parameters(obs, reg, ess=1e12, calibration="none")
    small = fit_parameters(obs, reg, ess=1.0, calibration="none")
    for name, cause in reg.causes().items():
        for sym, dist in cause.likelihoods.items():
            for state, p in dist.items():
                assert fp.likelihoods[name][sym][state] == pytest.approx(p, abs=1e-9)
                if name != "lr_too_high":  # no run of its own: hand-set whatever the ess
                    assert small.likelihoods[name][sym][state] == pytest.approx(p, abs=1e-12)
    for name, sym in reg.symptoms().items():
        for state, p in sym.leak_distribution().items():
            assert fp.leaks[name][state] == pytest.approx(p, abs=1e-9)


def test_fitted_tables_are_distributions_and_the_fit_is_deterministic(reg):
    obs = update_ratio_table(reg)
    a = fit_parameters(obs, reg)
    b = fit_parameters(list(reversed(obs)), reg)
    assert a.to_json() == b.to_json()
    for table in [*a.likelihoods.values(), {"leaks": a.leaks}]:
        for dist in (table["leaks"].values() if "leaks" in table else table.values()):
            assert math.fsum(dist.values()) == pytest.approx(1.0, abs=1e-12)
            assert all(p >= 0 for p in dist.values())


def test_bad_observations_and_ess_raise_clear_errors(reg):
    good = update_ratio_table(reg)
    with pytest.raises(FitError, match="labelled 'no_such_cause'"):
        fit_parameters([*good, ob(reg, "x", 0, "no_such_cause")], reg)
    partial = Observation("y", "y", 0, "healthy",
                          {k: v for k, v in quiet(reg).items() if k != "update_ratio"})
    with pytest.raises(FitError, match="no evidence for symptoms \\['update_ratio'\\]"):
        fit_parameters([*good, partial], reg)
    with pytest.raises(FitError, match="not a distribution"):
        fit_parameters([ob(reg, "z", 0, "healthy", update_ratio={"normal": 0.7})], reg)
    with pytest.raises(FitError, match="ess"):
        fit_parameters(good, reg, ess=0.0)


# ---------------------------------------------------------------- the family split


labels = st.dictionaries(st.text("abcdefgh_", min_size=1, max_size=6),
                         st.sampled_from(["healthy", "lr_too_high", "bad_init", "dead_relu"]),
                         max_size=30)


@settings(max_examples=200, deadline=None)
@given(labels, st.floats(0.0, 0.99), st.integers(0, 10))
def test_split_holds_out_whole_families_per_label(names, fraction, seed):
    train, held = split_families(names, fraction, seed)
    assert not set(train) & set(held)
    assert sorted(train + held) == sorted(names)
    assert (train, held) == split_families(dict(reversed(list(names.items()))), fraction, seed)
    for label in set(names.values()):
        fams = {f for f, c in names.items() if c == label}
        if len(fams) >= 2:
            assert fams & set(train) and fams & set(held)
        else:
            assert fams <= set(train)


def test_split_fraction_and_seed():
    names = {f"h{i}": "healthy" for i in range(6)} | {f"l{i}": "lr_too_high" for i in range(3)}
    _, held = split_families(names, 0.34, 0)
    assert len([f for f in held if f.startswith("h")]) == 2
    assert len([f for f in held if f.startswith("l")]) == 1
    assert {tuple(split_families(names, 0.34, s)[1]) for s in range(20)} != {tuple(held)}
    with pytest.raises(FitError, match="held_out_fraction"):
        split_families(names, 1.0, 0)


# ---------------------------------------------------------------- calibration


def overconfident() -> tuple[list[float], list[bool]]:
    """Confidences 0.95-0.999, but only 60% of the top causes are right."""
    tops = [0.95 + 0.049 * i / 99 for i in range(100)]
    right = [i % 5 < 3 for i in range(100)]
    return tops, right


@pytest.mark.parametrize("method", ["platt", "temperature"])
def test_calibration_reduces_log_loss_on_an_overconfident_set(method):
    tops, right = overconfident()
    cal = fit_calibration(tops, right, method)
    assert cal.log_loss_before == pytest.approx(log_loss(tops, right))
    assert cal.log_loss_after is not None and cal.log_loss_before is not None
    assert cal.log_loss_after < 0.5 * cal.log_loss_before
    assert cal.a < 1.0  # softened
    if method == "temperature":
        assert cal.b == 0.0
    calibrated = [cal(p) for p in tops]
    assert all(a <= b for a, b in itertools.pairwise(calibrated))  # monotone
    assert sum(calibrated) / len(calibrated) == pytest.approx(0.6, abs=0.1)


def test_calibration_identity_empty_and_bad_method():
    assert Calibration()(0.37) == 0.37
    assert fit_calibration([], []) == Calibration()
    with pytest.raises(FitError, match="platt"):
        fit_calibration([0.5], [True], "isotonic")


def test_fit_parameters_fits_calibration_on_cross_fitted_training_posteriors(reg):
    fp = fit_parameters(update_ratio_table(reg), reg, ess=10.0)
    assert fp.calibration.method == "temperature" and fp.calibration.runs == 20  # the default
    assert fp.calibration.b == 0.0 and fp.calibration(0.5) == pytest.approx(0.5)
    platt = fit_parameters(update_ratio_table(reg), reg, ess=10.0, calibration="platt")
    assert platt.calibration.method == "platt"
    assert fp.calibration.log_loss_after is not None
    assert fp.calibration.log_loss_before is not None
    assert fp.calibration.log_loss_after <= fp.calibration.log_loss_before
    post = {"lr_too_high": 0.9, "bad_init": 0.2, "healthy_like": 1e-30}
    out = fp.calibrate(post)
    assert set(out) == set(post)
    assert out["lr_too_high"] == pytest.approx(fp.calibration(0.9))
    assert top_cause(out)[0] == "lr_too_high"  # a > 0: the map is increasing


def test_cross_fitted_rows_score_as_the_fits_leave_one_family_out_table(reg):
    """`cross_fitted_rows` gives one bench row per observation, in order, each scored with the
    tables fitted without its family and the fitted calibration: scored together they are the
    "fitted + calibrated" row `neuraldbg fit` prints (what `benchmarks/wave_spread.py` draws
    waves from)."""
    from neuraldbg.suite.fit_driver import cross_fitted_rows, evaluate_cross_fitted
    from neuraldbg.suite.scoring import score

    obs = update_ratio_table(reg)
    fp = fit_parameters(obs, reg, ess=10.0)
    rows = cross_fitted_rows(obs, reg, fp)
    assert [(r["scenario"], r["seed"], r["cause"]) for r in rows] == [
        (o.scenario, o.seed, o.cause) for o in obs]
    mine = score(rows)["summary"]
    fit_table = evaluate_cross_fitted(obs, reg, fp)["fitted + calibrated"]["summary"]
    assert mine.keys() == fit_table.keys()
    for key, value in fit_table.items():  # the same runs in another order: sums may round
        assert mine[key] == (value if value is None else pytest.approx(value)), key


# ---------------------------------------------------------------- the record


def test_json_round_trip_and_schema(reg):
    fp = fit_parameters(update_ratio_table(reg), reg, seeds=[1, 0])
    text = fp.to_json()
    back = FittedParameters.from_json(text)
    assert back == fp and back.to_json() == text
    data = json.loads(text)
    assert data["schema"] == SCHEMA_VERSION and data["ess"] == 10.0 and data["seeds"] == [0, 1]
    assert data["causes"] == list(reg.causes())
    assert data["symptoms"]["update_ratio"] == ["normal", "high", "very_high"]
    assert data["training_families"] == ["calm", "calm_b", "lr_a", "lr_b"]
    assert set(data["calibration"]) >= {"method", "a", "b"}
    with pytest.raises(FitError, match="schema 99"):
        FittedParameters.from_json(json.dumps({**data, "schema": 99}))
    with pytest.raises(FitError, match="not a neuraldbg fitted-parameters record"):
        FittedParameters.from_json("{}")
    with pytest.raises(FitError, match="malformed"):
        FittedParameters.from_json(json.dumps({**data, "leaks": 3}))
    with pytest.raises(FitError, match="not valid JSON"):
        FittedParameters.from_json("{")


def test_save_and_load(reg, tmp_path):
    fp = fit_parameters(update_ratio_table(reg), reg, calibration="none")
    path = tmp_path / "sub" / "fitted.json"
    fp.save(path)
    assert FittedParameters.load(path) == fp
    with pytest.raises(FitError, match="cannot read"):
        FittedParameters.load(tmp_path / "missing.json")


# ---------------------------------------------------------------- apply


def _snapshot(registry: Registry) -> tuple[object, ...]:
    causes = registry.causes()
    return (registry.version,
            {n: (type(c), {s: dict(d) for s, d in c.likelihoods.items()},
                 {s: dict(d) for s, d in type(c).likelihoods.items()})
             for n, c in causes.items()},
            {n: (type(s), s.leak_distribution(), dict(type(s).leak or {}))
             for n, s in registry.symptoms().items()})


def test_apply_leaves_the_global_registry_untouched_and_builds_a_valid_network():
    glob = builtin_registry()
    fp = fit_parameters(update_ratio_table(glob), glob, ess=1.0)
    before = _snapshot(glob)
    hand_post = get_network(glob).posteriors(quiet(glob))
    applied = fp.apply(glob)
    assert _snapshot(glob) == before
    assert applied is not glob and list(applied.causes()) == list(glob.causes())
    lr = applied.causes()["lr_too_high"]
    assert type(lr) is type(glob.causes()["lr_too_high"])
    assert lr is not glob.causes()["lr_too_high"]
    assert dict(lr.likelihoods["update_ratio"]) == fp.likelihoods["lr_too_high"]["update_ratio"]
    assert applied.symptoms()["update_ratio"].leak_distribution() == fp.leaks["update_ratio"]
    net = CausalNetwork(applied)
    assert net.model.check_model()
    assert net.column("update_ratio", ["lr_too_high"]) == pytest.approx(
        fp.likelihoods["lr_too_high"]["update_ratio"])
    assert net.column("update_ratio", []) == pytest.approx(fp.leaks["update_ratio"])
    assert net.posteriors(quiet(glob)) != hand_post
    assert get_network(glob).posteriors(quiet(glob)) == hand_post


def test_apply_to_a_registry_that_does_not_match_raises(reg):
    fp = fit_parameters(update_ratio_table(reg), reg, calibration="none")
    missing = reg.copy()
    missing.unregister_cause("lr_too_high")
    with pytest.raises(FitError, match="fitted cause 'lr_too_high' is not registered"):
        fp.apply(missing)

    from causal.causes.base import CauseNode

    class Extra(CauseNode):
        name, prior, summary = "extra_cause", 0.05, "an extra cause"
        likelihoods = MappingProxyType(
            {"update_ratio": {"normal": 0.2, "high": 0.4, "very_high": 0.4}})

    extra = reg.copy()
    extra.register_cause(Extra)
    with pytest.raises(FitError, match="registered causes \\['extra_cause'\\] were not fitted"):
        fp.apply(extra)
    relaxed = fp.apply(extra, strict=False)
    assert dict(relaxed.causes()["extra_cause"].likelihoods) == dict(Extra.likelihoods)
    # a cause added next to the fitted ones does not make their fit stale; editing one does
    assert not fp.is_stale(reg) and not fp.is_stale(extra)
    edited = reg.copy()
    node = copy.copy(reg.causes()["lr_too_high"])
    vars(node)["likelihoods"] = {**node.likelihoods,
                                 "update_ratio": {"normal": 0.1, "high": 0.1, "very_high": 0.8}}
    edited.register_cause(node, replace=True)
    assert fp.is_stale(edited)


# ---------------------------------------------------------------- torch-free


def test_fitting_works_without_torch():
    code = textwrap.dedent("""
        import sys
        class _NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError(f"{name} is blocked by the test")
        sys.meta_path.insert(0, _NoTorch())
        from causal.causes.base import CauseNode
        from causal.calibration.fit import FittedParameters, Observation, fit_parameters
        from causal.registry import Registry
        from causal.symptoms.base import Symptom
        class Flag(Symptom):
            name, states = "flag", ("off", "on")
        class Cause(CauseNode):
            name, prior, summary = "flagger", 0.2, "flags"
            likelihoods = {"flag": {"off": 0.1, "on": 0.9}}
        reg = Registry()
        reg.register_symptom(Flag)
        reg.register_cause(Cause)
        obs = [Observation("a", "a", 0, "flagger", {"flag": {"off": 0.0, "on": 1.0}}),
               Observation("b", "b", 0, "healthy", {"flag": {"off": 1.0, "on": 0.0}})]
        fp = fit_parameters(obs, reg, ess=2.0)
        assert FittedParameters.from_json(fp.to_json()) == fp
        print(round(fp.likelihoods["flagger"]["flag"]["on"], 6), "torch" in sys.modules)
    """)
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(round((2 * 0.9 + 1) / 3, 6)), "False"]


# ---------------------------------------------------------------- end to end (trains)


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fitsuite")
    files = {"outlier_a": ("data_outlier", True, ""), "outlier_b": ("data_outlier", True, ""),
             "calm_a": ("healthy", False, ""), "calm_b": ("healthy", False, ""),
             "broken": ("lr_too_high", False, 'raise RuntimeError("boom in build")')}
    return write_suite(d, files, distinct_seeds=True)


@pytest.mark.slow
def test_fit_cli_splits_fits_compares_and_reproduces(suite_dir, tmp_path, capsys):
    from neuraldbg.cli import main
    from neuraldbg.suite.fit_driver import collect

    out, cache = tmp_path / "fitted.json", tmp_path / "cache.json"
    args = ["fit", "--suite", str(suite_dir), "--seeds", "0", "--out", str(out),
            "--no-progress", "--cache", str(cache)]
    assert main(args) == 0
    printed = capsys.readouterr()
    fp = FittedParameters.load(out)
    table = load_observations(tmp_path / "fitted.observations.json", builtin_registry())
    assert sorted({o.family for o in table}) == list(fp.training_families)
    train, held = split_families({"outlier_a": "data_outlier", "outlier_b": "data_outlier",
                                  "calm_a": "healthy", "calm_b": "healthy",
                                  "broken": "lr_too_high"}, 0.34, 0)
    assert fp.training_families == tuple(f for f in train if f != "broken")
    assert set(held) & {"outlier_a", "outlier_b"} and set(held) & {"calm_a", "calm_b"}
    assert fp.runs["data_outlier"] == 1 and fp.runs["healthy"] == 1 and fp.seeds == (0,)
    for variant in ("| hand-set | 2 |", "| fitted | 2 |", "| fitted + calibrated | 2 |"):
        assert variant in printed.out
    assert "boom in build" in printed.err
    # a re-run (from the cache) writes the same bytes; the cache holds what a fresh run observes
    again = tmp_path / "again.json"
    assert main([*args[:6], str(again), *args[7:]]) == 0
    assert again.read_bytes() == out.read_bytes()
    cached = json.loads(cache.read_text())["entries"]
    assert len(cached) == 4
    # every family fitted, each scored by tables fitted without it (from the cache: no training)
    assert main([*args[:6], str(tmp_path / "all.json"), *args[7:],
                 "--held-out-fraction", "0"]) == 0
    lofo = capsys.readouterr().out
    assert "leave-one-family-out" in lofo and "| fitted + calibrated | 4 |" in lofo
    fresh = collect(suite_dir, [0], ["outlier_a"])
    assert [o.to_dict() for o in fresh] == [
        v for k, v in sorted(cached.items()) if k.startswith("outlier_a:")]


def test_select_ess_prefers_the_value_that_predicts_a_left_out_family(reg):
    from causal.calibration.fit import select_ess

    # three families whose runs contradict the hand-set update_ratio table for lr_too_high the
    # same way: the data generalise across families, so a small ess wins over a huge one
    obs = [ob(reg, fam, i, "lr_too_high", update_ratio=hard(reg, "update_ratio", "normal"),
              loss_pattern=hard(reg, "loss_pattern", "diverging"))
           for fam in ("lr_a", "lr_b", "lr_c") for i in range(4)]
    obs += [ob(reg, fam, i, "healthy") for fam in ("calm_a", "calm_b") for i in range(4)]
    best, scores = select_ess(obs, reg, candidates=(1.0, 1e6))
    assert set(scores) == {1.0, 1e6} and best == 1.0 and scores[1.0] < scores[1e6]
    with pytest.raises(FitError, match="two training families"):
        select_ess([o for o in obs if o.family == "lr_a"], reg)


# ---------------------------------------------------------------- the root-share temperature


def _judged(cause: str, shares: dict[str, float]
            ) -> tuple[Observation, dict, dict, dict, float, frozenset[str]]:
    ob_ = Observation("f", "f", 0, cause, {})
    return (ob_, {c: 0.99 for c in shares}, {c: math.log(s) for c, s in shares.items()}, {},
            0.99, frozenset())


def test_the_share_temperature_flattens_shares_that_are_sharp_and_often_wrong():
    from causal.calibration.fit import select_share_temperature

    sharp = {"lr_too_high": 0.999, "dead_relu": 0.001}
    # sharp and right every time: no tempering
    right = [_judged("lr_too_high", sharp) for _ in range(10)]
    assert select_share_temperature(right, Calibration()) == 1.0
    # as sharp, wrong one time in four: the log-loss wants flatter shares
    mixed = right[:6] + [_judged("dead_relu", sharp) for _ in range(2)]
    assert select_share_temperature(mixed, Calibration()) > 1.0
    assert select_share_temperature([], Calibration()) == 1.0


def test_the_share_temperature_is_the_best_one_under_which_missing_evidence_widens():
    """A guard (fit_parameters: dropping one signal must rarely make a wrong cause confident)
    turns down temperatures; the best accepted one wins, the flattest when none is."""
    from causal.calibration.fit import SHARE_TEMPERATURES, select_share_temperature

    sharp = {"lr_too_high": 0.999, "dead_relu": 0.001}
    mixed = [_judged("lr_too_high", sharp)] * 300 + [_judged("dead_relu", sharp)]
    best = select_share_temperature(mixed, Calibration())
    assert 1.0 < best < max(SHARE_TEMPERATURES)
    flatter = select_share_temperature(mixed, Calibration(), guard=lambda t: t > best)
    assert flatter == min(t for t in SHARE_TEMPERATURES if t > best)
    assert select_share_temperature(mixed, Calibration(), guard=lambda t: True) == best
    assert select_share_temperature(mixed, Calibration(), guard=lambda t: False) == max(
        SHARE_TEMPERATURES)


def test_confident_wrong_answers_are_counted_as_diagnose_gives_them():
    """`confident_wrong` (fit_parameters keeps it under CONFIDENT_WRONG_BOUND of the runs when
    it chooses the temperature): a wrong cause above 0.95, not a right one, and no longer once
    the shares are tempered flatter; a healthy run called failing and a failing one called
    healthy count when confident."""
    from causal.calibration.fit import CONFIDENT_WRONG, confident_wrong

    sharp = {"lr_too_high": 0.999, "dead_relu": 0.001}
    right, wrong = _judged("lr_too_high", sharp), _judged("dead_relu", sharp)
    found = confident_wrong([right, wrong], Calibration(), 1.0)
    assert [(ob_.cause, answer) for ob_, answer, _ in found] == [("dead_relu", "lr_too_high")]
    assert found[0][2] > CONFIDENT_WRONG
    assert confident_wrong([right, wrong], Calibration(), 3.0) == []
    ob_ = Observation("f", "f", 0, "healthy", {})
    alarm = (ob_, {"lr_too_high": 0.99}, {"lr_too_high": 0.0}, {}, 0.99, frozenset())
    assert [a for _, a, _ in confident_wrong([alarm], Calibration(), 1.0)] == ["lr_too_high"]
    missed = (Observation("f", "f", 0, "dead_relu", {}), {"dead_relu": 0.01}, {"dead_relu": 0.0},
              {}, 0.01, frozenset())
    assert [a for _, a, _ in confident_wrong([missed], Calibration(), 1.0)] == ["healthy"]


def test_the_sharp_temperature_calibrates_the_answers_a_flat_one_leaves_under_confident():
    """`select_sharp_temperature`: the flat temperature (chosen to keep wrong answers above
    0.95 rare) leaves answers right 9 times in 10 at 0.66; a sharper one reports them nearer
    0.9 and is chosen. Answers right one time in two gain nothing from sharper shares but a
    worse log-loss: none is chosen (None: the flat temperature throughout), and neither when
    the guard turns every candidate down."""
    from causal.calibration.fit import answer_ece, select_sharp_temperature

    moderate = {"lr_too_high": 0.8, "dead_relu": 0.2}
    mostly = [_judged("lr_too_high", moderate)] * 9 + [_judged("dead_relu", moderate)]
    sharp = select_sharp_temperature(mostly, Calibration(), 2.0)
    assert sharp is not None and sharp < 2.0
    assert answer_ece(mostly, Calibration(), 2.0, sharp) < answer_ece(mostly, Calibration(), 2.0)
    assert select_sharp_temperature(mostly, Calibration(), 2.0, guard=lambda t: False) is None
    coin = [_judged("lr_too_high", moderate)] * 5 + [_judged("dead_relu", moderate)] * 5
    assert select_sharp_temperature(coin, Calibration(), 2.0) is None
    assert select_sharp_temperature([], Calibration(), 2.0) is None


def test_fit_parameters_records_the_share_temperature_and_old_records_read_as_one(reg):
    fp = fit_parameters(update_ratio_table(reg), reg, ess=10.0)
    t = fp.calibration.share_temperature
    assert t >= 1.0
    data = json.loads(fp.to_json())
    assert data["calibration"]["share_temperature"] == t
    del data["calibration"]["share_temperature"]  # a record written before the temperature
    assert FittedParameters.from_dict(data).calibration.share_temperature == 1.0
    data["calibration"]["share_temperature"] = -1
    with pytest.raises(FitError, match="share_temperature"):
        FittedParameters.from_dict(data)
    data = json.loads(fp.to_json())
    assert data["calibration"]["sharp_temperature"] == fp.calibration.sharp_temperature
    del data["calibration"]["sharp_temperature"]  # a record written before it: one temperature
    assert FittedParameters.from_dict(data).calibration.sharp_temperature is None
    data["calibration"]["sharp_temperature"] = 0.0
    with pytest.raises(FitError, match="sharp_temperature"):
        FittedParameters.from_dict(data)


def test_a_fitted_leak_keeps_the_floor_of_a_state_its_healthy_runs_cannot_show():
    """The contract admits no healthy run that stalls, so the fitted healthy runs never read
    `stalled`; real healthy programs do (a GAN's generator), and the fitted leak of `outcome`
    keeps `Outcome.fitted_leak_floor` of it, the other states scaled to make room."""
    from causal.calibration.fit import fit_tables, floored
    from causal.symptoms.failure import Outcome

    assert floored({"a": 0.99, "b": 0.01}, {"b": 0.05}) == pytest.approx({"a": 0.95, "b": 0.05})
    assert floored({"a": 0.9, "b": 0.1}, {"b": 0.05}) == {"a": 0.9, "b": 0.1}
    assert floored({"a": 0.0, "b": 0.0, "c": 1.0}, {"b": 0.2, "c": 0.3}) == pytest.approx(
        {"a": 0.0, "b": 0.2, "c": 0.8})
    reg = builtin_registry(Registry())
    learned = {"outcome": {"learned": 1.0, "stalled": 0.0, "nonfinite": 0.0}}
    healthy = [Observation(f"h{i}", f"h{i}", 0, "healthy", learned) for i in range(500)]
    _, leaks = fit_tables(healthy, reg, 1.0)
    floor = Outcome.fitted_leak_floor["stalled"]
    assert leaks["outcome"]["stalled"] == pytest.approx(floor)
    assert sum(leaks["outcome"].values()) == pytest.approx(1.0)


@pytest.mark.parametrize("floor", [{"nope": 0.1}, {"b": 1.0}, {"a": 0.5, "b": 0.4}])
def test_a_bad_leak_floor_is_refused_with_what_it_must_be(floor):
    from causal.errors import SymptomError
    from causal.symptoms.base import Symptom

    sym = type("Two", (Symptom,), {"name": "two", "states": ("a", "b"),
                                   "fitted_leak_floor": floor})()
    with pytest.raises(SymptomError, match="fitted_leak_floor must map"):
        sym.check()
