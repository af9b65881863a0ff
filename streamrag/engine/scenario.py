"""Scenarios: what to simulate, as TOML validated by pydantic.

A scenario is a TOML file or the name of a built-in one (``sim/NAME.toml``, e.g.
``paper_rq3``). ``--set key=value`` overrides address any field by its dotted path; the
value is parsed as a TOML scalar (``3``, ``0.5``, ``true``, ``"text"``), a bare word
being taken as a string. Setting a ``kind`` to a new value first resets that table, so
``--set trigger.kind=oracle`` does not inherit ``words = 3``.

Sections::

    name, description, seed
    [input]      cadence: kind = uniform | jittered, delta_wps, cv, pause_prob,
                 pause_ms, end_of_turn_ms
    [trigger]    kind = interval | replace | stable | every_word | oracle | none, …
    [pipeline]   max_threads (cap on speculative calls in flight; absent or 0: no cap)
    [reflector]  kind = heuristic | topk_match | gold, …
    [latency]    profile (calibration/profiles/NAME.toml); G_ms / L_ms / F_ms replace a
                 stage by a constant; [latency.stages.X] replaces stage X by any model
    [select]     population = all | retrieved_gold; limit
    [data]       split, k, grounding, retriever = bm25 | dense (how ``simulate DATA``
                 builds questions)

Every error is a :class:`~streamrag.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from streamrag.engine.cadence import CadenceModel, UniformCadence
from streamrag.engine.latency import ConstantLatency, LatencyModel, LatencyStages
from streamrag.engine.profiles import builtin_scenario, list_scenarios, load_profile
from streamrag.errors import ConfigError
from streamrag.pipeline.reflectors import HeuristicReflectorConfig, ReflectorConfig
from streamrag.pipeline.triggers import IntervalTriggerConfig, TriggerConfig


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PipelineConfig(_Section):
    max_threads: int | None = Field(default=None, ge=0)
    """Cap on speculative calls in flight; absent (``None``) or 0 = no cap."""

    @property
    def thread_cap(self) -> int | None:
        return self.max_threads or None


class LatencyConfig(_Section):
    profile: str = "paper-rq3"
    G_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    L_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    F_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    stages: dict[Literal["G", "L", "F"], LatencyModel] = Field(default_factory=dict)

    def resolve(self) -> LatencyStages:
        """Profile stages, then ``stages`` overrides, then the ``*_ms`` constants."""
        stages = dict(load_profile(self.profile).stages)
        stages.update(self.stages)
        for stage in ("G", "L", "F"):
            ms = getattr(self, f"{stage}_ms")
            if ms is not None:
                stages[stage] = ConstantLatency(ms=ms, source=f"scenario latency.{stage}_ms")
        return LatencyStages(**stages)


class SelectConfig(_Section):
    population: Literal["all", "retrieved_gold"] = "all"
    limit: int | None = Field(default=None, ge=1)


class DataConfig(_Section):
    split: int | Literal["all"] = 0
    """CRAG split to read (0 = validation); ``"all"`` reads every record."""
    k: int = Field(default=3, ge=1)
    grounding: Literal["exact", "relaxed"] = "exact"
    retriever: Literal["bm25", "dense"] = "bm25"
    """Prefix ranking for ``simulate DATA``; with ``dense`` the heuristic reflector uses
    ``reflector.cosine_threshold`` (cosine scale) instead of ``score_threshold`` (BM25)."""
    scope: Literal["per-question", "global"] = "per-question"
    """``global``: every question ranked against one index over all questions' pages (or
    over the corpus folder given as DATA: BEIR, or the CRAG data folder)."""
    gold: Literal["answer", "own", "labeled"] | None = None
    """Gold rule in global scope (None: ``labeled`` for a BEIR folder, else ``answer``)."""


class Scenario(_Section):
    """A fully specified simulation (before latency profile resolution)."""

    name: str = "custom"
    description: str = ""
    seed: int = Field(default=0, ge=0)
    input: CadenceModel = Field(default_factory=lambda: UniformCadence(delta_wps=3.0))
    trigger: TriggerConfig = Field(default_factory=lambda: IntervalTriggerConfig(words=3))
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    reflector: ReflectorConfig = Field(default_factory=HeuristicReflectorConfig)
    latency: LatencyConfig = Field(default_factory=LatencyConfig)
    select: SelectConfig = Field(default_factory=SelectConfig)
    data: DataConfig = Field(default_factory=DataConfig)


class ResolvedScenario(_Section):
    """A scenario with its latency profile resolved: what the engine runs."""

    scenario: Scenario
    stages: LatencyStages

    @property
    def delta_wps(self) -> float:
        return self.scenario.input.delta_wps

    @property
    def G_ms(self) -> float:
        return self.stages.G.nominal_ms

    @property
    def L_ms(self) -> float:
        return self.stages.L.nominal_ms


def parse_override(item: str) -> tuple[list[str], Any]:
    """``"a.b=3"`` → ``(["a", "b"], 3)``; the value is a TOML scalar or a bare string."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {item!r}: expected key=value with a dotted key, e.g. latency.L_ms=1000")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key.split("."), value


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """A copy of ``raw`` with ``--set`` overrides applied (kind changes first)."""
    import copy

    data = copy.deepcopy(raw)
    parsed = [parse_override(o) for o in overrides]
    parsed.sort(key=lambda kv: kv[0][-1] != "kind")  # stable: kinds first, then the rest in order
    for path, value in parsed:
        node = data
        for i, part in enumerate(path[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ConfigError(f"--set {'.'.join(path)}: {'.'.join(path[: i + 1])} is a value, not a table")
            node = child
        last = path[-1]
        if last == "kind" and node.get("kind") != value:
            node.clear()  # a new kind starts from its own defaults
        node[last] = value
    return data


def _validation_error(origin: str, exc: ValidationError) -> ConfigError:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    # Drop the discriminator tag pydantic inserts into union locations ("trigger.interval.words").
    if len(loc) >= 2 and loc[0] in {"input", "trigger", "reflector"}:
        loc = [loc[0], *loc[2:]] if len(loc) > 2 else loc
    key = ".".join(loc) or "(scenario)"
    given = err.get("input")
    shown = "" if isinstance(given, dict) or given is None else f" (got {given!r})"
    return ConfigError(f"scenario {origin}: {key}: {err['msg']}{shown}")


def load_scenario(
    name_or_path: str, overrides: list[str] | None = None, *, seed: int | None = None
) -> ResolvedScenario:
    """Load a built-in scenario by name or a TOML file, apply overrides, resolve latencies."""
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or path.is_file():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"scenario {name_or_path}: no such file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"scenario {name_or_path}: invalid TOML: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"scenario {name_or_path}: cannot read: {exc}") from None
    else:
        found = builtin_scenario(name_or_path)
        if found is None:
            raise ConfigError(
                f"scenario {name_or_path!r}: neither a TOML file nor a built-in scenario "
                f"(built-in: {', '.join(list_scenarios()) or 'none'})"
            )
        raw = found
    return scenario_from_dict(raw, overrides, seed=seed, origin=name_or_path)


def scenario_from_dict(
    raw: dict[str, Any], overrides: list[str] | None = None, *, seed: int | None = None, origin: str = "<dict>"
) -> ResolvedScenario:
    """Validate a scenario given as a dict (TOML tables), apply overrides, resolve latencies."""
    data = apply_overrides(raw, overrides or [])
    if seed is not None:
        data["seed"] = seed
    try:
        scenario = Scenario.model_validate(data)
        stages = scenario.latency.resolve()
    except ValidationError as exc:
        raise _validation_error(origin, exc) from None
    return ResolvedScenario(scenario=scenario, stages=stages)
