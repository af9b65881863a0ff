"""Live mode: real tools, real words, the real clock — and the same pipeline as simulate.

Real-clock tests are short (δ = 20 w/s, L of tens of ms) and assert with tolerances
that allow for a loaded 2-core machine; the exact checks run the live path on the
virtual clock, where it must reproduce the simulator to the microsecond.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _livehelpers import FAST, replay_setup

from streamrag.base.columns import declared_dtypes
from streamrag.base.errors import RecordError
from streamrag.cli import main
from streamrag.engine.clock import Clock, RealClock
from streamrag.engine.latency import ConstantLatency
from streamrag.engine.loop import run_real, run_virtual
from streamrag.engine.trace import read_trace
from streamrag.live.backends import BM25Tool, HttpTool, load_corpus
from streamrag.live.fidelity import REPLAY
from streamrag.live.live_run import result_row
from streamrag.live.session import run_turn
from streamrag.live.words import HeardWord, TypedWords, read_transcript
from streamrag.pipeline.tools import DelayedTool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_chunks():
    return load_corpus("demo")


@pytest.mark.parametrize("coverage", ["distinct", "occurrences"])
def test_the_live_path_on_the_virtual_clock_reproduces_the_simulator_exactly(demo_chunks, coverage):
    # Same questions, same G/L/F: words pushed by a word source, every L a real BM25 call
    # (delayed by the constant L on the clock), the reflector judging the real results
    # (re-scored by the judge, coverage counted as the scenario says).
    from streamrag.simulator.simulate import simulate

    rs, questions, turns = replay_setup(6, ["latency.L_ms=600", f"reflector.coverage={coverage}"])
    run = simulate(questions, rs)
    simulated = {o.row.interaction_id: o for o in run.outputs}
    simulated_checks: dict[str, list[dict]] = {}  # a closed-form run records its trace when asked, whole
    for event in map(json.loads, run.trace_bytes().splitlines()):
        if event["kind"] == "check":
            simulated_checks.setdefault(event["qid"], []).append(event)

    async def main_(clock: Clock):
        tool = BM25Tool(demo_chunks, clock)
        delayed = DelayedTool(tool, ConstantLatency(ms=600), clock)
        return [(turn, await run_turn(clock, turn, delayed, tool, rs, lambda e: None)) for turn in turns]

    checks = []
    for turn, outcome in run_virtual(main_):
        sim = simulated[turn.qid]
        assert result_row(outcome, turn, rs) == sim.row
        live_checks = [e for e in outcome.events if e["kind"] == "check"]
        assert live_checks == simulated_checks.get(turn.qid, [])
        checks += live_checks
    # the judged coverage is the count asked for, on results where the two counts differ
    by_id = {q.interaction_id: q for q in questions}
    counts = [(by_id[c["qid"]].coverage_distinct, by_id[c["qid"]].coverage_occurrences, c) for c in checks]
    asked = 0 if coverage == "distinct" else 1
    assert all(c["coverage"] == float(cols[asked][c["prefix_t"] - 1]) for *cols, c in counts)
    assert any(d[c["prefix_t"] - 1] != o[c["prefix_t"] - 1] for d, o, c in counts)


def test_typed_words_are_heard_as_typed_and_a_line_ends_the_turn():
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"what is   the capital\nsecond turn \n\n")
    os.close(write_fd)

    async def collect(clock: Clock):
        turns = []
        async for typed in TypedWords.turns(read_fd):
            turns.append([w async for w in typed.words(clock, 0)])
        return turns

    turns = run_real(collect)
    os.close(read_fd)
    assert turns == [
        [HeardWord("what", False), HeardWord("is", False), HeardWord("the", False), HeardWord("capital", True)],
        [HeardWord("second", False), HeardWord("turn", True)],  # the line break was already read with the space
    ]


def test_a_transcript_is_read_and_a_bad_line_names_its_field(tmp_path):
    good = tmp_path / "t.jsonl"
    good.write_text('{"word": "hello", "t_ms": 0}\n{"word": "world", "t_ms": 120.5}\n', encoding="utf-8")
    words = read_transcript(good)
    assert (words.texts, words.word_us) == (["hello", "world"], [0, 120500])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"word": "hello", "t_ms": 50}\n{"word": "world", "t_ms": 10}\n', encoding="utf-8")
    with pytest.raises(RecordError, match=r"bad.jsonl:2: field 't_ms'"):
        read_transcript(bad)


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b'{"word": "hello", "t_ms": 0}\n\xff\xfe bad\n', r"t.jsonl:2: not UTF-8 text"),
        (b'{"word": "hello", "t_ms": 1e300}\n', r"t.jsonl:1: field 't_ms': .* ms into the turn"),
        (b'{"word": "hello", "t_ms": 0}\n{"word": "world", "t_ms": 10000000}\n', r"t.jsonl:2: field 't_ms'"),
    ],
)
def test_a_transcript_a_live_run_could_not_read_or_would_wait_out_is_refused(tmp_path, capsys, content, where) -> None:
    # A not-UTF-8 file gave a traceback, and a time of hours (or 10^300 ms) a run that waits.
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    with pytest.raises(RecordError, match=where):
        read_transcript(path)
    assert main(["live", "--transcript", str(path), "--out", str(tmp_path / "o")]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_live_replay_on_the_real_clock_matches_its_simulation(tmp_path, demo_chunks):
    # In-process BM25 with an injected constant L of 20 ms; δ = 20 w/s.
    from streamrag.simulator.simulate import simulate

    rs, questions, turns = replay_setup(3, ["input.delta_wps=20", "latency.G_ms=5", "latency.F_ms=20", "latency.L_ms=20"])
    simulated = {r.interaction_id: r for r in simulate(questions, rs).rows}

    async def main_(clock: Clock):
        tool = BM25Tool(demo_chunks, clock)
        delayed = DelayedTool(tool, ConstantLatency(ms=20), clock)
        return [(turn, await run_turn(clock, turn, delayed, tool, rs, lambda e: None)) for turn in turns]

    for turn, outcome in run_real(main_):
        live = result_row(outcome, turn, rs)
        sim = simulated[turn.qid]
        assert (live.used_prefix_t, live.misfire, live.calls_fired) == (sim.used_prefix_t, sim.misfire, sim.calls_fired)
        # never earlier than the model; late by scheduling noise only
        assert live.baseline_ms >= sim.baseline_ms - 1
        assert abs(live.saved_ms - sim.saved_ms) < 25, (live, sim)


@pytest.fixture
def server():
    """``streamrag serve demo`` on a free port (latency from the test's parameter); stopped after."""
    procs = []

    def start(latency_ms: float) -> str:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "streamrag", "serve", "demo", "--port", "0", "--latency-ms", str(latency_ms)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        procs.append(proc)
        line = proc.stdout.readline()
        assert "serving" in line, proc.stderr.read()
        return line.split(" at ")[1].split()[0]

    yield start
    for proc in procs:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=10)  # reads and closes its pipes
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
            proc.kill()
            proc.communicate()


def test_the_server_answers_as_bm25_in_process(server, demo_chunks):
    url = server(0)

    async def ask(clock: Clock):
        http = HttpTool(url, clock)
        try:
            return (await http.search("which company had more employees", 3)).hits
        finally:
            await http.aclose()

    hits = run_real(ask)
    local = BM25Tool(demo_chunks, RealClock()).rank("which company had more employees", 3)
    assert [(h.chunk_id, h.score, h.text) for h in hits] == [(h.chunk_id, h.score, h.text) for h in local]


def test_live_replay_against_the_server_writes_a_run_and_the_comparison(server, tmp_path, capsys):
    url = server(20)
    out = tmp_path / "run"
    assert main(["live", "--replay", "3", "--url", url, "--out", str(out), "--quiet", *FAST]) == 0
    for name in ("trace.jsonl", "results.csv", "summary.json", "manifest.json", "replay.csv", "replay.json"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "replay.json").read_text())
    assert summary["n_questions"] == 3
    replay = REPLAY.read_csv(out / "replay.csv")
    assert declared_dtypes(replay) == dict(REPLAY.columns) and str(replay["same_decision"].dtype) == "boolean"
    assert summary["same_decision"]["n"] == 3
    assert abs(summary["delta_saved_ms"]["mean"]) <= 15
    assert summary["measured_L_ms"]["min"] >= 20  # the injected latency is a floor
    assert "mean delta saved" in capsys.readouterr().out
    qid = next(e.qid for e in read_trace(out / "trace.jsonl"))
    assert main(["trace", str(out), qid]) == 0


# A dead endpoint (nothing listens) now stops live before the run, exit 1 with one line:
# tests/hostile/test_hostile_load.py::test_live_against_a_dead_endpoint_fails_before_the_run.


def test_a_slow_endpoint_times_out_into_recorded_events(server, tmp_path, capsys):
    url = server(300)
    out = tmp_path / "slow"
    assert main(["live", "--replay", "1", "--url", url, "--timeout-ms", "50", "--out", str(out), *FAST]) == 0
    assert "no reply within 50 ms" in capsys.readouterr().out
    errors = [e for e in read_trace(out / "trace.jsonl") if e.kind == "tool_error"]
    assert errors and all("no reply within 50 ms" in e.error for e in errors)


def test_ctrl_c_leaves_a_readable_partial_trace(tmp_path):
    out = tmp_path / "interrupted"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "streamrag", "live", "--replay", "5", "--out", str(out), "--latency-ms", "20",
           "--set", "input.delta_wps=4"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    trace = out / "trace.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not trace.is_file() or trace.stat().st_size < 2000):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (err, _, trace.is_file() and trace.stat().st_size)
    assert "interrupted" in err
    events = read_trace(trace)  # every line parses
    assert events and events[0].kind == "word"
    assert not any(e.kind == "answer_ready" and e.arm == "baseline" for e in events[-1:])  # cut mid-run


def test_the_view_renders_off_the_callbacks_and_prints_what_the_trace_holds_in_order(tmp_path, demo_chunks):
    # Each line is rendered by the view's own task, never inside a pipeline callback
    # (under LiveRecorder.emit), and what is printed is exactly the view of the trace
    # rendered afterwards: same lines, same order. The run is cut (as Ctrl-C cuts it)
    # inside a callback of the second turn: the lines still queued are printed too.
    import io
    from collections.abc import AsyncIterator

    import anyio
    from rich.console import Console

    from streamrag.live.display import LiveDisplay
    from streamrag.live.live_run import RunWriter, run_live

    rs, _, turns = replay_setup(3, ["input.delta_wps=20", "latency.G_ms=5", "latency.F_ms=20"])
    rendered_in_callback: list[str] = []
    cut: list[anyio.CancelScope] = []

    def console() -> Console:
        return Console(file=io.StringIO(), highlight=False, soft_wrap=True, color_system=None)

    class CheckedDisplay(LiveDisplay):
        def show(self, e):
            frame = sys._getframe(1)
            while frame is not None:
                if frame.f_code.co_name == "emit":
                    rendered_in_callback.append(e["kind"])
                frame = frame.f_back
            super().show(e)

    class CuttingWriter(RunWriter):
        def event(self, event):
            super().event(event)
            if event["qid"] == turns[1].qid and event["kind"] == "tool_done":
                cut[0].cancel()

    async def given() -> AsyncIterator:
        for turn in turns:
            yield turn

    view = CheckedDisplay(console())
    writer = CuttingWriter(tmp_path, rs, "heuristic", command=["test"], input_mode="live-replay")
    tools = []

    async def main_(clock: Clock):
        tools.append(DelayedTool(BM25Tool(demo_chunks, clock), ConstantLatency(ms=20), clock))
        with anyio.CancelScope() as scope:
            cut.append(scope)
            await run_live(clock, given(), tools[0], BM25Tool(demo_chunks, clock), rs, writer, view)

    run_real(main_)
    writer.close()
    assert not rendered_in_callback
    events = [e.model_dump(exclude_none=False) for e in read_trace(tmp_path / "trace.jsonl")]
    assert [r.interaction_id for r in writer.rows] == [turns[0].qid]
    assert events[-1]["qid"] == turns[1].qid  # cut in the second turn
    expected = LiveDisplay(console())
    for turn in turns[:2]:
        expected.begin(turn.qid, turn.source.texts, f"({tools[0].name})")
        for e in (e for e in events if e["qid"] == turn.qid):
            expected.show(e)
        if turn is turns[0]:
            expected.saved(writer.rows[0])
    lines = view.console.file.getvalue().splitlines()
    assert lines == expected.console.file.getvalue().splitlines()
    assert "back after" in lines[-1] or "back after" in lines[-2]  # the cut event's line was still queued
