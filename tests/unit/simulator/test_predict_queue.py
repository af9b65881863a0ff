"""The streaming tool queue's model (streamrag.simulator.predict.queue): who enters, each
job's patience under both wait models, and the break-even they bracket."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from streamrag.cli import main
from streamrag.simulator.predict.atoms import point
from streamrag.simulator.predict.load import LoadModel, predict_break_even
from streamrag.simulator.predict.queue import queue_load, session_jobs, solve_queue, virtual_wait_atoms
from streamrag.simulator.predict.queueing import erlang_c_wait_s, impatient_queue
from streamrag.simulator.predict.saving import Timeline
from streamrag.simulator.scenario import load_scenario
from streamrag.sweep.inputs import PreparedInputs, parse_input

G, L = 590.0, 600.0


def line(offsets, deciding, held=None, turn_end=4000.0, check=0.0) -> Timeline:
    n = len(offsets)
    held = np.zeros(n, dtype=bool) if held is None else np.array(held)
    return Timeline(
        tuple(range(1, n + 1)), np.array(offsets, dtype=float), np.array(deciding), np.array(deciding), held, turn_end, check, n
    )


def test_a_misfire_sends_every_call_and_the_refire_and_none_leaves() -> None:
    for model in ("independent", "shared"):
        patience, served, total, _ = session_jobs(line([3000, 2000], [False, False]), G, 500.0, point(L), True, model)
        assert patience == [np.inf] * 3 and served == 3 and total == pytest.approx(3 * L)


def test_independent_waits_leave_when_the_session_decides() -> None:
    # calls reach the queue at T − d + G: 1590, 2590, 3590 ms; the first decides at 1590 + w + L
    w = 400.0
    patience, served, total, _ = session_jobs(line([3000, 2000, 1000], [True, False, False]), G, w, point(L), True, "independent")
    decided = 4000.0  # max(T + check, 1590 + 400 + 600 = 2590) = T
    assert patience == [np.inf, decided - 2590, decided - 3590]
    # call 2 starts at 2990 and is served whole; call 3 starts at 3990 and is cut after 10 ms
    assert served == 3 and total == pytest.approx(L + L + 10.0)


def test_shared_wait_keeps_calls_ahead_of_the_decider_and_drops_those_an_L_behind() -> None:
    lt = line([3000, 2000, 1500, 200], [False, True, False, False], check=500.0)
    # arrivals 1590 (before the decider), 2590 (the decider), 3090 (< L behind), 4390 (> L
    # behind: it starts after the decision whatever the shared wait, so it leaves once
    # it has waited until T + check = 4500)
    patience, *_ = session_jobs(lt, G, 100.0, point(L), True, "shared")
    assert patience == [np.inf, np.inf, np.inf, 110.0]
    # independently, each leaves at the session's decision, max(T + check, 2590 + 100 + L) = 4500
    patience, *_ = session_jobs(lt, G, 100.0, point(L), True, "independent")
    assert patience == [2910.0, np.inf, 1410.0, 110.0]
    # without the check the last call reaches the queue after the decision: it never enters
    patience, *_ = session_jobs(line([3000, 2000, 1500, 200], [False, True, False, False]), G, 100.0, point(L), True, "shared")
    assert len(patience) == 3


def test_a_held_call_is_dropped_unstarted_when_the_reflector_does_not_wait() -> None:
    lt = line([3000, 0.0], [True, False], held=[False, True])
    patience, served, *_ = session_jobs(lt, G, 0.0, point(L), True, "independent")
    assert patience == [np.inf] and served == 1


def test_queue_load_is_a_distribution_over_the_entering_jobs() -> None:
    lines = [line([3000, 2000, 1000], [True, False, False]), line([3000, 2000], [False, False])]
    offer = queue_load(lines, G, 400.0, point(L), True, "independent")
    assert offer.jobs == pytest.approx(3.0)  # (3 + 3) / 2
    assert offer.patience_probs.sum() == pytest.approx(1.0)
    assert offer.patience_probs[np.isinf(offer.patience_ms)].sum() == pytest.approx(4 / 6)
    assert offer.mean_service_ms == pytest.approx((5 * L + 10.0) / 6) and offer.cs2 > 0


def test_virtual_wait_atoms_keep_the_mean_and_the_chance_of_no_wait() -> None:
    q = impatient_queue(4, 3.5, 1.0, np.array([0.5, np.inf]), np.array([0.5, 0.5]))
    assert q is not None
    atoms = virtual_wait_atoms(q, 24)
    assert atoms.probs[0] == pytest.approx(1 - q.p_wait) and atoms.values_ms[0] == 0.0
    assert atoms.mean_ms == pytest.approx(1000 * q.mean_wait_s, rel=1e-9)


def test_withdrawals_wait_less_than_if_every_job_stayed() -> None:
    lines = [line([3000, 2000, 1000], [True, False, False])] * 5
    offer = queue_load(lines, G, 400.0, point(L), True, "independent")
    lam = 3.0 / (offer.jobs * offer.mean_service_ms)  # sessions per ms: 0.75 of 4 servers
    q = solve_queue(4, lam, offer)
    assert q is not None and q.p_abandon > 0
    patient = erlang_c_wait_s(4, lam * offer.jobs * 1000, 1000 / offer.mean_service_ms) * (1 + offer.cs2) / 2
    assert q.mean_wait_s < patient


@pytest.fixture(scope="module")
def population():
    return PreparedInputs(parse_input("generated:120:seed=3", base_dir=Path.cwd())).questions().questions


def test_the_break_even_is_the_midpoint_of_the_two_wait_models(population) -> None:
    rs = load_scenario("load", ["latency.profile=paper-rq3"])
    pred = predict_break_even(population, rs)
    assert set(pred.by_waits) == {"independent", "shared"}
    values = list(pred.by_waits.values())
    assert all(v is not None for v in values)
    assert pred.low == min(values) and pred.high == max(values)  # type: ignore[type-var]
    assert pred.break_even == pytest.approx((pred.low + pred.high) / 2)  # type: ignore[operator]
    model = LoadModel(population, rs)
    for name, be in pred.by_waits.items():
        assert be is not None
        assert model.share_not_gaining(be + 0.01, name) >= 0.5 > model.share_not_gaining(be - 0.01, name)


def test_predict_cli_writes_each_wait_models_break_even(tmp_path, capsys) -> None:
    table = tmp_path / "t.csv"
    assert main(["generate", str(table), "--questions", "40", "--table"]) == 0
    capsys.readouterr()
    out = tmp_path / "p.json"
    assert main(["predict", "--table", str(table), "--scenario", "load", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1 and "break-even offered load" in printed[0]
    data = json.loads(out.read_text(encoding="utf-8"))["break_even"]
    assert set(data["by_waits"]) == {"independent", "shared"}
    assert data["low"] <= data["offered_load"] <= data["high"]
