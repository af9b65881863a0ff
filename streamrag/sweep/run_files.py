"""A sweep folder's ``manifest.json``, declared: the model its writer validates with.

Its JSON Schema is ``streamrag schema sweep-manifest``. The manifest is written last:
its presence means the sweep is complete (:mod:`streamrag.sweep.resumable`), unless it
says ``"interrupted": true``: the sweep was stopped by a signal, its ``pending`` points
are not finished, and ``--resume`` finishes it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from streamrag.base.formats import FORMAT_VERSION


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GridInfo(_Frozen):
    origin: str
    name: str
    description: str
    kind: Literal["simulate", "streamable", "analyze"]
    on_incompatible: Literal["error", "skip"]
    sha256: str
    """Of the grid file's text."""


class InputInfo(_Frozen):
    source: str
    kind: str
    path: str | None
    split: int | Literal["all"] | None
    limit: int | None
    fingerprint: dict[str, Any]
    """What identifies the input's content (hashed into every point key)."""


class PointEntry(_Frozen):
    index: int
    key: str
    values: dict[str, str | int | float | bool]
    """Axis column → the point's value (as in the sweep table)."""
    status: Literal["computed", "reused", "skipped", "pending"]
    """``pending``: not finished (an interrupted sweep only)."""
    reason: str | None = None
    """Why a skipped point was skipped."""
    wall_s: float | None = None


class SweepManifest(_Frozen):
    """``manifest.json`` of a sweep folder."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="streamrag manifest.json (sweep)")

    format_version: int = Field(description="The file's format version (streamrag.base.formats)", ge=1, le=FORMAT_VERSION)
    streamrag_version: str
    format: int
    """The version of what a point folder holds (part of every point key)."""
    reflector_models: list[str]
    grid: GridInfo
    input: InputInfo
    executor: dict[str, Any]
    n_points: int
    n_computed: int
    n_reused: int
    n_skipped: int
    points: list[PointEntry]
    outputs: list[str]
    command: list[str] | None
    python: str
    wall_s: float
    created: str
    interrupted: bool | None = Field(None, description="The sweep was stopped by a signal: resume it to finish")
    signal: str | None = Field(None, description="The signal that stopped the sweep (SIGINT, SIGTERM, SIGHUP)")
