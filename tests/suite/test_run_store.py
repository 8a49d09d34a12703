"""Kept runs (`neuraldbg.suite.run_store`): a run is trained once, read back while its key
matches, and trained again when the scenario file changes; bench from a store gives the rows a
fresh bench gives."""

from __future__ import annotations

import json

import pytest
from helpers import write_suite

from neuraldbg.errors import ConfigError
from neuraldbg.suite import run_store
from neuraldbg.suite.bench import run_bench
from neuraldbg.suite.scenario import load_scenario


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    return write_suite(folder, {"outlier_a": ("data_outlier", True, ""),
                                "calm_a": ("healthy", False, "")})


def _load(path, seed, store, tmp):
    scenario = load_scenario(path)
    return run_store.train_or_load(lambda: scenario.build(seed), path, seed, "readme", store,
                                   str(tmp))


def test_a_kept_run_is_read_back_and_retrained_when_its_file_changes(suite, tmp_path,
                                                                      monkeypatch):
    store = tmp_path / "runs"
    store.mkdir()
    path = suite / "outlier_a.py"
    losses, run = _load(path, 0, store, tmp_path)
    assert run is not None and (store / "outlier_a-0-readme.ndbg").is_file()
    side = json.loads((store / "outlier_a-0-readme.json").read_text())
    assert side["key"] == run_store.run_key(path, 0, "readme")

    import neuraldbg.suite.scenario as scenario_module

    def no_training(*args, **kwargs):
        raise AssertionError("trained although the kept run matches")

    monkeypatch.setattr(scenario_module, "train", no_training)
    again_losses, again = _load(path, 0, store, tmp_path)
    assert again_losses[:5] == losses[:5] and len(again.events) == len(run.events)

    path.write_text(path.read_text() + "\n# edited\n")  # another key: trained again
    with pytest.raises(AssertionError, match="trained although"):
        _load(path, 0, store, tmp_path)


def test_a_store_that_is_not_a_folder_is_a_clear_error(suite, tmp_path):
    with pytest.raises(ConfigError, match="not a directory"):
        _load(suite / "calm_a.py", 0, tmp_path / "missing", tmp_path)


@pytest.mark.slow
def test_bench_from_kept_runs_gives_the_rows_of_a_fresh_bench(suite, tmp_path):
    store = tmp_path / "runs"
    store.mkdir()
    fresh = run_bench(suite, [0], progress=False)
    first = run_bench(suite, [0], progress=False, store=store)
    kept = run_bench(suite, [0], progress=False, store=store)

    def rows(result):
        return [(r["scenario"], r["hypotheses"], r["evidence"], r["failure"])
                for r in result["runs"]]

    assert rows(fresh) == rows(first) == rows(kept)
