"""Views of a run's trace, each drawn from the spans and instants of
:func:`streamrag.simulator.views.traceview.spans_and_instants`:

- :mod:`~streamrag.simulator.views.traceview` — one question's trace as spans and instants
  on lanes, what every view draws;
- :mod:`~streamrag.simulator.views.terminal_view` — a Gantt strip per lane and the event
  table, printed (rich);
- :mod:`~streamrag.simulator.views.gantt` — the Gantt-like figure (PNG, PDF, SVG);
- :mod:`~streamrag.simulator.views.perfetto` — Chrome/Perfetto trace-event JSON (one
  question; :mod:`~streamrag.simulator.views.runtrace` reads a whole run's trace and
  merges many questions into one file);
- :mod:`~streamrag.simulator.views.untraced` — why a run's trace has no events for an id.

One sub-package because every module here reads a finished trace and none is on the path
that writes one: ``streamrag trace``, ``report``, ``demo`` and :mod:`streamrag.plots` import
them, a run never does.

This package imports nothing at import time.
"""
