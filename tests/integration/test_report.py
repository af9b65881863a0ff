"""``streamrag report``: one self-contained page per run, checked as HTML and in a real
headless Chromium (skipped with a reason where none is installed); whole-run traces."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from _browser import Browser, chromium
from _inputs import record, run_cli, write_jsonl

import streamrag
from streamrag.report.build import write_report
from streamrag.simulator.views import runtrace


@pytest.fixture(scope="module")
def demo_sim(tmp_path_factory: pytest.TempPathFactory, demo_analysis: Path) -> Path:
    """The demo's simulation: every demo question, analyzed (the shared analysis) then
    replayed with the gold reflector (the demo's arm that mis-fires)."""
    out = tmp_path_factory.mktemp("demo") / "simulation-gold"
    streamrag.simulate(demo_analysis / "stabilization.csv", "paper_rq3", out=out,
                       set=["select.population=all", "reflector.kind='gold'"])  # fmt: skip
    return out


def test_the_page_is_self_contained_and_holds_every_part(demo_sim: Path, tmp_path: Path) -> None:
    report = write_report(demo_sim, tmp_path / "r.html")
    html = report.html.read_text(encoding="utf-8")
    assert report.n_rows == 32 and report.n_timelines == 32
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "nothing is fetched"
    assert "<link" not in html and "@import" not in html
    for part in ("Settings and provenance", "Summary", "Figures", "Per question", "Timelines", "paper_rq3"):
        assert part in html, part
    assert html.count('src="data:image/svg+xml;base64,') == 1
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1))
    misfires = runtrace.misfire_ids(demo_sim)
    assert misfires and data["timeline_order"][: len(misfires)] == misfires  # mis-fires first
    assert data["table"]["columns"][:2] == ["interaction_id", "question_type"]  # a table run: no text at hand
    # The Perfetto file beside the page: every question, one process each.
    trace = json.loads(report.perfetto.read_text(encoding="utf-8"))
    assert report.perfetto == tmp_path / "r.perfetto.json" and 'href="r.perfetto.json"' in html
    assert len({e["pid"] for e in trace["traceEvents"]}) == 32


def test_strings_from_the_run_stay_text(tmp_path: Path) -> None:
    """An id and a query holding markup are escaped in the page and inert in its data."""
    evil_id, evil_query = "<img src=x onerror=alert(1)>", "who founded acme </script><script>alert(2)</script> robotics"
    data = write_jsonl(tmp_path / "d.jsonl", [record(0, interaction_id=evil_id, query=evil_query), record(1)])
    run = tmp_path / "run"
    streamrag.simulate(data, "paper_rq3", out=run, set=["select.population=all"])
    html = write_report(run, tmp_path / "r.html").html.read_text(encoding="utf-8")
    assert evil_id not in html and "<script>alert" not in html
    blob = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1)
    assert "<" not in blob and ">" not in blob  # nothing inside can end the block
    data = json.loads(blob)
    row = data["table"]["rows"][0]
    assert evil_id in row and evil_query in row  # the text itself survives, as data


def test_an_analysis_report_draws_its_figures_as_svg(demo_analysis: Path, tmp_path: Path) -> None:
    report = write_report(demo_analysis, tmp_path / "a.html")
    html = report.html.read_text(encoding="utf-8")
    assert report.perfetto is None and report.n_timelines == 0
    assert html.count('src="data:image/svg+xml;base64,') == 3 and "rq1" in html


def _figures(html: str) -> list[tuple[str, str]]:
    """The page's figures: (caption, mime type of the image)."""
    return re.findall(r'<figure><img alt="([^"]*)" src="data:([^;]+);base64,', html)


@pytest.mark.parametrize("fmt", ["pdf", "png"])
def test_a_sweep_page_shows_its_figures_whatever_format_it_wrote(demo_analysis: Path, tmp_path: Path, capsys, fmt: str) -> None:
    table = demo_analysis / "stabilization.csv"
    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'kind = "simulate"\ninput = "table:{table}"\nscenario = "paper_rq3"\n[base]\n"select.population" = "all"\n'
        '[axes]\n"latency.L_ms" = [600, 1000]\n"trigger.kind" = ["every_word", "none"]\n',
        encoding="utf-8",
    )
    out = tmp_path / "sweep"
    assert run_cli(["sweep", grid, "--out", out, "--figure-format", fmt, "-q"], capsys)[0] == 0
    written = sorted(p.name for p in (out / "figures").iterdir())
    assert written == [f"{stem}.{fmt}" for stem in ("pareto", "saved_vs_H_scatter", "saved_vs_bounds")]
    html = write_report(out, tmp_path / "sweep.html").html.read_text(encoding="utf-8")
    # Drawn again from the sweep's own table: every figure it wrote, as SVG.
    assert sorted(_figures(html)) == [(name.rsplit(".", 1)[0].replace("_", " "), "image/svg+xml") for name in written]


@pytest.mark.parametrize("fmt", ["pdf", "png"])
def test_analysis_and_simulation_pages_show_their_figures_whatever_format_the_run_wrote(tmp_path: Path, capsys, fmt: str) -> None:
    analysis, simulation = tmp_path / "analysis", tmp_path / "simulation"
    assert run_cli(["analyze", streamrag.demo_path(), "--split", "all", "--out", analysis, "--figure-format", fmt,
                    "-q"], capsys)[0] == 0  # fmt: skip
    assert sorted(p.suffix for p in analysis.iterdir() if p.suffix in (".pdf", ".png", ".svg")) == [f".{fmt}"] * 3
    argv = ["simulate", "--table", analysis / "stabilization.csv", "--scenario", "paper_rq3", "--out", simulation]
    assert run_cli([*argv, "--figure-format", fmt, "-q"], capsys)[0] == 0
    for run, n in ((analysis, 3), (simulation, 1)):
        figures = _figures(write_report(run, tmp_path / f"{run.name}.html").html.read_text(encoding="utf-8"))
        assert len(figures) == n and {mime for _, mime in figures} == {"image/svg+xml"}, run


def test_report_command_and_its_errors(demo_sim: Path, tmp_path: Path, capsys) -> None:
    code, out, _ = run_cli(["report", demo_sim, "--out", tmp_path / "x" / "p.html", "--max-timelines", "3"], capsys)
    assert code == 0 and "32 rows, 3 timelines" in out
    code, _, err = run_cli(["report", tmp_path], capsys)
    assert code == 1 and "not a run folder" in err and "Traceback" not in err


def test_whole_run_perfetto_is_valid_trace_event_format(demo_sim: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "all.json"
    code, text, _ = run_cli(["trace", demo_sim, "--all", "--perfetto", out], capsys)
    assert code == 0 and "32 question(s) as one process each" in text
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    pids = {e["pid"] for e in events}
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert len(pids) == 32 and set(names) == pids  # one named process per question
    for e in events:
        assert e["ph"] in ("M", "X", "i") and isinstance(e["pid"], int) and 0 < e["pid"] < 2**31
        if e["ph"] != "M":
            assert isinstance(e["ts"], int) and e["ts"] >= 0 and isinstance(e["tid"], int) and e["cat"] and e["name"]
        if e["ph"] == "X":
            assert isinstance(e["dur"], int) and e["dur"] >= 0
        if e["ph"] == "i":
            assert e["s"] == "t"
    # The pids are the questions' own: a single question's file merges without a clash.
    one = tmp_path / "one.json"
    qid = runtrace.misfire_ids(demo_sim)[0]
    assert run_cli(["trace", demo_sim, qid, "--perfetto", one], capsys)[0] == 0
    single = json.loads(one.read_text(encoding="utf-8"))["traceEvents"]
    assert {e["pid"] for e in single} <= pids
    code, text, _ = run_cli(["trace", demo_sim, "--misfires", "--perfetto", tmp_path / "m.json"], capsys)
    assert code == 0 and f"{len(runtrace.misfire_ids(demo_sim))} question(s)" in text
    code, _, err = run_cli(["trace", demo_sim, "--all"], capsys)
    assert code == 1 and "--perfetto" in err


def test_word_markers_carry_the_word_when_the_run_read_crag(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1, query="where was acme robotics founded")])
    run = tmp_path / "run"
    streamrag.simulate(data, "paper_rq3", out=run, set=["select.population=all"])
    out = tmp_path / "all.json"
    assert run_cli(["trace", run, "--all", "--perfetto", out], capsys)[0] == 0
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    names = sorted(e["args"]["name"] for e in events if e["name"] == "process_name")
    assert names == ["q0: who founded acme robotics in boston", "q1: where was acme robotics founded"]
    words = [e["args"]["detail"] for e in events if e["name"] == "word"]
    assert "word 1 'who'" in words and "word 5 'founded'" in words
    assert run_cli(["trace", run, "--all", "--no-text", "--perfetto", out], capsys)[0] == 0
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    assert sorted(e["args"]["name"] for e in events if e["name"] == "process_name") == ["q0", "q1"]
    assert "word 1" in [e["args"]["detail"] for e in events if e["name"] == "word"]
    page = write_report(run, tmp_path / "r.html").html.read_text(encoding="utf-8")
    assert "q1: where was acme robotics founded" in page
    assert "where was acme" not in write_report(run, tmp_path / "n.html", texts=False).html.read_text(encoding="utf-8")


# --- in a real browser ------------------------------------------------------------------


@pytest.fixture
def browser(tmp_path: Path):
    exe = chromium()
    if exe is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium; 'make setup' does it as root)")
    b = Browser(exe, tmp_path / "profile")
    b.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    yield b
    b.close()


def _column(b: Browser, name: str) -> list[object]:
    return b.evaluate(
        f"""(() => {{ const j = [...document.querySelectorAll('#questions thead th')].findIndex(t => t.dataset.col === {json.dumps(name)});
        return [...document.querySelectorAll('#questions tbody tr')].map(tr => tr.children[j].textContent); }})()"""
    )


def test_the_demo_report_in_chromium(demo_sim: Path, tmp_path: Path, browser: Browser) -> None:
    report = write_report(demo_sim, tmp_path / "report.html")
    browser.open(report.html.as_uri())
    assert browser.errors == []
    # Offline: the page asks for nothing but itself and its inline data: figures.
    assert [u for u in browser.requested() if not u.startswith("data:")] == [report.html.as_uri()]
    assert browser.evaluate("document.querySelectorAll('#questions tbody tr').length") == 32
    # Sorting: a click sorts ascending, a second descending (read back from the page).
    browser.evaluate("document.querySelector('#questions th[data-col=\"saved_ms\"]').click()")
    saved = [float(v) for v in _column(browser, "saved_ms")]
    assert saved == sorted(saved) and saved[0] < saved[-1]
    browser.evaluate("document.querySelector('#questions th[data-col=\"saved_ms\"]').click()")
    assert [float(v) for v in _column(browser, "saved_ms")] == sorted(saved, reverse=True)
    # Filtering: the mis-fires box keeps the mis-fires.
    browser.evaluate("(() => { const c = document.getElementById('only-misfires'); c.click(); })()")
    assert set(_column(browser, "misfire")) == {"true"}
    assert len(_column(browser, "misfire")) == len(runtrace.misfire_ids(demo_sim))
    # Timelines: the mis-fires' are drawn at load, the others on opening.
    drawn = browser.evaluate("document.querySelectorAll('#timelines svg').length")
    assert 1 <= drawn <= 5
    assert browser.evaluate("document.querySelector('#timelines svg').querySelectorAll('rect.span').length") > 3
    browser.evaluate("document.querySelector('#tl-31').open = true")
    assert browser.evaluate("document.querySelectorAll('#tl-31 svg rect.span').length") > 0
    assert browser.errors == []
    shot = browser.screenshot(tmp_path / "demo-simulation-report.png")
    assert shot.read_bytes().startswith(b"\x89PNG")
    if artifacts := os.environ.get("STREAMRAG_ARTIFACTS"):
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy2(shot, Path(artifacts) / shot.name)


def test_hostile_strings_do_not_run_in_chromium(tmp_path: Path, browser: Browser) -> None:
    evil = "<img src=x onerror=\"document.title='owned'\">"
    data = write_jsonl(tmp_path / "d.jsonl", [record(0, interaction_id=evil, query=f"who founded acme {evil} robotics")])
    run = tmp_path / "run"
    streamrag.simulate(data, "paper_rq3", out=run, set=["select.population=all"])
    browser.open(write_report(run, tmp_path / "r.html").html.as_uri())
    assert browser.errors == [] and browser.evaluate("document.title") != "owned"
    assert browser.evaluate("document.querySelectorAll('main img[src=x]').length") == 0
    assert evil in _column(browser, "interaction_id")[0]


def test_load_and_sweep_runs_have_pages(demo_analysis: Path, tmp_path: Path, capsys) -> None:
    table = demo_analysis / "stabilization.csv"
    load = tmp_path / "load"
    argv = [
        "simulate",
        "--table",
        table,
        "--scenario",
        "load",
        "--out",
        load,
        "--set",
        "load.arrivals.n_sessions=40",
        "--set",
        "load.warmup_s=0",
        "-q",
    ]
    assert run_cli(argv, capsys)[0] == 0
    report = write_report(load, tmp_path / "load.html")
    html = report.html.read_text(encoding="utf-8")
    assert report.n_rows == 40 and report.n_timelines == 40 and "Per session" in html and "saved per counted session" in html
    sessions = json.loads(report.perfetto.read_text(encoding="utf-8"))["traceEvents"]
    assert len({e["pid"] for e in sessions}) == 40

    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'kind = "simulate"\ninput = "table:{table}"\nscenario = "paper_rq3"\n[base]\n"select.population" = "all"\n'
        '[axes]\n"latency.L_ms" = [600, 1000]\n',
        encoding="utf-8",
    )
    assert run_cli(["sweep", grid, "--out", tmp_path / "sweep", "-q"], capsys)[0] == 0
    report = write_report(tmp_path / "sweep", tmp_path / "sweep.html")
    html = report.html.read_text(encoding="utf-8")
    figures = sorted(p.name for p in (tmp_path / "sweep" / "figures").iterdir())
    assert report.n_rows == 2 and report.perfetto is None and "Per point" in html
    assert figures and html.count('<figure><img alt="') == len(figures)
