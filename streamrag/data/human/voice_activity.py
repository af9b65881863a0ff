"""When the speaker is talking: a voice-activity detector run on a spoken question's audio.

A voice agent's endpointer does not read the transcript's timestamps: it listens to the
audio, and a voice-activity detector (VAD) tells speech from silence. ``streamrag speak``
runs Silero VAD (the ``silero-vad`` package, whose ONNX model ships in its wheel; nothing is
downloaded) on each question's synthesized audio and records its **speech segments**
``[[start_ms, end_ms], …]`` (audio time from the start of speech) beside the hypotheses.
The simulator's endpointer (:mod:`streamrag.engine.endpoint`) then takes its silences from
the gaps between segments and the end of speech from the last segment's end.

The detector runs at the package's documented defaults of ``get_speech_timestamps``
(:data:`VAD_SETTINGS`: speech probability threshold 0.5, segments of at least 250 ms,
silences of at least 100 ms), except one: no padding (``speech_pad_ms = 0``; the default
30 ms widens every segment on both sides to keep word edges when audio is cut, and would
shorten every silence an endpointer measures by 60 ms). A silence shorter than
``min_silence_duration_ms`` does not split a segment, so the recorded silences are all at
least that long; an endpointer timeout shorter than it is refused on spoken input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streamrag.base.errors import ConfigError

RATE_HZ = 16_000
"""The detector's sampling rate (the recognizer's, :data:`~streamrag.data.human.speech.RECOGNIZER_RATE_HZ`)."""

VAD_SETTINGS: dict[str, Any] = {
    "model": "silero-vad (ONNX)",
    "threshold": 0.5,
    "min_speech_duration_ms": 250,
    "min_silence_duration_ms": 100,
    "speech_pad_ms": 0,
}
"""The detector and its ``get_speech_timestamps`` settings, recorded in each ``speak`` run's
settings (a resumed run must share them)."""

MIN_SILENCE_MS = float(VAD_SETTINGS["min_silence_duration_ms"])
"""The shortest silence the recorded segments can show."""


class VoiceActivity:
    """Silero VAD, loaded once (the model's session; torch is imported here, not at start-up)."""

    def __init__(self) -> None:
        try:
            from silero_vad import get_speech_timestamps, load_silero_vad
        except ImportError as exc:
            raise ConfigError(
                f"the speech extra's voice-activity detector is not installed (pip install -e '.[speech]'): {exc}"
            ) from None
        self._model = load_silero_vad(onnx=True)
        self._timestamps = get_speech_timestamps

    def segments_ms(self, pcm: np.ndarray) -> tuple[tuple[float, float], ...]:
        """The speech segments of ``pcm`` (16 kHz mono int16): ``(start_ms, end_ms)``, in order,
        disjoint; empty when the detector hears no speech."""
        import torch

        if len(pcm) == 0:
            return ()
        audio = torch.from_numpy(pcm.astype(np.float32) / 32768.0)
        settings = {k: v for k, v in VAD_SETTINGS.items() if k != "model"}
        found = self._timestamps(audio, self._model, sampling_rate=RATE_HZ, **settings)
        return tuple((s["start"] * 1000 / RATE_HZ, s["end"] * 1000 / RATE_HZ) for s in found)
