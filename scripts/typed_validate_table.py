"""The validation table of docs/typed-input.md, regenerated from `fit-input --validate` (issue 47).

Runs ``streamrag fit-input --keystrokes DIR --validate DIR --split-participants S`` for the
``alternate`` and ``halves`` splits of one keystroke folder and writes, per statistic, the
held-out logs' value with its 95% CI and the model's value on each split, marked inside or
outside the logs' CI.

    PYTHONPATH=. python scripts/typed_validate_table.py --keystrokes ../shared/data/keystrokes \\
        --out /tmp/typed-validate [--docs docs/typed-input.md]

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


def _validate(keystrokes: Path, out: Path, split: str) -> dict:
    path = out / f"{split}.json"
    args = ["--quiet", "fit-input", "--keystrokes", str(keystrokes), "--validate", str(keystrokes)]
    args += ["--split-participants", split, "--out", str(path)]
    with contextlib.redirect_stdout(io.StringIO()):
        if main(args):
            raise SystemExit(f"fit-input failed: {' '.join(args)}")
    return json.loads(path.read_text(encoding="utf-8"))["validate"]


def table(results: dict[str, dict]) -> list[str]:
    """Markdown rows: each statistic, the held-out logs of each split with CIs, the model's value, ✓/✗."""
    head = "| statistic | " + " | ".join(f"{s}: held-out logs [95% CI] | {s}: model" for s in results) + " |"
    lines = [head, "|---|" + "---|---|" * len(results)]
    first = next(iter(results.values()))
    for name in first["statistics"]:
        cells = []
        for result in results.values():
            row = result["statistics"][name]
            logs, model = row["logs"], row["model"]
            mark = {True: "✓", False: "✗", None: "–"}[row["inside"]]
            cells += [f"{_num(logs['value'])} [{_num(logs['lo'])}, {_num(logs['hi'])}]", f"{_num(model['value'])} {mark}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    counts = ", ".join(
        f"{s}: {r['n_fit_participants']} fitted / {r['n_validate_participants']} validated, "
        f"{len(r['statistics']) - len(r['outside'])} of {len(r['statistics'])} inside"
        for s, r in results.items()
    )
    return [*lines, "", counts + "."]


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keystrokes", type=Path, required=True, help="a 136M Keystrokes folder")
    parser.add_argument("--out", type=Path, required=True, help="folder for the validation files")
    parser.add_argument("--docs", type=Path, help="rewrite this page's typed-validate-table part")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lines = table({split: _validate(args.keystrokes, args.out, split) for split in SPLITS})
    print("\n".join(lines))
    if args.docs:
        splice(args.docs, "typed-validate-table", lines)
    return 0


if __name__ == "__main__":
    sys.exit(run())
