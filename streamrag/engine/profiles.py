"""Latency profiles: per-stage latency models with provenance (``calibration/``).

A profile gives each stage a :class:`~streamrag.engine.latency.LatencyModel` and names
its source. A *built-in* profile (``calibration/profiles/NAME.toml``, found through
:mod:`streamrag.base.config.bundled`, installed wheel or checkout) is chosen by name and cites a
key of ``calibration/sources.toml``. A profile *file* — any TOML of the same schema,
such as one written by ``streamrag calibrate`` — is chosen by its path; it usually
carries a ``[provenance]`` table (input hash, sample sizes, fit statistics).

Which one a setting means is one rule, :func:`is_profile_path`: a value ending in
``.toml`` or holding a path separator is a file, anything else a built-in name.

The pipeline simulates the stages ``G``, ``L`` and ``F``; a profile may hold only some
of them (a scenario then sets the others) and other named stages (kept for the record,
not simulated).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field

from streamrag.base.config.bundled import calibration_dir, toml_names
from streamrag.base.config.tomlfile import read_toml
from streamrag.base.errors import ConfigError
from streamrag.base.validation import SettingsModel, validated
from streamrag.engine.latency import LatencyModel


class LatencyProfile(SettingsModel):
    """A named set of per-stage latency models with provenance."""

    name: str
    description: str = ""
    source: str = ""
    """Built-in profiles: the key of their entry in ``calibration/sources.toml``; fitted
    profiles: the measurement file they were fitted to."""
    stages: dict[str, LatencyModel] = Field(min_length=1)
    """Stage name (``G``, ``L``, ``F`` or any other) → its model."""
    provenance: dict[str, Any] = Field(default_factory=dict)
    """How a fitted profile was made (see :mod:`streamrag.calibration.profile`)."""


def is_profile_path(value: str) -> bool:
    """True when a ``latency.profile`` value names a file rather than a built-in profile."""
    return value.endswith(".toml") or "/" in value or os.sep in value


def list_profiles() -> list[str]:
    """Names of the built-in profiles."""
    return toml_names(calibration_dir() / "profiles")


def load_profile(name_or_path: str) -> LatencyProfile:
    """The built-in profile ``name`` (e.g. ``paper-rq3``, ``arora2025``) or a profile file."""
    if is_profile_path(name_or_path):
        path = Path(name_or_path).expanduser()
        return validate_profile(read_toml(path, "latency.profile:"), str(path))
    resource = calibration_dir() / "profiles" / f"{name_or_path}.toml"
    if not resource.is_file():
        known = ", ".join(list_profiles()) or "none"
        raise ConfigError(
            f"latency.profile: unknown profile {name_or_path!r} (available: {known}; a profile file is a path ending in .toml)"
        )
    return validate_profile(read_toml(resource), repr(name_or_path))


def validate_profile(raw: dict[str, Any], origin: str) -> LatencyProfile:
    """``raw`` as a profile; a ConfigError naming ``origin`` and the key otherwise."""
    return validated(LatencyProfile, raw, f"profile {origin}")


def load_sources() -> dict[str, Any]:
    """The citations of ``calibration/sources.toml`` (``{key: {...}}``)."""
    return read_toml(calibration_dir() / "sources.toml").get("sources", {})
