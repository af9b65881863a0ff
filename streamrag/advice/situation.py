"""The deployer's situation, stated once: flags or a small TOML with the same keys.

The keys are :class:`Situation`'s fields, each with its meaning and default where it is
declared (``docs/reference/config.md`` lists them). Nothing else is assumed: without
``llm_workers`` the LLM is unlimited; ``predict``'s break-even queues the tool only either
way (the load simulation at the stated rate is where the LLM's workers count). The
defaults are echoed in every output.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import Field, model_validator

from streamrag.base.config.tomlfile import read_toml
from streamrag.base.errors import ConfigError
from streamrag.base.validation import MAX_MS, MAX_WPS, SettingsModel, validated
from streamrag.engine.latency import ConstantLatency, LatencyModel, LogNormalLatency

RANGE_PROFILES = ("paper-rq3", "arora2025")
"""The built-in profiles whose G and F bound the range used when the user gives none:
``paper-rq3`` (constants, the anchor's) and ``arora2025`` (log-normal, Stream RAG's Table 3)."""
MAX_TURNS_PER_S = 10_000.0
"""The largest arrival rate a situation may state (a call centre's peak is far below)."""
MAX_WORKERS = 100_000
MAX_EXTRA_CALLS = 1_000.0

USER_INPUT = ("typed", "hypotheses", "stt_revisions")
"""The keys saying how the users' words arrive, besides a uniform cadence (at most one)."""

Ms = float | tuple[float, float]
"""A stage's latency: one number (constant ms) or (p50, p90) ms (log-normal)."""


class Situation(SettingsModel):
    """What a voice-agent engineer states (module docstring); validated, frozen."""

    tool_p50_ms: float | None = Field(default=None, gt=0, le=MAX_MS, allow_inf_nan=False)
    """The tool's median latency (ms); with ``tool_p90_ms``, a log-normal through both
    (``LogNormalLatency``). Or ``measurements``."""
    tool_p90_ms: float | None = Field(default=None, gt=0, le=MAX_MS, allow_inf_nan=False)
    """The tool's 90th-percentile latency (ms), greater than ``tool_p50_ms``."""
    measurements: str | None = None
    """Instead of ``tool_p50_ms``/``tool_p90_ms``: a file of measured durations, fitted as
    ``calibrate`` fits it (its L; its G and F too when it has them)."""
    G_ms: Ms | None = None
    """Query generation latency (ms): ``590`` (constant) or ``[590, 850]`` (p50, p90:
    log-normal); absent: both ends of :data:`RANGE_PROFILES`, with the answer at each."""
    F_ms: Ms | None = None
    """Response (final answer) generation latency (ms), as ``G_ms``; absent: both ends of
    :data:`RANGE_PROFILES`."""
    words_per_s: float = Field(default=2.5, gt=0, le=MAX_WPS, allow_inf_nan=False)
    """How fast users speak or type (words/s), at a uniform cadence; ``typed`` and
    ``hypotheses`` bring their own timing instead."""
    typed: str | None = None
    """Users type: a folder of keystroke logs (the 136M Keystrokes format); each question is
    typed as one of its participants typed (``data.asr.kind = "typed"``)."""
    hypotheses: str | None = None
    """Users speak through your speech recognizer: a file of its partial hypotheses per
    question (``streamrag speak`` writes one; ``data.asr.kind = "file"``)."""
    stt_revisions: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    """Users speak through a recognizer that revises: the probability that a word's arrival
    rewrites the trailing words (the revision model, ``data.asr.p``)."""
    input: str | tuple[str, ...] = "demo"
    """The questions: ``demo``, ``generated:N``, ``table:PATH``, ``data:PATH`` (as
    ``frontier --input``), or a list of them: the answer then says whether it holds on every set."""
    turns_per_s: float = Field(gt=0, le=MAX_TURNS_PER_S, allow_inf_nan=False)
    """The arrival rate of turns at peak (turns/s)."""
    tool_workers: int = Field(ge=1, le=MAX_WORKERS)
    """The tool's servers: how many calls it serves at once."""
    llm_workers: int | None = Field(default=None, ge=1, le=MAX_WORKERS)
    """The LLM's servers in the load simulation (query and answer generation share them);
    absent: unlimited."""
    max_extra_calls: float = Field(default=1.0, ge=0, le=MAX_EXTRA_CALLS, allow_inf_nan=False)
    """The budget: mean extra tool calls per turn (calls fired − 1)."""
    ranker: Literal["tool", "local"] = "tool"
    """What the agent can rank each word prefix with: ``tool`` (only the tool: a ranking per
    word is a search) or ``local`` (a local index)."""
    local_rank_ms: float = Field(default=0.0, ge=0, le=MAX_MS, allow_inf_nan=False)
    """A local index's time (ms) to rank one word prefix, charged to the ``*_local`` policies'
    trigger."""
    settings: tuple[str, ...] = ()
    """Scenario settings for every simulated point, ``key=value`` as ``--set`` takes them
    (say ``pipeline.max_threads=2``)."""
    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    """The seed of the latency draws and of the bootstrap."""
    load_sessions: int = Field(default=3000, ge=0, le=1_000_000)
    """Sessions of the load simulation at the stated rate (0: none; the break-even is
    ``predict``'s either way)."""

    @property
    def inputs(self) -> tuple[str, ...]:
        """The question sets, in the order given."""
        return (self.input,) if isinstance(self.input, str) else self.input

    @model_validator(mode="after")
    def _inputs(self) -> Situation:
        if not self.inputs or len(set(self.inputs)) != len(self.inputs):
            raise ValueError(f"input: give one question set or a list of different ones, got {list(self.inputs)}")
        return self

    @model_validator(mode="after")
    def _one_input_kind(self) -> Situation:
        given = [name for name in USER_INPUT if getattr(self, name) is not None]
        if len(given) > 1:
            raise ValueError(f"{' and '.join(given)}: give one way your users' words arrive")
        if given:
            analyzed = [q for q in self.inputs if not (q == "demo" or q.startswith("data:"))]
            if analyzed:
                raise ValueError(
                    f"{given[0]}: applies to question sets the run analyzes (demo, data:PATH); {', '.join(analyzed)} "
                    "was analyzed already, its words arriving one by one"
                )
        return self

    @property
    def input_settings(self) -> tuple[str, ...]:
        """The scenario settings of the users' input (``typed``, ``hypotheses``, ``stt_revisions``)."""
        if self.typed is not None:
            return ("data.asr.kind=typed", f"data.asr.path={self.typed}")
        if self.hypotheses is not None:
            return ("data.asr.kind=file", f"data.asr.path={self.hypotheses}")
        if self.stt_revisions is not None:
            return (f"data.asr.p={self.stt_revisions:g}",)
        return ()

    @property
    def user_input(self) -> str:
        """How the users' words arrive, in words (outputs echo it)."""
        if self.typed is not None:
            return f"typed as the participants of {self.typed} typed"
        if self.hypotheses is not None:
            return f"spoken: the recognizer's hypotheses in {self.hypotheses}"
        if self.stt_revisions is not None:
            return f"spoken at {self.words_per_s:g} words/s through a recognizer revising with p = {self.stt_revisions:g}"
        return f"{self.words_per_s:g} words/s, uniform"

    @model_validator(mode="after")
    def _settings_parse(self) -> Situation:
        from streamrag.base.config.overrides import parse_override

        for item in self.settings:
            try:
                parse_override(item)
            except ConfigError as exc:
                raise ValueError("settings: " + str(exc).removeprefix("--set ")) from None
        return self

    @model_validator(mode="after")
    def _one_tool_latency(self) -> Situation:
        pair = (self.tool_p50_ms, self.tool_p90_ms)
        if self.measurements is not None:
            if pair != (None, None):
                raise ValueError("give the tool's latency once: tool_p50_ms/tool_p90_ms or measurements, not both")
        elif None in pair:
            raise ValueError("the tool's latency is needed: tool_p50_ms and tool_p90_ms, or measurements (a file)")
        elif not pair[1] > pair[0]:  # type: ignore[operator]
            raise ValueError(f"tool_p90_ms ({pair[1]}) must be greater than tool_p50_ms ({pair[0]})")
        for name in ("G_ms", "F_ms"):
            _stage_model(name, getattr(self, name))  # a bad value: now, naming the key
        return self

    def stated(self) -> dict[str, Any]:
        """The situation as JSON-able values, every default included (outputs echo it)."""
        return self.model_dump(mode="json")


def _stage_model(name: str, value: Ms | None, source: str = "") -> LatencyModel | None:
    if value is None:
        return None
    if isinstance(value, tuple):
        p50, p90 = value
        if not (math.isfinite(p50) and math.isfinite(p90) and 0 < p50 < p90 <= MAX_MS):
            raise ValueError(f"{name}: (p50, p90) must be finite with 0 < p50 < p90 ≤ {MAX_MS:.0f} ms, got {list(value)}")
        return LogNormalLatency(p50_ms=p50, p90_ms=p90, source=source or f"advise {name}: p50 {p50} / p90 {p90} ms")
    if not (math.isfinite(value) and 0 <= value <= MAX_MS):
        raise ValueError(f"{name}: must be a finite number of ms between 0 and {MAX_MS:.0f}, got {value}")
    return ConstantLatency(ms=value, source=source or f"advise {name}: {value} ms")


def parse_ms(text: str) -> Ms:
    """A flag's latency: ``590`` (constant) or ``590/850`` (p50/p90)."""
    parts = text.split("/")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"{text!r}: expected MS or P50/P90 in ms, e.g. 590 or 590/850") from None
    if len(values) == 1:
        return values[0]
    if len(values) == 2:
        return (values[0], values[1])
    raise ValueError(f"{text!r}: expected MS or P50/P90 in ms, e.g. 590 or 590/850")


def read_situation(path: str | os.PathLike[str] | None, flags: dict[str, Any]) -> Situation:
    """The situation file's keys (if any), then the flags given (which win)."""
    where = f"situation {path}" if path is not None else "situation"
    raw: dict[str, Any] = {} if path is None else read_toml(path, "situation")
    for name in ("measurements", "typed", "hypotheses"):  # relative to the file, as scenarios do
        if path is not None and isinstance(raw.get(name), str):
            given = Path(raw[name]).expanduser()
            raw[name] = str(given if given.is_absolute() else Path(path).resolve().parent / given)
    for name in ("typed", "hypotheses"):  # a flag's path: relative to where the command runs
        if isinstance(flags.get(name), str):
            flags = {**flags, name: str(Path(flags[name]).expanduser().resolve())}
    data = {**raw, **{k: v for k, v in flags.items() if v is not None}}
    if isinstance(raw.get("settings"), list) and flags.get("settings"):  # the flags' settings after the file's
        data["settings"] = [*raw["settings"], *flags["settings"]]
    for name in ("settings", "input"):
        if isinstance(data.get(name), list):
            data[name] = tuple(data[name]) if name == "settings" or len(data[name]) != 1 else data[name][0]
    for name in ("G_ms", "F_ms"):  # TOML: [p50, p90]; pydantic takes the list as the tuple
        if isinstance(data.get(name), list):
            data[name] = tuple(data[name])
    return validated(Situation, data, where)


class LatencyEnd(NamedTuple):
    """One end of the G/F range: its name, what it assumes, and the three stages."""

    name: str
    assumes: str
    stages: dict[str, LatencyModel]


def latency_ends(situation: Situation, tool_stages: dict[str, LatencyModel]) -> list[LatencyEnd]:
    """The G/F ends to answer at: one (``given``) when the user gave both (or the
    measurements held them), else one per :data:`RANGE_PROFILES` profile, each filling only
    the stages not given. ``tool_stages`` holds L (and G, F when measured)."""
    from streamrag.engine.profiles import load_profile

    given: dict[str, LatencyModel] = dict(tool_stages)
    for name in ("G", "F"):
        model = _stage_model(f"{name}_ms", getattr(situation, f"{name}_ms"))
        if model is not None:
            given[name] = model
    missing = [s for s in ("G", "F") if s not in given]
    if not missing:
        return [LatencyEnd("given", "G and F as given", given)]
    ends = []
    for profile_name in RANGE_PROFILES:
        profile = load_profile(profile_name)
        filled = {**given, **{s: profile.stages[s] for s in missing}}
        what = "; ".join(f"{s} {describe(profile.stages[s])}" for s in missing)
        ends.append(LatencyEnd(profile_name, f"{' and '.join(missing)} not given: {profile_name}'s ({what})", filled))
    return ends


def describe(model: LatencyModel) -> str:
    """A stage's model in a few words (``590 ms``, ``log-normal p50 590 / p90 850 ms``)."""
    if isinstance(model, ConstantLatency):
        return f"constant {model.ms:g} ms"
    if isinstance(model, LogNormalLatency):
        return f"log-normal p50 {model.p50_ms:g} / p90 {model.p90_ms:g} ms"
    return f"{model.kind} (median {model.nominal_ms:.0f} ms, mean {model.mean_ms:.0f} ms)"


def tool_stages(situation: Situation, out: Path) -> tuple[dict[str, LatencyModel], str]:
    """The tool's L (and G, F when the measurements hold them), and where L came from."""
    if situation.measurements is None:
        p50, p90 = situation.tool_p50_ms, situation.tool_p90_ms
        assert p50 is not None and p90 is not None  # the validator checked
        return {"L": LogNormalLatency(p50_ms=p50, p90_ms=p90, source=f"advise: tool p50 {p50} / p90 {p90} ms")}, "tool p50/p90"
    from streamrag.calibration.calibrate import calibrate
    from streamrag.engine.profiles import load_profile

    fitted = calibrate(situation.measurements, out / "latency" / "measured.toml")
    profile = load_profile(str(fitted.profile_path))
    if "L" not in profile.stages:
        raise ConfigError(
            f"measurements {situation.measurements}: no stage L (the tool) among its stages ({', '.join(profile.stages)})"
        )
    return {s: m for s, m in profile.stages.items() if s in ("G", "L", "F")}, f"fitted to {situation.measurements}"
