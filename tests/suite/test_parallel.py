"""Scenario runs in worker processes: results in task order whatever the workers, a crash or a
hang reported as a failed task instead of stalling the batch."""

from __future__ import annotations

import time

from helpers import dying_task, failing_task, hanging_task, square_task, write_suite

from neuraldbg.suite.bench import run_bench
from neuraldbg.suite.parallel import TaskFailed, run_tasks


def test_results_come_back_in_task_order_with_any_number_of_workers():
    tasks = [(i,) for i in range(7)]
    here = run_tasks(square_task, tasks, workers=None)
    assert here == [i * i for i in range(7)]
    assert run_tasks(square_task, tasks, workers=2) == here


def test_a_task_that_raises_is_a_failed_task_and_the_others_go_on():
    out = run_tasks(failing_task, [(i,) for i in range(4)], workers=2)
    assert out[:2] == [0, 1] and out[3] == 3
    assert isinstance(out[2], TaskFailed) and "bad input 2" in out[2].message
    here = run_tasks(failing_task, [(i,) for i in range(4)], workers=None)
    assert isinstance(here[2], TaskFailed) and here[3] == 3


def test_a_task_that_hangs_times_out_and_its_worker_is_replaced():
    t0 = time.monotonic()
    out = run_tasks(hanging_task, [(i,) for i in range(4)], workers=2, timeout=3.0)
    assert time.monotonic() - t0 < 45
    assert isinstance(out[1], TaskFailed) and "timed out" in out[1].message
    assert [out[i] for i in (0, 2, 3)] == [0, 2, 3]


def test_a_worker_that_dies_fails_its_task_only():
    out = run_tasks(dying_task, [(i,) for i in range(3)], workers=1)
    assert isinstance(out[0], TaskFailed) and "died" in out[0].message
    assert out[1:] == [1, 2]


def test_the_bench_gives_the_same_rows_in_workers_and_in_this_process(tmp_path):
    suite = write_suite(tmp_path, {"healthy_a": ("healthy", False, ""),
                                   "data_outlier_b": ("data_outlier", True, "")})
    here = run_bench(suite, [0, 1], progress=False)
    there = run_bench(suite, [0, 1], progress=False, workers=2)

    def strip(rows):
        return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]

    assert strip(here["runs"]) == strip(there["runs"])
    assert here["meta"]["instrument"] == "readme"


def test_the_readme_loop_finds_the_targets_the_full_loop_passes(tmp_path):
    from neuraldbg.suite.scenario import load_scenario, train

    suite = write_suite(tmp_path, {"healthy_a": ("healthy", False, "")})
    scenario = load_scenario(suite / "healthy_a.py")
    _, readme = train(scenario.build(0), tmp_path / "readme.ndbg")
    _, full = train(scenario.build(0), tmp_path / "full.ndbg", instrument="full")
    assert readme is not None and full is not None
    assert len(full.series.get("target_max_abs")) == len(full.series.get("loss")) > 0
    assert readme.series.get("target_max_abs") == full.series.get("target_max_abs")
