"""Uniform δ vs typed vs spoken input on the questions common to all three, in one command:
the three-way table, the mis-heard-gold questions apart, the v4 query-side table and
``real_input.png``.

    python scripts/real_input_compare.py --out runs/real_input              # demo + real sample
    python scripts/real_input_compare.py --out runs/real_input --crag 120   # + 120 CRAG v4 questions

Spoken input is ``streamrag speak``'s output, ``OUT/spoken/<population>.jsonl``: made by this
command when absent (resumed when an earlier one was interrupted), or given
(``--spoken-demo``, ``--spoken-sample``, ``--spoken-v4``). Typed input types each question as
a participant of the shared keystroke logs did. Populations: the demo set (split 0), CRAG's
real 10-record sample, and with ``--crag N`` the first N v4 questions (``speak --limit N``),
each ranked against its own pages in the shared CRAG folder: only 70 of the 2,706 v4
questions have any, and those with fewer than paper_rq3's k = 3 chunks cannot be simulated,
so the population is the spoken questions with at least 3 chunks of their own (the
query-side table below covers all N). Partial hypotheses are
ranked in per-question scope only (global scope refuses them).

Per population and input it runs ``analyze`` and ``simulate --scenario paper_rq3`` (every
question simulated: ``select.population=all``) through the CLI. **Fair comparisons**:

- *common questions*: analyzed (not skipped) under all three inputs; the streamable share
  and mean H **in time** are over them (H = min(L, E − t*), E the time of the last input
  event, t* the time of the stabilizing event: t_suf for retrieved-gold questions, else
  t_sc; uniform input at δ = 3 w/s, L = 600 ms, θ = 0.8);
- *common gold*: the common questions retrieved-gold under the true text (uniform, typed:
  they end on the question) **and** under the spoken transcript; paper_rq3's simulated
  figures (mean saved ms, mis-fires, calls fired, calls on revised input) are over them;
- *mis-heard gold*, apart: common questions retrieved-gold only under the transcript
  (``gold only when mis-heard``) or only under the true text (``gold lost when mis-heard``),
  with every input's simulated figures on them.

``spoken`` events arrive at their audio times (``t_ms``); ``spoken-available`` at the times the
recognizer had produced them (``data.asr.timing = "available"``: audio time plus the measured
compute delay), when the file records them.

On v4 questions (query side only: no retrieval) it reports the input itself for the three
inputs on the same questions — those the spoken v4 file holds — with the standard units of
:mod:`streamrag.data.human.incremental`. Outputs: ``OUT/compare.csv`` and ``compare.md``
(the three-way table), ``misheard.csv``, ``query_side.csv`` and ``query_side.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamrag.base.atomic import write_text_atomic  # noqa: E402
from streamrag.cli import main  # noqa: E402
from streamrag.data.demo import demo_path  # noqa: E402
from streamrag.data.human.asr import Hypotheses, TypedInput  # noqa: E402
from streamrag.data.human.hypotheses_file import question_hypotheses, read_hypotheses  # noqa: E402
from streamrag.data.human.incremental import corpus_measures, question_measures  # noqa: E402
from streamrag.data.human.speech_progress import is_progress_file, progress_path, read_spoken, summary_path  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
L_MS, DELTA_WPS, THETA = 600.0, 3.0, 0.8
INPUTS = ("uniform", "typed", "spoken", "spoken-available")
TRUE_TEXT = ("uniform", "typed")
"""Inputs whose final hypothesis is the question itself (the true text)."""


@dataclass(frozen=True)
class Population:
    name: str
    data: str
    split: str
    spoken: Path
    ids: Path | None = None
    """Questions to keep (the spoken v4 questions); None: all of ``split``."""
    scope: str = "per-question"


def _run(argv: list[str]) -> None:
    if main(["--quiet", *argv]) != 0:
        raise SystemExit(f"failed: streamrag {' '.join(argv)}")


def ensure_spoken(out: Path, questions: str, split: str, limit: int | None, jobs: int) -> Path:
    """``out``, spoken by ``streamrag speak`` unless it is there finished already (an
    interrupted run beside it is resumed)."""
    if out.exists() and summary_path(out).exists() and not progress_path(out).exists():
        return out
    argv = ["speak", questions, "--split", split, "--jobs", str(jobs), "--out", str(out)]
    if limit is not None:
        argv += ["--limit", str(limit)]
    if progress_path(out).exists():
        argv.append("--resume")
    print(f"speaking {questions} → {out} (streamrag {' '.join(argv)})", file=sys.stderr)
    _run(argv)
    return out


def has_available_times(path: Path) -> bool:
    """Whether every question of the hypotheses file records when its hypotheses were available."""
    return all(h.available_ms is not None for h in read_hypotheses(path).questions.values())


def _input_args(kind: str, spoken: Path) -> tuple[list[str], list[str]]:
    keystrokes = str(SHARED / "keystrokes")
    if kind == "uniform":
        return [], []
    if kind == "typed":
        return ["--typed", keystrokes], ["--set", "data.asr.kind=typed", "--set", f"data.asr.path={keystrokes}"]
    timing = "available" if kind == "spoken-available" else "audio"
    return (
        ["--asr-hypotheses", str(spoken), "--asr-timing", timing],
        ["--set", "data.asr.kind=file", "--set", f"data.asr.path={spoken}", "--set", f"data.asr.timing={timing}"],
    )


def h_in_time(analysis: Path, table: pd.DataFrame, kind: str) -> pd.Series:
    """H in ms per analyzed question (module docstring), indexed by interaction id."""
    ok = table[table["skip_reason"].isna()]
    rg = ok["retrieved_gold"].astype(bool)
    if kind == "uniform":
        t_star_ms = np.where(rg, ok["t_suf"], ok["t_sc"]) * 1000 / DELTA_WPS
        end_ms = ok["n_words"].to_numpy(float) * 1000 / DELTA_WPS
    else:
        t_star_ms = np.where(rg, ok["t_suf_ms"], ok["t_sc_ms"])
        prefixes = pd.read_parquet(analysis / "prefixes.parquet", columns=["interaction_id", "t_ms"])
        end = prefixes.groupby("interaction_id")["t_ms"].max()
        end_ms = ok["interaction_id"].map(end).to_numpy(float)
    h = np.minimum(L_MS, np.maximum(0.0, end_ms - t_star_ms))
    return pd.Series(h, index=ok["interaction_id"].to_numpy())


@dataclass(frozen=True)
class InputRun:
    """One input's analysis and simulation of a population."""

    h_ms: pd.Series
    """H in time of each analyzed question (by interaction id)."""
    gold: frozenset[str]
    """The analyzed questions that are retrieved-gold."""
    results: pd.DataFrame
    """``simulate``'s rows (every question), indexed by interaction id."""


def run_input(pop: Population, kind: str, out: Path) -> InputRun:
    an_args, sim_sets = _input_args(kind, pop.spoken)
    an, sim = out / f"{pop.name}-{kind}-analysis", out / f"{pop.name}-{kind}-sim"
    select = ["--ids", str(pop.ids)] if pop.ids is not None else []
    _run(
        [
            "analyze",
            pop.data,
            "--split",
            pop.split,
            "--scope",
            pop.scope,
            *select,
            "--no-figures",
            "--force",
            "--out",
            str(an),
            *an_args,
        ]
    )
    _run(["simulate", pop.data, "--scenario", "paper_rq3", "--set", f"data.split={pop.split}", "--set", f"data.scope={pop.scope}",
          "--set", "select.population=all", *select, "--force", "--out", str(sim), *sim_sets])  # fmt: skip
    table = pd.read_csv(an / "stabilization.csv")
    ok = table[table["skip_reason"].isna()]
    results = pd.read_csv(sim / "results.csv")
    return InputRun(
        h_in_time(an, table, kind),
        frozenset(ok.loc[ok["retrieved_gold"].astype(bool), "interaction_id"]),
        results[results["skip_reason"].isna()].set_index("interaction_id"),
    )


def _simulated(results: pd.DataFrame, ids: list[str]) -> dict:
    """paper_rq3's figures over ``ids`` (None without questions)."""
    rows = results.reindex([i for i in ids if i in results.index])
    fired = rows["calls_fired"].sum()
    on_revised = rows["calls_on_revised"].sum() / fired if "calls_on_revised" in rows and fired else None
    return {
        "n_simulated": len(rows),
        "saved_mean_ms": float(rows["saved_ms"].mean()) if len(rows) else None,
        "misfire_rate": float(rows["misfire"].astype(bool).mean()) if len(rows) else None,
        "calls_fired_mean": float(rows["calls_fired"].mean()) if len(rows) else None,
        "calls_on_revised_share": None if on_revised is None else float(on_revised),
    }


def fair_tables(population: str, runs: dict[str, InputRun]) -> tuple[list[dict], list[dict]]:
    """The three-way rows on the common questions and the mis-heard-gold rows (module
    docstring). ``runs`` holds uniform, typed and spoken (and maybe spoken-available)."""
    common = set.intersection(*(set(r.h_ms.index) for r in runs.values()))
    true_gold = set.intersection(*(set(runs[k].gold) for k in TRUE_TEXT)) & common
    heard_gold = set.intersection(*(set(r.gold) for k, r in runs.items() if k not in TRUE_TEXT)) & common
    both = sorted(true_gold & heard_gold)
    groups = {
        "gold only when mis-heard": sorted(heard_gold - true_gold),
        "gold lost when mis-heard": sorted(true_gold - heard_gold),
    }
    rows, misheard = [], []
    for kind, run in runs.items():
        h = run.h_ms.reindex(sorted(common))
        rows.append(
            {
                "population": population,
                "input": kind,
                "n_common": len(common),
                "streamable_share": float((h >= THETA * L_MS).mean()) if len(h) else None,
                "H_mean_ms": float(h.mean()) if len(h) else None,
                "n_common_gold": len(both),
                **_simulated(run.results, both),
            }
        )
        for group, ids in groups.items():
            misheard.append({"population": population, "group": group, "input": kind, "n_questions": len(ids),
                             **_simulated(run.results, ids)})  # fmt: skip
    return rows, misheard


def _fmt(value: object, spec: str, unit: str = "") -> str:
    return "—" if value is None or (isinstance(value, float) and np.isnan(value)) else format(value, spec) + unit


def compare_markdown(rows: list[dict], misheard: list[dict]) -> str:
    lines = [
        "| population | input | common questions | streamable | mean H | common gold | mean saved | mis-fires | calls fired | calls on revised input |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['population']} | {r['input']} | {r['n_common']} | {_fmt(r['streamable_share'], '.1%')} | {_fmt(r['H_mean_ms'], ',.0f', ' ms')} "
            f"| {r['n_common_gold']} | {_fmt(r['saved_mean_ms'], ',.0f', ' ms')} | {_fmt(r['misfire_rate'], '.0%')} "
            f"| {_fmt(r['calls_fired_mean'], '.2f')} | {_fmt(r['calls_on_revised_share'], '.0%')} |"
        )
    lines += ["", "Mis-heard gold: common questions retrieved-gold under one text only (the transcript, or the true text).", ""]
    counts = {(r["population"], r["group"]): r["n_questions"] for r in misheard}
    for population in dict.fromkeys(r["population"] for r in misheard):
        said = ", ".join(f"{counts[(p, g)]} {g}" for p, g in counts if p == population)
        lines.append(f"- {population}: {said}")
    shown = [r for r in misheard if r["n_questions"]]
    if shown:
        lines += ["", "| population | group | input | questions | mean saved | mis-fires | calls fired | calls on revised input |",
                  "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in shown:
        lines.append(
            f"| {r['population']} | {r['group']} | {r['input']} | {r['n_questions']} | {_fmt(r['saved_mean_ms'], ',.0f', ' ms')} "
            f"| {_fmt(r['misfire_rate'], '.0%')} | {_fmt(r['calls_fired_mean'], '.2f')} | {_fmt(r['calls_on_revised_share'], '.0%')} |"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- query side


def spoken_v4_hypotheses(path: Path, v4_ids: list[str]) -> tuple[dict[str, Hypotheses], dict[str, float], str]:
    """The hypotheses of the v4 questions ``path`` holds (by id, in v4 order), their audio
    lengths in ms where known, and the row's label. A progress file gives the questions
    heard so far; any id that is not a v4 question is an error."""
    audio_ms: dict[str, float] = {}
    if is_progress_file(path):
        spoken = read_spoken(path)
        found = {s.interaction_id: s.heard() for s in spoken if s.hypotheses}
        audio_ms = {s.interaction_id: s.audio_ms for s in spoken}
        n_unheard = len(spoken) - len(found)
    else:
        found, n_unheard = dict(read_hypotheses(path).questions), 0
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            if "audio_ms" in obj:
                audio_ms[obj["interaction_id"]] = float(obj["audio_ms"])
    stray = sorted(set(found) - set(v4_ids))
    if stray:
        raise SystemExit(f"{path}: {len(stray)} question(s) are not v4 questions (first {stray[0]!r})")
    label = f"{len(found):,}" if len(found) == len(v4_ids) else f"{len(found):,} of {len(v4_ids):,}"
    if is_progress_file(path):
        label += " (run in progress)"
    if n_unheard:
        label += f", {n_unheard} heard nothing"
    return {qid: found[qid] for qid in v4_ids if qid in found}, audio_ms, label


def _prefixes(query: str) -> Hypotheses:
    """Uniform input: word i at i / δ."""
    from streamrag.data.human.asr import hypotheses_of

    words = query.split()
    return hypotheses_of(
        [tuple(words[: i + 1]) for i in range(len(words))], [(i + 1) * 1000 / DELTA_WPS for i in range(len(words))]
    )


def input_stats(kind: str, hyps: list[Hypotheses], label: str, durations_ms: list[float]) -> dict:
    """The input itself over ``hyps``, with the standard units (its duration: the audio's
    for speech, the last hypothesis' time otherwise)."""
    assert all(h.times_ms is not None for h in hyps)
    end_s = np.array([h.times_ms[-1] / 1000 for h in hyps])  # type: ignore[index]
    words = np.array([len(h.words[-1]) for h in hyps])
    measures = corpus_measures(
        [question_measures(h.words, h.times_ms, d, h.available_ms) for h, d in zip(hyps, durations_ms, strict=True)]
    )
    delays = [a - t for h in hyps if h.available_ms is not None for t, a in zip(h.times_ms, h.available_ms, strict=True)]  # type: ignore[arg-type]
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
        **measures,
        "delay_ms_median": float(np.median(delays)) if delays else None,
        "delay_ms_p90": float(np.percentile(delays, 90)) if delays else None,
    }


def query_side(spoken_v4: Path | None) -> list[dict]:
    """Uniform, typed and spoken input on the same v4 questions: those ``spoken_v4`` holds
    (all 2,706 for uniform and typed without it)."""
    questions = [json.loads(line) for line in (SHARED / "crag" / "crag_v4_questions.jsonl").read_text().splitlines()]
    spoken: dict[str, Hypotheses] = {}
    audio_ms: dict[str, float] = {}
    label = f"{len(questions):,}"
    if spoken_v4 is not None:
        spoken, audio_ms, label = spoken_v4_hypotheses(spoken_v4, [q["interaction_id"] for q in questions])
        questions = [q for q in questions if q["interaction_id"] in spoken]
        label += " (the spoken ones, common to all three)"
    typed = TypedInput(path=str(SHARED / "keystrokes"))
    uniform = [_prefixes(q["query"]) for q in questions]
    typed_hyps = [question_hypotheses(typed, q["interaction_id"], q["query"]) for q in questions]
    rows = [
        input_stats("uniform", uniform, label, [h.times_ms[-1] for h in uniform]),  # type: ignore[index]
        input_stats("typed", typed_hyps, label, [h.times_ms[-1] for h in typed_hyps]),  # type: ignore[index]
    ]
    if spoken:
        hyps = [spoken[q["interaction_id"]] for q in questions]
        durations = [audio_ms.get(q["interaction_id"], h.times_ms[-1]) for q, h in zip(questions, hyps, strict=True)]  # type: ignore[index]
        rows.append(input_stats("spoken", hyps, label, durations))
    return rows


def query_side_markdown(rows: list[dict]) -> str:
    """The v4 query-side table."""
    names = {"uniform": f"uniform {DELTA_WPS:g} w/s", "typed": "typed", "spoken": "spoken"}
    lines = [
        "| input | questions | mean input time | median words/s | hypotheses / question | hypotheses revised "
        "| questions with a revision | revokes/s | edit overhead | edits / word | first partial (median) "
        "| words final only at the end | compute delay median / p90 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        first = _fmt(r["first_partial_ms_median"], ",.0f", " ms")
        if r["first_partial_available_ms_median"] is not None:
            first += f" ({r['first_partial_available_ms_median']:,.0f} ms as available)"
        delay = "—" if r["delay_ms_median"] is None else f"{r['delay_ms_median']:.0f} / {r['delay_ms_p90']:.0f} ms"
        lines.append(
            f"| {names[r['input']]} | {r['questions_label']} | {r['input_s_mean']:.2f} s | {r['words_per_s_median']:.2f} "
            f"| {r['hypotheses_per_question']:.1f} | {r['revised_share']:.1%} | {r['questions_with_revision']:.1%} "
            f"| {_fmt(r['revokes_per_s'], '.2f')} | {_fmt(r['edit_overhead'], '.1%')} | {_fmt(r['edits_per_word'], '.2f')} "
            f"| {first} | {_fmt(r['final_at_end_share'], '.1%')} | {delay} |"
        )
    return "\n".join(lines) + "\n"


def figure(rows: pd.DataFrame, path: Path) -> None:
    from streamrag.base.figures import agg_figure, save_figure

    fig = agg_figure(11, 3.4)
    axes = fig.subplots(1, 3)
    for ax, column, label in zip(axes, ("streamable_share", "saved_mean_ms", "calls_on_revised_share"),
                                 ("streamable share (H ≥ θL, in time)", "mean saved (ms), common gold", "calls on revised input"), strict=True):  # fmt: skip
        pivot = rows.pivot(index="population", columns="input", values=column).reindex(
            columns=[k for k in INPUTS if k in set(rows["input"])]
        )
        pivot.astype(float).fillna(0.0).plot.bar(ax=ax, rot=0)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("")
    fig.subplots_adjust(wspace=0.3, bottom=0.15)
    save_figure(fig, path)


def _v4_ids(spoken: Path, crag: Path, out: Path) -> Path:
    """The spoken v4 questions that have pages to rank, at least paper_rq3's k = 3 chunks
    (``simulate`` refuses a question whose evidence holds fewer), as an ids file."""
    heard = out / "spoken" / "v4_heard_ids.txt"
    write_text_atomic(heard, "".join(qid + "\n" for qid in read_hypotheses(spoken).questions))
    pages = out / "crag-v4-pages"
    _run(["analyze", str(crag), "--split", "all", "--ids", str(heard), "--no-figures", "--force", "--out", str(pages)])
    table = pd.read_csv(pages / "stabilization.csv")
    keep = table[table["skip_reason"].isna() & (table["n_passages"] >= 3)]
    print(f"crag-v4: {len(keep)} of {len(table)} spoken questions have at least 3 chunks of their own pages", file=sys.stderr)
    ids = out / "spoken" / "v4_ids.txt"
    write_text_atomic(ids, "".join(qid + "\n" for qid in keep["interaction_id"]))
    return ids


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="output folder (the spoken files go to OUT/spoken/)")
    ap.add_argument(
        "--spoken-demo", type=Path, help="speak's output for the demo set (default: OUT/spoken/demo.jsonl, made when absent)"
    )
    ap.add_argument(
        "--spoken-sample",
        type=Path,
        help="speak's output for the real sample (default: OUT/spoken/sample.jsonl, made when absent)",
    )
    ap.add_argument(
        "--crag",
        type=int,
        metavar="N",
        help="also the first N CRAG v4 questions (spoken to OUT/spoken/v4_N.jsonl when absent); those with pages ranked",
    )
    ap.add_argument(
        "--spoken-v4", type=Path, help="speak's output for v4 questions (or its .partial file) instead of --crag's own"
    )
    ap.add_argument("--jobs", type=int, default=1, metavar="J", help="processes speaking (default 1)")
    ap.add_argument("--query-side-only", action="store_true", help="only the v4 query-side table")
    ap.add_argument(
        "--inputs",
        default=",".join(INPUTS),
        help=f"inputs to compare (default {','.join(INPUTS)}; spoken-available only where recorded)",
    )
    args = ap.parse_args(argv)
    if args.crag is not None and args.crag < 1:
        ap.error(f"--crag: {args.crag} is not a positive count")
    inputs = args.inputs.split(",")
    unknown = sorted(set(inputs) - set(INPUTS))
    if unknown or not {"uniform", "typed", "spoken"} <= set(inputs):
        ap.error(f"--inputs: uniform, typed and spoken are needed; known inputs: {', '.join(INPUTS)}")
    if not (SHARED / "keystrokes").is_dir():
        raise SystemExit(f"{SHARED / 'keystrokes'}: the keystroke logs typed input needs are not there")
    out: Path = args.out
    spoken_dir = out / "spoken"
    spoken_dir.mkdir(parents=True, exist_ok=True)
    crag = SHARED / "crag"
    spoken_v4 = args.spoken_v4
    if spoken_v4 is None and args.crag is not None:
        spoken_v4 = ensure_spoken(
            spoken_dir / f"v4_{args.crag}.jsonl", str(crag / "crag_v4_questions.jsonl"), "all", args.crag, args.jobs
        )
    if (crag / "crag_v4_questions.jsonl").exists():
        side_rows = query_side(spoken_v4)
        write_text_atomic(out / "query_side.csv", pd.DataFrame(side_rows).to_csv(index=False))
        write_text_atomic(out / "query_side.md", query_side_markdown(side_rows))
        print(query_side_markdown(side_rows))
    if args.query_side_only:
        return 0
    populations = [
        Population(
            "demo",
            str(demo_path()),
            "0",
            args.spoken_demo or ensure_spoken(spoken_dir / "demo.jsonl", "demo", "0", None, args.jobs),
        ),
    ]
    sample = crag / "dev_data.jsonl.bz2"
    if sample.exists():
        spoken = args.spoken_sample or ensure_spoken(spoken_dir / "sample.jsonl", str(sample), "all", None, args.jobs)
        populations.append(Population("real-sample", str(sample), "all", spoken))
    if spoken_v4 is not None and not is_progress_file(spoken_v4):
        populations.append(Population("crag-v4", str(crag), "all", spoken_v4, _v4_ids(spoken_v4, crag, out)))
    rows, misheard = [], []
    for pop in populations:
        kinds = [k for k in inputs if k != "spoken-available" or has_available_times(pop.spoken)]
        runs = {kind: run_input(pop, kind, out) for kind in kinds}
        got, apart = fair_tables(pop.name, runs)
        rows += got
        misheard += apart
        for row in got:
            print(json.dumps(row))
    write_text_atomic(out / "compare.csv", pd.DataFrame(rows).to_csv(index=False))
    write_text_atomic(out / "misheard.csv", pd.DataFrame(misheard).to_csv(index=False))
    write_text_atomic(out / "compare.md", compare_markdown(rows, misheard))
    print(compare_markdown(rows, misheard))
    figure(pd.DataFrame(rows), out / "real_input.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
