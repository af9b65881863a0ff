"""``streamrag speak QUESTIONS --out H.jsonl``: questions spoken by an offline voice and
heard by an offline streaming recognizer, written as timed partial hypotheses
(standard-library imports only at top level)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = "speak questions offline (Piper) and record a recognizer's partial hypotheses (PocketSphinx)"

EPILOG = """\
examples:
  streamrag speak demo --out runs/spoken/demo.jsonl
  streamrag speak ../shared/data/crag/crag_v4_questions.jsonl --limit 120 --out runs/spoken/v4.jsonl
  streamrag analyze demo --asr-hypotheses runs/spoken/demo.jsonl --out runs/spoken/analysis
  streamrag simulate demo --scenario paper_rq3 --set data.asr.kind=file \\
      --set data.asr.path=runs/spoken/demo.jsonl --out runs/spoken/sim

QUESTIONS is any JSON lines file with `interaction_id` and `query` per line (a CRAG file,
.jsonl.bz2 too; the v4 question list), or `demo`. Needs the speech extra
(pip install -e '.[speech]'); nothing is downloaded. Each question is synthesized, fed to
the recognizer in --chunk-ms pieces, and every change of its partial hypothesis is kept
at its audio time; the last one is the final transcript. The output is the format
`analyze --asr-hypotheses` and `data.asr.kind = "file"` read, plus per line the question,
the final transcript, the audio length and the word edits against the question. A
summary (WER, hypotheses, revisions, CPU seconds) goes to stdout and OUT.summary.json.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("speak", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("questions", metavar="QUESTIONS", help="JSON lines with interaction_id and query, or `demo`")
    p.add_argument("--out", required=True, metavar="H.jsonl", help="hypotheses file to write")
    p.add_argument("--split", default="all", choices=("0", "1", "all"), help="keep questions of this CRAG split (default all)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="the first N questions kept")
    p.add_argument("--chunk-ms", type=float, default=100.0, metavar="MS", help="audio fed per recognizer step (default 100)")
    p.add_argument(
        "--final-delay-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="final transcript this long after the audio ends (default 0)",
    )
    p.add_argument(
        "--deterministic",
        action="store_true",
        help="the voice without its random noise (Piper's noise_scale and noise_w_scale 0): the same file every run, "
        "with flatter prosody; by default the voice draws unseeded noise, so runs differ",
    )
    p.set_defaults(run=run)


def _questions(path: Path, split: str, limit: int | None) -> list[tuple[str, str]]:
    from streamrag.base.errors import RecordError
    from streamrag.base.lines import iter_question_objects

    out: list[tuple[str, str]] = []
    for line_no, qid, obj in iter_question_objects(path):
        query = obj.get("query")
        if not isinstance(query, str) or not query.split():
            raise RecordError(str(path), line_no, "query", "missing or empty (the question to speak)")
        if split != "all" and str(obj.get("split")) != split:
            continue
        out.append((qid, query))
        if limit is not None and len(out) >= limit:
            break
    return out


def run(args: argparse.Namespace) -> int:
    from streamrag.base import progress
    from streamrag.base.atomic import write_text_atomic
    from streamrag.base.errors import ConfigError
    from streamrag.data.demo import demo_path
    from streamrag.data.speech import Speaker, spoken_summary
    from streamrag.engine.clock import process_cpu_s

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit: {args.limit} is not a positive count")
    path = demo_path() if args.questions == "demo" else Path(args.questions)
    questions = _questions(path, args.split, args.limit)
    if not questions:
        raise ConfigError(f"{path}: no questions selected (split {args.split})")
    cpu0 = process_cpu_s()
    speaker = Speaker(chunk_ms=args.chunk_ms, final_delay_ms=args.final_delay_ms, deterministic=args.deterministic)
    spoken = []
    with progress.task_progress("speaking", len(questions)) as update:
        for i, (qid, query) in enumerate(questions, 1):
            spoken.append(speaker.speak(qid, query))
            if update is not None:
                update(i)
    cpu_s = process_cpu_s() - cpu0
    heard = [s for s in spoken if s.hypotheses]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, "".join(json.dumps(s.record(), ensure_ascii=False) + "\n" for s in heard))
    summary = spoken_summary(spoken) | {
        "questions_file": str(path),
        "chunk_ms": args.chunk_ms,
        "cpu_s": round(cpu_s, 2),
        "cpu_s_per_audio_s": round(cpu_s / max(1e-9, sum(s.audio_ms for s in spoken) / 1000), 3),
    }
    write_text_atomic(out.with_name(out.name + ".summary.json"), json.dumps(summary, indent=2) + "\n")
    print(
        f"{summary['n_questions']} questions, {summary['audio_s']:.1f} s of audio, {cpu_s:.1f} s CPU; "
        f"WER {summary['wer']:.3f}, {summary['n_final_differs']} final transcripts differ from the question; "
        f"{summary['n_hypotheses']} hypotheses, {summary['revised_share']:.0%} revised; "
        f"{summary['n_unheard']} heard nothing → {out}"
    )
    sys.stdout.flush()
    return 0
