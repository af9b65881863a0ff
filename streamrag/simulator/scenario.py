"""Scenarios: what to simulate, as TOML validated by pydantic.

A scenario is a TOML file or the name of a built-in one (``sim/NAME.toml``, e.g.
``paper_rq3``). ``--set key=value`` overrides address any field by its dotted path; the
value is parsed as a TOML scalar (``3``, ``0.5``, ``true``, ``"text"``), a bare word
being taken as a string. What a ``kind`` change keeps is the one rule of
:mod:`streamrag.base.config.overrides`, shared with sweep points: a new kind resets its section
(``--set trigger.kind=oracle`` does not inherit ``words = 3``), the same kind keeps it,
and the interval trigger's ``words`` and ``seconds`` replace each other.

Sections::

    name, description, seed
    [input]      cadence: kind = uniform | jittered | timings, delta_wps, cv, pause_prob,
                 pause_ms, end_of_turn_ms; timings: path (word times per question)
    [trigger]    kind = interval | replace | stable | every_word | oracle | none | hedge, …
    [pipeline]   max_threads (cap on speculative calls in flight; absent or 0: no cap),
                 capped_fire, turn_end_order, slot_release (the anchor's rules);
                 ranking = free | tool | local, local_rank_ms (what a ranking of a word
                 prefix costs a trigger that reads one: :mod:`streamrag.pipeline.ranking_cost`)
    [reflector]  kind = heuristic | topk_match | gold, …; rejudge, fallback, coverage
    [latency]    profile: a built-in name (calibration/profiles/NAME.toml) or a profile
                 file (a path ending in .toml, e.g. from ``streamrag calibrate``);
                 G_ms / L_ms / F_ms replace a stage by a constant;
                 [latency.stages.X] replaces stage X by any model (the constant wins);
                 an override changing profile or stages.X drops the scenario's X_ms
                 (:attr:`LatencyConfig.SHADOWS`), so ``--set latency.profile=P.toml``
                 simulates P's stages; L_stage names the profile's stage simulated as
                 L (a per-tool ``L.search_docs``)
    [select]     population = all | retrieved_gold | fallback; limit
    [data]       split, k, grounding, retriever.kind = bm25 | dense, scope, gold (how
                 ``simulate DATA`` builds questions)
    [resources]  tool, llm (or query_llm + response_llm): kind = unlimited | servers |
                 batching (:mod:`streamrag.engine.resources`)
    [policy]     kind = always | admission | stretch | coalesce
                 (:mod:`streamrag.pipeline.policies`)
    [tool]       effects = read_only | idempotent | mutating; mutating_policy = never |
                 after_authorization | deferral | speculative (:mod:`streamrag.pipeline.outcomes`)
    [load]       arrivals (poisson | file | closed), warmup_s, reference_sessions: many
                 sessions on one clock (:mod:`streamrag.simulator.load.run`)

Settings that name files (``latency.profile`` when it is a path, the word-timings
cadence's ``input.path``, ``data.asr.path``, ``load.arrivals.path``, the learned
trigger's ``trigger.model``, a retriever's ``path/to/file.py:Class``) are relative to
the file that sets them: a scenario file's
folder, a sweep grid's folder, the current folder for ``--set``
(:func:`anchor_file_setting`). They are stored absolute, so the manifest says which file
was read. A built-in profile's name and a shipped model's name (``trigger.model =
"frontier"``) are names, not paths.

Every error is a :class:`~streamrag.base.errors.ConfigError` naming the key a user
types (:mod:`streamrag.base.validation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from streamrag.base.config.bundled import scenarios_dir, toml_names
from streamrag.base.config.overrides import Override, apply_overrides, parse_override
from streamrag.base.config.tomlfile import read_toml
from streamrag.base.errors import ConfigError
from streamrag.base.validation import validated
from streamrag.data.human.voice_activity import MIN_SILENCE_MS
from streamrag.data.selection import Selection
from streamrag.engine.cadence import CadenceModel, UniformCadence
from streamrag.engine.endpoint import EndpointConfig
from streamrag.engine.latency import LatencyStages
from streamrag.pipeline.arm import ArmRules
from streamrag.pipeline.hedge import HedgeTriggerConfig
from streamrag.pipeline.policies import AlwaysPolicyConfig, PolicyConfig
from streamrag.pipeline.reflectors import HeuristicReflectorConfig, ReflectorConfig
from streamrag.pipeline.triggers import IntervalTriggerConfig, TriggerConfig
from streamrag.simulator.file_settings import anchor_file_setting, anchor_tables
from streamrag.simulator.load.workload import LoadConfig, PoissonArrivals
from streamrag.simulator.sections import (
    DataConfig,
    LatencyConfig,
    PipelineConfig,
    ResourcesConfig,
    SelectConfig,
    ToolConfig,
    _Section,
)
from streamrag.simulator.turn_parts import ComputeConfig


class Scenario(_Section):
    """A fully specified simulation (before latency profile resolution)."""

    name: str = "custom"
    """The scenario's name, recorded in the manifest and named in messages."""
    description: str = ""
    """Free text saying what the scenario models, recorded in the manifest."""
    seed: int = Field(default=0, ge=0)
    """The root of every random draw (:mod:`streamrag.engine.rng`: one stream per question and
    component); the same seed gives the same trace and results."""
    input: CadenceModel = Field(default_factory=lambda: UniformCadence(delta_wps=3.0))
    """When each word arrives (:mod:`~streamrag.engine.cadence`)."""
    trigger: TriggerConfig = Field(default_factory=lambda: IntervalTriggerConfig(words=3))
    """When to fire a speculative call (:mod:`~streamrag.pipeline.triggers`)."""
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    """The rules of the streaming arm: the cap on calls in flight and the anchor's order rules."""
    reflector: ReflectorConfig = Field(default_factory=HeuristicReflectorConfig)
    """At end of turn, which speculative result to answer from (:mod:`~streamrag.pipeline.reflectors`)."""
    latency: LatencyConfig = Field(default_factory=LatencyConfig)
    """The latency of query generation G, the tool call L and response generation F."""
    select: SelectConfig = Field(default_factory=SelectConfig)
    """Which of the input's questions run."""
    data: DataConfig = Field(default_factory=DataConfig)
    """How ``simulate DATA`` analyzes a data file into questions."""
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)
    """The capacity of the tool and the LLM every session shares (unlimited by default)."""
    policy: PolicyConfig = Field(default_factory=AlwaysPolicyConfig)
    """Whether a trigger's fire goes ahead, given the load (:mod:`~streamrag.pipeline.policies`)."""
    tool: ToolConfig = Field(default_factory=ToolConfig)
    """The tool's side-effect class and what that allows speculation."""
    endpoint: EndpointConfig = Field(default_factory=EndpointConfig)
    """When the turn ends for both arms (:mod:`~streamrag.engine.endpoint`; ``fixed``: the study's)."""
    compute: ComputeConfig = Field(default_factory=ComputeConfig)
    """What each LLM call reads, for the compute columns' tokens in (:mod:`~streamrag.simulator.turn_parts`)."""
    load: LoadConfig | None = None
    """Many sessions sharing ``[resources]`` on one clock (:mod:`streamrag.simulator.load.run`);
    absent: every question replayed alone."""

    @model_validator(mode="after")
    def _ranking_read_by_the_trigger(self) -> Scenario:
        if self.pipeline.ranking != "free" and "rankings" not in self.trigger.needs:
            raise ValueError(
                f"pipeline.ranking: {self.pipeline.ranking!r} applies to a trigger that reads the rankings of "
                f"word prefixes (learned, stable, replace); trigger {self.trigger.kind!r} reads none"
            )
        return self

    @model_validator(mode="after")
    def _compute_is_counted_with_an_endpointer(self) -> Scenario:
        if self.endpoint.kind == "fixed" and self.compute != ComputeConfig():
            raise ValueError(
                "compute: the compute columns (calls and tokens in) are written with an endpointer; set endpoint.kind "
                "(the study's end of turn, counted alike: endpoint.kind = 'detector', endpoint.delay_ms = 0)"
            )
        return self

    @model_validator(mode="after")
    def _one_end_of_turn(self) -> Scenario:
        if self.endpoint.kind != "fixed":
            if self.input.end_of_turn_ms:
                raise ValueError(
                    f"input.end_of_turn_ms: the endpointer (endpoint.kind = {self.endpoint.kind!r}) decides when the "
                    "turn ends; drop input.end_of_turn_ms, or use endpoint.kind = 'fixed'"
                )
            if self.data.asr is not None and self.data.asr.kind == "file":  # spoken: silences from the audio's VAD
                if self.endpoint.voiced_ms is not None:
                    raise ValueError(
                        "endpoint.voiced_ms: on recorded spoken hypotheses (data.asr.kind = 'file') the silences are the "
                        "voice-activity detector's, not word lengths; drop endpoint.voiced_ms"
                    )
                if self.endpoint.kind == "silence" and self.endpoint.silence_ms < MIN_SILENCE_MS:  # type: ignore[operator]
                    raise ValueError(
                        f"endpoint.silence_ms: {self.endpoint.silence_ms:g} is shorter than the shortest silence the "
                        f"voice-activity detector records ({MIN_SILENCE_MS:g} ms) on recorded spoken hypotheses"
                    )
        return self

    def selection(self, ids: Sequence[str] | None = None) -> Selection:
        """The scenario's question selection (``[data]`` split and scope, ``[select]``)."""
        return Selection(
            split=None if self.data.split == "all" else self.data.split,
            ids=None if ids is None else ids if isinstance(ids, tuple) else tuple(ids),
            limit=self.select.limit,
            scope=self.data.scope,
            population=self.select.population,
        )


class ResolvedScenario(_Section):
    """A scenario with its latency profile resolved: what the engine runs."""

    scenario: Scenario
    stages: LatencyStages

    def rules(self) -> dict[str, Any]:
        """Which pipeline rules ran, for every output: ``{"preset": "paper" | "custom",
        "settings": {...}, "differs_from_paper": [...]}`` (the anchor's rules, the rankings'
        price, and how the heuristic reflector's threshold is set)."""
        sc = self.scenario
        settings: dict[str, Any] = {
            "pipeline.capped_fire": sc.pipeline.capped_fire,
            "pipeline.turn_end_order": sc.pipeline.turn_end_order,
            "pipeline.slot_release": sc.pipeline.slot_release,
            "pipeline.ranking": sc.pipeline.ranking,
            "reflector.rejudge": sc.reflector.rejudge,
            "reflector.fallback": sc.reflector.fallback,
        }
        if isinstance(sc.reflector, HeuristicReflectorConfig):
            settings["reflector.coverage"] = sc.reflector.coverage
            settings["reflector.threshold"] = sc.reflector.threshold
        differs = [key for key, value in settings.items() if PAPER_RULES[key] != value]
        return {"preset": "custom" if differs else "paper", "settings": settings, "differs_from_paper": differs}

    @property
    def arm_rules(self) -> ArmRules:
        """The streaming arm's rules (pipeline and reflector shell settings)."""
        sc = self.scenario
        return ArmRules(
            max_threads=sc.pipeline.thread_cap,
            capped_fire=sc.pipeline.capped_fire,
            turn_end_order=sc.pipeline.turn_end_order,
            slot_release=sc.pipeline.slot_release,
            rejudge=sc.reflector.rejudge,
            ranking=sc.pipeline.ranking,
            fallback=sc.reflector.fallback,
            mutating=sc.tool.mutating,
        )

    @property
    def delta_wps(self) -> float:
        return self.scenario.input.delta_wps

    @property
    def G_ms(self) -> float:
        return self.stages.G.nominal_ms

    @property
    def L_ms(self) -> float:
        return self.stages.L.nominal_ms


def builtin_scenario(name: str) -> dict[str, Any] | None:
    """The raw tables of built-in scenario ``name`` (``sim/NAME.toml``), or ``None``."""
    resource = scenarios_dir() / f"{name}.toml"
    return read_toml(resource) if resource.is_file() else None


def list_scenarios() -> list[str]:
    """Names of the built-in scenarios."""
    return toml_names(scenarios_dir())


def read_scenario(name_or_path: str) -> dict[str, Any]:
    """The raw tables of a scenario: a TOML file, or a built-in scenario by name.

    File settings of a scenario file are anchored at its folder."""
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or path.is_file():
        return anchor_tables(read_toml(name_or_path, "scenario"), path.resolve().parent)
    found = builtin_scenario(name_or_path)
    if found is None:
        raise ConfigError(
            f"scenario {name_or_path!r}: neither a TOML file nor a built-in scenario "
            f"(built-in: {', '.join(list_scenarios()) or 'none'})"
        )
    return found


PAPER_RULES: dict[str, str] = {
    "pipeline.capped_fire": "defer",
    "pipeline.turn_end_order": "reflector_first",
    "pipeline.slot_release": "after_words",
    "pipeline.ranking": "free",
    "reflector.rejudge": "best_of_completed",
    "reflector.fallback": "refire",
    "reflector.coverage": "distinct",
    "reflector.threshold": "fixed",
}
"""The anchor's code's pipeline rules (issue 10): the ``paper`` preset, and the defaults."""

EXCLUSIVE_FIELDS = {"trigger": IntervalTriggerConfig.EXCLUSIVE, "load.arrivals": PoissonArrivals.EXCLUSIVE}
"""Fields of which one replaces the other when overridden (see :mod:`streamrag.base.config.overrides`)."""

SHADOWING_FIELDS = {"latency": LatencyConfig.SHADOWS}
"""Fields that win over others: an override of the weaker one drops the winner the
scenario set (see :mod:`streamrag.base.config.overrides`)."""


def load_scenario(name_or_path: str, overrides: list[str] | None = None, *, seed: int | None = None) -> ResolvedScenario:
    """Load a built-in scenario by name or a TOML file, apply ``--set`` overrides (one
    group), resolve latencies."""
    cwd = Path.cwd()
    groups = [[(key, anchor_file_setting(key, value, cwd)) for key, value in map(parse_override, overrides or [])]]
    return scenario_from_dict(read_scenario(name_or_path), groups, seed=seed, origin=name_or_path)


def scenario_from_dict(
    raw: dict[str, Any],
    groups: list[list[Override]] | None = None,
    *,
    seed: int | None = None,
    origin: str = "<dict>",
) -> ResolvedScenario:
    """Validate a scenario given as tables, apply override groups, resolve latencies."""
    data = apply_overrides(raw, groups or [], exclusive=EXCLUSIVE_FIELDS, shadows=SHADOWING_FIELDS)
    if seed is not None:
        data["seed"] = seed
    scenario = validated(Scenario, data, f"scenario {origin}")
    stages = scenario.latency.resolve()
    return ResolvedScenario(scenario=_resolve_hedge(scenario, stages), stages=stages)


def _resolve_hedge(scenario: Scenario, stages: LatencyStages) -> Scenario:
    """A ``hedge`` trigger's unset inputs from the scenario: CRAG's length prior, the tool
    latency's ``quantile`` (L_q) and the cadence's word interval (:mod:`streamrag.pipeline.hedge`)."""
    trigger = scenario.trigger
    if not isinstance(trigger, HedgeTriggerConfig):
        return scenario
    from streamrag.data.generated.crag_shape import N_WORDS_HISTOGRAM

    filled = trigger.model_copy(
        update={
            "lengths": dict(N_WORDS_HISTOGRAM) if trigger.lengths is None else trigger.lengths,
            "threshold_ms": stages.L.quantile_ms(trigger.quantile) if trigger.threshold_ms is None else trigger.threshold_ms,
            "word_interval_ms": 1000 / scenario.input.delta_wps if trigger.word_interval_ms is None else trigger.word_interval_ms,
        }
    )
    return scenario.model_copy(update={"trigger": filled})
