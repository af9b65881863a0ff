"""Latency profiles: named per-stage latency models with provenance (``calibration/``).

A profile (``calibration/profiles/NAME.toml``) gives each stage (G, L, F) a
:class:`~streamrag.engine.latency.LatencyModel` and names its source, a key of
``calibration/sources.toml`` (the paper, table and figures it was fitted to). Files are
found through :mod:`streamrag.resources` (installed wheel or checkout).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from streamrag.engine.latency import LatencyStages
from streamrag.errors import ConfigError
from streamrag.resources import calibration_dir, read_toml, toml_names


class LatencyProfile(BaseModel):
    """A named set of per-stage latency models with provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    source: str = ""
    """Key of the entry in ``calibration/sources.toml``."""
    stages: LatencyStages


def list_profiles() -> list[str]:
    """Names of the built-in profiles."""
    return toml_names(calibration_dir() / "profiles")


def load_profile(name: str) -> LatencyProfile:
    """The profile ``name`` (e.g. ``paper-rq3``, ``arora2025``)."""
    resource = calibration_dir() / "profiles" / f"{name}.toml"
    if not resource.is_file():
        known = ", ".join(list_profiles()) or "none"
        raise ConfigError(f"latency.profile: unknown profile {name!r} (available: {known})")
    try:
        return LatencyProfile.model_validate(read_toml(resource))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"profile {name!r}: {where}: {err['msg']}") from None


def load_sources() -> dict[str, Any]:
    """The citations of ``calibration/sources.toml`` (``{key: {...}}``)."""
    return read_toml(calibration_dir() / "sources.toml").get("sources", {})
