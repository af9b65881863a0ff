"""Helpers shared by the engine/pipeline/simulate tests (not a test module)."""

from __future__ import annotations

from typing import Any

import numpy as np

from streamrag.base.config.overrides import parse_override
from streamrag.engine.loop import run_virtual
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.scenario import ResolvedScenario, scenario_from_dict
from streamrag.simulator.simulate import replay_question


def table_q(qid: str = "q", n: int = 6, t_sc: int | None = None, t_suf: int | None = None, qtype: str = "") -> SimQuestion:
    """A question known only by its table row (oracle reflector: sufficient iff t ≥ t*)."""
    return SimQuestion(qid, n, n if t_sc is None else t_sc, t_suf, question_type=qtype)


def full_q(
    qid: str,
    topk: list[list[int]],
    *,
    gold: set[int] | frozenset[int] = frozenset(),
    scores: dict[int, float] | None = None,
    coverage: dict[int, float] | None = None,
    occurrences: dict[int, float] | None = None,
) -> SimQuestion:
    """An evidence-mode question from explicit prefix top-k rows; ``scores`` and
    ``coverage`` (distinct tokens; ``occurrences`` defaults to the same) are the full
    query's values per chunk, read for each prefix's top chunk."""
    from streamrag.analysis.evidence.prefixes import PrefixEvidence
    from streamrag.simulator.questions import sim_question

    arr = np.array(topk, dtype=np.int32)
    top1 = arr[:, 0].tolist()
    scores, coverage = scores or {}, coverage or {}
    occurrences = coverage if occurrences is None else occurrences
    rank = [next((r for r, c in enumerate(row, start=1) if c in gold), 0) for row in arr.tolist()]
    ev = PrefixEvidence(
        arr,
        np.array([scores.get(c, 0.0) for c in top1]),
        np.array([coverage.get(c, 0.0) for c in top1]),
        np.array([occurrences.get(c, 0.0) for c in top1]),
        np.array(rank, dtype=np.int8),
    )
    return sim_question(qid, len(topk), ev, arr.shape[1])


OLD_RULES = [
    "pipeline.capped_fire=drop",
    "pipeline.turn_end_order=calls_first",
    "reflector.rejudge=newest",
    "reflector.fallback=reuse",
]
"""streamrag's rules before the anchor's were adopted (the alternatives to the paper preset)."""


def const_scenario(
    *,
    delta: float = 2.0,
    G: float = 100,
    L: float = 300,
    F: float = 500,
    trigger: dict[str, Any] | None = None,
    reflector: dict[str, Any] | None = None,
    max_threads: int | None = 4,
    extra: list[str] | None = None,
    seed: int = 0,
) -> ResolvedScenario:
    raw: dict[str, Any] = {
        "name": "test",
        "seed": seed,
        "input": {"kind": "uniform", "delta_wps": delta},
        "trigger": trigger or {"kind": "interval", "words": 3},
        "pipeline": {"max_threads": max_threads},
        "reflector": reflector or {"kind": "heuristic"},
        "latency": {"profile": "paper-rq3", "G_ms": G, "L_ms": L, "F_ms": F},
    }
    if max_threads is None:
        raw["pipeline"] = {}
    return scenario_from_dict(raw, [[parse_override(o) for o in extra or []]])


def replay(q: SimQuestion, rs: ResolvedScenario) -> list[dict[str, Any]]:
    """One question's events (validated against the pydantic models as emitted)."""
    return run_virtual(lambda clock: replay_question(clock, q, rs, validate=True))


def compact(events: list[dict[str, Any]]) -> list[tuple]:
    """(t_us, kind, the other fields but qid) per event: easy to write by hand."""
    out = []
    for e in events:
        rest = {k: v for k, v in e.items() if k not in ("qid", "t_us", "kind")}
        out.append((e["t_us"], e["kind"], *rest.values()))
    return out


def small_table(n: int, seed: int = 1):
    """A valid §7 stabilization table of ``n`` questions (ids ``t-0000`` …), as a DataFrame.

    About a third are retrieved-gold (t_suf defined); built here so the CLI tests do not
    depend on the data generator.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        n_words = int(rng.integers(3, 20))
        t_sc = int(rng.integers(1, n_words + 1))
        rg = bool(rng.random() < 0.35)
        t_suf = int(rng.integers(1, n_words + 1)) if rg else None
        rows.append(
            {
                "interaction_id": f"t-{i:04d}",
                "domain": "movie",
                "question_type": ["simple", "comparison", "set"][i % 3],
                "static_or_dynamic": "static",
                "n_words": n_words,
                "n_passages": 50,
                "groundable": rg or bool(rng.random() < 0.2),
                "retrieved_gold": rg,
                "t_sc": t_sc,
                "phi_sc": t_sc / n_words,
                "t_suf": t_suf,
                "phi_suf": None if t_suf is None else t_suf / n_words,
                "volatility": 0,
                "gold_density": 0.1 if rg else 0.0,
            }
        )
    df = pd.DataFrame(rows)
    df["t_suf"] = df["t_suf"].astype("Int64")
    return df
