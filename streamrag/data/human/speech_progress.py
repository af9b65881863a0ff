"""A long ``speak`` run that survives its interruption: every question is kept as it is heard.

Speaking all 2,706 CRAG v4 questions takes one to two hours of CPU. So that Ctrl-C,
SIGTERM, kill -9 or a reboot loses at most the question being spoken, each finished
question is appended to a *progress file* beside the output (``OUT.partial``) and
flushed to disk before the next one starts. ``speak --resume`` reads it back and speaks
only the questions after it; the output and its summary are written (atomically) only
when every question is done, from the same records an uninterrupted run would hold, so
the file holds the same hypotheses and audio times either way; the available times,
measurements, differ for the questions spoken after the resume.

The file is JSON lines: a header with the run's settings — the spoken questions'
digest, ``chunk_ms``, ``final_delay_ms``, ``deterministic``, ``seed`` — that a resume must match,
then one line per question (full-precision times, so that nothing a summary reads is
rounded twice; its available times and CPU seconds by phase, where measured) or per
recognizer load (its CPU seconds, part of the run's cost). A last line cut by a kill is
dropped on resume (its question is spoken again). A line without available times or
phases (written before they were measured) is read as unmeasured.

A *finished* run is its output with the summary beside it (``OUT.summary.json``), which
records the same settings: :func:`finished_run` decides what a new command does with it —
``--resume`` with the same settings has nothing left to do; with other settings, or
without ``--resume``, the output is kept unless ``--force`` replaces it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from streamrag.base.errors import ConfigError, RecordError
from streamrag.data.human.spoken import SpeechCost, SpokenQuestion
from streamrag.data.human.voice_activity import VAD_SETTINGS

PROGRESS_VERSION = 1


def progress_path(out: Path) -> Path:
    """The progress file of the output ``out``."""
    return out.with_name(out.name + ".partial")


def summary_path(out: Path) -> Path:
    """The summary of the output ``out`` (written with it, the finished run's settings inside)."""
    return out.with_name(out.name + ".summary.json")


def selection_digest(questions: Sequence[tuple[str, str]]) -> str:
    """SHA-256 over the selected ``(interaction_id, query)`` pairs, in order."""
    h = hashlib.sha256()
    for qid, query in questions:
        h.update(json.dumps([qid, query], ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


def run_settings(
    questions: Sequence[tuple[str, str]], *, chunk_ms: float, final_delay_ms: float, deterministic: bool, seed: int
) -> dict[str, Any]:
    """What a resumed run must share with the run it continues: everything its output
    depends on (``questions``: those spoken, after the skipped ones are left out)."""
    return {
        "questions_sha256": selection_digest(questions),
        "n_questions": len(questions),
        "chunk_ms": chunk_ms,
        "final_delay_ms": final_delay_ms,
        "deterministic": deterministic,
        "seed": seed,
        "vad": VAD_SETTINGS,
    }


def settings_difference(recorded: Any, wanted: dict[str, Any]) -> str | None:
    """The first setting ``recorded`` (a progress header or a summary's ``settings``)
    holds otherwise than ``wanted``, worded for the user (``--chunk-ms: 100.0, now 50.0``),
    or None when they agree."""
    for key, want in wanted.items():
        had = recorded.get(key) if isinstance(recorded, dict) else None
        if had != want:
            what = (
                "the selected questions"
                if key in ("questions_sha256", "n_questions")
                else "the voice-activity detector"
                if key == "vad"
                else f"--{key.replace('_', '-')}"
            )
            return f"{what}: {had!r}, now {want!r}"
    return None


def finished_run(out: Path, settings: dict[str, Any], *, resume: bool, force: bool) -> bool:
    """Whether the finished output ``out`` already is this run's (``resume`` and the same
    settings: nothing to do). False when there is no finished output, an unfinished run's
    progress file is beside it (:meth:`SpeakProgress.open` decides), or ``force`` replaces
    it. Otherwise an existing output is refused (:class:`ConfigError`, one line), and kept."""
    if progress_path(out).exists() or not out.exists():
        return False
    recorded = _recorded_settings(out)
    difference = None if recorded is None else settings_difference(recorded, settings)
    if resume and recorded is not None and difference is None:
        return True
    if force:
        return False
    if not resume:
        raise ConfigError(f"{out}: a finished speak output is here: --force replaces it, or choose another --out")
    if recorded is None:
        raise ConfigError(
            f"{out}: finished by a run whose settings {summary_path(out).name} does not record, so --resume cannot "
            "tell it is this run's: --force replaces it, or choose another --out"
        )
    raise ConfigError(
        f"{out}: finished by a run with other settings ({difference}), so there is nothing to resume: "
        "rerun with its settings, --force to replace it, or choose another --out"
    )


def _recorded_settings(out: Path) -> dict[str, Any] | None:
    """The settings the summary of the finished output ``out`` records, or None."""
    try:
        recorded = json.loads(summary_path(out).read_text(encoding="utf-8")).get("settings")
    except (OSError, ValueError, AttributeError):
        return None
    return recorded if isinstance(recorded, dict) else None


def _spoken_line(s: SpokenQuestion, cpu_s: float) -> dict[str, Any]:
    line = {
        "interaction_id": s.interaction_id,
        "query": s.query,
        "hypotheses": [[t, text] for t, text in s.hypotheses],
        "audio_ms": s.audio_ms,
        "edits": s.edits,
        "ref_words": s.ref_words,
        "cpu_s": cpu_s,
    }
    if s.available_ms is not None:
        line["available_ms"] = list(s.available_ms)
    if s.cost is not None:
        line["cost"] = s.cost._asdict()
    if s.speech_ms is not None:
        line["speech_ms"] = [list(seg) for seg in s.speech_ms]
    return line


def _spoken_of(obj: dict[str, Any]) -> SpokenQuestion:
    hypotheses = tuple((float(t), str(text)) for t, text in obj["hypotheses"])
    available = obj.get("available_ms")
    if available is not None and len(available) != len(hypotheses):
        raise ValueError("available_ms: one per hypothesis")
    cost = obj.get("cost")
    speech = obj.get("speech_ms")
    return SpokenQuestion(
        str(obj["interaction_id"]),
        str(obj["query"]),
        hypotheses,
        float(obj["audio_ms"]),
        int(obj["edits"]),
        int(obj["ref_words"]),
        None if available is None else tuple(float(a) for a in available),
        None if cost is None else SpeechCost(**{name: float(cost[name]) for name in SpeechCost._fields if name in cost}),
        None if speech is None else tuple((float(a), float(b)) for a, b in speech),
    )


def _progress_lines(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """``(line_no, object)`` of the file's intact lines, the header first, and their byte
    length: a last line without its newline (a kill cut it short) is left out."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    intact = len(data) - len(lines[-1])  # the bytes up to the last newline
    name = str(path)
    out: list[tuple[int, dict[str, Any]]] = []
    for line_no, raw in enumerate(lines[:-1], 1):
        damaged = "the progress file is damaged; remove it to start again"
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            raise RecordError(name, line_no, "line", f"not JSON: {damaged}") from None
        if not isinstance(obj, dict):
            raise RecordError(name, line_no, "line", f"not a JSON object: {damaged}")
        out.append((line_no, obj))
    if not out:
        raise RecordError(name, 1, "header", "missing: the progress file is damaged; remove it to start again")
    return out, intact


def _spoken_or_error(name: str, line_no: int, obj: Any) -> tuple[SpokenQuestion, float]:
    try:
        return _spoken_of(obj), float(obj["cpu_s"])
    except (KeyError, TypeError, ValueError):
        raise RecordError(name, line_no, "line", "not a spoken question: the progress file is damaged") from None


def is_progress_file(path: Path) -> bool:
    """Whether ``path`` starts with a progress file's header (else it is, say, a finished output)."""
    with path.open("rb") as f:
        first = f.readline()
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(header, dict) and "speak_progress" in header


def read_spoken(path: Path) -> list[SpokenQuestion]:
    """The questions a progress file holds so far, in order, read only: a run that is
    still going, or was interrupted, can be looked at without touching it."""
    name = str(path)
    lines, _ = _progress_lines(path)
    header = lines[0][1]
    if header.get("speak_progress") != PROGRESS_VERSION:
        raise RecordError(name, 1, "speak_progress", f"not a speak progress file of version {PROGRESS_VERSION}")
    return [_spoken_or_error(name, line_no, obj)[0] for line_no, obj in lines[1:] if "loaded_cpu_s" not in obj]


class SpeakProgress:
    """The progress file of one ``speak`` run: what is done, and appending to it."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self.path = path
        self.settings = settings
        self.spoken: list[SpokenQuestion] = []
        self.cpu_s = 0.0
        self.load_cpu_s = 0.0
        """The part of ``cpu_s`` spent loading voices and recognizers."""
        self._file: IO[str] | None = None

    @classmethod
    def open(cls, out: Path, settings: dict[str, Any], questions: Sequence[tuple[str, str]], *, resume: bool) -> SpeakProgress:
        """A fresh progress file, or with ``resume`` the one an earlier run left (checked
        against ``settings`` and the selected questions). Without ``resume`` an existing
        progress file is refused: it holds work a new run would throw away."""
        path = progress_path(out)
        progress = cls(path, settings)
        if path.exists():
            if not resume:
                with path.open(encoding="utf-8") as f:
                    n_done = sum('"interaction_id"' in line for line in f)
                raise ConfigError(
                    f"{path}: an unfinished speak run is here (about {n_done} of its questions done): "
                    "--resume continues it, or remove the file to start again"
                )
            keep = progress._read(questions)
            with path.open("r+", encoding="utf-8") as f:  # drop a last line a kill cut short
                f.truncate(keep)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as f:
                f.write(json.dumps({"speak_progress": PROGRESS_VERSION} | settings, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
        progress._file = path.open("a", encoding="utf-8")
        return progress

    def _read(self, questions: Sequence[tuple[str, str]]) -> int:
        """Load the done questions; the byte length of the file's intact lines."""
        name = str(self.path)
        lines, intact = _progress_lines(self.path)
        self._check_header(lines[0][1], name)
        for line_no, obj in lines[1:]:
            if "loaded_cpu_s" in obj:
                self.cpu_s += float(obj["loaded_cpu_s"])
                self.load_cpu_s += float(obj["loaded_cpu_s"])
                continue
            spoken, cpu_s = _spoken_or_error(name, line_no, obj)
            i = len(self.spoken)
            if i >= len(questions) or (spoken.interaction_id, spoken.query) != questions[i]:
                raise RecordError(
                    name, line_no, "interaction_id", f"{spoken.interaction_id!r} is not question {i + 1} of this run"
                )
            self.spoken.append(spoken)
            self.cpu_s += cpu_s
        return intact

    def _check_header(self, obj: Any, name: str) -> None:
        if not isinstance(obj, dict) or obj.get("speak_progress") != PROGRESS_VERSION:
            raise RecordError(name, 1, "speak_progress", f"not a speak progress file of version {PROGRESS_VERSION}")
        difference = settings_difference(obj, self.settings)
        if difference is not None:
            raise ConfigError(
                f"{name}: the unfinished run used other settings ({difference}); "
                "rerun with the same ones, or remove the file to start again"
            )

    def _append(self, obj: dict[str, Any]) -> None:
        assert self._file is not None, "open() first"
        self._file.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def loaded(self, cpu_s: float) -> None:
        """A recognizer and voice were loaded at this CPU cost."""
        self.cpu_s += cpu_s
        self.load_cpu_s += cpu_s
        self._append({"loaded_cpu_s": cpu_s})

    def add(self, spoken: SpokenQuestion, cpu_s: float) -> None:
        """One more question done, on disk before this returns."""
        self.spoken.append(spoken)
        self.cpu_s += cpu_s
        self._append(_spoken_line(spoken, cpu_s))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def finish(self) -> None:
        """The run's outputs are written: the progress file goes."""
        self.close()
        self.path.unlink(missing_ok=True)
