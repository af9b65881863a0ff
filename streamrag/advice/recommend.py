"""The recommendation: one policy (or none), why each other lost, and whether it holds across G/F.

At each G/F end a policy is **eligible** when it has a point within the budget, can be
deployed with the user's ranker and runs live in the Speculator, its p50 user gains
(``answer_ms_difference.median`` > 0, the lower end of its 95% CI too) and still gains at the stated load (the load
simulation's ``at_load.answer_ms_difference.median`` > 0; without a simulation, the
stated rate below ``predict``'s break-even). The end's pick is the eligible
policy whose p50 user gains most (on a tie, the fewer extra calls). Across ends the
recommendation is the policy eligible at every end whose smallest p50 gain over the ends is
largest (the worst case of what the user did not state; on a tie, the one whose most extra
calls are fewest); it *holds across the G/F range* when it is every end's pick too.
When none is eligible everywhere, the answer is ``none``: do not fire before the user
finishes.

With several question sets, each (question set, G/F end) is a *case* and the worst case
runs over all of them; the recommendation *holds across the question sets* when each
set's own worst-case pick is it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NONE = "none"

Case = tuple[str, str]
"""(question set, G/F end)."""


def case_of(row: dict[str, Any]) -> Case:
    return (row["questions"], row["end"])


def case_label(case: Case, cases: Sequence[Case]) -> str:
    """The end's name, and the question set's before it when there are several."""
    return case[1] if len({c[0] for c in cases}) == 1 else f"{case[0]} · {case[1]}"


def verdict(row: dict[str, Any]) -> str:
    """Why the row's policy is not eligible at its end ("" when it is), in one phrase."""
    if row.get("no_point"):
        return str(row["no_point"])
    if row.get("not_deployable"):
        return str(row["not_deployable"])
    gain, low = row.get("answer_ms_difference.median"), row.get("answer_ms_difference.median.ci_low")
    if gain is None or gain <= 0:
        return f"its p50 user gains nothing ({_ms(gain)})"
    if low is None or low <= 0:
        return f"its p50 user's gain is not told apart from 0 ({_ms(gain)}, 95% CI from {_ms(low)})"
    loaded = row.get("at_load.answer_ms_difference.median")
    turns = row.get("break_even.median_saved.turns_per_s")
    stated = row["at_load.turns_per_s"]
    if loaded is None:  # not simulated: predict's crossing decides
        if row["at_load.offered_load"] >= 1.0 or (row.get("at_load.llm_offered_load") or 0.0) >= 1.0:
            return str(row["at_load.source"])  # the workers cannot serve the baseline itself
        if turns is not None and turns <= stated:
            return f"stops gaining below the stated load (predicted break-even {turns:.2f} turns/s < {stated:g})"
        return ""
    if loaded <= 0:
        where = f"; predicted break-even {turns:.2f} turns/s" if turns is not None else ""
        return f"stops gaining below the stated load (p50 gain at {stated:g} turns/s: {_ms(loaded)}{where})"
    return ""


def _ms(value: float | None) -> str:
    return "undefined" if value is None else f"{value:+.0f} ms"


def _best_worst_case(by_policy: dict[str, dict[Case, dict[str, Any]]], cases: Sequence[Case]) -> dict[str, tuple[float, float]]:
    """(worst-case p50 gain, − most extra calls) over ``cases`` of each policy eligible in all of them."""
    score: dict[str, tuple[float, float]] = {}
    for policy, per_case in by_policy.items():
        if all(c in per_case and not per_case[c]["verdict"] for c in cases):
            score[policy] = (
                min(per_case[c]["answer_ms_difference.median"] for c in cases),
                -max(per_case[c]["extra_calls.mean"] for c in cases),
            )
    return score


def recommend(rows: Sequence[dict[str, Any]], cases: Sequence[Case]) -> dict[str, Any]:
    """The recommendation over ``rows`` of every case (module docstring)."""
    by_policy: dict[str, dict[Case, dict[str, Any]]] = {}
    for row in rows:
        by_policy.setdefault(row["policy"], {})[case_of(row)] = row
    label = {c: case_label(c, cases) for c in cases}
    picks: dict[str, str] = {}
    for case in cases:
        eligible = [r for r in rows if case_of(r) == case and not r["verdict"]]
        best = max(eligible, key=lambda r: (r["answer_ms_difference.median"], -r["extra_calls.mean"]), default=None)
        picks[label[case]] = NONE if best is None else best["policy"]
    score = _best_worst_case(by_policy, cases)
    chosen = max(score, key=lambda p: score[p]) if score else NONE
    why: dict[str, str] = {}
    for policy, per_case in by_policy.items():
        if policy == chosen:
            continue
        failing = {label[c]: per_case[c]["verdict"] for c in cases if per_case[c]["verdict"]}
        if len(failing) == len(cases) and len(set(failing.values())) == 1:
            why[policy] = next(iter(failing.values()))
        elif failing:
            why[policy] = "; ".join(f"{e}: {v}" for e, v in failing.items())
        elif score[policy][0] < score[chosen][0]:
            why[policy] = (
                f"its worst-case p50 user's gain, {score[policy][0]:.0f} ms, is below {chosen}'s {score[chosen][0]:.0f} ms"
            )
        else:
            why[policy] = (
                f"ties {chosen}'s worst-case p50 user's gain ({score[chosen][0]:.0f} ms) with "
                f"{-score[policy][1]:.2f} extra calls per turn against {-score[chosen][1]:.2f}"
            )
    sets = list(dict.fromkeys(c[0] for c in cases))
    by_set: dict[str, str] = {}
    for questions in sets:
        own = _best_worst_case(by_policy, [c for c in cases if c[0] == questions])
        by_set[questions] = max(own, key=lambda p: own[p]) if own else NONE
    n_ends = len({c[1] for c in cases})
    out: dict[str, Any] = {
        "policy": chosen,
        "fire_before_the_user_finishes": chosen != NONE,
        "picks_by_end": picks,
        "holds_across_G_F_range": None if n_ends < 2 else all(p == chosen for p in picks.values()),
        "picks_by_question_set": by_set if len(sets) > 1 else None,
        "holds_across_question_sets": None if len(sets) < 2 else all(p == chosen for p in by_set.values()),
        "why_others_lost": why,
    }
    if chosen != NONE:
        rows_of = by_policy[chosen]
        out["label_by_end"] = {label[c]: rows_of[c]["label"] for c in cases}
        out["worst_case_p50_gain_ms"] = score[chosen][0]
    return out


def sentence(rec: dict[str, Any], rows: Sequence[dict[str, Any]], cases: Sequence[Case]) -> str:
    """The recommendation in words (the console's last lines, ``advice.json``'s ``answer``)."""
    if rec["policy"] == NONE:
        return "Do not fire before the user finishes: no policy gains for the p50 user within the budget at the stated load."
    first = next(r for r in rows if r["policy"] == rec["policy"] and case_of(r) == cases[0])
    parts = [
        f"Fire before the user finishes with {first['label']}: the p50 user's answer comes "
        f"{first['answer_ms_difference.median']:.0f} ms sooner ({first['baseline_ms.median']:.0f} → "
        f"{first['streaming_ms.median']:.0f} ms), the p90 user's {first['answer_ms_difference.p90']:.0f} ms, "
        f"for {first['extra_calls.mean']:.2f} extra tool calls per turn"
    ]
    if first.get("at_load.answer_ms_difference.median") is not None:
        parts.append(
            f"; at {first['at_load.turns_per_s']:g} turns/s the p50 user still gains "
            f"{first['at_load.answer_ms_difference.median']:.0f} ms"
        )
    turns = first.get("break_even.median_saved.turns_per_s")
    if turns is not None:
        parts.append(
            f"; it stops paying at about {turns:.2f} turns/s "
            f"[{first['break_even.median_saved.turns_per_s_low']:.2f}, {first['break_even.median_saved.turns_per_s_high']:.2f}] "
            f"(p90 user: {first['break_even.p90.turns_per_s']:.2f} turns/s)"
            if first.get("break_even.p90.turns_per_s") is not None
            else f"; it stops paying at about {turns:.2f} turns/s"
        )
    elif first.get("break_even.source"):
        parts.append(f"; break-even {first['break_even.source']}")
    else:
        parts.append("; predict finds no break-even below offered load 0.99")
    if len(cases) > 1:
        gains = ", ".join(
            f"{case_label(case_of(r), cases)} {r['answer_ms_difference.median']:.0f} ms"
            for r in rows
            if r["policy"] == rec["policy"]
        )
        holds = [
            text
            for text in (
                _holds(rec["holds_across_G_F_range"], rec["picks_by_end"], "across the G/F range", "end"),
                _holds(rec["holds_across_question_sets"], rec["picks_by_question_set"], "on every question set", "set"),
            )
            if text
        ]
        where = case_label(cases[0], cases)
        parts.append(f" (numbers at {where}; the p50 user's gain by case: {gains}). {' '.join(holds)}")
    else:
        parts.append(".")
    return "".join(parts)


def _holds(holds: bool | None, picks: dict[str, str] | None, where: str, each: str) -> str:
    """Whether the recommendation holds ``where`` ("" when there is one case only)."""
    if holds is None or picks is None:
        return ""
    if holds:
        return f"It holds {where}."
    listed = ", ".join(f"{case} {pick}" for case, pick in picks.items())
    return f"It does not hold {where} (each {each}'s pick: {listed}); it is the best worst case."
