"""Scenarios: what to simulate, as TOML validated by pydantic.

A scenario is a TOML file or the name of a built-in one (``sim/NAME.toml``, e.g.
``paper_rq3``). ``--set key=value`` overrides address any field by its dotted path; the
value is parsed as a TOML scalar (``3``, ``0.5``, ``true``, ``"text"``), a bare word
being taken as a string. What a ``kind`` change keeps is the one rule of
:mod:`streamrag.base.overrides`, shared with sweep points: a new kind resets its section
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
                 prefix costs a trigger that reads one: :mod:`streamrag.pipeline.ranking`)
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

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, model_validator

from streamrag.base.bundled import scenarios_dir, toml_names
from streamrag.base.digest import file_sha256
from streamrag.base.errors import ConfigError
from streamrag.base.overrides import Override, apply_overrides, parse_override
from streamrag.base.tomlfile import read_toml
from streamrag.base.validation import MAX_MS, SettingsModel, validated
from streamrag.data.human.asr import AsrConfig
from streamrag.data.selection import Population, Scope, Selection
from streamrag.engine.cadence import CadenceModel, UniformCadence
from streamrag.engine.clock import Clock
from streamrag.engine.latency import STAGES, ConstantLatency, LatencyModel, LatencyStages
from streamrag.engine.profiles import is_profile_path, load_profile
from streamrag.engine.resources import ResourceConfig, UnlimitedResourceConfig
from streamrag.pipeline.arm import ArmRules, CappedFire, SlotRelease, TurnEndOrder
from streamrag.pipeline.calls import Services
from streamrag.pipeline.hedge import HedgeTriggerConfig
from streamrag.pipeline.learned import is_model_path, list_models, model_sha256
from streamrag.pipeline.outcomes import Effects, MutatingPolicy
from streamrag.pipeline.policies import AlwaysPolicyConfig, PolicyConfig
from streamrag.pipeline.ranking import Ranking
from streamrag.pipeline.reflectors import HeuristicReflectorConfig, ReflectorConfig
from streamrag.pipeline.triggers import IntervalTriggerConfig, TriggerConfig
from streamrag.retrieval.kinds import BM25RetrieverConfig, RetrieverConfig
from streamrag.simulator.load.workload import LoadConfig, PoissonArrivals

if TYPE_CHECKING:
    from streamrag.analysis.stabilize import AnalysisSettings


class _Section(SettingsModel):
    """Frozen, no unknown key, no boolean for a number (:class:`~streamrag.base.validation.SettingsModel`)."""


class PipelineConfig(_Section):
    max_threads: int | None = Field(default=None, ge=0)
    """Cap on speculative calls in flight; absent (``None``) or 0 = no cap."""
    capped_fire: CappedFire = "defer"
    """A fire blocked by the cap: ``defer`` to the first later word with a free slot, the
    interval counting from the last actual fire (the anchor's code), or ``drop`` it."""
    turn_end_order: TurnEndOrder = "reflector_first"
    """At end of input with no end-of-turn delay: the reflector looks before the calls
    fired on the last word start (the anchor's code), or ``calls_first``."""
    slot_release: SlotRelease = "after_words"
    """A call completing at the instant a word arrives: that word still counts it in
    flight and a slot it frees serves only later words (``after_words``, the anchor's
    asyncio harness), or the slot is free for that word (``at_completion``, the engine's
    completions-first order)."""
    ranking: Ranking = "free"
    """What a ranking of a word prefix costs a trigger that reads one
    (:mod:`~streamrag.pipeline.ranking`): ``free`` (computed offline, the anchor's), ``tool``
    (a search per word on the tool, counted in the calls and the load) or ``local`` (a
    local index, ``local_rank_ms`` per ranking)."""
    local_rank_ms: float = Field(default=0.0, ge=0, le=MAX_MS, allow_inf_nan=False)
    """The local index's time per ranking (``ranking = "local"`` only)."""

    @model_validator(mode="after")
    def _local_rank_ms_with_local(self) -> PipelineConfig:
        if self.local_rank_ms and self.ranking != "local":
            raise ValueError(f"local_rank_ms: applies to ranking = 'local' only (ranking is {self.ranking!r})")
        return self

    @property
    def local_rank_us(self) -> int:
        """``local_rank_ms`` in µs, as a plan takes it."""
        return round(self.local_rank_ms * 1000)

    @property
    def thread_cap(self) -> int | None:
        return self.max_threads or None


class ToolConfig(_Section):
    """``[tool]``: the tool's side-effect class (:mod:`streamrag.pipeline.outcomes`)."""

    effects: Effects = "read_only"
    """``read_only`` (speculate freely), ``idempotent`` (cacheable: replayed as read-only,
    each prefix is called once; the Speculator serves repeats from a cache) or ``mutating``
    (its calls wait for the turn to be confirmed, ``mutating_policy``; the run counts
    unsafe executions, ``unsafe_calls``)."""
    mutating_policy: MutatingPolicy | None = None
    """When a mutating tool's speculative calls may run: ``never``, ``after_authorization``,
    ``deferral`` (the default for a mutating tool) or ``speculative`` (no guard, to measure
    the risk); ``effects = "mutating"`` only."""

    @model_validator(mode="after")
    def _policy_with_mutating(self) -> ToolConfig:
        if self.mutating_policy is not None and self.effects != "mutating":
            raise ValueError(f"mutating_policy: applies to effects = 'mutating' only (effects is {self.effects!r})")
        return self

    @property
    def mutating(self) -> MutatingPolicy | None:
        """The arm's rule (:attr:`~streamrag.pipeline.arm.ArmRules.mutating`): None unless the tool mutates."""
        if self.effects != "mutating":
            return None
        return self.mutating_policy or "deferral"


class LatencyConfig(_Section):
    """Each stage's model: the profile's, replaced by ``stages.X``, replaced by ``X_ms``."""

    SHADOWS: ClassVar[dict[str, tuple[str, ...]]] = {
        "profile": ("G_ms", "L_ms", "F_ms", "stages"),
        **{f"stages.{stage}": (f"{stage}_ms",) for stage in STAGES},
    }
    """Field → the fields that win over it (see :meth:`resolve`): an override changing
    ``profile`` or ``stages.X`` drops the starting tables' ``X_ms`` (and a new profile
    their ``stages``), so it takes effect (:mod:`streamrag.base.overrides`)."""
    profile: str = "paper-rq3"
    L_stage: str = "L"
    """The profile's stage simulated as L: ``L``, or one tool's stage of a profile fitted
    per tool (``L.search_docs``, from ``streamrag calibrate --span 'NAME=L.{ATTR}'``)."""
    G_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    L_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    F_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    stages: dict[Literal["G", "L", "F"], LatencyModel] = Field(default_factory=dict)

    def resolve(self) -> LatencyStages:
        """Profile stages, then ``stages`` overrides, then the ``*_ms`` constants.

        A profile may lack a stage (a fitted profile of measured tool calls only has
        ``L``) when the scenario sets it; its stages other than G, L, F are not simulated.
        """
        profile = load_profile(self.profile)
        stages = {name: model for name, model in profile.stages.items() if name in STAGES}
        if self.L_stage != "L":
            if self.L_stage not in profile.stages:
                raise ConfigError(
                    f"latency.L_stage: {self.profile!r} has no stage {self.L_stage!r} (its stages: {', '.join(profile.stages)})"
                )
            stages["L"] = profile.stages[self.L_stage]
        stages.update(self.stages.items())  # as pairs: dict keys are invariant, Literal["G", "L", "F"] is not str
        for stage in STAGES:
            ms = getattr(self, f"{stage}_ms")
            if ms is not None:
                stages[stage] = ConstantLatency(ms=ms, source=f"scenario latency.{stage}_ms")
        missing = [stage for stage in STAGES if stage not in stages]
        if missing:
            first = missing[0]
            raise ConfigError(
                f"latency.profile: {self.profile!r} has no stage {' or '.join(missing)} "
                f"(its stages: {', '.join(profile.stages)}); set latency.{first}_ms or [latency.stages.{first}]"
            )
        return LatencyStages(**stages)


class ResourcesConfig(_Section):
    """``[resources]``: the capacity every session shares (unlimited by default: a
    question replayed alone). ``llm`` serves query generation G and response generation
    F as one pool; ``query_llm`` / ``response_llm``, when set, make them separate pools."""

    tool: ResourceConfig = UnlimitedResourceConfig()
    llm: ResourceConfig = UnlimitedResourceConfig()
    query_llm: ResourceConfig | None = None
    response_llm: ResourceConfig | None = None

    @property
    def limited(self) -> bool:
        """True when any resource has finite capacity."""
        return any(r is not None and r.kind != "unlimited" for r in (self.tool, self.llm, self.query_llm, self.response_llm))

    def build(self, clock: Clock) -> Services:
        """The resources on ``clock``, as the stages use them."""
        llm = self.llm.build(clock, "llm")
        return Services(
            query_llm=llm if self.query_llm is None else self.query_llm.build(clock, "query_llm"),
            tool=self.tool.build(clock, "tool"),
            response_llm=llm if self.response_llm is None else self.response_llm.build(clock, "response_llm"),
        )


class SelectConfig(_Section):
    population: Population = "all"
    """``all``; ``retrieved_gold`` (t_suf defined, the anchor's RQ3 population); ``fallback``
    (not retrieved-gold: t* = t_sc)."""
    limit: int | None = Field(default=None, ge=1)


class DataConfig(_Section):
    split: int | Literal["all"] | None = 0
    """CRAG split to read (0 = validation); ``"all"`` reads every record. ``None`` (no
    file can set it) is what a table replay records when the table's split is unknown
    (:func:`~streamrag.simulator.simulate.recorded_for_table`)."""
    k: int = Field(default=3, ge=1)
    grounding: Literal["exact", "relaxed"] = "exact"
    retriever: RetrieverConfig = BM25RetrieverConfig()
    """Prefix ranking for ``simulate DATA``, by kind (:mod:`streamrag.retrieval.kinds`;
    ``data.retriever = "dense"`` is short for ``{kind = "dense"}``). On a cosine scale
    (dense) the heuristic reflector uses ``reflector.cosine_threshold`` instead of
    ``score_threshold`` (BM25)."""
    scope: Scope = "per-question"
    """``global``: every question ranked against one index over all questions' pages (or
    over the corpus folder given as DATA: BEIR, or the CRAG data folder)."""
    gold: Literal["answer", "own", "labeled"] | None = None
    """Gold rule in global scope (None: ``labeled`` for a BEIR folder, else ``answer``)."""

    asr: AsrConfig | None = None
    """ASR partial hypotheses instead of word prefixes (:mod:`streamrag.data.human.asr`):
    a call fired on input event t carries hypothesis t, which a later one may revise.
    The revision model (``--set data.asr.p=0.2``), or recorded hypotheses
    (``--set data.asr.kind=file --set data.asr.path=H.jsonl``), which then arrive at
    their recorded times instead of the cadence's. None: word prefixes (the study's model)."""

    entity_predictor: bool = False
    """Run the entity tagger on every prefix (and the full query) for ``simulate DATA``, so a
    ``learned`` trigger whose model reads the entity columns can run (the ``ner`` extra)."""

    @model_validator(mode="after")
    def _asr_needs_bm25(self) -> DataConfig:
        if self.asr is not None and self.retriever.kind != "bm25":
            raise ValueError("asr: partial hypotheses are ranked incrementally with BM25 only (data.retriever kind 'bm25')")
        return self

    def analysis_settings(self) -> AnalysisSettings:
        """What the analyzer runs for ``simulate DATA`` (the paper preset otherwise)."""
        from streamrag.analysis.stabilize import AnalysisSettings

        return AnalysisSettings(
            k=self.k, grounding=self.grounding, retriever=self.retriever, asr=self.asr, entity_predictor=self.entity_predictor
        )


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
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)
    policy: PolicyConfig = Field(default_factory=AlwaysPolicyConfig)
    tool: ToolConfig = Field(default_factory=ToolConfig)
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
        "settings": {...}, "differs_from_paper": [...]}`` (the anchor's six rules and the rankings' price)."""
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


FILE_SETTINGS = (
    "latency.profile",
    "input.path",
    "data.asr.path",
    "load.arrivals.path",
    "trigger.model",
    "data.retriever",
    "data.retriever.target",
)
"""Dotted settings whose value may name a file or folder (see :func:`anchor_file_setting`);
a retriever's only in its ``path/to/file.py:Class`` form."""


def file_settings(raw: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """``(key, table, field)`` of each :data:`FILE_SETTINGS` key the raw tables set: the
    value is ``table[field]``."""
    for key in FILE_SETTINGS:
        *sections, field = key.split(".")
        table: Any = raw
        for section in sections:
            table = table.get(section) if isinstance(table, dict) else None
        if isinstance(table, dict) and field in table:
            yield key, table, field


def anchor_file_setting(key: str, value: Any, base_dir: Path) -> Any:
    """``value`` with a relative file path made absolute against ``base_dir``, when
    ``key`` names a file (``latency.profile`` only when :func:`is_profile_path`)."""
    if key not in FILE_SETTINGS or not isinstance(value, str) or not value:
        return value
    if key.startswith("data.retriever"):  # path/to/file.py:Class names a file; a kind or a module does not
        file, colon, name = value.rpartition(":")
        if not colon or not file.endswith(".py"):
            return value
        return f"{anchor_file_setting('input.path', file, base_dir)}:{name}"
    if (key == "latency.profile" and not is_profile_path(value)) or (key == "trigger.model" and not is_model_path(value)):
        return value  # a built-in profile's or a shipped model's name
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base_dir / path).resolve())


def file_setting_sha256(key: str, value: Any) -> str | None:
    """The content digest of the file a file setting names (a shipped model's by its
    name too), None when it names none (a built-in profile, a missing file): what a sweep
    key records in place of the path."""
    if not isinstance(value, str) or not value:
        return None
    if key == "trigger.model" and not is_model_path(value):
        return model_sha256(value) if value in list_models() else None
    if key == "latency.profile" and not is_profile_path(value):
        return None
    return file_sha256(value) if Path(value).is_file() else None


def _anchor_tables(raw: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    for key, table, field in list(file_settings(raw)):
        table[field] = anchor_file_setting(key, table[field], base_dir)
    return raw


def read_scenario(name_or_path: str) -> dict[str, Any]:
    """The raw tables of a scenario: a TOML file, or a built-in scenario by name.

    File settings of a scenario file are anchored at its folder."""
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or path.is_file():
        return _anchor_tables(read_toml(name_or_path, "scenario"), path.resolve().parent)
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
}
"""The anchor's code's pipeline rules (issue 10): the ``paper`` preset, and the defaults."""

EXCLUSIVE_FIELDS = {"trigger": IntervalTriggerConfig.EXCLUSIVE, "load.arrivals": PoissonArrivals.EXCLUSIVE}
"""Fields of which one replaces the other when overridden (see :mod:`streamrag.base.overrides`)."""

SHADOWING_FIELDS = {"latency": LatencyConfig.SHADOWS}
"""Fields that win over others: an override of the weaker one drops the winner the
scenario set (see :mod:`streamrag.base.overrides`)."""


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
