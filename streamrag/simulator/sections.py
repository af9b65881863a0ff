"""The sections of a scenario (:mod:`streamrag.simulator.scenario`) other than the
trigger, reflector, policy and load, which their own layers declare: ``[pipeline]``,
``[tool]``, ``[latency]``, ``[resources]``, ``[select]`` and ``[data]``."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, model_validator

from streamrag.base.errors import ConfigError
from streamrag.base.validation import MAX_MS, SettingsModel
from streamrag.data.human.asr import AsrConfig
from streamrag.data.selection import Population, Scope
from streamrag.engine.clock import Clock
from streamrag.engine.latency import STAGES, ConstantLatency, LatencyModel, LatencyStages
from streamrag.engine.profiles import load_profile
from streamrag.engine.resources import ResourceConfig, UnlimitedResourceConfig
from streamrag.pipeline.arm import CappedFire, SlotRelease, TurnEndOrder
from streamrag.pipeline.calls import Services
from streamrag.pipeline.outcomes import Effects, MutatingPolicy
from streamrag.pipeline.ranking_cost import Ranking
from streamrag.retrieval.kinds import BM25RetrieverConfig, RetrieverConfig

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
    (:mod:`~streamrag.pipeline.ranking_cost`): ``free`` (computed offline, the anchor's), ``tool``
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
    their ``stages``), so it takes effect (:mod:`streamrag.base.config.overrides`)."""
    profile: str = "paper-rq3"
    """The latency profile: a built-in name (``calibration/profiles/NAME.toml``: ``paper-rq3``,
    ``arora2025``) or a profile file (a path ending in ``.toml``)."""
    L_stage: str = "L"
    """The profile's stage simulated as L: ``L``, or one tool's stage of a profile fitted
    per tool (``L.search_docs``, from ``streamrag calibrate --span 'NAME=L.{ATTR}'``)."""
    G_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    """Query generation G as a constant (ms), replacing the profile's G; absent: the profile's."""
    L_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    """The tool call L as a constant (ms), replacing the profile's L; absent: the profile's."""
    F_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    """Response generation F as a constant (ms), replacing the profile's F; absent: the profile's."""
    stages: dict[Literal["G", "L", "F"], LatencyModel] = Field(default_factory=dict)
    """Stage (G, L or F) → any latency model (``[latency.stages.L]``, by ``kind``), replacing
    the profile's stage; a stage's ``X_ms`` wins over it."""

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
    """The tool backend serving every tool call L."""
    llm: ResourceConfig = UnlimitedResourceConfig()
    """The LLM serving query generation G and response generation F as one pool."""
    query_llm: ResourceConfig | None = None
    """A pool of its own for query generation G; absent: ``llm`` serves it."""
    response_llm: ResourceConfig | None = None
    """A pool of its own for response generation F; absent: ``llm`` serves it."""

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
    """At most this many questions of the population, in input order (the rest are
    skipped as ``over select.limit``); absent: all."""


class DataConfig(_Section):
    split: int | Literal["all"] | None = 0
    """CRAG split to read (0 = validation); ``"all"`` reads every record. ``None`` (no
    file can set it) is what a table replay records when the table's split is unknown
    (:func:`~streamrag.simulator.simulate.recorded_for_table`)."""
    k: int = Field(default=3, ge=1)
    """Top-k: how many chunks of a prefix's ranking count as retrieved (t_suf: a gold chunk
    in the top k; the anchor's 3)."""
    grounding: Literal["exact", "relaxed"] = "exact"
    """Which chunks are gold: ``exact`` (an answer's normalized text in the chunk, the
    anchor's) or ``relaxed`` (every content token of a multi-token answer in the chunk)."""
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
