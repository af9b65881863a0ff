"""What the live tests share: a short cadence, a free port, known questions as live turns."""

from __future__ import annotations

import socket

FAST = ["--set", "input.delta_wps=20", "--set", "latency.G_ms=5", "--set", "latency.F_ms=20"]
"""A compressed cadence for real-clock runs of ``streamrag live``: δ = 20 w/s, G 5 ms, F 20 ms."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def replay_setup(n, overrides):
    """The first ``n`` demo questions in global scope (scenario, questions, live turns)."""
    from streamrag.analysis.entry import open_source
    from streamrag.data.demo import demo_path
    from streamrag.data.selection import Selection
    from streamrag.live.fidelity import replay_turns
    from streamrag.simulator.question_select import load_selected
    from streamrag.simulator.scenario import load_scenario

    rs = load_scenario(
        "paper_rq3", ["data.scope=global", "data.split=all", "select.population=all", f"select.limit={n}", *overrides]
    )
    questions = load_selected(rs.scenario, data=demo_path()).questions
    queries = {q.interaction_id: q.record.query for q in open_source(demo_path(), selection=Selection(split=None)).questions}
    return rs, questions, replay_turns(questions, queries, rs)
