"""The validation table of docs/typed-input.md, regenerated from `fit-input --validate` (issue 47).

Runs ``streamrag fit-input --keystrokes DIR --validate DIR --split-participants S`` for the
``alternate`` and ``halves`` splits of one keystroke folder and writes, per statistic, the
held-out logs' value with its 95% CI and the model's value on each split, marked inside or
outside the logs' CI: typing each sentence once (``--typings 1``, one draw of the model) and
``--typings K`` times (default 16: the model's expectation, with its own CI).

    PYTHONPATH=. python scripts/typed_validate_table.py --keystrokes ../shared/data/keystrokes \\
        --out /tmp/typed-validate [--typings 16] [--docs docs/typed-input.md]

``--docs`` rewrites the part of that page between its ``typed-validate-table`` markers.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

from _marked import splice

from streamrag.cli import main

SPLITS = ("alternate", "halves")


def _num(v: float) -> str:
    return f"{v:.4g}"


def _validate(keystrokes: Path, out: Path, split: str, typings: int = 1) -> dict:
    path = out / f"{split}-{typings}.json"
    args = ["--quiet", "fit-input", "--keystrokes", str(keystrokes), "--validate", str(keystrokes)]
    args += ["--split-participants", split, "--typings", str(typings), "--out", str(path)]
    with contextlib.redirect_stdout(io.StringIO()):
        if main(args):
            raise SystemExit(f"fit-input failed: {' '.join(args)}")
    return json.loads(path.read_text(encoding="utf-8"))["validate"]


def table(results: dict[str, dict], many: dict[str, dict]) -> list[str]:
    """Markdown rows: each statistic, the held-out logs of each split with CIs, the model's
    value typing once and its expectation typing ``many`` times (with its CI), ✓/✗."""
    k = next(iter(many.values()))["typings"]
    head = " | ".join(f"{s}: held-out logs [95% CI] | {s}: model, 1 typing | {s}: model, {k} typings [95% CI]" for s in results)
    lines = [f"| statistic | {head} |", "|---|" + "---|---|---|" * len(results)]
    mark = {True: "✓", False: "✗", None: "–"}
    for name in next(iter(results.values()))["statistics"]:
        cells = []
        for split, result in results.items():
            row, exp = result["statistics"][name], many[split]["statistics"][name]
            logs, model, mean = row["logs"], row["model"], exp["model"]
            cells += [
                f"{_num(logs['value'])} [{_num(logs['lo'])}, {_num(logs['hi'])}]",
                f"{_num(model['value'])} {mark[row['inside']]}",
                f"{_num(mean['value'])} [{_num(mean['lo'])}, {_num(mean['hi'])}] {mark[exp['inside']]}",
            ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    counts = "; ".join(
        f"{s}: {r['n_fit_participants']} fitted / {r['n_validate_participants']} validated, "
        f"{_inside(r)} inside typing once, {_inside(many[s])} typing {k} times"
        for s, r in results.items()
    )
    return [*lines, "", counts + "."]


def _inside(result: dict) -> str:
    return f"{len(result['statistics']) - len(result['outside'])} of {len(result['statistics'])}"


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keystrokes", type=Path, required=True, help="a 136M Keystrokes folder")
    parser.add_argument("--out", type=Path, required=True, help="folder for the validation files")
    parser.add_argument("--typings", type=int, default=16, help="typings per sentence of the expectation columns")
    parser.add_argument("--docs", type=Path, help="rewrite this page's typed-validate-table part")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    once = {split: _validate(args.keystrokes, args.out, split) for split in SPLITS}
    many = {split: _validate(args.keystrokes, args.out, split, args.typings) for split in SPLITS}
    lines = table(once, many)
    print("\n".join(lines))
    if args.docs:
        splice(args.docs, "typed-validate-table", lines)
    return 0


if __name__ == "__main__":
    sys.exit(run())
