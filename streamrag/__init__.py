"""streamrag: tool-intent stabilization in streaming RAG, measured and simulated.

The curated API (:mod:`streamrag.api`), for notebooks::

    import streamrag

    table = streamrag.analyze("crag.jsonl.bz2", out="runs/analysis")   # stabilization table
    results = streamrag.simulate("runs/analysis/stabilization.csv", "paper_rq3")
    sweep = streamrag.read_run("runs/triggers")                         # any run folder

The package root stays import-light: every name below is imported on first use, so
``import streamrag`` and ``streamrag --help`` are instant; so are the sub-modules
``streamrag.plots`` (figures of a run) and ``streamrag.sweep`` (grids and their runs).
``tests/unit/test_api.py`` pins the names; anything else is reached through its module.

``plots.py`` here is the public module of every plot function; it re-exports the
stabilization study's figures, which live in ``analysis/plots.py`` with the analysis.
"""

from __future__ import annotations

import importlib
from typing import Any

from streamrag.base.version import __version__

_PUBLIC = {
    "analyze": "streamrag.api",
    "simulate": "streamrag.api",
    "read_run": "streamrag.api",
    "compare_runs": "streamrag.api",
    "demo_path": "streamrag.data.demo",
    "read_table": "streamrag.analysis.table",
    "load_scenario": "streamrag.simulator.scenario",
    "list_scenarios": "streamrag.simulator.scenario",
    "StreamragError": "streamrag.base.errors",
    "Speculator": "streamrag.speculate.speculator",
    "ChunkScorer": "streamrag.retrieval.plugin",
    "advise": "streamrag.advice.run",
}

_MODULES = ("plots", "sweep")
"""Sub-modules of the API reached as attributes (``streamrag.plots.plot_pareto(...)``), imported
on first use."""

__all__ = [
    "ChunkScorer",
    "Speculator",
    "StreamragError",
    "__version__",
    "advise",
    "analyze",
    "compare_runs",
    "demo_path",
    "list_scenarios",
    "load_scenario",
    "read_run",
    "read_table",
    "simulate",
]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f"streamrag.{name}")
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'streamrag' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, *_MODULES})
