"""Compute one point: the function executors run, in any process or on any machine.

:func:`execute_point` takes a :class:`~streamrag.sweep.kinds.PointJob` and the prepared
input it reads and returns the point's files as bytes plus its metrics. It writes
nothing: the parent process writes every file, so workers need no shared file system
(except analyze points, which read the data file at its path).

Metrics — the sweep table's columns after the axes — by kind:

- simulate: ``n_questions``; ``mean_saved_ms``, ``median_saved_ms``, ``p10_saved_ms``,
  ``p90_saved_ms`` (saved = baseline − streaming, ms); ``mean_H_ms``, ``mean_H_G_ms``,
  ``mean_H_prime_ms`` (the bounds); ``mean_baseline_ms``, ``mean_streaming_ms``;
  ``rho_H_saved``, ``rho_H_G_saved`` (Spearman; None when undefined);
  ``negative_rate``, ``misfire_rate`` (shares of questions); ``calls_fired_per_question``,
  ``wasted_calls_per_question``, ``cancelled_calls_per_question``,
  ``skipped_fires_per_question``; ``llm_busy_ms_per_question``,
  ``tool_busy_ms_per_question``.
- streamable: ``n``, ``n_streamable``, ``streamable_fraction`` (H ≥ θ·L over all
  questions), the same three for the ``retrieved_gold`` and ``fallback`` slices
  (suffixes), ``mean_H_ms``, ``mean_H_G_ms``, ``mean_H_prime_ms``.
- analyze: ``n_questions``, ``n_skipped``, ``n_groundable``, ``share_groundable``,
  ``n_retrieved_gold``, ``share_retrieved_gold``, ``phi_sc_mean``, ``phi_sc_median``,
  ``phi_suf_mean``, ``phi_suf_median``, ``share_t_suf_1``, ``volatility_mean``,
  ``streamable_fraction`` (at the configured L = 600 ms, δ = 3 w/s, θ = 0.8).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from streamrag.sweep.kinds import PointJob


class PointOutput(NamedTuple):
    """What a worker returns for one point."""

    key: str
    files: dict[str, bytes]
    """File name → content, written into the point's folder by the parent."""
    metrics: dict[str, Any]
    wall_s: float
    """Wall time the worker spent on the point (s)."""


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) + "\n").encode("utf-8")


def simulate_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """A simulate point's metrics from its ``summary.json`` data."""
    saved = summary["saved_ms"]
    calls = summary["calls_per_question"]
    busy = summary["busy_ms_per_question"]
    return {
        "n_questions": summary["n_questions"],
        "mean_saved_ms": saved["mean"],
        "median_saved_ms": saved["median"],
        "p10_saved_ms": saved["p10"],
        "p90_saved_ms": saved["p90"],
        "mean_H_ms": summary["H_ms"]["mean"],
        "mean_H_G_ms": summary["H_G_ms"]["mean"],
        "mean_H_prime_ms": summary["H_prime_ms"]["mean"],
        "mean_baseline_ms": summary["baseline_ms"]["mean"],
        "mean_streaming_ms": summary["streaming_ms"]["mean"],
        "rho_H_saved": summary["spearman"]["H_saved"]["rho"],
        "rho_H_G_saved": summary["spearman"]["H_G_saved"]["rho"],
        "negative_rate": summary["negative"]["rate"],
        "misfire_rate": summary["misfire"]["rate"],
        "calls_fired_per_question": calls["fired"],
        "wasted_calls_per_question": calls["wasted"],
        "cancelled_calls_per_question": calls["cancelled"],
        "skipped_fires_per_question": calls["skipped_fires"],
        "llm_busy_ms_per_question": busy["llm"],
        "tool_busy_ms_per_question": busy["tool"],
    }


def streamable_metrics(cell: dict[str, Any]) -> dict[str, Any]:
    """A streamable point's metrics from its cell (:func:`streamable_cell`)."""
    out = {name: cell[name] for name in ("n", "n_streamable", "streamable_fraction")}
    for part in ("retrieved_gold", "fallback"):
        out.update({f"{name}_{part}": cell[part][name] for name in ("n", "n_streamable", "streamable_fraction")})
    out.update({name: cell[name] for name in ("mean_H_ms", "mean_H_G_ms", "mean_H_prime_ms")})
    return out


def analyze_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """An analyze point's metrics from its ``summary.json`` data."""
    from streamrag.analysis.stats import headline

    return {"n_skipped": summary["n_skipped"], **headline(summary["rq1"], summary["rq2"]["point"])}


def _simulate(job: PointJob, prepared: Any) -> tuple[dict[str, bytes], dict[str, Any]]:
    from streamrag.engine.inputs import select_questions
    from streamrag.engine.results import results_csv
    from streamrag.engine.runner import simulate, summary_json

    questions, n_skipped = prepared
    rs = job.settings
    selected, counts = select_questions(questions, rs, n_skipped=n_skipped)
    run = simulate(selected, rs, jobs=1)
    summary = summary_json(run, rs, counts)
    files = {"results.csv": results_csv(run.rows), "summary.json": summary}
    if job.traces:
        files["trace.jsonl"] = run.trace_bytes()
    return files, simulate_metrics(json.loads(summary))


def _streamable(job: PointJob, table: Any) -> tuple[dict[str, bytes], dict[str, Any]]:
    from streamrag.analysis.stats import streamable_cell

    p = job.settings
    cell = streamable_cell(table, L_ms=p["L_ms"], delta_wps=p["delta_wps"], theta=p["theta"], G_ms=p["G_ms"])
    return {"cell.json": _json(cell)}, streamable_metrics(cell)


def _analyze(job: PointJob) -> tuple[dict[str, bytes], dict[str, Any]]:
    import tempfile
    from pathlib import Path

    from streamrag.analysis.study import run_study
    from streamrag.cache import ChunkCache, default_cache_dir
    from streamrag.errors import CacheError

    try:
        cache = ChunkCache(default_cache_dir())
    except CacheError:  # a worker without a usable cache folder still computes the point
        cache = None
    data = job.data or {}
    with tempfile.TemporaryDirectory(prefix="streamrag-point-") as tmp:
        run_study(
            data["path"], tmp, job.settings, split=data.get("split"), limit=data.get("limit"),
            cache=cache, jobs=1, figures=False,
        )  # fmt: skip
        files = {name: (Path(tmp) / name).read_bytes() for name in ("stabilization.csv", "summary.json")}
    return files, analyze_metrics(json.loads(files["summary.json"]))


def execute_point(job: PointJob, prepared: Any = None) -> PointOutput:
    """Compute one point (see the module docstring); deterministic in ``job`` and input."""
    from streamrag.engine.clock import RealClock

    clock = RealClock()
    if job.kind == "simulate":
        files, metrics = _simulate(job, prepared)
    elif job.kind == "streamable":
        files, metrics = _streamable(job, prepared)
    else:
        files, metrics = _analyze(job)
    return PointOutput(job.key, files, metrics, clock.now_us() / 1e6)
