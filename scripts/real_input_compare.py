"""Uniform δ vs typed vs spoken input on the same questions (paper_rq3): the README's table
and ``real_input.png``.

    python scripts/real_input_compare.py --spoken-demo H_DEMO.jsonl --spoken-sample H_SAMPLE.jsonl \\
        [--spoken-v4 H_V4.jsonl] --out runs/real_input

Per population (the demo set; the real 10-record sample) and input, it runs ``analyze``
and ``simulate --scenario paper_rq3`` through the CLI and reports, over the questions
analyzed: the streamable share and mean H **in time** (H = min(L, E − t*), E the time of
the last input event, t* the time of the stabilizing event: t_suf for retrieved-gold
questions, else t_sc; uniform input at δ = 3 w/s, L = 600 ms, θ = 0.8), the simulated mean
saved ms, mis-fire rate and calls on revised input (paper_rq3's retrieved-gold population).
On the 2,706 v4 questions (query side only: no pages) it reports the input itself —
seconds of input, words/s, hypotheses per question, revised share — for uniform and typed
input, and for the v4 questions ``--spoken-v4`` holds: a ``speak`` output, or the
``.partial`` progress file of a run still going (the questions heard so far). The spoken
row is labelled with their count; ``OUT/query_side.md`` is the README's table.

    python scripts/real_input_compare.py --query-side-only --spoken-v4 V.jsonl --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamrag.base.atomic import write_text_atomic  # noqa: E402
from streamrag.cli import main  # noqa: E402
from streamrag.data.demo import demo_path  # noqa: E402
from streamrag.data.human.asr import Hypotheses, TypedInput, question_hypotheses, read_hypotheses  # noqa: E402
from streamrag.data.human.speech_progress import is_progress_file, read_spoken  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
L_MS, DELTA_WPS, THETA = 600.0, 3.0, 0.8


def _run(argv: list[str]) -> None:
    if main(["--quiet", *argv]) != 0:
        raise SystemExit(f"failed: streamrag {' '.join(argv)}")


def _input_args(kind: str, spoken: Path | None) -> tuple[list[str], list[str]]:
    keystrokes = str(SHARED / "keystrokes")
    if kind == "uniform":
        return [], []
    if kind == "typed":
        return ["--typed", keystrokes], ["--set", "data.asr.kind=typed", "--set", f"data.asr.path={keystrokes}"]
    assert spoken is not None
    return ["--asr-hypotheses", str(spoken)], ["--set", "data.asr.kind=file", "--set", f"data.asr.path={spoken}"]


def _h_in_time(out: Path, table: pd.DataFrame, kind: str) -> pd.Series:
    ok = table[table["skip_reason"].isna()].copy()
    rg = ok["retrieved_gold"].astype(bool)
    if kind == "uniform":
        t_star_ms = np.where(rg, ok["t_suf"], ok["t_sc"]) * 1000 / DELTA_WPS
        end_ms = ok["n_words"].to_numpy(float) * 1000 / DELTA_WPS
    else:
        t_star_ms = np.where(rg, ok["t_suf_ms"], ok["t_sc_ms"])
        prefixes = pd.read_parquet(out / "prefixes.parquet", columns=["interaction_id", "t_ms"])
        end = prefixes.groupby("interaction_id")["t_ms"].max()
        end_ms = ok["interaction_id"].map(end).to_numpy(float)
    return pd.Series(np.minimum(L_MS, np.maximum(0.0, end_ms - t_star_ms)), index=ok.index)


def compare(population: str, data: str, split: str, kind: str, spoken: Path | None, out: Path) -> dict:
    an_args, sim_sets = _input_args(kind, spoken)
    an = out / f"{population}-{kind}-analysis"
    sim = out / f"{population}-{kind}-sim"
    _run(["analyze", data, "--split", split, "--no-figures", "--out", str(an), *an_args])
    _run(["simulate", data, "--scenario", "paper_rq3", "--set", f"data.split={split}", "--out", str(sim), *sim_sets])
    table = pd.read_csv(an / "stabilization.csv")
    h = _h_in_time(an, table, kind)
    summary = json.loads((sim / "summary.json").read_text())
    results = pd.read_csv(sim / "results.csv")
    done = results[results["skip_reason"].isna()]
    row = {
        "population": population,
        "input": kind,
        "n_analyzed": len(h),
        "streamable_share": float((h >= THETA * L_MS).mean()),
        "H_mean_ms": float(h.mean()),
        "n_simulated": len(done),
        "saved_mean_ms": float(done["saved_ms"].mean()),
        "misfire_rate": float(done["misfire"].astype(bool).mean()),
        "calls_fired_mean": float(done["calls_fired"].mean()),
        "calls_on_revised_share": summary.get("calls_on_revised_share"),
    }
    if "n_hypotheses" in table.columns:
        row["hypotheses_per_question"] = float(table["n_hypotheses"].mean())
        row["revised_share"] = float(table["revised_share"].mean())
    return row


def spoken_v4_hypotheses(path: Path, v4_ids: list[str]) -> tuple[list[Hypotheses], str]:
    """The hypotheses of the v4 questions ``path`` holds, in v4 order, and the row's label
    (their count, and of how many when not all). A progress file gives the questions
    heard so far; any id that is not a v4 question is an error."""
    if is_progress_file(path):
        spoken = read_spoken(path)
        found = {s.interaction_id: s.heard() for s in spoken if s.hypotheses}
        n_unheard = len(spoken) - len(found)
    else:
        found, n_unheard = dict(read_hypotheses(path).questions), 0
    stray = sorted(set(found) - set(v4_ids))
    if stray:
        raise SystemExit(f"{path}: {len(stray)} question(s) are not v4 questions (first {stray[0]!r})")
    label = f"{len(found):,}" if len(found) == len(v4_ids) else f"{len(found):,} of {len(v4_ids):,}"
    if is_progress_file(path):
        label += " (run in progress)"
    if n_unheard:
        label += f", {n_unheard} heard nothing"
    return [found[qid] for qid in v4_ids if qid in found], label


def query_side(spoken_v4: Path | None) -> list[dict]:
    questions = [json.loads(line) for line in (SHARED / "crag" / "crag_v4_questions.jsonl").read_text().splitlines()]
    typed = TypedInput(path=str(SHARED / "keystrokes"))
    rows = []

    def stats(kind: str, hyps: list[Hypotheses], label: str) -> dict:
        end_s = np.array([h.times_ms[-1] / 1000 for h in hyps])
        words = np.array([len(h.words[-1]) for h in hyps])
        return {
            "population": "v4 (query side)",
            "input": kind,
            "n_questions": len(hyps),
            "questions_label": label,
            "input_s_mean": float(end_s.mean()),
            "words_per_s_median": float(np.median(words / np.maximum(end_s, 1e-9))),
            "hypotheses_per_question": float(np.mean([len(h.words) for h in hyps])),
            "revised_share": float(np.mean([h.revised_share for h in hyps])),
            "questions_with_revision": float(np.mean([h.n_revisions > 0 for h in hyps])),
        }

    n = np.array([len(q["query"].split()) for q in questions])
    rows.append({"population": "v4 (query side)", "input": "uniform", "n_questions": len(n), "questions_label": f"{len(n):,}",
                 "input_s_mean": float((n / DELTA_WPS).mean()), "words_per_s_median": DELTA_WPS,
                 "hypotheses_per_question": float(n.mean()), "revised_share": 0.0, "questions_with_revision": 0.0})  # fmt: skip
    typed_hyps = [question_hypotheses(typed, q["interaction_id"], q["query"]) for q in questions]
    rows.append(stats("typed", typed_hyps, f"{len(typed_hyps):,}"))
    if spoken_v4 is not None:
        hyps, label = spoken_v4_hypotheses(spoken_v4, [q["interaction_id"] for q in questions])
        if hyps:
            rows.append(stats("spoken", hyps, label))
    return rows


def query_side_markdown(rows: list[dict]) -> str:
    """The README's v4 query-side table."""
    names = {"uniform": f"uniform {DELTA_WPS:g} w/s", "typed": "typed", "spoken": "spoken"}
    lines = [
        "| input | questions | mean input time | median words/s | hypotheses / question | hypotheses revised | questions with a revision |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {names[r['input']]} | {r['questions_label']} | {r['input_s_mean']:.2f} s | {r['words_per_s_median']:.2f} "
            f"| {r['hypotheses_per_question']:.1f} | {r['revised_share']:.1%} | {r['questions_with_revision']:.1%} |"
        )
    return "\n".join(lines) + "\n"


def figure(rows: pd.DataFrame, path: Path) -> None:
    from streamrag.base.figures import agg_figure, save_figure

    fig = agg_figure(11, 3.4)
    axes = fig.subplots(1, 3)
    for ax, column, label in zip(axes, ("streamable_share", "saved_mean_ms", "calls_on_revised_share"),
                                 ("streamable share (H ≥ θL, in time)", "mean saved (ms), paper_rq3", "calls on revised input"), strict=True):  # fmt: skip
        pivot = rows.pivot(index="population", columns="input", values=column).reindex(columns=["uniform", "typed", "spoken"])
        pivot.fillna(0.0).plot.bar(ax=ax, rot=0)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("")
    fig.tight_layout()
    save_figure(fig, path)


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spoken-demo", type=Path, help="speak's output for the demo set (not with --query-side-only)")
    ap.add_argument("--spoken-sample", type=Path, help="speak's output for the real sample (not with --query-side-only)")
    ap.add_argument("--spoken-v4", type=Path, help="speak's output for v4 questions, or its .partial file of a run going on")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--query-side-only", action="store_true", help="only the v4 query-side table")
    ap.add_argument("--inputs", default="uniform,typed,spoken", help="inputs to run (others are kept from OUT/compare.csv)")
    args = ap.parse_args(argv)
    if not args.query_side_only and (args.spoken_demo is None or args.spoken_sample is None):
        ap.error("--spoken-demo and --spoken-sample are needed unless --query-side-only")
    args.out.mkdir(parents=True, exist_ok=True)
    side_rows = query_side(args.spoken_v4)
    for row in side_rows:
        print(json.dumps(row))
    write_text_atomic(args.out / "query_side.csv", pd.DataFrame(side_rows).to_csv(index=False))
    write_text_atomic(args.out / "query_side.md", query_side_markdown(side_rows))
    print(query_side_markdown(side_rows), end="")
    if args.query_side_only:
        return 0
    rows = []
    for population, data, split, spoken in (("demo", str(demo_path()), "0", args.spoken_demo),
                                            ("real sample", str(SHARED / "crag" / "dev_data.jsonl.bz2"), "all", args.spoken_sample)):  # fmt: skip
        for kind in args.inputs.split(","):
            rows.append(compare(population.replace(" ", "-"), data, split, kind, spoken, args.out))
            print(json.dumps(rows[-1]))
    frame = pd.DataFrame(rows)
    previous = args.out / "compare.csv"
    if previous.exists():
        kept = pd.read_csv(previous)
        frame = pd.concat([kept[~kept["input"].isin(frame["input"])], frame], ignore_index=True)
    write_text_atomic(args.out / "compare.csv", frame.to_csv(index=False))
    figure(frame, args.out / "real_input.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
