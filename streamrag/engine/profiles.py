"""Built-in calibration profiles and scenarios, from an installed wheel or a checkout.

The TOML files live in the repository's top-level ``calibration/`` (sources and latency
profiles) and ``sim/`` (scenarios; sweep grids in ``sim/grids/``). A wheel ships them as the data-only packages
``streamrag._calibration`` and ``streamrag._sim`` (a ``package-dir`` mapping in
``pyproject.toml``); in a development checkout where those packages are absent, the
top-level folders are read directly. Either way they are read with
:mod:`importlib.resources`, never through a hard-coded install path.
"""

from __future__ import annotations

import importlib.resources
import tomllib
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from streamrag.engine.latency import LatencyStages
from streamrag.errors import ConfigError

_REPO_ROOT = Path(__file__).resolve().parents[2]


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


def _toml(resource: Traversable) -> dict[str, Any]:
    try:
        return tomllib.loads(resource.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{resource}: invalid TOML: {exc}") from None


class LatencyProfile(BaseModel):
    """A named set of per-stage latency models with provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    source: str = ""
    """Key of the entry in ``calibration/sources.toml``."""
    stages: LatencyStages


def list_profiles() -> list[str]:
    folder = calibration_dir() / "profiles"
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_profile(name: str) -> LatencyProfile:
    """The profile ``name`` (e.g. ``paper-rq3``, ``arora2025``)."""
    resource = calibration_dir() / "profiles" / f"{name}.toml"
    if not resource.is_file():
        known = ", ".join(list_profiles()) or "none"
        raise ConfigError(f"latency.profile: unknown profile {name!r} (available: {known})")
    try:
        return LatencyProfile.model_validate(_toml(resource))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"profile {name!r}: {where}: {err['msg']}") from None


def load_sources() -> dict[str, Any]:
    """The citations of ``calibration/sources.toml`` (``{key: {...}}``)."""
    return _toml(calibration_dir() / "sources.toml").get("sources", {})


def list_scenarios() -> list[str]:
    folder = scenarios_dir()
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def builtin_scenario(name: str) -> dict[str, Any] | None:
    """The raw table of built-in scenario ``name``, or ``None`` if there is none."""
    resource = scenarios_dir() / f"{name}.toml"
    if not resource.is_file():
        return None
    return _toml(resource)
