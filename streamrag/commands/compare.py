"""``streamrag compare RUN_DIR PUBLISHED.csv --out DIR``: a run against published savings;
``streamrag compare RUN_A RUN_B --out DIR``: two runs, question by question.

The second argument's kind picks the form: a folder is a run, anything else a published
file. Standard-library imports only at top level; the logic is
:mod:`streamrag.simulator.compare.published` and :mod:`streamrag.simulator.compare.runs`.
"""

from __future__ import annotations

import argparse
from typing import Any

HELP = "compare a simulate run's per-question savings with a published per-question latency file, or with another run"

EPILOG = """\
PUBLISHED.csv columns: interaction_id, measured_saved_ms, H_predicted_ms
(optional: question_type, n_words, t_star). Questions are joined on interaction_id;
only the questions the run replayed (empty skip_reason in results.csv) take part.

With a second run folder (RUN_B) instead: the questions both runs replayed, per question
delta_saved_ms = B - A, the Wilcoxon signed-rank test on the differences; writes
comparison.json, per_question.csv and comparison.png.

examples:
  streamrag simulate --table stabilization.csv --scenario paper_rq3 --out runs/rq3
  streamrag compare runs/rq3 anchor_rq3_per_question.csv --out runs/rq3-vs-anchor
  streamrag simulate --table stabilization.csv --scenario paper_rq3 --set reflector.kind=gold --out runs/rq3-gold
  streamrag compare runs/rq3 runs/rq3-gold --out runs/heuristic-vs-gold
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help=HELP,
        description=(
            f"{HELP[0].upper()}{HELP[1:]}: writes comparison.json (matched and unmatched ids, measured vs "
            "simulated saved ms, published vs simulated H, Pearson and Spearman per question, |delta saved|, "
            "rho(H, saved) on both sides, agreement on n_words and t_star) and comparison.png (simulated vs "
            "measured saved per question)."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of 'streamrag simulate' (reads results.csv)")
    p.add_argument(
        "published", metavar="PUBLISHED.csv | RUN_B", help="published per-question latency file, or a second run folder"
    )
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if absent)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from streamrag.base.errors import InputError
    from streamrag.base.figures import FORMATS
    from streamrag.base.system.outputs import check_out_dir
    from streamrag.simulator.compare.published import COMPARISON_JSON, compare_run, comparison_lines, write_comparison

    out = check_out_dir(args.out)
    if Path(args.published).is_dir():
        return _two_runs(args.run_dir, args.published, out)
    comparison = compare_run(args.run_dir, args.published)  # every check before anything is written
    try:
        written = write_comparison(comparison, out)
    except OSError as exc:
        raise InputError(f"{exc.filename or out}: cannot write: {exc.strerror or exc}") from None
    figures = " and ".join(str(p) for p in written if p.suffix in FORMATS)
    print("\n".join([*comparison_lines(comparison.data), f"wrote {out / COMPARISON_JSON}, {figures}"]))
    return 0


def _two_runs(run_a: str, run_b: str, out: object) -> int:
    from streamrag.base.errors import InputError
    from streamrag.simulator.compare.runs import compare_runs, run_comparison_lines, write_run_comparison

    comparison = compare_runs(run_a, run_b)
    try:
        written = write_run_comparison(comparison, str(out))
    except OSError as exc:
        raise InputError(f"{exc.filename or out}: cannot write: {exc.strerror or exc}") from None
    lines = [*run_comparison_lines(comparison.data), *_misfire_lines(comparison.data)]
    print("\n".join([*lines, "wrote " + ", ".join(str(p) for p in written)]))
    return 0


def _misfire_lines(data: dict[str, Any]) -> list[str]:
    """Each run's mis-fires on the questions compared (``misfire`` in results.csv: speculative
    calls were fired and none was sufficient, so the answer waited for the fallback call)
    and its calls fired per question; nothing when the runs' results lack the columns."""
    n = data["n_matched"]
    out = []
    if (misfire := data.get("misfire")) is not None:
        a, b = ("n/a" if v is None else f"{v:.0f}" for v in (misfire["a"], misfire["b"]))
        out.append(f"  mis-fires  A {a} of {n} | B {b} of {n} questions (speculative calls fired, none sufficient)")
    if (calls := data.get("calls_fired")) is not None:
        a, b = ("n/a" if v is None else f"{v:.2f}" for v in (calls["a"], calls["b"]))
        out.append(f"  calls fired per question  A {a} | B {b}")
    return out
