"""Calibration: from measured durations to a latency profile (``streamrag calibrate``).

Profiling → latency model → simulator are separate layers: this package sits between
the user's measurements and the kernel's latency models
(:mod:`streamrag.engine.latency`); it imports only the base layer and the kernel.

- :mod:`~streamrag.calibration.measurements` — read durations per stage: a CSV or JSON
  lines of ``stage, duration_ms`` (optionally ``timestamp``), or a trace export;
- :mod:`~streamrag.calibration.exports` — OTLP JSON and Jaeger JSON read into spans;
- :mod:`~streamrag.calibration.spans` — which spans are which stage: rules by name,
  attributes and position in a turn, per-tool stages, duplicates and failed spans;
- :mod:`~streamrag.calibration.fit` — fit log-normal, gamma and Weibull by maximum
  likelihood and the empirical quantiles with a generalized-Pareto tail; choose by AIC,
  test by KS; warn when a sample is too small for its tail;
- :mod:`~streamrag.calibration.profile` — the profile TOML with its provenance;
- :mod:`~streamrag.calibration.figure` — empirical CDF and QQ plots against the fits.

This package imports nothing at import time.

``figure.py`` is this package's one figure, as ``sweep/frontier/figure.py`` is the
frontier's: each folder says whose figure it is.
"""
