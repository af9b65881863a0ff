"""Views of one question's trace, each drawn from the spans and instants of
:func:`streamrag.simulator.traceview.spans_and_instants`:

- :mod:`~streamrag.simulator.views.terminal_view` — a Gantt strip per lane and the event
  table, printed (rich);
- :mod:`~streamrag.simulator.views.gantt` — the Gantt-like figure (PNG, PDF, SVG);
- :mod:`~streamrag.simulator.views.perfetto` — Chrome/Perfetto trace-event JSON (one
  question; :mod:`streamrag.simulator.runtrace` merges many into one file).

This package imports nothing at import time.
"""
