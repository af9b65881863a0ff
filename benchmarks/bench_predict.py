"""Benchmark: ``streamrag predict`` end to end on 1,371 generated questions, from a shell.

What a user runs (README, ``predict``): ``streamrag generate gen.csv --table --questions 1371
--seed 0`` once, then ``streamrag predict --table gen.csv --scenario S [--set ...] --out
pred.json`` for the scenarios below — ``paper_rq3`` (the retrieved-gold questions, no
load) and ``load`` with both latency profiles (all 1,371 questions, both break-evens).
Measured per command: CPU seconds of the child (user + sys, best of ``--repeat`` runs)
and its wall seconds, beside the floor every command pays, ``python -c "import numpy,
pandas, pyarrow"``, run interleaved with the commands in every repeat; and the printed answer. Issue 44's goal: ≤ 2 s of CPU per command.
For each load case also the load model's own floor (``benchmarks/_predict_floor.py``: start,
import, read the table, replay every question's nominal timeline at the model's grid of
waits), interleaved too: what no run of this design can go below.

Usage: ``python benchmarks/bench_predict.py [--repeat 3]``
Writes ``benchmarks/out/bench_predict.json``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_average, run_child, save

STREAMRAG = Path(sys.executable).with_name("streamrag")
FLOOR = Path(__file__).resolve().parent / "_predict_floor.py"
CASES = {
    "paper_rq3": ["--scenario", "paper_rq3"],
    "load": ["--scenario", "load"],
    "load_arora2025": ["--scenario", "load", "--set", "latency.profile=arora2025"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per command (the best is kept)")
    ap.add_argument("--questions", type=int, default=1371)
    args = ap.parse_args()
    result: dict[str, object] = {"questions": args.questions, "repeat": args.repeat, "load_average_at_start": load_average()}
    floor_cmd = [sys.executable, "-c", "import numpy, pandas, pyarrow"]
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "gen.csv"
        subprocess.run(
            [str(STREAMRAG), "generate", str(table), "--table", "--questions", str(args.questions), "--seed", "0"],
            check=True,
            capture_output=True,
        )
        cmds = {"floor": floor_cmd}
        for name, extra in CASES.items():
            cmds[name] = [str(STREAMRAG), "predict", "--table", str(table), *extra, "--out", str(Path(tmp) / f"{name}.json")]
            if name.startswith("load"):
                cmds[f"{name}_design_floor"] = [sys.executable, str(FLOOR), str(table), *extra[2:]]
        measured: dict[str, list[tuple[float, float, str]]] = {name: [] for name in cmds}
        for _ in range(args.repeat):  # the arms interleaved: floor, then each case, every repeat
            for name, cmd in cmds.items():
                measured[name].append(run_child(cmd))
        floor = min(cpu for cpu, _, _ in measured["floor"])
        result["floor_cpu_s"] = floor
        result["floor_wall_s"] = min(wall for _, wall, _ in measured["floor"])
        print(f"floor (import numpy, pandas, pyarrow): {floor:.2f} s CPU")
        runs: dict[str, object] = {}
        for name in CASES:
            cpu_s, wall_s = [m[0] for m in measured[name]], [m[1] for m in measured[name]]
            best, printed = min(cpu_s), measured[name][-1][2]
            runs[name] = {"command": " ".join(["streamrag", *cmds[name][1:]]), "cpu_s": best, "cpu_s_runs": cpu_s,
                          "wall_s": min(wall_s), "wall_s_runs": wall_s, "over_floor_s": best - floor,
                          "cpu_ratio_to_floor": best / floor, "printed": printed}  # fmt: skip
            design = measured.get(f"{name}_design_floor")
            if design:
                design_cpu = min(m[0] for m in design)
                runs[name] |= {"design_floor_cpu_s": design_cpu, "design_floor_cpu_s_runs": [m[0] for m in design],
                               "design_floor_printed": design[-1][2], "cpu_ratio_to_design_floor": best / design_cpu}  # fmt: skip
                print(f"{name}: design floor {design_cpu:.2f} s CPU ({design[-1][2]})")
            print(
                f"{name}: {best:.2f} s CPU, {min(wall_s):.2f} s wall (floor {floor:.2f} s CPU; {best / floor:.1f}×) — {printed}"
            )
        result["runs"] = runs
    result["load_average_at_end"] = load_average()
    print(f"wrote {save('bench_predict', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
