"""A question replayed: its plan drawn, then replayed alone on unlimited capacity without the event loop.

- :mod:`~streamrag.simulator.replay.planning` — a question's plan (word arrivals, end of
  turn, stage latencies) drawn from its random streams and the settings it reads, and kept
  for the runs that share them (every route, the engine's and the load's too, draws here);
- :mod:`~streamrag.simulator.replay.closed_form` — which route replays a scenario (the
  closed form, or the event engine where it has none) and the closed form's rows;
- :mod:`~streamrag.simulator.replay.closed` — one question's two arms from one heap,
  driving the streaming arm's machine;
- :mod:`~streamrag.simulator.replay.fold` — a question's trace folded into its result row.
"""
