"""Analytic vs replayed saving of a learned trigger (the README's table).

python scripts/compare_learned.py RUN_DIR ANALYSIS_DIR MODEL.json --tau T [--L-ms 600 --delta-wps 3]

RUN_DIR: a ``streamrag simulate`` output run with ``trigger.kind = "learned"`` (its
results.csv); ANALYSIS_DIR: the ``analyze`` folder of the same questions (its
prefixes.parquet gives the per-prefix features the trigger read). Prints the comparison
as JSON (:func:`streamrag.learn.replay.compare`).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from streamrag.analysis.evidence import read_evidence
    from streamrag.analysis.features import prefix_features
    from streamrag.learn.paper import AnalyticParams
    from streamrag.learn.replay import analytic_fires, compare
    from streamrag.pipeline.learned import feature_matrix, load_model, predict_proba

    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("analysis", type=Path)
    p.add_argument("model", type=Path)
    p.add_argument("--tau", type=float, required=True)
    p.add_argument("--L-ms", dest="L_ms", type=float, default=600.0)
    p.add_argument("--delta-wps", dest="delta_wps", type=float, default=3.0)
    args = p.parse_args(argv)
    with open(args.run / "results.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["skip_reason"] == ""]
    evidence = read_evidence(args.analysis / "prefixes.parquet")
    model = load_model(args.model)
    wanted = {r["interaction_id"] for r in rows}
    features = {qid: prefix_features(ev) for qid, ev in evidence.items() if qid in wanted}
    probs = {qid: predict_proba(model, feature_matrix(model.columns, f)) for qid, f in features.items()}
    fires = analytic_fires(features, probs, args.tau)
    out = compare(rows, fires, AnalyticParams(args.L_ms, args.delta_wps, args.L_ms))
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
