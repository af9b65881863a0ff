"""Sweeps: grids of analysis and simulation settings, run in parallel, resumable.

A grid file (TOML, :mod:`~streamrag.sweep.grid`) names a point kind, an input, a base
and axes; every point of the product gets a stable key (a hash of its resolved settings
and the input's content, :mod:`~streamrag.sweep.points`) and a folder under the run
folder (:mod:`~streamrag.sweep.resumable`). Points run in this process, a local process pool
or on a Dask cluster (:mod:`~streamrag.sweep.executors`) with identical results; the
sweep table (:mod:`~streamrag.sweep.table`) and figures (:mod:`~streamrag.sweep.figures`)
are written at the end, then the manifest.

Modules, in the order data flows:

- :mod:`~streamrag.sweep.grid` — grid files: shape, axes;
- :mod:`~streamrag.sweep.inputs` — the questions (table, data file, demo, generated);
- :mod:`~streamrag.sweep.point_kinds` — simulate / streamable / analyze points: settings;
- :mod:`~streamrag.sweep.points` — expansion, keys, validation;
- :mod:`~streamrag.sweep.work` — computing one point (what workers run);
- :mod:`~streamrag.sweep.executors` — serial, process pool, Dask;
- :mod:`~streamrag.sweep.resumable` — the run folder, resume, manifest;
- :mod:`~streamrag.sweep.table` / :mod:`~streamrag.sweep.figures` — outputs.

The public names below are imported on first use, so ``import streamrag.sweep`` costs
nothing.

``table.py`` (the sweep table) and ``run_files.py`` (the sweep folder's manifest) do here
what their namesakes do for the stabilization table (``analysis/table.py``), the feature
table (``analysis/features/table.py``) and a simulate run folder (``simulator/run_files.py``).
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC = {
    "Grid": "grid",
    "load_grid": "grid",
    "list_grids": "grid",
    "InputSpec": "inputs",
    "Point": "points",
    "SweepPlan": "points",
    "plan": "points",
    "point_key": "points",
    "PointOutput": "work",
    "execute_point": "work",
    "SerialExecutor": "executors",
    "ProcessExecutor": "executors",
    "DaskExecutor": "executors",
    "make_executor": "executors",
    "run_sweep": "resumable",
    "SweepResult": "resumable",
    "PointDone": "resumable",
    "read_sweep": "table",
    "read_point_results": "table",
    "pareto_front": "table",
    "sweep_figures": "figures",
    "write_figures": "figures",
}

__all__ = tuple(sorted(_PUBLIC))


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'streamrag.sweep' has no attribute {name!r}")
    return getattr(importlib.import_module(f"streamrag.sweep.{module}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
