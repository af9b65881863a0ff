"""``streamrag train-trigger TRAIN.csv TEST.csv --out DIR``: fit the learned trigger.

Reads two feature tables (``analyze --features``, or the anchor's published
``trigger_features.split{0,1}.csv``), fits logistic regression and GBDT on TRAIN, and
writes ``summary.json`` (the ``paper`` evaluation: the anchor's ``trigger.summary.json``;
``cv``: τ by cross-validation on TRAIN, one evaluation on TEST), ``frontier.csv`` and the
models ``logreg.json`` and ``gbdt.json`` that ``trigger.kind = "learned"`` runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamrag.learn.paper import AnalyticParams


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train-trigger",
        help="fit the learned trigger (logistic regression, GBDT) on a feature table; evaluate on another",
        description="Fit the anchor study's learned trigger on TRAIN's per-word features, choose tau (the anchor's "
        "fixed tau, and ours by cross-validation on TRAIN), evaluate once on TEST with the analytic saving, and save "
        "the models as JSON (needs pip install 'streamrag[learn]').",
    )
    p.add_argument(
        "train", metavar="TRAIN", help="feature table to fit on (CSV), or table:T.csv (a stabilization table with its evidence)"
    )
    p.add_argument("test", metavar="TEST", help="feature table to evaluate on (as TRAIN)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    p.add_argument(
        "--features",
        default="anchor",
        metavar="SET",
        help="anchor (default: the anchor's features), all (also top1_margin, top1_coverage_prefix), or feature groups "
        "joined by commas: retrieval_stability, entity, position, question_word, retrieval_score (both evaluations "
        "then use them)",
    )
    p.add_argument("--tau", type=float, default=0.5, help="the paper evaluation's fixed tau (default 0.5)")
    p.add_argument("--L-ms", dest="L_ms", type=float, default=600.0, help="tool latency L, ms (default 600)")
    p.add_argument("--delta-wps", dest="delta_wps", type=float, default=3.0, help="cadence, words/s (default 3)")
    p.add_argument("--c-waste-ms", dest="c_waste_ms", type=float, default=None, help="cost of a premature fire (default L)")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds for tau (default 5)")
    p.set_defaults(run=run)


def _command(args: argparse.Namespace) -> str:
    """The command that trained a model, as its provenance records it (the output folder
    left out: where a model is written does not change it)."""
    parts = ["streamrag", "train-trigger", args.train, args.test, "--features", args.features, "--tau", f"{args.tau:g}",
             "--L-ms", f"{args.L_ms:g}", "--delta-wps", f"{args.delta_wps:g}", "--folds", str(args.folds)]  # fmt: skip
    if args.c_waste_ms is not None:
        parts += ["--c-waste-ms", f"{args.c_waste_ms:g}"]
    return " ".join(parts)


def _analytic_params(args: argparse.Namespace) -> AnalyticParams:
    """The options' numbers, each checked (ConfigError naming the option): τ in [0, 1], at
    least 2 folds, L and C_waste finite ms ≥ 0, δ finite words/s > 0 (the saving divides
    by it)."""
    import math

    from streamrag.base.errors import ConfigError
    from streamrag.commands._common import check_latency_ms
    from streamrag.learn.paper import AnalyticParams

    if not 0.0 <= args.tau <= 1.0:
        raise ConfigError(f"--tau: must be in [0, 1], got {args.tau}")
    if args.folds < 2:
        raise ConfigError(f"--folds: must be ≥ 2, got {args.folds}")
    if not (math.isfinite(args.delta_wps) and args.delta_wps > 0):
        raise ConfigError(f"--delta-wps: must be a finite number of words/s > 0, got {args.delta_wps}")
    L_ms = check_latency_ms(args.L_ms, "--L-ms")
    c_waste_ms = L_ms if args.c_waste_ms is None else check_latency_ms(args.c_waste_ms, "--c-waste-ms")
    return AnalyticParams(L_ms, args.delta_wps, c_waste_ms)


def run(args: argparse.Namespace) -> int:
    import csv
    import io

    from streamrag.analysis.stats.report import write_summary
    from streamrag.base.atomic import write_text_atomic
    from streamrag.base.errors import ConfigError
    from streamrag.learn.plausible import read_training_table
    from streamrag.learn.train import TRIGGER_FRONTIER, cv_summary, paper_summary, parse_feature_set, sklearn_unavailable_reason
    from streamrag.pipeline.learned import save_model

    a = _analytic_params(args)
    reason = sklearn_unavailable_reason()
    if reason is not None:
        raise ConfigError(reason)
    parse_feature_set(args.features)
    train, test = read_training_table(args.train), read_training_table(args.test)
    paper, _ = paper_summary(train, test, tau=args.tau, a=a, feature_set=args.features)
    ours, models = cv_summary(
        train,
        test,
        feature_set=args.features,
        a=a,
        n_folds=args.folds,
        provenance={"command": _command(args), "test_table": str(args.test), "test_sha256": test.sha256},
    )
    args.out.mkdir(parents=True, exist_ok=True)
    write_summary({"paper": paper, "cv": ours}, args.out / "summary.json")
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(TRIGGER_FRONTIER.columns), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for name, points in paper["frontier"].items():
        w.writerows({"evaluation": "paper", "model": name, **pt} for pt in points)
    for name, res in ours["models"].items():
        w.writerows({"evaluation": "cv", "model": name, **pt} for pt in res["frontier"])
    write_text_atomic(args.out / "frontier.csv", buf.getvalue())
    for name, model in models.items():
        save_model(model, args.out / f"{name}.json")
    for name in ("logreg", "gbdt"):
        op, cv = paper["operating_point"][name], ours["models"][name]
        print(
            f"{name}: paper tau {op['tau']}: saving {op['mean_saving_ms']:.1f} ms, misfire {op['misfire_rate']:.3f}; "
            f"cv tau {cv['tau_cv']['tau']}: saving {cv['operating_point']['mean_saving_ms']:.1f} ms, "
            f"misfire {cv['operating_point']['misfire_rate']:.3f}"
        )
    print(f"wrote {args.out}/ (summary.json, frontier.csv, logreg.json, gbdt.json)")
    return 0
