"""Closed-form replay: a question on unlimited capacity, without the event loop (issue 28).

A question replayed alone on unlimited capacity needs no event loop, no jobs, no
resources: every call starts when it is fired and ends G + L later, and nothing waits
for a server. :mod:`~streamrag.simulator.replay.closed` replays it directly — the rows
without recording events (what ``results.csv`` needs is folded as the replay goes), the
trace only when it is written, event for event the engine's. Both are checked identical
to the engine, the reference, on random populations (``tests/parity/test_closed_form.py``).

Selection is automatic (:func:`engine_reason`): what has no closed form stays on the
engine — shared capacity (``[load]``), finite resources, a speculation policy other
than ``always`` (they read the resources' load) — and live input never comes here.
``simulate --engine`` forces the engine. ``manifest.json`` and ``summary.json`` say
which ran: ``"replay": "closed_form" | "engine"``.
"""

from __future__ import annotations

from typing import Any

from streamrag.pipeline.plan import QuestionPlan
from streamrag.simulator.replay.closed import replay
from streamrag.simulator.scenario import ResolvedScenario

CLOSED_FORM = "closed_form"
ENGINE = "engine"


def engine_reason(rs: ResolvedScenario) -> str | None:
    """Why ``rs`` must run on the event engine, or None when the closed form replays it."""
    sc = rs.scenario
    if sc.load is not None:
        return "shared capacity ([load])"
    if sc.resources.limited:
        return "finite resources ([resources])"
    if sc.policy.kind != "always":
        return f"policy.kind {sc.policy.kind!r} reads the resources' load"
    return None


def replay_events(plan: QuestionPlan, rs: ResolvedScenario) -> list[dict[str, Any]]:
    """One planned question's trace events by the closed form: what
    :func:`~streamrag.simulator.simulate.replay_question` records on the engine."""
    q, sc = plan.question, rs.scenario
    events: list[dict[str, Any]] = []
    replay(plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, events)
    return events
