"""``streamrag speak QUESTIONS --out H.jsonl``: questions spoken by an offline voice and
heard by an offline streaming recognizer, written as timed partial hypotheses
(standard-library imports only at top level)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from streamrag.data.human.speech import Speaker
    from streamrag.data.human.speech_progress import SpeakProgress
    from streamrag.data.human.spoken import SpokenQuestion

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
at its audio time (t_ms) and at the time the recognizer had produced it, fed at real-time
pace (available_ms: audio time plus the measured compute delay); the last one is the final
transcript. The output is the format `analyze --asr-hypotheses` and `data.asr.kind =
"file"` read (`--asr-timing` / `data.asr.timing` pick the time), plus per line the
question, the final transcript, the audio length and the word edits against the question.
A summary (WER, hypotheses, revisions, revokes per second, edit overhead, first partial,
and under "compute" the CPU seconds per audio second by phase and the compute delays)
goes to stdout and OUT.summary.json. The available times are measurements of this machine:
unlike the audio times, they differ from run to run.

A question without a word the recognizer can write (only punctuation, emoji, another
script) or of over 200 words is skipped; each reason is one line on stderr, and the
summary counts and lists them. The voice's noise is drawn per question from --seed and its
id, so one seed writes the same hypotheses and audio times in one process or in --jobs N
(the available times, measured, differ).

A long run keeps each question as it is heard in OUT.partial; after Ctrl-C, SIGTERM or a
kill, the same command with --resume speaks only the rest (OUT is written when all are
done, the hypotheses an uninterrupted run writes). An existing OUT is refused unless
--force replaces it; --resume on a finished OUT of the same settings has nothing to do.
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
        help="the voice without its random noise (Piper's noise_scale and noise_w_scale 0): flatter prosody, "
        "the same file whatever --seed; by default each question's noise is drawn from --seed and its id",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the voice's noise, drawn per question with its id: one seed, one file (default 0)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the unfinished run whose progress file (OUT.partial) is beside OUT (same settings); "
        "nothing to do when OUT is that run finished",
    )
    p.add_argument("--force", action="store_true", help="replace a finished OUT (refused otherwise)")
    p.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="speak in N processes, the same hypotheses as one (default 1)"
    )
    p.set_defaults(run=run)


class Skipped(NamedTuple):
    """A selected question that is not spoken, and why (:func:`~streamrag.data.human.spoken.unspeakable`)."""

    line_no: int
    interaction_id: str
    reason: str


def _questions(path: Path, split: str, limit: int | None) -> tuple[list[tuple[str, str]], list[Skipped]]:
    """The first ``limit`` questions of ``split``: those to speak, and those skipped (they
    count towards ``limit``: the same questions ``analyze --limit`` reads)."""
    from streamrag.base.errors import RecordError
    from streamrag.base.lines import iter_question_objects
    from streamrag.data.human.spoken import unspeakable

    spoken: list[tuple[str, str]] = []
    skipped: list[Skipped] = []
    for line_no, qid, obj in iter_question_objects(path):
        query = obj.get("query")
        if not isinstance(query, str):
            problem = "missing" if query is None else f"expected a string, got {type(query).__name__}"
            raise RecordError(str(path), line_no, "query", f"{problem} (the question to speak)")
        if split != "all" and str(obj.get("split")) != split:
            continue
        reason = unspeakable(query)
        if reason is None:
            spoken.append((qid, query))
        else:
            skipped.append(Skipped(line_no, qid, reason))
        if limit is not None and len(spoken) + len(skipped) >= limit:
            break
    return spoken, skipped


def _lines_by_reason(skipped: list[Skipped]) -> dict[str, list[int]]:
    by_reason: dict[str, list[int]] = {}
    for s in skipped:
        by_reason.setdefault(s.reason, []).append(s.line_no)
    return by_reason


def _some(line_nos: list[int], most: int = 5) -> str:
    """``line 3`` / ``lines 3, 7, 9 and 4 more``."""
    shown = ", ".join(map(str, line_nos[:most]))
    more = f" and {len(line_nos) - most} more" if len(line_nos) > most else ""
    return f"line{'s' if len(line_nos) > 1 else ''} {shown}{more}"


def _say_skipped(path: Path, skipped: list[Skipped]) -> None:
    """One line per skip reason: how many, and on which lines of the questions file."""
    from streamrag.commands._logging import say

    for reason, line_nos in _lines_by_reason(skipped).items():
        n = len(line_nos)
        say(
            f"{path}: skipped {n} question{'s' if n != 1 else ''} whose field 'query' has {reason} ({_some(line_nos)})",
            event="questions skipped",
            n_questions=n,
            reason=reason,
            lines=line_nos,
        )


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError
    from streamrag.data.demo import demo_path
    from streamrag.data.human.speech import speech_available
    from streamrag.data.human.speech_progress import SpeakProgress, finished_run, run_settings

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit: {args.limit} is not a positive count")
    if args.jobs < 1:
        raise ConfigError(f"--jobs: {args.jobs} is not a positive count")
    missing = speech_available()
    if missing is not None:
        raise ConfigError(missing)
    path = demo_path() if args.questions == "demo" else Path(args.questions)
    questions, skipped = _questions(path, args.split, args.limit)
    if not questions and skipped:
        why = "; ".join(f"{reason} on {_some(lines)}" for reason, lines in _lines_by_reason(skipped).items())
        raise ConfigError(f"{path}: no selected question can be spoken (field 'query': {why})")
    if not questions:
        raise ConfigError(f"{path}: no questions selected (split {args.split})")
    out = Path(args.out)
    settings = run_settings(
        questions,
        chunk_ms=args.chunk_ms,
        final_delay_ms=args.final_delay_ms,
        deterministic=args.deterministic,
        seed=args.seed,
    )
    if finished_run(out, settings, resume=args.resume, force=args.force):
        n = len(questions)
        print(f"{out}: done ({n} question{'s' if n != 1 else ''} spoken with these settings); nothing to resume")
        return 0
    _say_skipped(path, skipped)
    progress = SpeakProgress.open(out, settings, questions, resume=args.resume)
    try:
        _speak_rest(progress, questions, args)
    except KeyboardInterrupt:
        print(
            f"streamrag speak: {len(progress.spoken)} of {len(questions)} questions are kept in {progress.path}; "
            "the same command with --resume continues",
            file=sys.stderr,
        )
        raise
    finally:
        progress.close()  # what is kept stays on disk for --resume, whatever ended the run
    _write_outputs(progress, skipped, out, path, args)
    return 0


def _speak_rest(progress: SpeakProgress, questions: list[tuple[str, str]], args: argparse.Namespace) -> None:
    """Speak the questions after those ``progress`` holds, each kept as it is done."""
    from streamrag.base import progress as bars
    from streamrag.base.system.processes import worker_pool

    todo = questions[len(progress.spoken) :]
    if not todo:
        return
    init = (args.chunk_ms, args.final_delay_ms, args.deterministic, args.seed)
    with bars.task_progress("speaking", len(questions)) as update:
        if args.jobs == 1:
            speaker, load_cpu_s = _load_speaker(*init)
            results = (_spoken_by(speaker, qid, query, load_cpu_s if i == 0 else 0.0) for i, (qid, query) in enumerate(todo))
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


def _write_outputs(progress: SpeakProgress, skipped: list[Skipped], out: Path, path: Path, args: argparse.Namespace) -> None:
    """The output, its summary, then the progress file removed. Both texts are made before
    anything is written, so a run either ends complete or keeps its progress file."""
    from streamrag.base.atomic import write_text_atomic
    from streamrag.data.human.speech_progress import summary_path
    from streamrag.data.human.spoken import compute_summary, spoken_summary

    spoken = progress.spoken
    cpu_s = progress.cpu_s
    audio_s = sum(s.audio_ms for s in spoken) / 1000
    heard = [s for s in spoken if s.hypotheses]
    lines = "".join(json.dumps(s.record(), ensure_ascii=False) + "\n" for s in heard)
    summary = spoken_summary(spoken) | {
        "n_skipped": len(skipped),
        "skipped": [{"line": s.line_no, "interaction_id": s.interaction_id, "reason": s.reason} for s in skipped],
        "questions_file": str(path),
        "chunk_ms": args.chunk_ms,
        "cpu_s": round(cpu_s, 2),
        "cpu_s_per_audio_s": round(cpu_s / audio_s, 3) if audio_s > 0 else None,
        "compute": compute_summary(spoken, progress.load_cpu_s),
        "settings": progress.settings,
    }
    summary_text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    said = _summary_line(summary, cpu_s, out)
    write_text_atomic(out, lines)
    write_text_atomic(summary_path(out), summary_text)
    progress.finish()
    print(said)
    sys.stdout.flush()


def _summary_line(summary: dict[str, Any], cpu_s: float, out: Path) -> str:
    """The run in one line; a figure without a denominator (None) reads ``n/a``."""

    def share(value: float | None, spec: str) -> str:
        return "n/a" if value is None else format(value, spec)

    skipped = f"; {summary['n_skipped']} skipped" if summary["n_skipped"] else ""
    compute = summary["compute"]
    delay = "n/a" if compute["delay_ms_median"] is None else f"{compute['delay_ms_median']:.0f} ms"
    return (
        f"{summary['n_questions']} questions, {summary['audio_s']:.1f} s of audio, {cpu_s:.1f} s CPU "
        f"(decoding {share(compute['decode_cpu_s_per_audio_s'], '.3f')} per audio s, compute delay median {delay}); "
        f"WER {share(summary['wer'], '.3f')}, {summary['n_final_differs']} final transcripts differ from the question; "
        f"{share(summary['revokes_per_s'], '.2f')} revokes/s; "
        f"{summary['n_hypotheses']} hypotheses, {share(summary['revised_share'], '.0%')} revised; "
        f"{summary['n_unheard']} heard nothing{skipped} → {out}"
    )


def _load_speaker(chunk_ms: float, final_delay_ms: float, deterministic: bool, seed: int) -> tuple[Speaker, float]:
    """A voice and recognizer, loaded (the costly part), and the CPU seconds that took."""
    from streamrag.data.human.speech import Speaker
    from streamrag.engine.clock import process_cpu_s, thread_cpu_s

    cpu0 = process_cpu_s()
    speaker = Speaker(
        chunk_ms=chunk_ms,
        final_delay_ms=final_delay_ms,
        deterministic=deterministic,
        seed=seed,
        step_clock=thread_cpu_s,
        cpu_clock=process_cpu_s,
    )
    return speaker, process_cpu_s() - cpu0


def _spoken_by(speaker: Speaker, qid: str, query: str, loaded_cpu_s: float) -> tuple[SpokenQuestion, float, float]:
    """The question spoken, its CPU seconds, and ``loaded_cpu_s`` passed on (the load's cost, once)."""
    from streamrag.engine.clock import process_cpu_s

    cpu0 = process_cpu_s()
    spoken = speaker.speak(qid, query)
    return spoken, process_cpu_s() - cpu0, loaded_cpu_s


# One speaker per worker process (``speak --jobs N``), loaded by the pool's initializer.
# A one-process run keeps its speaker local instead: a forked worker would inherit it, and
# freeing an inherited onnxruntime session waits for the parent's kernel threads, which a
# fork does not copy (the worker hung for good). ``_inherited`` holds, never to free them,
# speakers a worker finds here anyway (forked from a process that loaded one by this module).
_worker_speaker: list[Any] = []
_worker_load_cpu_s: list[float] = []
_inherited: list[Any] = []


def start_speaker(chunk_ms: float, final_delay_ms: float, deterministic: bool, seed: int) -> None:
    """A worker's initializer: load its voice and recognizer once."""
    _inherited.extend(_worker_speaker)
    speaker, load_cpu_s = _load_speaker(chunk_ms, final_delay_ms, deterministic, seed)
    _worker_speaker[:] = [speaker]
    _worker_load_cpu_s[:] = [load_cpu_s]


def speak_one(qid: str, query: str) -> tuple[SpokenQuestion, float, float]:
    """In a worker: the question spoken, its CPU seconds, and the worker's load cost the
    first time (0 after)."""
    loaded = _worker_load_cpu_s[0] if _worker_load_cpu_s else 0.0
    _worker_load_cpu_s[:] = [0.0]
    return _spoken_by(_worker_speaker[0], qid, query, loaded)
