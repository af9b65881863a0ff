"""Validate the analytic predictor (``streamrag predict``) against the simulator.

1. **paper_rq2 cells** — every (L, δ) of ``sim/grids/paper_rq2.toml`` (θ does not enter a
   saving), the paper_rq3 pipeline on all questions of the grid's input (a generated
   1,371-question table with synthetic per-prefix evidence): predicted mean saved vs the
   simulator's, per cell; the mean absolute error as a share of the mean simulated saving.
2. **Random latencies** — the ``arora2025`` profile (log-normal G, L, F) at each δ:
   the same comparison, and whether the simulated mean falls inside the predicted band.
3. **Break-even** (``--break-even [PATH]``) — the predictor's break-even offered load for
   both profiles of ``sim/load.toml`` (policy ``always``), each wait model's and the
   answer, against the simulated crossings of the median paired difference on both axes
   (nominal load, measured baseline utilization): from a sweep's ``break_even.csv``
   (``streamrag sweep break_even`` writes it) when PATH is given, else the crossings the
   README records (:data:`RECORDED`). ``--skip-cells`` leaves parts 1–2 out.

    PYTHONPATH=. python benchmarks/validate_predict.py [--break-even [runs/break_even/break_even.csv]] [--skip-cells]

Writes ``benchmarks/out/validate_predict.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save

from streamrag.base.config.bundled import grids_dir
from streamrag.base.config.tomlfile import read_toml
from streamrag.simulator.predict.load import predict_break_even
from streamrag.simulator.predict.saving import predict_population
from streamrag.simulator.scenario import load_scenario
from streamrag.simulator.simulate import simulate
from streamrag.sweep.inputs import PreparedInputs, parse_input

PROFILES = {"paper_rq3": "paper-rq3", "arora2025": "arora2025"}
RECORDED_ARG = "recorded"
RECORDED = {
    "paper_rq3": {"nominal": (0.712, 0.700, 0.724), "realized": (0.709, 0.703, 0.716)},
    "arora2025": {"nominal": (0.513, 0.507, 0.519), "realized": (0.513, 0.509, 0.518)},
}
"""README "Break-even with its uncertainty": ``streamrag sweep break_even --out runs/break_even
--jobs 2`` (sim/grids/break_even.toml, 10 replications per load), measured 2026-12-02 —
(mean, 95% CI low, high) of the median paired difference's crossing per axis (nominal offered load;
realized: the baseline tool servers' measured utilization), as break_even.csv names them."""


def compare(questions, overrides: list[str]) -> dict[str, float]:
    rs = load_scenario("paper_rq3", ["select.population=all", *overrides])
    t0 = time.perf_counter()
    pred = predict_population(questions, rs)
    t1 = time.perf_counter()
    sim = float(np.mean([r.saved_ms for r in simulate(questions, rs).rows]))
    t2 = time.perf_counter()
    return {
        "predicted_ms": pred.saved_ms,
        "band_ms": pred.band_ms,
        "simulated_ms": sim,
        "error_ms": pred.saved_ms - sim,
        "inside_band": abs(pred.saved_ms - sim) <= pred.band_ms + 1e-9,
        "predict_s": t1 - t0,
        "simulate_s": t2 - t1,
    }


def summary(cells: list[dict[str, float]]) -> dict[str, float]:
    errors = np.array([abs(c["error_ms"]) for c in cells])
    sims = np.array([abs(c["simulated_ms"]) for c in cells])
    return {
        "n_cells": len(cells),
        "mae_ms": float(errors.mean()),
        "mae_share_of_simulated": float(errors.mean() / sims.mean()),
        "max_cell_share": float((errors / sims).max()),
        "inside_band": int(sum(bool(c["inside_band"]) for c in cells)),
    }


def simulated_crossings(path: Path | None) -> dict[str, dict[str, tuple[float, float, float]]]:
    """{profile: {axis: (mean, ci_low, ci_high)}} of the median paired difference."""
    if path is None:
        return RECORDED
    table = pd.read_csv(path)
    rows = table[table["crossing"] == "median_saved"]
    if "policy" in rows.columns:
        rows = rows[rows["policy"] == "always"]
    found: dict[str, dict[str, tuple[float, float, float]]] = {}
    for _, r in rows.iterrows():
        found.setdefault(str(r["profile"]), {})[str(r["axis"])] = (r["mean"], r["ci_low"], r["ci_high"])
    return found


def break_even_section(questions, simulated) -> dict[str, object]:
    load: dict[str, object] = {}
    for name, profile in PROFILES.items():
        rs = load_scenario("load", [f"latency.profile={profile}"])
        t0 = time.perf_counter()
        pred = predict_break_even(questions, rs)
        entry: dict[str, object] = {"predicted": pred.break_even, "low": pred.low, "high": pred.high,
                                    "by_waits": pred.by_waits, "predict_s": time.perf_counter() - t0}  # fmt: skip
        for axis, (mean, lo, hi) in simulated.get(name, {}).items():
            error = None if pred.break_even is None else pred.break_even - mean
            entry[axis] = {"simulated": mean, "ci": [lo, hi], "error": error}
            waits = ", ".join(f"{k} {v:.3f}" if v is not None else f"{k} none" for k, v in pred.by_waits.items())
            shown = "none" if error is None else f"{pred.break_even:.3f} ({error:+.3f})"
            print(f"break-even {name} ({axis}): predicted {shown} [{waits}]; simulated {mean:.3f} [{lo:.3f}, {hi:.3f}]")
        load[name] = entry
    return load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--break-even", nargs="?", const=RECORDED_ARG, metavar="PATH",
                        help="compare the break-even with a sweep's break_even.csv (default: the README's recorded crossings)")  # fmt: skip
    parser.add_argument("--skip-cells", action="store_true", help="only the break-even (no paper_rq2 / arora2025 cells)")
    args = parser.parse_args()
    grid = read_toml(grids_dir() / "paper_rq2.toml")
    questions = PreparedInputs(parse_input(grid["input"], base_dir=Path.cwd())).questions().questions
    result: dict[str, object] = {"input": grid["input"], "n_questions": len(questions)}

    if not args.skip_cells:
        cells = []
        for L in grid["axes"]["L_ms"]:
            for delta in grid["axes"]["delta_wps"]:
                cell = {"L_ms": L, "delta_wps": delta, **compare(questions, [f"latency.L_ms={L}", f"input.delta_wps={delta}"])}
                cells.append(cell)
                print(f"paper_rq2 L={L:>4} δ={delta}: predicted {cell['predicted_ms']:8.1f} ± {cell['band_ms']:.1f}  "
                      f"simulated {cell['simulated_ms']:8.1f}  error {cell['error_ms']:+.2f} ms")  # fmt: skip
        result["paper_rq2"] = {"cells": cells, **summary(cells)}

        random_cells = []
        for delta in grid["axes"]["delta_wps"]:
            cell = {"delta_wps": delta, **compare(questions, ["latency.profile=arora2025", f"input.delta_wps={delta}"])}
            random_cells.append(cell)
            print(f"arora2025 δ={delta}: predicted {cell['predicted_ms']:8.1f} ± {cell['band_ms']:.1f}  "
                  f"simulated {cell['simulated_ms']:8.1f}  error {cell['error_ms']:+.1f} ms")  # fmt: skip
        result["arora2025"] = {"cells": random_cells, **summary(random_cells)}

    if args.break_even is not None:
        path = None if args.break_even == RECORDED_ARG else Path(args.break_even)
        result["break_even"] = break_even_section(questions, simulated_crossings(path))
    if not args.skip_cells:
        print(f"paper_rq2: MAE {result['paper_rq2']['mae_ms']:.3f} ms = {100 * result['paper_rq2']['mae_share_of_simulated']:.3f}% "
              f"of the simulated saving; arora2025: {100 * result['arora2025']['mae_share_of_simulated']:.2f}%")  # fmt: skip
    print(f"wrote {save('validate_predict', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
