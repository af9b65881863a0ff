"""A question replayed alone on unlimited capacity, without the event loop.

- :mod:`~streamrag.simulator.replay.closed_form` — which route replays a scenario (the
  closed form, or the event engine where it has none) and the closed form's rows;
- :mod:`~streamrag.simulator.replay.closed` — one question's two arms from one heap,
  driving the streaming arm's machine;
- :mod:`~streamrag.simulator.replay.fold` — a question's trace folded into its result row.
"""
