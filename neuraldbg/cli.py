"""The `neuraldbg` console script."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from causal.schema.run import Run
from neuraldbg.errors import NeuralDbgError, RunFileError


def _demo(args: argparse.Namespace) -> int:
    from causal.report import format_run
    from neuraldbg.suite.demo import run_demo

    print("neuraldbg demo: an 8-layer tanh MLP trained with plain SGD (lr 0.03), watched by "
          "NeuralDbg until its loss turns non-finite\n", flush=True)
    run = run_demo(path=args.path)
    print(format_run(run))
    print("\nDiagnosis (ranked root causes)")
    _print_diagnosis(run)
    print(f"\nRun file: {run.path}\n  diagnose it again with `neuraldbg diagnose {run.path}`, "
          f"or read it with `neuraldbg show {run.path}` / neuraldbg.load_run(path)")
    from causal.html_report import MissingDependencyError, write_report

    try:
        print(f"Report: {write_report(run)} (one HTML file: open it in a browser)")
    except MissingDependencyError as e:
        print(f"No HTML report: {e}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from causal.html_report import write_report
    from causal.schema.run_file import load_run

    path = write_report(load_run(args.run), args.out)
    print(f"report written to {path} ({path.stat().st_size / 1e3:.0f} kB): open it in a browser")
    return 0


def _import_spec(spec: str, what: str) -> object:
    """`module:attribute`, imported from the working directory too (as plugins are)."""
    from neuraldbg.errors import ConfigError
    from neuraldbg.plugins import import_from_cwd

    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ConfigError(f"--{what} {spec!r}: pass module:attribute, e.g. train:make_model")
    try:
        return getattr(import_from_cwd(module), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"--{what} {spec!r}: {e}") from e


def _confirm(args: argparse.Namespace) -> int:
    from neuraldbg.replay import replay, write_confirmation
    from neuraldbg.scene import scene_path

    scene = scene_path(args.run)
    if not scene.is_file():
        raise RunFileError(f"no scene beside {args.run!r} ({scene.name}): the monitor saves one "
                           "at a run's first non-finite step (NeuralDbg(scene_max_mb=...) > 0)")
    found = replay(scene, _import_spec(args.model, "model"),  # type: ignore[arg-type]
                   _import_spec(args.loss, "loss"))  # type: ignore[arg-type]
    for f in found:
        mark = "removes the failure" if f.removes_failure else "does not remove it"
        tail = f" -> confirms {f.confirms}" if f.confirms else ""
        print(f"{f.name}: {f.detail}{tail}" if f.detail.startswith("not tried")
              else f"{f.name}: {mark}; {f.detail}{tail}")
    print(f"written to {write_confirmation(args.run, found)} (neuraldbg diagnose reports it)")
    return 0


def _load_plugins(modules: Sequence[str] | None) -> None:
    """Import each `--plugin` module (it registers its causes and symptoms on import), from the
    working directory too."""
    from neuraldbg.errors import ConfigError
    from neuraldbg.plugins import import_plugins

    for name in modules or ():
        try:
            import_plugins([name])
        except ImportError as e:
            raise ConfigError(f"--plugin {name}: cannot import it ({e}); pass an importable "
                              "module that calls register_cause / register_symptom") from e


def _print_diagnosis(run: Run, as_json: bool = False, params: str | None = None) -> None:
    import dataclasses
    import json

    from causal.diagnose import MIN_CONFIDENCE, diagnose, recording_stopped
    from causal.run_queries import first_origin

    every = diagnose(run, min_confidence=0.0, parameters="shipped" if params is None else params)
    shown = dataclasses.replace(every, hypotheses=tuple(
        h for h in every if h.confidence >= MIN_CONFIDENCE))
    if as_json:
        print(json.dumps({"run": getattr(run, "path", None), "healthy": shown.healthy,
                          "failing": shown.failing,
                          "recording_stopped": recording_stopped(run),
                          "hypotheses": [h.to_dict() for h in shown]}, indent=2))
        return
    if shown.healthy and first_origin(run) is not None:
        shown = every  # an unexplained failure: its weaker candidates, however weak
    print(shown.format())


def _diagnose(args: argparse.Namespace) -> int:
    from pathlib import Path

    from causal.schema.run_file import load_run

    _load_plugins(args.plugin)
    paths = [Path(p) for p in args.run]
    if len(paths) == 1 and paths[0].is_dir():
        paths = sorted(paths[0].glob("*.ndbg"))
        if not paths:
            raise RunFileError(f"no .ndbg run file in {args.run[0]!r}: pass a directory of "
                               "per-rank run files, or the files")
    if len(paths) == 1:
        _print_diagnosis(load_run(paths[0]), args.json, args.params)
        return 0
    return _diagnose_ranks([load_run(p) for p in paths], args)


def _diagnose_ranks(runs: list[Run], args: argparse.Namespace) -> int:
    """The per-rank files of one distributed run: the first rank to fail, then its diagnosis."""
    import json

    from causal.ranks import format_ranks, merge_ranks

    ranks = merge_ranks(runs)
    first = ranks.first
    root = ranks.runs[first.rank] if first is not None else next(iter(ranks.runs.values()))
    if args.json:
        from causal.diagnose import diagnose

        print(json.dumps({
            "ranks": {str(r): run.path for r, run in ranks.runs.items()},
            "world_size": ranks.world_size,
            "first_rank": None if first is None else first.rank,
            "failures": [{"rank": f.rank, "step": f.step, "layer": f.origin.layer_name}
                         for f in ranks.failures],
            "diagnosis": diagnose(root, parameters="shipped" if args.params is None
                                  else args.params).to_dict()}, indent=2))
        return 0
    print(format_ranks(ranks))
    _print_diagnosis(root, False, args.params)
    return 0


def _show(args: argparse.Namespace) -> int:
    from causal.report import format_run
    from causal.schema.run_file import load_run

    run = load_run(args.run)
    print(run.to_json(indent=2) if args.json else format_run(run, max_events=args.max_events))
    return 0


def _bench(args: argparse.Namespace) -> int:
    import json

    import torch

    from neuraldbg.suite.bench import format_table, format_targets, plot_reliability, run_bench
    from neuraldbg.suite.verify import parse_seeds

    torch.set_num_threads(args.threads)
    _load_plugins(args.plugin)
    result = run_bench(args.suite, parse_seeds(args.seeds), progress=not args.no_progress,
                       parameters=None if args.handset else args.params or "shipped",
                       instrument=args.instrument, workers=_workers(args.workers),
                       timeout=args.timeout, plugins=args.plugin or (), threads=args.threads,
                       store=_run_store(args.runs))
    print(format_table(result))
    if targets := format_targets(result):
        print(f"\n{targets}")
    loop = "record_loss(loss, target=y)" if args.instrument == "full" else "record_loss(loss)"
    print(f"\nparameters: {result['meta']['parameters']}; loop: {args.instrument} ({loop})")
    errors = [r for r in result["runs"] if r.get("error")]
    for r in errors:
        print(f"error: {r['scenario']} seed {r['seed']}: {r['error']}", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
        print(f"\nresult written to {args.json}")
    if args.plot:
        plot_reliability(result, args.plot)
        print(f"reliability diagram written to {args.plot}")
    return 0


def _suite_verify(args: argparse.Namespace) -> int:
    import torch

    from neuraldbg.suite.verify import format_verify, parse_seeds, verify

    torch.set_num_threads(args.threads)
    rows = verify(args.dir, parse_seeds(args.seeds), workers=_workers(args.workers),
                  timeout=args.timeout, progress=not args.no_progress)
    print(format_verify(rows))
    return 0 if all(r.valid for r in rows) else 1


def _workers(n: int | None) -> int:
    from neuraldbg.errors import ConfigError
    from neuraldbg.suite.parallel import default_workers

    if n is None:
        return default_workers()
    if n < 1:
        raise ConfigError(f"--workers {n}: pass 1 or more worker processes")
    return n


def _add_run_options(p: argparse.ArgumentParser, instrument: bool = True) -> None:
    """The options of every command that trains scenarios: workers, timeout, the loop."""
    from neuraldbg.suite.parallel import DEFAULT_TIMEOUT

    p.add_argument("--workers", type=int, default=None, metavar="N", help="worker processes "
                   "(default: the machine's cores); results are the same for any N")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds one scenario x seed may run (default {DEFAULT_TIMEOUT:g}); "
                   "past it the run is reported as an error")
    if instrument:
        p.add_argument("--instrument", choices=("readme", "full"), default="readme",
                       help="the monitor's loop: readme, the README's three lines "
                       "(record_loss(loss)), as users run it (default); full, the targets "
                       "too (record_loss(loss, target=y)), for comparison")
        p.add_argument("--runs", default=None, metavar="DIR",
                       help="keep the recorded runs in DIR (created if missing) and reuse them "
                       "while the scenario file, the seed, the loop and neuraldbg's capture "
                       "code are unchanged: re-scoring a change to the diagnosis skips "
                       "training")


def _run_store(text: str | None) -> str | None:
    """The --runs folder, created when missing."""
    if text is None:
        return None
    from neuraldbg.errors import ConfigError

    try:
        os.makedirs(text, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--runs {text!r}: cannot create that folder ({e.strerror}); pass a "
                          "writable one") from None
    return text


def _ess(text: str) -> float | str:
    from neuraldbg.errors import ConfigError

    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--ess {text!r}: pass a positive number or 'auto'") from None


def _fit(args: argparse.Namespace) -> int:
    import torch

    from causal.calibration.fit import SHIPPED_PATH
    from neuraldbg.suite.fit_driver import format_comparison, print_errors, run_fit
    from neuraldbg.suite.verify import parse_seeds

    torch.set_num_threads(args.threads)
    _load_plugins(args.plugin)
    out = SHIPPED_PATH if args.out is None else args.out
    report = run_fit(args.suite, parse_seeds(args.seeds), out,
                     held_out_fraction=args.held_out_fraction, split_seed=args.split_seed,
                     ess=_ess(args.ess), calibration=args.calibration, cache=args.cache,
                     progress=not args.no_progress, log=print, held_out=args.held_out,
                     instrument=args.instrument, workers=_workers(args.workers),
                     timeout=args.timeout, plugins=args.plugin or (), threads=args.threads,
                     store=_run_store(args.runs))
    print_errors(report.errors)
    cal = report.fitted.calibration
    print(f"fitted on {sum(report.fitted.runs.values())} runs (ess {report.fitted.ess:g}); "
          f"calibration {cal.method} a={cal.a:.4g} b={cal.b:.4g}, root-share temperature "
          f"{cal.share_temperature:g}")
    print(f"parameters written to {out}\n")
    if report.comparison and report.scored_on == "leave-one-family-out":
        print(f"every family ({len(report.training)}), seeds {args.seeds}, scored by the "
              "tables fitted without it (leave-one-family-out):")
        print(format_comparison(report.comparison))
    elif report.comparison:
        print(f"held-out families ({len(report.held_out)}), seeds {args.seeds}:")
        print(format_comparison(report.comparison))
    else:
        print("no held-out runs to score: a label needs two families or more to have one held "
              "out (or no held-out run succeeded)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="neuraldbg", description="What broke in a PyTorch training run, where, and why."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("report", help="write a run's report as one self-contained HTML file")
    p.add_argument("run", help="path to a .ndbg run file")
    p.add_argument("-o", "--out", default=None, metavar="PATH",
                   help="where to write it (default: the run file's path with .html)")
    p.set_defaults(func=_report)
    p = sub.add_parser("confirm", help="re-run a run's failing step from its scene and test "
                       "the causes by intervention")
    p.add_argument("run", help="a run file (.ndbg) with its scene beside it (.scene.pt)")
    p.add_argument("--model", required=True, metavar="MODULE:FACTORY",
                   help="a function returning the model (or the model object itself)")
    p.add_argument("--loss", required=True, metavar="MODULE:FN", help="loss_fn(output, target)")
    p.set_defaults(func=_confirm)
    p = sub.add_parser("demo", help="train the bundled failing run under the monitor")
    p.add_argument("--path", default=None, help="where to write the run file")
    p.set_defaults(func=_demo)
    p = sub.add_parser("diagnose", help="ranked root causes of a recorded run")
    p.add_argument("run", nargs="+", help="a run file (.ndbg); or the per-rank files of one "
                   "distributed run, or their directory: which rank failed first, and why")
    p.add_argument("--json", action="store_true", help="the hypotheses as JSON")
    p.add_argument("--params", default=None, metavar="PATH", help="fitted parameters written "
                   "by `neuraldbg fit --out` (default: the ones shipped with the package)")
    p.add_argument("--plugin", action="append", metavar="MODULE", help="import MODULE first "
                   "(it registers your causes); repeatable")
    p.set_defaults(func=_diagnose)
    p = sub.add_parser("show", help="print a recorded run: first non-finite value, transitions")
    p.add_argument("run", help="a run file (.ndbg)")
    p.add_argument("--json", action="store_true", help="the whole run as JSON")
    p.add_argument("--max-events", type=int, default=25)
    p.set_defaults(func=_show)
    p = sub.add_parser("bench", help="accuracy and calibration of diagnose on a scenario suite")
    p.add_argument("--suite", default=None, help="directory of scenario files (default: the "
                   "bundled validation families, datasets/validation/)")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    p.add_argument("--json", default=None, metavar="OUT", help="write the full result as JSON")
    p.add_argument("--plot", default=None, metavar="OUT.png",
                   help="draw the reliability diagram (needs matplotlib)")
    p.add_argument("--handset", action="store_true", help="use the hand-set tables, not the "
                   "fitted parameters that ship with the package")
    p.add_argument("--params", default=None, metavar="PATH", help="fitted parameters written "
                   "by `neuraldbg fit --out` (default: the ones shipped with the package)")
    p.add_argument("--plugin", action="append", metavar="MODULE", help="import MODULE first "
                   "(it registers your causes); repeatable")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    _add_run_options(p)
    p.set_defaults(func=_bench)
    p = sub.add_parser("suite", help="work with a scenario suite")
    suite_sub = p.add_subparsers(dest="suite_command", required=True)
    p = suite_sub.add_parser("verify", help="check every label by intervention (exit 1 if any "
                             "is invalid)")
    p.add_argument("dir", nargs="?", default=None, help="directory of scenario files (default: "
                   "the whole bundled datasets/: train, validation, probe, scored and blind)")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    _add_run_options(p, instrument=False)
    p.set_defaults(func=_suite_verify)
    p = sub.add_parser("fit", help="fit the network's parameters and calibration on a suite's "
                       "training families; compare on the held-out ones")
    p.add_argument("--suite", default=None, help="directory of training scenario files "
                   "(default: every bundled split but the blind one: datasets/train, "
                   "validation, probe and scored, each family scored leave-one-family-out)")
    p.add_argument("--held-out", default=None, metavar="DIR", help="directory of held-out "
                   "scenario files to score (default: none with the bundled suite; with "
                   "--suite alone, a family split of it)")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    p.add_argument("--out", default=None, metavar="PATH", help="where to write the fitted "
                   "parameters (default: causal/calibration/fitted.json in the package); the "
                   "observations they were fitted on go next to it (X.observations.json)")
    p.add_argument("--held-out-fraction", type=float, default=0.34,
                   help="with --suite and no --held-out: share of each label's families held out "
                   "for scoring (default 0.34; 0 fits every family and scores each "
                   "leave-one-family-out)")
    p.add_argument("--split-seed", type=int, default=0, help="seed of the family split")
    p.add_argument("--ess", default="auto", help="equivalent sample size of the hand-set "
                   "tables, in runs, or 'auto' (default): chosen by leave-one-family-out "
                   "cross-validation on the training families")
    p.add_argument("--calibration", choices=("temperature", "platt", "none"),
                   default="temperature", help="map fitted on the posteriors (default "
                   "temperature: sharpness only, the report threshold stays where the network "
                   "puts it; platt also moves the threshold)")
    p.add_argument("--plugin", action="append", metavar="MODULE", help="import MODULE first "
                   "(it registers your causes, which are then fitted too); repeatable")
    p.add_argument("--cache", default=None, metavar="PATH", help="JSON cache of observations, "
                   "so that re-fitting does not retrain unchanged scenarios")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    _add_run_options(p)
    p.set_defaults(func=_fit)
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe fails here, inside the handler below
        return code
    except NeuralDbgError as e:
        print(f"neuraldbg: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `neuraldbg show RUN | head`: the reader has what it wanted
        _quiet_stdout()
        return 141


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush into the closed pipe does
    not print a second error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
