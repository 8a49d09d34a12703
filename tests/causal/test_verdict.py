"""The verdict: P(failing) from the marginals, and each cause's root-cause confidence from its
single-fault share (`CausalNetwork.root_shares`), checked against brute force and on the case it
exists for: evidence two causes fit equally."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causal.causes.base import CauseNode
from causal.diagnose import format_diagnosis, is_healthy
from causal.network import get_network
from causal.registry import Registry
from causal.schema.run import LayerGraph, Run, Series
from causal.symptoms.base import Symptom
from causal.verdict import verdict


def _symptom(name: str, states: tuple[str, ...]) -> Symptom:
    return type(name.title(), (Symptom,), {"name": name, "states": states, "leak": None})()


def _cause(name: str, prior: float, likelihoods: dict) -> CauseNode:
    return type(name.title().replace("_", ""), (CauseNode,), {
        "name": name, "prior": prior, "summary": name, "likelihoods": likelihoods})()


def _registry() -> Registry:
    """Two causes that raise the same `blowup` alike (a too high lr and the ReLUs it kills), and
    a third with a symptom of its own."""
    reg = Registry()
    for sym in (_symptom("blowup", ("no", "yes")), _symptom("dead", ("no", "yes")),
                _symptom("spike", ("no", "yes"))):
        reg.register_symptom(sym)
    reg.register_cause(_cause("lr", 0.1, {"blowup": {"no": 0.1, "yes": 0.9},
                                          "dead": {"no": 0.5, "yes": 0.5}}))
    reg.register_cause(_cause("relu", 0.1, {"blowup": {"no": 0.1, "yes": 0.9},
                                            "dead": {"no": 0.5, "yes": 0.5}}))
    reg.register_cause(_cause("batch", 0.1, {"spike": {"no": 0.1, "yes": 0.9}}))
    return reg


def _brute_single_fault(net, evidence):
    """P(only c | evidence, exactly one cause present), by enumerating the single-fault worlds."""
    weights = {}
    for c in net.causes:
        w = net.priors[c] * math.prod(1 - net.priors[o] for o in net.causes if o != c)
        for s, dist in evidence.items():
            col = net.column(s, [c] if c in net.parents.get(s, ()) else [])
            w *= sum(col[st] * p for st, p in dist.items())
        weights[c] = w
    z = sum(weights.values())
    return {c: w / z for c, w in weights.items()}


def test_evidence_two_causes_fit_alike_splits_the_root_confidence():
    net = get_network(_registry())
    evidence = {"blowup": {"no": 0.0, "yes": 1.0}, "dead": {"no": 0.0, "yes": 1.0},
                "spike": {"no": 1.0, "yes": 0.0}}
    marginals = net.posteriors(evidence)
    judged = verdict(net, evidence)
    # both are "present" well above the third; as the root, neither is certain
    assert judged.root["lr"] == pytest.approx(judged.root["relu"])
    assert judged.root["lr"] <= judged.failing / 2 + 1e-12
    # that one of them is present is surer than either alone
    assert judged.failing == pytest.approx(net.failing(evidence))
    assert judged.failing > max(marginals.values()) + 0.3
    assert sum(judged.root.values()) == pytest.approx(judged.failing)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3))
def test_root_shares_match_single_fault_enumeration(ps):
    net = get_network(_registry())
    evidence = {name: {"no": 1.0 - p, "yes": p}
                for name, p in zip(("blowup", "dead", "spike"), ps, strict=True)}
    shares = net.root_shares(evidence)
    expected = _brute_single_fault(net, evidence)
    assert shares == pytest.approx(expected, rel=1e-9)
    assert sum(shares.values()) == pytest.approx(1.0)
    judged = verdict(net, evidence)
    assert all(0.0 <= p <= judged.failing + 1e-12 for p in judged.root.values())


def test_the_healthy_verdict_follows_failing_not_the_split_confidences():
    class H:  # a hypothesis-like stand-in: only `confidence` is read
        def __init__(self, c):
            self.confidence = c

    split = [H(0.45), H(0.44)]
    assert not is_healthy(split, 0.5, failing=0.9)   # failing, root unsure
    assert is_healthy(split, 0.5)                    # judged from the hypotheses alone
    assert is_healthy([H(0.3)], 0.5, failing=0.3)


def test_a_split_verdict_says_so_in_the_report():
    from causal.hypothesis import Hypothesis

    # something recorded, so the report is not "nothing to diagnose"
    run = Run({"model_class": "Net"}, LayerGraph(), (), Series((0, 1), {"loss": (1.0, 2.0)}), (),
              ())
    hyps = [Hypothesis("lr", 0.47, None, None, "lr too high", (), ()),
            Hypothesis("relu", 0.46, None, None, "dead relus", (), ())]
    text = format_diagnosis(run, hyps, failing=0.95)
    assert text.splitlines()[0].startswith("Failing (0.95), root cause unsure: the evidence fits "
                                           "lr and relu")
    assert "[0.47] lr too high" in text and "[0.46] dead relus" in text


def test_one_cause_of_a_failure_not_quite_certain_is_named_as_the_root():
    from causal.hypothesis import Hypothesis

    run = Run({"model_class": "Net"}, LayerGraph(), (), Series((0, 1), {"loss": (1.0, 2.0)}), (),
              ())
    hyps = [Hypothesis("lr", 0.48, None, None, "lr too high", (), ())]
    text = format_diagnosis(run, hyps, failing=0.51)
    assert text.splitlines()[0] == ("Failing (0.51, not certain); if it is, the root cause is lr "
                                    "(94% of it):")


# ---------------------------------------------------------------- tempered shares


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1e-6, 1.0), min_size=2, max_size=6),
       st.floats(1.0, 4.0), st.floats(1.0, 4.0))
def test_tempered_shares_keep_their_order_and_flatten_as_the_temperature_rises(raw, t1, t2):
    from causal.verdict import tempered

    z = math.fsum(raw)
    shares = {f"c{i}": v / z for i, v in enumerate(raw)}
    assert tempered(shares, 1.0) == shares
    low, high = sorted((t1, t2))
    a, b = tempered(shares, low), tempered(shares, high)
    for out in (a, b):
        assert math.fsum(out.values()) == pytest.approx(1.0)
        for x in shares:
            for y in shares:
                if shares[x] > shares[y] * (1 + 1e-9):
                    assert out[x] >= out[y]
    top = max(shares, key=shares.__getitem__)
    assert b[top] <= a[top] + 1e-12 and a[top] <= shares[top] + 1e-12


def test_a_share_temperature_lowers_the_top_root_confidence_but_not_p_failing():
    reg = _registry()
    net = get_network(reg)
    evidence = {"blowup": {"no": 0.0, "yes": 1.0}, "dead": {"no": 0.0, "yes": 1.0},
                "spike": {"no": 1.0, "yes": 0.0}}
    sharp, flat = verdict(net, evidence), verdict(net, evidence, share_temperature=2.0)
    assert flat.failing == sharp.failing and flat.present == sharp.present
    top = max(sharp.root, key=sharp.root.__getitem__)
    assert flat.root[top] < sharp.root[top]
    assert math.fsum(flat.root.values()) == pytest.approx(flat.failing)


def test_what_no_cause_predicts_stays_unexplained():
    from causal.verdict import judge

    present = {"lr": 0.7, "relu": 0.6}
    none = {"outcome": {"learned": 0.95, "stalled": 0.03, "nonfinite": 0.02}}
    stalled = {"outcome": {"learned": 0.0, "stalled": 1.0, "nonfinite": 0.0}}
    # no cause fits the evidence (log-odds far below the prior's): the failure is unexplained
    quiet = judge(present, {"lr": -12.0, "relu": -11.0}, stalled, none)
    assert quiet.failing == 0.7 and quiet.unexplained > 0.9 * quiet.failing
    assert math.fsum(quiet.root.values()) + quiet.unexplained == pytest.approx(quiet.failing)
    # a cause that fits it well takes the share
    fits = judge(present, {"lr": -12.0, "relu": 8.0}, stalled, none)
    assert fits.root["relu"] > 0.9 * fits.failing and fits.unexplained < 0.1
    # a run that learned: the unexplained alternative has nothing to explain, and gives way to
    # causes the evidence merely fits
    learned = judge(present, {"lr": -2.0, "relu": -3.0},
                    {"outcome": {"learned": 1.0, "stalled": 0.0, "nonfinite": 0.0}}, none)
    assert learned.unexplained < 0.02 * learned.failing
    # no outcome symptom in the registry: the plain verdict
    plain = judge(present, {"lr": 0.0, "relu": 0.0}, {}, None)
    assert plain.unexplained == 0.0 and plain.failing == 0.7
    assert plain.root["lr"] == pytest.approx(0.35)


def test_a_failure_seen_only_in_the_loss_is_left_unexplained_rather_than_blamed():
    """A run whose loss rose from the start and ended high while every signal measured inside
    the model stayed ordinary (a GAN generator as its discriminator learns): the causes fit the
    loss's shape and timing only as well as an unknown cause does, so the unknown cause, which
    predicts nothing else, takes the larger share; evidence inside the model that a cause
    predicts still wins it back."""
    from causal.verdict import judge

    present = {"saturation": 0.9, "lr": 0.3}
    none = {"outcome": {"learned": 0.9, "stalled": 0.08, "nonfinite": 0.02},
            "loss_pattern": {"steady": 0.8, "spike_recover": 0.07, "oscillating": 0.05,
                             "diverging": 0.03, "plateau": 0.04, "overshoot_plateau": 0.01},
            "onset": {"none": 0.85, "start": 0.05, "early": 0.05, "late": 0.05}}
    loss_only = {"outcome": {"stalled": 1.0}, "loss_pattern": {"diverging": 1.0},
                 "onset": {"start": 1.0}}
    # each cause's single-fault log-odds: its prior and how well it fits the loss alone
    weak = {"saturation": math.log(0.04 / 0.96) + math.log(8 * 3 * 4),
            "lr": math.log(0.08 / 0.92) + math.log(7 * 3 * 8) - 4.0}
    seen = judge(present, weak, loss_only, none)
    assert seen.unexplained > seen.root["saturation"] > seen.root["lr"]
    assert math.fsum(seen.root.values()) + seen.unexplained == pytest.approx(seen.failing)
    # judged on how the loss ended alone, the same evidence blames saturation
    ended = judge(present, weak, loss_only, {"outcome": none["outcome"]})
    assert ended.root["saturation"] > 0.5 * ended.failing > ended.unexplained
    # saturated units measured inside the model: saturation takes the share back
    strong = dict(weak, saturation=weak["saturation"] + math.log(30.0))
    assert judge(present, strong, loss_only, none).root["saturation"] > 0.5 * seen.failing


def test_a_loss_that_turned_non_finite_is_failing_whatever_its_cause():
    """Evidence split between two causes leaves each marginal moderate; a loss observed
    non-finite is a failure all the same (the scenario contract's definition), and the causes'
    shares of it are kept. A soft or unobserved reading of the outcome moves nothing."""
    from causal.verdict import judge

    present = {"lr": 0.6, "relu": 0.55}
    odds = {"lr": 1.0, "relu": 0.0}
    broke = judge(present, odds, {"outcome": {"learned": 0.0, "stalled": 0.0, "nonfinite": 1.0}},
                  None)
    assert broke.failing == 1.0
    assert broke.root["lr"] / broke.root["relu"] == pytest.approx(math.e)
    assert math.fsum(broke.root.values()) == pytest.approx(1.0)
    for unsure in ({"learned": 1 / 3, "stalled": 1 / 3, "nonfinite": 1 / 3},
                   {"learned": 0.1, "stalled": 0.0, "nonfinite": 0.9}):
        assert judge(present, odds, {"outcome": unsure}, None).failing == 0.6


def test_a_sharper_temperature_below_a_confident_mistake_and_the_flat_one_above():
    """With a sharp temperature, the shares are tempered by it, except that the first answer
    passes CONFIDENT_WRONG (0.95) only as far as the flat (confident-answer) temperature takes
    it: an answer the flat temperature leaves under 0.95 is reported at 0.95 at most, one it
    already puts above 0.95 keeps the flat value, and the others share the rest in the flat
    shares' proportions; they are listed as the flat shares would list them."""
    from causal.verdict import CONFIDENT_WRONG, judge, tempered

    present = {"lr": 1.0, "relu": 0.2, "batch": 0.1}
    ended = {"outcome": {"learned": 0.0, "stalled": 0.0, "nonfinite": 1.0}}

    def odds(lead: float) -> dict[str, float]:
        return {"lr": lead, "relu": 0.0, "batch": -1.0}

    # a moderate lead: the sharp temperature's shares, nothing capped
    mid = judge(present, odds(1.0), ended, None, 2.0, 1.0)
    shares = tempered({c: math.exp(v) / sum(math.exp(x) for x in odds(1.0).values())
                       for c, v in odds(1.0).items()}, 1.0)
    assert mid.root["lr"] == pytest.approx(shares["lr"])
    assert mid.root["lr"] > judge(present, odds(1.0), ended, None, 2.0).root["lr"]
    # a lead the sharp shares put past 0.95 but the flat ones do not: 0.95
    strong = judge(present, odds(5.0), ended, None, 2.0, 1.0)
    flat = judge(present, odds(5.0), ended, None, 2.0)
    assert flat.root["lr"] < CONFIDENT_WRONG
    assert strong.root["lr"] == pytest.approx(CONFIDENT_WRONG)
    assert strong.root["relu"] / strong.root["batch"] == pytest.approx(
        flat.root["relu"] / flat.root["batch"])
    assert math.fsum(strong.root.values()) == pytest.approx(strong.failing)
    # the second cause, shrunk under 0.07 to make room for the first, is still listed at 0.07
    assert strong.root["relu"] < 0.07 <= flat.root["relu"]
    assert [c for c, _ in strong.listed(0.07)] == [c for c, _ in flat.listed(0.07)] == [
        "lr", "relu"]
    assert dict(strong.listed(0.07))["relu"] == strong.root["relu"]
    # a lead the flat shares already put past 0.95: theirs
    sure = judge(present, odds(12.0), ended, None, 2.0, 1.0)
    assert sure.root["lr"] == pytest.approx(judge(present, odds(12.0), ended, None, 2.0).root["lr"])
    # no sharp temperature, or one not sharper: the flat shares, as before
    for sharp in (None, 2.0, 3.0):
        assert judge(present, odds(5.0), ended, None, 2.0, sharp) == flat


def test_an_answer_with_a_signal_missing_is_sharpened_only_up_to_a_confident_answer():
    """Missing evidence widens (issue 26, item 3): the sharp temperature takes a first answer
    past CONFIDENT_ANSWER (0.9), up to CONFIDENT_WRONG, only when every signal was read. A
    signal left unobserved (every state alike) keeps it at 0.9, unless it is one that many
    ordinary runs cannot show (`often_unreadable`); a soft reading is no missing signal."""
    from causal.verdict import CONFIDENT_ANSWER, CONFIDENT_WRONG, fully_observed, judge

    present = {"lr": 1.0, "relu": 0.2, "batch": 0.1}
    odds = {"lr": 5.0, "relu": 0.0, "batch": -1.0}
    ended = {"outcome": {"learned": 0.0, "stalled": 0.0, "nonfinite": 1.0}}
    unread = {**ended, "depth": {"flat": 0.5, "growing": 0.5}}
    soft = {**ended, "depth": {"flat": 0.6, "growing": 0.4}}
    assert fully_observed(ended) and fully_observed(soft) and not fully_observed(unread)
    assert fully_observed(unread, {"depth"})
    assert judge(present, odds, ended, None, 2.0, 1.0).root["lr"] == pytest.approx(
        CONFIDENT_WRONG)
    assert judge(present, odds, soft, None, 2.0, 1.0).root["lr"] == pytest.approx(
        CONFIDENT_WRONG)
    assert judge(present, odds, unread, None, 2.0, 1.0).root["lr"] == pytest.approx(
        CONFIDENT_ANSWER)
    assert judge(present, odds, unread, None, 2.0, 1.0, unreadable={"depth"}).root[
        "lr"] == pytest.approx(CONFIDENT_WRONG)
    # the flat temperature alone may still pass 0.9 with a signal missing, as it always could
    sure = {"lr": 12.0, "relu": 0.0, "batch": -1.0}
    assert judge(present, sure, unread, None, 2.0, 1.0).root["lr"] == pytest.approx(
        judge(present, sure, unread, None, 2.0).root["lr"])


def test_the_network_names_the_signals_many_runs_cannot_show():
    from causal.diagnose import builtin_registry
    from causal.network import get_network

    assert get_network(builtin_registry()).often_unreadable == {"loss_vs_trivial", "grad_depth",
                                              "init_depth_trend"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-20, 20), min_size=2, max_size=6), st.floats(0.05, 1.0),
       st.floats(1.0, 3.0), st.floats(0.3, 1.0))
def test_sharpened_shares_are_a_distribution_that_never_makes_a_new_confident_answer(
        logs, failing, flat_t, ratio):
    from causal.network import normalised
    from causal.verdict import CONFIDENT_WRONG, sharpened, tempered

    raw = normalised({f"c{i}": v for i, v in enumerate(logs)})
    flat = tempered(raw, flat_t)
    out = sharpened(raw, flat, flat_t * ratio, failing)
    assert math.fsum(out.values()) == pytest.approx(1.0)
    top = max(out, key=out.__getitem__)
    assert failing * out[top] <= max(CONFIDENT_WRONG, failing * flat[top]) + 1e-9
    assert out[top] >= flat[top] - 1e-9  # sharper never reports the first answer lower
