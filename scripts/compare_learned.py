"""Analytic vs replayed saving of a learned trigger (the README's tables).

python scripts/compare_learned.py RUN_DIR TABLE MODEL --tau T [--L-ms 600 --delta-wps 3]

RUN_DIR: a run with ``trigger.kind = "learned"`` (a ``streamrag simulate`` output, or a
sweep point's folder ``points/KEY``: its results.csv); TABLE: the stabilization table of
the same questions with its per-prefix evidence beside it (an ``analyze`` folder's
stabilization.csv and prefixes.parquet — the folder itself will do — or ``generate
--table``'s T.csv and T.prefixes.parquet), which gives the features the trigger read and
which questions are retrieved-gold (t_suf defined: the analytic rule's population);
MODEL: the model file or a shipped model's name. Prints the comparison as JSON
(:func:`streamrag.learn.analytic_vs_replay.compare`).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from streamrag.analysis.evidence.prefixes import find_evidence
    from streamrag.analysis.evidence.read import read_evidence
    from streamrag.analysis.features.compute import prefix_features
    from streamrag.analysis.table import read_table_records
    from streamrag.learn.analytic_vs_replay import analytic_fires, compare
    from streamrag.learn.paper import AnalyticParams
    from streamrag.pipeline.learned import feature_matrix, load_model, predict_proba

    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("table", type=Path)
    p.add_argument("model")
    p.add_argument("--tau", type=float, required=True)
    p.add_argument("--L-ms", dest="L_ms", type=float, default=600.0)
    p.add_argument("--delta-wps", dest="delta_wps", type=float, default=3.0)
    args = p.parse_args(argv)
    table = args.table / "stabilization.csv" if args.table.is_dir() else args.table
    records, _ = read_table_records(table)
    gold = {str(r["interaction_id"]) for r in records if r["t_suf"] is not None}
    with open(args.run / "results.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["skip_reason"] == "" and r["interaction_id"] in gold]
    found = find_evidence(table)
    if found is None:
        raise SystemExit(f"{table}: no per-prefix evidence beside it")
    evidence = read_evidence(found)
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
