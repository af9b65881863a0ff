"""Spoken questions as data: which questions are spoken, the record of one spoken and
heard (a line of the hypotheses file), its word error rate, and the corpus summaries.
The voice and the recognizer that make them are :mod:`streamrag.data.human.speech`'s.

**What is spoken.** A question is spoken when it has a word a recognizer can write (a-z,
0-9: :func:`normalized_words`) and at most :data:`MAX_UTTERANCE_WORDS` of them;
:func:`unspeakable` gives the reason for the others, which a run skips and counts.

Output: the hypotheses file that ``analyze --asr-hypotheses`` and ``data.asr.kind =
"file"`` read (:mod:`streamrag.data.human.hypotheses_file`), one line per question, with the audio
length and the transcript's word error rate beside the hypotheses; each hypothesis has
its audio time ``t_ms`` and its ``available_ms`` (``data.asr.timing`` picks one;
:func:`~streamrag.data.human.speech.available_times`). :func:`word_error_rate` compares
the final transcript with the question (both lower-cased, punctuation removed: the
recognizer writes neither). :func:`spoken_summary` gives the corpus figures that depend
only on the audio (WER, revisions, :mod:`~streamrag.data.human.incremental`'s measures on
audio times); :func:`compute_summary` those measured on this machine (CPU per audio second
by phase, compute delays, first partials as available).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from streamrag.data.human.asr import Hypotheses

_WORD = re.compile(r"[a-z0-9']*[a-z0-9][a-z0-9']*")  # a lone apostrophe is no word

MAX_UTTERANCE_WORDS = 200
"""The most words a question may have to be spoken: five times the longest question of the
CRAG v4 list (40 words). A longer text is a pasted passage, not an utterance, and would cost the audio and recognition
of many questions."""

NO_WORDS = "no speakable words"
"""The skip reason of a question without a word the recognizer can write (only
punctuation, emoji or a script other than Latin: its WER has no reference words)."""
TOO_LONG = f"over {MAX_UTTERANCE_WORDS} words"
"""The skip reason of a question longer than :data:`MAX_UTTERANCE_WORDS`."""


def normalized_words(text: str) -> list[str]:
    """Lower-cased words without punctuation: what a recognizer's transcript can match."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def unspeakable(query: str) -> str | None:
    """Why ``query`` is not spoken (:data:`NO_WORDS`, :data:`TOO_LONG`), or None."""
    n_words = len(normalized_words(query))
    if n_words == 0:
        return NO_WORDS
    if n_words > MAX_UTTERANCE_WORDS:
        return TOO_LONG
    return None


def word_error_rate(reference: str, hypothesis: str) -> tuple[int, int]:
    """``(edits, reference words)``: the word-level Levenshtein distance between the
    normalized texts (substitutions + deletions + insertions) and the reference's length.
    WER = edits / reference words (summed over questions for a corpus WER)."""
    ref, hyp = normalized_words(reference), normalized_words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1], len(ref)


class SpeechCost(NamedTuple):
    """One question's CPU seconds, by phase (``time.process_time`` around each), and the
    decoding thread's own (``time.thread_time`` summed over steps: the delays' costs)."""

    voice_cpu_s: float
    """Building the voice's graph seeded for the question (none when deterministic)."""
    synthesis_cpu_s: float
    decode_cpu_s: float
    decode_thread_cpu_s: float
    vad_cpu_s: float = 0.0
    """The voice-activity detector on the question's audio (0 in a record made before it ran)."""


@dataclass(frozen=True, slots=True)
class SpokenQuestion:
    """One question spoken and recognized."""

    interaction_id: str
    query: str
    hypotheses: tuple[tuple[float, str], ...]
    """``(t_ms, text)`` of each hypothesis change; the last is the final transcript."""
    audio_ms: float
    edits: int
    ref_words: int
    available_ms: tuple[float, ...] | None = None
    """When each hypothesis was available (:func:`~streamrag.data.human.speech.available_times`); None: not measured
    (a run before these were recorded)."""
    cost: SpeechCost | None = None
    speech_ms: tuple[tuple[float, float], ...] | None = None
    """The voice-activity detector's speech segments ``(start_ms, end_ms)`` in audio time
    (:mod:`~streamrag.data.human.voice_activity`); None: not detected (a record made before)."""

    def record(self) -> dict[str, Any]:
        """The line of the hypotheses file."""
        shown = [{"t_ms": round(t, 1), "text": text} for t, text in self.hypotheses]
        if self.available_ms is not None:
            shown = [
                {"t_ms": h["t_ms"], "available_ms": round(a, 1), "text": h["text"]}
                for h, a in zip(shown, self.available_ms, strict=True)
            ]
        return {
            "interaction_id": self.interaction_id,
            "hypotheses": shown,
            "query": self.query,
            "final": self.hypotheses[-1][1] if self.hypotheses else "",
            "audio_ms": round(self.audio_ms, 1),
            "word_edits": self.edits,
            "question_words": self.ref_words,
            **({} if self.speech_ms is None else {"speech_ms": [[round(a, 1), round(b, 1)] for a, b in self.speech_ms]}),
        }

    def heard(self) -> Hypotheses:
        """The hypotheses as the output file holds them (times rounded as :meth:`record`
        writes them), for a reader of a run's progress file before its output exists."""
        from streamrag.data.human.asr import hypotheses_of

        record = self.record()
        items = record["hypotheses"]
        available = [h["available_ms"] for h in items] if self.available_ms is not None else None
        speech = None if self.speech_ms is None else [tuple(s) for s in record["speech_ms"]]
        return hypotheses_of([tuple(h["text"].split()) for h in items], [h["t_ms"] for h in items], available, speech)


def spoken_summary(spoken: list[SpokenQuestion]) -> dict[str, Any]:
    """Corpus figures that depend only on the audio: WER (edits summed over reference words
    summed), transcripts that differ from the question, hypotheses, the share of hypotheses a
    later one revised (not a word prefix of the final transcript:
    :func:`~streamrag.data.human.asr.hypotheses_of`), and the incremental measures on audio
    times (:mod:`~streamrag.data.human.incremental`; the input seconds are the audio's).

    A figure without a denominator is None, never 0: ``wer`` without reference words,
    ``revised_share`` without hypotheses, ``revisions_per_question`` when nothing was heard."""
    from streamrag.data.human.asr import hypotheses_of
    from streamrag.data.human.incremental import corpus_measures

    heard = [s for s in spoken if s.hypotheses]
    n_hyp = n_revised = n_events = 0
    for s in heard:
        h = hypotheses_of([tuple(text.split()) for _, text in s.hypotheses])
        n_hyp += len(h.words)
        n_revised += sum(h.revised)
        n_events += h.n_revisions
    edits = sum(s.edits for s in spoken)
    ref_words = sum(s.ref_words for s in spoken)
    differs = sum(1 for s in spoken if not s.hypotheses or normalized_words(s.hypotheses[-1][1]) != normalized_words(s.query))
    measures = corpus_measures([_measures(s) for s in heard])
    del measures["first_partial_available_ms_median"]  # measured: compute_summary
    return {
        "n_questions": len(spoken),
        "n_unheard": len(spoken) - len(heard),
        "audio_s": round(sum(s.audio_ms for s in spoken) / 1000, 2),
        "wer": edits / ref_words if ref_words else None,
        "n_final_differs": differs,
        "n_hypotheses": n_hyp,
        "revised_share": n_revised / n_hyp if n_hyp else None,
        "revisions_per_question": n_events / len(heard) if heard else None,
        **measures,
    }


def _measures(s: SpokenQuestion) -> Any:
    from streamrag.data.human.incremental import question_measures

    shown = [tuple(text.split()) for _, text in s.hypotheses]
    return question_measures(shown, [t for t, _ in s.hypotheses], s.audio_ms, s.available_ms)


def _per_audio_s(cpu_s: float, audio_s: float) -> float | None:
    return round(cpu_s / audio_s, 4) if audio_s > 0 else None


def compute_summary(spoken: list[SpokenQuestion], load_cpu_s: float) -> dict[str, Any]:
    """What this machine measured (it varies from run to run; :func:`spoken_summary` does
    not): CPU seconds by phase (:class:`SpeechCost`) and per audio second, over the
    questions whose costs were measured (``n_measured``; a resumed run's older questions may
    lack them), ``load_cpu_s`` (voices and recognizers loaded), and the compute delay
    ``available_ms − t_ms`` of every hypothesis (median, p90, max) and the first partial as
    available (median over questions). None where nothing was measured."""
    from streamrag.data.human.incremental import corpus_measures

    measured = [s for s in spoken if s.cost is not None]
    audio_s = sum(s.audio_ms for s in measured) / 1000
    phases = {name: sum(getattr(s.cost, name) for s in measured) for name in SpeechCost._fields}
    delays = np.array(
        [a - t for s in spoken if s.available_ms is not None for (t, _), a in zip(s.hypotheses, s.available_ms, strict=True)]
    )
    timed = [s for s in spoken if s.hypotheses and s.available_ms is not None]
    first = corpus_measures([_measures(s) for s in timed])["first_partial_available_ms_median"]

    def delay(q: float) -> float | None:
        return round(float(np.percentile(delays, q)), 1) if delays.size else None

    total = sum(phases.values()) - phases["decode_thread_cpu_s"]  # the thread's CPU is inside decode_cpu_s
    return {
        "clock": "process CPU time by phase (time.process_time); delays from the decoding thread's (time.thread_time)",
        "n_measured": len(measured),
        "audio_s": round(audio_s, 2),
        "load_cpu_s": round(load_cpu_s, 2),
        **{name: round(value, 2) for name, value in phases.items()},
        **{name.replace("cpu_s", "cpu_s_per_audio_s"): _per_audio_s(value, audio_s) for name, value in phases.items()},
        "cpu_s_per_audio_s": _per_audio_s(total, audio_s),
        "delay_ms_median": delay(50),
        "delay_ms_p90": delay(90),
        "delay_ms_max": delay(100),
        "first_partial_available_ms_median": None if first is None else round(first, 1),
    }
