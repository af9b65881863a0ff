"""The fitted profile as TOML: the schema of ``calibration/profiles/*.toml`` plus provenance.

::

    name = "mine"
    description = "Fitted to m.csv by streamrag calibrate: L gamma (n = 500)"
    source = "m.csv"

    [stages.L]                       # what the simulator reads, as for built-in profiles
    kind = "gamma"
    shape = 4.1
    scale_ms = 147.2
    source = "m.csv, stage L: gamma, maximum likelihood, n = 500"

    [provenance]                     # how it was made
    input = "m.csv"                  # the path as given
    input_sha256 = "…"               # of the file's bytes
    input_format = "csv"             # csv | jsonl | otlp | jaeger
    min_n = 20
    alpha = 0.05
    tail_q = 0.9                     # the empirical model's tail threshold (see fit.py)
    streamrag_version = "0.1.0"
    spans = { … }                    # trace exports: rule → stage; turn; ignored_spans: name → count;
                                     # selection: duplicate_spans, excluded (stage → error/timeout), …

    [provenance.stages.L]
    n = 500
    chosen = "gamma"
    reason = "gamma: the smallest AIC of the parametric fits (…)"
    warning = "…"                    # a sample too small for its tail (P99 not measured)
    ks_critical = 0.0607
    min_ms, median_ms, p90_ms, max_ms, first_timestamp, last_timestamp

    [provenance.stages.L.candidates.lognormal]   # and .gamma, .weibull, .quantiles
    ks = 0.071
    aic = 6402.3
    mu = 6.3
    sigma = 0.51

The file is written atomically and read back through the profile loader before it
replaces anything, so what is written always loads. Same input, same bytes: there is
no creation time (the input's hash identifies the data).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from streamrag.base.atomic import write_text_atomic
from streamrag.base.config.tomlfile import dumps_toml, parse_toml
from streamrag.calibration.fit import ALPHA, MIN_N, PARAMETRIC, SUPPORT_MIN_ABOVE, TAIL_MIN_EXCEEDANCES, TAIL_Q, StageFit
from streamrag.calibration.measurements import Measurements
from streamrag.engine.latency import QuantileLatency
from streamrag.engine.profiles import validate_profile

HEADER = "# Fitted by `streamrag calibrate`; regenerate it rather than edit it ([provenance] says from what).\n"


def profile_tables(
    meas: Measurements, fits: Sequence[StageFit], *, name: str, description: str | None, min_n: int
) -> dict[str, Any]:
    """The profile's tables (stages in the measurements' order)."""
    from streamrag.base.version import __version__

    label = meas.path.name
    summary = ", ".join(f"{f.stage} {f.chosen} (n = {f.n})" for f in fits)
    stages: dict[str, Any] = {}
    prov_stages: dict[str, Any] = {}
    for fit in fits:
        how = "constant: all durations equal" if fit.chosen == "constant" else f"{fit.chosen}"
        if fit.chosen in PARAMETRIC:
            how += ", maximum likelihood"
        elif isinstance(fit.model, QuantileLatency) and fit.model.tail is not None:
            how += f" to P{round(100 * fit.model.tail.q)}, generalized-Pareto tail by moments"
        source = f"{label}, stage {fit.stage}: {how}, n = {fit.n}"
        # exclude_none: TOML has no null (a quantiles model without a tail leaves it out)
        stages[fit.stage] = fit.model.model_copy(update={"source": source}).model_dump(mode="json", exclude_none=True)
        prov_stages[fit.stage] = _stage_provenance(meas, fit)
    provenance: dict[str, Any] = {
        "input": str(meas.path),
        "input_sha256": meas.sha256,
        "input_format": meas.format,
        "min_n": min_n,
        "alpha": ALPHA,
        "tail_q": TAIL_Q,
        "tail_min_exceedances": TAIL_MIN_EXCEEDANCES,
        "support_min_above": SUPPORT_MIN_ABOVE,
        "streamrag_version": __version__,
    }
    if meas.spans:
        provenance["spans"] = dict(meas.spans)
        if meas.turn is not None:
            provenance["turn"] = meas.turn
        provenance["ignored_spans"] = dict(meas.ignored_spans)
        provenance["selection"] = dict(meas.selection)
    provenance["stages"] = prov_stages
    return {
        "name": name,
        "description": description or f"Fitted to {label} by streamrag calibrate: {summary}",
        "source": label,
        "stages": stages,
        "provenance": provenance,
    }


def _stage_provenance(meas: Measurements, fit: StageFit) -> dict[str, Any]:
    data = meas.stages[fit.stage]
    x = data.durations_ms
    out: dict[str, Any] = {
        "n": fit.n,
        "chosen": fit.chosen,
        "reason": fit.reason,
        "min_ms": float(x.min()),
        "median_ms": float(np.median(x)),
        "p90_ms": float(np.quantile(x, 0.9)),
        "max_ms": float(x.max()),
    }
    warnings = [f"fitted to only {fit.n} durations (min_n lowered below {MIN_N}): the fit is unreliable"] if fit.n < MIN_N else []
    warnings += [w for w in (fit.warning, fit.unit_warning) if w]
    if warnings:
        out["warning"] = "; ".join(warnings)
    if data.first_timestamp is not None:
        out["first_timestamp"] = data.first_timestamp
        out["last_timestamp"] = data.last_timestamp
    if fit.ks_critical is not None:
        out["ks_critical"] = fit.ks_critical
    if fit.candidates:
        out["candidates"] = {
            c.kind: {"ks": c.ks, **({"aic": c.aic} if c.aic is not None else {}), **c.params} for c in fit.candidates
        }
    return out


def write_profile(path: str | os.PathLike[str], tables: dict[str, Any]) -> None:
    """Write the profile TOML atomically, after checking that it loads as a profile."""
    text = HEADER + dumps_toml(tables)
    validate_profile(parse_toml(text, str(path)), str(path))
    write_text_atomic(path, text)


# ------------------------------------------------------------------------ TOML
