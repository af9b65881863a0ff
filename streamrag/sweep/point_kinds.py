"""Point kinds: how a point's overrides become settings, a key and a worker job.

===============  ==================================================================
``simulate``     a scenario (``scenario = NAME_OR_TOML`` + overrides by dotted path,
                 as ``simulate --set``) replayed on every selected question; on a data
                 input the ``[data]`` fields the analyzer takes (``data.k``,
                 ``data.grounding``, ``data.retriever``) decide the prefix rankings
``streamable``   the RQ2 cell ``H ≥ θ·L`` computed from a stabilization table —
                 arithmetic only (:func:`~streamrag.analysis.stats.rq.streamable_cell`),
                 never simulated. Keys: ``L_ms``, ``delta_wps``, ``theta``, ``G_ms``;
                 for data inputs also analysis settings (``k``, ``grounding``, …)
``analyze``      the analyzer at one :class:`~streamrag.analysis.stabilize.AnalysisSettings`
                 (``k``, ``grounding``, ``retriever``, ``chunks.*``, ``bm25.*``) on a
                 data file
===============  ==================================================================

Overrides apply in groups — the grid's ``[base]``, then each axis — by the one rule of
:mod:`streamrag.base.config.overrides` that ``simulate --set`` follows too: a new ``kind`` resets its
section, the same kind keeps it, and the interval trigger's ``words`` and ``seconds``
replace each other (a variant ``{trigger.kind = "interval", trigger.seconds = 1}`` on
the base's ``words = 3`` is a 1-second interval).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from streamrag.base.columns import Dtype
from streamrag.base.config.overrides import Override, nest
from streamrag.base.errors import ConfigError
from streamrag.base.validation import validated
from streamrag.sweep.grid import Grid, Scalar
from streamrag.sweep.inputs import input_ref

Overrides = Sequence[Sequence[tuple[str, Scalar]]]
"""Groups of ``(dotted path, value)``: the base, then one group per axis."""

DESCRIPTOR_DTYPES: dict[str, Dtype] = {
    # simulate (and load)
    "trigger": "str", "trigger_kind": "str", "reflector": "str", "L_ms": "float", "G_ms": "float", "F_ms": "float",
    "delta_wps": "float", "max_threads": "int", "profile": "str", "population": "str", "seed": "int",
    # load
    "arrivals": "str", "rate_per_s": "float", "tool_servers": "int", "llm_servers": "int", "policy": "str",
    "offered_load": "float",
    # streamable (and analyze)
    "theta": "float", "k": "int", "grounding": "str",
}  # fmt: skip
"""The type of every descriptor column any kind writes (a name means one thing in every
kind): the sweep table's Arrow schema reads it, so an undefined value keeps the type."""

POOL_FIELDS = ("scope", "gold")
"""Scenario ``[data]`` fields that choose global-scope analysis of a data input."""


@dataclass(frozen=True, slots=True)
class PointJob:
    """Everything a worker needs to compute one point (picklable, no open handles)."""

    key: str
    kind: str
    settings: Any
    """``ResolvedScenario`` (simulate), a parameter dict (streamable), ``AnalysisSettings``."""
    input_ref: str | None
    """Which prepared input the point reads (``None``: it reads the data file itself)."""
    data: dict[str, Any] | None = None
    """Analyze points: ``{"path", "split", "limit"}``."""
    traces: bool = False


@dataclass(frozen=True, slots=True)
class Resolved:
    """A point's settings, as checked by its kind."""

    settings: Any
    identity: dict[str, Any]
    """The settings that decide the result, as JSON data: hashed into the key."""
    descriptors: dict[str, Any]
    """Columns that describe the point in the sweep table."""
    input_ref: str | None
    incompatible: str | None = None
    """Why the point cannot run on this input (``on_incompatible`` decides)."""


def _paths(groups: Overrides) -> list[str]:
    return [path for group in groups for path, _ in group]


def _policy(config: Any) -> str:
    """``interval(words=3)``, ``oracle``: a policy config as one short string."""
    # Tables (a hedge's length prior) stay out of the one-line name; the settings keep them.
    fields = {
        k: v for k, v in config.model_dump(mode="json").items() if k != "kind" and v is not None and not isinstance(v, dict)
    }
    inner = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in fields.items())
    return f"{config.kind}({inner})" if inner else config.kind


# --------------------------------------------------------------------------- simulate


class SimulateKind:
    """Simulation points: a scenario per point."""

    name = "simulate"

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self._raw = self._scenario_raw(grid.scenario or "paper_rq3")

    def _scenario_raw(self, name_or_path: str) -> dict[str, Any]:
        from streamrag.simulator.scenario import read_scenario

        try:
            return read_scenario(name_or_path)
        except ConfigError as exc:
            raise ConfigError(f"grid {self.grid.origin}: {exc}") from None

    def resolve(self, groups: Overrides) -> Resolved:
        from streamrag.simulator.applies import InputKind, refuse_inapplicable
        from streamrag.simulator.run_output import parameters
        from streamrag.simulator.scenario import scenario_from_dict

        spec = self.grid.input
        for path in _paths(groups):
            if path == "data.split":
                raise ConfigError(f'{path}: set the split in the grid\'s [input] table (split = 0 | 1 | "all")')
        applied: list[list[Override]] = [list(g) for g in groups]
        if not spec.trace_driven:
            applied.append([("data.split", spec.split)])
        rs = scenario_from_dict(self._raw, applied, origin=self.grid.scenario or "paper_rq3")
        kind: InputKind = "generated" if spec.kind == "generated" else "table" if spec.trace_driven else "data"
        refuse_inapplicable(rs, kind, ignore=("data.split",))
        sc = rs.scenario
        identity = parameters(rs)
        identity["scenario"] = {k: v for k, v in identity["scenario"].items() if k not in ("name", "description")}
        _files_by_content(identity["scenario"])
        if spec.trace_driven:
            identity["scenario"].pop("data", None)
        incompatible = None
        for section, config in (("trigger", sc.trigger), ("reflector", sc.reflector)):
            if not spec.has_evidence and "rankings" in config.needs:
                incompatible = (
                    f"{section}.kind {config.kind!r} needs per-prefix evidence; the input {spec.source!r} is a table without it"
                )
        descriptors = {
            "trigger": _policy(sc.trigger),
            "trigger_kind": sc.trigger.kind,
            "reflector": _policy(sc.reflector),
            "L_ms": rs.L_ms,
            "G_ms": rs.G_ms,
            "F_ms": rs.stages.F.nominal_ms,
            "delta_wps": rs.delta_wps,
            "max_threads": sc.pipeline.max_threads or 0,
            "profile": sc.latency.profile,
            "population": sc.select.population,
            "seed": sc.seed,
        }
        if sc.load is not None:
            descriptors.update(_load_descriptors(rs))
        return Resolved(rs, identity, descriptors, input_ref("questions", self._analysis(sc.data)), incompatible)

    def _analysis(self, data: Any) -> dict[str, Any] | None:
        """The analysis settings the scenario's ``[data]`` section asks for (data inputs).

        Fields the analyzer takes (k, grounding, retriever, …) pass through, and so do
        ``scope`` and ``gold`` (global scope ranks against the pooled input); any other
        field set away from its default is an error, never silently ignored.
        """
        if self.grid.input.trace_driven:
            return None
        from streamrag.analysis.stabilize import AnalysisSettings

        values = data.model_dump(mode="json", exclude={"split"})
        defaults = type(data)().model_dump(mode="json")
        known = set(AnalysisSettings.model_fields) | set(POOL_FIELDS)
        for name, value in values.items():
            if name not in known and value != defaults[name]:
                raise ConfigError(f"data.{name}: {value!r} is not supported by sweeps")
        out = {name: value for name, value in values.items() if name in known}
        # The per-question default keeps the input references (and point keys) of
        # per-question sweeps unchanged.
        if out.get("scope") in (None, "per-question") and out.get("gold") in (None, defaults.get("gold")):
            out = {name: value for name, value in out.items() if name not in POOL_FIELDS}
        return out


def _files_by_content(scenario: dict[str, Any]) -> None:
    """Replace settings naming files by their content hash, in place.

    A point's key then follows the file's content, not its place (as the input's
    fingerprint does): an edited profile or timings file gives new keys, a sweep folder
    moved together with its files keeps them; a shipped trigger model is hashed too, so
    a retrained one gives new keys.
    """
    from streamrag.simulator.file_settings import file_setting_sha256, file_settings

    for key, table, field in list(file_settings(scenario)):
        digest = file_setting_sha256(key, table[field])
        if digest is not None:
            table[field] = f"sha256:{digest}"


def _load_descriptors(rs: Any) -> dict[str, Any]:
    """A load point's columns: arrival rate, capacities, policy and the offered tool load
    ``ρ = λ·E[L]/c`` (Poisson arrivals, one baseline tool call per session)."""
    from streamrag.simulator.load.checks import tool_servers
    from streamrag.simulator.load.workload import PoissonArrivals

    sc = rs.scenario
    arrivals = sc.load.arrivals
    tool = tool_servers(rs)
    rate = arrivals.rate(tool, rs.stages.L.mean_ms) if isinstance(arrivals, PoissonArrivals) else None
    llm = sc.resources.llm
    return {
        "arrivals": arrivals.kind,
        "rate_per_s": rate,
        "tool_servers": tool,
        "llm_servers": getattr(llm, "servers", None) or getattr(llm, "max_batch", None),
        "policy": _policy(sc.policy),
        "offered_load": _offered_load(arrivals, rate, tool, rs.stages.L.mean_ms),
    }


def _offered_load(arrivals: Any, rate: float | None, tool: int | None, mean_l_ms: float) -> float | None:
    """The baseline's tool load λ·E[L]/c: as set when it was set (no round trip through λ)."""
    if getattr(arrivals, "offered_load", None) is not None:
        return float(arrivals.offered_load)
    return None if rate is None or not tool else rate * mean_l_ms / 1000 / tool


# --------------------------------------------------------------------------- streamable


class StreamableKind:
    """Arithmetic RQ2 cells from a stabilization table."""

    name = "streamable"
    KEYS = ("L_ms", "delta_wps", "theta", "G_ms")

    def __init__(self, grid: Grid) -> None:
        self.grid = grid

    def resolve(self, groups: Overrides) -> Resolved:
        from streamrag.analysis.stats.rq import DEFAULT_PARAMS, resolve_params

        spec = self.grid.input
        given = dict(pair for group in groups for pair in group)
        if spec.trace_driven:
            for key in given:
                if key not in self.KEYS:
                    hint = " (analysis settings such as k apply to data inputs only)" if key in ("k", "grounding") else ""
                    raise ConfigError(f"{key}: not a streamable setting; use {', '.join(self.KEYS)}{hint}")
        params = resolve_params({k: given.get(k, DEFAULT_PARAMS[k]) for k in self.KEYS})
        settings = {k: params[k] for k in self.KEYS}
        analysis = None
        if not spec.trace_driven:
            analysis = _analysis_settings([(k, v) for k, v in given.items() if k not in self.KEYS])
            settings.update(k=analysis["k"], grounding=analysis["grounding"])
        identity = dict(settings) if analysis is None else {**settings, "analysis": analysis}
        return Resolved(settings, identity, dict(settings), input_ref("table", analysis))


# --------------------------------------------------------------------------- analyze


class AnalyzeKind:
    """The analyzer at one setting, on a data file."""

    name = "analyze"

    def __init__(self, grid: Grid) -> None:
        if grid.input.trace_driven:
            raise ConfigError(
                f"grid {grid.origin}: input: analyze points need a data file (data:PATH or demo); "
                f"{grid.input.source!r} is a table"
            )
        self.grid = grid

    def resolve(self, groups: Overrides) -> Resolved:
        from streamrag.analysis.stabilize import AnalysisSettings

        identity = _analysis_settings([pair for group in groups for pair in group])
        settings = AnalysisSettings.model_validate(identity)
        return Resolved(settings, identity, {"k": settings.k, "grounding": settings.grounding}, None)


def _analysis_settings(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Validated :class:`~streamrag.analysis.stabilize.AnalysisSettings` (every field) as JSON."""
    from streamrag.analysis.stabilize import AnalysisSettings

    settings = validated(AnalysisSettings, nest(pairs))
    return json.loads(settings.model_dump_json())


def point_kind(grid: Grid) -> SimulateKind | StreamableKind | AnalyzeKind:
    """The kind object of ``grid``."""
    kinds: dict[str, Callable[[Grid], SimulateKind | StreamableKind | AnalyzeKind]] = {
        "simulate": SimulateKind,
        "streamable": StreamableKind,
        "analyze": AnalyzeKind,
    }
    return kinds[grid.kind](grid)
