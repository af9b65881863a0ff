"""The defects of issue 15, each reproduced through the command line, then fixed.

Every test here failed before its fix; the issue's numbering is kept in the names.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from _inputs import files_under, one_error_line, record, run_cli, write_jsonl


def _table_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# 1. Duplicate interaction ids --------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--jobs", "1"],
        ["simulate", "{data}", "--scenario", "paper_rq3", "--out", "{out}"],
        ["ingest", "{data}", "--no-cache", "--jobs", "1"],
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--jobs", "1", "--skip-bad"],
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--scope", "global"],
    ],
    ids=["analyze", "simulate", "ingest", "analyze-skip-bad", "analyze-global"],
)
def test_1_duplicate_interaction_id_is_one_line_naming_file_line_and_field(tmp_path, capsys, command) -> None:
    data = write_jsonl(tmp_path / "dup.jsonl", [record(0), record(1), record(0, query="another question on acme")])
    out = tmp_path / "out"
    argv = [a.format(data=data, out=out) for a in command]
    code, _, err = run_cli(argv, capsys)
    assert code == 1
    line = one_error_line(err)
    assert line.startswith(f"{data}:3: field 'interaction_id': 'q0' repeats line 1"), line
    assert files_under(out) == []


# 4. Tables of analyze --skip-bad are readable everywhere -----------------------------


@pytest.fixture
def skip_bad_table(tmp_path, capsys) -> Path:
    """``analyze --skip-bad`` of a file whose second line has no readable id."""
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), '{"query": "x"', record(2), record(3)])
    out = tmp_path / "a"
    code, _, err = run_cli(["analyze", data, "--out", out, "--skip-bad", "--no-cache", "--jobs", "1"], capsys)
    assert code == 0, err
    rows = _table_rows(out / "stabilization.csv")
    assert [r["interaction_id"] for r in rows] == ["q0", "", "q2", "q3"]
    assert rows[1]["skip_reason"].startswith("line 2: not valid JSON")
    return out / "stabilization.csv"


def test_4_skip_bad_table_feeds_stats(tmp_path, capsys, skip_bad_table) -> None:
    code, out, err = run_cli(["stats", skip_bad_table, "--out", tmp_path / "s", "--bootstrap", "100"], capsys)
    assert (code, err) == (0, "")
    assert "3 questions" in out or "4 questions" in out


def test_4_skip_bad_table_feeds_simulate_table(tmp_path, capsys, skip_bad_table) -> None:
    out = tmp_path / "r"
    argv = ["simulate", "--table", skip_bad_table, "--scenario", "paper_rq3", "--out", out, "--set", "select.population=all"]
    code, _, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    rows = _table_rows(out / "results.csv")
    assert [r["interaction_id"] for r in rows] == ["q0", "", "q2", "q3"]
    assert rows[1]["skip_reason"].startswith("line 2: not valid JSON")


def test_4_skip_bad_table_feeds_sweep_input(tmp_path, capsys, skip_bad_table) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "demo"\nscenario = "paper_rq3"\n'
        '[base]\n"select.population" = "all"\n[axes]\n"latency.L_ms" = [300, 600]\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["sweep", grid, "--input", f"table:{skip_bad_table}", "--out", tmp_path / "sw"], capsys)
    assert code == 0, err
    assert len(_table_rows(tmp_path / "sw" / "sweep.csv")) == 2


# 10. --ids: one rule in every command -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--jobs", "1", "--ids", "{ids}"],
        ["simulate", "{data}", "--scenario", "paper_rq3", "--out", "{out}", "--ids", "{ids}"],
        ["ingest", "{data}", "--no-cache", "--jobs", "1", "--ids", "{ids}"],
    ],
    ids=["analyze", "simulate", "ingest"],
)
def test_10_unknown_id_stops_every_command(tmp_path, capsys, command) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1)])
    ids = tmp_path / "ids.txt"
    ids.write_text("q1  # kept\nnope # not in the file\n", encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_cli([a.format(data=data, out=out, ids=ids) for a in command], capsys)
    assert code == 1
    assert one_error_line(err).startswith(f"{ids}:2: question 'nope' not in ")
    assert files_under(out) == []


# 2. Outputs are checked before any work ----------------------------------------------


@pytest.fixture
def small_data(tmp_path) -> Path:
    return write_jsonl(tmp_path / "d.jsonl", [record(0), record(1)])


@pytest.fixture
def small_table(tmp_path, capsys, small_data) -> Path:
    code, _, err = run_cli(["analyze", small_data, "--out", tmp_path / "a", "--no-cache", "--jobs", "1", "--no-figures"], capsys)
    assert code == 0, err
    return tmp_path / "a" / "stabilization.csv"


def _writing_commands(tmp: Path, data: Path, table: Path) -> dict[str, list[object]]:
    """Each command that writes, its output path as ``{out}``."""
    return {
        "analyze": ["analyze", data, "--out", "{out}", "--no-cache", "--jobs", "1"],
        "stats": ["stats", table, "--out", "{out}"],
        "simulate": ["simulate", "--table", table, "--scenario", "paper_rq3", "--out", "{out}"],
        "sweep": ["sweep", "paper_rq2", "--input", f"table:{table}", "--out", "{out}"],
        "demo": ["demo", "--out", "{out}"],
        "generate": ["generate", "{out}", "--questions", "2"],
        "calibrate": ["calibrate", tmp / "m.csv", "--out", "{out}"],
    }


@pytest.mark.parametrize("command", ["analyze", "stats", "simulate", "sweep", "demo", "generate", "calibrate"])
@pytest.mark.parametrize("where", ["existing-file", "under-a-file"])
def test_2_unusable_out_is_refused_before_any_work(
    tmp_path, capsys, monkeypatch, small_data, small_table, command, where
) -> None:
    import streamrag.analysis.study as study

    def no_work(*args, **kwargs):
        raise AssertionError("the analysis ran before the output was checked")

    monkeypatch.setattr(study, "analyze_input", no_work)
    blocker = tmp_path / "blocker.csv"
    blocker.write_text("x\n", encoding="utf-8")
    name = {"calibrate": "o.toml", "generate": "o.jsonl"}.get(command, "o")
    out = blocker / "sub" / name
    if where == "existing-file":
        out = blocker
        if command in ("calibrate", "generate"):  # these write a file: a folder stands in the way
            out = tmp_path / name
            out.mkdir()
    (tmp_path / "m.csv").write_text("timestamp,stage,duration_ms\n0,L,100\n", encoding="utf-8")
    before = files_under(tmp_path)
    argv = [str(a).format(out=out) for a in _writing_commands(tmp_path, small_data, small_table)[command]]
    code, _, err = run_cli(argv, capsys)
    assert code == 1, err
    line = one_error_line(err)
    assert str(out) in line and ("not a folder" in line or "is a file" in line or "is a folder" in line), line
    assert files_under(tmp_path) == before


@pytest.mark.skipif(not Path("/proc/1").is_dir(), reason="needs Linux /proc for a folder nobody may write in")
def test_2_unwritable_out_is_refused_before_the_analysis(tmp_path, capsys, monkeypatch, small_data) -> None:
    import streamrag.analysis.study as study

    monkeypatch.setattr(study, "analyze_input", lambda *a, **k: pytest.fail("analysis ran before the output check"))
    code, _, err = run_cli(["analyze", small_data, "--out", "/proc/1/streamrag-out", "--no-cache"], capsys)
    assert code == 1
    assert one_error_line(err) == "--out /proc/1/streamrag-out: cannot write in /proc/1 (permission denied)"


def test_simulate_refuses_a_nonempty_run_folder_unless_force(tmp_path, capsys, small_table) -> None:
    out = tmp_path / "run"
    argv = ["simulate", "--table", small_table, "--scenario", "paper_rq3", "--out", out, "--set", "select.population=all"]
    assert run_cli(argv, capsys)[0] == 0
    results = (out / "results.csv").read_bytes()
    code, _, err = run_cli([*argv, "--set", "latency.L_ms=1000"], capsys)
    assert code == 1
    assert (
        one_error_line(err) == f"--out {out}: exists and is not empty; pass --force to replace that run, or choose another folder"
    )
    assert (out / "results.csv").read_bytes() == results
    assert run_cli([*argv, "--set", "latency.L_ms=1000", "--force"], capsys)[0] == 0
    assert (out / "results.csv").read_bytes() != results


# 8. trace: missing folders, a closed pipe, control characters ------------------------

EVIL_ID = "evil\x1b[2J\x1b]8;;http://x\x07id"


@pytest.fixture
def run_dir(tmp_path, capsys) -> Path:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1, interaction_id=EVIL_ID)])
    out = tmp_path / "run"
    code, _, err = run_cli(["simulate", data, "--scenario", "paper_rq3", "--out", out, "--set", "select.population=all"], capsys)
    assert code == 0, err
    return out


def test_8_trace_writes_into_missing_folders(tmp_path, capsys, run_dir) -> None:
    png, perfetto = tmp_path / "new" / "figs" / "t.png", tmp_path / "other" / "t.json"
    code, out, err = run_cli(["trace", run_dir, "q0", "--png", png, "--perfetto", perfetto], capsys)
    assert (code, err) == (0, "")
    assert png.read_bytes().startswith(b"\x89PNG") and perfetto.stat().st_size > 0
    assert f"wrote {png}" in out


def test_8_trace_into_a_closed_pipe_exits_0_quietly_and_still_writes_the_png(tmp_path, run_dir) -> None:
    import os
    import subprocess
    import sys

    png = tmp_path / "piped.png"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    argv = [sys.executable, "-m", "streamrag", "trace", str(run_dir), "q0", "--png", str(png)]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:  # closes the pipes
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first line is written, as `| head -0`
        err = proc.stderr.read().decode()
        assert (proc.wait(timeout=120), err) == (0, "")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_8_ids_are_printed_with_control_characters_escaped(tmp_path, capsys, run_dir) -> None:
    code, out, err = run_cli(["trace", run_dir, EVIL_ID], capsys)
    assert (code, err) == (0, "")
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[2J\\x1b]8;;http://x\\x07id" in out
    code, _, err = run_cli(["trace", run_dir, EVIL_ID + "x"], capsys)
    assert code == 1 and "\x1b" not in err
    bad = write_jsonl(tmp_path / "bad.jsonl", [record(0), '{"interaction_id": "x\x1b[2Jy", "query": 3}'])
    code, out, err = run_cli(["ingest", bad, "--skip-bad", "--no-cache", "--jobs", "1"], capsys)
    assert code == 0, err
    assert "\x1b" not in out and "skipped: x\\x1b[2Jy: line 2: not valid JSON" in out


# Also: temporary files of killed writes are cleaned ----------------------------------


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path) -> None:
    import os
    import subprocess
    import sys
    import time

    from streamrag.base.atomic import STALE_AFTER_S, write_bytes_atomic

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    old = time.time() - 2 * 60
    stale_dead = tmp_path / f".fig.png.{dead_pid}-abcd1234.tmp"  # kill -9 during savefig, 2 minutes ago
    stale_old = tmp_path / ".fig.png.k2j4h5g6.tmp"  # an older streamrag's name, untouched for long
    live = tmp_path / f".fig.png.{os.getpid()}-zzzz9999.tmp"  # a live writer's
    other = tmp_path / ".fig.png.extra.abcd1234.tmp"  # a temporary of another file, fig.png.extra
    for path in (stale_dead, stale_old, live, other):
        path.write_bytes(b"half a figure")
    os.utime(stale_dead, (old, old))
    os.utime(stale_old, (time.time() - STALE_AFTER_S - 1,) * 2)
    os.utime(other, (time.time() - STALE_AFTER_S - 1,) * 2)
    write_bytes_atomic(tmp_path / "fig.png", b"\x89PNG")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["fig.png", live.name, other.name])


def test_temporary_names_are_recognized_as_their_pattern_says() -> None:
    """``.{target}.[{pid}-]{8 of [a-z0-9_]}.tmp`` (parsed without a regex) agrees with that regex."""
    import itertools
    import re

    from streamrag.base.atomic import _temporary_of

    def reference(name: str, target: str) -> tuple[bool, int | None]:
        m = re.fullmatch(rf"\.{re.escape(target)}\.(?:(\d+)-)?[a-z0-9_]{{8}}\.tmp", name)
        return (False, None) if m is None else (True, int(m.group(1)) if m.group(1) else None)

    # Every combination of a target, a start, a pid, a separator, 8 "random" characters
    # and an end, near misses included (a superscript ² is a digit but not decimal).
    targets = ["fig.png", "a", "a.b", "summary.json", "x-y.tmp"]
    starts = ["", ".", "{}.", ".{}.", ".{}.b."]
    pids = ["", "12", "٣", "²", "x", "1-2", "-"]
    seps = ["", "-", "."]
    randoms = ["abcd1234", "abcd123", "abcd12345", "ABCD1234", "zz_9zz_9", "abc-1234", ""]
    ends = [".tmp", "", ".tm", ".tmp.tmp"]
    n_ours = 0
    for target, start, pid, sep, random, end in itertools.product(targets, starts, pids, seps, randoms, ends):
        name = start.format(target) + pid + sep + random + end
        assert _temporary_of(name, target) == reference(name, target), (name, target)
        n_ours += reference(name, target)[0]
    assert n_ours > 20  # the comparison covered names that are temporaries, too
    assert _temporary_of(".fig.png.123-abcd1234.tmp", "fig.png") == (True, 123)
    assert _temporary_of(".fig.png.k2j4h5g6.tmp", "fig.png") == (True, None)
    assert _temporary_of(".fig.png.-abcd1234.tmp", "fig.png") == (False, None)


# 9. sweep --resume refuses a folder made by another grid ----------------------------

GRID = """name = "g"
kind = "simulate"
input = "generated:30:seed=1"
scenario = "paper_rq3"
[output]
figures = false
[base]
"select.population" = "{population}"
[axes]
"latency.L_ms" = [{Ls}]
"""


@pytest.mark.parametrize(
    ("population", "Ls", "ok"),
    [("all", "600, 1000, 2500", True), ("retrieved_gold", "600, 1000", False), ("all", "600", False)],
    ids=["extended-resumes", "other-base-refused", "fewer-points-refused"],
)
def test_9_resume_refuses_a_folder_of_another_grid(tmp_path, capsys, population, Ls, ok) -> None:
    first, second = tmp_path / "first.toml", tmp_path / "second.toml"
    first.write_text(GRID.format(population="all", Ls="600, 1000"), encoding="utf-8")
    second.write_text(GRID.format(population=population, Ls=Ls), encoding="utf-8")
    out = tmp_path / "sw"
    assert run_cli(["sweep", first, "--out", out], capsys)[0] == 0
    before = sorted(p.name for p in (out / "points").iterdir())
    code, _, err = run_cli(["sweep", second, "--out", out, "--resume"], capsys)
    after = sorted(p.name for p in (out / "points").iterdir())
    if ok:
        assert code == 0 and len(after) == 3 and set(before) < set(after)
        return
    assert code == 1
    line = one_error_line(err)
    assert line.startswith(f"--out {out}: made by another grid: 2 point folder(s) here, ")
    assert "resume with the grid that made it, or one that adds values to its axes" in line
    assert after == before


# 3. An absurd n_words is refused, not run out of memory -------------------------------

_MEMORY_CAP = """
import resource, sys
cap = 3 * 2**30  # what the run may take: the unbounded replay of 10^8 words grew to 21.8 GB
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from streamrag.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", ["simulate", "stats"])
def test_3_a_table_row_of_10_8_words_is_one_line_under_a_memory_cap(tmp_path, command) -> None:
    import os
    import subprocess
    import sys

    table = tmp_path / "t.csv"
    table.write_text(
        "interaction_id,domain,question_type,static_or_dynamic,n_words,n_passages,groundable,retrieved_gold,"
        "t_sc,phi_sc,t_suf,phi_suf,volatility\n"
        "a,finance,simple,static,6,5,True,True,3,0.5,2,0.3333,1\n"
        "b,finance,simple,static,100000000,5,False,False,1,1e-08,,,0\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    argv = {
        "simulate": ["simulate", "--table", table, "--scenario", "paper_rq3", "--out", out, "--set", "select.population=all"],
        "stats": ["stats", table, "--out", out],
    }[command]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_CAP, *map(str, argv)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert one_error_line(done.stderr) == (
        f"{table}:3: column 'n_words': 100000000 is more than the 10,000 words streamrag takes (MAX_QUERY_WORDS)"
    )
    assert files_under(out) == []


def test_3_a_query_of_more_than_10_000_words_is_a_record_error(tmp_path, capsys) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1, query="word " * 10_001)])
    code, _, err = run_cli(["analyze", data, "--out", tmp_path / "o", "--no-cache", "--jobs", "1"], capsys)
    assert code == 1
    assert one_error_line(err) == f"{data}:2: field 'query': 10001 words, more than the 10,000 streamrag takes (MAX_QUERY_WORDS)"


# 5. Workers die with their parent ---------------------------------------------------


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a live process, None when gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid = text.rsplit(")", 1)[1].split()[:2]
    return None if state in ("Z", "X") else (state, int(ppid))


def _children(pid: int) -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and (_proc_stat(int(p.name)) or ("", 0))[1] == pid]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from Linux /proc")
def test_5_sweep_workers_exit_when_the_parent_is_killed_9(tmp_path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    grid = tmp_path / "slow.toml"
    grid.write_text(
        'name = "slow"\nkind = "simulate"\ninput = "generated:4000:seed=3"\nscenario = "paper_rq3"\n'
        '[output]\nfigures = false\n[axes]\n"latency.L_ms" = [100, 200, 300, 400, 500, 600, 700, 800]\n',
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    argv = [sys.executable, "-m", "streamrag", "sweep", str(grid), "--out", str(tmp_path / "o"), "--jobs", "2"]
    parent = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
            time.sleep(0.2)
            workers = _children(parent.pid)
        assert len(workers) >= 2, "the sweep started no workers"
        time.sleep(0.5)  # the workers are busy with points
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_proc_stat(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = [w for w in workers if _proc_stat(w)]
    finally:
        parent.kill()
        for pid in workers:  # never leave orphans on the machine, pass or fail
            if _proc_stat(pid):
                os.kill(pid, signal.SIGKILL)
    assert alive == [], f"workers {alive} outlived their killed parent"


# 6. A query sharing no word with its pages is flagged and never streamable -----------


def test_6_no_overlap_is_flagged_said_and_kept_out_of_streamable(tmp_path, capsys) -> None:
    import json

    absent = " ".join(f"zq{i}x" for i in range(30))  # 30 words no page holds: "stable" from word 1 by tie-break
    data = write_jsonl(
        tmp_path / "d.jsonl", [record(0), record(1, query="?? !! ?? !! ?? !!"), record(2, query=absent, answer="nothing")]
    )
    out = tmp_path / "a"
    code, stdout, err = run_cli(["analyze", data, "--out", out, "--no-cache", "--jobs", "1", "--no-figures"], capsys)
    assert code == 0, err
    rows = {r["interaction_id"]: r for r in _table_rows(out / "stabilization.csv")}
    assert [rows[q]["no_overlap"] for q in ("q0", "q1", "q2")] == ["False", "True", "True"]
    assert rows["q2"]["t_sc"] == "1"  # the measurement stays as measured; the flag says what it is
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["no_overlap"]["n"] == 2
    point = summary["rq2"]["point"]
    assert point["n"] == 3 and point["n_streamable"] <= 1  # q2 alone would be streamable (H = L) by its t_sc
    assert all(cell["n_streamable"] <= 1 for cell in summary["rq2"]["grid"])
    assert all(arm["streamable_fraction"] <= 1 / 3 for arm in summary["robustness"])
    assert "2 question(s) share no word with their pages" in stdout
    code, stdout, err = run_cli(["stats", out / "stabilization.csv", "--out", tmp_path / "s", "--bootstrap", "100"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "s" / "summary.json").read_text(encoding="utf-8"))["rq2"]["point"] == point
    assert "2 question(s) share no word with their pages" in stdout
    # an oracle replay of the table (no evidence) gives such a question t* = n: H = 0, no head start
    sim = tmp_path / "sim"
    argv = ["simulate", "--table", out / "stabilization.csv", "--no-evidence", "--scenario", "paper_rq3",
            "--set", "select.population=all", "--out", sim]  # fmt: skip
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    results = {r["interaction_id"]: r for r in _table_rows(sim / "results.csv")}
    assert results["q2"]["t_star"] == "30" and float(results["q2"]["H_ms"]) == 0.0


# 7. The 400-chunk cap says what it dropped -------------------------------------------


def test_7_chunk_cap_counts_unread_pages_and_cut_chunks_per_question_and_in_the_summary(tmp_path, capsys) -> None:
    import json

    big = {"page_name": "big", "page_url": "b", "page_snippet": "", "page_result": "<p>" + "filler words " * 25_000 + "</p>"}
    capped = record(1)
    capped["search_results"] = [big, *capped["search_results"]]  # 50,000 words: 500 windows, the cap takes 400
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), capped])
    for run, cache in (("a", ["--no-cache"]), ("b", ["--cache", str(tmp_path / "c")]), ("c", ["--cache", str(tmp_path / "c")])):
        out = tmp_path / f"run-{run}"  # the cache folder is tmp_path / "c"
        code, stdout, err = run_cli(["analyze", data, "--out", out, "--jobs", "1", "--no-figures", *cache], capsys)
        assert code == 0, err
        rows = {r["interaction_id"]: r for r in _table_rows(out / "stabilization.csv")}
        assert (rows["q0"]["n_pages_unread"], rows["q0"]["n_chunks_cut"]) == ("0", "0")
        assert (rows["q1"]["n_pages_unread"], rows["q1"]["n_chunks_cut"], rows["q1"]["n_passages"]) == ("3", "100", "400")
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert summary["chunk_cap"] == {
            "max_chunks": 400, "n_questions_capped": 1, "n_pages_unread": 3, "n_chunks_cut": 100,
        }  # fmt: skip
        assert "1 question(s) reached the 400-chunk cap: 3 page(s) unread, 100 chunk(s) cut" in stdout
    # global scope: each question's own pages are chunked (and capped) the same way
    out = tmp_path / "global"
    code, _, err = run_cli(["analyze", data, "--scope", "global", "--out", out, "--no-cache", "--no-figures"], capsys)
    assert code == 0, err
    rows = {r["interaction_id"]: r for r in _table_rows(out / "stabilization.csv")}
    assert (rows["q1"]["n_pages_unread"], rows["q1"]["n_chunks_cut"]) == ("3", "100")
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["chunk_cap"]["n_questions_capped"] == 1


# Figures: the format follows the extension, --dpi, a legend on the timeline ----------


def test_trace_figure_format_follows_the_extension_and_dpi(tmp_path, capsys, run_dir) -> None:
    import struct

    def png_size(path: Path) -> tuple[int, int]:
        width, height = struct.unpack(">II", path.read_bytes()[16:24])
        return width, height

    for name, magic in (("t.pdf", b"%PDF"), ("t.svg", b"<?xml"), ("t.png", b"\x89PNG")):
        code, _, err = run_cli(["trace", run_dir, "q0", "--png", tmp_path / name], capsys)
        assert (code, err) == (0, "")
        assert (tmp_path / name).read_bytes().startswith(magic), name
    assert run_cli(["trace", run_dir, "q0", "--figure", tmp_path / "small.png", "--dpi", "60"], capsys)[0] == 0
    big, small = png_size(tmp_path / "t.png"), png_size(tmp_path / "small.png")
    assert small[0] * 2 == pytest.approx(big[0], abs=2) and small[1] * 2 == pytest.approx(big[1], abs=2)
    code, _, err = run_cli(["trace", run_dir, "q0", "--png", tmp_path / "t.jpg"], capsys)
    assert code == 1
    assert (
        one_error_line(err)
        == f"{tmp_path / 't.jpg'}: a figure is written as .png, .pdf, .svg (chosen by the extension), not .jpg"
    )
    assert not (tmp_path / "t.jpg").exists()


def test_the_timeline_figure_has_a_legend(tmp_path, monkeypatch, run_dir) -> None:
    import streamrag.base.figures as figures
    from streamrag.simulator.views import gantt, traceview

    seen = []
    monkeypatch.setattr(figures, "save_figure", lambda fig, path, dpi=None: seen.append(fig) or Path(path))
    gantt.write_figure(traceview.load_question(run_dir, "q0"), tmp_path / "t.png")
    labels = [t.get_text() for legend in seen[0].legends for t in legend.get_texts()]
    assert {"G query generation", "L tool call", "F response generation", "word", "E (end of input)"} <= set(labels)


def test_dpi_applies_to_every_command_before_or_after_it(tmp_path, capsys) -> None:
    import struct

    from streamrag.data.generated.records import generate_stabilization_table

    table = tmp_path / "t.csv"
    generate_stabilization_table(80, seed=1).to_csv(table, index=False)

    def sizes(out: Path) -> dict[str, tuple[int, int]]:
        return {p.name: struct.unpack(">II", p.read_bytes()[16:24]) for p in sorted(out.rglob("*.png"))}

    assert run_cli(["stats", str(table), "--out", str(tmp_path / "a")], capsys)[0] == 0
    assert run_cli(["--dpi", "60", "stats", str(table), "--out", str(tmp_path / "b")], capsys)[0] == 0
    assert run_cli(["stats", str(table), "--out", str(tmp_path / "c"), "--dpi", "60"], capsys)[0] == 0
    big, small, after = sizes(tmp_path / "a"), sizes(tmp_path / "b"), sizes(tmp_path / "c")
    assert big and set(big) == set(small) == set(after) and small == after
    for name, (w, h) in big.items():
        assert small[name][0] * 2 == pytest.approx(w, abs=2) and small[name][1] * 2 == pytest.approx(h, abs=2), name
    code, _, err = run_cli(["--dpi", "5", "stats", str(table), "--out", str(tmp_path / "d")], capsys)
    assert code == 1 and one_error_line(err) == "--dpi: 5 is outside 10..2400"
