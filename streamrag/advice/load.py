"""A policy under the stated load: ``predict``'s break-even and a load simulation at the stated rate.

The point's own scenario (what the frontier replayed) gains ``[resources] tool`` = the
situation's tool workers (servers, FIFO), the LLM's workers (``llm_workers``; unlimited
when not stated), policy ``always`` and
``[load]``: Poisson arrivals at the stated turns/s, ``load_sessions`` sessions (the built-in
``load`` scenario's 3,000 by default), the first tenth of them warm-up. Then

- :func:`~streamrag.simulator.predict.load.predict_break_even` (what ``streamrag predict``
  prints for that scenario, the LLM unlimited: its model queues the tool only): the
  offered load, and turns/s, at which the median paired difference and the p90 user's
  gain reach 0, each with its band over the two wait models;
- :func:`~streamrag.simulator.load.run.run_load` (what ``streamrag simulate`` runs for that
  scenario): both systems on shared tool workers at the stated rate; its
  ``answer_ms_difference`` is the saving at the stated load.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.scenario import ResolvedScenario, scenario_from_dict

from .situation import Situation

N_SESSIONS = 3000
"""Sessions a load scenario file holds when the situation simulates none (``load_sessions = 0``)."""
WARMUP_SHARE = 0.1
"""The share of a load run's sessions that arrive during the warm-up and are not counted."""


def scenario_tables(rs: ResolvedScenario, *, profile: str | None = None) -> dict[str, Any]:
    """A resolved scenario as tables that load back to an equal one; ``profile`` replaces
    ``latency.profile`` (a path relative to where the tables are written)."""
    tables = rs.scenario.model_dump(mode="json", exclude_none=True)
    if profile is not None:
        tables["latency"]["profile"] = profile
    return tables


def with_load(tables: dict[str, Any], situation: Situation, *, llm: bool = True) -> dict[str, Any]:
    """``tables`` with the situation's shared capacity and arrivals (module docstring);
    ``llm=False``: the LLM unlimited whatever the situation says (what ``predict`` models)."""
    n = situation.load_sessions or N_SESSIONS
    warmup_s = WARMUP_SHARE * n / situation.turns_per_s
    workers = situation.llm_workers if llm else None
    llm_table = {"kind": "unlimited"} if workers is None else {"kind": "servers", "servers": workers}
    return {
        **tables,
        "resources": {"tool": {"kind": "servers", "servers": situation.tool_workers}, "llm": llm_table},
        "policy": {"kind": "always"},
        "load": {
            "arrivals": {"kind": "poisson", "rate_per_s": situation.turns_per_s, "n_sessions": n},
            "warmup_s": warmup_s,
        },
    }


def loaded(rs: ResolvedScenario, situation: Situation, *, llm: bool = True) -> ResolvedScenario:
    """``rs`` under the situation's load (:func:`with_load`)."""
    return scenario_from_dict(with_load(scenario_tables(rs), situation, llm=llm), origin=f"advise {rs.scenario.name}")


def break_even(questions: Sequence[SimQuestion], rs_load: ResolvedScenario) -> dict[str, Any]:
    """``predict``'s break-even of each crossing, flat (``break_even.CROSSING.*``), and
    the arrival rate per unit of offered load."""
    from streamrag.simulator.predict.load import predict_break_even
    from streamrag.simulator.predict.timelines import TimelineCache

    pred = predict_break_even(questions, rs_load, TimelineCache(questions, rs_load))
    out: dict[str, Any] = {"turns_per_s_per_offered_load": pred.turns_per_s_at_full_load}
    for name in pred.crossings:
        out |= {f"break_even.{name}.{field}": value for field, value in pred.record(name).items()}
    return out


def load_break_even(questions: Sequence[SimQuestion], rs_load: ResolvedScenario, situation: Situation) -> dict[str, Any]:
    """:func:`break_even`, or where ``predict`` does not model the policy (a trigger that
    kills calls in flight, a search per word on the tool) no crossing, its reason
    (``break_even.source``), and the arrival rate per unit of offered load as predict
    computes it (``c/E[L]``: the baseline's tool utilization)."""
    from streamrag.simulator.predict.atoms import stage_atoms
    from streamrag.simulator.predict.load import LOAD_ATOMS
    from streamrag.simulator.predict.saving import unpredictable

    why = unpredictable(rs_load, rs_load.scenario.trigger.build(questions[0])) if questions else ""
    if not why:
        return break_even(questions, rs_load)
    mean_l_ms = stage_atoms(rs_load.stages.L, LOAD_ATOMS).mean_ms
    return {
        "turns_per_s_per_offered_load": 1000.0 * situation.tool_workers / mean_l_ms,
        "break_even.source": f"not predicted ({why}); the load simulation at the stated rate is the check",
    }


def llm_offered_load(rs: ResolvedScenario, situation: Situation) -> float | None:
    """The baseline's utilization of the LLM workers at the stated rate: λ·(E[G] + E[F])/c
    (None: the LLM is unlimited)."""
    if situation.llm_workers is None:
        return None
    from streamrag.simulator.predict.atoms import stage_atoms
    from streamrag.simulator.predict.load import LOAD_ATOMS

    work_ms = stage_atoms(rs.stages.G, LOAD_ATOMS).mean_ms + stage_atoms(rs.stages.F, LOAD_ATOMS).mean_ms
    return situation.turns_per_s * work_ms / 1000.0 / situation.llm_workers


def at_load(
    questions: Sequence[SimQuestion],
    rs_load: ResolvedScenario,
    offered_load: float,
    n_sessions: int,
    llm_offered: float | None = None,
) -> dict[str, Any]:
    """The load simulation at the stated rate (``at_load.*``); not run when the tool
    workers (offered load ≥ 1) or the LLM workers (``llm_offered`` ≥ 1) cannot serve the
    baseline itself, or ``n_sessions`` is 0."""
    if n_sessions == 0:
        return {"at_load.source": "not simulated (load_sessions = 0)"}
    if rs_load.scenario.endpoint.kind != "fixed":
        return {
            "at_load.source": "not simulated: a load run does not put an endpointer's false cut-offs on the shared "
            "capacity (the replay's saving is the figure)"
        }
    for what, load in (("tool", offered_load), ("LLM", llm_offered)):
        if load is not None and load >= 1.0:
            return {
                "at_load.source": f"not simulated: the {what} workers' offered load is {load:.2f} ≥ 1, they cannot serve "
                "the baseline itself at this rate",
            }
    from streamrag.simulator.load.output import load_summary
    from streamrag.simulator.load.run import run_load

    with run_load(questions, rs_load) as run:
        summary = load_summary(run, {})
    diff, saved = summary["answer_ms_difference"], summary["saved_ms"]
    tool = (summary["streaming"]["resources"] or {}).get("tool") or {}
    return {
        "at_load.source": f"load simulation: {summary['sessions']['counted']} counted sessions of {summary['sessions']['n']}",
        "at_load.answer_ms_difference.median": diff["median"],
        "at_load.answer_ms_difference.p90": diff["p90"],
        "at_load.saved_ms.median": saved["median"],
        "at_load.baseline_ms.median": summary["baseline"]["answer_ms"]["median"],
        "at_load.streaming_ms.median": summary["streaming"]["answer_ms"]["median"],
        "at_load.streaming_tool_utilization": tool.get("utilization"),
        "at_load.calls_fired.mean": summary["streaming"]["calls_fired"]["mean"],
    }


def write_scenarios(rs: ResolvedScenario, situation: Situation, out: Path, header: str, description: str) -> tuple[Path, Path]:
    """``scenario.toml`` (the policy alone: what the Speculator loads, its rankings' price
    left out) and ``load_scenario.toml`` (with the situation's load, its LLM workers too:
    what ``simulate`` takes to reproduce the row, and ``predict`` with the LLM set
    unlimited), both with the latency profile beside them."""
    from streamrag.base.atomic import write_text_atomic
    from streamrag.base.config.tomlfile import dumps_toml

    profile = Path(rs.scenario.latency.profile)
    relative = (
        str(profile.relative_to(out.resolve())) if profile.is_absolute() and profile.is_relative_to(out.resolve()) else None
    )
    tables = {**scenario_tables(rs, profile=relative), "name": "advise", "description": description}
    pipeline = {k: v for k, v in tables.get("pipeline", {}).items() if k not in ("ranking", "local_rank_ms")}
    # the Speculator's ranker costs what it costs: no price to set; its framework ends the turn
    # and its recognizer gives the words: no endpointer, no modelled input
    live = {k: v for k, v in {**tables, "pipeline": pipeline}.items() if k != "endpoint"}
    if isinstance(live.get("data"), dict) and "asr" in live["data"]:
        live["data"] = {k: v for k, v in live["data"].items() if k != "asr"}
    files = []
    for name, data in (("scenario.toml", live), ("load_scenario.toml", with_load(tables, situation))):
        path = out / name
        write_text_atomic(path, header + dumps_toml(data))
        files.append(path)
    return files[0], files[1]
