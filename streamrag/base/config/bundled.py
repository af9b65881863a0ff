"""Built-in resources: calibration profiles, scenarios, sweep grids and trigger models.

The files live in the repository's top-level ``calibration/`` (latency sources and
profiles) and ``sim/`` (scenarios; sweep grids in ``sim/grids/``; the learned trigger's
shipped models, JSON, in ``sim/models/``). A wheel ships them as
the data-only packages ``streamrag._calibration`` and ``streamrag._sim`` (a
``package-dir`` mapping in ``setup.py``); in a development checkout where those packages
are absent, the top-level folders are read directly. Either way they are read with
:mod:`importlib.resources`, never through a hard-coded install path.

This module sits at the bottom of the layers: the kernel finds latency profiles through
it, the simulator scenarios, the sweep grids; they are read by
:func:`streamrag.base.config.tomlfile.read_toml`, as user files are.
"""

from __future__ import annotations

import importlib.resources
from importlib.resources.abc import Traversable
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[3]  # streamrag/base/config/bundled.py → the checkout


def _root(package: str, folder: str) -> Traversable:
    try:
        return importlib.resources.files(package)
    except ModuleNotFoundError:
        return _REPO_ROOT / folder


def calibration_dir() -> Traversable:
    """Folder of ``sources.toml`` and ``profiles/*.toml``."""
    return _root("streamrag._calibration", "calibration")


def scenarios_dir() -> Traversable:
    """Folder of the built-in scenario TOML files."""
    return _root("streamrag._sim", "sim")


def grids_dir() -> Traversable:
    """Folder of the built-in sweep grids (``sim/grids/*.toml``)."""
    return _root("streamrag._sim.grids", "sim/grids")


def models_dir() -> Traversable:
    """Folder of the shipped trigger models (``sim/models/*.json``, ``trigger.model = NAME``)."""
    return _root("streamrag._sim.models", "sim/models")


def references_dir() -> Traversable:
    """Folder of the frameworks' reference policies (``sim/reference/*.toml``, ``--reference NAME``)."""
    return _root("streamrag._sim.reference", "sim/reference")


def names_in(folder: Traversable, suffix: str) -> list[str]:
    """Names (without ``suffix``) of the files directly in ``folder`` ending in it, sorted."""
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(suffix)] for p in folder.iterdir() if p.name.endswith(suffix))


def toml_names(folder: Traversable) -> list[str]:
    """Names (without ``.toml``) of the TOML files directly in ``folder``, sorted."""
    return names_in(folder, ".toml")
