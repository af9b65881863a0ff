"""``streamrag speak QUESTIONS --out H.jsonl``: questions spoken by an offline voice and
heard by an offline streaming recognizer, written as timed partial hypotheses
(standard-library imports only at top level)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from streamrag.data.human.speech import SpokenQuestion
    from streamrag.data.human.speech_progress import SpeakProgress

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

A long run keeps each question as it is heard in OUT.partial; after Ctrl-C, SIGTERM or a
kill, the same command with --resume speaks only the rest (OUT is written when all are
done, the same file an uninterrupted run writes).
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
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the unfinished run whose progress file (OUT.partial) is beside OUT (same settings)",
    )
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="speak in N processes (default 1)")
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
    from streamrag.base.errors import ConfigError
    from streamrag.data.demo import demo_path
    from streamrag.data.human.speech import speech_available
    from streamrag.data.human.speech_progress import SpeakProgress, run_settings

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit: {args.limit} is not a positive count")
    if args.jobs < 1:
        raise ConfigError(f"--jobs: {args.jobs} is not a positive count")
    missing = speech_available()
    if missing is not None:
        raise ConfigError(missing)
    path = demo_path() if args.questions == "demo" else Path(args.questions)
    questions = _questions(path, args.split, args.limit)
    if not questions:
        raise ConfigError(f"{path}: no questions selected (split {args.split})")
    out = Path(args.out)
    settings = run_settings(
        questions, chunk_ms=args.chunk_ms, final_delay_ms=args.final_delay_ms, deterministic=args.deterministic
    )
    progress = SpeakProgress.open(out, settings, questions, resume=args.resume)
    try:
        _speak_rest(progress, questions, args)
    except KeyboardInterrupt:
        progress.close()
        print(
            f"streamrag speak: {len(progress.spoken)} of {len(questions)} questions are kept in {progress.path}; "
            "the same command with --resume continues",
            file=sys.stderr,
        )
        raise
    _write_outputs(progress, out, path, args)
    progress.finish()
    return 0


def _speak_rest(progress: SpeakProgress, questions: list[tuple[str, str]], args: argparse.Namespace) -> None:
    """Speak the questions after those ``progress`` holds, each kept as it is done."""
    from streamrag.base import progress as bars
    from streamrag.base.processes import worker_pool

    todo = questions[len(progress.spoken) :]
    if not todo:
        return
    init = (args.chunk_ms, args.final_delay_ms, args.deterministic)
    with bars.task_progress("speaking", len(questions)) as update:
        if args.jobs == 1:
            start_speaker(*init)
            results = (speak_one(qid, query) for qid, query in todo)
            _keep(progress, results, update)
            return
        pool = worker_pool(min(args.jobs, len(todo)), initializer=start_speaker, initargs=init)
        try:
            _keep(progress, pool.map(speak_one, *zip(*todo, strict=True)), update)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def _keep(
    progress: SpeakProgress,
    results: Iterable[tuple[SpokenQuestion, float, float]],
    update: Callable[[int], object] | None,
) -> None:
    for spoken, cpu_s, loaded_cpu_s in results:
        if loaded_cpu_s:
            progress.loaded(loaded_cpu_s)
        progress.add(spoken, cpu_s)
        if update is not None:
            update(len(progress.spoken))


def _write_outputs(progress: SpeakProgress, out: Path, path: Path, args: argparse.Namespace) -> None:
    from streamrag.base.atomic import write_text_atomic
    from streamrag.data.human.speech import spoken_summary

    spoken = progress.spoken
    cpu_s = progress.cpu_s
    heard = [s for s in spoken if s.hypotheses]
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


# One speaker per worker process (``speak --jobs N``), loaded by the pool's initializer.
_worker_speaker: list[Any] = []
_worker_load_cpu_s: list[float] = []


def start_speaker(chunk_ms: float, final_delay_ms: float, deterministic: bool) -> None:
    """A worker's initializer: load its voice and recognizer once."""
    from streamrag.data.human.speech import Speaker
    from streamrag.engine.clock import process_cpu_s

    cpu0 = process_cpu_s()
    _worker_speaker[:] = [Speaker(chunk_ms=chunk_ms, final_delay_ms=final_delay_ms, deterministic=deterministic)]
    _worker_load_cpu_s[:] = [process_cpu_s() - cpu0]


def speak_one(qid: str, query: str) -> tuple[SpokenQuestion, float, float]:
    """In a worker: the question spoken, its CPU seconds, and the worker's load cost the
    first time (0 after)."""
    from streamrag.engine.clock import process_cpu_s

    cpu0 = process_cpu_s()
    spoken = _worker_speaker[0].speak(qid, query)
    loaded = _worker_load_cpu_s[0] if _worker_load_cpu_s else 0.0
    _worker_load_cpu_s[:] = [0.0]
    return spoken, process_cpu_s() - cpu0, loaded
