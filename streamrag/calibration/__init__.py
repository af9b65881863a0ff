"""Calibration: from measured durations to a latency profile (``streamrag calibrate``).

Profiling → latency model → simulator are separate layers: this package sits between
the user's measurements and the kernel's latency models
(:mod:`streamrag.engine.latency`); it imports only the base layer and the kernel.

- :mod:`~streamrag.calibration.measurements` — read durations per stage: a CSV or JSON
  lines of ``stage, duration_ms`` (optionally ``timestamp``), or an OpenTelemetry span
  export (OTLP JSON) with span names mapped to stages;
- :mod:`~streamrag.calibration.fit` — fit log-normal and gamma by maximum likelihood and
  empirical quantiles to each stage, and choose by KS distance;
- :mod:`~streamrag.calibration.profile` — the profile TOML with its provenance;
- :mod:`~streamrag.calibration.figure` — empirical CDF and QQ plots against the fits.

This package imports nothing at import time.
"""
