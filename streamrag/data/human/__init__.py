"""Real people as input: typed and spoken questions, and the input models fitted to them.

- :mod:`~streamrag.data.human.keystrokes` — keystroke logs (136M Keystrokes), read and checked;
- :mod:`~streamrag.data.human.typed` — a question typed the way a logged participant types;
- :mod:`~streamrag.data.human.backspace_runs` — backspace runs: where they start, how far back, what is retyped;
- :mod:`~streamrag.data.human.speech`, :mod:`~streamrag.data.human.spoken` and
  :mod:`~streamrag.data.human.speech_progress` — spoken questions, offline: the voice and
  the recognizer; which questions are spoken, their records and summaries; resumable runs;
- :mod:`~streamrag.data.human.voice_activity` — the speech segments a voice-activity detector finds in the audio;
- :mod:`~streamrag.data.human.asr` — partial hypotheses and the settings of each input kind, and the revision model;
- :mod:`~streamrag.data.human.hypotheses_file` — recorded hypotheses read from a file, and one question's from any source;
- :mod:`~streamrag.data.human.incremental` — incremental-recognition measures (revokes per second, edit overhead, …);
- :mod:`~streamrag.data.human.input_fit` — the input models fitted to both, checked on held-out data;
- :mod:`~streamrag.data.human.typed_validate` — ``fit-input --validate``: the typed model checked on other people's logs.
"""
